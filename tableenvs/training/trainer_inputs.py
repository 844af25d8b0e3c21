"""What the batched trainers' networks read: each observation, scaled, then the derived inputs a start model names.

Where you are: ``tableenvs/training/``, below :mod:`tableenvs.training.batched` and :mod:`tableenvs.training.league`
(it imports neither). No game is named here: derived inputs are found by the name a model file's header gives
(:mod:`tableenvs.policies.input_features`, declared in the game's spec).

A network the trainer builds afresh reads the observation alone. A start model (the league's ``--init``, the batched
trainer's ``start``) whose header names ``input_features`` reads the observation and then those derived inputs; the
trainer keeps that input, so its rollouts, its update and its exported file (which names the same
``input_features``) all read the same rows. The derived inputs are computed from the seat's observation and action
mask alone, so they add nothing the seat cannot see.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tableenvs.policies.input_features import features_of_rows, input_features


def observation_scale(env: Any, rng: np.random.Generator, warmup_games: int) -> np.ndarray:
    """Per-feature input scale of ``env``'s observation, float32: 1 / the largest magnitude a feature can take (the
    observation space's bound where finite, else the largest seen over every seat in ``warmup_games`` random games,
    drawn from ``rng``), at most 1."""
    box = env.observation_space(env.possible_agents[0])["observation"]
    largest = np.maximum(np.abs(box.low), np.abs(box.high)).astype(np.float64)
    unbounded = ~np.isfinite(largest)
    if unbounded.any():
        size = len(largest)
        seen = np.zeros(size)
        row = np.zeros(size, np.float32)
        for _ in range(warmup_games):
            env.reset(seed=int(rng.integers(2**63)))
            while True:
                agent = env.agent_selection
                for seat in range(len(env.possible_agents)):
                    row.fill(0)
                    env._fill_observation(seat, row)
                    np.maximum(seen, np.abs(row), out=seen)
                legal = np.flatnonzero(env._current_mask())
                env.step_trusted(int(legal[rng.integers(len(legal))]))
                if env.terminations[agent] or env.truncations[agent]:
                    break
        largest[unbounded] = seen[unbounded]
    return (1.0 / np.maximum(largest, 1.0)).astype(np.float32)


class DerivedInputs:
    """The derived inputs named ``name`` (a model header's ``input_features``) for ``env``, a batch at a time:
    ``(observations (k, obs_size), masks (k, num_actions)) -> float32 (k, size)``
    (:func:`tableenvs.policies.input_features.features_of_rows`)."""

    def __init__(self, name: str, env: Any):
        self.name = name
        self.features = input_features(name, env)
        self.size = int(self.features.size)

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return features_of_rows(self.features, observations, masks)

    def append(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Each observation row with its derived inputs after it: float32 ``(k, obs_size + size)``."""
        return np.concatenate([np.asarray(observations, np.float32), self(observations, masks)], axis=1)
