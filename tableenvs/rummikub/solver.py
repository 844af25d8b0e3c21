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
that bound + 1 (no opening). The hot path is ``_solver_kernel.py`` (numba). ``solve`` asked about a play onto
the table whose sweep a ``TurnSweep`` of the same thread still holds (same table, rack and staged tiles: a greedy
agent right after the engine's mask) scores that sweep's edges instead of sweeping again; the answer is the same.

Every function raises ``ValueError`` naming the bad value: wrong shape or dtype, negative counts, more
than 2 copies of a tile (or 2 jokers) across table and rack, a staged/forced/played vector exceeding the
rack, an unknown objective, a negative ``min_initial``, or a table that is not a valid arrangement.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

import numpy as np

from . import _solver_kernel as kernel
from .melds import Meld, group_meld
from .tiles import JOKER, NUMBERS, TILE_TYPES, TILE_VALUES, as_counts, check_total, check_within, tile_count

__all__ = ["Solution", "arrange", "is_valid_play", "playable", "solve"]

OBJECTIVES = ("tiles", "value")
# Lexicographic weights as one integer per tile: primary unit above any possible secondary total.
_TILES_FIRST = 4096 + TILE_VALUES  # total value of all 106 tiles (1516) < 4096
_VALUE_FIRST = 128 * TILE_VALUES + 1  # 106 tiles < 128
_NO_WEIGHT = np.zeros(TILE_TYPES, dtype=np.int64)
# The sweep's look-ahead (``kernel.sweep``: states whose groups or short runs need more jokers than they have left
# are dropped). Exact; the tests switch it off to compare every answer with the sweep without it.
_LOOK_AHEAD = True
# Starting buffer sizes of the sweep, per ``record_edges`` flag: (entries, edges, hash bits). Most positions
# fit; big ones grow the buffers and resume (small starts keep the common case cheap: a big buffer costs
# page faults and a big hash table a long fill on every call).
_START_SIZES = {False: (1 << 14, 1, 13), True: (1 << 14, 1 << 16, 13)}


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
        return () if self._table_choices is None else tuple(_melds_from_choices(self._choices))

    @cached_property
    def melds(self) -> tuple[Meld, ...]:
        if self._table_choices is None:
            return tuple(_melds_from_choices(self._choices))
        return tuple(_melds_from_choices(self._table_choices)) + self.opening_melds


def _grow(array: np.ndarray, size: int) -> np.ndarray:
    """A copy of ``array`` enlarged to ``size``; the tail is left untouched (not resident until written)."""
    bigger = np.empty(size, array.dtype)
    bigger[: len(array)] = array
    return bigger


def _sweep(lo, hi, base, weight, value_cap, record_edges, spare: dict | None = None, max_states: int | None = None):
    """Run the compiled sweep; when a buffer fills, grow it and resume at the layer being built.

    Returns ``(n_entries, layer_start, keys, score, parent, choice,
    n_edges, edge_parent, edge_child, edge_tile, edge_extra, edge_mark, edge_points)``. With ``record_edges`` the
    sweep keeps no scores, parents or choices (``score``, ``parent``, ``choice`` are then placeholders):
    ``walk`` reads only the keys and the edges.

    ``spare`` (recorded sweeps only): a dict holding the entry and edge buffers, the hash table and the forward words
    (``spare["forward"]``: ``kernel.reach``'s, for ``lo``, written by a recorded sweep) of an earlier
    sweep whose result is no longer read; they are used again (no new allocation, no fill of the hash table, no
    growth already paid), and the buffers of this sweep are left in it for the next one.

    ``max_states`` (at least 1): give up (return ``None``) once the sweep would hold more states than this.
    """
    sweep = kernel.kernels()[0]
    entries, edges, hash_bits = _START_SIZES[record_edges]
    if spare:
        keys, slot_of, slots = spare["keys"], spare["slot_of"], spare["slots"]
        edge_parent, edge_child, edge_tile, edge_extra, edge_points = spare["edges"]
        forward = spare["forward"]
    else:
        keys = np.empty(entries, np.int64)
        slot_of = np.empty(entries, np.int32)
        edge_parent = np.empty(edges, np.int32)
        edge_child = np.empty(edges, np.int32)
        edge_tile = np.empty(edges, np.int8)
        edge_extra = np.empty(edges, np.int8)
        edge_points = np.empty(edges, np.int8)
        slots = np.full(1 << hash_bits, -1, np.int32)
        forward = np.empty(entries if record_edges else 1, np.int64)
    entries, edges = len(keys), len(edge_parent)
    if record_edges:
        score, parent, choice = _PLACEHOLDERS  # not touched
    else:
        score, parent, choice = np.empty(entries, np.int64), np.empty(entries, np.int32), np.empty(entries, np.int32)
    layer_start = np.zeros(67, np.int64)
    edge_mark = np.zeros(66, np.int64)
    layer = 0
    while True:
        limit = entries if max_states is None else min(entries, max_states)
        status, layer, n_entries, n_edges = sweep(
            lo,
            hi,
            base,
            weight,
            value_cap,
            record_edges,
            _LOOK_AHEAD,
            keys[:limit],
            score,
            parent,
            choice,
            slot_of,
            layer_start,
            edge_parent,
            edge_child,
            edge_tile,
            edge_extra,
            edge_points,
            edge_mark,
            slots,
            forward,
            layer,
        )
        if status == kernel.OK:
            break
        slots[slot_of[layer_start[layer + 1] : n_entries]] = -1  # the unfinished layer's slots: the table is reused
        if status == kernel.OUT_OF_ENTRIES and limit == max_states:
            break  # over max_states
        if status == kernel.OUT_OF_ENTRIES:
            entries *= 4
            keys, slot_of = _grow(keys, entries), _grow(slot_of, entries)
            if record_edges:
                forward = _grow(forward, entries)
            else:
                score, parent, choice = (_grow(a, entries) for a in (score, parent, choice))
        elif status == kernel.OUT_OF_EDGES:
            edges *= 4
            edge_parent, edge_child, edge_tile, edge_extra, edge_points = (
                _grow(a, edges) for a in (edge_parent, edge_child, edge_tile, edge_extra, edge_points)
            )
        else:
            slots = np.full(4 * len(slots), -1, np.int32)
    if spare is not None:
        spare.update(
            keys=keys,
            slot_of=slot_of,
            slots=slots,
            edges=(edge_parent, edge_child, edge_tile, edge_extra, edge_points),
            forward=forward,
        )
    if status != kernel.OK:
        return None
    return (
        n_entries,
        layer_start,
        keys,
        score,
        parent,
        choice,
        n_edges,
        edge_parent,
        edge_child,
        edge_tile,
        edge_extra,
        edge_mark,
        edge_points,
    )


_PLACEHOLDERS = (np.empty(1, np.int64), np.empty(1, np.int32), np.empty(1, np.int32))


def _best_path(result, lo_jokers, value_cap) -> tuple[int, list[int], int]:
    """Best accepted final state of a scored sweep (-1 if none), the choices along its path, its jokers used."""
    _, layer_start, keys, score, parent, choice, *_ = result
    final, choices = kernel.kernels()[3](keys, score, parent, choice, layer_start, lo_jokers, value_cap)
    return final, choices.tolist(), int((keys[final] >> 24) & 3) if final >= 0 else 0


def _melds_from_choices(choices) -> list[Meld]:
    """The melds of the per-layer choices of a sweep path (a sequence of 65 codes), in the order they close.

    ``kernel.meld_records`` replays the sweep's run rule per colour and splits each number's group tiles into one
    key per meld; the ``Meld`` of each key is built once and shared (melds are immutable values, and most of a
    table's melds are the same from one commit to the next: a frozen dataclass costs about a microsecond to make).
    """
    keys, size = kernel.kernels()[6](
        np.asarray(choices, dtype=np.int64), kernel.GROUP_SPLITS, kernel.GROUP_SPLIT_COUNTS
    )
    known = _MELD_OF_KEY
    return [known.get(key) or _meld_of_key(key) for key in keys[:size].tolist()]


_COLOURS_OF = tuple(tuple(c for c in range(4) if mask >> c & 1) for mask in range(16))  # a bit mask's colours
# ``kernel.meld_records``'s keys and their melds; bounded by the melds a deck can form: about 7,400 runs (colour,
# start, length, joker places) and 624 groups.
_MELD_OF_KEY: dict[int, Meld] = {}


def _meld_of_key(key: int) -> Meld:
    if key & kernel.GROUP_KEY:
        meld = group_meld(key & 15, _COLOURS_OF[key >> 4 & 15], key >> 8 & 3)
    else:
        first, n, places = key & 63, key >> 6 & 15, key >> 10
        tiles = tuple(JOKER if places >> r & 1 else first + r for r in range(n))
        meld = Meld("run", tiles, tuple(range(first, first + n)))
    _MELD_OF_KEY[key] = meld
    return meld


def _played_from_choices(choices: list[int], jokers_used: int, base: np.ndarray) -> np.ndarray:
    used = np.zeros(TILE_TYPES, dtype=np.int64)
    for number0 in range(NUMBERS):
        for colour in range(4):
            used[colour * NUMBERS + number0] = choices[number0 * 5 + colour] >> 4
    used[JOKER] = jokers_used
    return used - base


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
    kernel.kernels()[8](table, table, _ANY_PATH, _ARRANGE_BUDGET, _NO_DEAD, dead_fill, False, found, choices)
    if found[0] == kernel.OVER_BUDGET:
        return _swept_arrangement(table)
    return tuple(choices.tolist()) if found[0] else None


def _swept_arrangement(table: np.ndarray) -> tuple[int, ...] | None:
    """``_arrangement`` by a whole scored sweep (the tests compare the two)."""
    result = _sweep(table, table, table, _NO_WEIGHT, 0, False)
    final, choices, _ = _best_path(result, int(table[JOKER]), 0)
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
    return None if choices is None else _melds_from_choices(choices)


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
        base, lo, hi, value_cap = _NO_WEIGHT, forced, rack, min(min_initial, _points_bound(rack) + 1)
        result = _sweep(lo, hi, base, weight, value_cap, False)
    else:
        base, lo, hi, value_cap = table, table + forced, table + rack, 0
        recorded = _recorded_for(table, rack, lo)
        if recorded is None:
            result = _sweep(lo, hi, base, weight, value_cap, False)
        else:  # the same sweep, already recorded by the rules engine: score its edges
            result = _scored(recorded, weight, base)
    final, choices, jokers_used = _best_path(result, int(lo[JOKER]), value_cap)
    if final < 0:
        return None
    played = _played_from_choices(choices, jokers_used, base)
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
    return _answer(_recorded_sweep(table, rack, staged, opening, min_initial), _ZERO_DELTA)


_ZERO_DELTA = np.zeros(TILE_TYPES, dtype=np.int64)


def _recorded_sweep(table, rack, staged, opening, min_initial, spare: dict | None = None, max_states=None):
    """The sweep ``_answer`` reads: recorded edges, points left out of the states (``walk`` adds them); ``None`` if
    it would hold more than ``max_states`` states."""
    if opening:
        # more than the rack can reach is as unreachable as its bound + 1 (keeps the walk's int16 points small)
        base, lo, hi, value_cap = _NO_WEIGHT, staged, rack, min(min_initial, _points_bound(rack) + 1)
    else:
        base, lo, hi, value_cap = table, table + staged, table + rack, 0
    result = _sweep(lo, hi, base, _NO_WEIGHT, 0, True, spare, max_states)
    return None if result is None else (lo, value_cap, result)


def _points_bound(rack: np.ndarray) -> int:
    """Most opening points ``rack`` could make: face values, a joker at most 13 (at most 754)."""
    return int(rack[:JOKER] @ _NUMBER_OF[:JOKER]) + 13 * int(rack[JOKER])


_NUMBER_OF = np.array([t % NUMBERS + 1 for t in range(JOKER)] + [0], dtype=np.int64)


def _answer(recorded, delta) -> tuple[np.ndarray, bool]:
    """Mask and exact-play flag of a recorded sweep, asked for its staged tiles plus ``delta``."""
    return _walk(recorded, delta)[:2]


def _walk(recorded, delta, walked=None):
    """``kernel.walk`` on a recorded sweep for ``delta``: whole, or from ``walked`` = ``(old_delta, best_from_root,
    best_to_end, exact_to_end)``, the last walk of the same recorded sweep for a smaller delta, whose arrays it turns
    into this walk's in place. Returns ``(mask, exact, best_from_root, best_to_end, exact_to_end, kept)``."""
    lo, value_cap, result = recorded
    n_entries, layer_start, keys, _, _, _, n_edges, *edges = result  # parent, child, tile, extra, mark, points
    if walked is None:
        old_delta, arrays = (
            delta,
            (np.zeros(n_entries, np.int16), np.empty(n_entries, np.int16), np.empty(n_entries, np.int16)),
        )
    else:
        old_delta, *arrays = walked
    mask, exact, kept = kernel.kernels()[1](
        delta,
        lo[JOKER] + delta[JOKER],
        value_cap,
        n_entries,
        layer_start,
        keys,
        n_edges,
        *edges,
        *arrays,
        old_delta,
        walked is None,
    )
    return mask, bool(exact), *arrays, int(kept)


# A recorded sweep with fewer edges is not pruned within a turn: walking it whole costs about as much as the copy.
_PRUNE_EDGES = 16384
# Nor one whose pruned copy would keep more than this share of its edges: the copy (about one walk) would not pay.
_PRUNE_KEPT = 0.3


def _pruned(recorded, delta, best_from_root, best_to_end):
    """The recorded sweep keeping only the edges on accepted plays of ``delta`` (``kernel.prune``)."""
    lo, value_cap, result = recorded
    prune = kernel.kernels()[2]
    n_entries, layer_start, keys, _, _, _, n_edges, *edges = result  # parent, child, tile, extra, mark, points
    kept = prune(delta, value_cap, n_entries, layer_start, keys, n_edges, *edges, best_from_root, best_to_end)
    n_entries, layer_start, keys, n_edges, *edges = kept
    return lo, value_cap, (n_entries, layer_start, keys, None, None, None, n_edges, *edges)


class TurnSweep:
    """The rules engine's ``_playable_and_exact`` with reuse across a turn (unchecked inputs, as there).

    Within a turn only the staged tiles grow. A larger lower bound only removes transitions from the
    sweep, so the sweep recorded for the turn's first staged set answers every later superset exactly
    (asked with ``delta`` = staged now - staged then): one forward sweep per turn instead of one per staged tile.
    A play onto the table is answered by ``kernel.reach`` at a cut of the recorded sweep, keeping its per-entry words
    between questions, so a question only walks the layers between the last cut and the newly staged cells. An
    opening (points to reach) is answered by ``kernel.walk``, incrementally from the last walk; after a question that
    stages more, a big opening sweep is pruned to the edges on the plays still accepted (``kernel.prune``). A
    different table, rack, opening flag or ``min_initial``, or a staged set that is not a superset, records a new
    sweep, in the buffers of the previous one (grown buffers are kept: no allocation and no growth again; they stay as
    big as the biggest sweep this engine has recorded). A recorded play onto the table is also offered to ``solve``
    for the same position (``_recorded_for``) until this engine records another sweep.
    """

    def __init__(self) -> None:
        self._position: tuple[bytes, bytes, bool, int] | None = None
        self._staged = _ZERO_DELTA
        self._recorded: tuple[np.ndarray, Any, tuple[Any, ...]] | None = None  # ``_recorded_sweep``'s (lo, cap, result)
        self._spare: dict = {}  # the recorded sweep's buffers, used again by the next sweep
        self._delta = _ZERO_DELTA  # the last question's staged tiles above ``_staged``
        # openings: the last walk's (delta, best_from_root, best_to_end, exact_to_end)
        self._walked: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self._bounds: np.ndarray | None = None  # plays onto the table: ``kernel.reach``'s [F, B] for ``_delta``
        # its forward words (the recorded sweep's, ``self._spare["forward"]``) and backward words (grown)
        self._words = (np.empty(0, np.int64), np.empty(0, np.int64))
        self._recordings = 0  # sweeps recorded so far (``solve`` checks that the one it reads is still held)
        self._searching = False  # this turn's questions are answered by searches (``_search``), no sweep recorded
        self._dead: np.ndarray | None = None  # the searches' states with no accepted end (allocated at first search)
        self._dead_fill = np.zeros(1, np.int64)
        # the staged tiles of the last search that added to ``_dead`` (None: nothing valid in it for this position);
        # a state dead for more staged tiles may be alive for fewer, so a question that drops any empties it
        self._dead_staged: np.ndarray | None = None
        self._choices = np.zeros(65, np.int64)  # the last commit check's path (the arrangement), when it found one
        self._searched: tuple[np.ndarray, bool] | None = None  # staged tiles and exact flag of the last search
        # table tiles at the last sweep of a play onto the table, and the most states of such a sweep since the table
        # last shrank (a new game): sweeps of one table swing with the rack (1k states for one seat, 270k the next)
        self._last_sweep = (0, 0)
        self._tiles = 0  # table tiles of ``_position``
        self._fresh_bounds = np.empty(2, np.int64)  # ``_bounds`` of a recorded play onto the table
        self._weak_self = weakref.ref(self)

    def __reduce__(self):
        return (TurnSweep, ())  # copies and pickles start empty: the recorded sweep is only a cache (MBs)

    def legal(self, table, rack, staged, opening: bool, min_initial: int) -> tuple[np.ndarray, bool]:
        position = (table.tobytes(), rack.tobytes(), opening, min_initial)
        # count_nonzero: a fifth of the time of ``.all()``/``.any()`` on 53 entries, asked at every decision
        same_turn = position == self._position and not np.count_nonzero(staged < self._staged)
        if same_turn and self._recorded is not None:
            delta = staged - self._staged
            if self._bounds is not None:
                mask, exact = self._reach(delta)
            else:
                mask, exact = self._walk_opening(delta)
            self._delta = delta
            return mask, exact
        if not same_turn:
            self._recorded = self._walked = self._bounds = self._searched = None
            self._position = position
            self._tiles = tiles = tile_count(table)
            last_tiles, most_states = self._last_sweep
            # a sweep of a play onto this table, or one it grew from (tables only grow within a game), was big
            self._searching = not opening and tiles >= last_tiles and most_states >= _SEARCH_STATES
            self._dead_staged = None  # another position: its dead states are not this one's
        if not self._searching:
            # a sweep of a play onto the table gives up once it holds as many states as make this table searched
            answer = self._record(table, rack, staged, opening, min_initial, None if opening else _SEARCH_STATES)
            if answer is not None:
                return answer
            self._searching = True  # it gave up: searched from now on, as after a finished sweep that big
        answer = self._search(table, rack, staged)
        if answer is not None:
            return answer
        self._searching = False  # over budget: a sweep answers this question and the rest of the turn
        answer = self._record(table, rack, staged, opening, min_initial, None)
        if answer is None:
            raise RuntimeError("TurnSweep: a sweep with no state limit gave up")
        return answer

    def _record(
        self, table, rack, staged, opening: bool, min_initial: int, give_up: int | None
    ) -> tuple[np.ndarray, bool] | None:
        """Record the sweep for ``staged`` (buffers in ``self._spare``, overwritten anew) and answer from it; ``None``
        (nothing recorded) once it holds ``give_up`` states (``None``: never gives up)."""
        self._recorded = self._walked = self._bounds = None
        self._recordings += 1
        self._staged = staged.copy()  # the caller stages into its own array later: keep this one apart
        max_states = None if give_up is None else max(give_up - 1, 1)
        recorded = _recorded_sweep(table, rack, self._staged, opening, min_initial, self._spare, max_states)
        self._delta = _ZERO_DELTA
        if opening:
            self._recorded = recorded
            return self._walk_opening(_ZERO_DELTA)  # a whole walk (nothing walked yet), nothing to prune
        if recorded is not None:
            n_entries = recorded[2][0]
        elif max_states is not None:
            n_entries = max_states + 1
        else:
            raise RuntimeError("TurnSweep: a sweep with no state limit gave up")
        tiles, (last_tiles, most_states) = self._tiles, self._last_sweep
        self._last_sweep = (tiles, n_entries if tiles < last_tiles else max(most_states, n_entries))
        if recorded is None:
            return None
        self._recorded = recorded
        position = self._position
        if position is None:
            raise RuntimeError("TurnSweep: a sweep recorded for no position")
        key = (position[0], position[1], recorded[0].tobytes())  # lo = table + staged
        _latest_recorded.entry = (key, self._weak_self, self._recordings)
        backward = self._words[1]
        if len(backward) < n_entries:
            backward = np.empty(2 * n_entries, np.int64)
        self._words = (self._spare["forward"], backward)  # the sweep wrote the forward words for ``staged``
        self._bounds = self._fresh_bounds
        self._bounds[:] = _FORWARD_KNOWN
        return self._reach(_ZERO_DELTA)

    def _search(self, table, rack, staged) -> tuple[np.ndarray, bool] | None:
        """A play onto the table's question answered by ``kernel.witness``: per rack type a path that uses one more
        tile of it, then the commit check (a path in sweep order with every cell at ``table + staged``, which is
        also the arrangement to publish); ``None`` when a search runs out of its budget."""
        if self._dead is None:
            self._dead = np.full(_DEAD_SLOTS, -1, np.int64)
        elif self._dead_fill[0] and (self._dead_staged is None or np.count_nonzero(staged < self._dead_staged)):
            self._dead.fill(-1)
            self._dead_fill[0] = 0
        self._dead_staged = staged.copy()
        lo = table + staged
        candidates = np.flatnonzero(rack > staged)
        found = self._witness(lo, table + rack, candidates, True)
        if np.count_nonzero(found < 0):
            return None
        exact = self._witness(lo, lo, _ANY_PATH, False)  # leaves its path in ``_choices``
        if exact[0] < 0:
            return None
        mask = np.zeros(TILE_TYPES, bool)
        mask[candidates[found == 1]] = True
        self._searched = (self._dead_staged, bool(exact[0]))  # a copy of ``staged``, not written again
        return mask, bool(exact[0])

    def _witness(self, lo, hi, candidates, share_dead: bool) -> np.ndarray:
        """``kernel.witness`` for ``candidates`` with this turn's dead states and budget: per candidate 1, 0 or
        ``kernel.OVER_BUDGET``."""
        found = np.empty(len(candidates), np.int64)
        kernel.kernels()[8](
            lo,
            hi,
            candidates,
            _SEARCH_BUDGET,
            self._dead,
            self._dead_fill,
            share_dead,
            found,
            self._choices,
        )
        return found

    def _reach(self, delta) -> tuple[np.ndarray, bool]:
        """``kernel.reach`` on the recorded sweep for ``delta``, from the words it kept for ``self._delta``, at the
        cut it chooses (-1)."""
        if self._recorded is None:
            raise RuntimeError("TurnSweep: no recorded sweep to reach on")
        lo, _, result = self._recorded
        mask, exact = kernel.kernels()[5](
            delta, self._delta, lo[JOKER] + delta[JOKER], *_graph(result), *self._words, self._bounds, -1
        )
        return mask, bool(exact)

    def _walk_opening(self, delta) -> tuple[np.ndarray, bool]:
        """An opening's question: the walk from the last one (whole if none), then maybe a pruned copy of a big
        sweep."""
        recorded = self._recorded
        if recorded is None:
            raise RuntimeError("TurnSweep: no recorded sweep to walk")
        mask, exact, best_from_root, best_to_end, exact_to_end, kept = _walk(recorded, delta, self._walked)
        self._walked = (delta, best_from_root, best_to_end, exact_to_end)
        edges = recorded[2][6]
        if edges >= _PRUNE_EDGES and kept <= _PRUNE_KEPT * edges and delta.any():
            self._recorded = _pruned(recorded, delta, best_from_root, best_to_end)
            self._walked = None  # the copy numbers its entries anew
        return mask, exact

    def played_arrangement(self, table, rack, staged, opening: bool, min_initial: int) -> list[Meld] | None:
        """``_arranged(table + staged)`` for the play ``staged`` that ``legal`` was last asked about (and found
        legal), from that question's recorded sweep instead of a sweep of the whole table; ``None`` when it was another
        question, an opening (its sweep holds the rack only) or nothing is kept (a copy).

        The same melds: ``kernel.exact_choices`` follows the first path in sweep order that plays exactly
        ``staged``, the path the table's own sweep backtracks (the tests compare them at every commit of random
        games)."""
        if opening or (table.tobytes(), rack.tobytes(), opening, min_initial) != self._position:
            return None
        if self._searching:  # the last commit check's path, if it was asked about ``staged`` and found one
            asked = self._searched
            if asked is not None and asked[1] and asked[0].tobytes() == staged.tobytes():
                return _melds_from_choices(self._choices)
            return None
        if self._bounds is None or (self._staged + self._delta).tobytes() != staged.tobytes():
            return None
        if self._recorded is None:
            raise RuntimeError("TurnSweep: reach bounds kept without their recorded sweep")
        lo, _, result = self._recorded
        found, choices = kernel.kernels()[4](
            self._delta, lo, lo[JOKER] + self._delta[JOKER], *_graph(result), self._words[1], self._bounds[1]
        )
        return _melds_from_choices(choices) if found else None


_TurnSweep = TurnSweep  # its former private name, still imported by the solver's own tests

# Searches instead of a sweep (``TurnSweep._search``, issue 17 sixth pass), for plays onto a table once a sweep of a
# play onto it (or onto a table it has since grown from) held at least ``_SEARCH_STATES`` states (seventh pass: a sweep
# stops there and its turn is searched at once): there nearly every rack tile is playable, which a search shows in a
# few hundred visits, while the sweep holds up to 460k states.
# Elsewhere the sweep is cheaper (proving a tile unplayable or a staged set no play takes exhaustive searches; on
# 2-player tables of 60+ tiles with both jokers searching cost twice the sweeps). Each question's two searches may
# visit ``_SEARCH_BUDGET`` states each before the turn falls back to the sweep; the dead states of a turn fill at most
# half of ``_DEAD_SLOTS``.
_SEARCH_STATES = 20_000
_SEARCH_BUDGET = 4096
_DEAD_SLOTS = 1 << 15
_ANY_PATH = np.array([-1], np.int64)
_FORWARD_KNOWN = np.array([65, 66], np.int64)  # ``kernel.reach``'s bounds after a recorded sweep (forward words)


# Per thread, the latest sweep a ``TurnSweep`` recorded for a play onto the table: ``(key, owner, recording)`` with
# ``key`` = the bytes of its table, rack and lower bound ``lo``, ``owner`` a weak reference to the ``TurnSweep`` and
# ``recording`` its count of sweeps then (a later sweep of the owner overwrites the buffers). ``solve`` asked about
# the same position (a greedy agent right after the engine's mask) scores this sweep's edges instead of sweeping.
_latest_recorded = threading.local()


def _recorded_for(table, rack, lo):
    """The recorded sweep of ``(table, rack, lo)`` if a ``TurnSweep`` of this thread still holds it, else ``None``."""
    latest = getattr(_latest_recorded, "entry", None)
    if latest is None or latest[0] != (table.tobytes(), rack.tobytes(), lo.tobytes()):
        return None
    owner = latest[1]()
    return owner._recorded if owner is not None and owner._recordings == latest[2] else None


def _scored(recorded, weight, base) -> tuple:
    """What ``_best_path`` reads of a scored sweep (``n_entries, layer_start, keys, score, parent, choice``), from a
    recorded sweep of the same bounds (``kernel.score_edges``: the same entries, scores, parents and choices)."""
    lo, _, result = recorded
    n_entries, layer_start, keys, _, _, _, n_edges, edge_parent, edge_child, edge_tile, edge_extra, *_ = result
    score, parent, choice = kernel.kernels()[7](
        weight, base, lo, n_entries, keys, n_edges, edge_parent, edge_child, edge_tile, edge_extra
    )
    return n_entries, layer_start, keys, score, parent, choice


def _graph(result) -> tuple:
    """What ``kernel.reach`` and ``kernel.exact_choices`` read of a recorded sweep: ``(n_entries, layer_start, keys,
    n_edges, edge_parent, edge_child, edge_tile, edge_extra, edge_mark)``."""
    n_entries, layer_start, keys, _, _, _, n_edges, edge_parent, edge_child, edge_tile, edge_extra, edge_mark, _ = (
        result
    )
    return n_entries, layer_start, keys, n_edges, edge_parent, edge_child, edge_tile, edge_extra, edge_mark


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
        after, value_cap = played, min(min_initial, _points_bound(played) + 1)
    else:
        after, value_cap = table + played, 0
    result = _sweep(after, after, after, _NO_WEIGHT, value_cap, False)
    return _best_path(result, int(after[JOKER]), value_cap)[0] >= 0
