"""The batched Rummikub engine's action masks: the solver's answers per env, as ``Rummikub.legal`` gives them.

Where you are: between the batched engine (``batched.py``) and the solver. Most questions are asked in compiled code
(``batched_solver.py``: one recorded sweep per turn in each env's slots, then ``reach`` or ``walk`` after each
staged tile, from what the last question left); a turn whose sweep does not fit the slots (a big table, mostly with
jokers) is asked of the env's own :class:`tableenvs.rummikub.turn_sweep.TurnSweep`, the AEC env's per-turn cache,
which grows its buffers and searches big tables. Either way the masks are incremental across a turn (the turn's
first question sweeps, the later ones read that sweep) and equal to the AEC env's: the same exact solver.

Memory: a ``TurnSweep`` keeps the buffers of its biggest sweep (MBs once a table with jokers was swept), which over
thousands of envs would grow without bound. Each env's ``TurnSweep`` starts with small buffers
(:func:`small_buffers`) and at the end of a turn whose sweep outgrew them it is replaced by a fresh one (keeping what
it learnt of the table's size, which decides when a turn is searched instead of swept): resident memory stays flat.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tableenvs.rummikub import batched_kernels as k
from tableenvs.rummikub import batched_solver as bs
from tableenvs.rummikub.tiles import JOKER, TILE_TYPES
from tableenvs.rummikub.turn_sweep import TurnSweep
from tableenvs.vector.compile import kernels_once

_COMMIT, _DRAW = TILE_TYPES, TILE_TYPES + 1
# the small buffers each env's sweep starts with: states, transitions, hash slots (a power of two)
SMALL_STATES, SMALL_EDGES, SMALL_SLOTS = 1 << 11, 1 << 13, 1 << 11
# buffers grown past this many times the small ones are dropped at the end of the turn
KEPT_GROWTH = 1
# ``melds.opening_bound`` for every row at once: per type its most opening points * 128 + 1 (bits 0..6 count tiles)
_BOUND_AND_COUNT = np.array([(t % 13 + 1) * 128 + 1 for t in range(JOKER)] + [13 * 128 + 1], dtype=np.int64)


def opening_bounds(counts: np.ndarray) -> np.ndarray:
    """``melds.opening_bound`` of every row of ``counts`` (int64 ``(k, 53)``)."""
    packed = counts @ _BOUND_AND_COUNT
    return np.where(packed & 127 >= 3, packed >> 7, 0)


def small_buffers() -> dict[str, Any]:
    """A ``TurnSweep``'s spare buffers (``sweep.run``'s ``spare``) at the small starting sizes."""
    return {
        "keys": np.empty(SMALL_STATES, np.int64),
        "slot_of": np.empty(SMALL_STATES, np.int32),
        "slots": np.full(SMALL_SLOTS, -1, np.int32),
        "edges": (
            np.empty(SMALL_EDGES, np.int32),
            np.empty(SMALL_EDGES, np.int32),
            np.empty(SMALL_EDGES, np.int8),
            np.empty(SMALL_EDGES, np.int8),
            np.empty(SMALL_EDGES, np.int8),
        ),
        "forward": np.empty(SMALL_STATES, np.int64),
    }


def fresh_sweep(last_sweep: tuple[int, int] = (0, 0)) -> TurnSweep:
    """A ``TurnSweep`` with small buffers, knowing ``last_sweep`` (table tiles, most states) of the one it replaces."""
    sweep = TurnSweep()
    sweep._spare = small_buffers()
    sweep._last_sweep = last_sweep
    return sweep


def outgrown(sweep: TurnSweep) -> bool:
    """Whether ``sweep`` holds buffers grown more than ``KEPT_GROWTH`` times the small ones (a big sweep), or a
    search's dead states."""
    spare = sweep._spare
    return (
        len(spare["keys"]) > KEPT_GROWTH * SMALL_STATES
        or len(spare["edges"][0]) > KEPT_GROWTH * SMALL_EDGES
        or len(spare["slots"]) > KEPT_GROWTH * SMALL_SLOTS
        or len(sweep._words[1]) > 2 * KEPT_GROWTH * SMALL_STATES
        or sweep._dead is not None
    )


def solver_kernel() -> Any:
    """``batched_solver.mask_kernel`` compiled (once per process; on disk across processes)."""
    return kernels_once((bs.mask_kernel,), "the Rummikub batched engine's masks", bs.__file__, "about 15 s")[0]


class MaskSolver:
    """Fills the engine's ``mask`` rows and each env's verdict on its staged tiles (``g[e, STAGED_IS_PLAY]``):
    compiled for the turns whose sweep fits an env's slots (``batched_solver``), each env's ``TurnSweep`` for the
    others."""

    def __init__(self, engine: Any):  # a RummikubBatched (batched.py imports this module); not kept: no cycle
        e = engine.num_envs
        self.sweeps = [fresh_sweep() for _ in range(e)]
        self.need = max(engine._env_options["min_initial"], 1)
        self.strict = engine._env_options["strict_commit"]
        self.min_initial = engine._env_options["min_initial"]
        self._envs = np.arange(e)
        self._kernel = solver_kernel()
        m = np.zeros((e, bs.M_WIDTH), np.int64)
        m[:, bs.BIG_TABLE] = bs.NO_BIG_TABLE
        states, edges = bs.STATES, bs.EDGES
        self._slots = (
            m,
            np.zeros((e, TILE_TYPES), np.int64),  # rec_lo
            np.zeros((e, TILE_TYPES), np.int64),  # rec_staged
            np.zeros((e, TILE_TYPES), np.int64),  # last_delta
            np.zeros((e, 2), np.int64),  # bounds
            np.zeros((e, states), np.int64),  # keys
            np.zeros((e, states), np.int32),  # slot_of
            np.full((e, bs.SLOTS), -1, np.int32),  # slots
            np.zeros((e, 67), np.int64),  # layer_start
            np.zeros((e, edges), np.int32),  # edge_parent
            np.zeros((e, edges), np.int32),  # edge_child
            np.zeros((e, edges), np.int8),  # edge_tile
            np.zeros((e, edges), np.int8),  # edge_extra
            np.zeros((e, edges), np.int8),  # edge_points
            np.zeros((e, 66), np.int64),  # edge_mark
            np.zeros((e, states), np.int64),  # forward
            np.zeros((e, states), np.int64),  # backward
            np.zeros((e, states), np.int16),  # best_from_root
            np.zeros((e, states), np.int16),  # best_to_end
            np.zeros((e, states), np.int16),  # exact_to_end
        )
        self._stage = np.zeros((e, TILE_TYPES), np.bool_)
        self._verdict = np.zeros(e, np.int64)
        self._python = np.zeros(e, np.bool_)
        self._asked = np.zeros(e, np.bool_)  # the envs whose Python sweep answered a question since their last renewal
        self._new_turns = np.zeros(e, np.bool_)  # ``continuing`` of envs loaded with another game: none is
        self.python_questions = 0  # questions answered by the Python TurnSweeps (for the benchmarks)
        self.questions = 0

    def renew(self, envs: np.ndarray) -> None:
        """At the end of a turn in ``envs``: replace the Python sweeps that outgrew their small buffers (only a sweep
        asked a question since its env's last renewal can have grown)."""
        sweeps = self.sweeps
        envs = envs[self._asked[envs]]
        self._asked[envs] = False
        for e in envs.tolist():
            if outgrown(sweeps[e]):
                sweeps[e] = fresh_sweep(sweeps[e]._last_sweep)

    def fill_all(self, engine: Any, continuing: np.ndarray) -> None:
        """``Rummikub.legal`` of every env's seat to act into ``engine.mask`` (``Encoder.fill_mask``);
        ``continuing[e]``: env ``e``'s last action staged a tile (the turn's next question)."""
        self._fill(engine, self._envs, slice(None), continuing)

    def fill_rows(self, engine: Any, rows: np.ndarray, continuing: np.ndarray) -> None:
        """:meth:`fill_all` for the envs ``rows`` only (``step_rows``: the others' masks stay as they were)."""
        self._fill(engine, rows, rows, continuing)

    def load_rows(self, engine: Any, rows: np.ndarray) -> None:
        """``engine`` got one game in every env of ``rows`` (``batched_load.py``, possibly in the middle of a turn):
        forget what those envs' sweeps knew of their last game (their slots' mode and table sizes; a Python
        ``TurnSweep`` that was asked anything is replaced by a new one, as a cloned AEC env's starts empty), then
        answer their question afresh, a new sweep from the tiles staged so far, and fill their ``mask`` rows. The
        first env sweeps; when its sweep fits the compiled slots the others get a copy of its slots (the same
        question's answer, at about a fiftieth of a sweep's cost), else each asks its own Python ``TurnSweep``."""
        m = self._slots[0]
        m[rows, bs.MODE] = bs.NONE
        m[rows, bs.BIG_TABLE] = bs.NO_BIG_TABLE
        m[rows, bs.LAST_TILES] = 0
        sweeps = self.sweeps
        for e in rows.tolist():
            sweep = sweeps[e]
            if sweep._position is not None or sweep._last_sweep != (0, 0):
                sweeps[e] = fresh_sweep()
        self._asked[rows] = False
        first, rest = rows[:1], rows[1:]
        self._fill(engine, first, first, self._new_turns)
        if not len(rest):
            return
        e = int(first[0])
        if self._python[e]:
            self._fill(engine, rest, rest, self._new_turns)
            return
        for slot in self._slots:
            slot[rest] = slot[e]
        self._stage[rest] = self._stage[e]
        self._verdict[rest] = self._verdict[e]
        self._python[rest] = False
        engine.mask[rest] = engine.mask[e]
        engine._g[rest, k.STAGED_IS_PLAY] = engine._g[e, k.STAGED_IS_PLAY]
        self.questions += len(rest)

    def _fill(self, engine: Any, rows: np.ndarray, at: Any, continuing: np.ndarray) -> None:
        """The masks of the envs ``rows`` (``at``: the same rows as an index, ``slice(None)`` for all of them)."""
        g = engine._g
        mask = engine.mask
        seats = g[:, k.TO_ACT]
        staged = engine._staged
        table = engine._table
        stage, verdict, python = self._stage, self._verdict, self._python
        self._kernel(
            rows, continuing, engine._racks, table, staged, engine._opened, seats,
            min(self.min_initial, _MOST_POINTS), *self._slots, stage, verdict, python,
        )  # fmt: skip
        sweeps = self.sweeps
        min_initial = self.min_initial
        asked = rows[python[at]].tolist()
        self._asked[at] |= python[at]
        self.questions += len(rows)
        self.python_questions += len(asked)
        for e in asked:
            seat = seats[e]
            rack, opens = engine._racks[e, seat], not engine._opened[e, seat]
            stage_mask, staged_is_play = sweeps[e].legal(table[e], rack, staged[e], opens, min_initial)
            stage[e] = stage_mask
            verdict[e] = staged_is_play
        opening = ~engine._opened[rows, seats[at]]
        staged_here = staged[at]
        stage_here = stage[at]
        anything_staged = staged_here.any(axis=1)
        mask[at, :_COMMIT] = stage_here
        playable = stage_here.any(axis=1)
        if self.strict:  # a feasible staged set that no tile extends is itself a legal play
            short = opening & (opening_bounds(staged_here) < self.need)
            can_commit = anything_staged & (~playable | (~short & (verdict[at] == 1)))
        else:
            can_commit = anything_staged
        mask[at, _COMMIT] = can_commit
        mask[at, _DRAW] = ~anything_staged
        g[at, k.STAGED_IS_PLAY] = np.where(anything_staged, verdict[at], -1)


#: more points than any rack makes (754): ``min_initial`` above it is as unreachable (the compiled side's int64)
_MOST_POINTS = 1 << 20
