"""Derived inputs for Rummikub networks: the plays the heuristic would consider this turn, read from a seat's
observation.

Where you are: a helper of ``tableenvs/rummikub`` read by model files that name ``rummikub_turn_plans_v1``
(:mod:`tableenvs.policies.input_features`). It reads only the seat's observation and action mask (its rack, the
tiles it has staged, the table as of the last commit, whether it has opened), so it adds no hidden information.

A Rummikub turn is several decisions (stage k tiles, then commit), and what the search over whole turns changes is
which turn to play, most often a draw instead of the heuristic's play (docs/agents.md). So, for each of the three
plays of :meth:`HeuristicPolicy.candidate_plays` (the heuristic's, the other objective's, the heuristic's keeping the
jokers), in that order, a block of ``NUM_ACTIONS + 4`` float32:

* one-hot of the play's **next action** from where the turn stands: the lowest tile type the play holds more of
  than is staged (and the mask allows), or commit once exactly the play is staged; all 0 when there is no such play
  or the staged tiles are not part of it;
* 1 if the play exists; its tiles / 14; its points / 100 (a joker counts 30, as on a rack); 1 if it is the same
  play as the heuristic's (always 1 in the first block when a play exists).

The plays depend only on the rack, the table and the opened flag, which do not change within a turn, so they are
solved once per turn (three solves, cached) and each later decision only re-reads the staged tiles.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .agents import HeuristicPolicy, next_action
from .encoder import NUM_ACTIONS
from .tiles import TILE_VALUES

#: Values in each play's block (after the next-action one-hot): exists, tiles / 14, points / 100, same as heuristic's.
PLAY_BLOCK = NUM_ACTIONS + 4


class TurnPlans:
    """``(observation, action_mask) -> float32[3 * PLAY_BLOCK]``, the blocks of the module docstring, for ``env``
    (its opening threshold)."""

    size = 3 * PLAY_BLOCK

    def __init__(self, env: Any) -> None:
        self.heuristic = HeuristicPolicy(env)
        self._key: bytes | None = None
        #: The three plays (count vectors, ``None`` where there is none) of the last observation read.
        self.plays: list[np.ndarray | None] = []
        self._summary = np.zeros(self.size, np.float32)

    def __call__(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        rack, staged, table, opened = HeuristicPolicy.read(observation)
        key = rack.tobytes() + table.tobytes() + bytes([opened])
        if key != self._key:
            self._key = key
            self.plays = [played for _, played in self.heuristic.candidate_plays(rack, table, opened)]
            self._summary = self._summarise(self.plays)
        out = self._summary.copy()
        if not action_mask.any():
            return out  # a final observation: nothing to stage or commit
        for slot, played in enumerate(self.plays):
            if played is None or np.any(staged > played):
                continue  # no such play, or the tiles staged are not part of it
            action = next_action(played, staged, action_mask)
            if action is not None:
                out[slot * PLAY_BLOCK + action] = 1.0
        return out

    def _summarise(self, plays: list[np.ndarray | None]) -> np.ndarray:
        """The blocks without their next-action parts (those depend on the staged tiles)."""
        out = np.zeros(self.size, np.float32)
        for slot, played in enumerate(plays):
            if played is None:
                continue
            base = slot * PLAY_BLOCK + NUM_ACTIONS
            out[base] = 1.0
            out[base + 1] = played.sum() / 14.0
            out[base + 2] = float(played @ TILE_VALUES) / 100.0
            out[base + 3] = float(plays[0] is not None and np.array_equal(played, plays[0]))
        return out
