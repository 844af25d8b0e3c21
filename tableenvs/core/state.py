"""Helpers of the state API (``TableEnv.clone``, ``get_state``, ``set_state``): RNG copies and record checks.

Where you are: shared plumbing for :mod:`tableenvs.core.table_env` and the rules engines. A state record is a plain,
JSON-serialisable dict (see :meth:`tableenvs.core.table_env.TableEnv.get_state`); the engines write their part with
plain lists and numbers and read it back with the checks below, which raise :class:`StateError` (a ``ValueError``)
naming the field and what was expected. Nothing here touches an env: the records are checked and the new
objects built first, then swapped in.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.random.bit_generator import ISeedSequence

#: Marks a state record (``record["format"]``) and its layout version (``record["version"]``).
STATE_FORMAT = "tableenvs-state"
STATE_VERSION = 1

#: Bounds of a record, checked (:func:`check_bounds`) before anything else reads it: the items of all its lists and
#: dicts together, and how deep they nest. A real record is far below both (a Pili Pili game of 100 rounds holds
#: about 40,000 items; the deepest path is 8 levels), so anything beyond is refused in well under a millisecond.
MAX_ITEMS = 1_000_000
MAX_DEPTH = 32
#: Integers of a record beyond this magnitude are refused even where a field has no tighter bound (2**53: every
#: count stays exact as a float and fits the engines' int64 arrays and the float32 observations).
MAX_INT = 2**53


class StateError(ValueError):
    """A state record that cannot be restored: wrong game, version or options, a missing or malformed field."""


class _ConstantSeed(ISeedSequence):
    """A seed sequence that costs nothing: the state it seeds is overwritten at once (see :func:`copy_generator`)."""

    def generate_state(self, n_words: int, dtype: Any = np.uint32) -> np.ndarray:
        return np.ones(n_words, dtype)


# Any: numpy's stubs type a BitGenerator's seed as a SeedSequence, where numpy takes any ISeedSequence.
_CONSTANT_SEED: Any = _ConstantSeed()


def copy_generator(rng: np.random.Generator) -> np.random.Generator:
    """An independent ``Generator`` in the same state as ``rng`` (same future draws); ~5 us, 6x cheaper than
    ``copy.deepcopy`` (no seeding: the new bit generator's state is set directly)."""
    bit_generator = type(rng.bit_generator)(_CONSTANT_SEED)
    bit_generator.state = rng.bit_generator.state
    return np.random.Generator(bit_generator)


def generator_from_state(state: Any) -> np.random.Generator:
    """A ``Generator`` from a bit generator's ``state`` dict (as ``rng.bit_generator.state`` gives it)."""
    if not isinstance(state, Mapping) or not isinstance(state.get("bit_generator"), str):
        raise StateError(f"rng must be a bit generator state dict with a 'bit_generator' name, got {state!r}")
    kind = getattr(np.random, state["bit_generator"], None)
    if not (isinstance(kind, type) and issubclass(kind, np.random.BitGenerator)):
        raise StateError(f"rng: unknown bit generator {state['bit_generator']!r}")
    bit_generator = kind(_CONSTANT_SEED)
    try:
        bit_generator.state = dict(state)
    except (TypeError, ValueError, KeyError, OverflowError) as error:
        raise StateError(f"rng: not a valid {state['bit_generator']} state: {error}") from None
    return np.random.Generator(bit_generator)


def plain(value: Any) -> Any:
    """``value`` as it reads back from JSON (tuples become lists, numpy scalars numbers): for comparing records."""
    return json.loads(json.dumps(value))


# ---------------------------------------------------------------------------------------------- field checks


def field(record: Any, key: str, where: str) -> Any:
    """``record[key]``; :class:`StateError` naming ``where.key`` if ``record`` is no dict or lacks it."""
    if not isinstance(record, Mapping):
        raise StateError(f"{where} must be a dict, got {type(record).__name__}")
    if key not in record:
        raise StateError(f"{where} has no {key!r}")
    return record[key]


def as_int(value: Any, where: str, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an ``int`` if it is an integer (numpy's too, ``bool`` refused) in ``low..high``; ``None`` bounds
    mean ``-MAX_INT`` / ``MAX_INT``."""
    if type(value) is not int:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise StateError(f"{where} must be an integer, got {_shown(value)}")
        value = int(value)
    if value < (-MAX_INT if low is None else low) or value > (MAX_INT if high is None else high):
        shown = f"{'' if low is None else low}..{'' if high is None else high}"
        raise StateError(f"{where} must be in {shown}, got {value}")
    return value


def as_bool(value: Any, where: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise StateError(f"{where} must be true or false, got {_shown(value)}")
    return bool(value)


def as_float(value: Any, where: str) -> float:
    """``value`` as a finite ``float`` (NaN and infinities refused: they are not JSON)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise StateError(f"{where} must be a number, got {_shown(value)}")
    value = float(value)
    if not math.isfinite(value):
        raise StateError(f"{where} must be a finite number, got {value}")
    return value


def as_list(value: Any, where: str, length: int | None = None, most: int | None = None) -> list[Any]:
    """``value`` (a list or tuple) as a list; ``length`` fixes its size, ``most`` bounds it (checked first)."""
    if not isinstance(value, (list, tuple)):
        raise StateError(f"{where} must be a list, got {type(value).__name__}")
    if length is not None and len(value) != length:
        raise StateError(f"{where} must have {length} items, got {len(value)}")
    if most is not None and len(value) > most:
        raise StateError(f"{where} must have at most {most} items, got {len(value)}")
    return list(value)


def int_list(
    value: Any,
    where: str,
    low: int | None = None,
    high: int | None = None,
    length: int | None = None,
    most: int | None = None,
) -> list[int]:
    items = as_list(value, where, length, most)
    # fast path (most records): plain ints within the bounds, checked by C loops
    if all(type(x) is int for x in items) and (
        not items
        or (min(items) >= (-MAX_INT if low is None else low) and max(items) <= (MAX_INT if high is None else high))
    ):
        return items
    return [as_int(x, f"{where}[{i}]", low, high) for i, x in enumerate(items)]


def int_lists(
    value: Any,
    where: str,
    low: int | None = None,
    high: int | None = None,
    length: int | None = None,
    most: int | None = None,
    inner_most: int | None = None,
) -> list[list[int]]:
    """A list of integer lists (``length``/``most``: how many lists; ``inner_most``: the items of each)."""
    return [
        int_list(x, f"{where}[{i}]", low, high, most=inner_most)
        for i, x in enumerate(as_list(value, where, length, most))
    ]


def bool_list(value: Any, where: str, length: int | None = None, most: int | None = None) -> list[bool]:
    return [as_bool(x, f"{where}[{i}]") for i, x in enumerate(as_list(value, where, length, most))]


def distinct(values: list[Any], where: str) -> None:
    """:class:`StateError` if ``values`` (hashable) repeats an item."""
    if len(set(values)) != len(values):
        repeated = sorted({x for x in values if values.count(x) > 1})
        raise StateError(f"{where} repeats {', '.join(map(str, repeated[:10]))}")


def require(condition: Any, where: str, message: str) -> None:
    """:class:`StateError` "``where``: ``message``" unless ``condition``."""
    if not condition:
        raise StateError(f"{where}: {message}")


def _shown(value: Any) -> str:
    """A short ``repr`` for an error message (a record's value may be huge)."""
    text = repr(value) if not isinstance(value, (list, tuple, Mapping)) or len(value) < 20 else type(value).__name__
    return text if len(text) <= 80 else text[:77] + "..."


# ---------------------------------------------------------------------------------------------- whole records

_CONTAINERS = (list, tuple, Mapping)
_PLAIN_LEAVES = frozenset((str, int, bool, type(None)))


def check_bounds(record: Any, where: str = "the record", items: int = MAX_ITEMS, depth: int = MAX_DEPTH) -> None:
    """:class:`StateError` unless ``record``'s lists and dicts hold at most ``items`` items in all and nest at most
    ``depth`` deep, every float is finite and every dict key a string (what JSON can hold). No recursion, and the
    size of a container is checked before its items are looked at, so a huge or deep record is refused at once.
    """
    total = 0
    level: list[Any] = [record] if isinstance(record, _CONTAINERS) else []
    for _ in range(depth + 1):
        if not level:
            return
        below: list[Any] = []
        for value in level:
            total += len(value)
            if total > items:
                raise StateError(f"{where} holds more than {items} items in its lists and dicts")
            if isinstance(value, Mapping):
                keys = set(map(type, value))
                if keys and keys != {str}:
                    raise StateError(f"{where}: dict keys must be strings")
                value = value.values()
            kinds = set(map(type, value))
            if kinds <= _PLAIN_LEAVES:
                continue
            for kind in kinds - _PLAIN_LEAVES:
                if issubclass(kind, (float, np.floating)):
                    if not all(math.isfinite(x) for x in value if type(x) is kind):
                        raise StateError(f"{where}: numbers must be finite (NaN and infinities are not JSON)")
                elif issubclass(kind, _CONTAINERS):
                    below.extend(x for x in value if type(x) is kind)
        level = below
    raise StateError(f"{where} nests lists and dicts more than {depth} deep")


def check_restored(env: Any) -> None:
    """:class:`StateError` unless the PettingZoo bookkeeping of ``env`` (a :class:`~tableenvs.core.table_env.TableEnv`
    whose restored attributes were just swapped in) agrees with its rules engine: a running game (``ended`` None) is
    running by the rules and its agent to act has a legal move; a finished one ended the way ``ended`` says, and
    every agent still in ``agents`` is dead that way, with ``agent_selection`` one of them."""
    ended = env._ended
    over, truncated = bool(env._is_over()), bool(env._is_truncated())
    if ended is None:
        if over or truncated:
            raise StateError(f"ended is None but the rules state is {'over' if over else 'truncated'}")
        if env._skip_agent_selection is not None:
            raise StateError("skip_agent_selection must be None while the game runs (it is set by the dead steps)")
        if not env._current_mask().any():
            raise StateError(f"rules: {env.agent_selection}, the agent to act, has no legal move")
        return
    if (ended == "terminated") != over or (ended == "truncated") != (truncated and not over):
        state = "over" if over else "truncated" if truncated else "running"
        raise StateError(f"ended is {ended!r} but the rules state is {state}")
    dead = ended == "terminated"
    if any(env.terminations[a] != dead or env.truncations[a] == dead for a in env.agents):
        raise StateError(f"the game has ended ({ended}): every agent left must be {ended}, and only that")
    if env.agents and env.agent_selection not in env.agents:
        raise StateError(f"agent_selection must be one of the agents left, {env.agents}, got {env.agent_selection!r}")
