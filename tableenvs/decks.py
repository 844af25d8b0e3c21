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
import numpy as np

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
    except UnicodeDecodeError as error:
        raise DeckError(
            f"deck file {str(path)!r} is not a UTF-8 text file (byte {error.start} cannot be decoded); "
            f"a deck is a .toml or .json text file"
        ) from None
    raise DeckError(f"deck file {str(path)!r} must end in .toml or .json")


def read_package_data(package: str, filename: str) -> Any:
    """Parse a data file shipped inside a tableenvs package (e.g. the standard deck)."""
    with resources.as_file(resources.files(package) / filename) as path:
        return read_data_file(path)


def _is_strict_integer(checker: Any, instance: Any) -> bool:
    """JSON Schema's ``integer``, minus what Python would not count as one: ``5.0`` and ``True`` are refused."""
    return isinstance(instance, (int, np.integer)) and not isinstance(instance, bool)


#: Draft 2020-12 with integers that are really integers (the standard lets ``5.0`` pass as ``integer``, and a
#: float card count would only fail later, inside the rules).
_Validator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_strict_integer),
)


def _where(data: Any, path: list[Any]) -> str:
    """``path`` as ``.mission[3].hand_size``, led by ``card 7 at`` when the entry is a table with an ``id``."""
    text = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path) or "(top level)"
    node = data
    for part in path:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            break
        if isinstance(part, int) and isinstance(node, dict) and "id" in node:
            return f"card {node['id']!r} at {text}"
    return text


def validate(data: Any, schema: dict[str, Any], source: str) -> Any:
    """Return ``data`` if it follows ``schema``; otherwise raise :class:`DeckError` naming the first problem.

    The message names the entry (with its ``id`` when it has one), the field and the value. ``integer`` means a
    real integer here: ``5.0`` and booleans are refused.
    """
    validator = _Validator(schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        raise DeckError(f"{source}: {_where(data, list(first.absolute_path))}: {first.message}{more}")
    return data


def load_deck(deck: str | Path | Any, schema: dict[str, Any], *, source: str = "deck") -> Any:
    """A validated deck from a file path, or from parsed data (a list or dict) as-is."""
    if isinstance(deck, (str, Path)):
        return validate(read_data_file(deck), schema, f"deck file {str(deck)!r}")
    return validate(deck, schema, source)
