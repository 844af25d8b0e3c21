"""``solve`` scoring a sweep the rules engine recorded against a fresh scored sweep.

When the engine's ``TurnSweep`` has recorded the sweep of a position (a play onto the table: table, rack, the staged
tiles as the lower bound) and ``solve`` is asked about the same position (a greedy agent right after the engine built
its mask), ``solve`` replays the recorded edges with its weights (``kernel.score_edges``) instead of sweeping again.
The answer must be the fresh sweep's in every detail: the play, the choices (so the melds and their order) and
``None`` when there is no play; a sweep the ``TurnSweep`` no longer holds (it recorded another one since, or it is
gone) must not be read.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
from test_rewalk import tail_and_random_positions

from tableenvs.rummikub import solver, sweep, turn_sweep
from tableenvs.rummikub.solver import TurnSweep


def fresh_solve(table, rack, **options):
    """``solve`` with no recorded sweep to read."""
    saved = getattr(turn_sweep._latest_recorded, "entry", None)
    turn_sweep._latest_recorded.entry = None
    try:
        return solver.solve(table, rack, **options)
    finally:
        turn_sweep._latest_recorded.entry = saved


def assert_same(read, fresh):
    assert (read is None) == (fresh is None)
    if read is not None:
        assert np.array_equal(read.played, fresh.played)
        assert read._choices == fresh._choices
        assert read.melds == fresh.melds


@pytest.mark.parametrize("seed", range(6))
def test_solve_from_the_recorded_sweep_equals_a_fresh_sweep(seed, monkeypatch):
    rng = np.random.default_rng(2300 + seed)
    read_sweeps = 0
    scored = sweep.scored

    def counted(*args):
        nonlocal read_sweeps
        read_sweeps += 1
        return scored(*args)

    monkeypatch.setattr(sweep, "scored", counted)
    monkeypatch.setattr(turn_sweep, "_SEARCH_STATES", 1 << 40)  # the engine sweeps (no searches): a sweep to read
    compared = 0
    for table, rack in tail_and_random_positions(rng, seed):
        staged = np.zeros(53, np.int64)
        if rng.random() < 0.3:  # staged tiles first: the recorded sweep's lower bound is table + staged
            mask = solver.playable(table, rack, staged)
            if mask.any():
                staged[rng.choice(np.flatnonzero(mask))] += 1
        sweeps = TurnSweep()
        sweeps.legal(table, rack, staged, False, 30)
        for objective in ("tiles", "value"):
            before = read_sweeps
            read = solver.solve(table, rack, objective=objective, forced=staged if staged.any() else None)
            assert read_sweeps == before + 1  # it did read the recorded sweep
            assert_same(read, fresh_solve(table, rack, objective=objective, forced=staged))
            compared += 1
        # another staged set is another lower bound: a fresh sweep
        before = read_sweeps
        other = staged.copy()
        spare = np.flatnonzero(rack > staged)
        if spare.size:
            other[spare[0]] += 1
            assert_same(solver.solve(table, rack, forced=other), fresh_solve(table, rack, forced=other))
            assert read_sweeps == before
    assert compared == 2 * 26


def test_a_sweep_no_longer_held_is_not_read(monkeypatch):
    rng = np.random.default_rng(7)
    (table, rack), (other_table, other_rack) = tail_and_random_positions(rng, 0)[1:3]
    read_sweeps = []
    scored = sweep.scored
    monkeypatch.setattr(sweep, "scored", lambda *args: read_sweeps.append(1) or scored(*args))
    monkeypatch.setattr(turn_sweep, "_SEARCH_STATES", 1 << 40)
    zero = np.zeros(53, np.int64)
    sweeps = TurnSweep()
    sweeps.legal(table, rack, zero, False, 30)
    # the same TurnSweep records an opening sweep (its buffers are overwritten; the registry still names the first)
    sweeps.legal(other_table, other_rack, zero, True, 30)
    assert_same(solver.solve(table, rack), fresh_solve(table, rack))
    assert not read_sweeps
    # a TurnSweep that is gone
    sweeps = TurnSweep()
    sweeps.legal(table, rack, zero, False, 30)
    del sweeps
    gc.collect()
    assert_same(solver.solve(table, rack), fresh_solve(table, rack))
    assert not read_sweeps
    # an opening is never read from a recorded play onto the table
    sweeps = TurnSweep()
    sweeps.legal(table, rack, zero, False, 30)
    assert_same(solver.solve(table, rack, opening=True), fresh_solve(table, rack, opening=True))
    assert not read_sweeps
    solver.solve(table, rack)
    assert read_sweeps == [1]
