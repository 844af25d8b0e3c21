"""Pili Pili batched: ``num_envs`` games stepped at once by compiled kernels, each the very game of the AEC env.

Where you are: the Pili Pili package. :func:`make_batched` (the game spec's ``batched`` entry) builds a
:class:`PiliPiliBatched`: the AEC env's options (``num_players``, ``missions``, ``expert``, ``reward``,
``max_rounds``; every value the AEC env accepts), its rules, observation and mask compiled with numba
(``batched_kernels.py``) over struct-of-arrays state, and numpy's generator compiled too (``batched_rng.py``).

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

import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from tableenvs.core.validation import check_bool, check_seed
from tableenvs.pilipili.encoder import mission_vector
from tableenvs.pilipili.env import PiliPiliEnv
from tableenvs.pilipili.missions import BASIC_MISSION, Mission
from tableenvs.pilipili.table import effective_hand_size

_OPTIONS = ("num_players", "missions", "expert", "reward", "max_rounds")
_announced = False


def _kernels():
    """The compiled kernels; one line on stderr first when numba has no current disk cache of them."""
    global _announced
    from tableenvs.pilipili import batched_kernels

    if not _announced:
        _announced = True
        if not _cache_is_current(batched_kernels.step_envs):
            print(
                "tableenvs: compiling the Pili Pili batched engine (numba), once: about 20 CPU-seconds; cached on disk",
                file=sys.stderr,
                flush=True,
            )
    return batched_kernels


def _cache_is_current(dispatcher: Any) -> bool:
    """Whether numba's disk cache holds ``dispatcher`` compiled from its current source (numba then only loads it):
    its cache index, read as numba reads it, is empty when missing or stale."""
    cache_file: Any = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    try:
        return bool(cache_file._load_index())
    except Exception:  # numba's private cache API changed: say it compiles rather than stay silent
        return False


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


class PiliPiliBatched:
    """``num_envs`` Pili Pili games with the AEC env's options; see the module docstring."""

    name = "pilipili_v0"

    def __init__(self, num_envs: int, *, trusted: bool = False, **options: Any):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"pilipili_v0 batched: num_envs must be a positive int, got {num_envs!r}")
        num_envs = int(num_envs)
        unknown = sorted(set(options) - set(_OPTIONS))
        if unknown:
            raise TypeError(
                f"pilipili_v0 batched: unsupported option(s) {', '.join(map(repr, unknown))}; supported: "
                f"{', '.join(_OPTIONS)}, trusted"
            )
        self.trusted = check_bool("trusted", trusted)
        template = PiliPiliEnv(**options)  # checks every option as the AEC env does
        self.options = {key: value for key, value in template._state_options().items()}
        self._env_options = dict(options)
        k = self._k = _kernels()
        n = self.num_players = template.num_players
        self.num_envs = num_envs
        self.num_actions = k.NUM_ACTIONS
        self.obs_size = template.observation_size
        layout = template.encoder.offsets
        mine = k.offsets(n)
        if mine["size"] != self.obs_size or any(mine.get(name, start) != start for name, start in layout.items()):
            raise AssertionError(f"batched observation layout {mine} differs from the encoder's {layout}")
        self._nm = 0 if template.missions is None else len(template.missions)
        self._max_rounds = -1 if template.max_rounds is None else template.max_rounds
        self._win = template.reward_mode == "win"
        self._mp, self._mvec = _mission_table(template.missions, n, k)
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
        self._rng = np.zeros((num_envs, 6), np.uint64)
        self._rng0 = np.zeros((num_envs, 6), np.uint64)
        self._log = np.zeros((num_envs, 256), np.int16)
        self._longest = 0
        self.obs = np.zeros((num_envs, self.obs_size), np.float32)
        self.mask = np.zeros((num_envs, self.num_actions), np.int8)
        self.rewards = np.zeros((num_envs, n), np.float32)
        self.terminated = np.zeros(num_envs, np.bool_)
        self.truncated = np.zeros(num_envs, np.bool_)
        self.to_act = np.zeros(num_envs, np.int64)
        self._started = False

    # ------------------------------------------------------------------ the batched API

    def reset(self, seed: int | Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Start every env: env ``i`` with ``seed + i`` (an int) or ``seed[i]`` (a sequence of ``num_envs`` ints).
        Returns ``(obs, mask)`` of the seat to act in each env (``to_act``)."""
        from tableenvs.pilipili.batched_rng import load_state

        seeds = self._seeds(seed)
        rng = np.zeros_like(self._rng)
        for e, s in enumerate(seeds):
            load_state(rng, e, np.random.default_rng(s))
        self._rng[:] = rng
        self._log[:] = 0
        self._longest = 0
        k = self._k
        k.reset_envs(
            np.arange(self.num_envs, dtype=np.int64), self.num_players, self._nm, self._g, self._ps, self._deck,
            self._pile, self._rng, self._rng0, self._mp, self._mnz, self._mvec, self.obs, self.mask,
            self.to_act,
        )  # fmt: skip
        self._started = True
        return self.obs, self.mask

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Play ``actions[i]`` in env ``i`` (an int array ``(num_envs,)``); returns ``(obs, mask, rewards,
        terminated, truncated)``. An illegal action raises ``ValueError`` naming the env, the action and its legal
        actions, and changes nothing (unless ``trusted``: then it is not checked)."""
        if not self._started:
            raise RuntimeError("pilipili_v0 batched: step() before reset(); call reset(seed) first")
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or acts.dtype.kind not in "iu":
            raise ValueError(
                f"pilipili_v0 batched: actions must be an int array of shape ({self.num_envs},), got "
                f"{acts.dtype} {acts.shape}"
            )
        acts = acts.astype(np.int64, copy=False)
        k = self._k
        if self._longest >= self._log.shape[1]:
            grown = np.zeros((self.num_envs, 2 * self._log.shape[1]), np.int16)
            grown[:, : self._log.shape[1]] = self._log
            self._log = grown
        longest = k.step_envs(
            acts, not self.trusted, self.num_players, self._nm, self._max_rounds, self._win, self._g, self._ps,
            self._posc, self._deck, self._pile, self._rng, self._rng0, self._log, self._mp, self._mnz, self._mvec,
            self.obs, self.mask, self.rewards, self.terminated, self.truncated, self.to_act,
        )  # fmt: skip
        if longest < 0:
            bad = -1 - longest
            legal = np.flatnonzero(self.mask[bad]).tolist()
            raise ValueError(
                f"pilipili_v0 batched: illegal action {int(acts[bad])} in env {bad} (player_{self.to_act[bad]} "
                f"to act); legal actions: {legal}"
            )
        self._longest = longest
        return self.obs, self.mask, self.rewards, self.terminated, self.truncated

    def get_state(self, i: int) -> dict[str, Any]:
        """The AEC state record of env ``i`` now (``TableEnv.from_state`` opens it): its game replayed in an AEC env
        from the generator state it started with."""
        from tableenvs.pilipili.batched_rng import store_state

        if not self._started:
            raise RuntimeError("pilipili_v0 batched: get_state() before reset(); call reset(seed) first")
        if type(i) is not int or not 0 <= i < self.num_envs:
            raise ValueError(f"pilipili_v0 batched: env index must be an int in 0..{self.num_envs - 1}, got {i!r}")
        env = PiliPiliEnv(**self._env_options)
        env.reset(seed=0)
        generator = env._started_rng()
        generator.bit_generator.state = store_state(self._rng0, i)
        env.reset()
        for action in self._log[i, : self._g[i, self._k.G_LOG_LEN]]:
            env.step(int(action))
        return env.get_state()

    def _seeds(self, seed: Any) -> list[int]:
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            first = check_seed(int(seed))
            assert first is not None
            return [first + i for i in range(self.num_envs)]
        if isinstance(seed, (str, bytes)) or not isinstance(seed, (Sequence, np.ndarray)):
            raise ValueError(
                f"pilipili_v0 batched: seed must be an int or a sequence of {self.num_envs} ints, got {seed!r}"
            )
        if len(seed) != self.num_envs:
            raise ValueError(f"pilipili_v0 batched: {len(seed)} seeds for {self.num_envs} envs")
        seeds = []
        for s in seed:
            if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
                raise ValueError(f"pilipili_v0 batched: seeds must be ints, got {s!r}")
            checked = check_seed(int(s))
            assert checked is not None
            seeds.append(checked)
        return seeds


def make_batched(num_envs: int, **options: Any) -> PiliPiliBatched:
    """``num_envs`` batched Pili Pili envs with the AEC env's options (and ``trusted=True`` to skip the action
    check); the game spec's ``batched`` entry."""
    return PiliPiliBatched(num_envs, **options)
