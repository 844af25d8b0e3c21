"""The batched contract: what ``tableenvs.vector.make`` returns for every game that has a batched engine.

Where you are: :mod:`tableenvs.vector`, shared by every batched engine (no game here). A game's batched engine is
named by its spec (``GameSpec.batched``, ``"module:factory"``); the factory returns an object of this shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class BatchedGame(Protocol):
    """``num_envs`` games of one kind stepped together, turn by turn (as in Pgx).

    Env ``i`` reset with seed ``s`` plays exactly the game ``tableenvs.make_raw(name, **options)`` reset with seed
    ``s`` plays: for the same actions, the same seat to act, observation, mask and every seat's rewards at every
    step. An env whose game ended starts its next game at once, drawn from its own generator, as the AEC env's
    ``reset()`` without a seed would; ``terminated``/``truncated`` say which envs ended on that step, and the
    observation and mask returned for them are the new game's first.

    The arrays returned are the engine's own buffers, overwritten by the next ``reset``/``step``: copy what you keep.

    Optional: ``last_results(envs) -> (returns, scores, winners)``, for envs whose game ended on the last step, each
    ``(len(envs), num_players)``: every seat's total reward (float64), its final score in the game's measure (the
    AEC env's ``outcome().scores``) and whether the rules name it a winner (bool). The batched evaluation
    (:mod:`tableenvs.evaluation.batched`) reads it, and replays a finished game in the AEC env where it is missing.
    Optional: ``step_rows(rows, actions)``, ``step`` for the envs ``rows`` only (the others left as they are, no
    reward, not ended): the batched evaluation steps only the games still running with it (games of varied length).
    """

    #: The registered game's name.
    name: str
    num_envs: int
    num_players: int
    obs_size: int
    num_actions: int
    #: int64 ``(num_envs,)``: the seat (player index) to act in each env.
    to_act: np.ndarray

    def reset(self, seed: int | Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """New games: env ``i`` gets ``seed + i`` (an int) or ``seed[i]`` (a sequence of ``num_envs`` ints).
        Returns ``(obs, mask)``: float32 ``(num_envs, obs_size)`` seen by the seat to act, int8
        ``(num_envs, num_actions)`` (the AEC env's ``action_mask`` dtype)."""
        ...

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Play ``actions`` (ints, ``(num_envs,)``), one per env for its seat to act. Returns ``(obs, mask,
        rewards, terminated, truncated)``: ``rewards`` float32 ``(num_envs, num_players)``, what every seat earned on
        this step (the AEC env's ``rewards`` after it); ``terminated``, ``truncated`` bool ``(num_envs,)``.
        An illegal action raises ``ValueError`` naming the env, the action and its legal actions, and changes
        nothing (unless the engine was made with ``trusted=True``, which skips the check)."""
        ...

    def get_state(self, index: int) -> dict[str, Any]:
        """Env ``index``'s game as the AEC env's state record (``TableEnv.from_state`` opens it)."""
        ...


@runtime_checkable
class BatchedPolicy(Protocol):
    """A player for many rows of one batched game at once, inside the compiled engine's loop.

    ``act(obs, mask, envs)``: ``obs`` float32 ``(k, obs_size)`` and ``mask`` int8 ``(k, num_actions)`` are rows
    the engine returned (the seat to act in each), ``envs`` int64 ``(k,)`` the engine's env index of each row (for a
    player that reads more than the observation); returns int64 ``(k,)``, a legal action per row. The same rows give
    the same actions (no hidden state between calls unless the player documents it).
    """

    def act(self, obs: np.ndarray, mask: np.ndarray, envs: np.ndarray) -> np.ndarray: ...
