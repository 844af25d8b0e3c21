"""A tournament's working files: its arguments and an append-only log of the games it has finished.

Where you are: the evaluation package's persistence while a tournament runs (``tableenvs eval`` uses it; see
``docs/evaluation.md``, Interruption and --resume). A game depends only on the tournament's arguments and its
index (:mod:`tableenvs.evaluation.playing`), so a tournament stopped part way is continued by playing the games the
log does not hold and adding the logged ones: the result is the one an uninterrupted run gives.

===================  ==========================================================================================
``tournament.json``  the arguments that decide the games, the tableenvs version and each saved model's SHA-256
                     (written atomically with the first finished game): what ``--resume`` reads back and checks
``games.jsonl``      one JSON object per finished game (:func:`record_to_json`), appended and flushed as the
                     games finish; a last line cut short by a crash is ignored (and cut off before appending)
===================  ==========================================================================================

Both are removed once the full results are written: they are working files, the results are ``games.csv`` and
``results.json``.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from tableenvs.paths import OutputError, write_text_atomic

from .playing import PlayedGame

TOURNAMENT_FILE = "tournament.json"
LOG_FILE = "games.jsonl"
#: What ``tournament.json`` says it is (a file from another tool or version is refused by this).
FORMAT = "tableenvs eval tournament, version 1"

_FIELDS = ("index", "block", "entrants", "rewards", "scores", "winners", "ranks", "truncated", "decisions")
_TUPLES = ("entrants", "rewards", "scores", "winners", "ranks")


def record_to_json(record: PlayedGame) -> str:
    """One game as one line of JSON (no newline); :func:`record_from_json` gives back an equal record."""
    return json.dumps({name: getattr(record, name) for name in _FIELDS}, separators=(",", ":"))


def record_from_json(data: Any) -> PlayedGame:
    """The :class:`PlayedGame` of a parsed log line; ``ValueError`` naming what is wrong with it."""
    if not isinstance(data, dict) or sorted(data) != sorted(_FIELDS):
        raise ValueError(f"expected an object with the fields {', '.join(_FIELDS)}")
    for name in ("index", "block", "decisions"):
        if not isinstance(data[name], int) or isinstance(data[name], bool) or data[name] < 0:
            raise ValueError(f"{name} must be an integer >= 0, got {data[name]!r}")
    if not isinstance(data["truncated"], bool):
        raise ValueError(f"truncated must be true or false, got {data['truncated']!r}")
    for name in _TUPLES:
        value = data[name]
        number = (int, float) if name in ("rewards", "scores") else int
        if not isinstance(value, list) or not all(isinstance(x, number) and not isinstance(x, bool) for x in value):
            raise ValueError(f"{name} must be a list of numbers, got {value!r}")
    fields: dict[str, Any] = {name: tuple(data[name]) if name in _TUPLES else data[name] for name in _FIELDS}
    return PlayedGame(**fields)


def read_tournament(directory: str | Path) -> dict[str, Any]:
    """``tournament.json`` of ``directory``; ``ValueError`` (one line naming the file) if missing or not one."""
    path = Path(directory) / TOURNAMENT_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{str(path)!r} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"cannot read {str(path)!r}: {error}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("arguments"), dict):
        raise ValueError(f"{str(path)!r} is not a tournament file of this version ({FORMAT!r})")
    return data


def read_log(directory: str | Path) -> list[PlayedGame]:
    """The games logged in ``directory`` (by game index; none if there is no log).

    A last line without its newline (the process died while writing it) is ignored; any other line that is not a
    game, or two different records of one game, is a ``ValueError`` naming the file and the line.
    """
    path = Path(directory) / LOG_FILE
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return []
    except OSError as error:
        raise ValueError(f"cannot read {str(path)!r}: {error.strerror or error}") from None
    lines = text.split("\n")[:-1]  # the piece after the last newline is a line cut short, or empty
    records: dict[int, PlayedGame] = {}
    for number, line in enumerate(lines, 1):
        try:
            record = record_from_json(json.loads(line))
        except ValueError as error:  # json.JSONDecodeError is a ValueError
            raise ValueError(f"{str(path)!r} line {number} is not a game record: {error}") from None
        if records.setdefault(record.index, record) != record:
            raise ValueError(f"{str(path)!r} line {number}: game {record.index} was logged twice, differently")
    return [records[index] for index in sorted(records)]


class GameLog:
    """Write ``tournament.json`` with the first finished games, then append every game to ``games.jsonl``.

    ``append`` writes one line per game and flushes it to the operating system (a killed process loses nothing
    written; ``close`` also syncs to disk). Nothing is created before the first game, so a run stopped before any
    game finished leaves ``directory`` as it was. ``resume=True`` continues an existing log (cut back to its last
    whole line); otherwise any earlier log there is replaced.
    """

    def __init__(self, directory: str | Path, tournament: dict[str, Any], resume: bool = False):
        self.directory = Path(directory)
        self.tournament = {"format": FORMAT, **tournament}
        self.resume = resume
        self._handle: TextIO | None = None
        self.games = 0  # appended by this object

    @property
    def path(self) -> Path:
        return self.directory / LOG_FILE

    def append(self, records: Sequence[PlayedGame]) -> None:
        """Log ``records``; an ``OSError`` becomes an :class:`~tableenvs.paths.OutputError` naming the file."""
        if not records:
            return
        try:
            handle = self._handle if self._handle is not None else self._open()
            handle.write("".join(record_to_json(r) + "\n" for r in records))
            handle.flush()
        except OSError as error:
            raise OutputError(f"cannot write {str(self.path)!r}: {error.strerror or error}") from error
        self.games += len(records)

    def _open(self) -> TextIO:
        """Open the log for appending (creating it, or resuming it); the handle, also kept in ``_handle``."""
        self.directory.mkdir(parents=True, exist_ok=True)
        if not self.resume:
            write_text_atomic(self.directory / TOURNAMENT_FILE, json.dumps(self.tournament, indent=2) + "\n")
            self._handle = open(self.path, "w", encoding="utf-8")  # noqa: SIM115 - kept open while games finish
            return self._handle
        with open(self.path, "ab+") as handle:  # cut off a last line that a crash left without its newline
            size = handle.seek(0, os.SEEK_END)
            if size:
                handle.seek(max(0, size - 65536))
                tail = handle.read()
                if not tail.endswith(b"\n"):
                    handle.truncate(size - len(tail) + tail.rfind(b"\n") + 1)
        self._handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115
        return self._handle

    def close(self) -> None:
        """Sync the log to disk and close it (errors ignored: what was flushed is in the file either way)."""
        if self._handle is not None:
            with contextlib.suppress(OSError, ValueError):
                self._handle.flush()
                os.fsync(self._handle.fileno())
            with contextlib.suppress(OSError):
                self._handle.close()
            self._handle = None

    def remove(self) -> None:
        """Close the log and delete both working files (once the full results are written)."""
        self.close()
        for name in (LOG_FILE, TOURNAMENT_FILE):
            with contextlib.suppress(OSError):
                os.unlink(self.directory / name)
