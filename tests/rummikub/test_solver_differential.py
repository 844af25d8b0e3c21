"""The solver against an independent integer programme (``ilp_oracle.py``) on seeded random positions.

Positions: tables built from random melds (runs of 3..8 and groups, some with jokers) of 0..45 tiles,
racks of 1..25 tiles drawn from what is left (half of them next to table tiles), a quarter of them
openings. Every arrangement the solver returns is checked meld by meld by the independent validator in
``rummikub_support.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from ilp_oracle import Oracle
from rummikub_support import check_arrangement, random_rack, random_table

from tableenvs.rummikub import TILE_VALUES, is_valid_play, playable, solve

# The solver's documented orders: "tiles" = most tiles then most points, "value" = most points then tiles.
LEXICOGRAPHIC = {"tiles": 4096 + TILE_VALUES, "value": 128 * TILE_VALUES + 1}
BATCHES = 10
SOLVE_POSITIONS_PER_BATCH = 100
PLAYABLE_POSITIONS_PER_BATCH = 100
FULL_ILP_POSITIONS = 40


@pytest.fixture(scope="module")
def oracle() -> Oracle:
    return Oracle()


def position(rng: np.random.Generator):
    table = random_table(rng, int(rng.integers(0, 46)))
    rack = random_rack(rng, table, int(rng.integers(1, 26)))
    opening = bool(rng.random() < 0.25)
    return table, rack, opening


@pytest.mark.parametrize("batch", range(BATCHES))
def test_best_play_matches_ilp_optimum(oracle, batch):
    rng = np.random.default_rng(1000 + batch)
    found = 0
    for i in range(SOLVE_POSITIONS_PER_BATCH):
        table, rack, opening = position(rng)
        objective = ("tiles", "value")[i % 2]
        weights = LEXICOGRAPHIC[objective]
        solution = solve(table, rack, objective=objective, opening=opening)
        expected, _ = oracle.best(table, rack, weights, opening=opening)
        where = f"table={table.tolist()} rack={rack.tolist()} opening={opening} objective={objective}"
        if solution is None:
            assert expected is None, f"solver found no play, ILP found score {expected}: {where}"
            continue
        found += 1
        assert int(solution.played @ weights) == expected, where
        assert solution.tiles == solution.played.sum() and solution.value == solution.played @ TILE_VALUES
        assert np.all(solution.played <= rack)
        check_arrangement(solution.melds, table + solution.played)
        if opening:
            check_arrangement(solution.opening_melds, solution.played)
            assert sum(m.value for m in solution.opening_melds) >= 30, where
    assert found >= SOLVE_POSITIONS_PER_BATCH // 3  # the generator must produce plays, not only dead racks


@pytest.mark.parametrize("batch", range(BATCHES))
def test_playable_matches_ilp_feasibility(oracle, batch):
    """Each mask entry equals feasibility of a play using ``staged + e_t``.

    A ``True`` entry is proved by a witness: a play ``>= staged`` holding one more tile of that type, from
    ``solve(forced=staged + e_t)`` and checked by the independent validator and ``is_valid_play`` (one
    witness proves every type it plays beyond ``staged``). All ``False`` entries of a position are proved
    together by one ILP: the most tiles of those types beyond ``staged`` over all legal plays is zero.
    """
    rng = np.random.default_rng(2000 + batch)
    for _ in range(PLAYABLE_POSITIONS_PER_BATCH):
        table, rack, opening = position(rng)
        staged = np.zeros(53, dtype=np.int64)
        best = solve(table, rack, opening=opening)
        if best is not None and rng.random() < 0.6:
            staged = np.minimum(best.played, rng.integers(0, 3, 53))
        where = f"table={table.tolist()} rack={rack.tolist()} staged={staged.tolist()} opening={opening}"
        mask = playable(table, rack, staged, opening=opening)
        assert not np.any(mask & (rack <= staged)), where
        proved = np.zeros(53, dtype=bool)
        for t in np.flatnonzero(mask):
            if proved[t]:
                continue
            forced = staged.copy()
            forced[t] += 1
            witness = solve(table, rack, opening=opening, forced=forced)
            assert witness is not None and np.all(witness.played >= forced), f"t={t}: {where}"
            check_arrangement(witness.melds, table + witness.played)
            assert is_valid_play(table, rack, witness.played, opening=opening)
            proved |= witness.played > staged
        assert not np.any(proved & ~mask), f"a witness plays types the mask refuses: {where}"
        refused = (rack > staged) & ~mask
        if refused.any():
            score, played = oracle.best(table, rack, refused.astype(np.int64), opening=opening, forced=staged)
            exceeded = [] if played is None else np.flatnonzero(refused & (played > staged)).tolist()
            assert not exceeded, f"ILP plays types {exceeded} the mask refuses: {where}"


def test_full_ilp_mask_on_some_positions(oracle):
    """On a smaller set, compute every entry with the ILP alone (no solver witnesses) and compare."""
    rng = np.random.default_rng(3000)
    for _ in range(FULL_ILP_POSITIONS):
        table, rack, opening = position(rng)
        staged = np.zeros(53, dtype=np.int64)
        mask = playable(table, rack, staged, opening=opening)
        expected = oracle.playable(table, rack, staged, opening=opening)
        assert np.array_equal(mask, expected), (
            f"differs at {np.flatnonzero(mask != expected).tolist()}: table={table.tolist()} "
            f"rack={rack.tolist()} opening={opening}"
        )
