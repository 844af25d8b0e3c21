"""Option checking shared by every game: each bad value gets an error naming it and what is allowed.

Use these in constructors and ``reset(options=...)`` so a user's typo fails at once with a specific
message, never deep inside a game.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np


def check_int(name: str, value: Any, low: int, high: int | None = None) -> int:
    """Return ``value`` as an ``int`` if it is an integer in ``[low, high]``; else raise ``ValueError``.

    ``bool`` is refused (``True`` is not a player count). ``high=None`` means no upper bound.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    value = int(value)
    if value < low or (high is not None and value > high):
        allowed = f"in {low}..{high}" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be {allowed}, got {value}")
    return value


def check_at_least(name: str, value: Any, least: int) -> int:
    """Return ``value`` as an ``int`` if it is an integer ``>= least`` (numpy integers too, ``bool`` refused); else
    ``ValueError`` "``name`` must be an integer >= ``least``", the wording of counts such as games and workers."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
        raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")
    return int(value)


def check_int_list(name: str, value: Any, low: int, high: int | None = None, length: int | None = None) -> list[int]:
    """Return ``value`` (a list, tuple or 1-d numpy array of integers) as a list of ``int``; else ``ValueError``.

    Each item is checked as by :func:`check_int` and named ``name[i]``; ``length`` fixes the number of items.
    """
    if isinstance(value, np.ndarray) and value.ndim == 1:
        value = value.tolist()
    if not isinstance(value, (list, tuple)) or (length is not None and len(value) != length):
        what = f"{length} integers" if length is not None else "integers"
        raise ValueError(f"{name} must be a list of {what}, got {value!r} ({type(value).__name__})")
    return [check_int(f"{name}[{i}]", item, low, high) for i, item in enumerate(value)]


def check_choice(name: str, value: Any, choices: Iterable[Any]) -> Any:
    """Return ``value`` if it is one of ``choices``; else raise ``ValueError`` listing them."""
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def check_bool(name: str, value: Any) -> bool:
    """Return ``value`` if it is a ``bool`` (numpy bools included); else raise ``ValueError``."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_seed(seed: Any, name: str = "seed") -> int | None:
    """Return ``seed`` as an ``int`` (or ``None``) if it is ``None`` or a non-negative integer; else ``ValueError``.

    numpy integers are accepted; ``bool``, floats, strings and negative numbers are refused.
    """
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"{name} must be None or a non-negative integer, got {seed!r} ({type(seed).__name__})")
    return int(seed)
