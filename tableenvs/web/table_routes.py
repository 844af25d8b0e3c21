"""The routes of the card table beyond the core API: taking back tentative moves, and each game's rules page.

Where you are: part of :mod:`tableenvs.web`; :func:`table_routes` gives the routes :func:`tableenvs.web.app.create_app`
adds. docs/web.md describes them:

* ``POST /api/games/{id}/take-back`` — ``{"action": id or null, "then": id or null}`` with the seat's
  ``Authorization: Bearer TOKEN`` (a token in the URL or the body is refused, :mod:`tableenvs.web.bearer`) -> the
  seat's new view: its last tentative move ``action`` of this turn taken back (null: all of them), then the move
  ``then`` played if given (e.g. drawing instead of the staged tiles).
  :meth:`tableenvs.web.tables.GameTable.take_back`; with a data folder the store keeps it before it is made.
* ``GET /rules/{game}`` — the game's rules page (Markdown, as plain text).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route

from tableenvs.web.bearer import bearer_token, refuse_token_in_body, refuse_token_in_url, required_token
from tableenvs.web.manager import TableManager
from tableenvs.web.rules_page import rules_text
from tableenvs.web.tables import ApiError, ServerConfig, _is_int, _show

#: Fields of ``POST /api/games/{id}/take-back``.
TAKE_BACK_FIELDS = ("action", "then")
HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}


def table_routes(config: ServerConfig, read_json: Callable[[Request, int, float], Awaitable[Any]]) -> list[Route]:
    """The routes, reading request bodies with the app's ``read_json`` (its limits and errors)."""

    async def take_back(request: Request) -> JSONResponse:
        tables: TableManager = request.app.state.tables
        refuse_token_in_url(request)
        table = tables.get(request.path_params["game_id"])
        token = bearer_token(request)
        body: Any = await read_json(request, config.max_body, config.header_seconds)
        if not isinstance(body, dict):
            raise ApiError(400, 'the body must be a JSON object {"action": integer or null, "then": integer or null}')
        refuse_token_in_body(body)
        unknown = sorted(set(body) - set(TAKE_BACK_FIELDS))
        if unknown:
            raise ApiError(
                400, f"unknown field(s) {', '.join(map(repr, unknown))}; fields: {', '.join(TAKE_BACK_FIELDS)}",
                unknown[0],
            )  # fmt: skip
        agent = table.seat_of_token(required_token(token, "a take-back"))
        table.touch()
        for key in ("action", "then"):
            value = body.get(key)
            if value is not None and not _is_int(value):
                raise ApiError(400, f"{key} must be an action id (integer) or null, got {_show(value)}", key)
        table.take_back(agent, body.get("action"), body.get("then"))
        request.app.state.runner.kick(table)
        return JSONResponse(table.view(agent, config.idle_seconds, config.max_age_seconds), headers=HEADERS)

    async def show_rules(request: Request) -> PlainTextResponse:
        game = request.path_params["game"]
        text = rules_text(game)
        if text is None:
            raise ApiError(404, f"no rules page for {_show(game)} on this server")
        headers = {"Content-Security-Policy": "default-src 'none'; sandbox", **HEADERS}
        return PlainTextResponse(text, headers=headers)

    return [
        Route("/api/games/{game_id}/take-back", take_back, methods=["POST"]),
        Route("/rules/{game}", show_rules),
    ]
