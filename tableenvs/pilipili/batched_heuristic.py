"""Pili Pili's heuristic for a whole batch at once: the same choice as ``agents.HeuristicPolicy.act`` for every row,
in one compiled call (so opponent seats and rollouts need not leave the batched engine).

Where you are: beside the batched engine (``batched.py``). :class:`BatchedHeuristic` reads what the Python policy
reads, the observation (phase, own hand and whether it is seen, own bid and tricks won, the cards of the trick so
far, the round's hand size, the reversed-values flag) and the mask, and computes its values with the same
operations (float64; ``pow`` for the trick chances, the bid's ``|b - expected| + 0.001 b`` and its first minimum;
card strengths are small integers, compared exactly), so it picks the same action under every option the engine
takes (missions or none, expert, reward modes, 2-8 players).

Random draws. In the positions a game reaches, ``HeuristicPolicy`` draws from its ``rng`` in exactly two
situations, and only when more than one action is legal: naming a player under the designate mission (``DESIGNATE``)
and playing a hand position under the memorise mission (expert missions of the standard deck); there it returns
``rng.choice(legal)``, one ``Generator.integers(len(legal))`` draw. Everywhere else it draws nothing (also when a
single action is legal). :class:`BatchedHeuristic` reproduces those draws (the kernel draws wherever the Python
policy would, in any phase it has no rule for): it keeps numpy's generator compiled (:mod:`tableenvs.vector.draws`)
as one row per env, or one per env and seat, and draws the same number from it in the same situations, so a row
whose generator holds the state of the ``rng`` the Python policy is given picks the same action and leaves that
generator in the same state. By default env ``e``'s seats share ``numpy.random.default_rng(e)``
(:meth:`BatchedHeuristic.seed` to change it; :meth:`~BatchedHeuristic.use_generators` and
:meth:`~BatchedHeuristic.set_generators` copy the generators a Python game loop uses: one per game as
``tableenvs.policies.play_game``'s ``rng``, or one per seat as ``tableenvs eval``'s seats). The draws are the only
state kept between calls.
``tests/pilipili/test_batched_heuristic.py`` checks it on thousands of positions and on whole games.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tableenvs.pilipili.agents import HeuristicPolicy
from tableenvs.pilipili.encoder import (
    MISSION_FLAGS,
    NUM_ACTIONS,
    PICK,
    PLAY,
    PLAY_WILD,
    S_BID,
    S_TPLAYED,
    S_TVALUE,
    S_TVISIBLE,
    S_TWILD,
    S_WON,
    Encoder,
)
from tableenvs.pilipili.rules import MAX_WILD_VALUE, NUM_CARDS, NUM_PHASES, WILD, Phase
from tableenvs.vector.compile import kernels_once
from tableenvs.vector.draws import GENERATOR_WORDS, integers, load_state, seeded, state_of

_REVERSED = MISSION_FLAGS.index("reversed_values")
_BID, _PASS, _PLAY, _DECLARE = int(Phase.BID), int(Phase.PASS), int(Phase.PLAY), int(Phase.DECLARE)
_SWAP_NAME, _SWAP_GIVE = int(Phase.SWAP_NAME), int(Phase.SWAP_GIVE)
_TOP = MAX_WILD_VALUE  # the strongest wild value (0 the weakest), reversed under reversed values


def heuristic_kernel(obs, mask, n, where, generators, streams, out, legal):
    """``out[e]``: ``HeuristicPolicy.act(obs[e], mask[e], rng)`` for every row, ``rng`` being
    ``generators[streams[e]]`` (advanced as numpy advances it). ``where`` holds the observation offsets: phase, own
    hand, seats, seat block size, round, reversed flag. ``legal`` is scratch (``NUM_ACTIONS`` int64). Returns -1, or
    the first row without a legal action, every generator then as it was."""
    drawn = 0  # the generators drawn from so far, each as it was before (undone if a row has no legal action)
    undo = np.empty((obs.shape[0], GENERATOR_WORDS), np.uint64)
    undo_stream = np.empty(obs.shape[0], np.int64)
    o_phase, o_hand, o_seats, seat_size = where[0], where[1], where[2], where[3]
    o_round, o_reversed = where[4], where[5]
    exponent = np.float64(n - 1)
    for e in range(obs.shape[0]):
        row = obs[e]
        count = 0
        for a in range(mask.shape[1]):  # np.flatnonzero(mask[e]), without a branch per entry
            legal[count] = a
            count += mask[e, a] != 0
        if count == 1:
            out[e] = legal[0]
            continue
        if count == 0:
            for d in range(drawn - 1, -1, -1):
                generators[undo_stream[d]] = undo[d]
            return e
        phase = 0  # np.argmax: the first largest entry
        for p in range(1, NUM_PHASES):
            if row[o_phase + p] > row[o_phase + phase]:
                phase = p
        reversed_values = row[o_reversed] > 0
        sees_own = row[o_phase + NUM_PHASES] > 0
        bid = np.int64(row[o_seats + S_BID])
        won = np.int64(row[o_seats + S_WON])
        need = bid - won
        last_action = legal[count - 1]
        if phase == _BID or phase == _PASS or phase == _SWAP_GIVE:
            expected = 0.0  # sum(map(trick_chance, hand)), in card order
            for card in range(NUM_CARDS):
                if row[o_hand + card] != 0:
                    if card == WILD:
                        expected += 1.0
                    else:
                        v = _TOP - card if reversed_values else card
                        expected += ((v - 1) / 54) ** exponent
            if phase == _BID:
                if not sees_own:
                    expected = np.int64(row[o_round]) / n  # int(hand size) / n
                best_action = legal[0]
                best_score = np.inf
                for i in range(count):
                    b = np.float64(legal[i])
                    score = np.abs(b - expected) + 1e-3 * b
                    if score < best_score:
                        best_action, best_score = legal[i], score
                out[e] = best_action
                continue
            strongest_first = bid < expected if phase == _PASS else need <= 0
            best_card = -1
            best_power = 0
            for i in range(count):
                card = legal[i] - PICK
                if card == WILD:
                    power = 2 * _TOP + 2
                else:
                    power = 2 * (_TOP - card if reversed_values else card) + 1
                if best_card < 0 or (power > best_power if strongest_first else power < best_power):
                    best_card, best_power = card, power
            out[e] = PICK + best_card
            continue
        if phase == _SWAP_NAME:
            out[e] = last_action  # decline
            continue
        if phase == _DECLARE:
            out[e] = PLAY_WILD + (_TOP if (need > 0) != reversed_values else 0)
            continue
        if phase == _PLAY and last_action < PICK:
            best = -1.0  # the strongest visible card of the trick so far
            played = 0
            for r in range(n):
                b = o_seats + r * seat_size
                if row[b + S_TPLAYED] != 0:
                    played += 1
                    if row[b + S_TVISIBLE] != 0:
                        value = np.float64(row[b + S_TVALUE])
                        v = _TOP - value if reversed_values else value
                        s = 2 * v + (0.0 if row[b + S_TWILD] != 0 else 1.0)
                        if s > best:
                            best = s
            last = played == n - 1
            has_wild = last_action >= PLAY_WILD
            # the number cards: weakest, strongest, weakest winner, strongest loser (strengths are distinct)
            weakest = strongest = weakest_winner = strongest_loser = -1
            w_s = st_s = ww_s = sl_s = 0
            for i in range(count):
                a = legal[i]
                if a >= PLAY_WILD:
                    break
                c = a - PLAY + 1
                s = 2 * (_TOP - c if reversed_values else c) + 1
                if weakest < 0 or s < w_s:
                    weakest, w_s = c, s
                if strongest < 0 or s > st_s:
                    strongest, st_s = c, s
                if s > best:
                    if weakest_winner < 0 or s < ww_s:
                        weakest_winner, ww_s = c, s
                elif strongest_loser < 0 or s > sl_s:
                    strongest_loser, sl_s = c, s
            if need > 0:
                if last and weakest_winner >= 0:
                    out[e] = PLAY - 1 + weakest_winner
                elif weakest_winner >= 0 and (not has_wild or not last):
                    out[e] = PLAY - 1 + strongest
                elif has_wild:
                    out[e] = PLAY_WILD + (0 if reversed_values else _TOP)
                else:
                    out[e] = PLAY - 1 + weakest
            elif strongest_loser >= 0:
                out[e] = PLAY - 1 + strongest_loser
            elif has_wild:
                out[e] = PLAY_WILD + (_TOP if reversed_values else 0)
            else:
                out[e] = PLAY - 1 + weakest
            continue
        undo[drawn] = generators[streams[e]]
        undo_stream[drawn] = streams[e]
        drawn += 1
        out[e] = legal[integers(generators[streams[e]], count)]  # designation, memorised positions: rng.choice
    return -1


class BatchedHeuristic:
    """``HeuristicPolicy``'s choice for batches of Pili Pili observations and masks at ``num_players`` seats, with a
    generator per env (or per env and seat) for its few random choices (see the module docstring).

    ``to_act``, when given, is the engine's array of the seat to act in each env (``BatchedGame.to_act``), read at
    each :meth:`act`: it says whose generator a row draws from in an env whose seats each have their own.
    """

    def __init__(self, num_players: int, num_envs: int, to_act: np.ndarray | None = None):
        what = "the Pili Pili batched heuristic"
        (self._kernel,) = kernels_once((heuristic_kernel,), what, __file__, "about 6 CPU-seconds")
        self.python = HeuristicPolicy(_Players(num_players))
        self.num_players = n = self.python.n
        self.num_envs = int(num_envs)
        if self.num_envs < 1:
            raise ValueError(f"num_envs must be at least 1, got {num_envs}")
        encoder = Encoder(n)
        self.obs_size = encoder.size
        self._where = np.array(
            [encoder.o_phase, encoder.o_hand, encoder.o_seats, encoder.seat_size, encoder.o_round,
             encoder.o_mission + _REVERSED],
            np.int64,
        )  # fmt: skip
        self._to_act = to_act
        self._legal = np.zeros(NUM_ACTIONS, np.int64)
        self._generators = np.zeros((self.num_envs * n, GENERATOR_WORDS), np.uint64)  # row env * n + seat
        self._per_seat = np.zeros(self.num_envs, np.bool_)  # env e's seats each draw from their own row
        self.seed(0)

    def seed(self, seed: int | Sequence[int]) -> None:
        """Every seat of env ``e`` draws from ``numpy.random.default_rng(seed + e)`` (an int) or
        ``default_rng(seed[e])`` (a sequence of ``num_envs`` ints), one generator per env as the ``rng`` a Python
        game loop hands every seat."""
        if isinstance(seed, (int, np.integer)):
            seeds = [int(seed) + e for e in range(self.num_envs)]
        else:
            seeds = [int(s) for s in seed]
            if len(seeds) != self.num_envs:
                raise ValueError(f"seed: {len(seeds)} seeds for {self.num_envs} envs")
        self._generators[:: self.num_players] = seeded(seeds)
        self._per_seat[:] = False

    def use_generators(self, generators: Sequence[Any]) -> None:
        """:meth:`set_generators` for every env: ``generators[e]`` for env ``e`` (all checked before any is used)."""
        if len(generators) != self.num_envs:
            raise ValueError(f"use_generators: {len(generators)} entries for {self.num_envs} envs")
        rows = [self._rows_of(e, entry) for e, entry in enumerate(generators)]
        for e, entry in enumerate(rows):
            self._store(e, entry)

    def set_generators(self, env: int, generators: Any) -> None:
        """From now on env ``env`` draws from a copy of the state of ``generators``: a ``numpy.random.Generator``
        (every seat of the env draws from it, as the ``rng`` ``tableenvs.policies.play_game`` hands every seat) or a
        sequence of ``num_players`` of them, one per seat (as ``tableenvs eval`` gives each seat its own; ``to_act``
        must have been given). The Python generators are not advanced: read the batched ones with
        :meth:`generator`."""
        if not 0 <= env < self.num_envs:
            raise ValueError(f"env index {env} out of range 0..{self.num_envs - 1}")
        self._store(env, self._rows_of(env, generators))

    def _rows_of(self, env: int, entry: Any) -> np.ndarray:
        """The generator rows of ``entry`` (one, or one per seat), checked."""
        if isinstance(entry, np.random.Generator):
            rows = np.zeros((1, GENERATOR_WORDS), np.uint64)
            load_state(rows[0], entry)
            return rows
        n = self.num_players
        if self._to_act is None:
            raise ValueError("one generator per seat needs to_act (the engine's seat to act)")
        if not isinstance(entry, Sequence) or len(entry) != n:
            raise ValueError(f"env {env}: give a numpy Generator or a sequence of {n}, one per seat; got {entry!r}")
        rows = np.zeros((n, GENERATOR_WORDS), np.uint64)
        for s, generator in enumerate(entry):
            if not isinstance(generator, np.random.Generator):
                raise ValueError(f"env {env}: seat {s}'s generator is not a numpy Generator: {generator!r}")
            load_state(rows[s], generator)
        return rows

    def _store(self, env: int, rows: np.ndarray) -> None:
        n = self.num_players
        self._generators[env * n : env * n + len(rows)] = rows
        self._per_seat[env] = len(rows) > 1

    def seat_generators(self, env: int, generators: Any) -> None:
        """Env ``env``'s seats draw from now on as ``generators[s]`` would (one numpy ``Generator`` per seat, as
        ``tableenvs eval`` hands each seat its own): :meth:`set_generators` with a sequence, the hook the batched
        evaluation calls at each game's start."""
        self.set_generators(env, list(generators))

    def share_generator(self, envs: Sequence[int], generator: np.random.Generator) -> None:
        """Every env of ``envs`` draws from now on from its own copy of ``generator``'s state (one generator for all
        its seats); ``generator`` is not advanced. A search's hook (``tableenvs.policies.batched_search``): the copies
        of one sampled world, one per root action, draw the same rollout choices, as the Python search's copies each
        draw from ``numpy.random.default_rng(seed)``."""
        rows = np.asarray(envs, np.int64)
        if rows.ndim != 1 or (rows.size and (rows.min() < 0 or rows.max() >= self.num_envs)):
            raise ValueError(f"share_generator: env indices must be a sequence in 0..{self.num_envs - 1}")
        if not isinstance(generator, np.random.Generator):
            raise ValueError(f"share_generator: give a numpy Generator, got {generator!r}")
        state = np.zeros(GENERATOR_WORDS, np.uint64)
        load_state(state, generator)
        self._generators[rows * self.num_players] = state
        self._per_seat[rows] = False

    def seat_states(self, env: int, states: np.ndarray) -> None:
        """:meth:`seat_generators` given the seats' generator states (uint64 ``(num_players, GENERATOR_WORDS)``,
        rows as :func:`tableenvs.vector.draws.load_state` writes them): the batched evaluation's way, which reads
        each game's seat generators once for all its players."""
        if self._to_act is None:
            raise ValueError("one generator per seat needs to_act (the engine's seat to act)")
        if not 0 <= env < self.num_envs:
            raise ValueError(f"env index {env} out of range 0..{self.num_envs - 1}")
        if states.shape != (self.num_players, GENERATOR_WORDS) or states.dtype != np.uint64:
            raise ValueError(
                f"seat_states: uint64 ({self.num_players}, {GENERATOR_WORDS}) expected, got {states.shape}"
            )
        self._store(env, states)

    def generator(self, env: int, seat: int = 0) -> np.random.Generator:
        """A numpy generator in the state env ``env``'s generator (seat ``seat``'s, when each seat has one) is in
        now."""
        generator = np.random.default_rng(0)
        row = env * self.num_players + (seat if self._per_seat[env] else 0)
        generator.bit_generator.state = state_of(self._generators[row])
        return generator

    def act(self, obs: np.ndarray, mask: np.ndarray, envs: np.ndarray | None = None) -> np.ndarray:
        """The action each row's seat picks: int64 ``(rows,)``. ``envs`` (int64 ``(rows,)``) is each row's env
        index, whose generator it draws from (default: row ``i`` is env ``i``). Every row needs a legal action: a row
        without one is a ``ValueError`` naming it, every generator left as it was."""
        obs = np.ascontiguousarray(obs, np.float32)
        mask = np.ascontiguousarray(mask, np.int8)
        if obs.ndim != 2 or obs.shape[1] != self.obs_size or mask.shape != (obs.shape[0], NUM_ACTIONS):
            raise ValueError(
                f"obs must be (rows, {self.obs_size}) and mask (rows, {NUM_ACTIONS}); got {obs.shape} and {mask.shape}"
            )
        rows = obs.shape[0]
        envs = np.arange(rows, dtype=np.int64) if envs is None else np.asarray(envs, np.int64)
        if envs.shape != (rows,):
            raise ValueError(f"envs must be ({rows},), got {envs.shape}")
        if rows and (envs.min() < 0 or envs.max() >= self.num_envs):
            bad = int(envs[(envs < 0) | (envs >= self.num_envs)][0])
            raise ValueError(f"env index {bad} out of range 0..{self.num_envs - 1}")
        streams = envs * self.num_players
        if self._to_act is not None and self._per_seat.any():
            streams += np.where(self._per_seat[envs], np.asarray(self._to_act, np.int64)[envs], 0)
        out = np.empty(rows, np.int64)
        empty = self._kernel(obs, mask, self.num_players, self._where, self._generators, streams, out, self._legal)
        if empty >= 0:
            raise ValueError(f"row {empty} of the mask has no legal action")
        return out


class _Players:
    """The one attribute ``HeuristicPolicy(env)`` reads."""

    def __init__(self, num_players: int):
        if not isinstance(num_players, (int, np.integer)) or not 2 <= num_players <= 8:
            raise ValueError(f"num_players must be an int in 2..8, got {num_players!r}")
        self.num_players = int(num_players)


def batched_heuristic(games: Any) -> BatchedHeuristic:
    """The factory ``GameSpec.batched_heuristic`` names: the heuristic for ``games`` (a Pili Pili batched engine),
    one generator per env (env ``e``'s is ``numpy.random.default_rng(e)`` until :meth:`BatchedHeuristic.seed` or
    :meth:`BatchedHeuristic.use_generators` says otherwise)."""
    return BatchedHeuristic(games.num_players, games.num_envs, games.to_act)
