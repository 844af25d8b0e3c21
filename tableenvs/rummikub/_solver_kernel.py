"""The compiled hot path of the Rummikub solver: one dynamic-programming sweep over numbers 1..13.

You are below ``solver.py``; read its docstring for the model first. This module knows nothing of melds:
it walks tile *cells* (colour, number) and decides, per cell, how many tiles of that type are used
(``lo[t] <= used <= hi[t]``), how many of them go to groups and how many jokers join runs there; after the
four colours of a number it decides how many jokers join that number's groups. Units: counts of tiles,
scores in the caller's integer weights, values in face points.

State of the sweep, packed in one int64 (``_pack``):

- bits 0..23: per colour (6 bits each) the index of its *run state*, the multiset of open run lengths
  capped at 3 (``k1`` runs of length 1, ``k2`` of length 2, ``k3`` of length >= 3; at most 4 open runs
  per colour, two real copies plus two jokers);
- bits 24..25: jokers used so far (0..2);
- bits 26..30: the group accumulator of the current number, ``a1 + 5 * a2`` where ``a1`` (``a2``) is how
  many colours put one (two) tiles into groups so far;
- bits 31..: meld value placed so far (stood-for points), capped at ``value_cap`` (0 unless ``solve`` or
  ``is_valid_play`` opens; a recorded sweep for ``playable`` runs with 0 and ``walk`` adds the points).

Run rules encoded in ``RUN_NEXT``: a run shorter than 3 must be extended; runs of length >= 3 are
extended while slots remain (closing one and starting another of the same colour at the same number is
never better); leftover slots start new runs. A state whose short runs cannot reach length 3 by number 13,
or cannot get tiles or jokers in the next cells of their colour, is dropped; so is a state that needs more
jokers than it has left to complete this number's groups (``GROUP_NEEDS``) and every colour's short runs
(about two thirds of the states before a group step, and many after it, were such dead ends); a colour that
cannot finish without a joker (``alive0``, a joker-free relaxation per colour) adds one to those needs. A run may start
with a joker only at numbers 8..11: elsewhere the joker can move to the run's high end, or the run can be
split with the joker ending its first part, keeping the tiles and not lowering the points. Every tile placed
counts at once, because a run that is started must be finished.

Compiled with numba on first use (``kernels()``) and cached on disk where a cache directory can be written
(``kernels`` says where), so importing the package stays cheap.
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np

from tableenvs.core.numba_cache import CACHE_ENV, cache_dir, index_path
from tableenvs.core.numba_cache import cached_jit as _cached_jit
from tableenvs.core.numba_cache import private_temporary_cache as private_temporary_cache  # its callers' old name

from .melds import split_groups

MAX_RUNS = 4
RUN_STATES = tuple(
    (k1, k2, k3)
    for total in range(MAX_RUNS + 1)
    for k1 in range(total + 1)
    for k2 in range(total - k1 + 1)
    for k3 in (total - k1 - k2,)
)
RUN_STATE_INDEX = {state: i for i, state in enumerate(RUN_STATES)}
RUN_SHAPE = np.array(RUN_STATES, dtype=np.int64)  # (k1, k2, k3) per run state index


def _run_next(state: tuple[int, int, int], slots: int) -> tuple[int, int, int] | None:
    """Run state after a number whose cell offers ``slots`` run places (real tiles plus jokers)."""
    k1, k2, k3 = state
    if slots < k1 + k2:
        return None
    extended = min(k3, slots - k1 - k2)
    started = slots - k1 - k2 - extended
    return (started, k1, k2 + extended)


def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Transition tables: run successor, numbers a run state still needs, accumulator step, group check."""
    run_next = np.full((len(RUN_STATES), MAX_RUNS + 1), -1, dtype=np.int64)
    for i, state in enumerate(RUN_STATES):
        for slots in range(MAX_RUNS + 1):
            nxt = _run_next(state, slots)
            if nxt is not None and sum(nxt) <= MAX_RUNS:
                run_next[i, slots] = RUN_STATE_INDEX[nxt]
    still_needed = np.array([2 if k1 else 1 if k2 else 0 for k1, k2, _ in RUN_STATES], dtype=np.int64)
    acc_next = np.full((25, 3), -1, dtype=np.int64)
    groups_ok = np.zeros((25, 3), dtype=np.bool_)
    for a1 in range(5):
        for a2 in range(5 - a1):
            acc = a1 + 5 * a2
            acc_next[acc, 0] = acc
            if a1 + a2 < 4:
                acc_next[acc, 1] = acc + 1
                acc_next[acc, 2] = acc + 5
            counts = (2,) * a2 + (1,) * a1 + (0,) * (4 - a1 - a2)
            for jokers in range(3):
                groups_ok[acc, jokers] = split_groups(counts, jokers) is not None
    return run_next, still_needed, acc_next, groups_ok


RUN_NEXT, STILL_NEEDED, ACC_NEXT, GROUPS_OK = _tables()


def _group_needs() -> np.ndarray:
    """``GROUP_NEEDS[step, acc, caps]``: the fewest jokers that complete this number's groups, or 3 if none can.

    After the cell of colour ``step`` (0..3) the accumulator is ``acc``; the colours after it can still put
    ``0..cap`` tiles each into groups, ``caps`` = sum of ``cap_i * 3 ** i`` over them in order (a cap is
    ``min(2, most tiles of that cell)``). The number's group step then needs ``groups_ok[acc', jokers]`` for the
    accumulator ``acc'`` they lead to. A state that needs more jokers than it has left is dead: the sweep drops it
    (exact: no completion exists, whatever the later cells do).
    """
    needs = np.full((4, 25, 27), 3, dtype=np.int64)
    for step in range(4):
        later = 3 - step
        for caps in range(3**later):
            cap = [caps // 3**i % 3 for i in range(later)]
            for acc in range(25):
                if ACC_NEXT[acc, 0] < 0:
                    continue  # not an accumulator
                reach = {acc}
                for c in cap:
                    reach = {ACC_NEXT[a, k] for a in reach for k in range(c + 1) if ACC_NEXT[a, k] >= 0}
                for jokers in range(3):
                    if any(GROUPS_OK[a, jokers] for a in reach):
                        needs[step, acc, caps] = jokers
                        break
    return needs


GROUP_NEEDS = _group_needs()
# Jokers a colour's open short runs need at its next two cells beyond the tiles there (``sweep``'s look-ahead), by
# ``3 * tiles at the next cell + tiles at the one after`` (0..2 each) and run state: ``k1 + k2`` pieces at the next
# cell, ``k1`` at the one after.
RUN_NEEDS = np.array(
    [
        [max(0, k1 + k2 - first) + max(0, k1 - second) for k1, k2, _ in RUN_STATES]
        for first in range(3)
        for second in range(3)
    ],
    dtype=np.int64,
)


def _group_splits() -> tuple[np.ndarray, np.ndarray]:
    """``split_groups`` as tables for ``meld_records``: per colour counts (index ``sum(count_c * 3 ** c)``) and
    jokers, how many groups (-1: none fits) and each group's colours (a bit mask) * 4 + its jokers, in order."""
    splits = np.zeros((81, 3, 4), dtype=np.int64)
    counts = np.full((81, 3), -1, dtype=np.int64)
    for index in range(81):
        colour_counts = tuple(index // 3**c % 3 for c in range(4))
        for jokers in range(3):
            split = split_groups(colour_counts, jokers)
            if split is None:
                continue
            counts[index, jokers] = len(split)
            for i, (colours, group_jokers) in enumerate(split):
                splits[index, jokers, i] = sum(1 << c for c in colours) * 4 + group_jokers
    return splits, counts


GROUP_SPLITS, GROUP_SPLIT_COUNTS = _group_splits()

# ``sweep``'s joker-free relaxation per colour (``alive0``): the run states with no short run (a colour may end
# there), and ``FINISH_SOURCES[slot set, chunk, bits]``, the run states that go at a cell giving ``s`` run slots, for
# some ``s`` in the slot set (bit ``s``, 0..2), to some run state ``6 * chunk + b`` with bit ``b`` set in ``bits``
# (a set of run states as an int64 mask is read six bits at a time: six lookups instead of a loop over 35 states).
FINISHED = sum(1 << r for r, (k1, k2, _) in enumerate(RUN_STATES) if k1 == 0 and k2 == 0)


def _finish_sources() -> np.ndarray:
    sources = np.zeros((8, 6, 64), np.int64)
    for slot_set in range(8):
        for r in range(len(RUN_STATES)):
            for s in range(3):
                r2 = RUN_NEXT[r, s]
                if slot_set >> s & 1 and r2 >= 0:
                    for bits in range(64):
                        if bits >> (r2 % 6) & 1:
                            sources[slot_set, r2 // 6, bits] |= 1 << r
    return sources


FINISH_SOURCES = _finish_sources()


def joker_free_rows(lo, hi, alive0):
    """Write ``alive0[c, n]`` (int64, 4 x 14, the caller's): bit ``r`` set if colour ``c`` can finish from run state
    ``r`` before its cell at 0-based number ``n`` (13: the end) without jokers, in the relaxation ``sweep`` describes.
    Compiled by ``kernels()`` before the kernels that call it (``sweep``, ``witness``), which read it as
    ``_JOKER_FREE_ROWS`` (an array of the caller's, not a returned one: 1% fewer instructions a step)."""
    alive0[:, 13] = FINISHED  # after 13 a colour may only end
    for n in range(12, -1, -1):
        tiles1 = 0  # colours with a tile at this number, and tiles up to two a colour
        tiles2 = 0
        for c in range(4):
            tiles1 += min(1, hi[c * 13 + n])
            tiles2 += min(2, hi[c * 13 + n])
        for c in range(4):
            t = c * 13 + n
            others1 = tiles1 - min(1, hi[t])
            others2 = tiles2 - min(2, hi[t])
            slot_counts = 0  # bit s: the cell can give s run slots (its tiles used less those given to groups)
            for used in range(lo[t], hi[t] + 1):
                for to_groups in range(min(used, 2) + 1):
                    if to_groups == 0 or (others1 >= 2 and (to_groups == 1 or others2 >= 4)):
                        slot_counts |= 1 << (used - to_groups)
            later = alive0[c, n + 1]
            row = 0
            for chunk in range(6):
                row |= FINISH_SOURCES[slot_counts, chunk, (later >> (6 * chunk)) & 63]
            alive0[c, n] = row


_JOKER_FREE_ROWS = joker_free_rows  # the compiled function once ``kernels()`` ran


def layer_entry(key, first, n_entries, max_entries, slots, slot_of, keys):
    """``sweep``'s entry of ``key`` in the layer being built (entries ``first..n_entries - 1``, found through the hash
    table ``slots``), added as entry ``n_entries`` if the layer has none: ``(index, added)``. The index is
    ``-OUT_OF_ENTRIES`` or ``-OUT_OF_HASH`` when adding would overfill the entries or half the hash table. Compiled by
    ``kernels()`` before ``sweep``, which reads it as ``_LAYER_ENTRY``."""
    hash_mask = slots.shape[0] - 1
    h = ((key * 0x7F4A7C159E3779B1) >> 17) & hash_mask
    while True:
        idx = slots[h]
        if idx < 0:
            if n_entries >= max_entries:
                return -OUT_OF_ENTRIES, False
            if n_entries - first >= slots.shape[0] >> 1:
                return -OUT_OF_HASH, False
            slots[h] = n_entries
            slot_of[n_entries] = h
            keys[n_entries] = key
            return n_entries, True
        if keys[idx] == key:
            return idx, False
        h = (h + 1) & hash_mask


_LAYER_ENTRY = layer_entry  # the compiled function once ``kernels()`` ran

# Status codes returned by ``sweep``.
OK = 0
OUT_OF_ENTRIES = 1  # the entry buffers are full
OUT_OF_EDGES = 2  # the edge buffers are full
OUT_OF_HASH = 3  # the layer being built fills half of the hash table


def sweep(
    lo,
    hi,
    base,
    weight,
    value_cap,
    record_edges,
    look_ahead,
    keys,
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
    resume_layer,
):
    """Forward pass over the 65 layers (13 numbers x (4 cells + 1 group step)).

    ``lo``/``hi``: per tile type the least/most tiles used on the table after the play (joker entry:
    jokers in total). ``base``: tiles already on the table, subtracted before weighting. ``weight``: score
    per played tile. Keeps, per state, the best score and the parent entry and choice that reached it.
    With ``record_edges``, also lists every transition (parent, child, the cell's tile type or -1 on a
    group step, and how many tiles of that type it uses above ``lo``) for ``walk``.

    The caller owns the buffers: entries (``keys``, ``slot_of`` and, without ``record_edges``, ``score``,
    ``parent``, ``choice``, all of one length; with ``record_edges`` the last three are not touched: the
    backward walk needs only the edges), ``layer_start`` (67), edges (``edge_parent``, ``edge_child``,
    ``edge_tile``, ``edge_extra``, ``edge_points``: the points the edge places, number x (tiles + jokers), of one
    length; unused without ``record_edges``) and ``edge_mark`` (66:
    the edge count when each layer began);
    the hash table ``slots`` (int32, a power of two long, every slot -1: the sweep frees each layer's slots
    before the next, so a table left by a finished sweep serves the next one). When a buffer is full the sweep
    stops and returns its status and the layer it was building (whose entries still hold their slots: the caller
    frees them, ``slot_of``); the caller grows that buffer (keeping the contents) and calls again with
    ``resume_layer`` set to that layer, which is rebuilt from its start: no earlier work is lost.

    ``forward`` (int64, as long as ``keys``; with ``record_edges`` only): each entry's ``reach`` forward word for
    ``lo`` itself (delta 0), written as its edges are made, so the first ``reach`` of a recorded sweep has nothing
    to walk forward (``solver.TurnSweep``: bounds ``[65, 66]``).

    The transition tables (``RUN_NEXT``, ``GROUP_NEEDS``, ...) are this module's constants, compiled into the code
    (six arguments fewer to type at every call). With ``look_ahead`` a transition is dropped when its state needs
    more jokers than it has left: the fewest that complete this number's groups plus, per colour, those its short
    runs need at the colour's next two cells beyond the tiles there (each joker fills one place, so the needs add
    up), and one more for a colour that cannot finish without a joker (``alive0`` below). Without it only the colour
    of the cell is checked, by its short runs (the tests compare the two: the look-ahead drops dead ends only).

    Returns ``(status, layer, n_entries, n_edges)``. Choices: cell layers ``used * 16 + to_groups * 4 +
    run_jokers``, group layers the number of group jokers.
    """
    run_next, run_shape, still_needed = RUN_NEXT, RUN_SHAPE, STILL_NEEDED  # constants of the compiled code
    acc_next, groups_ok, group_needs = ACC_NEXT, GROUPS_OK, GROUP_NEEDS
    max_jokers = hi[52]
    joker_weight = weight[52]
    max_entries = keys.shape[0]
    max_edges = edge_parent.shape[0]
    table_size = slots.shape[0]
    hash_mask = table_size - 1
    # Openings in ``solve`` (points in the state): a state that cannot reach ``value_cap`` with every later
    # tile and its unused jokers (at 13) is dropped, and after each layer only the Pareto front of points
    # and score is kept per position (below).
    prune = value_cap > 0 and not record_edges
    points_after = np.zeros(65, np.int64)  # most points the cells after each layer can add
    for later in range(63, -1, -1):
        points_after[later] = points_after[later + 1]
        if (later + 1) % 5 < 4:
            points_after[later] += ((later + 1) // 5 + 1) * hi[((later + 1) % 5) * 13 + (later + 1) // 5]
    # Jokers a colour's open short runs need at its next two cells (``k1 + k2`` pieces at the next, ``k1`` at the
    # one after) beyond the tiles there, by colour, next cell's number (0-based, 13: none) and run state. Needs of
    # different cells add up (a joker fills one place), so a state needing more than its free jokers is dead.
    run_needs = np.empty((4, 14, run_shape.shape[0]), np.int64)
    for c in range(4):
        for nx in range(14):
            first = hi[c * 13 + nx] if nx < 13 else 0
            second = hi[c * 13 + nx + 1] if nx < 12 else 0
            run_needs[c, nx, :] = RUN_NEEDS[3 * first + second]
    # Run states that can finish a colour without jokers (``alive0[c, n]`` bit ``r``: from run state ``r`` before the
    # colour's cell at 0-based number ``n``, 13: the end): a relaxation of the sweep per colour, which lets a tile join
    # this number's groups whenever the other colours have enough tiles there (one other tile each for a group of
    # three, four tiles for two groups). A colour outside its row needs a joker: in its runs or in a later group with
    # its tile (exact: the relaxation allows every move the sweep makes). That joker joins the counts of jokers a state
    # needs for one colour only (a later group's joker may serve several): the cell's colour at a cell layer (in its
    # move listings), any one colour at a group step. 12% fewer states in recorded sweeps (the solver's ninth pass).
    alive0 = np.empty((4, 14), np.int64)
    _JOKER_FREE_ROWS(lo, hi, alive0)
    cell_needs = np.empty(run_shape.shape[0], np.int64)  # this layer's ``run_needs`` row, see below
    layer_group_needs = np.empty(25, np.int64)  # this layer's ``group_needs`` by accumulator after the cell
    # A cell's transitions depend on the state only through its colour's run state and the accumulator, and on its
    # jokers through a bound: each (run state, accumulator) met in a layer lists its moves once (``moves``, from
    # ``move_first``, ``move_count`` of them, valid while ``move_layer`` is this layer) and its states filter them.
    # A move packs the state bits it sets (run state, run jokers, accumulator: bits 0..30), its choice code (bits
    # 32..37) and the jokers it needs (bits 40..41).
    listings = run_shape.shape[0] * 25
    move_layer = np.full(listings, -1, np.int64)
    move_first = np.empty(listings, np.int64)
    move_count = np.empty(listings, np.int64)
    moves = np.empty(listings * 18, np.int64)  # at most 18 moves (used, to_groups, run_jokers) each
    n_moves = 0
    if resume_layer == 0:
        keys[0] = 0
        if record_edges:
            forward[0] = REACHED | EXACT
        else:
            score[0] = 0
            parent[0] = -1
            choice[0] = -1
        layer_start[0] = 0
        layer_start[1] = 1
    n_entries = layer_start[resume_layer + 1]
    n_edges = edge_mark[resume_layer]
    for layer in range(resume_layer, 65):
        number0 = layer // 5
        number = number0 + 1
        step = layer - 5 * number0
        edge_mark[layer] = n_edges
        start = layer_start[layer]
        end = layer_start[layer + 1]
        if step < 4:
            t = step * 13 + number0
            shift = 6 * step
            low = lo[t]
            high = hi[t]
            on_table = base[t]
            tile_weight = weight[t]
            later_caps = 0  # what the later colours of this number can still put into groups (``GROUP_NEEDS``)
            for later in range(3, step, -1):
                later_caps = later_caps * 3 + min(2, hi[later * 13 + number0])
            # per run state after this cell: the jokers its short runs need at the colour's next two cells, or more
            # than any state has when its short runs cannot reach length 3 by number 13 (one load in the loop below)
            for state2 in range(run_shape.shape[0]):
                cell_needs[state2] = 9 if number + still_needed[state2] > 13 else run_needs[step, number, state2]
            for acc2 in range(25):
                layer_group_needs[acc2] = group_needs[step, acc2, later_caps] if look_ahead else 0
            n_moves = 0
        for e in range(start, end):
            key = keys[e]
            sc = 0 if record_edges else score[e]  # scores are kept only without record_edges
            jokers = (key >> 24) & 3
            acc = (key >> 26) & 31
            value = key >> 31
            free_jokers = max_jokers - jokers
            if step < 4:
                run_state = (key >> shift) & 63
                cleared = key & ~((63 << shift) | (3 << 24) | (31 << 26) | (2147483647 << 31))
                others_need = 0  # jokers the other colours' short runs need (their next cells: this number or next)
                if look_ahead:
                    for c in range(4):
                        if c != step:
                            others_need += run_needs[c, number0 + (c < step), (key >> (6 * c)) & 63]
                listed = run_state * 25 + acc
                if move_layer[listed] != layer:  # the first state of this run state and accumulator in the layer
                    move_layer[listed] = layer
                    move_first[listed] = n_moves
                    for used in range(low, high + 1):  # the sweep's loop order (ties are broken by it)
                        for to_groups in range(used + 1):
                            acc2 = acc_next[acc, to_groups]
                            if acc2 < 0:
                                continue
                            for run_jokers in range(3):
                                run_slots = used - to_groups + run_jokers
                                if run_slots > 4:
                                    break
                                run_state2 = run_next[run_state, run_slots]
                                if run_state2 < 0:
                                    continue
                                if number < 8 and run_shape[run_state2, 0] > used - to_groups:
                                    continue  # a run needs to start with a joker only at numbers 8..11
                                # jokers: the run jokers, this number's groups, this colour's short runs (at its next
                                # cells, and length 3 by 13) or one if it cannot finish without (``alive0``); a state
                                # also needs its other colours' (``others_need``)
                                colour_need = cell_needs[run_state2]
                                if look_ahead and colour_need == 0 and not alive0[step, number] >> run_state2 & 1:
                                    colour_need = 1
                                needs = run_jokers + layer_group_needs[acc2] + colour_need
                                if needs > max_jokers:
                                    continue
                                moves[n_moves] = (
                                    (run_state2 << shift)
                                    | (run_jokers << 24)
                                    | (acc2 << 26)
                                    | ((used * 16 + to_groups * 4 + run_jokers) << 32)
                                    | (needs << 40)
                                )
                                n_moves += 1
                    move_count[listed] = n_moves - move_first[listed]
                spare_jokers = free_jokers - others_need
                kept_bits = cleared | (jokers << 24)
                for m in range(move_first[listed], move_first[listed] + move_count[listed]):
                    move = moves[m]
                    if (move >> 40) > spare_jokers:
                        continue  # this number's groups or some colour's short runs cannot be completed
                    code = (move >> 32) & 63
                    used = code >> 4
                    run_jokers = code & 3
                    value2 = min(value_cap, value + number * (used + run_jokers))
                    if prune:
                        left = max_jokers - jokers - run_jokers
                        if value2 + points_after[layer] + 13 * left < value_cap:
                            continue
                    key2 = kept_bits + (move & 4294967295) + (value2 << 31)
                    sc2 = sc + tile_weight * (used - on_table) + joker_weight * run_jokers
                    # insert or improve key2 in the new layer
                    idx, added = _LAYER_ENTRY(key2, end, n_entries, max_entries, slots, slot_of, keys)
                    if idx < 0:
                        return -idx, layer, n_entries, n_edges
                    if added:
                        n_entries += 1
                        if record_edges:
                            forward[idx] = 0
                    if not record_edges and (added or sc2 > score[idx]):
                        score[idx] = sc2
                        parent[idx] = e
                        choice[idx] = code
                    if record_edges:
                        if n_edges >= max_edges:
                            return OUT_OF_EDGES, layer, n_entries, n_edges
                        edge_parent[n_edges] = e
                        edge_child[n_edges] = idx
                        edge_tile[n_edges] = t
                        edge_extra[n_edges] = used - low
                        edge_points[n_edges] = number * (used + run_jokers)
                        n_edges += 1
                        word = forward[e]  # ``reach``'s forward word for ``lo`` itself (delta 0)
                        if used > low:
                            word = (word | (1 << t)) & ~EXACT
                        forward[idx] |= word
            else:
                cleared = key & ~((3 << 24) | (31 << 26) | (2147483647 << 31))
                runs_need = 0
                # one more if some colour cannot finish without a joker (``alive0``) and its short runs need none; for
                # one colour only: a later group's joker may serve several colours
                lacks_joker = 0
                if look_ahead:
                    for c in range(4):
                        run_state = (key >> (6 * c)) & 63
                        colour_need = run_needs[c, number, run_state]
                        runs_need += colour_need
                        if colour_need == 0 and not alive0[c, number] >> run_state & 1:
                            lacks_joker = 1
                runs_need += lacks_joker
                for group_jokers in range(free_jokers + 1):
                    if runs_need > free_jokers - group_jokers:
                        break  # the short runs cannot be completed, or some colour lacks a joker
                    if not groups_ok[acc, group_jokers]:
                        continue
                    value2 = min(value_cap, value + number * group_jokers)
                    if prune:
                        left = max_jokers - jokers - group_jokers
                        if value2 + points_after[layer] + 13 * left < value_cap:
                            continue
                    key2 = cleared | ((jokers + group_jokers) << 24) | (value2 << 31)
                    sc2 = sc + joker_weight * group_jokers
                    idx, added = _LAYER_ENTRY(key2, end, n_entries, max_entries, slots, slot_of, keys)
                    if idx < 0:
                        return -idx, layer, n_entries, n_edges
                    if added:
                        n_entries += 1
                        if record_edges:
                            forward[idx] = 0
                    if not record_edges and (added or sc2 > score[idx]):
                        score[idx] = sc2
                        parent[idx] = e
                        choice[idx] = group_jokers
                    if record_edges:
                        if n_edges >= max_edges:
                            return OUT_OF_EDGES, layer, n_entries, n_edges
                        edge_parent[n_edges] = e
                        edge_child[n_edges] = idx
                        edge_tile[n_edges] = -1
                        edge_extra[n_edges] = 0
                        edge_points[n_edges] = number * group_jokers
                        n_edges += 1
                        forward[idx] |= forward[e]
        for idx in range(end, n_entries):
            slots[slot_of[idx]] = -1
        if prune and n_entries - end > 1:
            # Pareto front of the layer: entries with the same position (the key without its points) have the
            # same futures (transitions, score added, points added then capped), so one with at least the
            # points and at least the score of another is as good in every future. Keep, per position, the
            # entries that have more points than every better-scored one; kept entries stay in sweep order.
            count = n_entries - end
            first = np.zeros(value_cap + 2, np.int64)  # counting sort, most points first (points <= value_cap)
            for i in range(end, n_entries):
                first[value_cap - (keys[i] >> 31) + 1] += 1
            for v in range(1, value_cap + 2):
                first[v] += first[v - 1]
            order = np.empty(count, np.int64)
            for i in range(end, n_entries):
                v = value_cap - (keys[i] >> 31)
                order[first[v]] = i - end
                first[v] += 1
            kept = np.zeros(count, np.bool_)
            for j in range(count):
                i = end + order[j]
                position = keys[i] & 2147483647
                h = ((position * 0x7F4A7C159E3779B1) >> 17) & hash_mask
                while True:
                    best = slots[h]  # the best-scored entry of this position so far (with more points)
                    if best < 0:
                        slots[h] = i
                        slot_of[i] = h
                        kept[order[j]] = True
                        break
                    if keys[best] & 2147483647 == position:
                        if score[i] > score[best]:
                            slots[h] = i
                            slot_of[i] = h
                            kept[order[j]] = True
                        break
                    h = (h + 1) & hash_mask
            w = end
            for i in range(count):
                if kept[i]:
                    r = end + i
                    slots[slot_of[r]] = -1
                    keys[w] = keys[r]
                    score[w] = score[r]
                    parent[w] = parent[r]
                    choice[w] = choice[r]
                    w += 1
            n_entries = w
        layer_start[layer + 2] = n_entries
    return OK, 65, n_entries, n_edges


def walk(
    delta,
    lo_jokers,
    value_cap,
    n_entries,
    layer_start,
    keys,
    n_edges,
    edge_parent,
    edge_child,
    edge_tile,
    edge_extra,
    edge_mark,
    edge_points,
    best_from_root,
    best_to_end,
    exact_to_end,
    old_delta,
    whole,
):
    """The ``playable`` mask of a recorded sweep, and whether a play of exactly the lower bounds is accepted.

    The sweep was recorded with lower bounds ``lo`` and without points in its states (``value_cap`` 0); the
    question is asked for ``lo + delta`` (``delta`` >= 0 on the numbered types, zero for a fresh sweep;
    ``lo_jokers`` is the joker bound asked) and an opening worth ``value_cap`` points (0: no points needed).
    A larger lower bound only removes transitions (those using fewer than ``lo + delta`` tiles of their
    cell's type), so the recorded edges answer it: an edge is *allowed* when its use above ``lo`` is at
    least ``delta`` of its type. A final state is accepted when it used at least ``lo_jokers`` jokers.

    Points are additive along a path (an edge places ``number * (tiles + jokers)`` points, ``edge_points``;
    edges are stored layer by layer, so one pass over them in order is a pass over the layers), so instead of
    carrying them in the state the walk keeps, per entry, the most points of an allowed path from the root
    (``best_from_root``, forward over the edges; -1: unreachable) and to an accepted final state
    (``best_to_end``, backward; -1: none), both capped at ``value_cap``. An allowed edge lies on an accepted
    path worth ``value_cap`` iff ``best_from_root[parent] + points + best_to_end[child] >= value_cap``; such an
    edge that uses more than ``lo + delta`` of its type makes that type playable. The joker is playable when
    an accepted final state with more than ``lo_jokers`` jokers is reached with ``value_cap`` points. The
    same backward walk along edges using exactly ``lo + delta`` (and group steps) from final states with
    exactly ``lo_jokers`` jokers gives the most points of a play of exactly ``lo + delta``: it is accepted
    (the test of ``is_valid_play``) iff the root gets ``value_cap`` or more. Memory: three int16 per entry.

    Whole or incremental. The caller owns the per-entry arrays ``best_from_root``, ``best_to_end`` and
    ``exact_to_end`` (int16, one per entry). With ``whole`` they are new (``best_from_root`` all 0: without
    restrictions and points every recorded entry is reachable with 0 points, so the forward pass starts at the first
    restricted cell; the other two any values) and ``old_delta`` is ``delta``. Otherwise they hold the last walk of
    this same recorded sweep, for ``old_delta <= delta``, and become this walk's in place: only the cells where
    ``delta`` grew lose allowed edges, from layer ``first`` to layer ``last``, so an entry's points from the root
    change only after ``first`` and its points to an accepted end only up to ``last`` (all of them when the joker
    bound grew: the accepted final states change). The forward pass runs from ``first`` on and the backward pass
    from ``last`` down, and each edge's share of the mask and of ``kept`` is counted in the pass that sees both its
    sides final (the forward pass after ``last``, the backward pass up to it). An entry cut off from the root may
    keep a stale ``best_to_end`` after ``last``; every use of it goes through a reachable parent.

    Returns ``(mask, exact, kept)``: ``kept`` is how many edges lie on an accepted play (what ``prune`` keeps, by
    ``best_from_root`` and ``best_to_end``); ``exact_to_end`` (per entry, the most points of a path of exactly ``lo
    + delta`` to an accepted final state, -1: none) gives ``exact`` at the root.
    """
    first = 65
    last = -1
    for t in range(52):
        if delta[t] != old_delta[t] or (whole and delta[t] > 0):
            layer = (t % 13) * 5 + t // 13
            first = min(first, layer)
            last = max(last, layer)
    if whole and value_cap > 0:
        first = 0  # points from the root: a forward pass over every edge
    if whole or delta[52] != old_delta[52] or last < 0:
        last = 64  # new accepted final states (or the same question): every entry's way to the end again
    mask = np.zeros(53, np.bool_)
    kept = 0
    if first < 65:
        best_from_root[layer_start[first + 1] : layer_start[66]] = -1
        for k in range(edge_mark[first], n_edges):
            p = edge_parent[k]
            got = best_from_root[p]
            if got < 0:
                continue
            tile = edge_tile[k]
            if tile >= 0 and edge_extra[k] < delta[tile]:
                continue
            c = edge_child[k]
            reached = min(value_cap, got + edge_points[k])
            if reached > best_from_root[c]:
                best_from_root[c] = reached
            if k >= (edge_mark[last + 1] if last < 64 else n_edges) and best_to_end[c] >= 0:
                # after ``last``: the way to the end is unchanged, so this edge's share is final now
                on_play = got + min(value_cap, edge_points[k] + best_to_end[c]) >= value_cap
                kept += on_play
                if on_play and tile >= 0 and edge_extra[k] > delta[tile]:
                    mask[tile] = True
    for idx in range(layer_start[65], layer_start[66]):
        jokers = (keys[idx] >> 24) & 3
        best_to_end[idx] = 0 if jokers >= lo_jokers else -1
        exact_to_end[idx] = 0 if jokers == lo_jokers else -1
        if jokers > lo_jokers and best_from_root[idx] >= value_cap:
            mask[52] = True
    best_to_end[: layer_start[last + 1]] = -1
    exact_to_end[: layer_start[last + 1]] = -1
    for k in range((edge_mark[last + 1] if last < 64 else n_edges) - 1, -1, -1):
        c = edge_child[k]
        to_end = best_to_end[c]
        if to_end < 0:
            continue
        tile = edge_tile[k]
        above = 0
        p = edge_parent[k]
        if tile >= 0:
            above = edge_extra[k] - delta[tile]
            if above < 0:
                continue
        from_root = best_from_root[p]
        if from_root < 0:
            continue
        points = edge_points[k]
        through = min(value_cap, points + to_end)
        if through > best_to_end[p]:
            best_to_end[p] = through
        on_play = from_root + through >= value_cap
        kept += on_play
        if above > 0:
            if on_play:
                mask[tile] = True
        elif exact_to_end[c] >= 0:
            exact = min(value_cap, points + exact_to_end[c])
            if exact > exact_to_end[p]:
                exact_to_end[p] = exact
    return mask, exact_to_end[0] >= value_cap, kept


# ``reach``'s per-entry words: bits 0..51 the tile types some allowed path through the entry uses above their bound
# (on its side of the entry), bit 52 (backward words only) an accepted end with more jokers than the bound, and:
REACHED = 1 << 62  # the entry is reached (forward: from the root; backward: it reaches an accepted final state)
EXACT = 1 << 61  # along a path that uses exactly the bounds (forward: from the root; backward: to a final state
# with exactly the joker bound)
JOKER_BIT = 1 << 52


def reach(
    delta,
    old_delta,
    lo_jokers,
    n_entries,
    layer_start,
    keys,
    n_edges,
    edge_parent,
    edge_child,
    edge_tile,
    edge_extra,
    edge_mark,
    forward,
    backward,
    bounds,
    cut,
):
    """The ``playable`` mask and exact-play flag of a recorded sweep without points (``value_cap`` 0), answered at
    one *cut*: a layer boundary every path crosses once. The sweep is given as ``n_entries .. edge_mark``, the
    arguments ``exact_choices`` takes too (``sweep.graph``).

    Asked for ``lo + delta`` like ``walk`` (same edges allowed, same accepted final states), but instead of points
    each entry keeps one word (``REACHED``, ``EXACT``, tile bits): ``forward`` over the allowed paths from the root
    to it, ``backward`` over those from it to an accepted final state. A type is playable iff some entry of the cut
    is reached both ways and one of its two words has that type's bit (the path through it uses that type above
    ``lo + delta`` on one side of the cut); the joker likewise by ``JOKER_BIT``; ``lo + delta`` itself is a play iff
    some entry of the cut has ``EXACT`` both ways.

    Incremental: ``bounds = [F, B]`` says ``forward`` is this sweep's for ``old_delta`` at boundaries ``0..F`` and
    ``backward`` at ``B..65`` (nothing known: ``[-1, 66]``; a sweep that wrote its forward words, ``sweep``'s
    ``forward``: ``[65, 66]``). Staging more at a cell only changes the edges of
    that cell's layer ``L``, so the words before it (forward, boundaries ``<= L``) and after it (backward, ``>=
    L + 1``) stay; a staged joker changes the accepted final states, so every backward word. The pass then covers
    only the layers between the boundaries still known and ``cut`` (``-1``: the boundary that splits the edges in
    half, which keeps the next question's pass short whatever cell it stages), and leaves ``bounds`` at
    ``[cut, cut]`` or wider. Returns ``(mask, exact)``.
    """
    first_forward, last_backward = bounds[0], bounds[1]
    for t in range(52):
        if delta[t] != old_delta[t]:
            layer = (t % 13) * 5 + t // 13
            first_forward = min(first_forward, layer)
            last_backward = max(last_backward, layer + 1)
    if delta[52] != old_delta[52]:
        last_backward = 66
    if cut < 0:  # the boundary nearest the middle of the edges among those the passes must reach anyway
        cut = 0
        while cut < 64 and edge_mark[cut + 1] * 2 < n_edges:
            cut += 1
        known_backward = min(last_backward, 65)
        cut = min(max(cut, min(first_forward, known_backward)), max(first_forward, known_backward))
    if first_forward < 0:
        forward[0] = REACHED | EXACT
        first_forward = 0
    if first_forward < cut:
        forward[layer_start[first_forward + 1] : layer_start[cut + 1]] = 0
        stop = edge_mark[cut] if cut < 65 else n_edges
        for k in range(edge_mark[first_forward], stop):
            word = forward[edge_parent[k]]
            if word == 0:
                continue
            tile = edge_tile[k]
            if tile >= 0:
                above = edge_extra[k] - delta[tile]
                if above < 0:
                    continue
                if above > 0:
                    word = (word | (1 << tile)) & ~EXACT
            forward[edge_child[k]] |= word
        first_forward = cut
    if last_backward == 66:
        for idx in range(layer_start[65], layer_start[66]):
            jokers = (keys[idx] >> 24) & 3
            if jokers < lo_jokers:
                backward[idx] = 0
            elif jokers == lo_jokers:
                backward[idx] = REACHED | EXACT
            else:
                backward[idx] = REACHED | JOKER_BIT
        last_backward = 65
    if last_backward > cut:
        backward[layer_start[cut] : layer_start[last_backward]] = 0
        start = edge_mark[last_backward] if last_backward < 65 else n_edges
        for k in range(start - 1, edge_mark[cut] - 1, -1):
            word = backward[edge_child[k]]
            if word == 0:
                continue
            tile = edge_tile[k]
            if tile >= 0:
                above = edge_extra[k] - delta[tile]
                if above < 0:
                    continue
                if above > 0:
                    word = (word | (1 << tile)) & ~EXACT
            backward[edge_parent[k]] |= word
        last_backward = cut
    bounds[0] = first_forward
    bounds[1] = last_backward
    bits = 0
    exact = False
    for idx in range(layer_start[cut], layer_start[cut + 1]):
        ahead = forward[idx]
        behind = backward[idx]
        if ahead != 0 and behind != 0:
            bits |= ahead | behind
            if ahead & behind & EXACT:
                exact = True
    mask = np.zeros(53, np.bool_)
    for t in range(53):
        mask[t] = (bits >> t) & 1
    return mask, exact


def prune(
    delta,
    value_cap,
    n_entries,
    layer_start,
    keys,
    n_edges,
    edge_parent,
    edge_child,
    edge_tile,
    edge_extra,
    edge_mark,
    edge_points,
    best_from_root,
    best_to_end,
):
    """A copy of a recorded sweep keeping only the edges on an accepted path of the question ``walk`` answered.

    ``best_from_root`` and ``best_to_end`` are ``walk``'s for ``delta`` and ``value_cap``. An edge is kept
    when it is allowed (uses at least ``lo + delta`` of its type), its parent is reachable and
    ``best_from_root[parent] + points + best_to_end[child] >= value_cap``: it lies on an accepted play worth
    ``value_cap``. Every later question of the turn asks for a larger ``delta`` (and as many jokers or more),
    which only removes edges and accepted final states, so its accepted paths are among the kept ones and the
    pruned copy answers it exactly as the whole sweep would. Entries are renumbered in order (the root stays
    0, layers stay contiguous); ``edge_extra`` keeps its meaning (above the recorded ``lo``).

    Returns ``(n_entries, layer_start, keys, n_edges, edge_parent, edge_child, edge_tile, edge_extra,
    edge_mark, edge_points)`` of the copy, arrays exactly sized.
    """
    forward = best_from_root.shape[0] == n_entries and n_entries > 1
    keep = np.zeros(n_edges, np.bool_)
    used = np.zeros(n_entries, np.bool_)
    used[0] = True
    kept_edges = 0
    for k in range(n_edges):
        c = edge_child[k]
        to_end = best_to_end[c]
        if to_end < 0:
            continue
        p = edge_parent[k]
        from_root = best_from_root[p] if forward else 0
        if from_root < 0:
            continue
        tile = edge_tile[k]
        if tile >= 0 and edge_extra[k] < delta[tile]:
            continue
        if from_root + min(value_cap, edge_points[k] + to_end) < value_cap:
            continue
        keep[k] = True
        used[p] = True
        used[c] = True
        kept_edges += 1
    renumber = np.full(n_entries, -1, np.int32)
    new_start = np.zeros(67, np.int64)
    kept_entries = 0
    layer = 0
    for idx in range(n_entries):
        while layer < 66 and layer_start[layer + 1] <= idx:
            layer += 1
            new_start[layer] = kept_entries
        if used[idx]:
            renumber[idx] = kept_entries
            kept_entries += 1
    while layer < 66:
        layer += 1
        new_start[layer] = kept_entries
    new_keys = np.empty(kept_entries, np.int64)
    for idx in range(n_entries):
        if used[idx]:
            new_keys[renumber[idx]] = keys[idx]
    new_parent = np.empty(kept_edges, np.int32)
    new_child = np.empty(kept_edges, np.int32)
    new_tile = np.empty(kept_edges, np.int8)
    new_extra = np.empty(kept_edges, np.int8)
    new_points = np.empty(kept_edges, np.int8)
    new_mark = np.zeros(66, np.int64)
    w = 0
    for layer in range(65):
        new_mark[layer] = w
        stop = edge_mark[layer + 1] if layer < 64 else n_edges
        for k in range(edge_mark[layer], stop):
            if keep[k]:
                new_parent[w] = renumber[edge_parent[k]]
                new_child[w] = renumber[edge_child[k]]
                new_tile[w] = edge_tile[k]
                new_extra[w] = edge_extra[k]
                new_points[w] = edge_points[k]
                w += 1
    return (
        kept_entries,
        new_start,
        new_keys,
        kept_edges,
        new_parent,
        new_child,
        new_tile,
        new_extra,
        new_mark,
        new_points,
    )


def exact_choices(
    delta,
    lo,
    lo_jokers,
    n_entries,
    layer_start,
    keys,
    n_edges,
    edge_parent,
    edge_child,
    edge_tile,
    edge_extra,
    edge_mark,
    backward,
    known_from,
):
    """The choices of the first path in sweep order that plays exactly ``lo + delta``, on a recorded sweep.

    A depth-first search from the root over the edges that use exactly ``lo + delta`` of their type (and the group
    steps), trying each entry's edges in order (edges of one entry are stored together, in the order of the sweep's
    loops, so ``edge_parent`` never decreases: an entry's first edge is found by bisection) and remembering the
    entries found to have no such path to a final state with exactly ``lo_jokers`` jokers. It only visits the
    exact play's few partitions, not the whole sweep. The first path it completes is the path a scored sweep of the
    table after the play (``lo = hi = lo + delta``, no weights) backtracks: its entries are in the order of their
    first path in loop order and each keeps the parent and choice that first reached it, so its first accepted
    final state and that state's chain are the first accepted path in loop order. Choice codes as in ``sweep``:
    ``used * 16 + to_groups * 4 + run_jokers`` (``to_groups`` read off the accumulator, ``run_jokers`` off the
    jokers of the two keys), group layers the jokers added. ``backward``: ``reach``'s backward words for ``delta``,
    valid at boundaries ``known_from``..65 (66: none); there a child without ``EXACT`` has no such path and is not
    entered. Returns ``(found, choices)``.
    """
    choices = np.zeros(65, np.int64)
    dead = np.zeros(n_entries, np.bool_)
    path = np.zeros(66, np.int64)  # the entry at each boundary of the path being tried
    next_edge = np.zeros(65, np.int64)  # per layer of that path: the next edge of its entry to try
    layer = 0
    next_edge[0] = 0
    while True:
        current = path[layer]
        if layer == 65:
            if (keys[current] >> 24) & 3 == lo_jokers:
                return True, choices
            dead[current] = True
            layer -= 1
            continue
        stop = edge_mark[layer + 1] if layer < 64 else n_edges
        k = next_edge[layer]
        advanced = False
        while k < stop and edge_parent[k] == current:
            child = edge_child[k]
            tile = edge_tile[k]
            extra = edge_extra[k]
            k += 1
            if dead[child] or (tile >= 0 and extra != delta[tile]):
                continue
            if layer + 1 >= known_from and not backward[child] & EXACT:
                continue  # the backward words know it: no exact play through it
            next_edge[layer] = k
            key, key2 = keys[current], keys[child]
            jokers_added = ((key2 >> 24) & 3) - ((key >> 24) & 3)
            if tile < 0:
                choices[layer] = jokers_added
            else:
                acc_step = ((key2 >> 26) & 31) - ((key >> 26) & 31)  # 0, 1 or 5 for 0, 1 or 2 tiles to groups
                to_groups = 0 if acc_step == 0 else (1 if acc_step == 1 else 2)
                choices[layer] = (lo[tile] + extra) * 16 + to_groups * 4 + jokers_added
            layer += 1
            path[layer] = child
            if layer < 65:  # the child's first edge: bisect its layer's edges by parent
                low = edge_mark[layer]
                high = edge_mark[layer + 1] if layer < 64 else n_edges
                while low < high:
                    middle = (low + high) // 2
                    if edge_parent[middle] < child:
                        low = middle + 1
                    else:
                        high = middle
                next_edge[layer] = low
            advanced = True
            break
        if not advanced:
            dead[current] = True
            if layer == 0:
                return False, choices
            layer -= 1


# ``witness`` status codes (besides 1: found, 0: none exists).
OVER_BUDGET = -1  # it visited ``budget`` states without deciding


def witness(
    lo,
    hi,
    candidates,
    budget,
    dead,
    dead_fill,
    share_dead,
    found,
    choices,
):
    """Depth-first searches for accepted paths of ``sweep``'s transitions (bounds ``lo``/``hi``, look-ahead on, no
    points), instead of the whole sweep. For each ``wanted`` in ``candidates``: with a tile type, a path that uses one
    of its tiles above ``lo`` (those transitions tried first at its cell; the joker, 52: an accepted end with more
    jokers than ``lo[52]``, tried in loop order); with -1, any path in the sweep's loop order,
    so the first one found is the first in sweep order (the path a scored sweep of ``lo = hi`` backtracks: the
    published arrangement, whose choice codes are left in ``choices``).

    The transitions are a copy of ``sweep``'s inner loop (a shared numba helper would have to be compiled before its
    callers); ``tests/rummikub/test_witness.py`` checks every answer against the sweep's. ``dead`` is an
    open-addressing set (int64, a power of two long, -1 empty) of ``layer << 40 | key`` for states known to have no
    accepted end, read by every search; with ``share_dead`` the searches add those they prove. A larger lower bound
    only removes transitions, so a state dead for a turn's question is dead for its later ones (staged tiles only
    grow); a smaller upper bound removes transitions too, so a commit check (``hi = lo``) reads the set but must not
    add to it (``share_dead`` off: it keeps what it proves to itself). ``dead_fill[0]`` counts the set's entries.
    ``found[i]`` becomes 1 (a path) or 0 (none) for each candidate in turn; the searches stop at the first that visits
    the ``budget``-th state in all (or would fill half of ``dead``), leaving it and the rest at ``OVER_BUDGET``.
    Returns the states visited.
    """
    run_next, run_shape, still_needed = RUN_NEXT, RUN_SHAPE, STILL_NEEDED  # constants of the compiled code
    acc_next, groups_ok, group_needs = ACC_NEXT, GROUPS_OK, GROUP_NEEDS
    max_jokers = hi[52]
    lo_jokers = lo[52]
    run_needs = np.empty((4, 14, run_shape.shape[0]), np.int64)  # as in ``sweep``
    for c in range(4):
        for nx in range(14):
            first = hi[c * 13 + nx] if nx < 13 else 0
            second = hi[c * 13 + nx + 1] if nx < 12 else 0
            run_needs[c, nx, :] = RUN_NEEDS[3 * first + second]
    alive0 = np.empty((4, 14), np.int64)
    _JOKER_FREE_ROWS(lo, hi, alive0)  # as in ``sweep``
    dead_mask = dead.shape[0] - 1
    unwanted_size = 1024
    while unwanted_size < 4 * budget:
        unwanted_size *= 2
    unwanted = np.full(unwanted_size, -1, np.int64)  # dead for one search only (see below)
    unwanted_mask = unwanted_size - 1
    unwanted_slots = np.empty(unwanted_size, np.int64)  # the slots it used, emptied before the next search
    unwanted_used = 0
    move_key = np.empty((65, 27), np.int64)
    move_tile = np.empty((65, 27), np.int64)
    move_extra = np.empty((65, 27), np.int64)
    move_code = np.empty((65, 27), np.int64)
    move_count = np.zeros(65, np.int64)
    cursor = np.zeros(65, np.int64)
    path_key = np.zeros(66, np.int64)
    have = np.zeros(66, np.bool_)
    found[:] = OVER_BUDGET
    visits = 0
    for candidate in range(candidates.shape[0]):
        wanted = candidates[candidate]
        for i in range(unwanted_used):
            unwanted[unwanted_slots[i]] = -1
        unwanted_used = 0
        have[0] = wanted < 0
        layer = 0
        expand = True
        status = OVER_BUDGET
        while True:
            if expand:  # the transitions of ``path_key[layer]``, in the sweep's loop order (``wanted`` ones first)
                key = path_key[layer]
                number0 = layer // 5
                number = number0 + 1
                step = layer - 5 * number0
                jokers = (key >> 24) & 3
                acc = (key >> 26) & 31
                free_jokers = max_jokers - jokers
                count = 0
                if step == 4:
                    cleared = key & ~((3 << 24) | (31 << 26))
                    runs_need = 0
                    lacks_joker = 0  # as in ``sweep``
                    for c in range(4):
                        run_state = (key >> (6 * c)) & 63
                        colour_need = run_needs[c, number, run_state]
                        runs_need += colour_need
                        if colour_need == 0 and not alive0[c, number] >> run_state & 1:
                            lacks_joker = 1
                    runs_need += lacks_joker
                    for group_jokers in range(free_jokers + 1):
                        if runs_need > free_jokers - group_jokers:
                            break
                        if not groups_ok[acc, group_jokers]:
                            continue
                        move_key[layer, count] = cleared | ((jokers + group_jokers) << 24)
                        move_tile[layer, count] = -1
                        move_extra[layer, count] = 0
                        move_code[layer, count] = group_jokers
                        count += 1
                else:
                    t = step * 13 + number0
                    shift = 6 * step
                    later_caps = 0
                    for later in range(3, step, -1):
                        later_caps = later_caps * 3 + min(2, hi[later * 13 + number0])
                    run_state = (key >> shift) & 63
                    cleared = key & ~((63 << shift) | (3 << 24) | (31 << 26))
                    others_need = 0
                    for c in range(4):
                        if c != step:
                            others_need += run_needs[c, number0 + (c < step), (key >> (6 * c)) & 63]
                    for used in range(lo[t], hi[t] + 1):
                        for to_groups in range(used + 1):
                            acc2 = acc_next[acc, to_groups]
                            if acc2 < 0:
                                continue
                            needed = others_need + group_needs[step, acc2, later_caps]
                            for run_jokers in range(min(2, free_jokers) + 1):
                                if needed > free_jokers - run_jokers:
                                    break
                                run_slots = used - to_groups + run_jokers
                                if run_slots > 4:
                                    break
                                run_state2 = run_next[run_state, run_slots]
                                if run_state2 < 0 or number + still_needed[run_state2] > 13:
                                    continue
                                if number < 8 and run_shape[run_state2, 0] > used - to_groups:
                                    continue
                                colour_need = run_needs[step, number, run_state2]
                                if colour_need == 0 and not alive0[step, number] >> run_state2 & 1:
                                    colour_need = 1
                                if colour_need + needed > free_jokers - run_jokers:
                                    continue
                                move_key[layer, count] = (
                                    cleared | (run_state2 << shift) | ((jokers + run_jokers) << 24) | (acc2 << 26)
                                )
                                move_tile[layer, count] = t
                                move_extra[layer, count] = used - lo[t]
                                move_code[layer, count] = used * 16 + to_groups * 4 + run_jokers
                                count += 1
                    if t == wanted and not have[layer]:  # its tiles above ``lo`` first, each part in loop order
                        first = 0
                        for i in range(count):
                            if move_extra[layer, i] > 0:
                                k2, x2, c2 = move_key[layer, i], move_extra[layer, i], move_code[layer, i]
                                for j in range(i, first, -1):
                                    move_key[layer, j] = move_key[layer, j - 1]
                                    move_extra[layer, j] = move_extra[layer, j - 1]
                                    move_code[layer, j] = move_code[layer, j - 1]
                                move_key[layer, first], move_extra[layer, first], move_code[layer, first] = k2, x2, c2
                                first += 1
                move_count[layer] = count
                cursor[layer] = 0
                expand = False
            if cursor[layer] == move_count[layer]:  # every transition tried: no accepted end from here
                item = (layer << 40) | path_key[layer]
                if have[layer] and share_dead:
                    if 2 * (dead_fill[0] + 1) > dead.shape[0]:
                        return visits
                    h = ((item * 0x7F4A7C159E3779B1) >> 17) & dead_mask
                    while dead[h] >= 0 and dead[h] != item:
                        h = (h + 1) & dead_mask
                    if dead[h] < 0:
                        dead[h] = item
                        dead_fill[0] += 1
                else:  # dead for this search only: through a ``wanted`` tile, or under this commit check's bounds
                    h = ((item * 0x7F4A7C159E3779B1) >> 17) & unwanted_mask
                    while unwanted[h] >= 0 and unwanted[h] != item:
                        h = (h + 1) & unwanted_mask
                    if unwanted[h] < 0:
                        unwanted[h] = item
                        unwanted_slots[unwanted_used] = h
                        unwanted_used += 1
                if layer == 0:
                    status = 0
                    break
                layer -= 1
                continue
            i = cursor[layer]
            cursor[layer] = i + 1
            key2 = move_key[layer, i]
            have2 = have[layer] or (move_tile[layer, i] == wanted and move_extra[layer, i] > 0)
            visits += 1
            if visits > budget:
                return visits
            choices[layer] = move_code[layer, i]
            if layer == 64:
                final_jokers = (key2 >> 24) & 3
                if final_jokers > lo_jokers if wanted == 52 else have2 and final_jokers >= lo_jokers:
                    status = 1
                    break
                continue
            item = ((layer + 1) << 40) | key2
            h = ((item * 0x7F4A7C159E3779B1) >> 17) & dead_mask
            known_dead = False
            while dead[h] >= 0:
                if dead[h] == item:
                    known_dead = True
                    break
                h = (h + 1) & dead_mask
            if not known_dead and (not have2 or not share_dead):
                h = ((item * 0x7F4A7C159E3779B1) >> 17) & unwanted_mask
                while unwanted[h] >= 0:
                    if unwanted[h] == item:
                        known_dead = True
                        break
                    h = (h + 1) & unwanted_mask
            if known_dead:
                continue
            layer += 1
            path_key[layer] = key2
            have[layer] = have2
            expand = True
        found[candidate] = status
    return visits


def meld_records(choices, group_splits, group_split_counts):
    """The melds of a path's per-layer choices (``sweep``'s codes), as flat records in the order they close.

    Replays the sweep's run rule per colour: open runs shorter than 3 take the number's run pieces first (the open
    runs sorted by length, shortest first, keeping the order of equals), then runs of length >= 3; runs left
    without a piece close; leftover pieces start runs (real tiles before jokers at each number). After the four
    cells of a number its group tiles and group jokers are split into groups (``split_groups``, as the tables
    ``GROUP_SPLITS`` / ``GROUP_SPLIT_COUNTS``); the runs still open after 13 close last, colour by colour.

    One int key per meld (``MELD_*`` below): a run ``first type | n << 6 | joker places << 10`` (it stands for ``first
    .. first + n - 1``, the tile at place ``r`` a joker if bit ``r`` of the places is set, else ``first + r``), a group
    ``GROUP_KEY | number | colour bit mask << 4 | jokers << 8``. Returns the keys (int64) and how many.
    """
    out = np.empty(64, np.int64)  # at most 53 melds (3 tiles each)
    size = 0
    run_first = np.zeros((4, 4), np.int64)  # per colour, per open run (in list order): its first cell's type
    run_length = np.zeros((4, 4), np.int64)
    run_tiles = np.zeros((4, 4, 13), np.int64)

    def run_key(colour, i):  # the key of open run ``i`` of ``colour``
        n = run_length[colour, i]
        places = 0
        for r in range(n):
            if run_tiles[colour, i, r] == 52:
                places |= 1 << r
        return run_first[colour, i] | (n << 6) | (places << 10)

    open_runs = np.zeros(4, np.int64)
    for number0 in range(13):
        layer = number0 * 5
        groups_index = 0
        for colour in range(4):
            code = choices[layer + colour]
            runs = open_runs[colour]
            if code == 0 and runs == 0:
                continue
            to_groups = (code >> 2) & 3
            groups_index += to_groups * 3**colour
            real = (code >> 4) - to_groups
            pieces = real + (code & 3)
            for i in range(1, runs):  # stable insertion sort by length, shortest first
                j = i
                while j > 0 and run_length[colour, j - 1] > run_length[colour, j]:
                    for r in range(max(run_length[colour, j - 1], run_length[colour, j])):
                        swap = run_tiles[colour, j - 1, r]
                        run_tiles[colour, j - 1, r] = run_tiles[colour, j, r]
                        run_tiles[colour, j, r] = swap
                    run_first[colour, j - 1], run_first[colour, j] = run_first[colour, j], run_first[colour, j - 1]
                    run_length[colour, j - 1], run_length[colour, j] = run_length[colour, j], run_length[colour, j - 1]
                    j -= 1
            for i in range(pieces, runs):  # runs without a piece close
                out[size] = run_key(colour, i)
                size += 1
            runs = min(runs, pieces)
            t = colour * 13 + number0
            for k in range(pieces):
                tile = t if k < real else 52
                if k >= runs:
                    run_first[colour, k] = t
                    run_length[colour, k] = 0
                    runs += 1
                run_tiles[colour, k, run_length[colour, k]] = tile
                run_length[colour, k] += 1
            open_runs[colour] = runs
        group_jokers = choices[layer + 4]
        if group_jokers or groups_index:
            for i in range(group_split_counts[groups_index, group_jokers]):
                split = group_splits[groups_index, group_jokers, i]
                out[size] = GROUP_KEY | (number0 + 1) | ((split >> 2) << 4) | ((split & 3) << 8)
                size += 1
    for colour in range(4):
        for i in range(open_runs[colour]):
            out[size] = run_key(colour, i)
            size += 1
    return out, size


GROUP_KEY = 1 << 30  # ``meld_records``: the bit that marks a group's key


def score_edges(weight, base, lo, n_entries, keys, n_edges, edge_parent, edge_child, edge_tile, edge_extra):
    """``score``, ``parent`` and ``choice`` per entry of a recorded sweep, as the scored sweep of the same bounds
    would have kept them (for ``best_path``).

    A recorded sweep (``value_cap`` 0) and a scored one of the same ``lo``/``hi`` make the same entries in the
    same order through the same transitions, in the same order (the edges); the scored sweep gives each entry the
    score, parent and choice of the transition that made it and replaces them only on a strictly higher score.
    Replaying the edges in order with ``weight`` (per tile above ``base``, a joker at ``weight[52]``) does the
    same, so the best path read off these arrays is the scored sweep's. Choice codes as in ``exact_choices``.
    Returns ``(score, parent, choice)``.
    """
    score = np.zeros(n_entries, np.int64)
    parent = np.full(n_entries, -2, np.int32)  # -2: not reached yet
    choice = np.zeros(n_entries, np.int32)
    parent[0] = -1
    choice[0] = -1
    joker_weight = weight[52]
    for k in range(n_edges):
        current = edge_parent[k]
        child = edge_child[k]
        tile = edge_tile[k]
        key, key2 = keys[current], keys[child]
        jokers_added = ((key2 >> 24) & 3) - ((key >> 24) & 3)
        sc2 = score[current] + joker_weight * jokers_added
        if tile < 0:
            code = jokers_added
        else:
            used = lo[tile] + edge_extra[k]
            sc2 += weight[tile] * (used - base[tile])
            acc_step = ((key2 >> 26) & 31) - ((key >> 26) & 31)  # 0, 1 or 5 for 0, 1 or 2 tiles to groups
            to_groups = 0 if acc_step == 0 else (1 if acc_step == 1 else 2)
            code = used * 16 + to_groups * 4 + jokers_added
        if parent[child] == -2 or sc2 > score[child]:
            score[child] = sc2
            parent[child] = current
            choice[child] = code
    return score, parent, choice


def best_path(keys, score, parent, choice, layer_start, lo_jokers, value_cap):
    """The best accepted final state of a scored sweep and the choices along its parent chain.

    A final state is accepted when it used at least ``lo_jokers`` jokers and reached ``value_cap`` points; the
    best has the highest score, the first in sweep order among equals. Returns ``(final, choices)``:
    ``final`` is -1 when no final state is accepted (``choices`` is then all 0), else ``choices[layer]`` is
    the choice code of each of the 65 layers (see ``sweep``).
    """
    final = -1
    best = 0
    for idx in range(layer_start[65], layer_start[66]):
        key = keys[idx]
        if ((key >> 24) & 3) >= lo_jokers and (key >> 31) >= value_cap and (final < 0 or score[idx] > best):
            final = idx
            best = score[idx]
    choices = np.zeros(65, np.int64)
    idx = final
    if final >= 0:
        for layer in range(64, -1, -1):
            choices[layer] = choice[idx]
            idx = parent[idx]
    return final, choices


_COMPILED = None
#: What the first compile costs, as the messages say it (measured on a 2-core machine: 24 CPU-s, see docs/rummikub.md).
COMPILE_TIME = "about 25 s"


def _cache_is_current(dispatcher) -> bool:
    """Whether the disk cache holds this kernel compiled from the current source (numba then only loads it)."""
    index = index_path(dispatcher)
    try:
        return index is not None and os.path.getmtime(index) >= os.path.getmtime(__file__)
    except OSError:
        return False


def _cache_folder(dispatcher) -> str | None:
    index = index_path(dispatcher)
    return None if index is None else os.path.dirname(index)


def kernels():
    """``(sweep, walk, prune, best_path, exact_choices, reach, meld_records, score_edges, witness)`` compiled with
    numba (once per process), cached on disk where one can be written.

    Cache location, first that applies: ``NUMBA_CACHE_DIR`` if set (numba's own rule); the user cache
    directory or this user's private temporary one (``cache_dir()``); numba's fallbacks (a writable
    ``__pycache__`` next to this file, then numba's user-wide directory). When none is writable, the kernels
    are compiled without a disk cache and one ``RuntimeWarning`` says so. When they will be compiled (no current
    cache), one line on stderr says so first: numba compiles each on its first call, ``COMPILE_TIME`` in all.
    """
    global _COMPILED
    if _COMPILED is None:
        import numba

        global _JOKER_FREE_ROWS, _LAYER_ENTRY
        directory = cache_dir()
        compiled = []
        helpers = [_cached_jit(helper, numba, directory) for helper in (joker_free_rows, layer_entry)]
        cached = all(helper is not None for helper in helpers)
        if not cached:
            helpers = [numba.njit(cache=False)(helper) for helper in (joker_free_rows, layer_entry)]
        _JOKER_FREE_ROWS, _LAYER_ENTRY = helpers  # before their callers compile
        for function in (sweep, walk, prune, best_path, exact_choices, reach, meld_records, score_edges, witness):
            jitted = _cached_jit(function, numba, directory) if cached else None
            if jitted is None:
                cached = False
                jitted = numba.njit(cache=False)(function)
            compiled.append(jitted)
        if not cached:
            warnings.warn(
                "tableenvs: no writable cache directory for the Rummikub solver's compiled kernels (package "
                f"directory read-only, {CACHE_ENV} unset or unwritable, no writable user cache or temporary "
                f"directory); they are compiled in memory, {COMPILE_TIME} in every process. Set {CACHE_ENV} to a "
                "writable directory to cache them.",
                RuntimeWarning,
                stacklevel=3,
            )
        elif not _cache_is_current(compiled[0]):  # the sweep, the bulk (a kernel never called has no index)
            where = _cache_folder(compiled[0])
            print(
                f"tableenvs: compiling the Rummikub solver, once: {COMPILE_TIME}"
                + (f" (cached in {where})" if where else ""),
                file=sys.stderr,
                flush=True,
            )
        _COMPILED = tuple(compiled)
    return _COMPILED
