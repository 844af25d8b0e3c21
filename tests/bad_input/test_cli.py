"""Bad input to the ``tableenvs`` command line: every user error is one line on stderr and exit code 2.

A table of argument lists, each failing before any game or training starts (so the whole table takes seconds),
run in-process through ``tableenvs.cli.main``; then a few cases that need a real process: the train extra
missing, stdout closed early (``| head``) and Ctrl-C.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from load_bounds import HANG

from tableenvs.cli import main
from tableenvs.commands.extras import missing_module as _missing_module
from tableenvs.commands.train import TRAIN_MODULES

ROOT = Path(__file__).resolve().parents[2]
HAS_TRAIN_EXTRA = _missing_module(TRAIN_MODULES) is None

# (argv, a fragment the one-line message must contain); "FILE" is an existing file, "DIR" a writable directory.
EVAL = ["eval", "pilipili_v0", "--policies", "random,heuristic", "--no-progress", "--no-plot"]
EVAL_CASES = [
    (EVAL + ["--out", "FILE"], "--out 'FILE' is an existing file, not a directory"),
    (EVAL + ["--out", "FILE/sub"], "--out 'FILE/sub' cannot be created: 'FILE' is a file"),
    (EVAL + ["--out", "DIR", "--games", "0"], "--games must be an integer >= 1, got 0"),
    (EVAL + ["--out", "DIR", "--games", "-5"], "--games must be an integer >= 1, got -5"),
    (EVAL + ["--out", "DIR", "--workers", "0"], "--workers must be an integer >= 1, got 0"),
    (EVAL + ["--out", "DIR", "--seed", "-1"], "--seed must be an integer >= 0, got -1"),
    (EVAL + ["--out", "DIR", "--games", "many"], "argument --games: invalid int value: 'many'"),
    (EVAL + ["--out", "DIR", "--backend", "mpi"], "argument --backend: invalid choice: 'mpi'"),
    (["eval", "chess", "--policies", "random", "--out", "DIR"], "unknown environment 'chess'"),
    (["eval", "pilipili_v0", "--policies", "random,missing.zip", "--out", "DIR"], "missing.zip"),
    (["eval", "pilipili_v0", "--policies", "random,nobody", "--out", "DIR"], "unknown policy 'nobody'"),
]
TRAIN = ["train", "pilipili_v0", "--no-progress"]
TRAIN_CASES = [
    (TRAIN + ["--timesteps", "10", "--out", "DIR"], "--timesteps must be >= 2048 with --envs 4"),
    (TRAIN + ["--timesteps", "0", "--out", "DIR"], "--timesteps must be an integer >= 1, got 0"),
    (TRAIN + ["--final-games", "-1", "--out", "DIR"], "--final-games must be an integer >= 0, got -1"),
    (TRAIN + ["--eval-games", "0", "--out", "DIR"], "--eval-games must be an integer >= 1, got 0"),
    (TRAIN + ["--eval-every", "-10", "--out", "DIR"], "--eval-every must be an integer >= 1, got -10"),
    (TRAIN + ["--envs", "0", "--out", "DIR"], "--envs must be an integer >= 1, got 0"),
    (TRAIN + ["--seed", "-3", "--out", "DIR"], "--seed must be an integer >= 0, got -3"),
    (TRAIN + ["--players", "0", "--out", "DIR"], "--players must be an integer >= 1, got 0"),
    (TRAIN + ["--players", "9", "--out", "DIR"], "--players 9: num_players must be in 2..8, got 9"),
    (TRAIN + ["--players", "3", "--seat", "7", "--out", "DIR"], "seat must be a seat index 0..2"),
    (TRAIN + ["--opponents", "missing.zip", "--out", "DIR"], "--opponents: no saved model at 'missing.zip'"),
    (TRAIN + ["--opponents", "DIR/model.zip", "--out", "DIR"], "--opponents: no saved model at 'DIR/model.zip'"),
    (TRAIN + ["--opponents", "nobody", "--out", "DIR"], "unknown policy 'nobody'"),
    (TRAIN + ["--opponents", ",", "--out", "DIR"], "--opponents names no policy"),
    (TRAIN + ["--out", "FILE"], "--out 'FILE' is an existing file, not a directory"),
    (TRAIN + ["--out", "FILE/run"], "--out 'FILE/run' cannot be created: 'FILE' is a file"),
    (TRAIN + ["--option", "missions", "--out", "DIR"], "--option expects KEY=VALUE, got 'missions'"),
    (TRAIN + ["--option", "colour=red", "--out", "DIR"], "unknown option(s) 'colour'"),
    (TRAIN + ["--option", "missions=lots", "--out", "DIR"], "missions"),
    (["train", "chess", "--out", "DIR"], "unknown environment 'chess'"),
]
OTHER_CASES = [
    ([], "the following arguments are required: command"),
    (["fly"], "argument command: invalid choice: 'fly'"),
    (["play", "pilipili_v0", "--players", "9"], "--players 9: num_players must be in 2..8, got 9"),
    (["play", "pilipili_v0", "--players", "-2"], "--players must be an integer >= 1, got -2"),
    (["play", "pilipili_v0", "--seed", "-1"], "--seed must be an integer >= 0, got -1"),
    (["play", "pilipili_v0", "--policies", "random,nobody,random,random,random"], "unknown policy 'nobody'"),
    (["play", "pilipili_v0", "--policies", "random,random"], "--policies names 2 policies for 5 players"),
    (["play", "pilipili_v0", "--agents", "gone.zip"], "--policies: no saved model at 'gone.zip'"),
    (["eval", "pilipili_v0", "--players", "random,heuristic"], "--players is the number of players (an integer)"),
    (["eval", "pilipili_v0", "--policies", "random", "--torch-threads", "0"], "--torch-threads must be"),
    (["play", "chess"], "unknown environment 'chess'"),
]
train_only = pytest.mark.skipif(not HAS_TRAIN_EXTRA, reason="needs the train extra")
CASES = (
    [pytest.param(argv, text, id=" ".join(argv[:1] + argv[4:])) for argv, text in EVAL_CASES]
    + [pytest.param(argv, text, id=" ".join(argv[:1] + argv[3:]), marks=train_only) for argv, text in TRAIN_CASES]
    + [pytest.param(argv, text, id=" ".join(argv) or "no arguments") for argv, text in OTHER_CASES]
)


@pytest.fixture
def places(tmp_path, monkeypatch):
    """Run in a fresh directory holding ``FILE`` (a file) and ``DIR`` (an empty directory)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "FILE").write_text("not a directory\n")
    (tmp_path / "DIR").mkdir()
    return tmp_path


@pytest.mark.parametrize("argv, text", CASES)
def test_bad_input_is_one_line_and_exit_code_2(argv, text, places, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert text in lines[0] and "error:" in lines[0] and "Traceback" not in captured.err
    assert sorted(p.name for p in places.iterdir()) == ["DIR", "FILE"] and not any((places / "DIR").iterdir())


def test_unwritable_out_fails_before_any_game(places, capsys, monkeypatch):
    import tableenvs.evaluation

    monkeypatch.setattr(tableenvs.evaluation, "evaluate", lambda *a, **k: pytest.fail("a game was played"))
    if Path("/proc").is_dir():  # nothing can be created under /proc, even as root
        assert main(EVAL + ["--out", "/proc/tableenvs-out"]) == 2
        assert "--out '/proc/tableenvs-out' cannot be created" in capsys.readouterr().err
    assert main(EVAL + ["--out", "FILE"]) == 2


def test_help_exits_0(capsys):
    assert main(["train", "--help"]) == 0
    assert "--timesteps" in capsys.readouterr().out


def run(code: str, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, text=True, timeout=HANG, **kwargs)


MISSING_EXTRA_CASES = [
    (
        ("torch", "stable_baselines3", "sb3_contrib"),
        ["train", "pilipili_v0"],
        "tableenvs: error: training needs the train extra (torch is missing): "
        'pip install "tableenvs[train]" (from a source checkout: pip install -e ".[train]"; '
        "docs/training.md says how to get a CPU-only torch)",
    ),
    (
        ("matplotlib",),
        ["eval", "pilipili_v0", "--policies", "random,heuristic", "--no-progress"],
        'tableenvs: error: eval needs the eval extra (matplotlib is missing): pip install "tableenvs[eval]" '
        "(or pass --no-plot)",
    ),
]


@pytest.mark.parametrize("blocked, argv, message", MISSING_EXTRA_CASES, ids=["train", "eval"])
def test_a_missing_extra_says_how_to_install_it_before_anything_runs(blocked, argv, message, tmp_path):
    # A meta path finder makes the extra's packages look uninstalled.
    result = run(
        f"""
        import importlib.abc, sys
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.partition(".")[0] in {blocked!r}:
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        sys.meta_path.insert(0, Block())
        from tableenvs.cli import main
        sys.exit(main({argv!r} + ["--out", {str(tmp_path / "run")!r}]))
        """,
        capture_output=True,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [message]
    assert not (tmp_path / "run").exists()


def test_closed_stdout_exits_quietly():
    # `tableenvs play ... | head -0`: the reader is gone before the first line is written.
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "tableenvs.cli", "play", "pilipili_v0", "--seed", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    process.stdout.close()
    _, err = process.communicate(timeout=HANG)
    assert process.returncode == 141 and err == ""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_is_one_line_and_exit_code_130(tmp_path):
    # Ctrl-C reaches the whole process group: the CLI and its two evaluation workers.
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "tableenvs.cli", "eval", "rummikub_v0", "--policies", "random,heuristic"]
        + ["--games", "100000", "--workers", "2", "--out", str(tmp_path), "--no-plot"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # not inherited as ignored
    )
    try:
        assert process.stderr.read(5)  # the progress bar has started: the games are being played
        os.killpg(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=HANG)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    last = err.decode().replace("\r", "\n").strip().splitlines()[-1]
    assert process.returncode == 130 and last == "tableenvs: interrupted"
    assert b"Traceback" not in err and out == b""
    assert not any(tmp_path.iterdir())


def test_an_unforeseen_missing_dependency_is_one_line_and_exit_code_2(tmp_path):
    # play with a saved model (a .zip that exists) while torch is missing: no up-front check covers this path.
    model = tmp_path / "model.zip"
    model.write_bytes(b"")
    result = run(
        f"""
        import importlib.abc, sys
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.partition(".")[0] in ("torch", "stable_baselines3", "sb3_contrib"):
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        sys.meta_path.insert(0, Block())
        from tableenvs.cli import main
        sys.exit(main(["play", "pilipili_v0", "--players", "2", "--policies", "random,{model}", "--trust-models"]))
        """,
        capture_output=True,
    )
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert lines[0].startswith("tableenvs: error: ") and "optional dependency" in lines[0]
