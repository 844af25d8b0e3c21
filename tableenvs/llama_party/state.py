"""Llama Party's rules state read back from its record: :func:`game_from_record`, the inverse of
``LlamaParty.to_record``, checked in full (``TableEnv.set_state`` and ``from_state`` call it through the adapter).

Where you are: the Llama Party package, beside the rules engine (``rules.py``), which knows nothing of this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from tableenvs.core import state
from tableenvs.llama_party.cards import Deck
from tableenvs.llama_party.rules import (
    DEAL_SIZE,
    END_SCORE,
    GOAL_STEP,
    HAND_SIZE,
    NUM_ROUNDS,
    NUM_SLOTS,
    PASS_COUNTS,
    LlamaParty,
    passing_ring,
    score_bounds,
    winners,
)


@dataclass(frozen=True)
class LlamaPartyReader:
    """Reads a Llama Party engine back from its record with an env's deck and player count (a
    :class:`~tableenvs.core.engine.StateReader`)."""

    deck: Deck
    num_players: int

    def read(self, record: Any, rng: np.random.Generator) -> LlamaParty:
        return game_from_record(record, self.deck, self.num_players, rng)


if TYPE_CHECKING:
    from tableenvs.core.engine import StateReader

    _reader: type[StateReader[LlamaParty]] = LlamaPartyReader


def game_from_record(record: dict[str, Any], deck: Deck, num_players: int, rng: np.random.Generator) -> LlamaParty:
    """A game from :meth:`to_record`'s dict; :class:`~tableenvs.core.state.StateError` naming a bad field.

    Besides each field's type and range, the record must be consistent (``docs/llama_party.md``, State API):
    every card once; hand, pick, goal and pass counts those of the step and the seat to act; the display the
    four goals once placed; round scores, totals, shown hands, winners and ``over`` agreeing with the round.
    """
    n = num_players
    size = len(deck)
    game = LlamaParty(deck, n)
    game.rng = rng
    require = state.require

    def get(key: str) -> Any:
        return state.field(record, key, "rules")

    passes = len(PASS_COUNTS)
    game.hands = state.int_lists(get("hands"), "rules.hands", 0, size - 1, NUM_SLOTS, inner_most=DEAL_SIZE)
    game.goal_of_slot = state.int_list(get("goal_of_slot"), "rules.goal_of_slot", -1, size - 1, NUM_SLOTS)
    game.display = state.int_list(get("display"), "rules.display", 0, size - 1, most=NUM_SLOTS)
    game.step = state.as_int(get("step"), "rules.step", GOAL_STEP, passes)
    game.to_act = state.as_int(get("to_act"), "rules.to_act", 0, n - 1)
    for key in ("staged", "passed", "received"):
        most = max(PASS_COUNTS) if key == "staged" else sum(PASS_COUNTS)
        setattr(game, key, state.int_lists(get(key), f"rules.{key}", 0, size - 1, n, inner_most=most))
    bound, start_bound = score_bounds(deck)
    game.round_scores = state.int_lists(
        get("round_scores"), "rules.round_scores", -bound, bound, most=NUM_ROUNDS, inner_most=n
    )
    if any(len(scores) != n for scores in game.round_scores):
        raise state.StateError(f"rules.round_scores must list at most {NUM_ROUNDS} rounds of {n} scores")
    top = start_bound + len(game.round_scores) * bound
    game.totals = state.int_list(get("totals"), "rules.totals", -top, top, length=n)
    game.round_number = state.as_int(get("round_number"), "rules.round_number", 1, NUM_ROUNDS)
    game.over = state.as_bool(get("over"), "rules.over")
    game.winners = state.int_list(get("winners"), "rules.winners", 0, n - 1, most=n)
    game.shown_hands = state.int_lists(
        get("shown_hands"), "rules.shown_hands", 0, size - 1, most=n, inner_most=HAND_SIZE
    )
    game.shown_display = state.int_list(get("shown_display"), "rules.shown_display", 0, size - 1, most=NUM_SLOTS)
    feeds = get("dummy_feeds")
    game.dummy_feeds = None if feeds is None else state.as_int(feeds, "rules.dummy_feeds", 0, n - 1)
    if (game.dummy_feeds is None) != (n != 3):
        raise state.StateError("rules.dummy_feeds must be a seat with 3 players and None otherwise")
    game.ring = passing_ring(n, game.dummy_feeds)
    game.left_of = [0] * NUM_SLOTS
    for i, slot in enumerate(game.ring):
        game.left_of[slot] = game.ring[(i + 1) % NUM_SLOTS]
    game.log = []
    if len(game.shown_hands) not in (0, n):
        raise state.StateError(f"rules.shown_hands must be empty or list {n} hands")
    if game.step > 0 and len(game.display) != NUM_SLOTS:
        raise state.StateError(f"rules.display must list the {NUM_SLOTS} goals once they are placed")
    if sorted(game.all_cards()) != list(range(size)):
        raise state.StateError(f"rules: hands, picks and goals must hold every card 0..{size - 1} exactly once")
    # the round: what the step and the seat to act say has been picked
    step, to_act = game.step, game.to_act
    scored = len(game.round_scores)
    if game.over:
        require(step == passes and to_act == 0, "rules.step", f"a finished game stays at step {passes}, player 0")
    count = PASS_COUNTS[step - 1] if step else 1
    for seat in range(n):
        done = seat < to_act
        picked = len(game.staged[seat]) + (step == GOAL_STEP and game.goal_of_slot[seat] >= 0)
        require(
            picked == count if done else picked < count if seat == to_act else picked == 0,
            f"rules.staged[{seat}]" if step else f"rules.goal_of_slot[{seat}]",
            f"at step {step} with player_{to_act} to act, player_{seat} has "
            + ("picked all" if done else "picked none" if seat > to_act else "picks left"),
        )
        if step:
            require(game.goal_of_slot[seat] >= 0, f"rules.goal_of_slot[{seat}]", "goals are chosen at step 0")
            require(not game.over or not game.staged[seat], f"rules.staged[{seat}]", "the game is over")
        hand = HAND_SIZE - len(game.staged[seat]) + (step == GOAL_STEP and game.goal_of_slot[seat] < 0)
        require(len(game.hands[seat]) == hand, f"rules.hands[{seat}]", f"player_{seat} must hold {hand} cards")
        moved = sum(PASS_COUNTS[: max(step - 1, 0)]) + (PASS_COUNTS[-1] if game.over else 0)
        for key in ("passed", "received"):
            require(
                len(getattr(game, key)[seat]) == moved,
                f"rules.{key}[{seat}]",
                f"{moved} card(s) have been passed at step {step}{' (game over)' if game.over else ''}",
            )
    for slot in range(n, NUM_SLOTS):
        require(len(game.hands[slot]) == HAND_SIZE, f"rules.hands[{slot}]", f"a dummy holds {HAND_SIZE} cards")
        require(game.goal_of_slot[slot] >= 0, f"rules.goal_of_slot[{slot}]", "a dummy's goal is set when dealt")
    require(
        (sorted(game.display) == sorted(game.goal_of_slot)) if step else not game.display,
        "rules.display",
        "the display holds the four goals once they are chosen (step 1 on), none before",
    )
    # the rounds scored: round scores, totals, what was shown, winners, over
    require(
        scored <= game.round_number - (not game.over) and (scored >= 1 or not game.over),
        "rules.round_scores",
        f"{scored} round(s) scored in round {game.round_number}{' (game over)' if game.over else ''}",
    )
    require(
        (len(game.shown_hands) == n and len(game.shown_display) == NUM_SLOTS) if scored else not game.shown_hands,
        "rules.shown_hands",
        f"every player shows its {HAND_SIZE} cards at each scoring, and nothing is shown before the first",
    )
    require(
        all(len(hand) == HAND_SIZE for hand in game.shown_hands) and (scored or not game.shown_display),
        "rules.shown_hands",
        f"a shown hand has {HAND_SIZE} cards",
    )
    if game.over:
        require(
            game.round_number == NUM_ROUNDS or max(game.totals) >= END_SCORE,
            "rules.over",
            f"the game ends after round {NUM_ROUNDS} or once a total reaches {END_SCORE}",
        )
        require(
            game.shown_hands == [sorted(game.hands[seat]) for seat in range(n)] and game.shown_display == game.display,
            "rules.shown_hands",
            "at the end every player's hand and the goals are shown",
        )
        require(
            game.winners == winners(game.totals, game.round_scores[-1]),
            "rules.winners",
            "the winners are the highest totals (ties: the higher last-round score)",
        )
    else:
        require(not game.winners, "rules.winners", "there are no winners while the game runs")
        require(
            not scored or max(game.totals) < END_SCORE,
            "rules.totals",
            f"a total of {END_SCORE} or more after a scored round ends the game",
        )
    game.touch()
    return game
