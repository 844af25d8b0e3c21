"""Where a request's seat token may be: only in the ``Authorization: Bearer TOKEN`` header.

Where you are: part of :mod:`tableenvs.web`, used by the routes that act for a seat (:mod:`tableenvs.web.app`,
:mod:`tableenvs.web.table_routes`). A token in the URL (which ends up in logs and browser histories) or in a JSON
body is refused with 400, so a page that sends it anywhere else fails at once instead of working by accident.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from tableenvs.web.tables import ApiError


def bearer_token(request: Request) -> str | None:
    """The seat token of ``Authorization: Bearer TOKEN`` (None without the header); 400 for another form."""
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(400, "the Authorization header must be 'Bearer TOKEN' (the seat's token)", "token")
    return token.strip()


def refuse_token_in_url(request: Request) -> None:
    """400 for a ``token`` in the query string: a URL ends up in logs and histories, so it may not carry one."""
    if "token" in request.query_params:
        raise ApiError(
            400,
            "a seat token in the URL is refused (URLs end up in logs and histories): send the header "
            "Authorization: Bearer TOKEN",
            "token",
        )


def refuse_token_in_body(body: dict[str, Any]) -> None:
    """400 for a ``token`` field in a JSON body: the token goes in the Authorization header only."""
    if "token" in body:
        raise ApiError(
            400, "the seat's token goes in the Authorization header (Bearer TOKEN), not in the body", "token"
        )


def required_token(token: str | None, doing: str) -> str:
    """``token``, or 401 saying that ``doing`` (e.g. "a move") needs the seat's token."""
    if token is None:
        raise ApiError(401, f"{doing} needs the seat's token: send the header Authorization: Bearer TOKEN", "token")
    return token


__all__ = ["bearer_token", "refuse_token_in_body", "refuse_token_in_url", "required_token"]
