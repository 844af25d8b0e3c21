"""Llama Party as an OpenSpiel title: its parameters and the facts OpenSpiel is told (docs/openspiel.md, "Game facts").

Where you are: the game's declaration for :mod:`tableenvs.openspiel`, named by its spec (``openspiel``). The deck
option's default (``None``, the standard deck) is the parameter ``"standard"``: OpenSpiel parameters are numbers,
booleans or strings.
"""

from __future__ import annotations

import itertools
from functools import lru_cache
from typing import Any

from tableenvs.core.declarations import OpenSpielTitle


@lru_cache(maxsize=8)
def round_bounds(deck: tuple) -> tuple[int, int]:
    """Lowest and highest round score of one seat: over every letter count of a 7-card hand the deck allows, the
    4 lowest and the 4 highest goal cards' points (the 4 display goals are 4 distinct cards)."""
    from tableenvs.llama_party.cards import NUM_LETTERS
    from tableenvs.llama_party.rules import HAND_SIZE, NUM_SLOTS, goal_points

    available = [0] * NUM_LETTERS
    for card in deck:
        available[card.letter] += 1
    low = high = None
    for cut in itertools.combinations(range(HAND_SIZE + NUM_LETTERS - 1), NUM_LETTERS - 1):
        counts = [b - a - 1 for a, b in zip((-1, *cut), (*cut, HAND_SIZE + NUM_LETTERS - 1), strict=True)]
        if any(c > a for c, a in zip(counts, available, strict=True)):
            continue
        points = sorted(goal_points(card, counts) for card in deck)
        lo, hi = sum(points[:NUM_SLOTS]), sum(points[-NUM_SLOTS:])
        low = lo if low is None else min(low, lo)
        high = hi if high is None else max(high, hi)
    if low is None or high is None:
        raise ValueError("llama_party: the deck allows no 7-card hand's letter counts")
    return int(low), int(high)


def facts(env: Any) -> dict[str, Any]:
    """Utility bounds, length bound and utility kind of a Llama Party env."""
    from tableenvs.llama_party.rules import NUM_ROUNDS, PASS_COUNTS

    if env.reward_mode == "score":
        low, high = round_bounds(tuple(env.deck))
        low, high = min(low, NUM_ROUNDS * low), max(high, NUM_ROUNDS * high)
    else:
        low, high = -1, 1
    length = NUM_ROUNDS * env.num_players * (1 + sum(PASS_COUNTS))
    return {"min": float(low), "max": float(high), "length": length, "zero_sum": False}


TITLE = OpenSpielTitle(
    "tableenvs Llama Party",
    {"num_players": 4, "deck": "standard", "reward": "score"},
    (2, 4),
    facts,
    param_aliases={"deck": ("standard", None)},
)
