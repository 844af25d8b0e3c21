"""Loading card decks from data files (TOML or JSON) and validating them against a JSON Schema.

Where you are: shared plumbing. Each game ships its standard deck as a data file next to its code and a
JSON Schema (a Python dict) describing it; users may pass their own deck as a path, or as already-parsed
data. Errors name the file, the failing entry and the rule it broke.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
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


#: Deepest nesting of lists and tables a deck may have (the decks need six: the deck table, the card list, a card,
#: its effect or rule list, an effect, its list of numbers).
MAX_DEPTH = 16


def check_depth(data: Any, source: str, limit: int = MAX_DEPTH) -> Any:
    """Return ``data`` if its lists and tables nest at most ``limit`` levels, else :class:`DeckError` naming where.

    Iterative (no recursion, so any depth is measured) and linear in the number of values."""
    stack: list[tuple[Any, int, list[Any]]] = [(data, 1, [])]
    while stack:
        node, depth, path = stack.pop()
        if isinstance(node, dict):
            children: Any = node.items()
        elif isinstance(node, (list, tuple)):
            children = enumerate(node)
        else:
            continue
        if depth > limit:
            raise DeckError(
                f"{source}: {_path_text(path)}: nested more than {limit} levels deep (lists and tables within one "
                "another); a deck needs at most six"
            )
        stack.extend((child, depth + 1, [*path, key]) for key, child in children if isinstance(child, (dict, list)))
    return data


def _path_text(path: list[Any]) -> str:
    text = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path[:8]) or "(top level)"
    return text + ("..." if len(path) > 8 else "")


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
    except RecursionError:
        raise DeckError(
            f"deck file {str(path)!r}: nested too deeply to read (lists or tables within one another, far more than "
            f"the {MAX_DEPTH} levels a deck may have)"
        ) from None
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


_standard_all_of = jsonschema.Draft202012Validator.VALIDATORS["allOf"]
_DISPATCH: dict[int, tuple[list[Any], tuple[str, dict[str, list[int]]] | None]] = {}


def _dispatch_table(all_of: list[Any]) -> tuple[str, dict[str, list[int]]] | None:
    """``(key, {value: [indices]})`` if every item of ``all_of`` is ``{"if": {"properties": {key: {"const": value}}},
    "then": ...}`` with one ``key`` and string values, else None (cached by the list's identity)."""
    cached = _DISPATCH.get(id(all_of))
    if cached is not None and cached[0] is all_of:
        return cached[1]
    key: str | None = None
    table: dict[str, list[int]] = {}
    result: tuple[str, dict[str, list[int]]] | None = None
    for index, item in enumerate(all_of):
        condition = item.get("if") if isinstance(item, dict) and set(item) == {"if", "then"} else None
        properties = condition.get("properties") if isinstance(condition, dict) and len(condition) == 1 else None
        if not isinstance(properties, dict) or len(properties) != 1:
            break
        ((name, rule),) = properties.items()
        if not (isinstance(rule, dict) and set(rule) == {"const"} and isinstance(rule["const"], str)):
            break
        if key is not None and name != key:
            break
        key = name
        table.setdefault(rule["const"], []).append(index)
    else:
        result = None if key is None else (key, table)
    _DISPATCH[id(all_of)] = (all_of, result)
    return result


def _all_of(validator: Any, all_of: list[Any], instance: Any, schema: dict[str, Any]) -> Iterator[Any]:
    """``allOf``, with the same errors, but an ``allOf`` of ``if``/``then`` cases on one field's ``const`` value (the
    mission effects' one case per effect type) goes straight to the ``then`` of the cases that match.

    For a table holding that field, an ``if`` holds exactly when the field equals the case's string, and a case
    whose ``if`` fails adds nothing: the standard keyword tries every ``if`` (about 20 sub-validations per effect,
    most of a deck's loading time). Anything else is left to the standard keyword."""
    table = _dispatch_table(all_of) if isinstance(instance, dict) else None
    if table is None or table[0] not in instance:
        yield from _standard_all_of(validator, all_of, instance, schema)
        return
    value = instance[table[0]]
    for index in table[1].get(value, ()) if isinstance(value, str) else ():
        for error in validator.descend(instance, all_of[index]["then"], schema_path="then"):
            error.relative_schema_path.appendleft(index)
            yield error


#: Draft 2020-12 with integers that are really integers (the standard lets ``5.0`` pass as ``integer``, and a
#: float card count would only fail later, inside the rules), and the faster ``allOf`` above.
_Validator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    validators={"allOf": _all_of},
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
        source = f"deck file {str(deck)!r}"
        return validate(check_depth(read_data_file(deck), source), schema, source)
    return validate(check_depth(deck, source), schema, source)
