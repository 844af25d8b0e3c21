"""What a newcomer meets in the first minutes: the single-agent env under Stable-Baselines3's helpers, the refusals of a
model used where it does not belong, and the progress of a tournament whose games are few and long.

Each test states the mistake or the helper, and checks the one line (or the silence) the user gets.
"""

from __future__ import annotations

import io
import threading
import warnings

import numpy as np
import pytest

import tableenvs
from tableenvs.commands.eval import ProgressLines
from tableenvs.core.actions import IllegalActionError
from tableenvs.policies import make_policy
from tableenvs.policies.numpy_policy import MODELS_DIR
from tableenvs.training.single_agent import SingleAgentEnv


@pytest.fixture
def package_models(monkeypatch):
    monkeypatch.delenv("TABLEENVS_MODELS", raising=False)  # the shipped models, not a test's directory


# ------------------------------------------------------------------------ the single-agent env under SB3's helpers


def test_make_vec_env_prints_no_render_mode_warning():
    pytest.importorskip("stable_baselines3", reason="needs the train extra")
    from stable_baselines3.common.env_util import make_vec_env

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        vec = make_vec_env("tableenvs:tableenvs/PiliPili-v0", n_envs=2, env_kwargs={"num_players": 4})
    said = [str(warning.message) for warning in caught if "render" in str(warning.message)]
    assert said == []
    # make_vec_env asked for "rgb_array" and got it: a picture is drawn only when render() is called
    assert vec.envs[0].unwrapped.render_mode == "rgb_array"
    assert "rgb_array" in SingleAgentEnv.metadata["render_modes"]
    vec.close()


def test_rgb_array_draws_the_table_only_when_asked():
    pytest.importorskip("resvg_py", reason="needs the render extra")
    env = SingleAgentEnv("pilipili_v0", num_players=3, render_mode="rgb_array")
    env.reset(seed=0)
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    picture = env.render()
    assert isinstance(picture, np.ndarray) and picture.dtype == np.uint8 and picture.shape[2] == 3


def test_sb3_check_env_on_the_default_env_names_the_illegal_action_option():
    pytest.importorskip("stable_baselines3", reason="needs the train extra")
    from stable_baselines3.common.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. "A Box observation space minimum value is -infinity"
        with pytest.raises(IllegalActionError) as raised:
            check_env(SingleAgentEnv("pilipili_v0"))
    message = str(raised.value)
    assert "illegal_action='random'" in message and "illegal_action='lose'" in message, message
    assert "\n" not in message and message.startswith("pilipili_v0: illegal action ")


def test_an_illegal_action_names_the_option_and_changes_nothing():
    env = SingleAgentEnv("llama_party_v0", num_players=3)
    env.reset(seed=3)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    before = env.game.get_state()
    with pytest.raises(IllegalActionError, match=r"illegal_action='random'"):
        env.step(illegal)
    assert env.game.get_state() == before


# ------------------------------------------------------------------------ a model where it does not belong


def test_a_model_of_another_game_is_refused_as_the_wrong_game(package_models, cli, tmp_path):
    model = str(MODELS_DIR / "pilipili_v0.npz")
    for flags in (["--policies", f"{model},heuristic"], ["--players", "4", "--policies", f"heuristic,{model}"]):
        code, out, err = cli(["eval", "llama_party_v0", *flags, "--games", "2", "--out", str(tmp_path / "e")])
        assert code == 2 and out == ""
        assert "wrong game: this model was made for pilipili_v0, not llama_party_v0" in err, err
        assert "num_players" not in err and err.count("\n") == 1
    code, _, err = cli(["eval", "llama_party_v0", "--players", "4", "--policies", "heuristic", "--opponents", model])
    assert code == 2 and "opponent #1 (pilipili_v0): wrong game" in err, err
    with pytest.raises(ValueError, match=r"^model 'pilipili_v0.npz': wrong game: it was made for pilipili_v0, not"):
        make_policy(model, tableenvs.make_raw("rummikub_v0"))


def test_trained_where_no_model_fits_names_the_settings_that_have_one(package_models, monkeypatch, tmp_path):
    from tableenvs.policies.numpy_policy import MODELS_DIR

    # a models directory with the default setting's file alone (the package ships one for most player counts)
    (tmp_path / "pilipili_v0.npz").write_bytes((MODELS_DIR / "pilipili_v0.npz").read_bytes())
    monkeypatch.setenv("TABLEENVS_MODELS", str(tmp_path))
    with pytest.raises(ValueError) as raised:
        make_policy("trained", tableenvs.make_raw("pilipili_v0", num_players=3))
    message = str(raised.value)
    assert message.startswith("'trained' has no model for pilipili_v0 with num_players=3; it has one for 5 players ")
    assert "'search' or 'heuristic'" in message and "tableenvs train pilipili_v0 --players 3" in message
    assert "\n" not in message and "{" not in message  # no option dicts
    with pytest.raises(ValueError, match=r"with missions='none'; it has one for missions='standard' at 5 players "):
        make_policy("trained", tableenvs.make_raw("pilipili_v0", num_players=5, missions="none"))
    assert make_policy("trained", tableenvs.make_raw("pilipili_v0", num_players=5)).name == "pilipili_v0.npz"


def test_trained_where_no_model_fits_names_each_shipped_setting_once(package_models):
    """The package's Rummikub models (2, 3 and 4 players, default options) against an env of another ``max_turns``:
    one setting, its player counts joined, each model's own difference from the env (not the default file's)."""
    with pytest.raises(ValueError) as raised:
        make_policy("trained", tableenvs.make_raw("rummikub_v0", num_players=3, max_turns=50))
    message = str(raised.value)
    assert "with max_turns=50; it has one for max_turns=1000 at 2-4 players (the rest as this env's)" in message
    assert message.endswith("(tableenvs train rummikub_v0)")  # the player count is not what is missing


def test_trained_for_a_game_without_a_model_suggests_search_or_heuristic(tmp_path, monkeypatch):
    monkeypatch.setenv("TABLEENVS_MODELS", str(tmp_path))  # an empty models directory
    with pytest.raises(ValueError, match=r"no trained model is shipped for rummikub_v0 .*'search' or 'heuristic'"):
        make_policy("trained", tableenvs.make_raw("rummikub_v0"))


# ------------------------------------------------------------------------ progress of few, long games


def test_no_progress_still_writes_a_start_line_and_periodic_lines():
    stream = io.StringIO()
    lines = ProgressLines(games=4, resumed=1, stream=stream, interval=3600.0)  # the timer thread never fires here
    with lines:
        assert stream.getvalue() == ""  # nothing before the games start (a refused tournament says only why)
        lines(0)  # evaluate: every check passed, the games start
        lines(2)
        lines.line()  # what the timer thread writes every interval
    text = stream.getvalue().splitlines()
    assert text[0].startswith("tableenvs eval: playing 4 games, 1 of them from the stopped run; a line every 3600 s")
    assert text[1].startswith("tableenvs eval: 3 of 4 games played, 0:0") and len(text) == 2


def test_no_progress_lines_come_from_a_timer_between_finished_games():
    """The timer thread writes without any game finishing (a long search game): waited for by an event, not a clock."""
    written = threading.Event()

    class Stream(io.StringIO):
        def write(self, text):
            if "games played" in text:
                written.set()
            return super().write(text)

    stream = Stream()
    with ProgressLines(games=2, resumed=0, stream=stream, interval=0.01) as lines:
        lines(0)
        assert written.wait(timeout=120)  # generous: a loaded machine may starve the thread for a while
    assert "tableenvs eval: 0 of 2 games played" in stream.getvalue()


def test_eval_under_no_progress_says_it_started(cli, tmp_path):
    argv = ["eval", "pilipili_v0", "--policies", "search:sims=2,heuristic", "--games", "2", "--no-progress"]
    code, out, err = cli([*argv, "--no-plot", "--out", str(tmp_path / "e")])
    assert code == 0, err
    assert err.startswith("tableenvs eval: playing 2 games; a line every 30 s"), err
    assert "2 games in " in out


def test_the_bar_is_redrawn_while_no_game_ends(monkeypatch):
    import tableenvs.evaluation as evaluation

    redrawn = threading.Event()

    class Bar:
        def refresh(self):
            redrawn.set()

    monkeypatch.setattr(evaluation, "REFRESH_SECONDS", 0.01)
    stop = evaluation._keep_fresh(Bar())
    assert redrawn.wait(timeout=120)  # an event, with a bound generous for a loaded machine
    stop()


# ------------------------------------------------------------------------ the quick start's payoff


def test_the_final_table_places_the_run_among_random_heuristic_and_the_shipped_model(package_models):
    from tableenvs.training.config import TrainConfig
    from tableenvs.training.reports import SHIPPED_AGENT, format_table, shipped_model_fits, standings

    assert shipped_model_fits(TrainConfig("pilipili_v0"))  # the quick start's setting: the shipped model fits
    assert not shipped_model_fits(TrainConfig("pilipili_v0", options={"missions": "none"}))  # a changed rule: none

    def row(agent, chilis):
        values = {"win_rate": 0.2, "mean_reward": -chilis, "mean_score": chilis}
        out = {"opponents": "heuristic", "agent": agent, "games": 200, "score_name": "chilis"}
        out["higher_is_better"] = False
        for key, value in values.items():
            out.update({key: value, f"{key}_low": value - 0.1, f"{key}_high": value + 0.1})
        return out

    rows = [row("trained", 4.7), row("random", 7.2), row("heuristic", 3.9), row(SHIPPED_AGENT, 2.3)]
    assert standings(rows) == (
        "where it stands against heuristic opponents, best first (chilis/game): shipped 'trained' 2.30, "
        "heuristic 3.90, this run 4.70, random 7.20"
    )
    assert "trained (this run)" in format_table(rows) and SHIPPED_AGENT in format_table(rows)


def test_the_run_ends_with_the_next_commands_to_try():
    from pathlib import Path

    from tableenvs.training.config import TrainConfig
    from tableenvs.training.reports import next_commands

    config = TrainConfig("pilipili_v0", out="runs/quick")
    play, tournament, longer = next_commands(config, Path("runs/quick/model.npz"), 5, trusted=False)
    seats = "human,runs/quick/model.npz,heuristic,heuristic,heuristic"
    assert play.endswith(f"tableenvs play pilipili_v0 --policies {seats}")
    assert tournament.endswith("--policies runs/quick/model.npz,heuristic,trained --games 2000")
    assert longer.endswith("--opponents heuristic --timesteps 100000 --out runs/next")
    three = TrainConfig("pilipili_v0", out="runs/x", options={"num_players": 3})
    play, *_ = next_commands(three, Path("runs/x/model.zip"), 3, trusted=True)
    assert play.endswith("--players 3 --policies human,runs/x/model.zip,heuristic --trust-models")


# ------------------------------------------------------------------------ the README as an on-ramp

QUICK_START = 'python -m pip install torch==2.13.0 -e ".[train]" && tableenvs train pilipili_v0 --out runs/quick'
TEST_COMMAND = 'python -m pip install torch==2.13.0 -e ".[dev,train,render]" && python -m pytest -q'


def test_the_readme_is_short_and_starts_with_its_commands():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    lines = (root / "README.md").read_text().splitlines()
    assert len(lines) <= 150
    assert next(i for i, line in enumerate(lines) if line.startswith("```")) < 40
    commands = [line for line in lines if line.startswith("python -m pip install torch==")]
    assert commands == [QUICK_START, TEST_COMMAND]  # exactly two, the quick start first
    # CI runs the README's test command as written (with pip's --quiet)
    ci = (root / ".ci" / "run").read_text()
    assert TEST_COMMAND.replace("install torch", "install --quiet torch") in ci
