"""A candidate-scoring model file played for a whole batch: the game's candidate plays for every row, then one
forward pass over the candidates of all the rows that have a choice.

Where you are: :mod:`tableenvs.vector` (no game here). A candidate-scoring model (its header's ``candidates``,
:mod:`tableenvs.policies.input_features`) scores one row of features per candidate play and plays the action of the
best. Its candidates are built by the game; for a batch the game's spec names their batched twin
(``GameSpec.batched_candidates``: the candidates' name -> ``"module:factory"``, ``factory(games, env)``), an object
with

* ``choices(obs, mask, envs) -> (actions, choices)``: int64 ``actions[i]``, row ``i``'s action where it has a single
  candidate (-1 where it has a choice); ``choices``, one ``(i, features float32 (K, size), actions int64 (K,))`` per
  row with two or more candidates: the very arrays the AEC candidate class returns for that row (its state, a
  candidate chosen earlier in the turn, kept per env as the AEC player keeps it);
* ``forget(envs=None)``: drop the state kept for ``envs`` (new games, loaded rows).

:class:`BatchedCandidatePolicy` scores the candidates of every row with a choice in one pass of the model
(``NumpyModel.logits``, the reference forward pass ``NumpyPolicy`` runs on one row's candidates) and plays the
first best. Greedy, it chooses exactly as :class:`~tableenvs.policies.numpy_policy.NumpyPolicy`: a batched product
may round differently from one row's, so a row whose two best scores are within
:data:`~tableenvs.vector.model_kernels.TIE_MARGIN` (relative to ``1 + |best|``), or not finite, is scored again on its
own candidates alone, as ``NumpyPolicy`` scores them. Sampled (``deterministic=False``), each row with a choice
draws ``rng.choice`` over the softmax of its own scores from the player's generator (``default_rng(seed)``, in row
order): another stream than the AEC path's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tableenvs.core.registry import spec as game_spec
from tableenvs.vector.model_kernels import TIE_MARGIN  # the plain model player's margin, used the same way here

__all__ = ["BatchedCandidatePolicy", "batched_candidates"]


def batched_candidates(model: Any, games: Any, raw: Any) -> Any:
    """The batched candidates the game's spec names for ``model.candidates`` (built for ``games`` and the AEC env
    ``raw``), or a one-line ``ValueError`` saying the game has none."""
    game = game_spec(games.name)
    table = getattr(game, "batched_candidates", None) or {}
    if model.candidates not in table:
        have = ", ".join(table) or "none"
        raise ValueError(
            f"{model.name!r} is a candidate-scoring model ({model.candidates!r}) and {games.name}'s GameSpec names no "
            f"batched candidates for it (batched_candidates: {have}), so it has no batched player; play it on the "
            "AEC engine"
        )
    return game.load("batched_candidates", model.candidates)(games, raw)


class BatchedCandidatePolicy:
    """A candidate-scoring model file (path, :class:`~tableenvs.policies.numpy_policy.NumpyModel` or
    ``NumpyPolicy``) for the rows of ``games`` (module docstring). ``env``: an AEC env of the game and options it
    plays (the model is checked against it, as ``NumpyPolicy`` checks it)."""

    def __init__(self, model: Any, games: Any, env: Any, *, deterministic: bool = True, seed: int | None = 0):
        from tableenvs.policies.numpy_policy import NumpyPolicy

        reference = model if isinstance(model, NumpyPolicy) else NumpyPolicy(model, env, deterministic=True)
        if not reference.model.candidates:
            raise ValueError(f"{reference.name!r} scores no candidates: play it with BatchedNumpyPolicy")
        self.model = reference.model
        self.name = reference.name
        self.deterministic = bool(deterministic)
        self.rng = np.random.default_rng(seed)
        self.candidates = batched_candidates(self.model, games, getattr(env, "unwrapped", env))
        self.scored = 0  # rows that had a choice (for the benchmarks)
        self.rescored = 0  # of those, rows near a tie scored again on their own

    def __repr__(self) -> str:
        return f"BatchedCandidatePolicy({self.name!r}, deterministic={self.deterministic})"

    def forget(self, envs: Any = None) -> None:
        """Drop what the candidates keep for ``envs`` (default: every env): their rows start afresh."""
        self.candidates.forget(envs)

    def act(self, obs: np.ndarray, mask: np.ndarray, envs: np.ndarray | None = None) -> np.ndarray:
        """One action per row: the action of its best-scoring candidate (or of one sampled from their softmax)."""
        obs = np.asarray(obs)
        mask = np.asarray(mask)
        envs = np.arange(len(obs), dtype=np.int64) if envs is None else np.asarray(envs, np.int64)
        if len(obs) == 0:
            return np.zeros(0, np.int64)
        actions, choices = self.candidates.choices(obs, mask, envs)
        if not choices:
            return actions
        self.scored += len(choices)
        if not self.deterministic:
            for i, features, candidate_actions in choices:
                scores = self.model.logits(features)[:, 0].astype(np.float64)
                weights = np.exp(scores - scores.max())
                actions[i] = candidate_actions[int(self.rng.choice(len(candidate_actions), p=weights / weights.sum()))]
            return actions
        scores = self.model.logits(np.concatenate([features for _, features, _ in choices]))[:, 0].astype(np.float64)
        start = 0
        for i, features, candidate_actions in choices:
            own = scores[start : start + len(candidate_actions)]
            start += len(candidate_actions)
            best = int(own.argmax())
            top = own[best]
            second = np.max(np.delete(own, best))
            if not np.isfinite(own).all() or top - second <= TIE_MARGIN * (1.0 + abs(top)):
                self.rescored += 1  # near a tie: scored as NumpyPolicy scores this row's candidates
                best = int(self.model.logits(features)[:, 0].astype(np.float64).argmax())
            actions[i] = candidate_actions[best]
        return actions
