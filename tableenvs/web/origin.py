"""Only the server's own origin: the checks every request passes before any route sees it.

Where you are: part of :mod:`tableenvs.web`; :class:`OriginGuard` wraps the Starlette app (a plain ASGI middleware,
so a refused request is answered before its body is read and before any work). A request is refused when

* its ``Host`` is not one of the server's names: the loopback names (``127.0.0.1``, ``localhost``, ``::1``) and
  the names the operator gave (``tableenvs serve --allowed-host NAME``). A web page elsewhere that points its own
  host name at this machine (DNS rebinding) sends its own name, and is refused (403);
* it carries an ``Origin`` that is not this server's own (scheme, host and port of the ``Host`` it was sent to), or
  ``Sec-Fetch-Site: cross-site`` (except following a link to the page): a page elsewhere may neither change nor
  read anything here (403);
* it changes something (any method but ``GET``, ``HEAD``, ``OPTIONS``) without ``Content-Type: application/json``
  (415): a page elsewhere can send a plain-text or form POST without asking, but not a JSON one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def host_name(host: str) -> str:
    """The lower-case name of a ``Host`` header without its port (``[::1]:8000`` -> ``::1``)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def host_port(host: str, scheme: str) -> tuple[str, int | None]:
    """(name, port) of a ``Host`` header; the scheme's port when it names none; port None if it is not a number."""
    name = host_name(host)
    rest = host.strip().rsplit("]", 1)[-1] if host.strip().startswith("[") else host.strip()
    port_text = rest.rsplit(":", 1)[1] if rest.count(":") == 1 else ""
    if not port_text:
        return name, 443 if scheme == "https" else 80
    return name, int(port_text) if port_text.isdigit() else None


class OriginGuard:
    """ASGI middleware refusing foreign hosts, foreign origins and non-JSON changes (see the module docstring)."""

    def __init__(self, app: Any, allowed_hosts: Iterable[str] = ()):
        self.app = app
        self.names = frozenset([*LOOPBACK_NAMES, *(host_name(name) for name in allowed_hosts)])

    @property
    def state(self) -> Any:
        """The wrapped app's state (``tables``, ``runner``)."""
        return self.app.state

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(scope)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, message = refusal
        body = json.dumps({"error": message, "field": None}).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"cache-control", b"no-store"),
            (b"connection", b"close"),
        ]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def refusal(self, scope: dict[str, Any]) -> tuple[int, str] | None:
        """(status, message) if the request is refused, else None."""
        headers: dict[str, str] = {}
        for key, value in scope["headers"]:
            headers.setdefault(key.decode("latin-1").lower(), value.decode("latin-1"))
        host = headers.get("host", "")
        shown = sorted(self.names)
        if host_name(host) not in self.names:
            return 403, (
                f"this server answers only to its own host names ({', '.join(shown)}), not to Host {host[:80]!r} "
                "(tableenvs serve --allowed-host NAME adds one)"
            )
        scheme = scope.get("scheme", "http")
        origin = headers.get("origin")
        if origin is not None:
            parts = urlsplit(origin.strip())
            try:
                port = parts.port or (443 if parts.scheme == "https" else 80)
            except ValueError:
                port = None
            own = host_port(host, scheme)
            if parts.scheme != scheme or (parts.hostname or "", port) != own:
                return 403, (
                    f"a request from another origin ({origin[:80]!r}) is refused: this server serves only its own page"
                )
        if headers.get("sec-fetch-site") == "cross-site" and headers.get("sec-fetch-mode") != "navigate":
            return 403, "a request from another site is refused: this server serves only its own page"
        if scope["method"] not in SAFE_METHODS:
            media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if media != "application/json":
                return 415, (
                    "a request that changes something must send Content-Type: application/json, "
                    f"not {media or 'none'!r}"
                )
        return None


__all__ = ["LOOPBACK_NAMES", "OriginGuard", "host_name"]
