"""The live games of a web server: creation from a checked request, tokens, per-seat views, moves, limits, expiry
(by idleness and by age), and the games kept in a :class:`~tableenvs.web.store.GameStore` when there is one.

Where you are: part of :mod:`tableenvs.web`, below the routes (:mod:`tableenvs.web.app`) and free of Starlette. Every
method here runs on the server's event-loop thread, one at a time, so a live env is never touched by two threads;
the agents' thinking works on copies (:func:`tableenvs.web.seats.think`).

What a seat is shown (:meth:`GameTable.view`) is built only from what that seat may see: the env's own per-seat
picture (``render_svg(agent)``), its own legal moves in words (``describe_action``) when it is to act, its own past
moves as it made them and the others' as the table learned them (``describe_action_public``, taken just before the
move). A spectator gets the public part only (whose turn, the public move log, no picture) while the game runs.
Once the game is over everyone gets the god view (``render_svg()``), the returns and the outcome, and the game
record may be downloaded. The seed is never shown before the end (it would reveal the deal).
"""

from __future__ import annotations

import asyncio
import hmac
import math
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from tableenvs.core.registry import make_raw, names
from tableenvs.core.registry import spec as game_spec
from tableenvs.play.records import GameRecord, Recorder
from tableenvs.policies import check_trusted
from tableenvs.web.options import OptionError, build_without_files, check_options
from tableenvs.web.seats import Seat, SeatError, build_policy, parse_seat
from tableenvs.web.store import GameStore, SavedGame

#: Fields of ``POST /api/games``.
CREATE_FIELDS = ("game", "options", "seats", "seed", "pause")
#: Fields of ``POST /api/games/{id}/actions``.
ACTION_FIELDS = ("action",)
MAX_SEED = 2**63


@dataclass
class ServerConfig:
    """The server's limits (``tableenvs serve`` flags; docs/web.md explains each)."""

    max_games: int = 100  #: live games at once; creating one more is refused (503)
    idle_seconds: float = 1800.0  #: a game nobody has used for this long is removed
    max_age_seconds: float = 86400.0  #: a game this old is removed, used or not
    max_moves: int = 10000  #: moves per game; a game that reaches it stops
    max_option: int = 1000  #: the largest number a game option may be given (turns, rounds, games per episode...)
    max_body: int = 16 * 1024  #: bytes of a request body; more is refused (413)
    agent_threads: int = 4  #: worker threads for the agents' thinking, shared by all games
    max_search_sims: int = 1000  #: largest search budget a seat may ask for, in simulations per decision
    max_search_ms: float = 1000.0  #: ... or in milliseconds of CPU per decision
    max_pause: float = 5.0  #: the longest pause before another seat's turn a game may ask for, seconds
    wait_seconds: float = 20.0  #: the longest a ``GET ...?wait=V`` holds the request waiting for a change
    moves_shown: int = 60  #: the last moves listed in a view
    models: dict[str, str] = field(default_factory=dict)  #: model seats, ``model:NAME`` -> saved model path
    trust_models: bool = False  #: let ``models`` hold SB3 ``.zip`` files (pickles, which can run code)
    allowed_hosts: list[str] = field(default_factory=list)  #: host names served besides the loopback ones
    header_seconds: float = 10.0  #: a connection whose request headers take longer is closed (``tableenvs serve``)
    data: str | None = None  #: the data folder keeping the games (None: kept in memory only)
    warm_up: bool = True  #: play a few moves of each game before serving (loads or compiles their solvers)

    def __post_init__(self):
        for path in self.models.values():
            check_trusted(path, self.trust_models)  # a .zip only with trust_models: model seats then load as trusted

    def limits(self) -> dict[str, Any]:
        """The limits as the catalog shows them (the model paths are not shown)."""
        data = asdict(self)
        data["models"] = sorted(self.models)
        data["data"] = self.data is not None  # whether games are kept, not where
        del data["warm_up"]
        return data


class ApiError(Exception):
    """A refused request: the HTTP ``status``, a message, the request ``field`` at fault (if any) and extra keys."""

    def __init__(self, status: int, message: str, field: str | None = None, **extra: Any):
        super().__init__(message)
        self.status, self.message, self.field, self.extra = status, message, field, extra

    def body(self) -> dict[str, Any]:
        return {"error": self.message, "field": self.field, **self.extra}


def _show(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class GameTable:
    """One live game: the raw env, its seats, the human seats' tokens, the move log and the record so far."""

    def __init__(
        self,
        game: str,
        options: dict[str, Any],
        seats: list[Seat],
        seed: int,
        pause: float,
        clock: Callable[[], float],
        moves_shown: int = 60,
        max_moves: int = 10000,
        *,
        game_id: str | None = None,
        tokens: dict[str, str] | None = None,
        created: float | None = None,
    ):
        self.id = game_id or secrets.token_urlsafe(9)
        self.game, self.options, self.seats, self.seed, self.pause = game, options, seats, seed, pause
        self.clock, self.moves_shown, self.max_moves = clock, moves_shown, max_moves
        self.env = make_raw(game, **options)
        self.env.reset(seed=seed)
        self.agents = list(self.env.possible_agents)
        if len(seats) != len(self.agents):
            raise ValueError(f"seats names {len(seats)} players, the game has {len(self.agents)}")
        humans = [agent for agent, seat in zip(self.agents, seats, strict=True) if seat.human]
        self.tokens = {agent: secrets.token_urlsafe(24) for agent in humans} if tokens is None else dict(tokens)
        if sorted(self.tokens) != humans:
            raise ValueError(f"the tokens are for {sorted(self.tokens)}, the human seats are {humans}")
        self.policies = {agent: build_policy(seat, self.env) for agent, seat in zip(self.agents, seats, strict=True)}
        self.recorder = Recorder(game, options, seed, [seat.spec for seat in seats])
        self.moves: list[tuple[str, str, str]] = []  # (agent, as the mover made it, as the others learned it)
        self.version = 0
        self.created = clock() if created is None else created
        self.last_active = clock()
        self.error: str | None = None  # an agent that failed, or the move cap, stops the game
        self.closed = False
        self.agent_task: asyncio.Task | None = None
        self.on_move: Callable[[GameTable, str, int], None] | None = None  # keeps the move (before it is played)
        self.on_error: Callable[[GameTable], None] | None = None
        self._changed: asyncio.Event | None = None
        self._record: GameRecord | None = None

    def rng(self, agent: str) -> np.random.Generator:
        """The generator of ``agent``'s next decision: from the seed, the seat and the move number, so a game
        rebuilt after a restart goes on as it would have."""
        return np.random.default_rng([self.seed, 32, self.agents.index(agent), len(self.moves)])

    # -- who is asking
    def seat_of_token(self, token: Any) -> str:
        """The agent holding ``token``; 403 revealing nothing otherwise (each token is compared in constant time)."""
        if isinstance(token, str):
            encoded = token.encode("utf-8", "replace")
            for agent, own in self.tokens.items():
                if hmac.compare_digest(encoded, own.encode()):
                    return agent
        raise ApiError(403, "wrong token")

    def touch(self) -> None:
        self.last_active = self.clock()

    # -- state
    @property
    def over(self) -> bool:
        return self.env.outcome() is not None

    def to_act(self) -> str | None:
        return None if self.over or self.error else self.env.agent_selection

    def agent_to_act(self) -> str | None:
        """The agent seat to act now, or None (a human's turn, or the game is over or stopped)."""
        agent = self.to_act()
        if agent is None or self.closed or self.seats[self.agents.index(agent)].human:
            return None
        return agent

    def seat(self, agent: str) -> Seat:
        return self.seats[self.agents.index(agent)]

    def last_mover(self) -> str | None:
        return self.moves[-1][0] if self.moves else None

    # -- changes
    def apply(self, agent: str, action: int, keep: bool = True) -> None:
        """Play ``action`` for ``agent`` (already checked: it is ``agent``'s turn and the action is legal); with
        ``keep``, the move is first written by ``on_move`` (if that raises, nothing is played). A game that reaches
        ``max_moves`` stops."""
        env = self.env
        if keep and self.on_move is not None:
            self.on_move(self, agent, action)
        public = env.describe_action_public(action)
        private = env.describe_action(action)
        self.recorder.add(env, action)
        env.step(action)
        self.moves.append((agent, private, public))
        self.touch()
        if len(self.moves) >= self.max_moves and not self.over and not self.error:
            self.fail(f"the game reached this server's cap of {self.max_moves} moves per game", keep=keep)
        self.changed()

    def fail(self, message: str, keep: bool = True) -> None:
        self.error = message
        if keep and self.on_error is not None:
            self.on_error(self)
        self.changed()

    def changed(self) -> None:
        """Bump the version and wake every request waiting for a change."""
        self.version += 1
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    def wake(self) -> None:
        """Wake every request waiting for a change (the server is stopping), without a change."""
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    async def wait_change(self, version: int, timeout: float, stopping: bool = False) -> None:
        """Return once the version is past ``version`` (at once if it already is), or after ``timeout`` s, or when
        woken (:meth:`wake`)."""
        if self.version != version or self.over or self.closed or stopping:
            return
        if self._changed is None:
            self._changed = asyncio.Event()
        event = self._changed
        try:
            await asyncio.wait_for(event.wait(), timeout)
        except asyncio.TimeoutError:
            pass

    def close(self) -> None:
        self.closed = True
        if self.agent_task is not None:
            self.agent_task.cancel()
        self.changed()

    # -- what a seat sees
    def check_move(self, agent: str, action: Any) -> int:
        """``action`` if ``agent`` may play it now; else an :class:`ApiError` naming ``agent``'s legal moves."""
        if self.error:
            raise ApiError(409, f"the game has stopped: {self.error}", legal=[])
        if self.over:
            raise ApiError(409, "the game is over", legal=[])
        to_act = self.env.agent_selection
        if to_act != agent:
            raise ApiError(409, f"it is not your turn ({agent}): {to_act} is to act", to_act=to_act, legal=[])
        legal = self.legal_moves()
        if not _is_int(action) or action not in self.env.legal_actions():
            texts = "; ".join(f"{move['action']} ({move['text']})" for move in legal[:20])
            more = f" and {len(legal) - 20} more" if len(legal) > 20 else ""
            raise ApiError(
                422, f"action {_show(action)} is not one of your legal moves: {texts}{more}", "action", legal=legal
            )
        return action

    def legal_moves(self) -> list[dict[str, Any]]:
        env = self.env
        return [{"action": int(a), "text": env.describe_action(a)} for a in env.legal_actions()]

    def view(self, agent: str | None, idle_seconds: float, max_age_seconds: float = math.inf) -> dict[str, Any]:
        """What ``agent`` (None: a spectator) is shown now; see the module docstring for what may be in it."""
        env, over = self.env, self.over
        to_act = self.to_act()
        if over:
            svg, shown = env.render_svg(None), "god"
        elif agent is not None:
            svg, shown = env.render_svg(agent), "seat"
        else:
            svg, shown = None, "public"
        moves = [
            {"agent": mover, "text": private if mover == agent else public}
            for mover, private, public in self.moves[-self.moves_shown :]
        ]
        view: dict[str, Any] = {
            "id": self.id,
            "game": self.game,
            "options": self.options,
            "seats": [
                {"agent": a, "seat": s.spec, "human": s.human} for a, s in zip(self.agents, self.seats, strict=True)
            ],
            "you": agent,
            "view": shown,
            "version": self.version,
            "to_act": to_act,
            "thinking": to_act is not None and not self.seat(to_act).human,
            "legal": self.legal_moves() if agent is not None and to_act == agent else [],
            "svg": svg,
            "moves": moves,
            "move_count": len(self.moves),
            "over": over,
            "error": self.error,
            "pause": self.pause,
            "expires_in": self.expires_in(idle_seconds, max_age_seconds),
        }
        if over:
            outcome = env.outcome()
            view["returns"] = [float(x) for x in outcome.returns]
            view["outcome"] = {
                "scores": list(outcome.scores),
                "score_name": outcome.score_name,
                "higher_is_better": outcome.higher_is_better,
                "winners": [self.agents[s] for s in outcome.winners],
                "truncated": outcome.truncated,
                "reason": outcome.reason.text,
            }
            view["seed"] = self.seed
        if agent is not None:
            self.touch()  # again at the end: building the view may have taken a while (a Rummikub legal-move sweep)
        return view

    def expires_in(self, idle_seconds: float, max_age_seconds: float = math.inf) -> float:
        """Seconds until the game expires if nobody uses it (idle) or anyway (age)."""
        now = self.clock()
        left = min(idle_seconds - (now - self.last_active), max_age_seconds - (now - self.created))
        return max(0.0, round(left, 1))

    def record(self) -> GameRecord:
        """The finished game's record (409 before the end: it holds every move and the seed)."""
        if not self.over:
            raise ApiError(409, "the record is available once the game is over (it reveals every hidden move)")
        if self._record is None:
            self._record = self.recorder.finish(self.env)
        return self._record


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

        def keep_error(table: GameTable) -> None:
            store.set_error(table.id, table.error)

        table.on_move, table.on_error = keep_move, keep_error

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
