"""Derived inputs for Llama Party networks: what the greedy heuristic computes from a seat's observation.

Where you are: a helper of ``tableenvs/llama_party`` read by model files that name ``llama_party_card_values_v1``
(:mod:`tableenvs.policies.input_features`). It reads only the seat's observation and action mask (decoded by
:meth:`~tableenvs.llama_party.agents.HeuristicPolicy.read`), so it adds no hidden information.

For every card id ``c`` (``DECK_SIZE`` of them), two blocks of float32:

* ``(value(c) - best) / 10``, clipped to [-5, 0], for a legal card, where ``value`` is
  :meth:`HeuristicPolicy.values` (the expected points of the hand the pick leaves) and ``best`` its largest value
  among the legal cards; -5 for a card that is not legal;
* 1 for the heuristic's pick (the first best card), 0 for the others (all 0 with ``choice=False``).

At a final observation (no legal card) both blocks are at their defaults (-5 and 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tableenvs.llama_party.agents import HeuristicPolicy
from tableenvs.llama_party.cards import DECK_SIZE


class CardValues:
    """``(observation, action_mask) -> float32[2 * DECK_SIZE]``, the two blocks of the module docstring, for ``env``
    (its deck)."""

    size = 2 * DECK_SIZE

    def __init__(self, env: Any, choice: bool = True) -> None:
        self.heuristic = HeuristicPolicy(env)
        self.choice = choice
        self._deck = env.unwrapped.deck
        self._batched: Any = None  # the compiled batched heuristic, made at the first batch

    def batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """float32 ``(rows, size)``: this call of every row, computed for the whole batch in one compiled call (the
        batched heuristic's values, the same sums: the same floats; batched model players use it)."""
        if self._batched is None:
            from tableenvs.llama_party.batched import deck_arrays
            from tableenvs.llama_party.batched_heuristic import BatchedHeuristic

            self._batched = BatchedHeuristic(deck_tables=deck_arrays(self._deck))
        return self._batched.card_values(observations, masks, self.choice)

    def __call__(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        out = np.zeros(self.size, np.float32)
        out[:DECK_SIZE] = -5.0
        legal = np.flatnonzero(action_mask).tolist()
        if not legal:
            return out
        values = self.heuristic.values(legal, *HeuristicPolicy.read(observation))
        best = max(values)
        for card, value in zip(legal, values, strict=True):
            out[card] = max(-5.0, (value - best) / 10.0)
        if self.choice:
            out[DECK_SIZE + HeuristicPolicy.choose(legal, values)] = 1.0
        return out
