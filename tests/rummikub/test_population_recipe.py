"""Rummikub's population recipe (``tableenvs train rummikub_v0 --recipe population``): a weight vector's fitness is
the mean of its tables (tableenvs.training.scorer_recipes.TABLES), each a paired difference seat for seat."""

import json

import numpy as np
import pytest

from tableenvs.policies.model_file import load_numpy_policy
from tableenvs.training.scorer_recipes import TABLES, fitness, recipes, table_scores, train_scorer

START = np.array(recipes("rummikub_v0")["population"].start)


def test_the_population_recipe_is_declared_with_every_table():
    recipe = recipes("rummikub_v0")["population"]
    assert recipe.tables == TABLES and recipe.rank_points > 0
    assert recipe.start == recipes("rummikub_v0")["holding"].start


def test_fitness_is_the_mean_over_tables_of_score_plus_rank_points_per_place():
    scores = {"heuristic": (18.0, -0.25), "company": (-120.0, -1.0), "elite": (0.0, 0.0)}
    assert fitness(scores, 0.0) == pytest.approx((18.0 - 120.0) / 3)
    assert fitness(scores, 30.0) == pytest.approx((18.0 - 7.5 - 120.0 - 30.0) / 3)


@pytest.mark.parametrize("players", [2, 3])
def test_the_same_weights_as_the_elite_score_exactly_zero_at_the_elite_table(players):
    """Seat for seat on the same deals: the candidate and the elite, equal weights, play the same games."""
    scores = table_scores(
        "rummikub_v0", "holding", {"num_players": players}, START, START.copy(), 11, 2 * players, ("elite",)
    )
    assert scores == {"elite": (0.0, 0.0)}


def test_a_holder_loses_to_the_heuristic_seat_in_its_own_company():
    """A weight vector that always holds (draws instead of any play that does not go out) is far behind a heuristic
    seat among holders: the company table sees what the heuristic table cannot."""
    holder = START.copy()
    holder[-12:-6] = 5.0  # every hold_fewest bin: the draw always outscores the play
    scores = table_scores("rummikub_v0", "holding", {"num_players": 3}, holder, START, 21, 24, ("company",))
    assert scores["company"][0] < 0, scores


def test_the_population_recipe_writes_each_tables_scores_into_its_curve(tmp_path):
    lines = []
    path = train_scorer(
        "rummikub_v0",
        tmp_path,
        recipe="population",
        options={"num_players": 2},
        generations=1,
        population=2,
        elite=1,
        games=4,
        workers=1,
        say=lines.append,
    )
    model = load_numpy_policy(path)
    assert model.candidates == "rummikub_holding_v1" and model.meta["recipe"] == "population"
    progress = json.loads((tmp_path / "progress.jsonl").read_text().splitlines()[0])
    assert set(progress["mu_tables"]) == set(TABLES) and progress["mu_tables"]["elite"] == [0.0, 0.0]
    assert "company" in lines[0] and "generation 1/1" in lines[0]
