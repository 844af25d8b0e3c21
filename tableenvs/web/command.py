"""``tableenvs serve``: the web server's sub-command (``add_parser`` for the CLI's sub-parsers, ``run`` to serve).

Where you are: the glue between :mod:`tableenvs.cli` and :mod:`tableenvs.web.app`. ``run`` checks every flag and the
``web`` extra before anything starts, raising ``ValueError`` with a one-line message the CLI prints (exit code 2),
then serves with uvicorn until Ctrl-C. It binds 127.0.0.1 unless ``--host`` says otherwise.
"""

from __future__ import annotations

import argparse
import importlib.util
import ipaddress
import math
import sys
from pathlib import Path

from tableenvs.policies import check_trusted
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
    ):
        if value < minimum:
            raise ValueError(f"{flag} must be at least {minimum}, got {value}")
    for flag, value in (("--idle-seconds", args.idle_seconds), ("--max-search-ms", args.max_search_ms)):
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
    return ServerConfig(
        max_games=args.max_games,
        idle_seconds=args.idle_seconds,
        max_body=args.max_body,
        agent_threads=args.agent_threads,
        max_search_sims=args.max_search_sims,
        max_search_ms=args.max_search_ms,
        models=models,
        trust_models=args.trust_models,
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

    app = create_app(config)
    if not _is_loopback(args.host):
        print(
            f"tableenvs serve: note: listening on {args.host}, reachable from other machines; the page has no "
            "login: anyone who can reach it can start games",
            file=sys.stderr,
        )
    print(f"tableenvs serve: http://{_url_host(args.host)}:{args.port}/ (Ctrl-C to stop)", flush=True)
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        log_level="warning",
        access_log=not args.quiet,
        lifespan="on",
        timeout_graceful_shutdown=1,  # a page's pending update (a held GET) does not hold the shutdown for long
    )
    return 0


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
