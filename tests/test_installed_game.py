"""An outside game installed as a package of its own: its ``tableenvs.games`` entry point makes it a tableenvs game
everywhere, with no import by the user.

The test builds a package in a temporary folder (the example game ``examples/trick_taking`` and a ``pyproject.toml``
declaring ``trick_taking_v0 = "trick_taking:SPEC"`` in the group ``tableenvs.games``, plus a broken entry point),
installs it with pip into a temporary venv (``--no-deps --no-build-isolation``: nothing is downloaded; the venv sees
this interpreter's packages, tableenvs among them, through a ``.pth`` file), then runs ``python -m tableenvs`` there
in fresh processes: ``play`` with a record, ``replay`` of that record, ``eval``, and ``tableenvs.names()``.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PYPROJECT = """
    [build-system]
    requires = ["setuptools"]
    build-backend = "setuptools.build_meta"

    [project]
    name = "trick-taking-for-tableenvs"
    version = "1.0"
    requires-python = ">=3.10"

    [project.entry-points."tableenvs.games"]
    trick_taking_v0 = "trick_taking:SPEC"
    broken_v0 = "trick_taking:NO_SUCH_SPEC"

    [tool.setuptools]
    packages = ["trick_taking"]

    [tool.setuptools.package-data]
    trick_taking = ["*.md"]
"""


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A venv with the outside game installed from its own folder; returns the venv's python."""
    where = tmp_path_factory.mktemp("installed_game")
    source = where / "src"
    shutil.copytree(ROOT / "examples" / "trick_taking", source / "trick_taking")
    (source / "pyproject.toml").write_text(textwrap.dedent(PYPROJECT))
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(where / "venv")],
                   check=True, timeout=300)  # fmt: skip
    python = where / "venv" / "bin" / "python"
    own = subprocess.run([str(python), "-c", "import site; print(site.getsitepackages()[0])"],
                         capture_output=True, text=True, check=True, timeout=300).stdout.strip()  # fmt: skip
    # this interpreter's packages (tableenvs installed editable, numpy, ...), .pth files included
    lines = [f"import site; site.addsitedir({path!r})" for path in site.getsitepackages()]
    (Path(own) / "parent_environment.pth").write_text("\n".join(lines) + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-build-isolation",
         "--no-index", "--quiet", str(source)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    shutil.rmtree(source)  # the game runs from the venv, not from the folder it was built in
    return python


def _run(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    return subprocess.run([str(python), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


BROKEN = (
    "tableenvs: warning: skipped entry point broken_v0 = 'trick_taking:NO_SUCH_SPEC' (group tableenvs.games, package "
    "trick-taking-for-tableenvs): module 'trick_taking' has no attribute 'NO_SUCH_SPEC'"
)


def test_names_lists_the_installed_game_with_no_import(venv, tmp_path):
    done = _run(venv, "-W", "ignore", "-c", "import tableenvs; print(tableenvs.names())", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "'trick_taking_v0'" in done.stdout and "broken_v0" not in done.stdout


def test_play_replay_and_eval_run_the_installed_game(venv, tmp_path):
    record = tmp_path / "game.json"
    played = _run(venv, "-m", "tableenvs", "play", "trick_taking_v0", "--players", "4", "--policies", "heuristic",
                  "--seed", "3", "--quiet", "--record", str(record), cwd=tmp_path)  # fmt: skip
    assert played.returncode == 0, played.stderr
    assert played.stderr.splitlines() == [BROKEN]  # the broken entry point: one line, and the command runs
    assert json.loads(record.read_text())["game"] == "trick_taking_v0"

    replayed = _run(venv, "-m", "tableenvs", "replay", str(record), "--quiet", cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stderr
    total = next(line for line in played.stdout.splitlines() if line.startswith("total reward: "))
    rewards = ", ".join(part.split()[1] for part in total.removeprefix("total reward: ").split(", "))
    said = replayed.stdout.splitlines()[-1]
    assert said.startswith(f"{record}: reproduces exactly (52 steps;") and said.endswith(f"returns {rewards})"), said

    out = tmp_path / "eval"
    evaluated = _run(
        venv, "-m", "tableenvs", "eval", "trick_taking_v0", "--policies", "heuristic,random", "--players", "4",
        "--games", "8", "--no-plot", "--no-progress", "--out", str(out), cwd=tmp_path,
    )  # fmt: skip
    assert evaluated.returncode == 0, evaluated.stderr
    assert json.loads((out / "results.json").read_text())["env"] == "trick_taking_v0"


def test_the_broken_entry_point_is_a_one_line_error_when_asked_for(venv, tmp_path):
    done = _run(venv, "-m", "tableenvs", "play", "broken_v0", cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert lines[0] == BROKEN and len(lines) == 2, done.stderr
    assert lines[1].startswith("tableenvs: error: environment 'broken_v0' cannot be loaded: entry point broken_v0")
