"""Atomic outputs: a failed write never truncates or empties a file, and an earlier file survives.

The helpers in :mod:`tableenvs.paths` are tested with an injected ``OSError``; the command line is tested on a real
full file system (a small tmpfs, mounted where this process may mount, as root in CI) and, where mounting is not
allowed, with the same failure injected into the rename that puts a file in place.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from tableenvs import paths
from tableenvs.paths import OutputError, atomic_output, write_bytes_atomic, write_text_atomic


def _no_space(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".partial"))


@pytest.mark.parametrize("write, data", [(write_text_atomic, "new text"), (write_bytes_atomic, b"new bytes")])
def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch, write, data):
    target = tmp_path / "results.json"
    target.write_text("old")
    monkeypatch.setattr(paths.os, "fsync", _no_space)
    with pytest.raises(OutputError, match=r"cannot write '.*results\.json': No space left on device"):
        write(target, data)
    assert target.read_text() == "old"
    assert _leftovers(tmp_path) == []


def test_an_error_inside_the_block_leaves_the_old_file(tmp_path):
    target = tmp_path / "games.csv"
    target.write_text("old")
    with pytest.raises(RuntimeError, match="half way"), atomic_output(target) as handle:
        handle.write("half")
        raise RuntimeError("half way")
    assert target.read_text() == "old"
    assert _leftovers(tmp_path) == []


def test_a_missing_directory_is_one_clear_error(tmp_path):
    with pytest.raises(OutputError, match=r"cannot write '.*nowhere/x\.json': No such file or directory"):
        write_text_atomic(tmp_path / "nowhere" / "x.json", "{}")


def test_a_new_file_gets_the_permissions_of_a_plain_open(tmp_path):
    write_text_atomic(tmp_path / "atomic.txt", "x")
    (tmp_path / "plain.txt").write_text("x")
    assert (tmp_path / "atomic.txt").stat().st_mode == (tmp_path / "plain.txt").stat().st_mode
    assert (tmp_path / "atomic.txt").read_text() == "x"


def test_only_write_modes():
    with pytest.raises(ValueError, match="mode must be 'w' or 'wb', got 'a'"), atomic_output("x", "a"):
        pass


@contextlib.contextmanager
def _small_file_system(directory: Path):
    """A 2 MiB tmpfs at ``directory`` (yields True), or nothing mounted where this process may not mount (False)."""
    directory.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(directory)], capture_output=True)
    try:
        yield mounted.returncode == 0
    finally:
        if mounted.returncode == 0:
            subprocess.run(["umount", "-l", str(directory)], check=True)


def test_eval_on_a_full_disk_keeps_the_earlier_results_and_saves_the_new_ones_elsewhere(tmp_path, monkeypatch, cli):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the rescued results go
    with _small_file_system(tmp_path / "disk") as real:
        out = tmp_path / "disk" / "eval"
        argv = ["eval", "pilipili_v0", "--policies", "random,heuristic", "--games", "12", "--no-progress"]
        code, _, text = cli([*argv, "--out", str(out)])
        assert code == 0, text
        before = {p.name: p.read_bytes() for p in out.iterdir()}
        assert set(before) >= {"results.json", "games.csv", "paired.csv", "ratings.png"}
        if real:  # fill the disk
            with contextlib.suppress(OSError), open(tmp_path / "disk" / "filler", "wb") as filler:
                while True:
                    filler.write(b"\0" * 65536)
                    filler.flush()
        else:
            replace = os.replace
            monkeypatch.setattr(paths.os, "replace", lambda a, b: _no_space() if str(out) in str(b) else replace(a, b))
        code, _, text = cli([*argv, "--seed", "1", "--out", str(out)])
        assert code == 2, text
        error = text.strip().splitlines()[-1]
        assert error.startswith(f"tableenvs: error: cannot write '{out}/") and "No space left on device" in error
        rescue = Path(error.rsplit("saved to ", 1)[1].removesuffix(" instead"))
        assert rescue.parent == tmp_path
        assert (rescue / "results.json").stat().st_size > 0 and (rescue / "games.csv").stat().st_size > 0
        after = {p.name: p.read_bytes() for p in out.iterdir()}
        assert after == before  # nothing truncated, emptied or left half written
