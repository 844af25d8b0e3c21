"""Rummikub meld-partition solver: best plays, per-tile legality masks and table arrangements.

You are in the public solver API (``tableenvs.rummikub.solver``, re-exported by ``tableenvs.rummikub``).
Positions are count vectors of length 53 (see ``tiles.py``: type ``colour * 13 + number - 1``, joker 52).

Rules the solver decides:

- A table is valid when all its tiles can be partitioned into melds (groups of 3..4 tiles of one number
  in different colours; runs of 3..13 consecutive numbers of one colour, no wrap; a joker stands for any
  tile a meld needs, a meld may hold both jokers).
- A *play* is a non-empty multiset of rack tiles such that table + play can be partitioned into melds;
  the table may be rearranged freely but none of its tiles returns to a rack.
- An *opening* play (``opening=True``) does not touch the table: the played tiles alone must form melds
  worth at least ``min_initial`` points, each joker counted as the number it stands for.
- Objectives: ``"tiles"`` maximises the number of tiles played, ties broken by more points;
  ``"value"`` maximises points played (face values, a joker worth ``JOKER_VALUE`` = 30, the penalty it
  costs on a rack), ties broken by more tiles. Remaining ties are broken by the fixed order of the sweep,
  so equal inputs always give equal answers.

Algorithm (after van Rijn, Takes & Vis, 2015): one dynamic programme sweeps the numbers 1..13 and, per
number, the four colour cells and then the number's groups; its state is each colour's multiset of open
run lengths (capped at 3), the jokers used, the group accumulator of the current number and, when
``solve`` or ``is_valid_play`` opens, the points placed (capped at ``min_initial``; only the Pareto front
of points and score is kept per position). ``solve`` keeps the best score per state and backtracks;
``playable`` records the transitions and walks them backwards once, adding opening points in the walk
(most points from the start and to the end per state), so the whole mask costs one forward and one
backward pass whatever ``min_initial`` is. A ``min_initial`` above what the rack can make is treated as
that bound + 1 (no opening). The hot path is ``_solver_kernel.py`` (numba); ``sweep.py`` runs it and reads its
results, and ``turn_sweep.py`` (``TurnSweep``) answers the rules engine's questions of one turn from one recorded
sweep. ``solve`` asked about a play onto the table whose sweep a ``TurnSweep`` of the same thread still holds (same
table, rack and staged tiles: a greedy agent right after the engine's mask) scores that sweep's edges instead of
sweeping again; the answer is the same.

Every function raises ``ValueError`` naming the bad value: wrong shape or dtype, negative counts, more
than 2 copies of a tile (or 2 jokers) across table and rack, a staged/forced/played vector exceeding the
rack, an unknown objective, a negative ``min_initial``, or a table that is not a valid arrangement.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from . import _solver_kernel as kernel
from . import sweep
from .melds import Meld
from .tiles import JOKER, TILE_TYPES, TILE_VALUES, as_counts, check_total, check_within
from .turn_sweep import TurnSweep, recorded_for  # TurnSweep: the rules engine imports it from here

__all__ = ["Solution", "arrange", "is_valid_play", "playable", "solve"]

OBJECTIVES = ("tiles", "value")
# Lexicographic weights as one integer per tile: primary unit above any possible secondary total.
_TILES_FIRST = 4096 + TILE_VALUES  # total value of all 106 tiles (1516) < 4096
_VALUE_FIRST = 128 * TILE_VALUES + 1  # 106 tiles < 128


@dataclass(frozen=True, eq=False)
class Solution:
    """A play and the arrangement it leads to.

    ``played``: count vector of the tiles taken from the rack (read-only). ``tiles`` and ``value``
    measure it (value: face points, a joker 30). ``melds``: the whole table after the play. When
    opening, the table is untouched: ``melds`` is the table's own arrangement (as ``arrange`` gives it)
    followed by ``opening_melds``, the new melds made only of played tiles; otherwise ``opening_melds``
    is empty. Both meld tuples are built on first access (the sweep's choices are kept until then), so
    a caller that only needs ``played`` does not pay for them.
    """

    played: np.ndarray
    tiles: int
    value: int
    _choices: tuple[int, ...]
    _table_choices: tuple[int, ...] | None = None

    @cached_property
    def opening_melds(self) -> tuple[Meld, ...]:
        return () if self._table_choices is None else tuple(sweep.melds_from_choices(self._choices))

    @cached_property
    def melds(self) -> tuple[Meld, ...]:
        if self._table_choices is None:
            return tuple(sweep.melds_from_choices(self._choices))
        return tuple(sweep.melds_from_choices(self._table_choices)) + self.opening_melds


@lru_cache(maxsize=256)
def _arrangement(table_bytes: bytes) -> tuple[int, ...] | None:
    """Sweep choices of one partition of the table (given as int64 bytes), or ``None`` if it has none.

    The partition is the first in sweep order (the path a scored sweep of ``lo = hi = table`` backtracks,
    ``_swept_arrangement``), found by ``kernel.witness``'s depth-first search, which visits only the table's few
    partial partitions; a table whose search visits ``_ARRANGE_BUDGET`` states is swept instead.
    """
    table = np.frombuffer(table_bytes, dtype=np.int64).copy()  # writable: the kernels' one compiled signature
    found = np.empty(1, np.int64)
    choices = np.zeros(65, np.int64)
    dead_fill = np.zeros(1, np.int64)
    kernel.kernels()[8](table, table, sweep.ANY_PATH, _ARRANGE_BUDGET, _NO_DEAD, dead_fill, False, found, choices)
    if found[0] == kernel.OVER_BUDGET:
        return _swept_arrangement(table)
    return tuple(choices.tolist()) if found[0] else None


def _swept_arrangement(table: np.ndarray) -> tuple[int, ...] | None:
    """``_arrangement`` by a whole scored sweep (the tests compare the two)."""
    result = sweep.run(table, table, table, sweep.NO_WEIGHT, 0, False)
    final, choices, _ = sweep.best_path(result, int(table[JOKER]), 0)
    return None if final < 0 else tuple(choices)


# ``_arrangement``'s search: at most this many states visited before it sweeps; an empty set of known dead states (a
# search without ``share_dead`` only reads it)
_ARRANGE_BUDGET = 2048
_NO_DEAD = np.full(2, -1, np.int64)


def _valid_table(table: np.ndarray) -> tuple[int, ...]:
    choices = _arrangement(table.tobytes())
    if choices is None:
        raise ValueError("table is not a valid arrangement: its tiles cannot be partitioned into melds")
    return choices


def _check_min_initial(min_initial) -> int:
    if isinstance(min_initial, bool) or not isinstance(min_initial, (int, np.integer)) or min_initial < 0:
        raise ValueError(f"min_initial must be an integer >= 0, got {min_initial!r}")
    return int(min_initial)


def _position(table, rack) -> tuple[np.ndarray, np.ndarray]:
    table = as_counts("table", table)
    rack = as_counts("rack", rack)
    check_total("table and rack", table + rack)
    return table, rack


def arrange(table) -> list[Meld] | None:
    """A partition of ``table`` into melds, or ``None`` if there is none."""
    return _arranged(as_counts("table", table))


def _arranged(table: np.ndarray) -> list[Meld] | None:
    """``arrange`` without the input check: ``table`` is an int64 count vector of shape (53,) (the rules engine's)."""
    choices = _arrangement(table.tobytes())
    return None if choices is None else sweep.melds_from_choices(choices)


def solve(
    table, rack, *, objective: str = "tiles", opening: bool = False, min_initial: int = 30, forced=None
) -> Solution | None:
    """The best play from ``rack`` onto the valid ``table``, or ``None`` when no play exists.

    ``objective``: ``"tiles"`` (most tiles, then most points) or ``"value"`` (most points, then most
    tiles). ``opening``: the play must leave the table untouched and be worth ``min_initial`` points.
    ``forced``: count vector of rack tiles the play must include (at least these).
    """
    table, rack = _position(table, rack)
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    min_initial = _check_min_initial(min_initial)
    forced = np.zeros(TILE_TYPES, np.int64) if forced is None else as_counts("forced", forced)
    check_within("forced", forced, "rack", rack)
    table_choices = _valid_table(table)
    weight = _TILES_FIRST if objective == "tiles" else _VALUE_FIRST
    if opening:  # more points than the rack can make are as unreachable as its bound + 1
        base, lo, hi, value_cap = sweep.NO_WEIGHT, forced, rack, min(min_initial, sweep.points_bound(rack) + 1)
        result = sweep.run(lo, hi, base, weight, value_cap, False)
    else:
        base, lo, hi, value_cap = table, table + forced, table + rack, 0
        recorded = recorded_for(table, rack, lo)
        if recorded is None:
            result = sweep.run(lo, hi, base, weight, value_cap, False)
        else:  # the same sweep, already recorded by the rules engine: score its edges
            result = sweep.scored(recorded, weight, base)
    final, choices, jokers_used = sweep.best_path(result, int(lo[JOKER]), value_cap)
    if final < 0:
        return None
    played = sweep.played_from_choices(choices, jokers_used, base)
    if not played.any():
        return None
    played.setflags(write=False)
    return Solution(
        played, int(played.sum()), int(played @ TILE_VALUES), tuple(choices), table_choices if opening else None
    )


def playable(table, rack, staged, *, opening: bool = False, min_initial: int = 30) -> np.ndarray:
    """Per tile type, whether some legal play uses at least ``staged`` plus one more tile of that type.

    ``staged``: count vector of rack tiles already chosen for the play. Entry ``t`` is ``True`` when
    ``rack[t] > staged[t]`` and some play ``p`` with ``staged + e_t <= p <= rack`` is legal (see module
    rules; ``opening`` as in ``solve``). One forward and one backward sweep, not 53 solves.
    """
    table, rack = _position(table, rack)
    staged = as_counts("staged", staged)
    check_within("staged", staged, "rack", rack)
    min_initial = _check_min_initial(min_initial)
    _valid_table(table)
    return _playable_and_exact(table, rack, staged, opening, min_initial)[0]


def _playable_and_exact(table, rack, staged, opening: bool, min_initial: int) -> tuple[np.ndarray, bool]:
    """``playable``'s mask and whether ``staged`` itself is a legal play (if non-empty), from one sweep.

    Unchecked: int64 count vectors of shape (53,), ``staged <= rack``, a valid ``table``, an int
    ``min_initial >= 0`` (the public functions check them; the rules engine keeps them so). The second
    value is ``is_valid_play(table, rack, staged, ...)`` for a non-empty ``staged``.
    """
    return sweep.walk(sweep.recorded_sweep(table, rack, staged, opening, min_initial), sweep.ZERO_DELTA)[:2]


def is_valid_play(table, rack, played, *, opening: bool = False, min_initial: int = 30) -> bool:
    """Whether playing exactly ``played`` (a non-empty part of ``rack``) onto ``table`` is legal."""
    table, rack = _position(table, rack)
    played = as_counts("played", played)
    check_within("played", played, "rack", rack)
    min_initial = _check_min_initial(min_initial)
    _valid_table(table)
    if not played.any():
        return False
    if opening:
        after, value_cap = played, min(min_initial, sweep.points_bound(played) + 1)
    else:
        after, value_cap = table + played, 0
    result = sweep.run(after, after, after, sweep.NO_WEIGHT, value_cap, False)
    return sweep.best_path(result, int(after[JOKER]), value_cap)[0] >= 0


_TurnSweep = TurnSweep  # its former private name, still imported by the solver's own tests
