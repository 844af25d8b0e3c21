"""Helpers of the web server's tests (issue 32): an in-process client, a served subprocess, socket checks.

``served(...)`` starts ``python -m tableenvs.web.command`` (the ``serve`` command) on a free loopback port, waits
until it answers, and checks with ``/proc/net/tcp*`` that every socket it listens on is bound to 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

from starlette.testclient import TestClient

from tableenvs.web.app import create_app
from tableenvs.web.tables import ServerConfig


@contextlib.contextmanager
def client(**limits) -> Iterator[TestClient]:
    """A TestClient of a fresh app (``limits``: :class:`ServerConfig` fields), started and stopped."""
    with TestClient(create_app(ServerConfig(**limits))) as test_client:
        yield test_client


def table_of(test_client: TestClient, game_id: str):
    """The server's live :class:`~tableenvs.web.tables.GameTable` (white-box checks against the env's hidden state)."""
    return test_client.app.state.tables.get(game_id)


def wait_for_turn(test_client: TestClient, game_id: str, token: str | None, timeout: float = 20.0) -> dict:
    """The view once it is this seat's turn or the game is over (long-polling with ``wait``)."""
    query = f"?token={token}" if token else "?"
    view = test_client.get(f"/api/games/{game_id}{query}").json()
    deadline = time.monotonic() + timeout
    while not (view["over"] or view["legal"] or view["error"]):
        assert time.monotonic() < deadline, f"no turn came within {timeout} s: {view['to_act']} to act"
        view = test_client.get(f"/api/games/{game_id}{query}&wait={view['version']}").json()
    return view


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


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


@contextlib.contextmanager
def served(*flags: str) -> Iterator[str]:
    """Run the serve command in a subprocess on a free 127.0.0.1 port; yields its base URL; stops it at the end."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tableenvs.web.command", "--port", str(port), "--quiet", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(base + "/api/status", timeout=2) as answer:
                    json.load(answer)
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the server did not start: {process.communicate()[1][-2000:]}") from None
                time.sleep(0.1)
        addresses = listening_addresses(port)
        assert addresses and all(address == LOOPBACK_HEX for address in addresses), (
            f"the server listens on {addresses}, not only on 127.0.0.1"
        )
        yield base
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def api(base: str, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    """One JSON request to a served subprocess; (status, decoded body)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        base + path, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)
