"""The Rummikub solver's sweep: run the compiled kernel over a position and read what it leaves.

Where you are: under the solver's public API (:mod:`tableenvs.rummikub.solver`) and its per-turn cache
(:mod:`tableenvs.rummikub.turn_sweep`), over the compiled kernel (``_solver_kernel.py``, numba). :func:`run` runs one
sweep of the numbers 1..13 between a lower and an upper count vector, growing its buffers and resuming when they
fill; a *scored* sweep keeps each state's best score, parent and choice (:func:`best_path` backtracks it into the
choices of :func:`melds_from_choices` and :func:`played_from_choices`), a *recorded* sweep keeps its transitions
instead (:func:`recorded_sweep`), which :func:`walk`, :func:`pruned`, :func:`graph` and :func:`scored` read. The
algorithm and the rules it decides: the solver module's docstring.
"""

from __future__ import annotations

import numpy as np

from . import _solver_kernel as kernel
from .melds import Meld, group_meld
from .tiles import JOKER, NUMBERS, TILE_TYPES

NO_WEIGHT = np.zeros(TILE_TYPES, dtype=np.int64)  # a sweep that scores nothing (a recorded sweep, an arrangement)
ZERO_DELTA = np.zeros(TILE_TYPES, dtype=np.int64)  # no tiles staged beyond a recorded sweep's own
ANY_PATH = np.array([-1], np.int64)  # ``kernel.witness``'s candidates for "any path" (an arrangement, a commit)
# The sweep's look-ahead (``kernel.sweep``: states whose groups or short runs need more jokers than they have left
# are dropped). Exact; the tests switch it off to compare every answer with the sweep without it.
_LOOK_AHEAD = True
# Starting buffer sizes of the sweep, per ``record_edges`` flag: (entries, edges, hash bits). Most positions
# fit; big ones grow the buffers and resume (small starts keep the common case cheap: a big buffer costs
# page faults and a big hash table a long fill on every call).
_START_SIZES = {False: (1 << 14, 1, 13), True: (1 << 14, 1 << 16, 13)}


def _grow(array: np.ndarray, size: int) -> np.ndarray:
    """A copy of ``array`` enlarged to ``size``; the tail is left untouched (not resident until written)."""
    bigger = np.empty(size, array.dtype)
    bigger[: len(array)] = array
    return bigger


def run(lo, hi, base, weight, value_cap, record_edges, spare: dict | None = None, max_states: int | None = None):
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


def best_path(result, lo_jokers, value_cap) -> tuple[int, list[int], int]:
    """Best accepted final state of a scored sweep (-1 if none), the choices along its path, its jokers used."""
    _, layer_start, keys, score, parent, choice, *_ = result
    final, choices = kernel.kernels()[3](keys, score, parent, choice, layer_start, lo_jokers, value_cap)
    return final, choices.tolist(), int((keys[final] >> 24) & 3) if final >= 0 else 0


def melds_from_choices(choices) -> list[Meld]:
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


def played_from_choices(choices: list[int], jokers_used: int, base: np.ndarray) -> np.ndarray:
    used = np.zeros(TILE_TYPES, dtype=np.int64)
    for number0 in range(NUMBERS):
        for colour in range(4):
            used[colour * NUMBERS + number0] = choices[number0 * 5 + colour] >> 4
    used[JOKER] = jokers_used
    return used - base


def recorded_sweep(table, rack, staged, opening, min_initial, spare: dict | None = None, max_states=None):
    """The recorded sweep of a question (``staged`` tiles of ``rack`` onto ``table``) as ``(lo, value_cap, result)``,
    which ``walk`` and ``kernel.reach`` read: recorded edges, points left out of the states (``walk`` adds them);
    ``None`` if it would hold more than ``max_states`` states."""
    if opening:
        # more than the rack can reach is as unreachable as its bound + 1 (keeps the walk's int16 points small)
        base, lo, hi, value_cap = NO_WEIGHT, staged, rack, min(min_initial, points_bound(rack) + 1)
    else:
        base, lo, hi, value_cap = table, table + staged, table + rack, 0
    result = run(lo, hi, base, NO_WEIGHT, 0, True, spare, max_states)
    return None if result is None else (lo, value_cap, result)


def points_bound(rack: np.ndarray) -> int:
    """Most opening points ``rack`` could make: face values, a joker at most 13 (at most 754)."""
    return int(rack[:JOKER] @ _NUMBER_OF[:JOKER]) + 13 * int(rack[JOKER])


_NUMBER_OF = np.array([t % NUMBERS + 1 for t in range(JOKER)] + [0], dtype=np.int64)


def walk(recorded, delta, walked=None):
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


def pruned(recorded, delta, best_from_root, best_to_end):
    """The recorded sweep keeping only the edges on accepted plays of ``delta`` (``kernel.prune``)."""
    lo, value_cap, result = recorded
    prune = kernel.kernels()[2]
    n_entries, layer_start, keys, _, _, _, n_edges, *edges = result  # parent, child, tile, extra, mark, points
    kept = prune(delta, value_cap, n_entries, layer_start, keys, n_edges, *edges, best_from_root, best_to_end)
    n_entries, layer_start, keys, n_edges, *edges = kept
    return lo, value_cap, (n_entries, layer_start, keys, None, None, None, n_edges, *edges)


def scored(recorded, weight, base) -> tuple:
    """What ``best_path`` reads of a scored sweep (``n_entries, layer_start, keys, score, parent, choice``), from a
    recorded sweep of the same bounds (``kernel.score_edges``: the same entries, scores, parents and choices)."""
    lo, _, result = recorded
    n_entries, layer_start, keys, _, _, _, n_edges, edge_parent, edge_child, edge_tile, edge_extra, *_ = result
    score, parent, choice = kernel.kernels()[7](
        weight, base, lo, n_entries, keys, n_edges, edge_parent, edge_child, edge_tile, edge_extra
    )
    return n_entries, layer_start, keys, score, parent, choice


def graph(result) -> tuple:
    """What ``kernel.reach`` and ``kernel.exact_choices`` read of a recorded sweep: ``(n_entries, layer_start, keys,
    n_edges, edge_parent, edge_child, edge_tile, edge_extra, edge_mark)``."""
    n_entries, layer_start, keys, _, _, _, n_edges, edge_parent, edge_child, edge_tile, edge_extra, edge_mark, _ = (
        result
    )
    return n_entries, layer_start, keys, n_edges, edge_parent, edge_child, edge_tile, edge_extra, edge_mark
