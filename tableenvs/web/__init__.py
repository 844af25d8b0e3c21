"""Play in the browser against any agent: ``tableenvs serve`` (the API is documented in ``docs/web.md``).

Where you are: an optional front end (the ``web`` extra: Starlette and uvicorn) on top of the raw envs and
:mod:`tableenvs.policies`. Modules:

* :mod:`tableenvs.web.seats` — what may sit in a seat (``human``, ``random``, ``heuristic``, ``trained`` where a model
  is shipped, a bounded ``search``, a model the server was started with) and the agents' thinking, done on copies so
  it never touches a live game;
* :mod:`tableenvs.web.tables` — one live game: tokens, per-seat views built only from what a seat may see, the
  move log, the move cap; the server's limits;
* :mod:`tableenvs.web.manager` — the live games by id: a new game from a request, the limit, expiry by idleness and
  by age, the games kept and restored;
* :mod:`tableenvs.web.options` — a request's game options as data only: no option names a file, numbers capped;
* :mod:`tableenvs.web.store` — the games kept in the data folder (SQLite), rebuilt at the next start;
* :mod:`tableenvs.web.origin` — the checks before any route: the server's own host names and origin, JSON changes;
* :mod:`tableenvs.web.app` — the Starlette app: the JSON API (seat tokens in ``Authorization: Bearer``), the
  request-size limit, the single offline page (``static/index.html``, package data), the warm-up before serving and
  the agents' runner off the request path;
* :mod:`tableenvs.web.serving` — uvicorn as the command runs it: a timeout on slow headers, a shutdown that answers
  the waiting requests;
* :mod:`tableenvs.web.command` — the ``serve`` sub-command (``add_parser`` / ``run``).
"""

from __future__ import annotations

__all__ = ["create_app", "ServerConfig"]


def __getattr__(name: str):
    if name in ("create_app", "ServerConfig"):  # imported on use: importing tableenvs.web needs no Starlette
        from tableenvs.web import app

        return getattr(app, name)
    raise AttributeError(f"module 'tableenvs.web' has no attribute {name!r}")
