"""Pili Pili's table as an SVG picture (``render_svg``, ``render_mode="rgb_array"``).

Where you are: the Pili Pili package's drawing, built on :mod:`tableenvs.core.svg`. One row per seat: its name (gold
while it is to act, ``D`` for the dealer), its chilis (one red pod each), its bid and tricks won, and its hand:
number cards with their value, the wild as a gold ``W``; then the trick on the table (the wild with its declared
value) and the last trick. A seat's picture follows the same information rules as its text view
(``PiliPiliEnv.render_view``): its own hand only when it may look at it, the others' only when forehead-visible or
revealed, others' cards of a simultaneous trick face down; anything else hidden is drawn as card backs.

In the picture of the seat to act, every legal move is clickable: an element carrying ``data-action`` (its action
id) is a card of its hand (to play, pass or give) or a button (a bid, the wild's value, a player to name, ready).
The public picture (``public=True``, a spectator's) shows what every seat sees: no hand unless all are shown to
everyone, the cards of a face-down trick face down, and no moves.
"""

from __future__ import annotations

import numpy as np

from tableenvs.core.svg import GOLD, INK, LIGHT, Svg
from tableenvs.pilipili import encoder as ids
from tableenvs.pilipili.rules import DECLARE, PASS, PLAY, SWAP_GIVE, WILD, card_name

CHILI_RED = "#d63a22"
CARD_STEP = 33  # card width 30 plus a gap
ROW = 52  # height of one seat's row
HAND_X = 330  # where the hands start
LEGEND = (
    "reading the table: a card shows its value (1-55); W is the wild (=12: played as a 12); D marks the dealer;",
    "a red dot is a chili: once a player holds 6, the game ends and the fewest chilis win",
)


def _card(picture: Svg, x: float, y: float, card: int, value: int | None = None, action: int | None = None) -> None:
    """A face-up card: a number card shows its value, the wild a gold ``W`` (with its declared value if any); with
    ``action``, a clickable one."""
    if action is not None:
        picture.begin(data_action=action, class_="move")
        picture.rect(x - 3, y - 3, 36, 48, "none", GOLD, rx=6)  # the outline of a card that makes a move
        _card(picture, x, y, card, value)
        picture.end()
    elif card == WILD:
        picture.card(x, y, "W", fill=GOLD, note=None if value is None or value < 0 else f"={value}")
    else:
        picture.card(x, y, card_name(card))


def legal_moves(env, game) -> list[int]:
    """The legal action ids of the seat to act in ``game`` (read from ``game``, which a test may have swapped in)."""
    mask = np.zeros(ids.NUM_ACTIONS, np.int8)
    if not game.over:
        env.encoder.fill_mask(game, mask)
    return np.flatnonzero(mask).tolist()


def _card_action(game, card: int, legal: set[int]) -> int | None:
    """The legal move that clicking ``card`` of the acting seat's hand makes: play it, pass it or give it."""
    if game.phase == PLAY and not game.mission.memorise and card != WILD:
        action = ids.PLAY - 1 + card
    elif game.phase in (PASS, SWAP_GIVE):
        action = ids.PICK + card
    else:
        return None
    return action if action in legal else None


def _button_label(game, action: int) -> tuple[str, str]:
    """``(heading, label)`` of a move drawn as a button."""
    if action < ids.PLAY:
        return "your bid", str(action)
    if action < ids.PLAY_WILD:
        return "play", card_name(action - ids.PLAY + 1)
    if ids.PLAY_WILD <= action < ids.PICK:
        verb = "declare the wild as" if game.phase == DECLARE else "play the wild (W) as"
        return verb, str(action - ids.PLAY_WILD)
    if ids.PICK <= action < ids.NAME:
        return ("give" if game.phase == SWAP_GIVE else "pass"), card_name(action - ids.PICK)
    if ids.NAME <= action < ids.DECLINE:
        return "choose a player", f"player_{(game.to_act + action - ids.NAME + 1) % game.n}"
    if action == ids.DECLINE:
        return "choose a player", "decline"
    if ids.POSITION <= action < ids.READY:
        return "play the card at hand position", str(action - ids.POSITION)
    if action == ids.READY:
        return "when ready", "look at my hand"
    return "move", str(action)


def table_svg(env, seat: int | None = None, public: bool = False) -> str:
    """The table of ``env`` (a ``PiliPiliEnv``) as SVG text: the god view, what ``seat`` may see (its legal moves
    clickable on its turn), or with ``public`` what everyone sees."""
    game = env.game
    m = game.mission
    view = None if seat is None else game.seen_by(seat)  # the one visibility decision (rules.SeatView)
    phase = game.phase if view is None else view.phase
    if public:
        phase = game.phase_seen_by(-1)  # no seat: what the others see of a wild being declared
    legal = set(legal_moves(env, game)) if seat is not None and seat == game.to_act and not game.over else set()
    hand_width = max(len(hand) for hand in game.hands) * CARD_STEP
    picture = Svg(max(860, HAND_X + hand_width + 20))
    who = "public view" if public else "god view" if seat is None else f"player_{seat}'s view"
    picture.text(12, 24, f"Pili Pili, round {game.rounds_completed + (0 if game.over else 1)} ({who})", 18, bold=True)
    picture.text(12, 46, f"mission {m.id} {m.name!r}, hand {game.hand_size}: {m.describe()}", 13)
    status = "game over" if game.over else f"{phase.name.lower()}, player_{game.to_act} to act"
    picture.text(12, 66, f"{status}; tricks played {game.tricks_played}/{game.total_tricks}", 13)

    own_visible = view is not None and view.own_hand
    others_visible = game.sees_other_hands() if view is None else view.other_hands
    if public:  # a hand everyone sees: the others see it (revealed) and so does its owner
        others_visible = others_visible and all(game.sees_own_hand(s) for s in range(game.n))
    top = 80
    for s in range(game.n):
        y = top + s * ROW + 0.0
        acting = s == game.to_act and not game.over
        name = f"player_{s}" + (" (you)" if s == seat else "") + (" D" if s == game.dealer else "")
        picture.text(12, y + 20, name, 14, GOLD if acting else LIGHT, bold=acting)
        bid = "-" if game.bids[s] < 0 else str(game.bids[s])
        named = f", names p{game.designations[s]}" if m.designate and game.designations[s] >= 0 else ""
        picture.text(12, y + 40, f"bid {bid}, won {game.tricks_won[s]}{named}", 12)
        for k in range(game.chilis[s]):
            picture.circle(172 + k * 20, y + 22, 8, CHILI_RED, INK)
        picture.text(172, y + 44, f"{game.chilis[s]} chili(s)", 11)
        shown = (seat is None and not public) or (own_visible if s == seat else others_visible)
        mine = s == seat and bool(legal)
        for k, card in enumerate(sorted(game.hands[s])):
            x = HAND_X + k * CARD_STEP
            if shown:
                _card(picture, x, y + 4, card, action=_card_action(game, card, legal) if mine else None)
            else:
                picture.card_back(x, y + 4)
    y = top + game.n * ROW + 8.0
    last, winner = game.last_trick, game.last_winner
    if not last and game.last_scored is not None:  # a new round: the last trick is the previous round's (public)
        last, winner = game.last_scored.last_trick, game.last_scored.last_winner
    for title, trick in (("trick", game.trick), ("last trick", last)):
        picture.text(12, y + 26, title, 14, bold=True)
        for k, (s, card, value) in enumerate(trick):
            x = 110 + k * 70
            face_down = view.trick_face_down if view is not None else public and game.trick_face_down
            if face_down and s != seat and trick is game.trick:
                picture.card_back(x, y + 4)
            else:
                _card(picture, x, y + 4, card, value)
            picture.text(x + 34, y + 30, f"p{s}", 12)
        if title == "last trick" and trick:
            picture.text(110 + len(trick) * 70, y + 30, f"won by player_{winner}", 12)
        y += 52
    summary = game.last_scored
    if summary is not None:  # public: how the last round ended (the next one is dealt at once)
        parts = [
            f"p{s}: bid {summary.bids[s]}, won {summary.tricks_won[s]}, "
            f"{summary.taken[s] - summary.discarded[s]:+d} chili"
            for s in range(game.n)
        ]
        picture.text(12, y + 16, "last round:", 13, bold=True)
        for start in range(0, game.n, 3):  # three seats a line
            picture.text(110, y + 16, "; ".join(parts[start : start + 3]), 12)
            y += 18
        y += 6
    y = _move_buttons(picture, game, legal, own_visible, y, picture.width)
    if game.over:
        ending = "cut short" if game.truncated else "winner(s): " + ", ".join(f"player_{s}" for s in game.winners)
        picture.text(12, y + 20, ending, 15, GOLD, bold=True)
        y += 30
    for k, line in enumerate(LEGEND):
        picture.text(12, y + 16 + 15 * k, line, 11)
    return picture.text_of()


def _move_buttons(picture: Svg, game, legal: set[int], cards_shown: bool, y: float, width: float) -> float:
    """The legal moves no card in the picture stands for, as buttons under a heading per kind; returns the y
    below them."""
    rows: dict[str, list[tuple[int, str]]] = {}
    for action in sorted(legal):
        if ids.PLAY <= action < ids.PLAY_WILD:
            card = action - ids.PLAY + 1
        elif ids.PICK <= action < ids.NAME:
            card = action - ids.PICK
        else:
            card = -1
        if card >= 0 and cards_shown and _card_action(game, card, legal) == action:
            continue  # a card of the hand makes this move
        heading, label = _button_label(game, action)
        rows.setdefault(heading, []).append((action, label))
    for heading, moves in rows.items():
        picture.text(12, y + 18, heading + ":", 13, GOLD, bold=True)
        y = picture.buttons(230, y, moves, width - 12)
    return y
