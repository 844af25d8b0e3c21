"""Load test of ``tableenvs serve`` on the loopback address: many concurrent games, moves from a script.

Starts the server (``python -m tableenvs.web.command``, the ``serve`` command) in a subprocess on 127.0.0.1 (checked:
it listens nowhere else), warms it with one game of each title, times one client alone for a few seconds (the
latency of a move itself, no queueing), then runs ``--games`` concurrent clients for
``--seconds``: each starts a game with two human seats (no agent thinks), and plays it to the end, both seats, by
random legal moves (``GET`` the view of the seat to act, ``POST`` one of its legal moves), then starts another game,
cycling through the titles. It reports the latency of the moves (``POST /api/games/{id}/actions``, which applies the
move and answers with the new view, its SVG picture included) and of the views (``GET``), p50/p99, the moves per
second, the errors (any answer but 2xx, any failed request), and the server's resident memory (``VmRSS``) after the
warm-up, at the end of the load and after every game has expired (the server runs with ``--idle-seconds``).

The clients and the server share this machine's cores, so the latencies include queueing behind the other clients'
requests (50 clients with one request each in flight) and the clients' own CPU time.

``--budget SECONDS`` bounds the whole run (warm-up, load, expiry wait); ``--write FILE`` appends the result to FILE
as the section "## Web server load" (replacing that section if it is already the file's last).

    python benchmarks/web_load.py --games 50 --seconds 60 --write docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

try:
    import httpx2 as httpx
except ModuleNotFoundError:  # pragma: no cover - the older name of the same client
    import httpx

HEADING = "## Web server load"
#: Game options per title: Rummikub cut at 40 turns so one game is not most of the run.
TITLES = [("pilipili_v0", {}), ("llama_party_v0", {}), ("rummikub_v0", {"max_turns": 40})]


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def listening_addresses(port: int) -> list[str]:
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if os.path.exists(table):
            with open(table) as lines:
                next(lines)
                for line in lines:
                    fields = line.split()
                    address, hex_port = fields[1].rsplit(":", 1)
                    if int(hex_port, 16) == port and fields[3] == "0A":
                        found.append(address)
    return found


class Stats:
    def __init__(self) -> None:
        self.moves: list[float] = []
        self.views: list[float] = []
        self.errors: list[str] = []
        self.games_started = 0
        self.games_finished = 0


async def request(client, stats: Stats, method: str, url: str, body=None, timings=None, token=None):
    start = time.perf_counter()
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}  # the seat token: never in the URL
    try:
        answer = await client.request(method, url, json=body, headers=headers)
    except httpx.HTTPError as error:
        stats.errors.append(f"{method} {url}: {type(error).__name__}: {error}")
        return None
    if timings is not None:
        timings.append(time.perf_counter() - start)
    if not 200 <= answer.status_code < 300:
        stats.errors.append(f"{method} {url}: {answer.status_code} {answer.text[:200]}")
        return None
    return answer.json()


async def play_games(client, stats: Stats, worker: int, deadline: float, seed: int, once: bool) -> None:
    """Play games until ``deadline`` (or one game, ``once``); titles in turn from this worker's own."""
    rng = np.random.default_rng([seed, worker])
    index = worker
    while time.monotonic() < deadline and not (once and index > worker):
        game, options = TITLES[index % len(TITLES)]
        index += 1
        body = {"game": game, "options": options, "seats": ["human", "human"], "seed": int(rng.integers(2**31))}
        created = await request(client, stats, "POST", "/api/games", body)
        if created is None:
            return
        stats.games_started += 1
        game_id, tokens = created["id"], created["tokens"]
        to_act = "player_0"
        view = await request(client, stats, "GET", f"/api/games/{game_id}", None, stats.views, tokens[to_act])
        while view is not None and time.monotonic() < deadline:
            if view["over"]:
                stats.games_finished += 1
                break
            if view["to_act"] != view["you"]:
                to_act = view["to_act"]
                url = f"/api/games/{game_id}"
                view = await request(client, stats, "GET", url, None, stats.views, tokens[to_act])
                continue
            move = view["legal"][int(rng.integers(len(view["legal"])))]
            url = f"/api/games/{game_id}/actions"
            body = {"action": move["action"]}
            view = await request(client, stats, "POST", url, body, stats.moves, tokens[to_act])


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) * 1000 if values else float("nan")


async def load(base: str, games: int, seconds: float, seed: int, once: bool = False) -> tuple[Stats, float]:
    stats = Stats()
    limits = httpx.Limits(max_connections=games + 5, max_keepalive_connections=games + 5)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=60) as client:
        start = time.monotonic()
        deadline = start + seconds
        await asyncio.gather(*(play_games(client, stats, worker, deadline, seed, once) for worker in range(games)))
        return stats, time.monotonic() - start


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=50, help="concurrent games (clients), default 50")
    parser.add_argument("--seconds", type=float, default=60.0, help="seconds of load, default 60")
    parser.add_argument("--idle-seconds", type=float, default=10.0, help="the server's idle expiry, default 10")
    parser.add_argument("--budget", type=float, default=None, help="hard limit on the whole run, seconds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--write", metavar="FILE", help="append the result to FILE (docs/benchmarks.md)")
    args = parser.parse_args(argv)
    budget = args.budget if args.budget is not None else args.seconds + args.idle_seconds * 3 + 120
    if args.seconds + args.idle_seconds > budget:
        parser.error(f"--seconds + --idle-seconds ({args.seconds + args.idle_seconds:g}) exceed --budget {budget:g}")
    started = time.monotonic()
    when = datetime.datetime.now(datetime.timezone.utc)
    port = free_port()
    data = tempfile.mkdtemp(prefix="web-load-")  # the server's data folder (its games), removed at the end
    server = subprocess.Popen(
        [
            sys.executable, "-m", "tableenvs.web.command", "--port", str(port), "--quiet",
            "--idle-seconds", str(args.idle_seconds), "--max-games", str(args.games * 4 + 20), "--data", data,
        ],
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        while True:
            try:
                httpx.get(base + "/api/status", timeout=2)
                break
            except httpx.HTTPError:
                if server.poll() is not None or time.monotonic() - started > 60:
                    raise SystemExit("the server did not start") from None
                time.sleep(0.2)
        addresses = listening_addresses(port)
        assert addresses and all(a == "0100007F" for a in addresses), f"listening on {addresses}, not only 127.0.0.1"
        rss_started = rss_kib(server.pid)
        warm = asyncio.run(load(base, len(TITLES), 60.0, args.seed + 1, once=True))[0]  # one game of each title
        time.sleep(args.idle_seconds * 1.5 + 1)
        rss_before = rss_kib(server.pid)
        alone = asyncio.run(load(base, 1, min(10.0, args.seconds / 6), args.seed + 3))[0]  # one client: no queueing
        remaining = budget - (time.monotonic() - started) - args.idle_seconds * 2 - 10
        seconds = min(args.seconds, max(1.0, remaining))
        stats, elapsed = asyncio.run(load(base, args.games, seconds, args.seed + 2))
        rss_loaded = rss_kib(server.pid)
        live_loaded = httpx.get(base + "/api/status").json()["live_games"]
        deadline = time.monotonic() + max(5.0, min(args.idle_seconds * 3, budget - (time.monotonic() - started)))
        while httpx.get(base + "/api/status").json()["live_games"] and time.monotonic() < deadline:
            time.sleep(0.5)
        live_after = httpx.get(base + "/api/status").json()["live_games"]
        rss_after = rss_kib(server.pid)
    finally:
        server.terminate()
        server.wait(20)
        shutil.rmtree(data, ignore_errors=True)
    moves = len(stats.moves)
    result = {
        "date": when.strftime("%Y-%m-%d %H:%M UTC"),
        "games": args.games,
        "seconds": round(elapsed, 1),
        "moves": moves,
        "moves_per_second": round(moves / elapsed, 1),
        "move_p50_ms": round(percentile(stats.moves, 50), 1),
        "move_p99_ms": round(percentile(stats.moves, 99), 1),
        "view_p50_ms": round(percentile(stats.views, 50), 1),
        "view_p99_ms": round(percentile(stats.views, 99), 1),
        "views": len(stats.views),
        "alone_moves": len(alone.moves),
        "alone_move_p50_ms": round(percentile(alone.moves, 50), 1),
        "alone_move_p99_ms": round(percentile(alone.moves, 99), 1),
        "alone_view_p50_ms": round(percentile(alone.views, 50), 1),
        "alone_view_p99_ms": round(percentile(alone.views, 99), 1),
        "games_started": stats.games_started,
        "games_finished": stats.games_finished,
        "errors": len(stats.errors) + len(warm.errors) + len(alone.errors),
        "live_games_at_end_of_load": live_loaded,
        "live_games_after_expiry": live_after,
        "rss_mib_started": round(rss_started / 1024, 1),
        "rss_mib_before": round(rss_before / 1024, 1),
        "rss_mib_loaded": round(rss_loaded / 1024, 1),
        "rss_mib_after_expiry": round(rss_after / 1024, 1),
        "idle_seconds": args.idle_seconds,
        "load_average": os.getloadavg()[0],
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }
    print(json.dumps(result, indent=1))
    for error in (stats.errors + warm.errors + alone.errors)[:10]:
        print("error:", error, file=sys.stderr)
    if args.write:
        write_section(Path(args.write), result, argv if argv is not None else sys.argv[1:])
        print(f"wrote the section {HEADING!r} at the end of {args.write}")
    return 1 if stats.errors or warm.errors or alone.errors else 0


def write_section(path: Path, r: dict, argv: list[str]) -> None:
    """Append (or replace, if it is the file's last section) the result section of ``path``."""
    command = " ".join(["python benchmarks/web_load.py", *argv])
    section = f"""{HEADING}

Written by `benchmarks/web_load.py` on {r["date"]}: `{command}`. The server (`tableenvs serve`, uvicorn, one
process) and the load script ran on this machine ({r["cpus"]} cores shared with other jobs; load average
{r["load_average"]:.1f} at the end) over 127.0.0.1. {r["games"]} concurrent clients for {r["seconds"]} s, each
playing whole games with two human seats (both played by the script: random legal moves, no agent thinking), the
titles in turn (Rummikub cut at 40 turns): per move a `GET` of the view of the seat to act and a `POST` of one of its
legal moves; the answer to each is that seat's whole view (its SVG picture included).

| measure | value |
|---|---:|
| moves (POST /actions) | {r["moves"]:,} ({r["moves_per_second"]} per second) |
| move latency p50 / p99, {r["games"]} clients | {r["move_p50_ms"]} ms / {r["move_p99_ms"]} ms |
| view latency (GET) p50 / p99, {r["games"]} clients | {r["view_p50_ms"]} ms / {r["view_p99_ms"]} ms \
({r["views"]:,} views) |
| one client alone (before the load): move p50 / p99, view p50 / p99 | {r["alone_move_p50_ms"]} / \
{r["alone_move_p99_ms"]} ms, {r["alone_view_p50_ms"]} / {r["alone_view_p99_ms"]} ms ({r["alone_moves"]:,} moves) |
| games started / finished | {r["games_started"]} / {r["games_finished"]} |
| errors (non-2xx answers, failed requests) | {r["errors"]} |
| live games at the end of the load / after expiry | {r["live_games_at_end_of_load"]} / {r["live_games_after_expiry"]} |
| server RSS: started / after warm-up / end of load / after expiry | {r["rss_mib_started"]} / {r["rss_mib_before"]} / \
{r["rss_mib_loaded"]} / {r["rss_mib_after_expiry"]} MiB |

The latencies are wall-clock times seen by the clients, so under load they are mostly the queueing behind the other
clients' requests on the server's single event loop (each client has one request in flight, so the latency is about
the clients in flight divided by the requests served per second) and include the CPU the clients themselves take on
the shared cores; the server does the moves' work (the rules, the legal-move list, the picture) one request at a
time. The one-client row is the time of a move or a view itself, on the same shared machine. "After warm-up" is after
one game of each title and its expiry (the Rummikub solver's compiled kernel and the game modules loaded); "after
expiry" once every game of the load has expired (`--idle-seconds {r["idle_seconds"]:g}`; after removing expired games
the server collects the garbage and calls `malloc_trim`, handing the freed heap back to the system).
"""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    at = text.find(HEADING)
    if at >= 0 and "\n## " not in text[at + len(HEADING) :]:
        text = text[:at].rstrip("\n") + "\n\n"
    elif text:
        text = text.rstrip("\n") + "\n\n"
    path.write_text(text + section, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
