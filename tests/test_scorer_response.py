"""The cross-entropy best-response learner (tableenvs.training.scorer_response): what it refuses, which recipe it
takes, and that its fitness and measure are the learner's seat over the target's on the same deals (a learner that
plays exactly as the target scores 0 on both, not merely about 0)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tableenvs
from tableenvs.policies.model_file import load_numpy_policy, save_for_env
from tableenvs.training.scorer_recipes import recipe_of
from tableenvs.training.scorer_response import check_scorer_response, scorer_best_response

FOUR = {"num_players": 4}


def test_a_game_without_a_recipe_is_refused_in_one_line(tmp_path):
    with pytest.raises(ValueError, match="llama_party_v0's GameSpec declares no cross-entropy recipe") as caught:
        scorer_best_response("llama_party_v0", "heuristic", tmp_path, generations=1, population=2, elite=1, games=2)
    assert "\n" not in str(caught.value)
    assert not any(tmp_path.iterdir())  # nothing written


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"recipe": "nope"}, "rummikub_v0 has no recipe 'nope'; its recipes: openings, holding, population"),
        ({"elite": 2, "population": 2}, "elite must be below population"),
        ({"spread": 0.0}, "spread must be > 0"),
        ({"games": 1}, "games"),
    ],
)
def test_bad_settings_are_refused_before_any_game(tmp_path, kwargs, message):
    settings = {"generations": 1, "population": 3, "elite": 1, "games": 4, **kwargs}
    with pytest.raises(ValueError, match=message):
        scorer_best_response("rummikub_v0", "heuristic", tmp_path / "run", options=FOUR, **settings)
    assert not (tmp_path / "run").exists()


def test_an_unknown_target_is_refused_before_any_game(tmp_path):
    with pytest.raises(ValueError, match="unknown best-response target 'nobody'"):
        scorer_best_response("rummikub_v0", "nobody", tmp_path / "run", options=FOUR, generations=1, population=2,
                             elite=1, games=2)  # fmt: skip
    assert not (tmp_path / "run").exists()


def test_the_default_recipe_is_the_one_whose_candidates_the_shipped_model_scores():
    shipped = load_numpy_policy(tableenvs.policies.numpy_policy.trained_model_path("rummikub_v0", {})).candidates
    name = check_scorer_response("rummikub_v0", None, FOUR)
    assert recipe_of("rummikub_v0", name).candidates == shipped
    assert name != "openings"  # the first declared recipe scores other candidates
    assert check_scorer_response("rummikub_v0", "openings", FOUR) == "openings"


def test_a_learner_starting_as_the_target_scores_exactly_zero(tmp_path):
    """The target is a scorer of the recipe's start weights, so the first generation's mean weights (drawn first, as
    the start itself) play its moves seat for seat: their fitness is 0 exactly; a later draw differs."""
    recipe = recipe_of("rummikub_v0", "holding")
    env = tableenvs.make_raw("rummikub_v0", **FOUR)
    target = save_for_env(
        tmp_path / "start.npz", env, weights=[(np.asarray(recipe.start).reshape(-1, 1), np.zeros(1))],
        activation="relu", candidates=recipe.candidates,
    )  # fmt: skip
    said: list[str] = []
    result = scorer_best_response(
        "rummikub_v0", str(target), tmp_path / "run", options=FOUR, recipe="holding", generations=2, population=3,
        elite=1, games=4, spread=2.0, eval_games=8, say=said.append,
    )  # fmt: skip
    lines = [json.loads(line) for line in (tmp_path / "run" / "scorer-response-start.jsonl").read_text().splitlines()]
    assert [line["generation"] for line in lines] == [0, 1]
    assert lines[0]["mu_score"] == 0.0
    assert lines[0]["best_score"] >= 0.0  # the elite's best is at least the start's 0
    assert result.training_games == 2 * 3 * 4 and result.recipe == "holding"
    assert result.deals == 2 and result.games == 8
    learned = load_numpy_policy(tmp_path / "run" / "scorer-response-start.npz")
    assert learned.candidates == recipe.candidates
    assert np.allclose(learned.weights[0][0][:, 0], lines[-1]["mu"])
    assert len(said) == 3 and said[-1].startswith("rummikub_v0")
    assert result.cpu_seconds > 0


def test_a_start_that_is_not_a_scorer_of_the_recipe_is_refused_in_one_line(tmp_path):
    with pytest.raises(ValueError, match=r"^start '.*rummikub_v0.npz': not a rummikub_openings_v1 scorer") as caught:
        scorer_best_response("rummikub_v0", "heuristic", tmp_path / "run", options=FOUR, recipe="openings",
                             start="trained", generations=1, population=2, elite=1, games=2)  # fmt: skip
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "run").exists()


def test_a_run_from_the_shipped_weights_starts_there_and_keeps_its_own_files(tmp_path):
    shipped = load_numpy_policy(tableenvs.policies.numpy_policy.trained_model_path("rummikub_v0", {}))
    result = scorer_best_response(
        "rummikub_v0", "trained", tmp_path, options=FOUR, start="trained", generations=1, population=2, elite=1,
        games=4, eval_games=8, say=lambda text: None,
    )  # fmt: skip
    line = json.loads((tmp_path / "scorer-response-trained-from-trained.jsonl").read_text())
    assert line["mu_score"] == 0.0  # the start is the target itself, seat for seat
    assert result.training_games == 8
    assert load_numpy_policy(tmp_path / "scorer-response-trained-from-trained.npz").meta["start"] == "trained"
    assert np.allclose(np.asarray(line["mu"]).shape, shipped.weights[0][0][:, 0].shape)


def test_the_start_is_the_recipes_or_a_files_and_a_missing_file_is_one_line(tmp_path):
    from tableenvs.training.scorer_response import start_of

    recipe = recipe_of("rummikub_v0", "holding")
    assert np.array_equal(start_of("rummikub_v0", FOUR, "holding", None), np.asarray(recipe.start, np.float64))
    shipped = load_numpy_policy(tableenvs.policies.numpy_policy.trained_model_path("rummikub_v0", {}))
    assert np.array_equal(start_of("rummikub_v0", FOUR, "holding", "trained"), shipped.weights[0][0][:, 0])
    with pytest.raises(ValueError, match=r"^start '.*missing\.npz': no numpy policy file") as caught:
        start_of("rummikub_v0", FOUR, "holding", tmp_path / "missing.npz")
    assert "\n" not in str(caught.value)
