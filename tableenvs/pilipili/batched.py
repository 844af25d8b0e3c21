"""Pili Pili batched: ``num_envs`` games stepped at once by compiled kernels, each the very game of the AEC env.

Where you are: the Pili Pili package. :func:`make_batched` (the game spec's ``batched`` entry) builds a
:class:`PiliPiliBatched`: the AEC env's options (``num_players``, ``missions``, ``expert``, ``reward``,
``max_rounds``; every value the AEC env accepts), its rules, observation and mask compiled with numba
(``batched_kernels.py``) over struct-of-arrays state, and numpy's generator compiled too
(:mod:`tableenvs.vector.draws`).

The same game, provably: env ``i`` reset with seed ``s`` draws from ``numpy.random.default_rng(s)`` exactly what
``tableenvs.make_raw("pilipili_v0", ...)`` reset with seed ``s`` draws, and plays its game: for the same actions the
same seat to act, observation (of the seat to act), mask and per-seat rewards (the AEC env's ``rewards`` after the
step) at every step (tests/pilipili/test_batched.py). A finished game is followed at once by the env's next game,
drawn from its own generator as the AEC env's ``reset()`` without a seed draws it; ``terminated`` / ``truncated``
say which envs ended on that step, and the returned observation and mask are the new game's first.

The arrays ``reset`` and ``step`` return are the engine's own buffers, rewritten by the next call: copy what you
keep. ``get_state(i)`` replays env ``i``'s game so far in an AEC env and returns its state record.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tableenvs.pilipili.encoder import mission_vector
from tableenvs.pilipili.env import PiliPiliEnv
from tableenvs.pilipili.missions import BASIC_MISSION, Mission
from tableenvs.pilipili.table import effective_hand_size
from tableenvs.vector.checks import illegal_action, row_actions, rows_array
from tableenvs.vector.compile import kernels_once
from tableenvs.vector.draws import GENERATOR_WORDS, INC_LOW, seeded, state_of
from tableenvs.vector.engine import BatchedEngine, refuse_render_mode

NAME = "pilipili_v0"


def kernels() -> tuple[Any, ...]:
    """``(step_envs, reset_envs)`` compiled (once per process; on disk across processes)."""
    from tableenvs.pilipili import batched_kernels as k

    return kernels_once((k.step_envs, k.reset_envs), "the Pili Pili batched engine", k.__file__, "about 20 CPU-seconds")


def _mission_table(missions: list[Mission] | None, n: int, k: Any) -> tuple[np.ndarray, np.ndarray]:
    """Each mission's parameters (``k.M_*`` columns) and observation section, in deck order."""
    deck = [BASIC_MISSION] if missions is None else missions
    mp = np.zeros((len(deck), k.NM), np.int64)
    mvec = np.zeros((len(deck), k.MISSION_SIZE), np.float32)
    for i, m in enumerate(deck):
        h = effective_hand_size(m, n)
        row = mp[i]
        row[k.M_HAND] = h
        row[k.M_PASS_DIR] = m.pass_direction
        row[k.M_PASS_COUNT] = m.pass_count
        row[k.M_PASS_N] = min(m.pass_count, h)
        row[k.M_PASS_ALL] = m.pass_all
        row[k.M_FORBID] = sum(1 << b for b in m.forbidden_bids)
        row[k.M_FOREHEAD] = m.forehead
        row[k.M_BLIND] = m.blind
        row[k.M_EXTRA] = m.extra_draw
        row[k.M_REVEAL] = m.reveal
        row[k.M_EXACT] = m.exact_bid_reward
        row[k.M_SIMUL] = m.simultaneous
        row[k.M_REV] = m.reversed
        row[k.M_TIMED] = m.timed_look
        row[k.M_FL] = m.first_last_trick
        row[k.M_MEMO] = m.memorise
        row[k.M_NOCOPY] = m.no_copy_bid
        row[k.M_DESIG] = m.designate
        row[k.M_HOL] = m.highest_or_lowest
        row[k.M_LISTED] = sum(1 << c for c in m.listed_numbers)
        row[k.M_LIST_EACH] = m.listed_each
        row[k.M_SWAP] = m.swap
        row[k.M_BID_START] = m.bid_start
        row[k.M_BID_DIR] = m.bid_direction
        row[k.M_HAS_LOOK] = m.has_look
        mvec[i] = mission_vector(m)
    return mp, mvec


class PiliPiliBatched(BatchedEngine):
    """``num_envs`` Pili Pili games with the AEC env's options; see the module docstring."""

    name = NAME

    def __init__(self, num_envs: int, *, trusted: bool = False, **options: Any):
        from tableenvs.pilipili import batched_kernels as k

        template = PiliPiliEnv(**options)  # checks every option as the AEC env does
        self.options = dict(template._state_options())
        self._env_options = dict(options)
        super().__init__(num_envs, template.num_players, template.observation_size, k.NUM_ACTIONS, trusted)
        self._k = k
        self._step, self._reset = kernels()
        n = self.num_players
        layout = template.encoder.offsets
        mine = k.offsets(n)
        if mine["size"] != self.obs_size or any(mine.get(name, start) != start for name, start in layout.items()):
            raise AssertionError(f"batched observation layout {mine} differs from the encoder's {layout}")
        self._nm = 0 if template.missions is None else len(template.missions)
        self._max_rounds = -1 if template.max_rounds is None else template.max_rounds
        self._win = template.reward_mode == "win"
        self._mp, self._mvec = _mission_table(template.missions, n, k)
        deck = [BASIC_MISSION] if template.missions is None else template.missions
        self._mission_index = {mission: i for i, mission in reversed(list(enumerate(deck)))}  # load_state's
        self._mission_ids: dict[int, tuple[Mission, int]] = {}  # ... and its cache by object (batched_load.py)
        self._loaded_from: dict[int, Any] = {}  # row -> the raw env it was loaded from mid-game (batched_load.py)
        self._mnz = np.zeros((len(self._mvec), k.MISSION_SIZE + 1), np.int64)  # count, then nonzero entries
        for i, vector in enumerate(self._mvec):
            entries = np.flatnonzero(vector)
            self._mnz[i, 0] = len(entries)
            self._mnz[i, 1 : 1 + len(entries)] = entries
        self._g = np.zeros((num_envs, k.NG), np.int64)
        self._ps = np.zeros((num_envs, k.NP, 8), np.int64)
        self._posc = np.zeros((num_envs, 8, 28), np.int64)
        self._deck = np.zeros((num_envs, k.NUM_CARDS), np.int64)
        self._pile = np.zeros((num_envs, max(self._nm, 1)), np.int64)
        self._rng = np.zeros((num_envs, GENERATOR_WORDS), np.uint64)
        self._rng0 = np.zeros((num_envs, GENERATOR_WORDS), np.uint64)  # each game's generator at its start
        self._log = np.zeros((num_envs, 256), np.int16)
        self._longest = 0
        self.to_act = np.zeros(num_envs, np.int64)
        self._shape = (self.num_envs,)

    def _start_games(self, seeds: list[int]) -> None:
        self._rng[:] = seeded(seeds)
        self._log[:] = 0
        self._longest = 0
        self._reset(
            np.arange(self.num_envs, dtype=np.int64), self.num_players, self._nm, self._g, self._ps, self._deck,
            self._pile, self._rng, self._rng0, self._mp, self._mnz, self._mvec, self.obs, self.mask,
            self.to_act,
        )  # fmt: skip

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`BatchedEngine.step`, with a short path for the usual call (a C-contiguous int64 array of shape
        ``(num_envs,)``): the kernel checks the range (and, unless trusted, the mask) itself; any refusal goes
        through the shared path, which raises its one-line error (nothing was changed)."""
        if (
            type(actions) is np.ndarray
            and actions.dtype == np.int64
            and actions.shape == self._shape
            and actions.flags.c_contiguous
            and self._started
            and self._play(actions, not self.trusted) < 0
        ):
            return self.obs, self.mask, self.rewards, self.terminated, self.truncated
        return super().step(actions)

    def _play(self, actions: np.ndarray, check: bool) -> int:
        if self._longest >= self._log.shape[1]:
            grown = np.zeros((self.num_envs, 2 * self._log.shape[1]), np.int16)
            grown[:, : self._log.shape[1]] = self._log
            self._log = grown
        longest = self._step(
            actions, check, self.num_players, self._nm, self._max_rounds, self._win, self._g, self._ps,
            self._posc, self._deck, self._pile, self._rng, self._rng0, self._log, self._mp, self._mnz, self._mvec,
            self.obs, self.mask, self.rewards, self.terminated, self.truncated, self.to_act,
        )  # fmt: skip
        if longest < 0:
            return -1 - int(longest)
        self._longest = int(longest)
        return -1

    def _load_rows(self, rows: np.ndarray, record: Any, check: bool) -> None:
        from tableenvs.pilipili.batched_load import load_rows  # load_state: batched_load.py

        load_rows(self, rows, record, check)

    def _load_env_rows(self, rows: np.ndarray, env: Any) -> None:
        from tableenvs.pilipili.batched_load import load_env_rows

        load_env_rows(self, rows, env)

    def step_rows(self, rows: Any, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`step` for the envs ``rows`` only (distinct env indices), ``actions[i]`` played in env ``rows[i]``;
        every other env is left as it is (its rewards zero, not ended on this step). Returns the whole buffers, as
        ``step`` does. What a batched evaluation calls once some envs' games are over (they wait, at no cost). The
        same checks as ``step`` (range always, the mask unless trusted): a one-line ``ValueError``, nothing
        changed."""
        self._require_started("step_rows")
        rows = rows_array(rows, self.num_envs)
        actions = row_actions(actions, rows, self.num_actions)
        (kernel,) = kernels_once((self._k.step_rows,), "the Pili Pili batched engine's step_rows", self._k.__file__,
                                 "about 20 CPU-seconds")  # fmt: skip
        if self._longest >= self._log.shape[1]:
            grown = np.zeros((self.num_envs, 2 * self._log.shape[1]), np.int16)
            grown[:, : self._log.shape[1]] = self._log
            self._log = grown
        longest = kernel(
            rows, actions, not self.trusted, self.num_players, self._nm, self._max_rounds, self._win, self._g,
            self._ps, self._posc, self._deck, self._pile, self._rng, self._rng0, self._log, self._mp, self._mnz,
            self._mvec, self.obs, self.mask, self.rewards, self.terminated, self.truncated, self.to_act,
        )  # fmt: skip
        if longest < 0:
            env = int(rows[-1 - longest])
            raise illegal_action(self.name, env, int(actions[-1 - longest]), int(self.to_act[env]),
                                 self.legal_actions(env))  # fmt: skip
        self._longest = int(longest)
        return self.obs, self.mask, self.rewards, self.terminated, self.truncated

    def last_results(self, envs: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The results of the games that ended on the last step in ``envs`` (ints; each must have ended then):
        ``(returns, scores, winners)``, ``(len(envs), num_players)`` each: every seat's total reward (float64, the
        AEC env's ``outcome().returns``: ``-chilis`` with ``reward="penalty"``; with ``"win"`` the shared win or -1,
        0 for a game cut short), its final chilis (``outcome().scores``) and whether it is a winner (the fewest
        chilis: the rules' winners, and the best score of a game cut short)."""
        envs = np.asarray(envs, np.int64)
        chilis = self._ps[envs, self._k.P_ENDED, : self.num_players].astype(np.float64)
        winners = chilis == chilis.min(axis=1, keepdims=True)
        if not self._win:
            returns = 0.0 - chilis  # the sum of -change over the rounds: exact integers (0.0, never -0.0)
        else:
            share = 1.0 / winners.sum(axis=1, keepdims=True)
            returns = np.where(winners, share, -1.0)
            returns[self.truncated[envs]] = 0.0
        return returns, chilis, winners

    def _state_record(self, index: int) -> dict[str, Any]:
        """Env ``index``'s game replayed in an AEC env from the generator state it started with (a row loaded
        mid-game and still in that game: from a copy of the env it was loaded from)."""
        log = self._log[index, : self._g[index, self._k.G_LOG_LEN]]
        if self._rng0[index, INC_LOW] == 0:  # loaded mid-game (batched_load.py): no generator has an even increment
            from tableenvs.pilipili.batched_load import loaded_env

            env = loaded_env(self, index)
            for action in log:
                env.step(int(action))
            return env.get_state()
        env = PiliPiliEnv(**self._env_options)
        env.reset(seed=0)
        generator = env._started_rng()
        generator.bit_generator.state = state_of(self._rng0[index])
        env.reset()
        for action in log:
            env.step(int(action))
        return env.get_state()


def make_batched(num_envs: int, **options: Any) -> PiliPiliBatched:
    """The factory ``GameSpec.batched`` names: ``num_envs`` envs with the AEC env's options, ``trusted``;
    ``render_mode`` refused."""
    refuse_render_mode(NAME, options)
    return PiliPiliBatched(num_envs, **options)
