"""Llama Party's table as an SVG picture (``render_svg``, ``render_mode="rgb_array"``).

Where you are: the Llama Party package's drawing, built on :mod:`tableenvs.core.svg`. From the top: the goal display
(the revealed goal cards, face-down or empty slots for the rest), the passing ring, then one row per seat (and,
in the god view, per dummy): its total and round scores, its goal card and its hand, the cards it picked to
pass; finally the hands shown at the last scoring. A card shows its id and its rules (``+3/A, AA +6``), tinted by
its letter. A seat's picture shows what ``LlamaParty.seen_by`` says, as its text view (``LlamaPartyEnv.render_view``)
does: its own goal, hand, picks and the cards it passed and received, and the revealed goals; of the others only
totals; the hands shown at the last scoring are public. The public picture (``public=True``, a spectator's) shows
only what is public: the revealed goals, the totals, the shown hands.

In the picture of the seat to act, each card of its hand carries ``data-action`` (the card's id is the action: pick
it as the goal, or to pass) and a gold outline. A legend at the foot explains a card's notation.
"""

from __future__ import annotations

from tableenvs.core.svg import GOLD, INK, LIGHT, Svg
from tableenvs.llama_party.cards import LETTERS
from tableenvs.llama_party.rules import NUM_ROUNDS, NUM_SLOTS

#: A tint per letter A..H.
LETTER_TINTS = ("#f6d6d6", "#f6e7c8", "#f3f3c4", "#d8f0d0", "#cfe8f3", "#d9dcf6", "#ecd6f3", "#e6e1d6")
CARD_W, CARD_H, STEP = 84, 46, 88
GOAL_X, HAND_X = 230, 326  # where a row's goal card and its hand start
NOTE_CHARS = 16  # a rule line longer than this is cut (the move list and docs/llama_party.md give it whole)
LEGEND = (
    "reading a card: D1 = letter D, card 1; top line +3/A = 3 points per A in the hand; bottom line AA +6, DF +5 ="
    " points per complete pair or set"
)


def _fit(text: str) -> str:
    return text if len(text) <= NOTE_CHARS else text[: NOTE_CHARS - 1] + "…"


def table_svg(env, seat: int | None = None, public: bool = False) -> str:
    """The table of ``env`` (a ``LlamaPartyEnv``) as SVG text: the god view, what ``seat`` may see (its hand
    clickable on its turn), or with ``public`` what everyone sees."""
    game, deck, n = env.game, env.deck, env.num_players

    def card(x: float, y: float, index: int, stroke: str = "#1b1b1b") -> None:
        face = deck[index]
        tops = " ".join(f"{points:+d}/{LETTERS[letter]}" for letter, points in face.tops)
        bottoms = ", ".join(f"{combo} {points:+d}" for combo, _, points in face.bottoms)
        picture.rect(x, y, CARD_W, CARD_H, LETTER_TINTS[face.letter % 8], stroke, rx=4)
        picture.text(x + CARD_W / 2, y + 16, face.id, 14, INK, "middle", bold=True)
        picture.text(x + CARD_W / 2, y + 29, _fit(tops), 9, INK, "middle")
        picture.text(x + CARD_W / 2, y + 40, _fit(bottoms), 9, INK, "middle")

    def cards(x: float, y: float, indices, stroke: str = "#1b1b1b", clickable: bool = False) -> float:
        for k, index in enumerate(sorted(indices)):
            if clickable:
                picture.begin(data_action=index, class_="move")
                picture.rect(x + k * STEP - 3, y - 3, CARD_W + 6, CARD_H + 6, "none", GOLD, rx=6)
            card(x + k * STEP, y, index, stroke)
            if clickable:
                picture.end()
        return x + len(indices) * STEP

    names = [f"player_{slot}" if slot < n else f"dummy D{slot - n}" for slot in range(NUM_SLOTS)]
    live = not game.over
    # the goal, hand and picks drawn face up, by slot: every slot's in the god view, the seat's own in its view
    faces: dict[int, tuple[int, list[int], list[int]]]
    if public:
        view, faces = None, {}
    elif seat is None:
        view = None
        faces = {
            slot: (game.goal_of_slot[slot], game.hands[slot], game.staged[slot] if slot < n else [])
            for slot in range(NUM_SLOTS)
        }
    else:
        view = game.seen_by(seat)  # the one visibility decision (rules.SeatView)
        faces = {seat: (view.goal, view.hand, view.picks)}
    revealed = game.revealed if view is None else view.revealed
    picture = Svg(HAND_X + 12 * STEP + 60)
    who = "public view" if public else "god view" if seat is None else f"player_{seat}'s view"
    picture.text(12, 24, f"Llama Party, {n} players, round {game.round_number}/{NUM_ROUNDS} ({who})", 18, bold=True)
    own_turn = (seat is None and not public) or (game.to_act == seat and live)
    clickable = seat is not None and game.to_act == seat and live
    picture.text(12, 46, env._status_text(picks_left=own_turn), 13)
    picture.text(12, 66, "passing: " + " -> ".join(names[s].split()[-1] for s in (*game.ring, game.ring[0])), 13)

    y = 78
    picture.text(12, y + 28, "goals", 15, bold=True)
    for position in range(NUM_SLOTS):
        x = GOAL_X + position * STEP
        if position < len(revealed):
            card(x, y, revealed[position])
        elif game.display:
            picture.card_back(x, y, w=CARD_W, h=CARD_H)
        else:
            picture.rect(x, y, CARD_W, CARD_H, "none", LIGHT, rx=4)
        picture.text(x + CARD_W / 2, y + CARD_H + 13, f"[{position + 1}]", 11, anchor="middle")
    y += CARD_H + 24

    slots = range(NUM_SLOTS) if seat is None and not public else range(n)
    for slot in slots:
        acting = slot == game.to_act and live
        you = " (you)" if slot == seat else ""
        picture.text(12, y + 18, names[slot] + you, 14, GOLD if acting else LIGHT, bold=acting)
        if slot < n:
            rounds = " ".join(f"{scores[slot]:+d}" for scores in game.round_scores)
            picture.text(12, y + 36, f"total {game.totals[slot]}" + (f" ({rounds})" if rounds else ""), 12)
        if slot in faces:
            goal, hand, picks = faces[slot]
            picture.text(GOAL_X - 8, y + 28, "goal", 12, anchor="end")
            if goal >= 0:
                card(GOAL_X, y, goal, GOLD)
            end = cards(HAND_X, y, hand, clickable=clickable and slot == seat)
            if picks:
                picture.text(end + 8, y + 28, "picked", 12, GOLD)
                cards(end + 60, y, picks, GOLD)
        y += CARD_H + 10
    if view is not None and (view.passed or view.received):
        for title, passed in (("you passed", view.passed), ("you received", view.received)):
            picture.text(12, y + 28, title, 12)
            cards(GOAL_X, y, passed)
            y += CARD_H + 10
    if game.shown_hands:
        goals = " ".join(deck[goal].id for goal in game.shown_display)
        picture.text(12, y + 20, f"shown at the last scoring (goals {goals})", 14, bold=True)
        y += 30
        for s, hand in enumerate(game.shown_hands):
            picture.text(12, y + 28, f"player_{s}", 12)
            cards(GOAL_X, y, hand)
            y += CARD_H + 8
    if game.over:
        picture.text(12, y + 20, "winner(s): " + ", ".join(f"player_{s}" for s in game.winners), 15, GOLD, bold=True)
        y += 30
    picture.text(12, y + 16, LEGEND, 11)
    return picture.text_of()
