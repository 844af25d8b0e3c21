"""Rummikub's batched engine: many games stepped at once, the same game as ``rummikub_v0``.

Where you are: the Python half of ``tableenvs/rummikub``'s batched engine (``tableenvs.vector.make("rummikub_v0",
num_envs, ...)`` builds it through the game's spec). The rules and the observation are the kernels of
``batched_kernels.py`` (compiled on first use, cached on disk); the masks are the solver's, asked per env through
``batched_masks.py``. The contract is :class:`tableenvs.vector.BatchedGame`: env ``i`` reset with seed ``s`` deals
from ``numpy.random.default_rng(s)`` exactly as the AEC env does, and an ended episode is followed by the next one
from the same generator.

Options: every option of the AEC env (``num_players`` 2..4, ``min_initial``, ``draw_after_play``,
``strict_commit``, ``pool_exhausted``, ``games_per_episode``, ``max_turns``, ``end_on_empty_pool``), checked by the
rules engine's own constructor; ``render_mode`` is refused (open one env's game with ``get_state`` and
``TableEnv.from_state`` to look at it). Reset options (scripted racks, table, pool) are not supported by ``reset``;
a game started from them in the AEC env can still be put in an env with ``load_state(i, record)`` / ``load_env(i,
env)`` (``batched_load.py``: any running game, at the start of a turn or in the middle of one).
``get_state(i)`` replays env ``i``'s episode so far in an AEC env (the engine keeps each episode's actions and the
generator state it started from; a loaded env's replay starts from the game it was loaded with), so the record is
the AEC env's whole, event log included.
``last_results(envs)`` gives the episodes that ended on the last step (their scores, kept by the compiled step
before the next episode starts); ``step_rows(rows, actions)`` steps some envs only, the masks asked for those only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tableenvs.rummikub import batched_kernels as k
from tableenvs.rummikub.batched_masks import MaskSolver
from tableenvs.rummikub.encoder import COMMIT, NUM_ACTIONS, OBSERVATION_SIZE
from tableenvs.rummikub.env import RummikubEnv
from tableenvs.rummikub.rules import Rummikub
from tableenvs.rummikub.tiles import NUM_TILES, TILE_TYPES
from tableenvs.vector.checks import illegal_action, row_actions, rows_array
from tableenvs.vector.compile import kernels_once
from tableenvs.vector.draws import GENERATOR_WORDS, INC_LOW, seeded, state_of
from tableenvs.vector.engine import BatchedEngine, refuse_render_mode

NAME = "rummikub_v0"
_LOG_START = 1024  # actions kept per env before the replay log grows (x2)


def kernels() -> tuple[Any, ...]:
    """``(step, reset)`` compiled (once per process; on disk across processes)."""
    return kernels_once((k.step_kernel, k.reset_kernel), "the Rummikub batched engine", k.__file__, "about 15 s")


class RummikubBatched(BatchedEngine):
    """``num_envs`` games of Rummikub (see :class:`tableenvs.vector.BatchedGame` for the contract)."""

    name = NAME

    def __init__(
        self,
        num_envs: int,
        num_players: int = 4,
        min_initial: int = 30,
        draw_after_play: bool = False,
        strict_commit: bool = True,
        pool_exhausted: str = "lowest_rack",
        games_per_episode: int = 1,
        max_turns: int = 1000,
        end_on_empty_pool: bool = False,
        trusted: bool = False,
    ):
        rules = Rummikub(  # the rules engine's own checks of every option (one-line ValueErrors)
            num_players,
            min_initial=min_initial,
            draw_after_play=draw_after_play,
            strict_commit=strict_commit,
            pool_exhausted=pool_exhausted,
            games_per_episode=games_per_episode,
            max_turns=max_turns,
            end_on_empty_pool=end_on_empty_pool,
        )
        super().__init__(num_envs, rules.num_players, OBSERVATION_SIZE, NUM_ACTIONS, trusted)
        self._env_options = {
            "num_players": rules.num_players,
            "min_initial": rules.min_initial,
            "draw_after_play": rules.draw_after_play,
            "strict_commit": rules.strict_commit,
            "pool_exhausted": rules.pool_exhausted,
            "games_per_episode": rules.games_per_episode,
            "max_turns": rules.max_turns,
            "end_on_empty_pool": rules.end_on_empty_pool,
        }
        options = np.zeros(k.O_WIDTH, np.int64)
        options[k.O_PLAYERS] = rules.num_players
        options[k.O_STRICT] = rules.strict_commit
        options[k.O_DRAW_AFTER_PLAY] = rules.draw_after_play
        options[k.O_LOWEST_RACK] = rules.pool_exhausted == "lowest_rack"
        options[k.O_GAMES] = rules.games_per_episode
        options[k.O_MAX_TURNS] = rules.max_turns
        options[k.O_END_ON_EMPTY_POOL] = rules.end_on_empty_pool
        self._options = options
        self._step, self._reset = kernels()
        e = self.num_envs
        self._racks = np.zeros((e, 4, TILE_TYPES), np.int64)
        self._table = np.zeros((e, TILE_TYPES), np.int64)
        self._staged = np.zeros((e, TILE_TYPES), np.int64)
        self._last = np.zeros((e, TILE_TYPES), np.int64)
        self._pool = np.zeros((e, NUM_TILES), np.int64)
        self._opened = np.zeros((e, 4), np.bool_)
        self._scores = np.zeros((e, 4), np.float64)
        self._g = np.zeros((e, k.G_WIDTH), np.int64)
        self._generators = np.zeros((e, GENERATOR_WORDS), np.uint64)
        self._starts = np.zeros((e, GENERATOR_WORDS), np.uint64)
        self._log = np.zeros((e, _LOG_START), np.int8)
        self._ended = np.zeros((e, 4), np.float64)  # the step kernels' episode scores of the envs that ended
        self._masks = MaskSolver(self)
        self._loaded_from: dict[int, Any] = {}  # row -> the game it was loaded with mid-episode (batched_load.py)

    @property
    def to_act(self) -> np.ndarray:  # type: ignore[override]
        """int64 ``(num_envs,)``: the seat to act in each env."""
        return self._g[:, k.TO_ACT].copy()

    def _state(self) -> tuple[np.ndarray, ...]:
        return (
            self._racks, self._table, self._staged, self._last, self._pool, self._opened, self._scores, self._g,
            self._generators, self._starts, self._options,
        )  # fmt: skip

    def _start_games(self, seeds: list[int]) -> None:
        self._generators = seeded(seeds)
        self._loaded_from.clear()
        self._reset(*self._state(), self.obs)
        self._masks.fill_all(self, np.zeros(self.num_envs, np.bool_))

    def _play(self, actions: np.ndarray, check: bool) -> int:
        if check:
            legal = self.mask[np.arange(self.num_envs), actions]
            if not legal.all():
                return int(np.flatnonzero(legal == 0)[0])
        self._grow_log(self._g[:, k.LOG_LEN])
        self._step(
            actions, *self._state(), self._log, self.obs, self.rewards, self.terminated, self.truncated, self._ended
        )
        self._masks.renew(np.flatnonzero(actions >= COMMIT))  # the turns that ended: their sweeps' buffers
        self._masks.fill_all(self, actions < COMMIT)
        return -1

    def _grow_log(self, lengths: np.ndarray) -> None:
        if lengths.size and int(lengths.max()) >= self._log.shape[1]:
            self._log = np.concatenate([self._log, np.zeros_like(self._log)], axis=1)

    def step_rows(self, rows: Any, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`step` for the envs ``rows`` only (distinct env indices), ``actions[i]`` played in env ``rows[i]``;
        every other env is left as it is (its rewards zero, not ended on this step, its mask not asked again).
        Returns the whole buffers, as ``step`` does. What a batched evaluation calls once some envs' games are over
        (they wait, at no cost). The same checks as ``step`` (the action ids always, their legality unless
        trusted): a one-line ``ValueError``, nothing changed."""
        self._require_started("step_rows")
        rows = rows_array(rows, self.num_envs)
        actions = row_actions(actions, rows, self.num_actions)
        if not self.trusted:
            legal = self.mask[rows, actions]
            if not legal.all():
                bad = int(np.flatnonzero(legal == 0)[0])
                env = int(rows[bad])
                raise illegal_action(self.name, env, int(actions[bad]), int(self._g[env, k.TO_ACT]),
                                     self.legal_actions(env))  # fmt: skip
        (kernel,) = kernels_once((k.step_rows_kernel,), "the Rummikub batched engine's step_rows", k.__file__,
                                 "about 10 s")  # fmt: skip
        self._grow_log(self._g[rows, k.LOG_LEN])
        kernel(
            rows, actions, *self._state(), self._log, self.obs, self.rewards, self.terminated, self.truncated,
            self._ended,
        )  # fmt: skip
        self._masks.renew(rows[actions >= COMMIT])
        continuing = np.zeros(self.num_envs, np.bool_)
        continuing[rows] = actions < COMMIT
        self._masks.fill_rows(self, rows, continuing)
        return self.obs, self.mask, self.rewards, self.terminated, self.truncated

    def last_results(self, envs: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The results of the episodes that ended on the last step in ``envs`` (ints; each must have ended then):
        ``(returns, scores, winners)``, ``(len(envs), num_players)`` each. Every seat's total reward (float64) is the
        sum of its games' scores over the episode, which is also its final score (the AEC env's ``outcome().scores``,
        ``Rummikub.scores``: the games finished before ``max_turns`` cut the episode short); the winners are the
        best episode scores (the rules name each game's winners, not the episode's: ``outcome().winners``)."""
        envs = np.asarray(envs, np.int64)
        scores = self._ended[envs, : self.num_players].copy()
        return scores.copy(), scores, scores == scores.max(axis=1, keepdims=True)

    def _load_rows(self, rows: np.ndarray, record: Any, check: bool) -> None:
        from tableenvs.rummikub.batched_load import load_rows  # load_state: batched_load.py

        load_rows(self, rows, record, check)

    def _load_env_rows(self, rows: np.ndarray, env: Any) -> None:
        from tableenvs.rummikub.batched_load import load_env_rows

        load_env_rows(self, rows, env)

    def _state_record(self, index: int) -> dict[str, Any]:
        """Env ``index``'s episode replayed in an AEC env from the generator state it started with (a row loaded
        mid-episode and still in that episode: from a copy of the game it was loaded with)."""
        if self._starts[index, INC_LOW] == 0:  # loaded (batched_load.py): no generator has an even increment
            from tableenvs.rummikub.batched_load import loaded_env

            env = loaded_env(self, index)
        else:
            env = RummikubEnv(**self._env_options)
            env.reset(seed=0)
            env._started_rng().bit_generator.state = state_of(self._starts[index])
            env.reset()
        for action in self._log[index, : self._g[index, k.LOG_LEN]]:
            env.step(int(action))
        return env.get_state()


def batched_game(num_envs: int, **options: Any) -> RummikubBatched:
    """The factory ``GameSpec.batched`` names: the AEC env's options, ``trusted``; ``render_mode`` refused."""
    refuse_render_mode(NAME, options)
    return RummikubBatched(num_envs, **options)
