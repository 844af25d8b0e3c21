"""``tableenvs train GAME --recipe strong``: the flags it does not read are refused before anything runs, and it
runs the recipe (tableenvs/training/recipe.py, kept to seconds here) into --out, where a rerun continues."""

import pytest

from tableenvs.cli import main
from tableenvs.policies.numpy_policy import load_numpy_policy
from tableenvs.training import recipe

pytest.importorskip("sb3_contrib")


@pytest.mark.parametrize(
    "flags, named",
    [
        (["--opponents", "heuristic"], "--opponents"),
        (["--algo", "ppo"], "--algo"),
        (["--backend", "rllib"], "--backend"),
        (["--envs", "2"], "--envs"),
        (["--resume", "somewhere"], "--resume"),
    ],
)
def test_flags_the_recipe_does_not_read_are_one_line_errors(flags, named, tmp_path, capsys):
    code = main(["train", "pilipili_v0", "--recipe", "strong", "--out", str(tmp_path / "r"), *flags])
    err = capsys.readouterr().err
    assert code == 2 and named in err and "--recipe strong does not take" in err and err.count("\n") == 1
    assert not (tmp_path / "r").exists()


def test_label_games_without_the_recipe_and_bad_values_are_refused(tmp_path, capsys):
    assert main(["train", "pilipili_v0", "--label-games", "10", "--out", str(tmp_path)]) == 2
    assert "--label-games only goes with --recipe strong" in capsys.readouterr().err
    assert main(["train", "pilipili_v0", "--recipe", "strong", "--label-games", "0", "--out", str(tmp_path)]) == 2
    assert "--label-games" in capsys.readouterr().err
    assert main(["train", "pilipili_v0", "--recipe", "strong", "--players", "9", "--out", str(tmp_path / "x")]) == 2
    assert "num_players" in capsys.readouterr().err
    assert main(["train", "--recipe", "strong"]) == 2
    assert "needs an environment name" in capsys.readouterr().err


def test_the_recipe_runs_into_out_with_the_flags_given(tmp_path, monkeypatch, capsys):
    calls = []
    real = recipe.strong

    def small(game, out, **kwargs):  # the recipe itself on a seconds budget (tests/test_recipe.py tests it)
        calls.append((game, kwargs))
        small_ft = {
            "chunk": 512,
            "settings": {"n_envs": 2, "rollout": 128, "minibatch": 64, "epochs": 1, "value_warmup": 0},
        }
        kwargs = {**kwargs, "fine_tune_options": small_ft}
        return real(game, out, **kwargs, epochs=2, hidden=(16,), workers=1)

    monkeypatch.setattr(recipe, "strong", small)
    out = tmp_path / "run"
    args = ["train", "pilipili_v0", "--recipe", "strong", "--players", "3", "--timesteps", "512"]
    assert main([*args, "--label-games", "3", "--seed", "2", "--out", str(out)]) == 0
    game, kwargs = calls[0]
    assert game == "pilipili_v0" and kwargs["steps"] == 512 and kwargs["label_games"] == 3 and kwargs["seed"] == 2
    assert kwargs["options"] == {"num_players": 3}
    model = load_numpy_policy(out / "fine-tune" / "model.npz")
    assert model.game == "pilipili_v0" and model.options["num_players"] == 3
    capsys.readouterr()
    assert main([*args[:-1], "1024", "--out", str(out)]) == 0  # a rerun continues from the last export
    assert "resum" in capsys.readouterr().out.lower()
    assert calls[1][1]["steps"] == 1024
    # --resume is the plain job's: on a recipe run it says how to continue it; another game or player count in the
    # same --out is refused before anything runs
    assert main(["train", "--resume", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"rerun tableenvs train pilipili_v0 --recipe strong --players 3 --out {out}" in err and err.count("\n") == 1
    assert main(["train", "pilipili_v0", "--recipe", "strong", "--players", "4", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "holds another recipe run" in err and "num_players" in err and err.count("\n") == 1
    assert len(calls) == 2


def test_the_recipe_budget_defaults_to_ten_million_steps(tmp_path, monkeypatch):
    seen = {}
    monkeypatch.setattr(recipe, "strong", lambda game, out, **kwargs: seen.update(kwargs))
    assert main(["train", "llama_party_v0", "--recipe", "strong", "--out", str(tmp_path)]) == 0
    assert seen["steps"] == 10_000_000 and seen["label_games"] == 1500 and seen["options"] == {}
    # a --timesteps given is the budget, even the plain job's default
    assert main(["train", "llama_party_v0", "--recipe", "strong", "--timesteps", "50000", "--out", str(tmp_path)]) == 0
    assert seen["steps"] == 50_000 and seen["fine_tune_options"] is None


def test_learner_seats_reach_the_fine_tuning_and_bad_counts_are_refused_before_anything_runs(
    tmp_path, monkeypatch, capsys
):
    seen = {}
    monkeypatch.setattr(recipe, "strong", lambda game, out, **kwargs: seen.update(kwargs))
    args = ["train", "pilipili_v0", "--recipe", "strong", "--out", str(tmp_path / "r")]
    assert main([*args, "--learner-seats", "3"]) == 0
    assert seen["fine_tune_options"] == {"learner_seats": 3}
    for bad in ("5", "0"):
        assert main([*args, "--learner-seats", bad]) == 2
        err = capsys.readouterr().err
        assert "--learner-seats" in err and err.count("\n") == 1
    assert main(["train", "pilipili_v0", "--learner-seats", "3", "--out", str(tmp_path / "p")]) == 2
    assert "--learner-seats only goes with --recipe" in capsys.readouterr().err
    assert main(["train", "pilipili_v0", "--recipe", "search-clone", "--learner-seats", "3"]) == 2
    assert "--recipe search-clone does not take --learner-seats" in capsys.readouterr().err


def test_the_search_clone_recipe_runs_into_out_and_refuses_the_flags_it_does_not_read(tmp_path, monkeypatch, capsys):
    calls = []
    real = recipe.search_clone

    def small(game, out, **kwargs):  # the heuristic as the labeller, 2 games: seconds, not the search's minutes
        calls.append((game, kwargs))
        kwargs = {**kwargs, "label_games": 2}
        return real(game, out, **kwargs, labeller="heuristic", epochs=1, hidden=(16,), workers=1)

    monkeypatch.setattr(recipe, "search_clone", small)
    out = tmp_path / "run"
    args = ["train", "llama_party_v0", "--recipe", "search-clone", "--out", str(out)]
    assert main([*args, "--timesteps", "512"]) == 2  # no PPO step: no budget of steps
    err = capsys.readouterr().err
    assert "--recipe search-clone does not take --timesteps" in err and err.count("\n") == 1
    assert main([*args, "--seed", "3"]) == 0
    game, kwargs = calls[0]
    assert game == "llama_party_v0" and kwargs == {"options": {}, "label_games": 300, "seed": 3}  # 300 unless told
    model = load_numpy_policy(out / "model.npz")
    assert model.game == "llama_party_v0" and model.input_features == "llama_party_card_values_v1"
    assert main([*args, "--label-games", "7"]) == 0 and calls[1][1]["label_games"] == 7  # a rerun finds the model
    assert main(["train", "llama_party_v0", "--recipe", "search-clone", "--players", "3", "--out", str(out)]) == 2
    assert "holds another recipe run" in capsys.readouterr().err
