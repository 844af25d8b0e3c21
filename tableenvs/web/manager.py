"""The live games of a server by id: a new game from a checked request, the live-game limit, expiry by idleness and
by age, and the games kept in a :class:`~tableenvs.web.store.GameStore` (written as they are created and moved,
rebuilt by :meth:`TableManager.restore` when the server starts).

Where you are: part of :mod:`tableenvs.web`, between the routes (:mod:`tableenvs.web.app`) and the single games
(:class:`tableenvs.web.tables.GameTable`); free of Starlette. Its methods run on the event-loop thread, except
:meth:`TableManager.build` (it may load a model: a worker thread) and :meth:`TableManager.restore` (before serving).
"""

from __future__ import annotations

import math
import secrets
import time
from collections.abc import Callable
from typing import Any

from tableenvs.core.registry import names
from tableenvs.core.registry import spec as game_spec
from tableenvs.web.options import OptionError, build_without_files, check_options
from tableenvs.web.seats import Seat, SeatError, parse_seat
from tableenvs.web.store import GameStore, SavedGame
from tableenvs.web.tables import ApiError, GameTable, ServerConfig, _is_int, _show

#: Fields of ``POST /api/games``.
CREATE_FIELDS = ("game", "options", "seats", "seed", "pause")
MAX_SEED = 2**63


class TableManager:
    """The live games by id, the live-game limit, expiry by idleness and by age, and (with a
    :class:`~tableenvs.web.store.GameStore`) the games kept on disk: written as they are created and moved, rebuilt
    by :meth:`restore` when the server starts."""

    def __init__(self, config: ServerConfig, clock: Callable[[], float] = time.time, store: GameStore | None = None):
        self.config, self.clock, self.store = config, clock, store
        self.tables: dict[str, GameTable] = {}
        self.stopping = False
        self.waiting = 0  #: requests held waiting for a change

    def check_room(self) -> None:
        if len(self.tables) >= self.config.max_games:
            raise ApiError(
                503,
                f"this server holds at most {self.config.max_games} live games and is full; try again once some "
                f"end or expire (idle games expire after {self.config.idle_seconds:g} s)",
            )

    def build(self, body: Any) -> GameTable:
        """A new table from a ``POST /api/games`` body (not yet registered; may load a model, so it may run in a
        worker thread). :class:`ApiError` 400 naming the field at fault."""
        if not isinstance(body, dict):
            raise ApiError(400, f"the body must be a JSON object with the fields {', '.join(CREATE_FIELDS)}")
        unknown = sorted(set(body) - set(CREATE_FIELDS))
        if unknown:
            raise ApiError(
                400, f"unknown field(s) {', '.join(map(repr, unknown))}; fields: {', '.join(CREATE_FIELDS)}", unknown[0]
            )
        for key in ("game", "seats"):
            if key not in body:
                raise ApiError(400, f"the field {key!r} is required", key)
        game = body["game"]
        if not isinstance(game, str) or game not in names():
            raise ApiError(400, f"game must be one of {', '.join(names())}, got {_show(game)}", "game")
        config = self.config
        seats_text = body["seats"]
        counts = game_spec(game).player_counts
        if not isinstance(seats_text, list) or not seats_text:
            raise ApiError(400, f"seats must be a list of seat names, one per player, got {_show(seats_text)}", "seats")
        if counts and len(seats_text) not in counts:
            raise ApiError(
                400, f"{game} takes {min(counts)}-{max(counts)} players, seats names {len(seats_text)}", "seats"
            )
        seats = self.parse_seats(game, seats_text)
        options = body.get("options", {})
        if options is None:
            options = {}
        if not isinstance(options, dict):
            raise ApiError(400, f"options must be an object (option name: value), got {_show(options)}", "options")
        options = dict(options)
        if "render_mode" in options:
            raise ApiError(
                400, "options: render_mode is the server's to choose, not an option here", "options.render_mode"
            )
        if counts:
            given = options.get("num_players", len(seats))
            if given != len(seats) or not _is_int(given):
                raise ApiError(
                    400,
                    f"options.num_players is {_show(given)} but seats names {len(seats)} players",
                    "options.num_players",
                )
            options["num_players"] = len(seats)
        try:
            check_options(game, options, config.max_option)
        except OptionError as error:
            raise ApiError(400, str(error), error.field) from None
        seed = body.get("seed")
        if seed is None:
            seed = secrets.randbelow(MAX_SEED)
        elif not _is_int(seed) or not 0 <= seed < MAX_SEED:
            raise ApiError(400, f"seed must be null or an integer 0 <= seed < 2**63, got {_show(seed)}", "seed")
        pause = body.get("pause", 0)
        if (
            not isinstance(pause, (int, float))
            or isinstance(pause, bool)
            or not math.isfinite(pause)
            or not (0 <= pause <= config.max_pause)
        ):
            raise ApiError(
                400, f"pause must be a number of seconds 0..{config.max_pause:g}, got {_show(pause)}", "pause"
            )

        def make_table(options: dict[str, Any]) -> GameTable:
            return GameTable(game, options, seats, seed, float(pause), self.clock, config.moves_shown, config.max_moves)

        try:
            return build_without_files(game, options, make_table)
        except OptionError as error:
            raise ApiError(400, str(error), error.field) from None

    def parse_seats(self, game: str, seats_text: list[Any]) -> list[Seat]:
        config, seats = self.config, []
        for index, text in enumerate(seats_text):
            try:
                seats.append(parse_seat(text, game, config.models, config.max_search_sims, config.max_search_ms))
            except SeatError as error:
                raise ApiError(400, f"seats[{index}]: {error}", f"seats[{index}]") from None
        return seats

    def add(self, table: GameTable) -> None:
        """Register a new table (and write it to the store first: if that fails, the game does not exist)."""
        self.check_room()
        if self.store is not None:
            try:
                self.store.add_game(self._saved(table))
            except Exception as error:  # sqlite3.Error, OSError (a full disk): the game is not created
                raise ApiError(503, f"the game could not be saved: {error}") from None
        self._track(table)
        self.tables[table.id] = table

    def _track(self, table: GameTable) -> None:
        if self.store is None:
            return
        store = self.store

        def keep_move(table: GameTable, agent: str, action: int) -> None:
            try:
                store.add_move(table.id, len(table.moves), agent, action)
            except Exception as error:  # not kept: the move is not played (a seat's request gets 503)
                raise ApiError(503, f"the move could not be saved, so it was not played: {error}") from None

        def keep_take_back(table: GameTable, start: int, moves: list[tuple[str, int]]) -> None:
            try:
                store.replace_moves(table.id, start, moves)
            except Exception as error:  # not kept: nothing is taken back (the seat's request gets 503)
                raise ApiError(503, f"the take-back could not be saved, so it was not made: {error}") from None

        def keep_error(table: GameTable) -> None:
            store.set_error(table.id, table.error)

        table.on_move, table.on_error, table.on_take_back = keep_move, keep_error, keep_take_back

    @staticmethod
    def _saved(table: GameTable) -> SavedGame:
        return SavedGame(
            table.id,
            table.game,
            table.options,
            [seat.spec for seat in table.seats],
            table.seed,
            table.pause,
            table.tokens,
            table.created,
            table.error,
            [],
        )

    def restore(self) -> tuple[int, list[str]]:
        """Rebuild every game of the store, each replayed from its seed to its last move, with its tokens; returns
        (games restored, one line for each game that could not be, which stays in the store)."""
        if self.store is None:
            return 0, []
        problems = []
        for saved in self.store.games():
            try:
                seats = self.parse_seats(saved.game, saved.seats)
                table = GameTable(
                    saved.game,
                    saved.options,
                    seats,
                    saved.seed,
                    saved.pause,
                    self.clock,
                    self.config.moves_shown,
                    self.config.max_moves,
                    game_id=saved.id,
                    tokens=saved.tokens,
                    created=saved.created,
                )
                for number, (agent, action) in enumerate(saved.moves):
                    if table.to_act() != agent or action not in table.env.legal_actions():
                        raise ValueError(f"move {number} ({agent}: {action}) is not legal when replayed")
                    table.apply(agent, action, keep=False)
                if saved.error is not None and table.error is None:  # the move cap set it again while replaying
                    table.fail(saved.error, keep=False)
            except (ApiError, ValueError, TypeError) as error:
                text = error.message if isinstance(error, ApiError) else str(error)
                problems.append(f"game {saved.id} ({saved.game}) not restored: {' '.join(text.split())}")
                continue
            self._track(table)
            self.tables[table.id] = table
        return len(self.tables), problems

    def get(self, game_id: str) -> GameTable:
        table = self.tables.get(game_id)
        if table is None:
            raise ApiError(404, f"no live game {_show(game_id)} (it may have ended and expired)")
        return table

    def sweep(self) -> list[str]:
        """Remove the games idle for longer than ``idle_seconds`` or older than ``max_age_seconds`` (from the store
        too); returns their ids."""
        now, idle, age = self.clock(), self.config.idle_seconds, self.config.max_age_seconds
        expired = [
            game_id
            for game_id, table in self.tables.items()
            if now - table.last_active > idle or now - table.created > age
        ]
        for game_id in expired:
            self.tables.pop(game_id).close()
        if self.store is not None:
            self.store.remove(expired)
        return expired

    def wake_all(self) -> None:
        """The server is stopping: answer every waiting request now, and every later one at once."""
        self.stopping = True
        for table in self.tables.values():
            table.wake()

    def close(self) -> None:
        """Stop every game's agents and forget the games (the store keeps them for the next start)."""
        for table in self.tables.values():
            table.close()
        self.tables.clear()
        if self.store is not None:
            self.store.close()


__all__ = ["CREATE_FIELDS", "TableManager"]
