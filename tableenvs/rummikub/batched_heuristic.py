"""Rummikub's heuristic for a whole batch: the choice of ``HeuristicPolicy`` (``agents.py``) for every row, its solver
questions asked for all the rows that need one in one compiled call.

Where you are: ``tableenvs/rummikub``'s batched player (``tableenvs.vector.batched_heuristic(games)`` builds it
through the game's spec, ``GameSpec.batched_heuristic``). It keeps the :class:`tableenvs.vector.BatchedPolicy`
contract: ``act(obs, mask, envs)`` returns one action per row.

What it does, row by row as ``HeuristicPolicy.act`` does, in one compiled call (:func:`act_kernel`, numba) for the
whole batch. It reads the sections of the observation ``HeuristicPolicy.read`` reads (the rack with its staged tiles,
the staged tiles, the table as of the last commit, whether the seat has opened), then:

* The plan: each env keeps the plan of its last question and the position it was asked for (rack, table, opened),
  as ``HeuristicPolicy.plan`` keeps one. A row whose position is its env's and whose staged tiles the kept plan still
  holds (or, without a plan, with nothing staged) plays on that plan; every other row asks the solver anew, inside
  the same compiled loop: the solver's own compiled sweep (``_solver_kernel.sweep``, scored) and ``best_path``, with
  the bounds, weights and value cap that :func:`tableenvs.rummikub.solver.solve` gives them: the most tiles
  (``objective="tiles"``) once opened, the opening of the most points (``"value"``, ``opening=True``) before, holding
  the staged tiles (``forced``). So ties break as in ``solve``: the same kernel, the same sweep order. A sweep that
  fills its buffers grows them and resumes, as ``sweep.run`` does; the grown buffers are kept for the next call.
* One shortcut, exact: a row with nothing staged whose mask allows staging no tile has no play (every legal play
  holds some tile, which the mask would then allow), so it gets no plan without a solve, as ``solve`` would answer.
* The action (``agents.next_action``): the lowest tile type the plan holds more of than is staged and the mask
  allows; else commit once exactly the plan is staged; else draw, commit or the first legal action, as the Python
  policy falls back.

The solver's sweep bounds the speed: one question costs what it costs ``solve`` (tens of microseconds, a few hundred
on tables of 50+ tiles with jokers); what the batch saves is the Python around it (figures in docs/vector.md, from
``benchmarks/bench_vector.py --rummikub-heuristic``). The compiled call holds the solver's kernels compiled into it,
and numba's disk cache watches this file only: after editing ``_solver_kernel.py``, touch this file too.

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


# act_kernel's status codes (the row is returned with them)
OK, NO_LEGAL_ACTION, NOT_WHOLE, NO_POSITION, TWO_ROWS = 0, 1, 2, 3, 4


@register_jitable
def _solve_row(rack, table, forced, opened, min_initial, weights, look_ahead, plan, lo, hi, base, layer_start,
               edge_mark, edges32, edges8, forward, keys, score, parent, choice, slot_of, slots):  # fmt: skip
    """``solve(table, rack, objective="tiles" if opened else "value", opening=not opened, min_initial=min_initial,
    forced=forced)``'s played tiles into ``plan``. Returns ``(whether there is a play, keys, score, parent, choice,
    slot_of, slots)``: the entry buffers and the hash table (every slot -1), grown as ``sweep.run`` grows them when
    the sweep fills them (it then resumes at the layer it was building)."""
    if opened:
        weight = weights[0]
        value_cap = 0
        for t in range(TILE_TYPES):
            base[t] = table[t]
            lo[t] = table[t] + forced[t]
            hi[t] = table[t] + rack[t]
    else:  # more points than the rack can make are as unreachable as its bound + 1 (sweep.points_bound)
        weight = weights[1]
        bound = 13 * rack[JOKER]
        for t in range(JOKER):
            bound += rack[t] * _NUMBER_OF[t]
        value_cap = min(min_initial, bound + 1)
        for t in range(TILE_TYPES):
            base[t] = 0
            lo[t] = forced[t]
            hi[t] = rack[t]
    layer_start[:] = 0
    edge_mark[:] = 0
    layer = 0
    while True:
        status, layer, n_entries, _ = _SWEEP(
            lo, hi, base, weight, value_cap, False, look_ahead, keys, score, parent, choice, slot_of, layer_start,
            edges32, edges32, edges8, edges8, edges8, edge_mark, slots, forward, layer,
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
            raise RuntimeError("the scored sweep ran out of edges")
    final, choices = _BEST(keys, score, parent, choice, layer_start, lo[JOKER], value_cap)
    any_played = False
    if final >= 0:  # sweep.played_from_choices
        for number0 in range(NUMBERS):
            for colour in range(4):
                t = colour * NUMBERS + number0
                plan[t] = (choices[number0 * 5 + colour] >> 4) - base[t]
        plan[JOKER] = ((keys[final] >> 24) & 3) - base[JOKER]
        for t in range(TILE_TYPES):
            if plan[t] != 0:
                any_played = True
    return any_played, keys, score, parent, choice, slot_of, slots


def act_kernel(
    obs, mask, envs, min_initial, weights, look_ahead, full_set, kept_rack, kept_table, kept_opened, asked, plans,
    has_plan, seen, out, keys, score, parent, choice, slot_of, slots,
):  # fmt: skip
    """``out[i]``: ``HeuristicPolicy.act(obs[i], mask[i])`` with env ``envs[i]``'s kept plan (``kept_rack``,
    ``kept_table``, ``kept_opened``: the position it was asked for; ``asked``: there is one; ``plans``, ``has_plan``:
    the plan or no play), replaced when the row asks anew. ``seen`` (bool, one per env, all False) is scratch.

    Every row is checked before any is played: returns ``(status, row, solves, keys, score, parent, choice, slot_of,
    slots)``, ``status`` one of the codes above (``row``: the first bad row; nothing changed unless ``OK``), ``solves``
    the rows solved, then ``_solve_row``'s buffers, grown or not, for the next call."""
    rows = obs.shape[0]
    actions = mask.shape[1]
    for i in range(rows):  # checks: nothing is changed unless every row passes
        legal = False
        for a in range(actions):
            if mask[i, a] != 0:
                legal = True
                break
        if not legal:
            return NO_LEGAL_ACTION, i, 0, keys, score, parent, choice, slot_of, slots
        for j in range(_RACK, _TABLE + TILE_TYPES):
            if obs[i, j] != np.floor(obs[i, j]):
                return NOT_WHOLE, i, 0, keys, score, parent, choice, slot_of, slots
        for t in range(TILE_TYPES):
            r, s, b = obs[i, _RACK + t], obs[i, _STAGED + t], obs[i, _TABLE + t]
            if r < 0 or s < 0 or b < 0 or r + b > full_set[t] or s > r:
                return NO_POSITION, i, 0, keys, score, parent, choice, slot_of, slots
    two = -1
    for i in range(rows):
        if seen[envs[i]] and two < 0:
            two = i
        seen[envs[i]] = True
    for i in range(rows):
        seen[envs[i]] = False
    if two >= 0:
        return TWO_ROWS, two, 0, keys, score, parent, choice, slot_of, slots
    rack = np.empty(TILE_TYPES, np.int64)
    staged = np.empty(TILE_TYPES, np.int64)
    table = np.empty(TILE_TYPES, np.int64)
    lo = np.empty(TILE_TYPES, np.int64)
    hi = np.empty(TILE_TYPES, np.int64)
    base = np.empty(TILE_TYPES, np.int64)
    layer_start = np.zeros(67, np.int64)
    edge_mark = np.zeros(66, np.int64)
    edges32 = np.empty(1, np.int32)  # a scored sweep keeps no edges
    edges8 = np.empty(1, np.int8)
    forward = np.empty(1, np.int64)
    solves = 0
    for i in range(rows):
        e = envs[i]
        anything_staged = False
        stageable = False
        for t in range(TILE_TYPES):
            rack[t] = np.int64(obs[i, _RACK + t])
            staged[t] = np.int64(obs[i, _STAGED + t])
            table[t] = np.int64(obs[i, _TABLE + t])
            anything_staged |= staged[t] > 0
            stageable |= mask[i, t] != 0
        opened = obs[i, _OPENED] != 0
        # HeuristicPolicy.plan: the kept plan, or a new question
        kept = asked[e] and kept_opened[e] == opened
        t = 0
        while kept and t < TILE_TYPES:
            kept = kept_rack[e, t] == rack[t] and kept_table[e, t] == table[t]
            t += 1
        if kept:
            if has_plan[e]:
                for t in range(TILE_TYPES):
                    if plans[e, t] < staged[t]:
                        kept = False
                        break
            else:
                kept = not anything_staged
        if not kept:
            for t in range(TILE_TYPES):
                kept_rack[e, t] = rack[t]
                kept_table[e, t] = table[t]
            kept_opened[e] = opened
            asked[e] = True
            if anything_staged or stageable:
                solves += 1
                found, keys, score, parent, choice, slot_of, slots = _solve_row(
                    rack, table, staged, opened, min_initial, weights, look_ahead, plans[e], lo, hi, base,
                    layer_start, edge_mark, edges32, edges8, forward, keys, score, parent, choice, slot_of, slots,
                )  # fmt: skip
                has_plan[e] = found
            else:  # nothing staged, nothing stageable: no play (module docstring)
                has_plan[e] = False
        # HeuristicPolicy._choose and agents.next_action
        action = -1
        if has_plan[e]:
            exact = True
            for t in range(TILE_TYPES):
                if plans[e, t] > staged[t] and mask[i, t] != 0:
                    action = t
                    break
                exact = exact and plans[e, t] == staged[t]
            if action < 0 and mask[i, COMMIT] != 0 and exact:
                action = COMMIT
        if action < 0:
            if mask[i, DRAW] != 0:
                action = DRAW
            elif mask[i, COMMIT] != 0:
                action = COMMIT
            else:
                action = 0
                while mask[i, action] == 0:
                    action += 1
        out[i] = action
    return OK, -1, solves, keys, score, parent, choice, slot_of, slots


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
    """``act_kernel`` compiled (once per process; on disk across processes)."""
    return kernels_once((act_kernel,), "the Rummikub batched heuristic", __file__, "about 20 CPU-seconds")[0]


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
        self._seen = np.zeros(e, np.bool_)  # the kernel's scratch
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
        obs = np.ascontiguousarray(obs, np.float32)
        mask = np.ascontiguousarray(mask, np.int8)
        if obs.ndim != 2 or obs.shape[1] != OBSERVATION_SIZE or mask.shape != (obs.shape[0], NUM_ACTIONS):
            raise ValueError(
                f"obs must be (rows, {OBSERVATION_SIZE}) and mask (rows, {NUM_ACTIONS}); got {obs.shape} and "
                f"{mask.shape}"
            )
        rows = obs.shape[0]
        envs = np.arange(rows, dtype=np.int64) if envs is None else np.ascontiguousarray(envs, np.int64)
        if envs.shape != (rows,):
            raise ValueError(f"envs must be ({rows},), got {envs.shape}")
        if rows and (envs.min() < 0 or envs.max() >= self.num_envs):
            bad = int(envs[(envs < 0) | (envs >= self.num_envs)][0])
            raise ValueError(f"env index {bad} out of range 0..{self.num_envs - 1}")
        out = np.empty(rows, np.int64)
        status, row, solves, *buffers = self._kernel(
            obs, mask, envs, self.min_initial, WEIGHTS, sweep._LOOK_AHEAD, FULL_SET, self._rack, self._table,
            self._opened, self._asked, self._plan, self._has_plan, self._seen, out, *self._buffers,
        )  # fmt: skip
        self._buffers = tuple(buffers)
        if status != OK:
            raise ValueError(_REFUSALS[status].format(row=row, env=int(envs[row])))
        self.solves += solves
        return out


#: act_kernel's refusals, by status
_REFUSALS = {
    NO_LEGAL_ACTION: "row {row} of the mask has no legal action",
    NOT_WHOLE: "row {row}: the rack, staged and table counts of its observation are not whole numbers",
    NO_POSITION: (
        "row {row}: its observation's counts are no Rummikub position (negative, more than the tile set across rack "
        "and table, or staged tiles not on the rack)"
    ),
    TWO_ROWS: "env {env} has two rows in one call (one decision per env)",
}


def batched_heuristic(games: Any) -> BatchedHeuristic:
    """The factory ``GameSpec.batched_heuristic`` names: the heuristic for the envs of ``games`` (a Rummikub batched
    engine), with its ``min_initial``."""
    return BatchedHeuristic(games.num_envs, games._env_options["min_initial"])
