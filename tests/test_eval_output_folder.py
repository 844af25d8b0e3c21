"""An evaluation's output folder is written all together or not at all: the result files go to a sibling temporary
folder renamed into place, so the folder never mixes two runs' files nor holds half of one, and a failed write (a
full disk, an error, an interrupt) leaves it byte for byte as it was, with no temporary folder left beside it.
Other entries of the folder (a stopped tournament's journal, a records directory, a user's file) stay.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path

import pytest
from test_atomic_outputs import _small_file_system

from tableenvs.evaluation import evaluate, output_folder, reports
from tableenvs.evaluation.output_folder import RESULT_FILES, result_folder
from tableenvs.paths import OutputError


@pytest.fixture(scope="module")
def results():
    """Two small tournaments' results (different seeds)."""
    return [evaluate("pilipili_v0", ["random", "heuristic"], 6, num_players=3, seed=seed) for seed in (0, 1)]


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every entry under ``folder`` (files by content, directories as None)."""
    return {
        str(path.relative_to(folder)): (path.read_bytes() if path.is_file() else None)
        for path in sorted(folder.rglob("*"))
    }


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.endswith((".partial", ".old")))


def test_a_run_replaces_every_file_of_the_earlier_run_and_keeps_the_others(tmp_path, results):
    out = tmp_path / "eval"
    first = results[0].save(out, plot=True)
    assert {path.name for path in first.values()} == set(RESULT_FILES)
    (out / "notes.txt").write_text("mine")
    (out / "records").mkdir()
    (out / "records" / "game_00000.json").write_text("{}")
    second = results[1].save(out, plot=False)  # writes no ratings.png
    names = {p.name for p in out.iterdir()}
    assert names == {"notes.txt", "records"} | {path.name for path in second.values()}
    assert "ratings.png" not in names  # the first run's plot does not stay beside the second run's tables
    assert (out / "notes.txt").read_text() == "mine" and (out / "records" / "game_00000.json").read_text() == "{}"
    fresh = tmp_path / "fresh"
    results[1].save(fresh, plot=False)
    for name in ("results.json", "games.csv", "policies.csv", "paired.csv", "head_to_head.csv"):
        assert (out / name).read_bytes() == (fresh / name).read_bytes(), name
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("failing", ["policies.csv", "games.csv", "paired.csv"])
def test_a_write_failing_mid_way_leaves_the_folder_as_it_was(tmp_path, results, monkeypatch, failing):
    out = tmp_path / "eval"
    results[0].save(out, plot=False)
    (out / "games.jsonl").write_text("journal\n")
    before = snapshot(out)
    write_csv = reports._write_csv

    def disk_fills(path: Path, header, rows) -> None:
        if path.name == failing:
            raise OutputError(f"cannot write {str(path)!r}: {os.strerror(errno.ENOSPC)}") from OSError(
                errno.ENOSPC, os.strerror(errno.ENOSPC)
            )
        write_csv(path, header, rows)

    monkeypatch.setattr(reports, "_write_csv", disk_fills)
    with pytest.raises(OutputError) as raised:
        results[1].save(out, plot=False)
    # the message names the file as it would be under --out (the temporary folder is gone)
    assert str(raised.value) == f"cannot write {str(out / failing)!r}: No space left on device"
    assert snapshot(out) == before
    assert leftovers(tmp_path) == []


def test_an_interrupt_while_writing_leaves_the_folder_as_it_was(tmp_path, results, monkeypatch):
    out = tmp_path / "eval"
    results[0].save(out, plot=False)
    before = snapshot(out)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(reports, "_write_csv", interrupted)
    with pytest.raises(KeyboardInterrupt):
        results[1].save(out, plot=False)
    assert snapshot(out) == before and leftovers(tmp_path) == []


def test_a_failed_swap_puts_every_entry_back(tmp_path, results, monkeypatch):
    out = tmp_path / "eval"
    results[0].save(out, plot=False)
    (out / "tournament.json").write_text("{}")
    (out / "records").mkdir()
    before = snapshot(out)
    replace = os.replace

    def no_space_at_out(source, target):
        if os.fspath(target) == os.fspath(out):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return replace(source, target)

    monkeypatch.setattr(output_folder.os, "replace", no_space_at_out)
    with pytest.raises(OutputError, match=f"cannot write '{out}/': No space left on device"):
        results[1].save(out, plot=False)
    assert snapshot(out) == before and leftovers(tmp_path) == []


def test_a_new_folder_appears_whole(tmp_path, results):
    out = tmp_path / "a" / "b" / "eval"
    paths = results[0].save(out, plot=False)
    assert sorted(p.name for p in out.iterdir()) == sorted(path.name for path in paths.values())
    plain = tmp_path / "plain"
    plain.mkdir()
    assert out.stat().st_mode == plain.stat().st_mode  # not the temporary folder's 0700
    os.chmod(out, 0o750)
    results[1].save(out, plot=False)
    assert out.stat().st_mode & 0o777 == 0o750  # a folder keeps its permissions


def test_a_link_to_the_folder_stays_a_link(tmp_path, results):
    real = tmp_path / "real"
    results[0].save(real, plot=False)
    (real / "notes.txt").write_text("mine")
    link = tmp_path / "link"
    link.symlink_to(real)
    paths = results[1].save(link, plot=True)
    assert link.is_symlink() and paths["json"] == link / "results.json"
    assert (real / "ratings.png").is_file() and (real / "notes.txt").read_text() == "mine"
    assert leftovers(tmp_path) == []
    with pytest.raises(OutputError, match="it is a file, not a folder"):
        (tmp_path / "file").write_text("x")
        with result_folder(tmp_path / "file"):
            pass


def test_a_full_disk_leaves_the_folder_whole_and_says_where_the_complete_results_went(tmp_path, monkeypatch, cli):
    """``tableenvs eval`` on a real small file system filled up but for a few pages: the earlier results stay byte
    for byte (none of the new files appears beside them), and the message names the folder that holds every new
    file."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the rescued results go
    with _small_file_system(tmp_path / "disk") as real:
        if not real:
            pytest.skip("cannot mount a small file system here (the injected failures above cover the logic)")
        out = tmp_path / "disk" / "eval"
        argv = ["eval", "pilipili_v0", "--policies", "random,heuristic", "--no-progress"]
        code, _, text = cli([*argv, "--games", "12", "--out", str(out)])
        assert code == 0, text
        before = snapshot(out)
        filler = tmp_path / "disk" / "filler"
        with contextlib.suppress(OSError), open(filler, "wb") as handle:
            while True:
                handle.write(b"\0" * 4096)
                handle.flush()
        os.truncate(filler, max(0, filler.stat().st_size - 3 * 4096))  # room for a small file or two, not all
        code, _, text = cli([*argv, "--games", "60", "--seed", "1", "--out", str(out)])
        assert code == 2, text
        error = text.strip().splitlines()[-1]
        assert error.startswith(f"tableenvs: error: cannot write '{out}/") and "No space left on device" in error
        rescue = Path(error.rsplit("saved to ", 1)[1].removesuffix(" instead"))
        assert rescue.parent == tmp_path
        assert sorted(p.name for p in rescue.iterdir()) == sorted(RESULT_FILES)
        assert all((rescue / name).stat().st_size > 0 for name in RESULT_FILES)
        assert snapshot(out) == before
        assert leftovers(tmp_path / "disk") == []
