"""Hand-made edge cases of the Rummikub solver: jokers, run limits, duplicates, the opening, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from rummikub_support import check_arrangement

from tableenvs.rummikub import (
    JOKER,
    TILE_TYPES,
    Meld,
    arrange,
    is_valid_play,
    playable,
    solve,
    tile_name,
    tile_type,
)

BLACK, RED, BLUE, ORANGE = range(4)
NOTHING = np.zeros(TILE_TYPES, dtype=np.int64)


def counts(*tiles) -> np.ndarray:
    """Count vector of ``(colour, number)`` pairs and ``JOKER``s."""
    vector = np.zeros(TILE_TYPES, dtype=np.int64)
    for tile in tiles:
        vector[JOKER if tile == JOKER else tile_type(*tile)] += 1
    return vector


def black_run(first: int, last: int) -> list[tuple[int, int]]:
    return [(BLACK, n) for n in range(first, last + 1)]


def test_tile_names_and_meld_text():
    assert tile_name(0) == "black 1" and tile_name(tile_type(ORANGE, 13)) == "orange 13"
    assert tile_name(JOKER) == "joker"
    meld = Meld("run", (0, JOKER, 2), (0, 1, 2))
    assert str(meld) == "run[black 1, joker=black 2, black 3]"
    assert meld.value == 6


def test_group_of_four_with_two_jokers():
    table = counts((RED, 7), (BLUE, 7), JOKER, JOKER)
    melds = arrange(table)
    assert melds is not None and len(melds) == 1
    (meld,) = melds
    assert meld.kind == "group" and len(meld.tiles) == 4
    check_arrangement(melds, table)
    rack_play = solve(NOTHING, table)
    assert rack_play is not None and rack_play.tiles == 4


def test_joker_added_to_group_of_three_makes_four():
    table = counts((BLACK, 9), (RED, 9), (BLUE, 9))
    solution = solve(table, counts(JOKER, (ORANGE, 1)))
    assert solution is not None and solution.played[JOKER] == 1 and solution.tiles == 1
    check_arrangement(solution.melds, table + solution.played)


def test_two_jokers_with_one_tile_is_a_meld():
    assert arrange(counts((ORANGE, 13), JOKER, JOKER)) is not None
    assert arrange(counts(JOKER, JOKER)) is None
    assert arrange(counts((ORANGE, 13), JOKER)) is None
    solution = solve(NOTHING, counts((RED, 1), JOKER, JOKER))
    assert solution is not None and solution.tiles == 3


def test_runs_do_not_wrap_from_13_to_1():
    assert arrange(counts((BLACK, 12), (BLACK, 13), (BLACK, 1))) is None
    assert arrange(counts((BLACK, 13), JOKER, (BLACK, 1))) is None
    melds = arrange(counts((BLACK, 12), (BLACK, 13), JOKER))
    assert melds is not None and melds[0].stands_for == tuple(tile_type(BLACK, n) for n in (11, 12, 13))


def test_thirteen_long_runs():
    full = counts(*black_run(1, 13))
    assert arrange(full) is not None
    solution = solve(NOTHING, full)
    assert solution is not None and solution.tiles == 13
    with_joker = counts(*black_run(1, 6), JOKER, *black_run(8, 13))
    melds = arrange(with_joker)
    assert melds is not None
    check_arrangement(melds, with_joker)
    assert arrange(counts(*black_run(1, 6), *black_run(8, 13))) is not None  # 1-6 and 8-13
    assert arrange(counts(*black_run(1, 2), *black_run(4, 13))) is None  # 1-2 cannot stand alone


def test_both_copies_of_a_tile():
    table = counts(*black_run(5, 7), *black_run(5, 7))
    rack = counts((BLACK, 8), (BLACK, 8))
    solution = solve(table, rack)
    assert solution is not None and solution.tiles == 2
    check_arrangement(solution.melds, table + rack)
    assert playable(table, rack, counts((BLACK, 8)))[tile_type(BLACK, 8)]
    assert not playable(table, rack, counts((BLACK, 8), (BLACK, 8))).any()


def test_rearranging_the_table_is_allowed():
    table = counts(*black_run(2, 8))
    rack = counts((RED, 5), (BLUE, 5))
    solution = solve(table, rack)  # black 2-4, group of 5s, black 6-8
    assert solution is not None and solution.tiles == 2
    check_arrangement(solution.melds, table + rack)
    assert sorted(len(m.tiles) for m in solution.melds) == [3, 3, 3]


def test_opening_counts_jokers_at_stood_for_values():
    rack = counts((BLACK, 9), (BLACK, 10), JOKER)  # best: 9, 10, joker=11 -> 30
    assert solve(NOTHING, rack, opening=True) is not None
    assert solve(NOTHING, rack, opening=True, min_initial=31) is None
    low = counts((BLACK, 8), (BLACK, 9), JOKER)  # best: 8, 9, joker=10 -> 27
    assert solve(NOTHING, low, opening=True) is None
    assert solve(NOTHING, low, opening=True, min_initial=27) is not None
    assert not playable(NOTHING, low, NOTHING, opening=True).any()
    assert playable(NOTHING, rack, NOTHING, opening=True)[[tile_type(BLACK, 9), JOKER]].all()
    inner = counts((BLACK, 1), JOKER, (BLACK, 3))  # only black 1, joker=2, black 3 -> 6
    assert solve(NOTHING, inner, opening=True, min_initial=6) is not None
    assert solve(NOTHING, inner, opening=True, min_initial=7) is None


def test_opening_without_jokers_29_vs_30():
    twenty_nine = counts(*black_run(2, 4), (RED, 5), (BLUE, 5), (ORANGE, 5), (BLACK, 5))
    # 2-4 (9) + four 5s (20) = 29; black 2-5 (14) + red/blue/orange 5 (15) = 29 too
    assert solve(NOTHING, twenty_nine, opening=True) is None
    thirty = counts(*black_run(3, 5), (RED, 5), (BLUE, 5), (ORANGE, 5), (BLACK, 5))  # 3-5 + four 5s = 32
    assert solve(NOTHING, thirty, opening=True) is not None
    assert is_valid_play(NOTHING, twenty_nine, twenty_nine, opening=True, min_initial=29)
    assert not is_valid_play(NOTHING, twenty_nine, twenty_nine, opening=True)


def test_opening_leaves_table_untouched():
    table = counts(*black_run(1, 3))
    rack = counts((BLACK, 4), (RED, 10), (BLUE, 10), (ORANGE, 10))
    solution = solve(table, rack, opening=True)
    assert solution is not None
    assert solution.played[tile_type(BLACK, 4)] == 0  # black 4 could only join the table's run
    check_arrangement(solution.opening_melds, solution.played)
    check_arrangement(solution.melds, table + solution.played)
    assert playable(table, rack, NOTHING)[tile_type(BLACK, 4)]
    assert not playable(table, rack, NOTHING, opening=True)[tile_type(BLACK, 4)]


def test_empty_rack_and_dead_racks():
    table = counts(*black_run(1, 3))
    assert solve(table, NOTHING) is None
    assert not playable(table, NOTHING, NOTHING).any()
    assert not is_valid_play(table, NOTHING, NOTHING)
    dead = counts((RED, 1), (BLUE, 7), (ORANGE, 13))
    assert solve(table, dead) is None
    assert not playable(table, dead, NOTHING).any()


def test_forced_and_staged_tiles():
    table = counts(*black_run(1, 3))
    rack = counts((BLACK, 4), (RED, 9), (BLUE, 9), (ORANGE, 9), (RED, 1))
    best = solve(table, rack)
    assert best is not None and best.tiles == 4
    forced = counts((RED, 1))
    assert solve(table, rack, forced=forced) is None  # red 1 fits nowhere
    staged = counts((RED, 9))
    mask = playable(table, rack, staged)
    expected = {tile_type(BLACK, 4), tile_type(RED, 9), tile_type(BLUE, 9), tile_type(ORANGE, 9)} - {tile_type(RED, 9)}
    assert set(np.flatnonzero(mask).tolist()) == expected


def test_value_objective_prefers_points_and_counts_joker_as_30():
    table = counts(*black_run(1, 3))
    rack = counts((BLACK, 4), (BLACK, 5), (RED, 12), (BLUE, 12), JOKER)
    by_tiles = solve(table, rack, objective="tiles")
    by_value = solve(table, rack, objective="value")
    assert by_tiles is not None and by_value is not None
    assert by_tiles.tiles == 5 and by_value.value == 4 + 5 + 12 + 12 + 30


def test_answers_are_deterministic():
    table = counts(*black_run(3, 8), (RED, 5), (BLUE, 5), (ORANGE, 5), JOKER, (RED, 11), (RED, 12))
    rack = counts((BLACK, 9), (BLACK, 2), (RED, 13), (ORANGE, 8), (BLUE, 8), JOKER)
    first, second = solve(table, rack), solve(table.copy(), rack.copy())
    assert np.array_equal(first.played, second.played)
    assert [str(m) for m in first.melds] == [str(m) for m in second.melds]


def test_invalid_tables_are_refused():
    broken = counts((BLACK, 1), (BLACK, 2))
    assert arrange(broken) is None
    for call in (
        lambda: solve(broken, counts((RED, 5))),
        lambda: playable(broken, counts((RED, 5)), NOTHING),
        lambda: is_valid_play(broken, counts((BLACK, 3)), counts((BLACK, 3))),
    ):
        with pytest.raises(ValueError, match="table is not a valid arrangement"):
            call()


@pytest.mark.parametrize(
    ("table", "rack", "message"),
    [
        (np.zeros(52, dtype=int), NOTHING, r"table must be a count vector of shape \(53,\), got shape \(52,\)"),
        (NOTHING, np.zeros((53, 1), dtype=int), r"rack must be a count vector of shape"),
        (counts() - counts((RED, 2)), NOTHING, r"table\[14\] \(red 2\) is -1; counts must be >= 0"),
        (NOTHING, counts(*[(BLUE, 4)] * 3), r"rack\[29\] \(blue 4\) is 3; at most 2 exist"),
        (
            counts(*[(BLUE, 4)] * 2),
            counts((BLUE, 4)),
            r"table and rack hold 3 of tile 29 \(blue 4\); the game "
            r"has only 2 copies of blue 4",
        ),
        (counts(JOKER, JOKER), counts(JOKER), r"hold 3 of tile 52 \(joker\); the game has only 2 jokers"),
        (np.full(53, 0.5), NOTHING, r"table must hold integer counts, got dtype float64"),
    ],
)
def test_bad_positions_name_the_problem(table, rack, message):
    with pytest.raises(ValueError, match=message):
        solve(table, rack)
    with pytest.raises(ValueError, match=message):
        playable(table, rack, NOTHING)


def test_bad_options_name_the_problem():
    rack = counts((RED, 5))
    with pytest.raises(ValueError, match=r"staged\[17\] \(red 5\) is 2 but rack holds only 1"):
        playable(NOTHING, rack, counts((RED, 5), (RED, 5)))
    with pytest.raises(ValueError, match=r"forced\[0\] \(black 1\) is 1 but rack holds only 0"):
        solve(NOTHING, rack, forced=counts((BLACK, 1)))
    with pytest.raises(ValueError, match=r"played\[0\] \(black 1\) is 1 but rack holds only 0"):
        is_valid_play(NOTHING, rack, counts((BLACK, 1)))
    with pytest.raises(ValueError, match=r"objective must be one of \('tiles', 'value'\), got 'points'"):
        solve(NOTHING, rack, objective="points")
    with pytest.raises(ValueError, match=r"min_initial must be an integer >= 0, got -1"):
        solve(NOTHING, rack, opening=True, min_initial=-1)
