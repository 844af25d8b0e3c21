"""Each game's rules for the page: ``GET /rules/{game}`` serves the game's rules page (``docs/<package>.md``) as text.

Where you are: part of :mod:`tableenvs.web`. A game's rules page is found by its package's name (the spec's module
``tableenvs.pilipili.env`` -> ``docs/pilipili.md`` beside the package), so nothing here names a game; a game from
outside, or an install without the docs (a wheel), has no link (``rules_link`` is None) and the route answers 404.
"""

from __future__ import annotations

import functools
from pathlib import Path

from tableenvs.core.registry import names
from tableenvs.core.registry import spec as game_spec

#: The docs folder of a source checkout (an editable install): beside the ``tableenvs`` package.
DOCS = Path(__file__).resolve().parents[2] / "docs"


@functools.cache
def rules_path(game: str) -> Path | None:
    """The rules page of ``game`` (a registered name), or None if there is none here."""
    if game not in names():
        return None
    parts = game_spec(game).module.split(".")
    if len(parts) < 2:
        return None
    path = DOCS / f"{parts[-2]}.md"
    return path if path.is_file() else None


def rules_link(game: str) -> str | None:
    """The page's link to ``game``'s rules, or None."""
    return f"/rules/{game}" if rules_path(game) is not None else None


def rules_text(game: str) -> str | None:
    path = rules_path(game)
    return None if path is None else path.read_text(encoding="utf-8")
