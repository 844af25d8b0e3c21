"""``tableenvs train GAME --recipe advantage --init FILE``: the flags reach
:func:`tableenvs.training.advantage_iteration.advantage_iteration` as given, the shipped models' documented
settings among them; bad input is a one-line error before anything is written; a tiny real run writes a model."""

from __future__ import annotations

import pytest

import tableenvs
from tableenvs.cli import main
from tableenvs.policies.model_env import model_options
from tableenvs.policies.numpy_policy import load_numpy_policy, trained_model_path
from tableenvs.training import advantage_iteration as ai

pytest.importorskip("torch")
GAME = "llama_party_v0"


def shipped(players: int) -> str:
    env = tableenvs.make_raw(GAME, num_players=players)
    env.reset(seed=0)
    return str(trained_model_path(GAME, model_options(env)))


def test_the_flags_reach_advantage_iteration(tmp_path, monkeypatch, capsys):
    seen = {}

    def record(game, out, **kwargs):
        seen.update(game=game, out=out, **kwargs)
        return tmp_path / "step-4" / "model.npz"

    monkeypatch.setattr(ai, "advantage_iteration", record)
    start = shipped(2)
    args = ["train", GAME, "--recipe", "advantage", "--players", "2", "--init", start, "--out", str(tmp_path / "r")]
    more = ["--steps", "4", "--bonus", "1", "--objective", "margin", "--label-games", "3000"]
    assert main([*args, *more]) == 0
    assert seen == {"game": GAME, "out": str(tmp_path / "r"), "start": start, "options": {"num_players": 2},
                    "steps": 4, "label_games": 3000, "bonus": 1.0, "objective": "margin", "workers": 2}  # fmt: skip
    assert "step-4" in capsys.readouterr().out
    seen.clear()
    assert main(args) == 0  # the recipe's defaults
    assert (seen["steps"], seen["bonus"], seen["objective"], seen["label_games"]) == (3, 3.0, "score", 3000)


@pytest.mark.parametrize(
    "extra, named",
    [
        ([], "needs --init"),
        (["--init", "nowhere.npz"], "no saved model"),
        (["--init", "model.zip"], "numpy policy file"),
        (["--init", "SHIPPED4"], "num_players"),  # a 4-player model at 2 players
        (["--init", "SHIPPED2", "--steps", "0"], "--steps"),
        (["--init", "SHIPPED2", "--bonus", "-1"], "--bonus"),
        (["--init", "SHIPPED2", "--label-games", "1"], "--label-games"),
        (["--init", "SHIPPED2", "--objective", "wins"], "--objective"),
        (["--init", "SHIPPED2", "--timesteps", "10"], "does not take --timesteps"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(extra, named, tmp_path, capsys):
    extra = [{"SHIPPED2": shipped(2), "SHIPPED4": shipped(4)}.get(flag, flag) for flag in extra]
    out = tmp_path / "r"
    code = main(["train", GAME, "--recipe", "advantage", "--players", "2", "--out", str(out), *extra])
    err = capsys.readouterr().err
    assert code == 2 and named in err and err.count("\n") == 1, err
    assert not out.exists()


def test_a_candidate_scorer_is_refused_before_anything_runs(tmp_path, capsys):
    env = tableenvs.make_raw("rummikub_v0", num_players=4)
    env.reset(seed=0)
    scorer = str(trained_model_path("rummikub_v0", model_options(env)))
    out = tmp_path / "r"
    code = main(["train", "rummikub_v0", "--recipe", "advantage", "--init", scorer, "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 2 and "candidate-scoring model" in captured.err and captured.err.count("\n") == 1
    assert captured.out == "" and not out.exists()


def test_the_advantage_flags_only_go_with_the_recipe(tmp_path, capsys):
    assert main(["train", GAME, "--bonus", "1", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "--bonus only goes with --recipe advantage" in err and err.count("\n") == 1
    assert not (tmp_path / "r").exists()


def test_a_tiny_run_writes_a_playable_model(tmp_path, capsys):
    out = tmp_path / "r"
    args = ["train", GAME, "--recipe", "advantage", "--players", "2", "--init", shipped(2), "--out", str(out),
            "--steps", "1", "--label-games", "2", "--objective", "margin"]  # fmt: skip
    assert main(args) == 0
    model = load_numpy_policy(out / "step-1" / "model.npz")
    assert model.game == GAME and model.options["num_players"] == 2
    assert model.meta["objective"] == "margin" and model.meta["recipe"].startswith("advantage step from ")
