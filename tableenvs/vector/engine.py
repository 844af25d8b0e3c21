"""The Python half every batched engine shares: the output buffers, ``reset``/``step``/``get_state`` with their
argument checks, the illegal-action error and the refusal to render.

Where you are: :mod:`tableenvs.vector` (no game here). A game's engine subclasses :class:`BatchedEngine` and supplies
its compiled part through three methods: :meth:`~BatchedEngine._start_games` (new games from seeded generator rows),
:meth:`~BatchedEngine._play` (one action per env, or the first illegal env with nothing changed) and
:meth:`~BatchedEngine._state_record` (one env's game as the AEC state record), plus ``to_act``; and, for
:meth:`~BatchedEngine.load_state` (a game started from an AEC state record: search rollouts of sampled worlds),
:meth:`~BatchedEngine._load_rows`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tableenvs.core.validation import check_at_least, check_bool
from tableenvs.vector.checks import actions_array, env_index, illegal_action, seeds_for


def refuse_render_mode(name: str, options: dict[str, Any]) -> None:
    """Take ``render_mode`` out of ``options``: ``None`` is accepted, any other value refused (``ValueError``): a
    batched engine draws nothing."""
    render_mode = options.pop("render_mode", None)
    if render_mode is not None:
        raise ValueError(
            f"{name}: the batched engine does not render (render_mode={render_mode!r}); open one env's game with "
            "get_state(i) and TableEnv.from_state to look at it"
        )


class BatchedEngine:
    """``num_envs`` games of one kind (the contract: :class:`tableenvs.vector.BatchedGame`).

    ``obs``, ``mask``, ``rewards``, ``terminated`` and ``truncated`` are the buffers ``reset``/``step`` fill and
    return (the engine's own: copy what you keep).
    """

    #: The registered game's name, the first word of every error.
    name: str = ""
    to_act: np.ndarray

    def __init__(self, num_envs: int, num_players: int, obs_size: int, num_actions: int, trusted: bool):
        self.num_envs = check_at_least("num_envs", num_envs, 1)
        self.num_players = num_players
        self.obs_size = obs_size
        self.num_actions = num_actions
        self.trusted = check_bool("trusted", trusted)
        self.obs = np.zeros((self.num_envs, obs_size), np.float32)
        self.mask = np.zeros((self.num_envs, num_actions), np.int8)
        self.rewards = np.zeros((self.num_envs, num_players), np.float32)
        self.terminated = np.zeros(self.num_envs, np.bool_)
        self.truncated = np.zeros(self.num_envs, np.bool_)
        self._started = False

    def reset(self, seed: int | Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """New games: env ``i`` gets ``seed + i`` (an int) or ``seed[i]``; returns ``(obs, mask)``."""
        self._start_games(seeds_for(seed, self.num_envs))
        self._started = True
        return self.obs, self.mask

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Play one action per env; returns ``(obs, mask, rewards, terminated, truncated)``. An illegal action
        raises ``ValueError`` (env, action, seat, legal actions) having changed nothing, unless ``trusted``."""
        self._require_started("step")
        actions = actions_array(actions, self.num_envs, self.num_actions)  # shape, kind, range: even when trusted
        bad = self._play(actions, not self.trusted)
        if bad >= 0:
            raise illegal_action(self.name, bad, int(actions[bad]), int(self.to_act[bad]), self.legal_actions(bad))
        return self.obs, self.mask, self.rewards, self.terminated, self.truncated

    def legal_actions(self, index: int) -> list[int]:
        """The legal actions of env ``index``'s seat to act, sorted."""
        index = env_index(index, self.num_envs)
        return [int(a) for a in np.flatnonzero(self.mask[index])]

    def get_state(self, index: int) -> dict[str, Any]:
        """Env ``index``'s game as the AEC env's state record (``TableEnv.from_state`` opens it)."""
        self._require_started("get_state")
        return self._state_record(env_index(index, self.num_envs))

    def load_state(
        self, index: int | Sequence[int], record: Mapping[str, Any], check: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """Put the game of the AEC state record ``record`` (``TableEnv.get_state()``, a sampled world's, or this
        engine's ``get_state(i)``) in env ``index``, or in every env of a sequence of indices. From there each plays
        on exactly as the AEC env opened from the record (``TableEnv.from_state``) does, its generator included: after
        that game ends it draws the next one as that env's ``reset()`` would. Fills those envs' rows of ``obs`` and
        ``mask`` (and ``to_act``); returns ``(obs, mask)``, the whole buffers.

        With ``check`` (the default) the record is first read in full as ``TableEnv.from_state`` reads it, and must be
        this engine's game with its options, still running; a bad one is a one-line ``ValueError`` and nothing
        changes. ``check=False`` skips all that, for callers that pass records of envs they made themselves (search).
        A game without the hook says so (``NotImplementedError``)."""
        self._require_started("load_state")
        rows = self._rows(index)
        if check:
            check_running_record(self.name, record)
        self._load_rows(rows, record, check)
        return self.obs, self.mask

    def load_env(self, index: int | Sequence[int], env: Any) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`load_state` of ``env.get_state()`` with ``check=False``, read straight from ``env`` (a raw AEC env
        of this game, made with this engine's options, its game running: a search's sampled world) without building
        the record, where the game's engine can; returns ``(obs, mask)``."""
        self._require_started("load_env")
        self._load_env_rows(self._rows(index), env)
        return self.obs, self.mask

    def _rows(self, index: int | Sequence[int]) -> np.ndarray:
        if isinstance(index, range) and index.step == 1 and len(index):  # a search's block of rows: one check
            return np.arange(env_index(index.start, self.num_envs), env_index(index.stop - 1, self.num_envs) + 1)
        if isinstance(index, (Sequence, np.ndarray)):
            return np.array([env_index(i, self.num_envs) for i in index], np.int64)
        return np.array([env_index(index, self.num_envs)], np.int64)

    def _require_started(self, what: str) -> None:
        if not self._started:
            raise RuntimeError(f"{self.name}: {what}() before the first reset(seed); call reset first")

    # ------------------------------------------------------------------ the game's compiled part

    def _start_games(self, seeds: list[int]) -> None:
        """Start env ``i``'s game from ``numpy.random.default_rng(seeds[i])``; fill ``obs``, ``mask``, ``to_act``."""
        raise NotImplementedError

    def _play(self, actions: np.ndarray, check: bool) -> int:
        """Apply ``actions`` (in range); with ``check``, the first env whose action is illegal (nothing changed),
        else ``-1`` after the step has filled every buffer."""
        raise NotImplementedError

    def _state_record(self, index: int) -> dict[str, Any]:
        raise NotImplementedError

    def _load_rows(self, rows: np.ndarray, record: Mapping[str, Any], check: bool) -> None:
        """Put ``record``'s game in every env of ``rows`` and fill their ``obs`` and ``mask`` (``check``: the record
        has been read by ``TableEnv.from_state``; the hook still compares its options with the engine's)."""
        raise NotImplementedError(f"{self.name}: this batched engine cannot load a state record (no _load_rows)")

    def _load_env_rows(self, rows: np.ndarray, env: Any) -> None:
        """Put raw env ``env``'s game in every env of ``rows`` (default: through its state record)."""
        self._load_rows(rows, env.get_state(), False)


def check_running_record(name: str, record: Mapping[str, Any]) -> None:
    """``ValueError`` (one line) unless ``record`` is a valid AEC state record of ``name`` whose game is running (a
    batched engine holds no finished game: an ended one is replaced by the next at once)."""
    from tableenvs.core.table_env import TableEnv

    if not isinstance(record, Mapping) or record.get("game") != name:
        game = record.get("game") if isinstance(record, Mapping) else type(record).__name__
        raise ValueError(f"{name}: load_state takes a state record of {name}, got one of {game!r}")
    if record.get("ended") is not None:
        raise ValueError(f"{name}: load_state takes a game still running; this record's game ended ({record['ended']})")
    TableEnv.from_state(record)  # StateError (a ValueError) naming the bad field
