"""Pili Pili's table as an SVG picture (``render_svg``, ``render_mode="rgb_array"``).

Where you are: the Pili Pili package's drawing, built on :mod:`tableenvs.core.svg`. One row per seat: its name (gold
while it is to act, ``D`` for the dealer), its chilis (one red pod each), its bid and tricks won, and its hand:
number cards with their value, the wild as a gold ``W``; then the trick on the table (the wild with its declared
value) and the last trick. A seat's picture follows the same information rules as its text view
(``PiliPiliEnv.render_view``): its own hand only when it may look at it, the others' only when forehead-visible or
revealed, others' cards of a simultaneous trick face down; anything else hidden is drawn as card backs.
"""

from __future__ import annotations

from tableenvs.core.svg import GOLD, INK, LIGHT, Svg
from tableenvs.pilipili.rules import WILD, card_name

CHILI_RED = "#d63a22"
CARD_STEP = 33  # card width 30 plus a gap
ROW = 52  # height of one seat's row
HAND_X = 330  # where the hands start


def _card(picture: Svg, x: float, y: float, card: int, value: int | None = None) -> None:
    """A face-up card: a number card shows its value, the wild a gold ``W`` (with its declared value if any)."""
    if card == WILD:
        picture.card(x, y, "W", fill=GOLD, note=None if value is None or value < 0 else f"={value}")
    else:
        picture.card(x, y, card_name(card))


def table_svg(env, seat: int | None = None) -> str:
    """The table of ``env`` (a ``PiliPiliEnv``) as SVG text: the god view, or what ``seat`` may see."""
    game = env.game
    m = game.mission
    view = None if seat is None else game.seen_by(seat)  # the one visibility decision (rules.SeatView)
    phase = game.phase if view is None else view.phase
    hand_width = max(len(hand) for hand in game.hands) * CARD_STEP
    picture = Svg(max(860, HAND_X + hand_width + 20))
    who = "god view" if seat is None else f"player_{seat}'s view"
    picture.text(12, 24, f"Pili Pili, round {game.rounds_completed + (0 if game.over else 1)} ({who})", 18, bold=True)
    picture.text(12, 46, f"mission {m.id} {m.name!r}, hand {game.hand_size}: {m.describe()}", 13)
    status = "game over" if game.over else f"{phase.name.lower()}, player_{game.to_act} to act"
    picture.text(12, 66, f"{status}; tricks played {game.tricks_played}/{game.total_tricks}", 13)

    own_visible = view is not None and view.own_hand
    others_visible = game.sees_other_hands() if view is None else view.other_hands
    top = 80
    for s in range(game.n):
        y = top + s * ROW
        acting = s == game.to_act and not game.over
        name = f"player_{s}" + (" (you)" if s == seat else "") + (" D" if s == game.dealer else "")
        picture.text(12, y + 20, name, 14, GOLD if acting else LIGHT, bold=acting)
        bid = "-" if game.bids[s] < 0 else str(game.bids[s])
        named = f", names p{game.designations[s]}" if m.designate and game.designations[s] >= 0 else ""
        picture.text(12, y + 40, f"bid {bid}, won {game.tricks_won[s]}{named}", 12)
        for k in range(game.chilis[s]):
            picture.circle(172 + k * 20, y + 22, 8, CHILI_RED, INK)
        picture.text(172, y + 44, f"{game.chilis[s]} chili(s)", 11)
        shown = seat is None or (own_visible if s == seat else others_visible)
        for k, card in enumerate(sorted(game.hands[s])):
            x = HAND_X + k * CARD_STEP
            if shown:
                _card(picture, x, y + 4, card)
            else:
                picture.card_back(x, y + 4)
    y = top + game.n * ROW + 8
    for title, trick in (("trick", game.trick), ("last trick", game.last_trick)):
        picture.text(12, y + 26, title, 14, bold=True)
        for k, (s, card, value) in enumerate(trick):
            x = 110 + k * 70
            if view is not None and view.trick_face_down and s != seat and trick is game.trick:
                picture.card_back(x, y + 4)
            else:
                _card(picture, x, y + 4, card, value)
            picture.text(x + 34, y + 30, f"p{s}", 12)
        if title == "last trick" and trick:
            picture.text(110 + len(trick) * 70, y + 30, f"won by player_{game.last_winner}", 12)
        y += 52
    if game.over:
        ending = "cut short" if game.truncated else "winner(s): " + ", ".join(f"player_{s}" for s in game.winners)
        picture.text(12, y + 20, ending, 15, GOLD, bold=True)
    return picture.text_of()
