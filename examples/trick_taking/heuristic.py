"""A trick-taking heuristic (``GameSpec.heuristic``): win a trick as cheaply as possible, else throw the lowest card.

Where you are: ``trick_taking/heuristic.py``. Like every tableenvs policy it sees only what its seat sees (the
observation and the action mask) and is built with the env (``FollowLow(env)``, as ``make_policy`` does).
"""

from __future__ import annotations

from typing import Any

import numpy as np


class FollowLow:
    name = "heuristic"

    def __init__(self, env: Any):
        self.trick = env.unwrapped.encoder.observation_layout["trick"].slice

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        legal = np.flatnonzero(action_mask)
        on_table = np.flatnonzero(observation[self.trick]) % 52
        if on_table.size == 0:  # leading: the highest card
            return int(max(legal, key=lambda card: card % 13))
        if legal[0] // 13 == legal[-1] // 13:  # all of one suit: following it, or the last suit left
            beaten = [card for card in on_table if card // 13 == legal[0] // 13]
            winning = [card for card in legal if card > max(beaten, default=-1)]
            if beaten and winning:
                return int(winning[0])
        return int(min(legal, key=lambda card: card % 13))
