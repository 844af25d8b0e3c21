"""Positions recorded from a batched engine's play, for the tests that hold a batched player to its Python twin on
them (no game named).

``recorded_positions(name, options, num_envs, steps, seed)``: ``num_envs`` batched games of ``name`` reset with
``seed`` play ``steps`` steps; every move is a random legal action drawn from ``numpy.random.default_rng(seed)``, or
with ``heuristic=True`` the game's batched heuristic's choice or that random action, each with probability 1/2 (so
play reaches varied positions; a heuristic that draws is seeded ``seed``). The observation and mask before every
``every``-th step (the last of each ``every``) are kept: ``num_envs * (steps // every)`` rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tableenvs.vector


def recorded_positions(
    name: str, options: dict[str, Any], num_envs: int, steps: int, seed: int, *, heuristic: bool = False, every: int = 1
) -> tuple[np.ndarray, np.ndarray, Any]:
    """``(obs, mask, games)``: the rows kept (module docstring) and the batched games, left where play stopped."""
    games = tableenvs.vector.make(name, num_envs, **options)
    player = tableenvs.vector.batched_heuristic(games) if heuristic else None
    if player is not None and hasattr(player, "seed"):
        player.seed(seed)
    rng = np.random.default_rng(seed)
    envs = np.arange(num_envs, dtype=np.int64)
    obs, mask = games.reset(seed)
    seen_obs, seen_mask = [], []
    for step in range(steps):
        if step % every == every - 1:
            seen_obs.append(obs.copy())
            seen_mask.append(mask.copy())
        chosen = player.act(obs, mask, envs) if player is not None else None
        random = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        if chosen is not None:
            random = np.where(rng.random(num_envs) < 0.5, chosen, random)
        obs, mask, *_ = games.step(random)
    return np.concatenate(seen_obs), np.concatenate(seen_mask), games
