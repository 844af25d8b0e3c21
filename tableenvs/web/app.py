"""The web app: the JSON API of docs/web.md, the single offline page, limits and the agents' runner.

Where you are: part of :mod:`tableenvs.web`; :func:`create_app` returns a Starlette app (served by uvicorn from
``tableenvs serve``, or driven by Starlette's ``TestClient`` in the tests). Routes:

* ``GET /`` and ``GET /games/{id}`` — the page (``static/index.html``): a lobby, then a seat's table. A seat's token
  travels in the link's ``#token=...`` fragment, which browsers never send to the server; the page passes it to the
  API itself.
* ``GET /api/catalog`` — the games, their options and player counts, the seats offered and the limits;
  ``GET /api/status`` — how many games are live.
* ``POST /api/games`` — ``{"game", "options", "seats", "seed", "pause"}`` -> ``{"id", "tokens", "links"}``.
* ``GET /api/games/{id}?token=T[&wait=V]`` — that seat's view (no token: the spectator's); with ``wait`` the request
  is held until the view's ``version`` differs from ``V`` (at most ``wait_seconds``): the page's updates.
* ``POST /api/games/{id}/actions`` — ``{"token", "action"}`` -> the new view.
* ``GET /api/games/{id}/record`` and ``/replay`` — once over: the game record (JSON) and its replay page (HTML), as
  downloads.
* ``POST /api/games/{id}/take-back`` and ``GET /rules/{game}``: :mod:`tableenvs.web.table_routes`.

Every refusal is JSON ``{"error": text, "field": name or null, ...}`` with a 4xx status; a refused request changes
nothing. Bodies are read up to ``max_body`` bytes (413 past it, whatever Content-Length says); no request names a
file, and the server writes none.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from tableenvs.core.registry import names
from tableenvs.core.registry import spec as game_spec
from tableenvs.web.runner import AgentRunner
from tableenvs.web.seats import seat_choices
from tableenvs.web.table_routes import table_routes
from tableenvs.web.tables import ACTION_FIELDS, ApiError, ServerConfig, TableManager, _is_int, _show

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


def create_app(config: ServerConfig | None = None) -> Starlette:
    """The app with ``config``'s limits (default :class:`ServerConfig`). Its state: ``app.state.tables`` (the
    :class:`TableManager`) and ``app.state.runner`` (the :class:`AgentRunner`), made when the app starts."""
    config = config or ServerConfig()
    page = page_html()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        tables = TableManager(config)
        runner = AgentRunner(config.agent_threads)
        app.state.tables, app.state.runner = tables, runner
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
        return api({"live_games": len(tables.tables), "max_games": config.max_games})

    async def create_game(request: Request) -> JSONResponse:
        tables: TableManager = request.app.state.tables
        body = await read_json(request, config.max_body)
        tables.check_room()  # before building: a full server does no work for the request
        table = await run_in_threadpool(tables.build, body)  # may load a saved model
        tables.add(table)
        request.app.state.runner.kick(table)
        links = {agent: f"/games/{table.id}#token={token}" for agent, token in table.tokens.items()}
        return api({"id": table.id, "tokens": table.tokens, "links": links, "spectate": f"/games/{table.id}"}, 201)

    async def show_game(request: Request) -> JSONResponse:
        tables: TableManager = request.app.state.tables
        game_id = request.path_params["game_id"]
        table = tables.get(game_id)
        query = request.query_params
        agent = None
        if "token" in query:
            agent = table.seat_of_token(query["token"])
            table.touch()
        wait = query.get("wait")
        if wait is not None:
            if not wait.lstrip("-").isdigit() or len(wait) > 18:
                raise ApiError(400, f"wait must be a view's version (an integer), got {_show(wait)}", "wait")
            await table.wait_change(int(wait), config.wait_seconds)
            table = tables.get(game_id)  # it may have expired meanwhile
        return api(table.view(agent, config.idle_seconds))

    async def play(request: Request) -> JSONResponse:
        tables: TableManager = request.app.state.tables
        table = tables.get(request.path_params["game_id"])
        body = await read_json(request, config.max_body)
        if not isinstance(body, dict):
            raise ApiError(400, 'the body must be a JSON object {"token": text, "action": integer}')
        unknown = sorted(set(body) - set(ACTION_FIELDS))
        if unknown:
            raise ApiError(400, f"unknown field(s) {', '.join(map(repr, unknown))}; fields: token, action", unknown[0])
        if not isinstance(body.get("token"), str):
            raise ApiError(400, f"token must be the seat's token (text), got {_show(body.get('token'))}", "token")
        agent = table.seat_of_token(body["token"])
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
        return api(table.view(agent, config.idle_seconds))

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
    return Starlette(routes=routes, lifespan=lifespan, exception_handlers={ApiError: on_api_error})


async def read_json(request: Request, max_body: int) -> Any:
    """The request body as JSON; 413 past ``max_body`` bytes (Content-Length or the bytes as they arrive), 400 if it
    is not UTF-8 JSON (NaN and Infinity refused) or nests too deeply."""
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > max_body):
        raise ApiError(413, f"the request body is larger than this server's limit of {max_body} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_body:
            raise ApiError(413, f"the request body is larger than this server's limit of {max_body} bytes")
        chunks.append(chunk)

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
    """Remove idle games every few seconds (a quarter of the idle time, between 0.2 and 30 s); after removing any,
    collect the garbage and hand the freed heap back to the system (:func:`release_memory`)."""
    every = min(30.0, max(0.2, config.idle_seconds / 4))
    while True:
        await asyncio.sleep(every)
        expired = tables.sweep()
        if expired:
            release_memory()
            log.info("expired %d idle game(s); %d live", len(expired), len(tables.tables))


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


__all__ = ["ServerConfig", "create_app", "page_html", "read_json"]
