"""benchmarks/league_runs.py writes docs/training.md's league-run tables from its saved JSON: the blocks in the docs
are what the saved files render (a hand edit or a stale block fails here), a rewrite keeps every line outside the
markers and changes nothing when run twice, and a field file of another model is refused rather than used."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.benchmark_scripts import load_benchmark

ROOT = Path(__file__).resolve().parents[1]


league_runs = load_benchmark("league_runs.py", "league_runs_script")


def test_the_docs_blocks_are_what_the_saved_runs_render():
    page = (ROOT / "docs" / "training.md").read_text()
    blocks = league_runs.blocks()
    assert len(blocks) == 2
    for (begin, end), text in blocks.items():
        assert page.count(begin) == 1 and page.count(end) == 1
        assert page.split(begin, 1)[1].split(end, 1)[0] == f"\n{text}\n", f"{begin} is stale: run --write-docs"
    assert "| 7 | 3,046,807 | 328 | −0.43 [−0.48, −0.39] | −0.39 [−0.50, −0.27] |" in page  # a row, as figures


def test_a_rewrite_keeps_the_text_outside_the_markers_and_is_idempotent(tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    docs.mkdir()
    page = docs / "training.md"
    original = (ROOT / "docs" / "training.md").read_text()
    stale = original
    for begin, end in league_runs.blocks():  # each block emptied: the rewrite must fill it again
        head, rest = stale.split(begin, 1)
        stale = f"{head}{begin}\nold\n{end}{rest.split(end, 1)[1]}"
    page.write_text(stale)
    monkeypatch.setitem(league_runs.write_block.__globals__, "DOCS_DIR", docs)  # common.py's docs/, for the test
    league_runs.write_docs()
    assert page.read_text() == original
    league_runs.write_docs()
    assert page.read_text() == original


def test_a_field_file_of_another_model_is_refused(tmp_path, monkeypatch):
    field = tmp_path / "field"
    field.mkdir()
    for path in (ROOT / "benchmarks" / "results" / "field").glob("*.json"):
        shutil.copy(path, field / path.name)
    three = field / "pilipili_v0__3p__s0.json"
    saved = json.loads(three.read_text())
    saved["model"][1] = "000000000000"
    three.write_text(json.dumps(saved))
    monkeypatch.setattr(league_runs, "FIELD", field)
    with pytest.raises(SystemExit, match="0 field files .* pilipili_v0 at 3 players with model e5b76a9661cd"):
        league_runs.blocks()
