"""Rummikub's heuristic for a whole batch: the choice of ``HeuristicPolicy`` (``agents.py``) for every row, its solver
questions asked for all the rows that need one in one compiled call.

Where you are: ``tableenvs/rummikub``'s batched player (``tableenvs.vector.batched_heuristic(games)`` builds it
through the game's spec, ``GameSpec.batched_heuristic``). It keeps the :class:`tableenvs.vector.BatchedPolicy`
contract: ``act(obs, mask, envs)`` returns one action per row.

What it does, row by row as ``HeuristicPolicy.act`` does (``HeuristicPolicy.read`` decodes the same sections of the
observation: the rack with its staged tiles, the staged tiles, the table as of the last commit, whether the seat has
opened):

* The plan: each env keeps the plan of its last question and the position it was asked for (rack, table, opened),
  as ``HeuristicPolicy.plan`` keeps one. A row whose position is its env's and whose staged tiles the kept plan still
  holds (or, without a plan, with nothing staged) plays on that plan; every other row asks the solver anew. All the
  rows that ask are solved in one call of :func:`plan_kernel`, a numba loop over them calling the solver's own
  compiled sweep (``_solver_kernel.sweep``, scored) and ``best_path`` with the bounds, weights and value cap that
  :func:`tableenvs.rummikub.solver.solve` gives them: the most tiles (``objective="tiles"``) once opened, the
  opening of the most points (``"value"``, ``opening=True``) before, holding the staged tiles (``forced``). So ties
  break as in ``solve``: the same kernel, the same sweep order. The kernel grows its buffers and resumes a sweep that
  fills them, as ``sweep.run`` does, and keeps the grown buffers for the next call.
* One shortcut, exact: a row with nothing staged whose mask allows staging no tile has no play (every legal play
  holds some tile, which the mask would then allow), so it gets no plan without a solve, as ``solve`` would answer.
* The action, for all rows at once (``agents.next_action``): the lowest tile type the plan holds more of than is
  staged and the mask allows; else commit once exactly the plan is staged; else draw, commit or the first legal
  action, as the Python policy falls back.

State between calls: the plans kept per env (the Python policy's cache, per env). They only spare solves within a
turn and pick the plan a turn started with; :meth:`BatchedHeuristic.forget` drops them (say, after the rows of an
env stop being the same game). Two rows of one env in one call are refused.

Inputs are the engine's rows: the rack, staged and table counts are checked (whole numbers, within the tile set,
staged within the rack; a one-line ``ValueError`` naming the row, nothing changed), the table's arrangement is not
(the engine's tables always have one).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba.extending import register_jitable

from tableenvs.rummikub import _solver_kernel as kernel
from tableenvs.rummikub import sweep
from tableenvs.rummikub.encoder import COMMIT, DRAW, LAYOUT, NUM_ACTIONS, OBSERVATION_SIZE
from tableenvs.rummikub.solver import _TILES_FIRST, _VALUE_FIRST
from tableenvs.rummikub.tiles import FULL_SET, JOKER, NUMBERS, TILE_TYPES
from tableenvs.vector.compile import kernels_once

_SWEEP, _WALK, _PRUNE, _BEST, _EXACT_CHOICES, _REACH, _MELDS, _SCORE, _WITNESS = kernel.kernels()

#: ``solve``'s weights per objective: row 0 ``"tiles"`` (once opened), row 1 ``"value"`` (the opening)
WEIGHTS = np.stack([_TILES_FIRST, _VALUE_FIRST]).astype(np.int64)
_NUMBER_OF = np.array([t % NUMBERS + 1 for t in range(JOKER)] + [0], dtype=np.int64)  # sweep.points_bound's
_RACK, _STAGED, _TABLE, _OPENED = LAYOUT.RACK, LAYOUT.STAGED, LAYOUT.TABLE, LAYOUT.OPENED
# sweep.run's starting buffers of a scored sweep: entries, hash slots (edges are not kept by a scored sweep)
_ENTRIES, _HASH_SLOTS = sweep._START_SIZES[False][0], 1 << sweep._START_SIZES[False][2]


def plan_kernel(
    racks, tables, forced, opened, min_initial, weights, look_ahead, plans, found, keys, score, parent, choice,
    slot_of, slots,
):  # fmt: skip
    """For every row ``i``: ``solve(tables[i], racks[i], objective="tiles" if opened[i] else "value",
    opening=not opened[i], min_initial=min_initial, forced=forced[i])``'s played tiles into ``plans[i]``, and
    ``found[i]`` whether there is a play. The entry buffers (``keys``, ``score``, ``parent``, ``choice``,
    ``slot_of``) and the hash table ``slots`` (every slot -1) are grown as ``sweep.run`` grows them when a sweep
    fills them; returns them, grown or not, for the next call."""
    base = np.zeros(TILE_TYPES, np.int64)
    lo = np.empty(TILE_TYPES, np.int64)
    hi = np.empty(TILE_TYPES, np.int64)
    no_weight = np.zeros(TILE_TYPES, np.int64)
    layer_start = np.zeros(67, np.int64)
    edge_mark = np.zeros(66, np.int64)
    edges32 = np.empty(1, np.int32)  # a scored sweep keeps no edges
    edges8 = np.empty(1, np.int8)
    forward = np.empty(1, np.int64)
    for i in range(racks.shape[0]):
        rack = racks[i]
        if opened[i]:
            weight = weights[0]
            value_cap = 0
            for t in range(TILE_TYPES):
                base[t] = tables[i, t]
                lo[t] = tables[i, t] + forced[i, t]
                hi[t] = tables[i, t] + rack[t]
        else:  # more points than the rack can make are as unreachable as its bound + 1
            weight = weights[1]
            bound = 13 * rack[JOKER]
            for t in range(JOKER):
                bound += rack[t] * _NUMBER_OF[t]
            value_cap = min(min_initial, bound + 1)
            for t in range(TILE_TYPES):
                base[t] = no_weight[t]
                lo[t] = forced[i, t]
                hi[t] = rack[t]
        layer_start[:] = 0
        edge_mark[:] = 0
        layer = 0
        while True:  # sweep.run: grow the full buffer and resume at the layer being built
            status, layer, n_entries, _ = _SWEEP(
                lo, hi, base, weight, value_cap, False, look_ahead, keys, score, parent, choice, slot_of,
                layer_start, edges32, edges32, edges8, edges8, edges8, edge_mark, slots, forward, layer,
            )  # fmt: skip
            if status == kernel.OK:
                break
            for k in range(layer_start[layer + 1], n_entries):
                slots[slot_of[k]] = -1
            if status == kernel.OUT_OF_ENTRIES:
                size = 4 * keys.shape[0]
                keys = _grown64(keys, size)
                score = _grown64(score, size)
                parent = _grown32(parent, size)
                choice = _grown32(choice, size)
                slot_of = _grown32(slot_of, size)
            elif status == kernel.OUT_OF_HASH:
                slots = np.full(4 * slots.shape[0], -1, np.int32)
            else:  # a scored sweep makes no edges
                raise RuntimeError("plan_kernel: the scored sweep ran out of edges")
        final, choices = _BEST(keys, score, parent, choice, layer_start, lo[JOKER], value_cap)
        any_played = False
        if final >= 0:
            for number0 in range(NUMBERS):
                for colour in range(4):
                    t = colour * NUMBERS + number0
                    plans[i, t] = (choices[number0 * 5 + colour] >> 4) - base[t]
            plans[i, JOKER] = ((keys[final] >> 24) & 3) - base[JOKER]
            for t in range(TILE_TYPES):
                if plans[i, t] != 0:
                    any_played = True
        found[i] = any_played
    return keys, score, parent, choice, slot_of, slots


@register_jitable
def _grown64(array, size):
    bigger = np.empty(size, np.int64)
    bigger[: array.shape[0]] = array
    return bigger


@register_jitable
def _grown32(array, size):
    bigger = np.empty(size, np.int32)
    bigger[: array.shape[0]] = array
    return bigger


def _compiled() -> Any:
    """``plan_kernel`` compiled (once per process; on disk across processes)."""
    return kernels_once((plan_kernel,), "the Rummikub batched heuristic", __file__, "about 30 CPU-seconds")[0]


class BatchedHeuristic:
    """``HeuristicPolicy``'s choice for batches of Rummikub observations and masks (module docstring), for
    ``num_envs`` envs of a game with the given ``min_initial`` (the opening meld's points)."""

    def __init__(self, num_envs: int, min_initial: int = 30):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
        if isinstance(min_initial, bool) or not isinstance(min_initial, (int, np.integer)) or min_initial < 0:
            raise ValueError(f"min_initial must be an int >= 0, got {min_initial!r}")
        self._kernel = _compiled()
        self.num_envs = int(num_envs)
        self.min_initial = int(min_initial)
        e = self.num_envs
        self._rack = np.zeros((e, TILE_TYPES), np.int64)  # the position each env's plan was asked for
        self._table = np.zeros((e, TILE_TYPES), np.int64)
        self._opened = np.zeros(e, np.bool_)
        self._asked = np.zeros(e, np.bool_)  # the env has a kept answer (plan or no play)
        self._plan = np.zeros((e, TILE_TYPES), np.int64)
        self._has_plan = np.zeros(e, np.bool_)
        self._buffers = (
            np.empty(_ENTRIES, np.int64),  # keys
            np.empty(_ENTRIES, np.int64),  # score
            np.empty(_ENTRIES, np.int32),  # parent
            np.empty(_ENTRIES, np.int32),  # choice
            np.empty(_ENTRIES, np.int32),  # slot_of
            np.full(_HASH_SLOTS, -1, np.int32),  # slots
        )
        self.solves = 0  # rows solved so far (for the benchmarks)

    def forget(self, envs: Any = None) -> None:
        """Drop the plans kept for ``envs`` (default: every env): their next rows ask the solver anew."""
        if envs is None:
            self._asked[:] = False
        else:
            self._asked[np.asarray(envs, np.int64)] = False

    def act(self, obs: np.ndarray, mask: np.ndarray, envs: np.ndarray | None = None) -> np.ndarray:
        """The action each row's seat picks: int64 ``(rows,)``. ``envs`` (int64 ``(rows,)``, distinct) is each row's
        env index, whose kept plan it reads and replaces (default: row ``i`` is env ``i``)."""
        obs = np.asarray(obs)
        mask = np.asarray(mask)
        if obs.ndim != 2 or obs.shape[1] != OBSERVATION_SIZE or mask.shape != (obs.shape[0], NUM_ACTIONS):
            raise ValueError(
                f"obs must be (rows, {OBSERVATION_SIZE}) and mask (rows, {NUM_ACTIONS}); got {obs.shape} and "
                f"{mask.shape}"
            )
        rows = obs.shape[0]
        envs = np.arange(rows, dtype=np.int64) if envs is None else np.asarray(envs, np.int64)
        if envs.shape != (rows,):
            raise ValueError(f"envs must be ({rows},), got {envs.shape}")
        if rows == 0:
            return np.zeros(0, np.int64)
        if envs.min() < 0 or envs.max() >= self.num_envs:
            bad = int(envs[(envs < 0) | (envs >= self.num_envs)][0])
            raise ValueError(f"env index {bad} out of range 0..{self.num_envs - 1}")
        if len(np.unique(envs)) != rows:
            values, counts = np.unique(envs, return_counts=True)
            raise ValueError(f"env {int(values[counts > 1][0])} has two rows in one call (one decision per env)")
        legal = mask != 0
        if not legal.any(axis=1).all():
            raise ValueError(f"row {int(np.flatnonzero(~legal.any(axis=1))[0])} of the mask has no legal action")
        rack, staged, table, opened = _read(obs)
        anything_staged = np.asarray(staged.any(axis=1))

        # HeuristicPolicy.plan: the kept plan, or a new question
        same = (
            self._asked[envs]
            & (self._opened[envs] == opened)
            & (self._rack[envs] == rack).all(axis=1)
            & (self._table[envs] == table).all(axis=1)
        )
        has_plan = self._has_plan[envs]
        holds = (self._plan[envs] >= staged).all(axis=1)
        kept = same & np.where(has_plan, holds, ~anything_staged)
        new = np.flatnonzero(~kept)
        if new.size:
            ask = new[anything_staged[new] | legal[new, :TILE_TYPES].any(axis=1)]  # else no play (module docstring)
            plans = np.zeros((new.size, TILE_TYPES), np.int64)
            found = np.zeros(new.size, np.bool_)
            if ask.size:
                asked_plans = np.zeros((ask.size, TILE_TYPES), np.int64)
                asked_found = np.zeros(ask.size, np.bool_)
                self._buffers = self._kernel(
                    rack[ask], table[ask], staged[ask], opened[ask], self.min_initial, WEIGHTS, sweep._LOOK_AHEAD,
                    asked_plans, asked_found, *self._buffers,
                )  # fmt: skip
                self.solves += int(ask.size)
                where = np.searchsorted(new, ask)
                plans[where] = asked_plans
                found[where] = asked_found
            at = envs[new]
            self._rack[at] = rack[new]
            self._table[at] = table[new]
            self._opened[at] = opened[new]
            self._asked[at] = True
            self._plan[at] = plans
            self._has_plan[at] = found

        # _choose and next_action, for every row
        plan = self._plan[envs]
        has_plan = self._has_plan[envs]
        missing = (plan > staged) & legal[:, :TILE_TYPES]
        stage = has_plan & missing.any(axis=1)
        commit_plan = has_plan & legal[:, COMMIT] & (plan == staged).all(axis=1)
        fallback = np.where(legal[:, DRAW], DRAW, np.where(legal[:, COMMIT], COMMIT, legal.argmax(axis=1)))
        return np.where(stage, missing.argmax(axis=1), np.where(commit_plan, COMMIT, fallback)).astype(np.int64)


def _read(obs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``HeuristicPolicy.read`` for every row, checked: rack, staged, table (int64 ``(rows, 53)``), opened."""
    counts = obs[:, _RACK : _TABLE + TILE_TYPES]
    whole = counts.astype(np.int64)
    if not np.array_equal(whole, counts):
        row = int(np.flatnonzero((whole != counts).any(axis=1))[0])
        raise ValueError(f"row {row}: the rack, staged and table counts of its observation are not whole numbers")
    rack = whole[:, _RACK - _RACK : _RACK - _RACK + TILE_TYPES]
    staged = whole[:, _STAGED - _RACK : _STAGED - _RACK + TILE_TYPES]
    table = whole[:, _TABLE - _RACK : _TABLE - _RACK + TILE_TYPES]
    bad = (whole < 0).any(axis=1) | (rack + table > FULL_SET).any(axis=1) | (staged > rack).any(axis=1)
    if bad.any():
        raise ValueError(
            f"row {int(np.flatnonzero(bad)[0])}: its observation's counts are no Rummikub position (negative, more "
            "than the tile set across rack and table, or staged tiles not on the rack)"
        )
    return rack, staged, table, obs[:, _OPENED] != 0


def batched_heuristic(games: Any) -> BatchedHeuristic:
    """The factory ``GameSpec.batched_heuristic`` names: the heuristic for the envs of ``games`` (a Rummikub batched
    engine), with its ``min_initial``."""
    return BatchedHeuristic(games.num_envs, games._env_options["min_initial"])
