"""The solver's slow tail: big tables with both jokers (from benchmark random game seed 190) against the ILP.

These positions (68..89-tile tables holding both jokers) were the slowest ``playable`` calls of the env
benchmark; their sweeps outgrow every starting buffer of the kernel, so they also exercise the grow-and-resume
path of the sweep. The engine's unchecked entry points (``_playable_and_exact``, and ``_TurnSweep`` reusing one
sweep as staged tiles grow) must equal the public calls.
"""

from __future__ import annotations

import numpy as np
import pytest
from ilp_oracle import Oracle
from rummikub_support import random_rack, random_table

from tableenvs.rummikub import TILE_VALUES, is_valid_play, playable, solve
from tableenvs.rummikub.solver import _playable_and_exact, _TurnSweep

_TABLE_68 = (
    "0 0 1 2 3 3 4 5 5 6 6 7 9 10 11 12 13 13 15 16 17 18 19 19 20 21 22 23 25 26 26 27 28 28 29 29 30 30 31 "
    "31 32 32 33 33 35 35 36 36 38 39 39 40 40 41 42 43 45 45 46 46 47 48 48 49 50 50 52 52 "
).split()
_TABLE_77 = (
    "0 0 1 2 3 3 4 5 5 6 6 7 8 9 10 11 12 13 13 15 15 16 16 17 18 19 19 20 21 22 23 25 26 26 27 28 28 29 29 "
    "30 30 31 31 32 32 33 33 34 35 35 36 36 37 38 38 39 39 40 40 41 42 43 43 45 45 46 46 47 48 48 49 49 50 "
    "50 51 52 52 "
).split()
_TABLE_89 = (
    "0 0 1 1 2 3 3 4 4 5 5 6 6 7 8 9 9 10 10 11 12 13 13 15 15 16 16 17 18 19 19 20 20 21 22 22 23 25 26 26 "
    "27 27 28 28 29 29 30 30 31 31 32 32 33 33 34 34 35 35 36 36 37 38 38 39 39 40 40 41 42 42 43 43 44 44 "
    "45 45 46 46 47 47 48 48 49 49 50 50 51 52 52 "
).split()
_RACK_17 = [1, 2, 4, 8, 10, 15, 16, 20, 22, 27, 34, 37, 38, 43, 44, 44, 49]
_RACK_9 = [1, 2, 4, 10, 20, 22, 27, 44, 44]

# (table, rack, staged) as tile id lists
TAIL = [
    (_TABLE_68, _RACK_17, []),
    (_TABLE_68, _RACK_17, [34, 38, 49]),
    (_TABLE_68, _RACK_17, [8, 15, 16, 34, 38, 43, 49]),
    (_TABLE_77, _RACK_9, [20]),
    (_TABLE_77, _RACK_9, [1, 4, 20, 22, 27, 44, 44]),
    (_TABLE_89, [8, 14, 41], []),
]


def counts(tiles) -> np.ndarray:
    return np.bincount(np.array([int(t) for t in tiles], dtype=np.int64), minlength=53).astype(np.int64)


@pytest.fixture(scope="module")
def oracle() -> Oracle:
    return Oracle()


@pytest.mark.parametrize("case", range(len(TAIL)))
def test_tail_positions_match_ilp(oracle, case):
    table, rack, staged = (counts(tiles) for tiles in TAIL[case])
    assert table[52] == 2 and table.sum() >= 68
    mask = playable(table, rack, staged)
    assert np.array_equal(mask, oracle.playable(table, rack, staged)), np.flatnonzero(mask).tolist()
    engine_mask, staged_is_play = _playable_and_exact(table, rack, staged, False, 30)
    assert np.array_equal(engine_mask, mask)
    turn = _TurnSweep()  # the engine's reuse: a sweep recorded with nothing staged, asked for ``staged``
    turn.legal(table, rack, np.zeros(53, dtype=np.int64), False, 30)
    reused_mask, reused_is_play = turn.legal(table, rack, staged, False, 30)
    assert np.array_equal(reused_mask, mask) and reused_is_play == staged_is_play
    if staged.any():
        expected, _ = oracle.best(table, staged, np.ones(53, dtype=np.int64), forced=staged)
        assert staged_is_play == is_valid_play(table, rack, staged) == (expected is not None)
    weights = 4096 + TILE_VALUES  # objective "tiles": most tiles, then most points
    best = solve(table, rack)
    expected, _ = oracle.best(table, rack, weights)
    assert (best is None) == (expected is None)
    if best is not None:
        assert int(best.played @ weights) == expected


def test_engine_entry_point_equals_public_calls():
    """``_playable_and_exact``: the mask of ``playable`` and, for non-empty staged tiles, ``is_valid_play``."""
    rng = np.random.default_rng(4000)
    checked = valid = 0
    for _ in range(200):
        table = random_table(rng, int(rng.integers(0, 61)))
        rack = random_rack(rng, table, int(rng.integers(1, 21)))
        opening = bool(rng.random() < 0.3)
        best = solve(table, rack, opening=opening)
        staged = np.zeros(53, dtype=np.int64)
        if best is not None and rng.random() < 0.8:
            # a legal play, a part of one, or a legal play plus a stray tile
            staged = np.minimum(best.played, rng.integers(0, 3, 53)) if rng.random() < 0.5 else best.played.copy()
            if rng.random() < 0.3:
                spare = np.flatnonzero(rack > staged)
                if spare.size:
                    staged[rng.choice(spare)] += 1
        mask, staged_is_play = _playable_and_exact(table, rack, staged, opening, 30)
        assert np.array_equal(mask, playable(table, rack, staged, opening=opening))
        if staged.any():
            checked += 1
            assert staged_is_play == is_valid_play(table, rack, staged, opening=opening)
            valid += staged_is_play
    assert checked > 60 and 0 < valid < checked


def test_turn_sweep_reuse_equals_fresh_sweeps():
    """``_TurnSweep`` answers growing staged sets from one recorded sweep exactly as fresh sweeps do."""
    rng = np.random.default_rng(5000)
    reused = 0
    for _ in range(60):
        table = random_table(rng, int(rng.integers(0, 61)))
        rack = random_rack(rng, table, int(rng.integers(1, 21)))
        opening = bool(rng.random() < 0.3)
        turn = _TurnSweep()
        staged = np.zeros(53, dtype=np.int64)
        while True:
            mask, staged_is_play = turn.legal(table, rack, staged, opening, 30)
            assert np.array_equal(mask, playable(table, rack, staged, opening=opening))
            if staged.any():
                assert staged_is_play == is_valid_play(table, rack, staged, opening=opening)
                reused += 1
            # stage a random playable tile, or now and then one the mask refuses (a superset the engine
            # never asks for, still answered exactly)
            choices = np.flatnonzero(mask) if rng.random() < 0.9 else np.flatnonzero(rack > staged)
            if choices.size == 0:
                break
            staged[rng.choice(choices)] += 1
    assert reused > 100
