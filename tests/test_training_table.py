"""The final table of ``tableenvs train`` says which direction of the paired difference is better."""

from __future__ import annotations

import pytest

from tableenvs.training.job import format_table


def _row(agent: str, higher_is_better: bool, versus: bool) -> dict:
    row = {"opponents": "heuristic", "agent": agent, "games": 100, "score_name": "chilis"}
    row["higher_is_better"] = higher_is_better
    for key, value in (("win_rate", 0.2), ("mean_reward", -1.5), ("mean_score", 3.0)):
        row.update({key: value, f"{key}_low": value - 0.1, f"{key}_high": value + 0.1})
    if versus:
        row.update(
            trained_minus_this_score_diff=0.8,
            trained_minus_this_score_diff_low=0.6,
            trained_minus_this_score_diff_high=1.0,
            trained_minus_this_score_p=0.001,
            trained_minus_this_win_p=0.01,
        )
    return row


@pytest.mark.parametrize("higher, words", [(False, "fewer chilis is better"), (True, "more chilis is better")])
def test_the_table_says_which_difference_is_better(higher, words):
    text = format_table([_row("trained", higher, False), _row("heuristic", higher, True)])
    assert words in text.splitlines()[-1]
    assert ("negative difference" in text) == (not higher)
