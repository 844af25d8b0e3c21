"""Issue 16, item 4: each name means one thing; the renamed ones keep their old name working, and counts are
checked in one place (``validation.check_at_least``) with one wording."""

from __future__ import annotations

import numpy as np
import pytest

from tableenvs import evaluation
from tableenvs.core.validation import check_at_least
from tableenvs.policies import play_game


def test_evaluation_play_game_is_play_planned_game_under_its_old_name():
    with pytest.warns(DeprecationWarning, match="now play_planned_game"):
        old = evaluation.play_game
    assert old is evaluation.play_planned_game is not play_game
    with pytest.raises(AttributeError, match="no attribute 'play_gamez'"):
        evaluation.play_gamez  # noqa: B018


@pytest.mark.parametrize(
    ("value", "least", "message"),
    [
        (0, 1, "workers must be an integer >= 1, got 0"),
        (2.5, 1, r"workers must be an integer >= 1, got 2\.5"),
        (True, 0, "workers must be an integer >= 0, got True"),
        ("3", 1, "workers must be an integer >= 1, got '3'"),
    ],
)
def test_check_at_least_names_the_value_and_the_bound(value, least, message):
    with pytest.raises(ValueError, match=message):
        check_at_least("workers", value, least)


def test_check_at_least_returns_a_plain_int():
    result = check_at_least("games", np.int64(4), 1)
    assert result == 4 and type(result) is int
