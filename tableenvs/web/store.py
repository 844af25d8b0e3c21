"""The server's games on disk: one SQLite database (Python's own ``sqlite3``) in the data folder.

Where you are: part of :mod:`tableenvs.web`, used by :class:`tableenvs.web.manager.TableManager` on the event-loop
thread only. What is kept of each game is what rebuilds it exactly: the game, its options, its seats, its seed, its
pause, its seat tokens, when it started, and every move (seat and action), in order, and an agent's failure if one
stopped it. A take-back (a seat's tentative moves withdrawn) deletes the moves taken back, so a rebuilt game never
replays them. A game is written when it is created and each move is committed before it is acknowledged (before the
answer to the move's request, and before any waiting page is woken), so after a crash of the server (``kill -9``)
a restart replays every game from its seed to the same move, with the same tokens. Expired games are deleted.

The database runs in WAL mode with ``synchronous=NORMAL``: a committed move is in the operating system's hands, so
it survives any crash of the server process; a crash of the whole machine may lose the last moves (the log is
synced to the disk at checkpoints; a sync per move, ``FULL``, held the event loop about 6 ms a move here, against
0.03 ms). It holds an exclusive lock: a second server on the same folder is refused at its start.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FILENAME = "games.sqlite3"
SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id TEXT PRIMARY KEY,
    game TEXT NOT NULL,
    options TEXT NOT NULL,
    seats TEXT NOT NULL,
    seed INTEGER NOT NULL,
    pause REAL NOT NULL,
    tokens TEXT NOT NULL,
    created REAL NOT NULL,
    error TEXT
);
CREATE TABLE IF NOT EXISTS moves (
    game_id TEXT NOT NULL,
    number INTEGER NOT NULL,
    agent TEXT NOT NULL,
    action INTEGER NOT NULL,
    PRIMARY KEY (game_id, number)
) WITHOUT ROWID;
"""


def default_data_folder() -> Path:
    """The per-user data folder: ``$XDG_DATA_HOME/tableenvs/web``, by default ``~/.local/share/tableenvs/web``."""
    root = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(root) / "tableenvs" / "web"


@dataclass
class SavedGame:
    """One game as kept: enough to rebuild it move for move."""

    id: str
    game: str
    options: dict[str, Any]
    seats: list[str]
    seed: int
    pause: float
    tokens: dict[str, str]
    created: float
    error: str | None
    moves: list[tuple[str, int]]


class GameStore:
    """The games of one data folder (``folder/games.sqlite3``); ``ValueError`` with one line if it cannot be used."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder).expanduser()
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as error:
            raise ValueError(f"cannot create the data folder {str(self.folder)!r}: {error.strerror}") from None
        self.path = self.folder / FILENAME
        try:
            # one user at a time (the event loop; the restore before serving), maybe not the thread that opened it
            self.db = sqlite3.connect(self.path, isolation_level=None, timeout=0, check_same_thread=False)
            os.chmod(self.path, 0o600)  # it holds the seats' tokens (its WAL file takes the same mode)
        except (sqlite3.Error, OSError) as error:
            raise ValueError(f"cannot open {str(self.path)!r}: {error}") from None
        try:
            self.db.execute("PRAGMA locking_mode=EXCLUSIVE")
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.executescript("BEGIN IMMEDIATE;" + SCHEMA + "COMMIT;")  # takes the exclusive lock now
        except sqlite3.OperationalError as error:
            self.db.close()
            if "locked" in str(error):
                raise ValueError(
                    f"the data folder {str(self.folder)!r} is in use by another tableenvs serve (give each server "
                    "its own --data folder)"
                ) from None
            raise ValueError(f"cannot use {str(self.path)!r}: {error}") from None
        except sqlite3.DatabaseError as error:
            self.db.close()
            raise ValueError(f"{str(self.path)!r} is not a tableenvs web database: {error}") from None

    def add_game(self, saved: SavedGame) -> None:
        """Write a new game (its moves so far must be none)."""
        with self._transaction():
            self.db.execute(
                "INSERT INTO games (id, game, options, seats, seed, pause, tokens, created, error) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    saved.id,
                    saved.game,
                    json.dumps(saved.options, sort_keys=True),
                    json.dumps(saved.seats),
                    saved.seed,
                    saved.pause,
                    json.dumps(saved.tokens, sort_keys=True),
                    saved.created,
                    saved.error,
                ),
            )

    def add_move(self, game_id: str, number: int, agent: str, action: int) -> None:
        """Commit move ``number`` (0-based) of the game."""
        with self._transaction():
            self.db.execute(
                "INSERT INTO moves (game_id, number, agent, action) VALUES (?, ?, ?, ?)",
                (game_id, number, agent, int(action)),
            )

    def replace_moves(self, game_id: str, start: int, moves: list[tuple[str, int]]) -> None:
        """Replace the game's moves from number ``start`` (0-based) on by ``moves`` (a take-back: the moves taken
        back are deleted, the ones replayed in their place written), in one transaction."""
        with self._transaction():
            self.db.execute("DELETE FROM moves WHERE game_id = ? AND number >= ?", (game_id, start))
            self.db.executemany(
                "INSERT INTO moves (game_id, number, agent, action) VALUES (?, ?, ?, ?)",
                [(game_id, start + offset, agent, int(action)) for offset, (agent, action) in enumerate(moves)],
            )

    def set_error(self, game_id: str, error: str | None) -> None:
        with self._transaction():
            self.db.execute("UPDATE games SET error = ? WHERE id = ?", (error, game_id))

    def remove(self, game_ids: list[str]) -> None:
        if not game_ids:
            return
        with self._transaction():
            for game_id in game_ids:
                self.db.execute("DELETE FROM moves WHERE game_id = ?", (game_id,))
                self.db.execute("DELETE FROM games WHERE id = ?", (game_id,))

    def games(self) -> list[SavedGame]:
        """Every kept game with its moves, oldest first."""
        saved = []
        rows = self.db.execute(
            "SELECT id, game, options, seats, seed, pause, tokens, created, error FROM games ORDER BY created, id"
        ).fetchall()
        for game_id, game, options, seats, seed, pause, tokens, created, error in rows:
            moves = self.db.execute(
                "SELECT agent, action FROM moves WHERE game_id = ? ORDER BY number", (game_id,)
            ).fetchall()
            saved.append(
                SavedGame(
                    game_id,
                    game,
                    json.loads(options),
                    json.loads(seats),
                    int(seed),
                    float(pause),
                    json.loads(tokens),
                    float(created),
                    error,
                    [(agent, int(action)) for agent, action in moves],
                )
            )
        return saved

    def close(self) -> None:
        self.db.close()

    def _transaction(self):
        return _Transaction(self.db)


class _Transaction:
    """``BEGIN`` ... ``COMMIT`` (``ROLLBACK`` on an error), for a connection in autocommit mode."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind, error, trace) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")


__all__ = ["GameStore", "SavedGame", "default_data_folder"]
