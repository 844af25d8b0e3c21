"""uvicorn, as ``tableenvs serve`` runs it: a timeout on slow request headers and a shutdown that answers everyone.

Where you are: part of :mod:`tableenvs.web`, used by :mod:`tableenvs.web.command` only (it imports uvicorn).

* :class:`HeaderTimeoutProtocol` is uvicorn's h11 protocol with one more timer: a connection whose request headers
  have not all arrived ``header_seconds`` after it opened (or after its previous answer) is closed. uvicorn alone
  keeps a connection that sends half a request line forever; its keep-alive timer is reset by every byte.
* :class:`Server` wakes every request held waiting for a change (``GET ...?wait=V``) when the shutdown starts, so
  each gets its answer (200, the current view) instead of being cut off, and then shuts down as uvicorn does. It
  also remembers whether a Ctrl-C (SIGINT) started the shutdown (``interrupted``), so that the command's exit status
  (130) does not hang on uvicorn's re-raising of the signal after the shutdown, which does not always reach the caller
  as a ``KeyboardInterrupt``.
"""

from __future__ import annotations

import asyncio
import signal
from types import FrameType
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol


def header_timeout_protocol(seconds: float) -> type[H11Protocol]:
    """:class:`HeaderTimeoutProtocol` with ``seconds`` as its timeout."""
    return type("HeaderTimeoutProtocol", (HeaderTimeoutProtocol,), {"header_seconds": seconds})


class HeaderTimeoutProtocol(H11Protocol):
    """h11 with a deadline for each request's headers (see the module docstring)."""

    header_seconds: float = 10.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._header_timer: asyncio.TimerHandle | None = self.loop.call_later(self.header_seconds, self._too_slow)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._restart_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        super().connection_lost(exc)

    def _restart_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
        self._header_timer = None
        if not self.transport.is_closing():
            self._header_timer = self.loop.call_later(self.header_seconds, self._too_slow)

    def _too_slow(self) -> None:
        """Close the connection if it is still waiting for a request's headers (h11 has not parsed a request)."""
        self._header_timer = None
        if self.transport.is_closing():
            return
        if self.conn.their_state is h11.IDLE and (self.cycle is None or self.cycle.response_complete):
            self.transport.close()


class Server(uvicorn.Server):
    """uvicorn's server; ``on_shutdown`` runs first when the shutdown starts (the app answers its waiting
    requests)."""

    def __init__(self, config: uvicorn.Config, on_shutdown: Any = None):
        super().__init__(config)
        self.on_shutdown = on_shutdown
        self.interrupted = False  # a SIGINT asked for the shutdown

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if sig == signal.SIGINT:
            self.interrupted = True
        super().handle_exit(sig, frame)

    async def shutdown(self, sockets: Any = None) -> None:
        if self.on_shutdown is not None:
            self.on_shutdown()
        await super().shutdown(sockets=sockets)


__all__ = ["HeaderTimeoutProtocol", "Server", "header_timeout_protocol"]
