"""The docs' generated blocks match a fresh run: a change that moves a documented number fails here
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


def test_every_measured_block_is_found_where_it_lives():
    """Each ``<!-- measured: NAME (python benchmarks/SCRIPT ...) -->`` block under docs/ (the lab record docs/lab/
    too) stands in exactly one page, closed by its end marker, names a script that exists, and is the page
    ``benchmarks/common.py``'s ``docs_page`` gives the scripts to rewrite (so a block moved between pages keeps its
    script)."""
    import re
    import sys

    common_spec = importlib.util.spec_from_file_location("benchmarks_common", ROOT / "benchmarks" / "common.py")
    common = importlib.util.module_from_spec(common_spec)
    sys.modules.setdefault("benchmarks_common", common)  # its dataclasses look their module up there
    common_spec.loader.exec_module(common)
    opening = re.compile(r"^<!-- measured: (\S+) \(\S*python benchmarks/(\S+?\.py)\b[^\n]*-->$", re.M)
    found = 0
    for page in sorted((ROOT / "docs").rglob("*.md")):
        text = page.read_text()
        for match in opening.finditer(text):
            name, script = match.groups()
            found += 1
            assert (ROOT / "benchmarks" / script).is_file(), f"{page.name}: block {name} names a missing {script}"
            assert f"<!-- end measured: {name} -->" in text[match.end() :], f"{page.name}: block {name} is not closed"
            assert common.docs_page(match.group(0)) == page, f"block {name} is found in another page than {page}"
    assert found >= 30  # the pages were read (35 blocks when written), not an empty match
