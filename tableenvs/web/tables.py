"""One live game of a web server (:class:`GameTable`: tokens, per-seat views, moves, the move cap), the server's
limits (:class:`ServerConfig`) and its refusals (:class:`ApiError`); the games by id are
:class:`tableenvs.web.manager.TableManager`'s.

Where you are: part of :mod:`tableenvs.web`, below the routes (:mod:`tableenvs.web.app`) and free of Starlette. Every
method here runs on the server's event-loop thread, one at a time, so a live env is never touched by two threads;
the agents' thinking works on copies (:func:`tableenvs.web.seats.think`). A seat's tentative moves (Rummikub's staged
tiles) may be taken back (:meth:`GameTable.take_back`, :mod:`tableenvs.web.turns`).

What a seat is shown (:meth:`GameTable.view`) is built only from what that seat may see: the env's own per-seat
picture (``render_svg(agent)``), its own legal moves in words (``describe_action``) when it is to act, its own past
moves as it made them and the others' as the table learned them (``describe_action_public``, taken just before the
move), with the rules' public lines each move caused (a trick won, a round scored). A spectator gets the public part
only (whose turn, the public move log, the public picture ``render_public_svg()``) while the game runs.
Once the game is over everyone gets the god view (``render_svg()``), the returns and the outcome, and the game
record may be downloaded. The seed is never shown before the end (it would reveal the deal).
"""

from __future__ import annotations

import asyncio
import hmac
import math
import secrets
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from tableenvs.core.registry import make_raw
from tableenvs.core.registry import spec as game_spec
from tableenvs.play.records import GameRecord, Recorder
from tableenvs.policies import check_trusted
from tableenvs.web.rules_page import rules_link
from tableenvs.web.seats import Seat, build_policy
from tableenvs.web.turns import TurnDraft, news

#: Fields of ``POST /api/games/{id}/actions``.
ACTION_FIELDS = ("action",)


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
        # (agent, as the mover made it, as the others learned it, {"events": the rules' lines, "tentative": bool})
        self.moves: list[tuple[str, str, str, dict[str, Any]]] = []
        self.draft = TurnDraft(game_spec(game).declares("state"))  # tentative moves a seat may take back
        self.version = 0
        self.created = clock() if created is None else created
        self.last_active = clock()
        self.error: str | None = None  # an agent that failed, or the move cap, stops the game
        self.closed = False
        self.agent_task: asyncio.Task | None = None
        self.on_move: Callable[[GameTable, str, int], None] | None = None  # keeps the move (before it is played)
        self.on_error: Callable[[GameTable], None] | None = None
        # keeps a take-back: the moves from number n on replaced by the given (agent, action) list
        self.on_take_back: Callable[[GameTable, int, list[tuple[str, int]]], None] | None = None
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
        if self.seat(agent).human:  # an agent's moves are never taken back: no copy of the env for them
            self.draft.before_move(env, agent, action, len(self.moves), len(self.recorder.record.steps))
        else:
            self.draft.clear()
        self.recorder.add(env, action)
        logged = len(env.event_log)
        env.step(action)
        events, tentative = news(env, logged), env.is_tentative(action)
        extra = {**({"events": events} if events else {}), **({"tentative": True} if tentative else {})}
        self.moves.append((agent, private, public, extra))
        self.touch()
        if len(self.moves) >= self.max_moves and not self.over and not self.error:
            self.fail(f"the game reached this server's cap of {self.max_moves} moves per game", keep=keep)
        self.changed()

    def take_back(self, agent: str, action: int | None, then: int | None = None) -> None:
        """Take back ``agent``'s last tentative move ``action`` of this turn (``None``: all of them), then play
        ``then`` if given (a move legal once they are taken back, e.g. a draw). Refused (409, 422) changing nothing.
        """
        draft = self.draft
        if self.to_act() != agent or draft.agent != agent or not draft.actions:
            raise ApiError(409, "you have no tentative move to take back now", legal=[])
        try:
            env, keep = draft.replay(action)
        except ValueError as error:
            raise ApiError(422, str(error), "take_back") from None
        if then is not None:
            probe = draft.start.clone()
            for move in keep:
                probe.step(move)
            if not _is_int(then) or then not in probe.legal_actions():
                texts = "; ".join(f"{a} ({probe.describe_action(a)})" for a in probe.legal_actions()[:20])
                raise ApiError(422, f"then: {_show(then)} is not a legal move after the take-back: {texts}", "then")
        replayed = [*keep, *([] if then is None else [then])]
        if self.on_take_back is not None:  # kept first (if that raises, nothing changes), in one step
            self.on_take_back(self, draft.moves_before, [(agent, move) for move in replayed])
        del self.moves[draft.moves_before :]
        del self.recorder.record.steps[draft.steps_before :]
        self.env = env
        draft.clear()
        for move in replayed:
            self.apply(agent, move, keep=False)  # already kept by on_take_back
        self.touch()
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
            try:
                svg = env.render_public_svg()
            except NotImplementedError:  # a game without a public picture
                svg = None
            shown = "public"
        moves = [
            {"agent": mover, "text": private if mover == agent else public, **extra}
            for mover, private, public, extra in self.moves[-self.moves_shown :]
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
            "draft": self.draft.offers(agent) if agent is not None and to_act == agent else None,
            "rules": rules_link(self.game),
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
