"""Every ```python block of README.md and docs/**/*.md (docs/lab/ too) runs as written: each is written to
its own file and run as a script (``__main__``) with small training and evaluation budgets (tests/doc_snippets.py).
A block that is not meant to run is marked on the line before its fence with ``<!-- sketch: why -->`` and skipped.
"""

import json
import os
import re
import sys
from pathlib import Path

import pytest
from load_bounds import run_on_cpu_budget

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)
SKETCH = re.compile(r"<!--\s*sketch:\s*\S")  # a sketch says why


def blocks() -> list[tuple[str, str, bool]]:
    """(name "file:line", code, is_sketch) for every python block."""
    found = []
    for path in DOCS:
        text = path.read_text()
        for match in FENCE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            found.append((f"{path.relative_to(ROOT)}:{line}", match.group(1), bool(SKETCH.search(before))))
    return found


BLOCKS = blocks()
RUNNABLE = [(name, code) for name, code, sketch in BLOCKS if not sketch]


def test_the_docs_have_python_blocks():
    assert len(RUNNABLE) >= 8 and any(name.startswith("README.md") for name, _ in RUNNABLE)


def test_only_marked_sketches_are_skipped():
    sketches = [name for name, _, sketch in BLOCKS if sketch]
    # the solver's signatures and a tournament of two trained models; update when a sketch is added or removed
    assert [name.split(":")[0] for name in sketches] == ["docs/rummikub.md", "docs/training.md"]


#: CPU-seconds the snippets' process may use before it counts as hung: 23 CPU-s measured with the numba caches warm,
#: 145 with every kernel compiled afresh (a new machine or an edited kernel); about 10x the latter. A CPU budget, not a
#: wall-clock timeout: at load 8 on 2 cores the process once took 16 minutes of wall time.
SNIPPETS_CPU = 1500.0


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """Run every runnable block once, all in one process (tests/doc_snippets.py); name -> result."""
    pytest.importorskip("sb3_contrib", reason="the training snippets need the train extra")
    folder = tmp_path_factory.mktemp("snippets")
    files = {}
    for index, (name, code) in enumerate(RUNNABLE):
        path = folder / f"block_{index:02d}.py"
        path.write_text(code)
        files[str(path)] = name
    out = folder / "results.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    process = run_on_cpu_budget(
        [sys.executable, str(ROOT / "tests" / "doc_snippets.py"), str(out), *files], SNIPPETS_CPU, cwd=folder, env=env
    )
    assert out.is_file(), process.stderr[-3000:]
    return {files[path]: result for path, result in json.loads(out.read_text()).items()}


@pytest.mark.parametrize("name", [name for name, _ in RUNNABLE])
def test_doc_block_runs_as_written(ran, name):
    result = ran[name]
    assert result["error"] is None, f"{name} failed when run as a script:\n{result['error']}"
