"""Helpers of the web server's tests: an in-process client, a served subprocess, socket checks.

``served(...)`` starts ``python -m tableenvs.web.command`` (the ``serve`` command) on a port the system picks on
127.0.0.1, waits for the line announcing its URL (printed once it listens), and checks with ``/proc/net/tcp*`` that
every socket it listens on is bound to 127.0.0.1.

No helper waits on a wall-clock deadline a loaded machine could miss: a long-poll returns on a change (or after the
server's ``wait_seconds``), so :func:`wait_for_turn` counts polls that brought no change; a subprocess is waited
for by reading its output line by line (its exit ends the wait); socket timeouts are generous bounds for a server
that hangs, far above anything the checked behaviour needs.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field

from starlette.testclient import TestClient

from tableenvs.web.app import create_app
from tableenvs.web.tables import ServerConfig

#: The URL TestClient requests go to: a loopback name, as the server requires.
BASE_URL = "http://127.0.0.1:8000"
#: A long-poll that brings no change this many times running means the game is stuck (each waits up to the
#: server's ``wait_seconds``, 20 s: 30 of them are ten minutes, far beyond any agent's move, however loaded).
UNCHANGED_POLLS = 30
#: Seconds a served subprocess's request may take before the test calls the server hung: generous (a request takes
#: milliseconds; a long-poll at most 20 s) so that a machine at load 20 never trips it.
REQUEST_SECONDS = 300


def auth(token: str | None) -> dict[str, str]:
    """The headers carrying a seat's token (none for a spectator)."""
    return {} if token is None else {"Authorization": f"Bearer {token}"}


@contextlib.contextmanager
def client(clock=None, store=None, **limits) -> Iterator[TestClient]:
    """A TestClient of a fresh app (``limits``: :class:`ServerConfig` fields; ``clock``: the app's clock), started
    and stopped. The games' warm-up is left out unless ``warm_up=True`` is given (each test's first moves warm up
    what they use)."""
    limits.setdefault("warm_up", False)
    extra = {} if clock is None else {"clock": clock}
    app = create_app(ServerConfig(**limits), store=store, **extra)
    with TestClient(app, base_url=BASE_URL) as test_client:
        yield test_client


def table_of(test_client: TestClient, game_id: str):
    """The server's live :class:`~tableenvs.web.tables.GameTable` (white-box checks against the env's hidden state)."""
    return test_client.app.state.tables.get(game_id)


def wait_for_turn(test_client: TestClient, game_id: str, token: str | None) -> dict:
    """The view once it is this seat's turn, or the game is over or stopped (long-polling with ``wait``); fails after
    :data:`UNCHANGED_POLLS` polls running that brought no change."""
    url = f"/api/games/{game_id}"
    view = test_client.get(url, headers=auth(token)).json()
    unchanged = 0
    while not (view["over"] or view["legal"] or view["error"]):
        answer = test_client.get(f"{url}?wait={view['version']}", headers=auth(token)).json()
        unchanged = unchanged + 1 if answer["version"] == view["version"] else 0
        assert unchanged < UNCHANGED_POLLS, f"no change in {UNCHANGED_POLLS} polls: {view['to_act']} to act"
        view = answer
    return view


def listening_addresses(port: int) -> list[str]:
    """The local addresses of the sockets listening on ``port`` (``/proc/net/tcp`` and ``tcp6``), as hex."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        with open(table) as lines:
            next(lines)
            for line in lines:
                fields = line.split()
                address, hex_port = fields[1].rsplit(":", 1)
                if int(hex_port, 16) == port and fields[3] == "0A":  # 0A: LISTEN
                    found.append(address)
    return found


LOOPBACK_HEX = "0100007F"  # 127.0.0.1 as /proc/net/tcp writes it


@dataclass
class Served:
    """A running serve subprocess: its URL, the process and the lines it printed before serving."""

    base: str
    process: subprocess.Popen
    startup: list[str] = field(default_factory=list)

    @property
    def port(self) -> int:
        return int(self.base.rsplit(":", 1)[1])

    def stop(self, sig: int = signal.SIGTERM) -> tuple[int, str]:
        """Send ``sig``, wait for the exit; returns (exit code, everything it wrote to stderr)."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        _, err = self.process.communicate()  # no timeout: a server that does not stop fails the run visibly
        return self.process.returncode, err


def start(*flags: str) -> Served:
    """Start the serve command (port 0: the system picks a free one) and return once it listens on 127.0.0.1 only.
    ``flags`` should include ``--data DIR`` (else it keeps games in the user's data folder)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tableenvs.web.command", "--port", "0", "--quiet", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines = []
    assert process.stdout is not None
    for line in process.stdout:  # ends when the process exits: a server that cannot start does not hang the test
        lines.append(line.rstrip("\n"))
        if line.startswith("tableenvs serve: http://"):
            break
    else:
        process.wait()
        raise RuntimeError(
            f"the server did not start: {lines} {process.stderr.read()[-2000:] if process.stderr else ''}"
        )
    base = lines[-1].split()[2].rstrip("/")
    served = Served(base, process, lines)
    addresses = listening_addresses(served.port)
    if not (addresses and all(address == LOOPBACK_HEX for address in addresses)):
        served.stop(signal.SIGKILL)
        raise AssertionError(f"the server listens on {addresses}, not only on 127.0.0.1")
    return served


@contextlib.contextmanager
def served(*flags: str) -> Iterator[str]:
    """Run the serve command in a subprocess on 127.0.0.1; yields its base URL; stops it at the end."""
    server = start(*flags)
    try:
        yield server.base
    finally:
        server.stop()


def api(
    base: str, method: str, path: str, body: dict | None = None, token: str | None = None, headers: dict | None = None
) -> tuple[int, dict]:
    """One JSON request to a served subprocess; (status, decoded body)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        base + path,
        data=data,
        method=method,
        headers={"Content-Type": "application/json", **auth(token), **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_SECONDS) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)
