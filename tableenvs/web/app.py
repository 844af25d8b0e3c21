"""The web app: the JSON API of docs/web.md, the single offline page, limits and the agents' runner.

Where you are: part of :mod:`tableenvs.web`; :func:`create_app` returns a Starlette app (served by uvicorn from
``tableenvs serve``, or driven by Starlette's ``TestClient`` in the tests). Routes:

* ``GET /`` and ``GET /games/{id}`` — the page (``static/index.html``): a lobby, then a seat's table. A seat's token
  travels in the link's ``#token=...`` fragment, which browsers never send to the server; the page passes it to the
  API itself.
* ``GET /api/catalog`` — the games, their options and player counts, the seats offered and the limits;
  ``GET /api/status`` — how many games are live, and how many requests are held waiting for a change.
* ``POST /api/games`` — ``{"game", "options", "seats", "seed", "pause"}`` -> ``{"id", "tokens", "links"}``.
* ``GET /api/games/{id}[?wait=V]`` with ``Authorization: Bearer TOKEN`` — that seat's view (no token: the
  spectator's); with ``wait`` the request is held until the view's ``version`` differs from ``V`` (at most
  ``wait_seconds``): the page's updates. A token in the URL is refused (URLs end up in logs and histories).
* ``POST /api/games/{id}/actions`` — ``{"action"}`` with the seat's ``Authorization: Bearer TOKEN`` -> the new view.
* ``GET /api/games/{id}/record`` and ``/replay`` — once over: the game record (JSON) and its replay page (HTML), as
  downloads.
* ``POST /api/games/{id}/take-back`` (the seat's token in the same header) and ``GET /rules/{game}``:
  :mod:`tableenvs.web.table_routes`.

Every refusal is JSON ``{"error": text, "field": name or null, ...}`` with a 4xx status; a refused request changes
nothing. Before any route, :class:`~tableenvs.web.origin.OriginGuard` refuses foreign hosts and origins and
non-JSON changes. Bodies are read up to ``max_body`` bytes (413 past it, whatever Content-Length says); no request
names a file (:mod:`tableenvs.web.options`). With a data folder the games are kept in it
(:mod:`tableenvs.web.store`) and rebuilt at the next start. At the start, before serving, each game plays a few moves
(:func:`warm_up`): a game that compiles a solver on first use does it then, not in a player's request.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from tableenvs.core.registry import make_raw, names
from tableenvs.core.registry import spec as game_spec
from tableenvs.web.bearer import bearer_token, refuse_token_in_body, refuse_token_in_url, required_token
from tableenvs.web.manager import TableManager
from tableenvs.web.origin import OriginGuard
from tableenvs.web.runner import AgentRunner
from tableenvs.web.seats import seat_choices
from tableenvs.web.store import GameStore
from tableenvs.web.table_routes import table_routes
from tableenvs.web.tables import ACTION_FIELDS, ApiError, GameTable, ServerConfig, _is_int, _show

log = logging.getLogger("tableenvs.web")

#: The page may load nothing from anywhere: its script and style are inline, pictures inline SVG, data from the API.
PAGE_POLICY = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
API_HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}


def page_html() -> str:
    """The single page (package data ``tableenvs/web/static/index.html``)."""
    return resources.files("tableenvs.web").joinpath("static/index.html").read_text(encoding="utf-8")


def create_app(
    config: ServerConfig | None = None,
    *,
    store: GameStore | None = None,
    clock: Callable[[], float] = time.time,
    announce: Callable[[str], None] | None = None,
) -> OriginGuard:
    """The app with ``config``'s limits (default :class:`ServerConfig`), behind its :class:`OriginGuard` (the
    Starlette app is ``.app`` of the returned one). Its state: ``app.state.tables`` (the :class:`TableManager`) and
    ``app.state.runner`` (the :class:`AgentRunner`), made when the app starts. The games are kept in ``store`` (or
    in a store opened on ``config.data``; neither: in memory only). ``clock``: seconds (``time.time``), for the
    games' age and idleness. ``announce`` gets a line on the start's progress (the serve command prints them)."""
    config = config or ServerConfig()
    page = page_html()
    say = announce or (lambda text: log.info("%s", text))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        kept = store if store is not None else GameStore(config.data) if config.data is not None else None
        tables = TableManager(config, clock, kept)
        if config.warm_up:
            say("warming up the games (a solver compiled once per machine can take a minute)...")
            seconds = await run_in_threadpool(warm_up)
            say(f"warmed up in {seconds:.1f} s")
        if kept is not None:
            restored, problems = await run_in_threadpool(tables.restore)
            for problem in problems:
                say(problem)
            say(f"{restored} game(s) restored from {kept.path}")
        runner = AgentRunner(config.agent_threads)
        app.state.tables, app.state.runner = tables, runner
        for table in tables.tables.values():
            runner.kick(table)
        sweeper = asyncio.get_running_loop().create_task(_sweep(tables, config))
        try:
            yield
        finally:
            sweeper.cancel()
            tables.close()
            runner.close()

    def api(data: Any, status: int = 200) -> JSONResponse:
        return JSONResponse(data, status, headers=API_HEADERS)

    async def on_api_error(request: Request, error: Exception) -> JSONResponse:
        if not isinstance(error, ApiError):  # never: registered for ApiError only (Starlette types it for any error)
            raise error
        return api(error.body(), error.status)

    async def show_page(request: Request) -> HTMLResponse:
        headers = {"Content-Security-Policy": PAGE_POLICY, "Referrer-Policy": "no-referrer", **API_HEADERS}
        return HTMLResponse(page, headers=headers)

    async def catalog(request: Request) -> JSONResponse:
        games = []
        for name in names():
            spec = game_spec(name)
            options = [o for o in spec.option_names() if o not in ("render_mode", "num_players")]
            games.append(
                {
                    "name": name,
                    "player_counts": list(spec.player_counts),
                    "options": options,
                    "seats": seat_choices(name, config.models),
                }
            )
        return api({"games": games, "limits": config.limits()})

    async def status(request: Request) -> JSONResponse:
        tables: TableManager = request.app.state.tables
        return api({"live_games": len(tables.tables), "max_games": config.max_games, "waiting": tables.waiting})

    async def create_game(request: Request) -> JSONResponse:
        tables: TableManager = request.app.state.tables
        body = await read_json(request, config.max_body, config.header_seconds)
        tables.check_room()  # before building: a full server does no work for the request
        table = await run_in_threadpool(tables.build, body)  # may load a saved model
        tables.add(table)
        request.app.state.runner.kick(table)
        links = {agent: f"/games/{table.id}#token={token}" for agent, token in table.tokens.items()}
        return api({"id": table.id, "tokens": table.tokens, "links": links, "spectate": f"/games/{table.id}"}, 201)

    def view(table: GameTable, agent: str | None) -> dict[str, Any]:
        return table.view(agent, config.idle_seconds, config.max_age_seconds)

    async def show_game(request: Request) -> JSONResponse:
        tables: TableManager = request.app.state.tables
        game_id = request.path_params["game_id"]
        query = request.query_params
        refuse_token_in_url(request)
        table = tables.get(game_id)
        token = bearer_token(request)
        agent = None
        if token is not None:
            agent = table.seat_of_token(token)
            table.touch()
        wait = query.get("wait")
        if wait is not None:
            if not wait.lstrip("-").isdigit() or len(wait) > 18:
                raise ApiError(400, f"wait must be a view's version (an integer), got {_show(wait)}", "wait")
            tables.waiting += 1
            try:
                await table.wait_change(int(wait), config.wait_seconds, tables.stopping)
            finally:
                tables.waiting -= 1
            table = tables.get(game_id)  # it may have expired meanwhile
        return api(view(table, agent))

    async def play(request: Request) -> JSONResponse:
        tables: TableManager = request.app.state.tables
        refuse_token_in_url(request)
        table = tables.get(request.path_params["game_id"])
        token = bearer_token(request)
        body = await read_json(request, config.max_body, config.header_seconds)
        if not isinstance(body, dict):
            raise ApiError(400, 'the body must be a JSON object {"action": integer}')
        refuse_token_in_body(body)
        unknown = sorted(set(body) - set(ACTION_FIELDS))
        if unknown:
            raise ApiError(400, f"unknown field(s) {', '.join(map(repr, unknown))}; fields: action", unknown[0])
        agent = table.seat_of_token(required_token(token, "a move"))
        table.touch()
        if "action" not in body:
            raise ApiError(400, "the field 'action' is required (an integer from your legal moves)", "action")
        action = body["action"]
        if not _is_int(action):
            raise ApiError(
                400,
                f"action must be an integer from your legal moves, got {_show(action)}",
                "action",
                legal=table.legal_moves() if table.to_act() == agent else [],
            )
        table.apply(agent, table.check_move(agent, action))
        request.app.state.runner.kick(table)
        return api(view(table, agent))

    async def download_record(request: Request) -> Response:
        table = request.app.state.tables.get(request.path_params["game_id"])
        record = table.record()
        headers = {"Content-Disposition": f'attachment; filename="{table.game}-{table.id}.json"', **API_HEADERS}
        return Response(record.to_json() + "\n", media_type="application/json", headers=headers)

    async def download_replay(request: Request) -> Response:
        from tableenvs.play.viewer import viewer_html

        table = request.app.state.tables.get(request.path_params["game_id"])
        record = table.record()
        text = await run_in_threadpool(viewer_html, record.to_dict())  # re-plays the game: off the event loop
        headers = {
            "Content-Disposition": f'attachment; filename="{table.game}-{table.id}.html"',
            "Content-Security-Policy": "sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline'; "
            "style-src 'unsafe-inline'",
            **API_HEADERS,
        }
        return HTMLResponse(text, headers=headers)

    routes = [
        Route("/", show_page),
        Route("/games/{game_id}", show_page),
        Route("/api/catalog", catalog),
        Route("/api/status", status),
        Route("/api/games", create_game, methods=["POST"]),
        Route("/api/games/{game_id}", show_game),
        Route("/api/games/{game_id}/actions", play, methods=["POST"]),
        Route("/api/games/{game_id}/record", download_record),
        Route("/api/games/{game_id}/replay", download_replay),
        *table_routes(config, read_json),  # take-back, rules pages (tableenvs.web.table_routes)
    ]
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={ApiError: on_api_error})
    return OriginGuard(app, config.allowed_hosts)


def warm_up(moves: int = 4) -> float:
    """Each registered game, with its default options, dealt and played a few moves (legal moves, their words, the
    pictures): whatever a game loads or compiles on first use (a solver) is ready before the first request.
    Returns the seconds it took."""
    start = time.perf_counter()
    for name in names():
        env = make_raw(name)
        env.reset(seed=0)
        for _ in range(moves):
            if env.outcome() is not None:
                break
            legal = env.legal_actions()
            env.describe_action(legal[0])
            if game_spec(name).picture:
                env.render_svg(env.agent_selection)
            env.step(legal[-1])
    return time.perf_counter() - start


async def read_json(request: Request, max_body: int, seconds: float = 10.0) -> Any:
    """The request body as JSON; 413 past ``max_body`` bytes (Content-Length or the bytes as they arrive), 408 if it
    has not all arrived within ``seconds``, 400 if it is not UTF-8 JSON (NaN and Infinity refused) or nests too
    deeply."""
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > max_body):
        raise ApiError(413, f"the request body is larger than this server's limit of {max_body} bytes")
    chunks: list[bytes] = []

    async def read() -> None:
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > max_body:
                raise ApiError(413, f"the request body is larger than this server's limit of {max_body} bytes")
            chunks.append(chunk)

    try:
        await asyncio.wait_for(read(), seconds)
    except ClientDisconnect:  # the client left mid-body: nobody reads the answer, nothing was changed
        raise ApiError(400, "the client disconnected before the body arrived") from None
    except asyncio.TimeoutError:
        raise ApiError(408, f"the request body did not arrive within {seconds:g} s") from None

    def refuse_constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    try:
        return json.loads(b"".join(chunks).decode("utf-8"), parse_constant=refuse_constant)
    except UnicodeDecodeError:
        raise ApiError(400, "the request body is not UTF-8 text") from None
    except RecursionError:
        raise ApiError(400, "the request body nests too deeply") from None
    except ValueError as error:
        raise ApiError(400, f"the request body is not JSON: {error}") from None


async def _sweep(tables: TableManager, config: ServerConfig) -> None:
    """Remove idle and old games every few seconds (a quarter of the idle time, between 0.2 and 30 s); after removing
    any,
    collect the garbage and hand the freed heap back to the system (:func:`release_memory`)."""
    every = min(30.0, max(0.2, config.idle_seconds / 4))
    while True:
        await asyncio.sleep(every)
        expired = tables.sweep()
        if expired:
            release_memory()
            log.info("expired %d idle or old game(s); %d live", len(expired), len(tables.tables))


def release_memory() -> None:
    """``gc.collect()``, then glibc's ``malloc_trim(0)`` where there is one: without it the allocator keeps the freed
    pages of expired games, and the resident memory stays at its peak."""
    import ctypes
    import ctypes.util
    import gc

    gc.collect()
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: the memory is still free for this process to reuse
        pass


__all__ = ["ServerConfig", "bearer_token", "create_app", "page_html", "read_json", "warm_up"]
