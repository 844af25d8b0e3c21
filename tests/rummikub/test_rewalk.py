"""The incremental walk against a whole walk of the same recorded sweep.

Within a turn the engine answers a larger staged set from the last walk of the same recorded sweep (``sweep.walk``
given the last walk, ``kernel.walk``): only the cells whose staged count grew (and, when a joker is staged, the
accepted final states) change, so it redoes the forward pass from the first such cell and the backward pass from the
last one down. Every answer (mask, exact-play flag, the count of edges on accepted plays) and the per-entry arrays
it leaves must equal a whole walk's: the most points from the root everywhere, to an accepted end and along an exact
play on every reachable entry (an entry cut off by a newly staged tile may keep its old value after the last changed
cell; no walk, prune or path reads it, since every use goes through a reachable parent).
"""

from __future__ import annotations

import numpy as np
import pytest
from rummikub_support import random_rack, random_table
from test_solver_tail import TAIL, counts

from tableenvs.rummikub.sweep import ZERO_DELTA, recorded_sweep, walk


def growing_questions(rng, table, rack, opening):
    """A recorded sweep of nothing staged and growing staged sets: one tile, several at once, jokers, refused ones."""
    recorded = recorded_sweep(table, rack, ZERO_DELTA, opening, 30)
    staged = np.zeros(53, dtype=np.int64)
    while True:
        mask = walk(recorded, staged)[0]
        spare = np.flatnonzero(rack > staged)
        choices = np.flatnonzero(mask) if rng.random() < 0.8 else spare
        if choices.size == 0:
            return
        for t in rng.choice(choices, size=min(choices.size, int(rng.integers(1, 3))), replace=False):
            staged[t] += 1
        if rack[52] > staged[52] and rng.random() < 0.3:
            staged[52] += 1  # a joker, maybe alone
        yield recorded, staged.copy()


def tail_and_random_positions(rng, seed):
    """The tail position ``TAIL[seed]`` (both jokers on the table) and 25 random ones, some racks given a joker."""
    positions = [tuple(counts(tiles) for tiles in TAIL[seed])[:2]]
    for _ in range(25):
        table = random_table(rng, int(rng.integers(0, 80)))
        rack = random_rack(rng, table, int(rng.integers(3, 20)))
        if table[52] + rack[52] < 2 and rng.random() < 0.5:
            rack[52] += 1
        positions.append((table, rack))
    return positions


@pytest.mark.parametrize("seed", range(6))
def test_rewalk_equals_a_whole_walk(seed):
    rng = np.random.default_rng(1900 + seed)
    positions = tail_and_random_positions(rng, seed)
    compared = jokers = 0
    for table, rack in positions:
        opening = bool(rng.random() < 0.25)
        whole = walk(recorded_sweep(table, rack, ZERO_DELTA, opening, 30), ZERO_DELTA)
        walked = (ZERO_DELTA, whole[2], whole[3], whole[4])
        for recorded, delta in growing_questions(rng, table, rack, opening):
            mask, exact, *arrays, kept = walk(recorded, delta, walked)
            expected = walk(recorded, delta)
            assert np.array_equal(mask, expected[0]) and exact == expected[1] and kept == expected[5]
            from_root = arrays[0]
            assert np.array_equal(from_root, np.broadcast_to(expected[2], from_root.shape))
            reachable = from_root >= 0  # the rest is never read: an edge counts only from a reachable parent
            for got, want in zip(arrays[1:], expected[3:5], strict=True):
                assert np.array_equal(got[reachable], want[reachable])
            walked = (delta, *arrays)
            compared += 1
            jokers += bool(delta[52])
    assert compared > 40 and jokers > 0
