"""Loading card decks from data files (TOML or JSON) and validating them against a JSON Schema.

Where you are: shared plumbing. Each game ships its standard deck as a data file next to its code and a
JSON Schema (a Python dict) describing it; users may pass their own deck as a path, or as already-parsed
data. Errors name the file, the failing entry and the rule it broke.
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib


class DeckError(ValueError):
    """A deck file or deck data does not follow its schema."""


def read_data_file(path: str | Path) -> Any:
    """Parse a ``.toml`` or ``.json`` file."""
    path = Path(path)
    if not path.is_file():
        raise DeckError(f"deck file {str(path)!r} does not exist")
    suffix = path.suffix.lower()
    try:
        if suffix == ".toml":
            return tomllib.loads(path.read_text(encoding="utf-8"))
        if suffix == ".json":
            return json.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as error:
        raise DeckError(f"deck file {str(path)!r} is not valid {suffix[1:].upper()}: {error}") from None
    raise DeckError(f"deck file {str(path)!r} must end in .toml or .json")


def read_package_data(package: str, filename: str) -> Any:
    """Parse a data file shipped inside a tableenvs package (e.g. the standard deck)."""
    with resources.as_file(resources.files(package) / filename) as path:
        return read_data_file(path)


def validate(data: Any, schema: dict[str, Any], source: str) -> Any:
    """Return ``data`` if it follows ``schema``; otherwise raise :class:`DeckError` naming the first problem."""
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        where = (
            "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.absolute_path) or "(top level)"
        )
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        raise DeckError(f"{source}: {where}: {first.message}{more}")
    return data


def load_deck(deck: str | Path | Any, schema: dict[str, Any], *, source: str = "deck") -> Any:
    """A validated deck from a file path, or from parsed data (a list or dict) as-is."""
    if isinstance(deck, (str, Path)):
        return validate(read_data_file(deck), schema, f"deck file {str(deck)!r}")
    return validate(deck, schema, source)
