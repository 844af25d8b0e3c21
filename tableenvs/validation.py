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
