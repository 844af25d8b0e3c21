"""Rummikub's population recipe (``tableenvs train rummikub_v0 --recipe population``): a weight vector's fitness is
the mean of its tables (tableenvs.training.scorer_recipes.TABLES), each a paired difference seat for seat."""

import json
from pathlib import Path

import numpy as np
import pytest

from tableenvs.cli import main
from tableenvs.policies.model_file import load_numpy_policy
from tableenvs.training import scorer_recipes
from tableenvs.training.scorer_recipes import TABLES, fitness, recipes, start_weights, table_scores, train_scorer

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


SHIPPED_3P = Path(__file__).resolve().parents[2] / "tableenvs" / "models" / "rummikub_v0-3p.npz"


def test_a_run_from_a_model_file_starts_at_its_weights_with_its_own_rank_points(tmp_path):
    """Generation 1's mean weights are the file's (its tables are those of the file's weights on the generation's
    deals), and its fitness weighs rank by the run's rank points, not the recipe's."""
    recipe = recipes("rummikub_v0")["population"]
    weights = start_weights(SHIPPED_3P, recipe)
    assert weights.shape == START.shape and not np.array_equal(weights, START)
    train_scorer(
        "rummikub_v0", tmp_path, recipe="population", options={"num_players": 2}, generations=1, population=2,
        elite=1, games=4, workers=1, init=SHIPPED_3P, spread=0.25, rank_points=90.0, say=lambda text: None,
    )  # fmt: skip
    line = json.loads((tmp_path / "progress.jsonl").read_text().splitlines()[0])
    assert line["settings"]["init"] == {"file": "rummikub_v0-3p.npz", "weights": weights.tolist()}
    assert line["settings"]["spread"] == 0.25 and line["settings"]["rank_points"] == 90.0
    own = table_scores("rummikub_v0", "population", {"num_players": 2}, weights, weights, line["deals"], 4, TABLES)
    assert {name: list(value) for name, value in own.items()} == line["mu_tables"]
    assert line["mu_score"] == pytest.approx(fitness(own, 90.0))
    with pytest.raises(ValueError, match="holds a run with other settings"):  # a rerun must start the same way
        train_scorer("rummikub_v0", tmp_path, recipe="population", options={"num_players": 2}, population=2,
                     elite=1, games=4, workers=1, init=SHIPPED_3P, spread=0.25)  # fmt: skip


def test_a_start_file_that_is_no_scorer_of_the_recipes_candidates_is_a_one_line_error(tmp_path):
    recipe = recipes("rummikub_v0")["population"]
    (tmp_path / "text.npz").write_text("not an archive")
    for path, says in (
        (tmp_path / "missing.npz", "no numpy policy file"),
        (tmp_path / "text.npz", "not a readable .npz archive"),
        (SHIPPED_3P.parent / "llama_party_v0.npz", "not a rummikub_holding_v1 scorer of 22 weights"),
    ):
        with pytest.raises(ValueError, match=says) as error:
            start_weights(path, recipe)
        assert str(error.value).startswith("--init ") and "\n" not in str(error.value)


def test_the_cli_passes_the_start_spread_rank_points_and_table_games_and_refuses_bad_ones(
    tmp_path, monkeypatch, capsys
):
    seen: dict = {}
    monkeypatch.setattr(scorer_recipes, "train_scorer", lambda game, out, **kwargs: seen.update(kwargs, out=out))
    args = ["train", "rummikub_v0", "--recipe", "population", "--players", "4", "--out", str(tmp_path / "run")]
    extra = ["--init", str(SHIPPED_3P), "--spread", "0.3", "--rank-points", "80", "--table-games", "240"]
    assert main([*args, *extra]) == 0
    assert seen["init"] == str(SHIPPED_3P) and seen["spread"] == 0.3 and seen["rank_points"] == 80.0
    assert seen["games"] == 240 and seen["generations"] == recipes("rummikub_v0")["population"].generations
    seen.clear()
    assert main(args) == 0  # without them: the recipe's start, spread 1, its rank points and games
    assert seen["init"] is None and seen["spread"] == 1.0 and seen["rank_points"] is None and seen["games"] == 120
    for flags, says in (
        (["--init", str(tmp_path / "nope.npz")], "--init"),
        (["--init", str(SHIPPED_3P.parent / "llama_party_v0.npz")], "not a rummikub_holding_v1 scorer"),
        (["--spread", "0"], "--spread must be > 0"),
        (["--rank-points", "-1"], "--rank-points must be >= 0"),
        (["--table-games", "1"], "--table-games must be an integer >= 2"),
    ):
        seen.clear()
        capsys.readouterr()
        out = tmp_path / "refused"
        assert main([*args[:-1], str(out), *flags]) == 2
        err = capsys.readouterr().err
        assert says in err and err.count("\n") == 1 and not seen and not out.exists()
    assert main(["train", "rummikub_v0", "--init", str(SHIPPED_3P), "--out", str(tmp_path / "plain")]) == 2
    assert "--init only goes with a game's own --recipe" in capsys.readouterr().err
