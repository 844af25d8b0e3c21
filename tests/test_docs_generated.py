"""The docs' generated blocks match a fresh run (issue 31): a change that moves a documented number fails here
until ``python docs/generate.py`` is run. Every block is seeded and deterministic (no timings)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "generate.py")
generate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(generate)


@pytest.mark.parametrize("name", list(generate.BLOCKS))
def test_generated_block_is_current(name):
    file, make = generate.BLOCKS[name]
    assert generate.current(name) == make(), f"{file}: block {name!r} is stale; run python docs/generate.py {name}"


def test_check_names_a_stale_block(tmp_path, monkeypatch, capsys):
    page = tmp_path / "page.md"
    page.write_text("a\n<!-- generated: demo (test) -->\nold\n<!-- end generated: demo -->\nb\n")
    monkeypatch.setattr(generate, "ROOT", tmp_path)
    monkeypatch.setitem(generate.BLOCKS, "demo", ("page.md", lambda: "new"))
    assert generate.main(["--check", "demo"]) == 1
    assert "stale: demo" in capsys.readouterr().out
    assert generate.main(["demo"]) == 0
    assert page.read_text() == "a\n<!-- generated: demo (test) -->\nnew\n<!-- end generated: demo -->\nb\n"
    assert generate.main(["--check", "demo"]) == 0
