"""Test support: positions of real Rummikub games (observations and masks of seats of heuristic games).

You are in test code; unlike ``rummikub_support.py`` this plays the package's games (the heuristic uses the solver).
"""

from __future__ import annotations

import numpy as np


def heuristic_decisions(count: int, players: int = 4, keep=None) -> list[tuple[np.ndarray, np.ndarray]]:
    """The first ``count`` (observation, mask) pairs of games of heuristics (deals 0, 1, ...): every decision, or
    those that ``keep(observation, mask)`` accepts."""
    import tableenvs
    from tableenvs.rummikub.agents import HeuristicPolicy

    raw = tableenvs.make_raw("rummikub_v0", num_players=players)
    heuristic = HeuristicPolicy(raw)
    found: list[tuple[np.ndarray, np.ndarray]] = []
    seed = 0
    while len(found) < count:
        raw.reset(seed=seed)
        seed += 1
        while not (raw.terminations[raw.agent_selection] or raw.truncations[raw.agent_selection]):
            view = raw.observe(raw.agent_selection)
            if keep is None or keep(view["observation"], view["action_mask"]):
                found.append((view["observation"].copy(), view["action_mask"].copy()))
            raw.step(heuristic.act(view["observation"], view["action_mask"], None))
    return found[:count]
