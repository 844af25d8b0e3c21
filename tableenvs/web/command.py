"""``tableenvs serve``: the web server's sub-command (``add_parser`` for the CLI's sub-parsers, ``run`` to serve).

Where you are: the glue between :mod:`tableenvs.cli` and :mod:`tableenvs.web.app`. ``run`` checks every flag and the
``web`` extra before anything starts, raising ``ValueError`` with a one-line message the CLI prints (exit code 2),
then serves with uvicorn until Ctrl-C. It binds 127.0.0.1 unless ``--host`` says otherwise, answers only to its
own host names (the loopback ones and ``--allowed-host``), and keeps the games in ``--data`` (default: the user's
data folder, :func:`tableenvs.web.store.default_data_folder`).
"""

from __future__ import annotations

import argparse
import importlib.util
import ipaddress
import math
import sys
from pathlib import Path

from tableenvs.policies import check_trusted
from tableenvs.web.store import default_data_folder
from tableenvs.web.tables import ServerConfig

WEB_MODULES = ("starlette", "uvicorn")


def add_parser(commands) -> argparse.ArgumentParser:
    """Add ``serve`` to ``commands`` (the ``add_subparsers()`` object of the CLI); returns its parser."""
    defaults = ServerConfig()
    serve = commands.add_parser(
        "serve", help="serve a local web page to play against agents in the browser (needs the web extra)"
    )
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, this machine only)"
    )
    serve.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000; 0 picks a free one)")
    serve.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests sent to this host name or address (repeatable); by default only 127.0.0.1, "
        "localhost and ::1, so another site's page cannot reach the server through a name of its own",
    )
    serve.add_argument(
        "--data",
        metavar="DIR",
        default=None,
        help=f"folder keeping every game, so a restart finds them again (default {default_data_folder()})",
    )
    serve.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="offer a saved model (.npz, .pt, or .zip with --trust-models) as the seat model:NAME; repeat for several",
    )
    serve.add_argument(
        "--trust-models",
        action="store_true",
        help="let --model load SB3 .zip files: their pickles can run any code, so only for files you trust "
        "(tableenvs export MODEL.zip MODEL.npz converts one without running it)",
    )
    serve.add_argument(
        "--max-games", type=int, default=defaults.max_games, help=f"live games at once (default {defaults.max_games})"
    )
    serve.add_argument(
        "--idle-seconds",
        type=float,
        default=defaults.idle_seconds,
        help=f"remove a game nobody has used for this long (default {defaults.idle_seconds:g} s)",
    )
    serve.add_argument(
        "--max-age-seconds",
        type=float,
        default=defaults.max_age_seconds,
        help=f"remove a game this old, used or not (default {defaults.max_age_seconds:g} s)",
    )
    serve.add_argument(
        "--max-moves",
        type=int,
        default=defaults.max_moves,
        help=f"moves per game; a game that reaches it stops (default {defaults.max_moves})",
    )
    serve.add_argument(
        "--max-option",
        type=int,
        default=defaults.max_option,
        help=f"largest number a game option may be given, e.g. turns or games per episode (default "
        f"{defaults.max_option})",
    )
    serve.add_argument(
        "--header-seconds",
        type=float,
        default=defaults.header_seconds,
        help=f"close a connection whose request headers (or body) take longer than this (default "
        f"{defaults.header_seconds:g} s)",
    )
    serve.add_argument(
        "--max-body", type=int, default=defaults.max_body, help=f"largest request body in bytes ({defaults.max_body})"
    )
    serve.add_argument(
        "--agent-threads",
        type=int,
        default=defaults.agent_threads,
        help=f"worker threads for the agents' thinking, shared by all games (default {defaults.agent_threads})",
    )
    serve.add_argument(
        "--max-search-sims",
        type=int,
        default=defaults.max_search_sims,
        help=f"largest search budget a seat may ask for, simulations per decision ({defaults.max_search_sims})",
    )
    serve.add_argument(
        "--max-search-ms",
        type=float,
        default=defaults.max_search_ms,
        help=f"largest search budget a seat may ask for, CPU ms per decision ({defaults.max_search_ms:g})",
    )
    serve.add_argument("--quiet", action="store_true", help="no access log")
    return serve


def config_from_args(args: argparse.Namespace) -> ServerConfig:
    """The checked :class:`ServerConfig` of the flags; ``ValueError`` naming the flag."""
    for flag, value, minimum in (
        ("--max-games", args.max_games, 1),
        ("--max-body", args.max_body, 256),
        ("--agent-threads", args.agent_threads, 1),
        ("--max-search-sims", args.max_search_sims, 1),
        ("--max-moves", args.max_moves, 1),
        ("--max-option", args.max_option, 1),
    ):
        if value < minimum:
            raise ValueError(f"{flag} must be at least {minimum}, got {value}")
    for flag, value in (
        ("--idle-seconds", args.idle_seconds),
        ("--max-search-ms", args.max_search_ms),
        ("--max-age-seconds", args.max_age_seconds),
        ("--header-seconds", args.header_seconds),
    ):
        if not (value > 0 and math.isfinite(value)):
            raise ValueError(f"{flag} must be a positive number, got {value}")
    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port must be 0..65535, got {args.port}")
    models = {}
    for text in args.model:
        name, sep, path = text.partition("=")
        if not sep or not name or not path or ":" in name or "," in name:
            raise ValueError(f"--model {text!r}: expected NAME=PATH (a name without ':' or ',', then the model file)")
        if name in models:
            raise ValueError(f"--model {name!r} given twice")
        file = Path(path).expanduser()
        if not file.is_file() or file.suffix not in (".zip", ".pt", ".npz"):
            raise ValueError(f"--model {text!r}: no saved model file (.npz, .pt or .zip) at {path!r}")
        try:
            check_trusted(file, args.trust_models)
        except ValueError as error:
            raise ValueError(f"--model {text!r}: {error}") from None
        models[name] = str(file.resolve())
    for name in args.allowed_host:
        if not name or any(c in name for c in "/ \t@"):
            raise ValueError(f"--allowed-host {name!r}: expected a host name or address (no scheme, path or port)")
    allowed = list(args.allowed_host)
    if not _is_loopback(args.host) and args.host not in ("0.0.0.0", "::", ""):
        allowed.append(args.host)  # the address it listens on is its own name
    data = default_data_folder() if args.data is None else Path(args.data).expanduser()
    return ServerConfig(
        max_games=args.max_games,
        idle_seconds=args.idle_seconds,
        max_body=args.max_body,
        agent_threads=args.agent_threads,
        max_search_sims=args.max_search_sims,
        max_search_ms=args.max_search_ms,
        models=models,
        trust_models=args.trust_models,
        max_age_seconds=args.max_age_seconds,
        max_moves=args.max_moves,
        max_option=args.max_option,
        header_seconds=args.header_seconds,
        allowed_hosts=allowed,
        data=str(data),
    )


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted; returns the exit code. Errors in the flags raise ``ValueError`` before the start."""
    missing = [module for module in WEB_MODULES if importlib.util.find_spec(module) is None]
    if missing:
        raise ValueError(
            f"tableenvs serve needs {', '.join(missing)}: install the web extra (pip install 'tableenvs[web]')"
        )
    config = config_from_args(args)
    import uvicorn

    from tableenvs.web.app import create_app
    from tableenvs.web.serving import Server, header_timeout_protocol
    from tableenvs.web.store import GameStore

    assert config.data is not None
    store = GameStore(config.data)  # ValueError (a folder in use or not writable) before anything starts
    if not _is_loopback(args.host):
        print(
            f"tableenvs serve: note: listening on {args.host}, reachable from other machines; the page has no "
            "login: anyone who can reach it can start games. It answers only requests sent to "
            f"{', '.join(sorted({'127.0.0.1', 'localhost', '::1', *config.allowed_hosts}))}: give the name others "
            "use with --allowed-host NAME",
            file=sys.stderr,
        )

    def announce(text: str) -> None:
        print(f"tableenvs serve: {text}", flush=True)

    app = create_app(config, store=store, announce=announce)
    announce(f"keeping the games in {store.folder}")
    server = Server(
        uvicorn.Config(
            app,
            host=args.host,
            port=args.port,
            log_level="warning",
            access_log=not args.quiet,
            lifespan="on",
            http=header_timeout_protocol(config.header_seconds),
            timeout_keep_alive=5,
            timeout_graceful_shutdown=5,  # the waiting pages are answered at once; this bounds a slow answer
        ),
        on_shutdown=lambda: getattr(app.state, "tables", None) and app.state.tables.wake_all(),
    )
    original_startup = server.startup

    async def startup(sockets=None) -> None:
        await original_startup(sockets=sockets)
        if server.started and not server.should_exit:
            port = server.servers[0].sockets[0].getsockname()[1] if server.servers else args.port
            announce(f"http://{_url_host(args.host)}:{port}/ (Ctrl-C to stop)")

    server.startup = startup  # type: ignore[method-assign]
    try:
        server.run()
    except KeyboardInterrupt:  # uvicorn re-raises the Ctrl-C once it has shut down: nothing more to say
        return 130
    return 130 if server.interrupted else 0  # a Ctrl-C whose re-raise did not come back as KeyboardInterrupt


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def main(argv: list[str] | None = None) -> int:
    """``python -m tableenvs.web.command [flags]``: the ``serve`` command on its own (as ``tableenvs serve``)."""
    parser = argparse.ArgumentParser(prog="python -m tableenvs.web.command")
    commands = parser.add_subparsers(dest="command")
    add_parser(commands)
    args = parser.parse_args(["serve", *(sys.argv[1:] if argv is None else argv)])
    try:
        return run(args)
    except ValueError as error:
        print(f"tableenvs serve: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
