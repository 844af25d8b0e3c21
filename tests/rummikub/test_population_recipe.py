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


def _scorer_file(path: Path, weights: np.ndarray, players: int) -> Path:
    """A model file of the population recipe's candidates with these weights."""
    from tableenvs.core.registry import make_raw
    from tableenvs.policies.model_file import save_for_env

    env = make_raw("rummikub_v0", num_players=players)
    candidates = recipes("rummikub_v0")["population"].candidates
    weights = np.asarray(weights, np.float64).reshape(-1, 1)
    return save_for_env(path, env, weights=[(weights, np.zeros(1))], activation="relu", candidates=candidates)


def test_a_file_of_the_candidates_own_weights_scores_exactly_zero_at_its_against_table(tmp_path):
    """Seat for seat on the same deals, the file plays as the candidate would: the table measures what another
    player gains at a table of the weights, and a player that is the weights gains nothing."""
    path = _scorer_file(tmp_path / "same.npz", START, 3)
    files = scorer_recipes.against_files("rummikub_v0", {"num_players": 3}, (path,))
    assert list(files) == ["against:same.npz"]
    scores = table_scores("rummikub_v0", "holding", {"num_players": 3}, START, START, 11, 6, tuple(files), files)
    assert scores == {"against:same.npz": (0.0, 0.0)}


def test_an_against_table_is_one_seat_of_the_file_among_the_weights_own(tmp_path):
    """A holder in one seat among the start's seats: the table is the start's seat minus the holder's, as the
    gauntlet of the two against a field of the start measures it (tableenvs.evaluation.evaluate)."""
    from tableenvs.core.registry import make_raw
    from tableenvs.evaluation import evaluate

    holder = START.copy()
    holder[-12:-6] = 5.0
    path = _scorer_file(tmp_path / "holder.npz", holder, 3)
    files = scorer_recipes.against_files("rummikub_v0", {"num_players": 3}, (path,))
    scores = table_scores("rummikub_v0", "holding", {"num_players": 3}, START, START, 21, 12, tuple(files), files)
    start = scorer_recipes.scorer(make_raw("rummikub_v0", num_players=3), START, name="candidate", recipe="holding")
    result = evaluate("rummikub_v0", [start, str(path)], 12, opponents=start, num_players=3, seed=21)
    assert scores["against:holder.npz"][0] == pytest.approx(result.paired[0]["score_diff"])
    assert scores["against:holder.npz"][0] != 0.0


def test_a_run_against_files_adds_their_tables_and_keeps_their_digests(tmp_path):
    path = _scorer_file(tmp_path / "same.npz", START, 2)
    train_scorer(
        "rummikub_v0", tmp_path / "run", recipe="population", options={"num_players": 2}, generations=2,
        population=2, elite=1, games=4, workers=1, against=(path,), say=lambda text: None,
    )  # fmt: skip
    line, second = (json.loads(text) for text in (tmp_path / "run" / "progress.jsonl").read_text().splitlines())
    assert set(line["mu_tables"]) == set(second["mu_tables"]) == {*TABLES, "against:same.npz"}
    assert line["mu_tables"]["against:same.npz"] == [0.0, 0.0]  # generation 1's mean is the start: the file
    assert line["settings"]["against"] == [{"file": "same.npz", "sha256": scorer_recipes.file_sha256(path)}]
    with pytest.raises(ValueError, match="holds a run with other settings"):  # a rerun must name the same files
        train_scorer("rummikub_v0", tmp_path / "run", recipe="population", options={"num_players": 2},
                     generations=3, population=2, elite=1, games=4, workers=1)  # fmt: skip


def test_against_files_that_do_not_fit_are_one_line_errors_and_the_cli_passes_them(tmp_path, monkeypatch, capsys):
    same = _scorer_file(tmp_path / "same.npz", START, 4)
    (tmp_path / "twin").mkdir()
    twin = _scorer_file(tmp_path / "twin" / "same.npz", START, 4)
    for paths, says in (
        ((tmp_path / "missing.npz",), "no such file"),
        ((Path(__file__),), r"not a numpy policy file \(\.npz\)"),
        ((SHIPPED_3P,), "differ: num_players"),
        ((same, twin), "two files named 'same.npz'"),
    ):
        with pytest.raises(ValueError, match=says) as error:
            scorer_recipes.against_files("rummikub_v0", {"num_players": 4}, paths)
        assert str(error.value).startswith("--against ") and "\n" not in str(error.value)
    with pytest.raises(ValueError, match="differ: num_players"):  # train_scorer refuses before writing anything
        train_scorer("rummikub_v0", tmp_path / "unwritten", recipe="population", options={"num_players": 4},
                     generations=1, population=2, elite=1, games=4, workers=1, against=(SHIPPED_3P,))  # fmt: skip
    assert not (tmp_path / "unwritten").exists()
    seen: dict = {}
    monkeypatch.setattr(scorer_recipes, "train_scorer", lambda game, out, **kwargs: seen.update(kwargs, out=out))
    args = ["train", "rummikub_v0", "--recipe", "population", "--players", "4", "--out", str(tmp_path / "run")]
    assert main([*args, "--against", str(same)]) == 0
    assert seen["against"] == (str(same),)
    chosen = recipes("rummikub_v0")["population"]
    per_generation = chosen.games * chosen.population * (len(chosen.tables) + 1)
    assert main([*args, "--against", str(same), "--timesteps", str(per_generation - 1)]) == 2
    assert "must be at least" in capsys.readouterr().err
    seen.clear()
    assert main([*args[:-1], str(tmp_path / "refused"), "--against", str(SHIPPED_3P)]) == 2
    err = capsys.readouterr().err
    assert "--against" in err and err.count("\n") == 1 and not seen and not (tmp_path / "refused").exists()
    assert main(["train", "rummikub_v0", "--against", str(same), "--out", str(tmp_path / "plain")]) == 2
    assert "--against only goes with a game's own --recipe" in capsys.readouterr().err
