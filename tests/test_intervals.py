"""Issue 30 item 5: a paired difference with no variance between blocks gets an honest (non-zero) interval."""

from __future__ import annotations

import math

import pytest

from tableenvs.evaluation.playing import GameRecord
from tableenvs.evaluation.statistics import _constant_interval, paired_comparisons


def _gauntlet_like(blocks: int) -> list[GameRecord]:
    """Entrant 0 never wins; entrant 1 wins exactly 1 of its 4 games in every block (a deterministic heuristic)."""
    records = []
    for block in range(blocks):
        for game in range(4):
            index = block * 4 + game
            records.append(GameRecord(index, block, (0, 2), (0.0, 1.0), (0.0, 1.0), (1,), (2, 1), False, 10))
            winners = (0,) if game == 0 else (1,)
            records.append(GameRecord(index, block, (1, 2), (0.0, 1.0), (0.0, 1.0), winners, (1, 2), False, 10))
    return records


@pytest.mark.parametrize("blocks", [10, 1000])
def test_zero_variance_win_difference_has_a_real_interval(blocks):
    (row,) = paired_comparisons(_gauntlet_like(blocks), ["a", "b", "field"], [(0, 1)])
    assert row["win_diff"] == pytest.approx(-0.25)
    assert row["win_diff_low"] < -0.25 < row["win_diff_high"]
    q = 1 - 0.05 ** (1 / blocks)
    assert row["win_diff_high"] - row["win_diff_low"] == pytest.approx(q * 2.0)
    assert row["win_p"] == pytest.approx(0.8**blocks)
    if blocks == 10:
        assert row["win_diff_high"] > 0 and row["win_p"] > 0.05  # ten blocks cannot rule out no difference


def test_constant_zero_difference_gives_p_one_and_a_symmetric_interval():
    low, high, p = _constant_interval(0.0, 200, -1.0, 1.0)
    assert p == 1.0 and low == pytest.approx(-high) and high == pytest.approx(1 - 0.05 ** (1 / 200))
    assert not math.isnan(low)


def test_varied_blocks_keep_the_normal_interval():
    records = _gauntlet_like(20)
    records[1] = GameRecord(0, 0, (1, 2), (0.0, 1.0), (0.0, 1.0), (0, 1), (1, 1), False, 10)
    (row,) = paired_comparisons(records, ["a", "b", "field"], [(0, 1)])
    from tableenvs.evaluation.ratings import mean_interval
    from tableenvs.evaluation.statistics import block_means

    means = block_means(records, 3)
    mean, low, high = mean_interval(means["win"][:, 0] - means["win"][:, 1])
    assert (row["win_diff_low"], row["win_diff_high"]) == (max(low, -1.0), min(high, 1.0))
