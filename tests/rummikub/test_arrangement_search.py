"""A table's arrangement found by a search instead of a whole sweep (``solver._arrangement``).

The published arrangement of a table is the first partition in sweep order: the path a scored sweep of ``lo = hi =
table`` backtracks (``_swept_arrangement``). ``_arrangement`` asks ``kernel.witness`` for the first accepted path in
sweep order instead, and sweeps only when the search visits ``_ARRANGE_BUDGET`` states. Both must give the same
choices (or both ``None``) on valid tables, tables with jokers, the tail positions' big tables and tables that have
no partition, whether the search answers or runs out of budget.
"""

from __future__ import annotations

import numpy as np
import pytest
from rummikub_support import FULL_SET, random_table
from test_solver_tail import TAIL, counts

from tableenvs.rummikub import solver


def tables(rng: np.random.Generator, count: int):
    """Valid random tables of 0..90 tiles, the tail tables, and random tile sets (most of them no table)."""
    for _ in range(count):
        yield random_table(rng, int(rng.integers(0, 90)))
    for tail in TAIL:
        yield counts(tail[0])
    for _ in range(count):
        tiles = rng.choice(106, size=int(rng.integers(1, 30)), replace=False)
        yield np.bincount(np.minimum(tiles // 2, 52), minlength=53).astype(np.int64).clip(0, FULL_SET)


def searched(table: np.ndarray):
    return solver._arrangement.__wrapped__(table.tobytes())  # not the cache: the search itself


def count_sweeps(monkeypatch) -> list:
    """Spy on ``_swept_arrangement`` (the fallback): one entry in the returned list per call."""
    sweeps = []
    swept = solver._swept_arrangement
    monkeypatch.setattr(solver, "_swept_arrangement", lambda table: sweeps.append(1) or swept(table))
    return sweeps


@pytest.mark.parametrize("seed", range(4))
def test_the_searched_arrangement_is_the_swept_one(seed):
    rng = np.random.default_rng(2400 + seed)
    valid = invalid = 0
    for table in tables(rng, 150):
        expected = solver._swept_arrangement(table)
        assert searched(table) == expected, table
        valid += expected is not None
        invalid += expected is None
    assert valid > 150 and invalid > 20  # both kinds compared


@pytest.mark.parametrize("budget", [1, 8, 64])
def test_a_search_over_budget_sweeps(budget, monkeypatch):
    rng = np.random.default_rng(2500 + budget)
    swept = solver._swept_arrangement
    monkeypatch.setattr(solver, "_ARRANGE_BUDGET", budget)
    sweeps = count_sweeps(monkeypatch)
    compared = 0
    for table in tables(rng, 60):
        assert searched(table) == swept(table)
        compared += 1
    assert 0 < len(sweeps) <= compared  # the small budgets send some tables to the sweep


def test_the_search_answers_most_tables_without_a_sweep(monkeypatch):
    rng = np.random.default_rng(2600)
    sweeps = count_sweeps(monkeypatch)
    for _ in range(200):
        assert searched(random_table(rng, int(rng.integers(0, 60)))) is not None
    assert len(sweeps) <= 10, len(sweeps)
