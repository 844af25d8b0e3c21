"""The tutorial notebooks of examples/ run top to bottom, at small budgets, and print little.

Each notebook runs in its own process (tests/notebook_runner.py: its code cells in order in one namespace, its
``parameters`` cell given the small budgets below), with examples/ as the working directory's neighbour so that the
paths the notebooks write land in a scratch directory. No Jupyter kernel is needed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "examples").glob("*.ipynb"))
#: The small budgets, by notebook: every name must be one its parameters cell defines.
SMALL = {
    "01_train_your_first_agent.ipynb": {"TIMESTEPS": 2048, "EVAL_EVERY": 2048, "EVAL_GAMES": 10, "FINAL_GAMES": 4},
    "02_write_a_policy_and_run_a_fair_tournament.ipynb": {"GAMES": 24},
    "03_search_sampled_worlds_and_the_state_api.ipynb": {"SIMS": 4, "GAMES": 4},
    "04_add_your_own_game.ipynb": {"GAMES": 20},
}
#: Most lines one code cell may print: a tutorial's output is read, not scrolled.
MAX_LINES = 40
#: What each needs beyond the core install.
NEEDS = {"01_train_your_first_agent.ipynb": "sb3_contrib"}


def test_every_notebook_has_a_small_budget_and_a_parameters_cell():
    assert [path.name for path in NOTEBOOKS] == sorted(SMALL)
    for path in NOTEBOOKS:
        cells = json.loads(path.read_text())["cells"]
        tagged = [cell for cell in cells if "parameters" in cell.get("metadata", {}).get("tags", [])]
        assert len(tagged) == 1 and tagged[0]["cell_type"] == "code", path.name
        # kept without outputs: the test runs them; a saved output would go stale
        assert all(not cell.get("outputs") for cell in cells if cell["cell_type"] == "code"), path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_notebook_runs_top_to_bottom_and_prints_little(path, tmp_path):
    if path.name in NEEDS:
        pytest.importorskip(NEEDS[path.name], reason="needs the train extra")
    pytest.importorskip("openskill", reason="the tournaments need the eval extra")
    out = tmp_path / "result.json"
    pairs = [f"{name}={value!r}" for name, value in SMALL[path.name].items()]
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), "MPLBACKEND": "Agg"}
    process = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "notebook_runner.py"), str(path), str(out), *pairs],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,  # a bound for a machine at load ~20, not a measure: each runs in well under a CPU-minute
    )
    assert out.is_file(), process.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["error"] is None, f"{path.name} failed:\n{result['error']}"
    code_cells = [cell for cell in json.loads(path.read_text())["cells"] if cell["cell_type"] == "code"]
    assert len(result["printed"]) == len(code_cells)
    for index, lines in enumerate(result["printed"]):
        assert len(lines) <= MAX_LINES, f"{path.name} cell {index} printed {len(lines)} lines"
    assert any(result["printed"]), f"{path.name} printed nothing"
