"""The differential check of a batched candidate-scoring player against ``NumpyPolicy``, for any game whose spec names
batched candidates (no game named): shared by ``tests/test_vector_candidates.py`` and the longer sweep
``benchmarks/batched_candidates_sweep.py``.

``random_candidate_model(path, name, players, candidates, seed)``: a candidate-scoring file of random weights (one
hidden layer). ``mixed_play(name, players, path, num_envs, steps, seed)``: step by step, the batched player and one
``NumpyPolicy`` per env (whose kept state follows the env, as the batched player's does) are given each env's row;
then each env plays the model's move or a random legal one, with probability 1/2 each (a random move may stage a
tile no candidate holds, which hands the row to the heuristic on both sides). Ended games start afresh on both sides.
Returns the mismatches and the rows scored.
"""

from __future__ import annotations

import numpy as np

import tableenvs
import tableenvs.vector
from tableenvs.core.layout import layout_version
from tableenvs.policies.input_features import candidate_size
from tableenvs.policies.model_env import model_options
from tableenvs.policies.model_file import save_numpy_policy
from tableenvs.policies.numpy_policy import NumpyPolicy


def random_candidate_model(path, name: str, players: int, candidates: str, seed: int) -> str:
    """A candidate-scoring file of random weights (one hidden layer, so the batched pass is more than one product)."""
    raw = tableenvs.make_raw(name, num_players=players)
    rng = np.random.default_rng(seed)
    size = candidate_size(candidates)
    weights = [(rng.normal(size=(size, 8)), rng.normal(size=8) * 0.1), (rng.normal(size=(8, 1)), np.zeros(1))]
    save_numpy_policy(
        path, game=name, options=model_options(raw), layout_version=layout_version(raw), weights=weights,
        activation="relu", candidates=candidates,
    )  # fmt: skip
    return str(path)


def mixed_play(name: str, players: int, path: str, num_envs: int = 24, steps: int = 150, seed: int = 5) -> dict:
    """Step by step the batched player and one ``NumpyPolicy`` per env, then half the model's move, half a random
    legal move (module docstring); returns the mismatches, the rows compared and the rows scored."""
    options = {"num_players": players}
    games = tableenvs.vector.make(name, num_envs, **options)
    raw = tableenvs.make_raw(name, **options)
    player = tableenvs.vector.batched_policy(path, games, env=raw)
    pythons = [NumpyPolicy(path, raw) for _ in range(num_envs)]
    rng = np.random.default_rng(seed)
    envs = np.arange(num_envs, dtype=np.int64)
    obs, mask = games.reset(seed)
    mismatches = 0
    for _ in range(steps):
        chosen = player.act(obs, mask, envs)
        expected = np.array([p.act(o, m, rng) for p, o, m in zip(pythons, obs, mask, strict=True)])
        mismatches += int((chosen != expected).sum())
        random = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        obs, mask, _, terminated, truncated = games.step(np.where(rng.random(num_envs) < 0.5, chosen, random))
        ended = np.flatnonzero(terminated | truncated)
        player.forget(ended)  # a new game: nothing kept, on both sides
        for e in ended.tolist():
            pythons[e] = NumpyPolicy(path, raw)
    return {"mismatches": mismatches, "rows": steps * num_envs, "scored": player.scored, "rescored": player.rescored}
