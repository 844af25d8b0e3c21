"""The batched Rummikub engine's masks in compiled code: the solver's own kernels called for every env in one call.

Where you are: the compiled half of ``batched_masks.py``. For each env it asks what ``TurnSweep.legal`` asks, with
the solver's kernels (``_solver_kernel.sweep``, ``reach``, ``walk``) called from compiled code: at a turn's first
question one recorded sweep (a play onto the table: ``lo = table``, ``hi = table + rack``; an opening: the rack
alone), answered by ``reach`` (forward words written by the sweep) or a whole ``walk``; at every later question of
the turn (a tile was staged) ``reach`` or ``walk`` again from the words or points the last question left, for the
tiles staged since the sweep. Each env keeps its sweep in fixed slots (``STATES`` states, ``EDGES`` transitions);
a sweep that does not fit, and every question of that turn, is left to the env's Python ``TurnSweep`` (which grows
its buffers and searches big tables): the kernel marks the env in ``python[e]``. Once a sweep of a play onto a
table did not fit, the env's later turns on a table at least as big go to Python at once (tables only grow within
a game). The answers are the solver's whichever side asks (the tests compare every mask with the AEC env's).

The compiled ``mask_kernel`` holds the solver's kernels compiled into it, and numba's disk cache watches this file
only: after editing ``_solver_kernel.py``, touch this file too (or its cached copy keeps the old solver).
"""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

from tableenvs.rummikub import _solver_kernel as kernel
from tableenvs.rummikub.tiles import JOKER, TILE_TYPES

_SWEEP, _WALK, _PRUNE, _BEST, _EXACT_CHOICES, _REACH, _MELDS, _SCORE, _WITNESS = kernel.kernels()

#: the slots of each env's sweep: states, transitions, hash slots (a power of two, twice the states: a layer never
#: fills half of it before the states run out)
STATES, EDGES = 1 << 11, 1 << 13
SLOTS = 2 * STATES

# m[e] columns
MODE = 0  # what answers this turn's questions: PYTHON, TABLE (reach) or OPENING (walk); NONE before a sweep
N_ENTRIES = 1
N_EDGES = 2
VALUE_CAP = 3  # an opening's points to reach (the walk's)
BIG_TABLE = 4  # table tiles at which a sweep of a play onto the table did not fit (a big number: none yet)
LAST_TILES = 5  # table tiles at the last sweep of a play onto the table
M_WIDTH = 6
NONE, PYTHON, TABLE, OPENING = 0, 1, 2, 3
NO_BIG_TABLE = 1 << 20

_NUMBER_OF = np.array([t % 13 + 1 for t in range(JOKER)] + [0], dtype=np.int64)
_BOUND_AND_COUNT = np.array([(t % 13 + 1) * 128 + 1 for t in range(JOKER)] + [13 * 128 + 1], dtype=np.int64)
_LAYERS_KNOWN_FORWARD = (65, 66)  # ``reach``'s bounds after a recorded sweep (turn_sweep._FORWARD_KNOWN)


@register_jitable
def _opening_bound(counts):
    """``melds.opening_bound``."""
    packed = 0
    for t in range(TILE_TYPES):
        packed += counts[t] * _BOUND_AND_COUNT[t]
    return packed >> 7 if packed & 127 >= 3 else 0


@register_jitable
def _record(e, lo, hi, base, m, keys, slot_of, slots, layer_start, edge_parent, edge_child, edge_tile, edge_extra,
            edge_points, edge_mark, forward, no_weight, placeholder64, placeholder32):  # fmt: skip
    """A recorded sweep of env ``e`` into its slots; whether it fit (else its unfinished layer's slots are freed)."""
    status, layer, n_entries, n_edges = _SWEEP(
        lo, hi, base, no_weight, 0, True, True, keys[e], placeholder64, placeholder32, placeholder32, slot_of[e],
        layer_start[e], edge_parent[e], edge_child[e], edge_tile[e], edge_extra[e], edge_points[e], edge_mark[e],
        slots[e], forward[e], 0,
    )  # fmt: skip
    if status != kernel.OK:
        for i in range(layer_start[e, layer + 1], n_entries):
            slots[e, slot_of[e, i]] = -1
        return False
    m[e, N_ENTRIES] = n_entries
    m[e, N_EDGES] = n_edges
    return True


def mask_kernel(
    rows, continuing, racks, table, staged, opened, seats, min_initial, m, rec_lo, rec_staged, last_delta, bounds, keys,
    slot_of, slots, layer_start, edge_parent, edge_child, edge_tile, edge_extra, edge_points, edge_mark, forward,
    backward, best_from_root, best_to_end, exact_to_end, stage_masks, verdict, python,
):  # fmt: skip
    """For each env ``e`` of ``rows``, its ``(stage mask, verdict on the staged tiles)`` into ``stage_masks[e]`` and
    ``verdict[e]`` (1, 0; -1 for the opening shortcut, where the solver is not asked), or ``python[e] = True`` for the
    env's Python ``TurnSweep`` (the other envs' entries are left as they are). ``continuing[e]``: the env's last
    action staged a tile (the same turn's next question); a question that is not continuing records a new sweep
    with the staged tiles as they are (a game loaded mid-turn, ``batched_load.py``), as ``TurnSweep.legal`` does."""
    need = max(min_initial, 1)
    no_weight = np.zeros(TILE_TYPES, np.int64)
    placeholder64 = np.empty(1, np.int64)
    placeholder32 = np.empty(1, np.int32)
    lo = np.empty(TILE_TYPES, np.int64)
    hi = np.empty(TILE_TYPES, np.int64)
    delta = np.empty(TILE_TYPES, np.int64)
    for i in range(rows.shape[0]):
        e = rows[i]
        python[e] = False
        verdict[e] = -1
        seat = seats[e]
        rack = racks[e, seat]
        opening = not opened[e, seat]
        if opening and _opening_bound(rack) < need:  # exact shortcut: the rack cannot reach min_initial
            stage_masks[e, :] = False
            continue
        mode = m[e, MODE]
        if not continuing[e] or mode == NONE:  # a turn's first question: a new sweep
            mode = NONE
            if opening:
                value_cap = min(min_initial, _opening_bound_points(rack) + 1)
                for t in range(TILE_TYPES):
                    lo[t] = staged[e, t]
                    hi[t] = rack[t]
                if _record(e, lo, hi, no_weight, m, keys, slot_of, slots, layer_start, edge_parent, edge_child,
                           edge_tile, edge_extra, edge_points, edge_mark, forward, no_weight, placeholder64,
                           placeholder32):  # fmt: skip
                    mode = OPENING
                    m[e, VALUE_CAP] = value_cap
            else:
                tiles = 0
                for t in range(TILE_TYPES):
                    tiles += table[e, t]
                if tiles < m[e, LAST_TILES]:  # a new game: its table may stay small
                    m[e, BIG_TABLE] = NO_BIG_TABLE
                m[e, LAST_TILES] = tiles
                if tiles < m[e, BIG_TABLE]:
                    for t in range(TILE_TYPES):
                        lo[t] = table[e, t] + staged[e, t]
                        hi[t] = table[e, t] + rack[t]
                    if _record(e, lo, hi, table[e], m, keys, slot_of, slots, layer_start, edge_parent, edge_child,
                               edge_tile, edge_extra, edge_points, edge_mark, forward, no_weight, placeholder64,
                               placeholder32):  # fmt: skip
                        mode = TABLE
                        bounds[e, 0] = _LAYERS_KNOWN_FORWARD[0]
                        bounds[e, 1] = _LAYERS_KNOWN_FORWARD[1]
                    else:
                        m[e, BIG_TABLE] = tiles
            if mode == NONE:
                m[e, MODE] = PYTHON
                python[e] = True
                continue
            m[e, MODE] = mode
            for t in range(TILE_TYPES):
                rec_lo[e, t] = lo[t]
                rec_staged[e, t] = staged[e, t]
                last_delta[e, t] = 0
                delta[t] = 0
            whole = True
        elif mode == PYTHON:
            python[e] = True
            continue
        else:
            for t in range(TILE_TYPES):
                delta[t] = staged[e, t] - rec_staged[e, t]
            whole = False
        n_entries = m[e, N_ENTRIES]
        lo_jokers = rec_lo[e, JOKER] + delta[JOKER]
        if mode == TABLE:
            stage, exact = _REACH(
                delta, last_delta[e], lo_jokers, n_entries, layer_start[e], keys[e], m[e, N_EDGES], edge_parent[e],
                edge_child[e], edge_tile[e], edge_extra[e], edge_mark[e], forward[e], backward[e], bounds[e], -1,
            )  # fmt: skip
        else:
            if whole:
                best_from_root[e, :n_entries] = 0
            stage, exact, _ = _WALK(
                delta, lo_jokers, m[e, VALUE_CAP], n_entries, layer_start[e], keys[e], m[e, N_EDGES], edge_parent[e],
                edge_child[e], edge_tile[e], edge_extra[e], edge_mark[e], edge_points[e], best_from_root[e],
                best_to_end[e], exact_to_end[e], last_delta[e] if not whole else delta, whole,
            )  # fmt: skip
        for t in range(TILE_TYPES):
            stage_masks[e, t] = stage[t]
            last_delta[e, t] = delta[t]
        verdict[e] = 1 if exact else 0


@register_jitable
def _opening_bound_points(rack):
    """``sweep.points_bound``: most opening points of ``rack`` (face values, a joker at most 13)."""
    points = 13 * rack[JOKER]
    for t in range(JOKER):
        points += rack[t] * _NUMBER_OF[t]
    return points
