"""The search policy's spec: ``"search:key=value:..."`` parsed into :class:`SearchOptions`, each option checked.

Where you are: beside :mod:`tableenvs.policies.search` (the search itself, whose module docstring states what every
option means); :func:`tableenvs.policies.make_policy` and the benchmarks parse specs here. No game is named here:
a game's default setting is its spec's ``search_default`` (:func:`default_spec`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

DEFAULT_SIMS = 100


def default_spec(game: str) -> str:
    """The spec that the bare ``"search"`` stands for in ``game``: its spec's ``search_default`` (the setting that
    beat the heuristic in docs/agents.md "Search against the heuristic"; ``"search"`` unless the game declares one)."""
    from tableenvs.core.registry import spec

    return spec(game).search_default


_CHOICES = {
    "rollout": ("heuristic", "random", "trained"),
    "root": ("ucb", "paired"),
    "mode": ("flat", "ismcts", "turns"),
    "lead": ("heuristic", "trained"),
}
_KEYS = ("sims", "ms", "rollout", "c", "depth", "root", "z", "turns", "mode", "batched", "lead")


@dataclass(frozen=True)
class SearchOptions:
    """A search policy's budget and settings; see the module docstring."""

    sims: int | None = None
    ms: float | None = None
    rollout: str = "heuristic"
    c: float = 0.7
    depth: int = 400
    root: str = "ucb"
    z: float = 0.0
    turns: int | None = None
    mode: str = "flat"
    batched: bool = False
    lead: str = "heuristic"

    @property
    def simulations(self) -> int | None:
        """The simulation budget (None when the budget is in milliseconds)."""
        return self.sims if self.sims is not None else (None if self.ms is not None else DEFAULT_SIMS)

    def deadline(self) -> float:
        """The ``time.process_time()`` at which a budget of ``ms`` milliseconds started now runs out."""
        if self.ms is None:
            raise ValueError("search: this budget is in simulations, not in ms (no deadline)")
        return time.process_time() + self.ms / 1000.0


def parse_search_spec(text: str) -> SearchOptions:
    """``"search"`` or ``"search:key=value:key=value"`` as :class:`SearchOptions`; ``ValueError`` naming the problem."""
    name, *parts = text.split(":")
    if name != "search":
        raise ValueError(f"not a search policy spec: {text!r} (expected 'search' or 'search:sims=200')")
    values: dict[str, Any] = {}
    for part in parts:
        key, sep, value = part.partition("=")
        if not sep or key not in _KEYS:
            raise ValueError(
                f"search policy {text!r}: bad option {part!r}; options are key=value separated by ':', keys "
                f"{', '.join(_KEYS)} (e.g. 'search:sims=200' or 'search:ms=50:rollout=random')"
            )
        if key in values:
            raise ValueError(f"search policy {text!r}: option {key!r} given twice")
        values[key] = _option(text, key, value)
    if "sims" in values and "ms" in values:
        raise ValueError(f"search policy {text!r}: give a budget of sims or of ms, not both")
    if "z" in values and values.get("root") != "paired" and values.get("mode") != "turns" and not values.get("batched"):
        raise ValueError(f"search policy {text!r}: z applies to root=paired only (or mode=turns, batched=1)")
    if values.get("batched") and (values.get("mode", "flat") != "flat" or values.get("root", "paired") != "paired"):
        raise ValueError(f"search policy {text!r}: batched=1 is the paired root of mode=flat (no root=ucb, no mode)")
    if values.get("batched"):
        values.setdefault("root", "paired")
    if values.get("batched") and "turns" in values:
        raise ValueError(f"search policy {text!r}: batched=1 rollouts run to the end of the scoring period (no turns)")
    if "root" in values and values.get("mode", "flat") != "flat":
        raise ValueError(f"search policy {text!r}: root applies to mode=flat only")
    if "lead" in values and values.get("mode") != "turns":
        raise ValueError(f"search policy {text!r}: lead applies to mode=turns only")
    return SearchOptions(**values)


def _option(text: str, key: str, value: str) -> Any:
    if key == "batched":
        if value not in ("0", "1"):
            raise ValueError(f"search policy {text!r}: batched must be 0 or 1, got {value!r}")
        return value == "1"
    try:
        if key in _CHOICES:
            if value not in _CHOICES[key]:
                raise ValueError
            return value
        number = int(value) if key in ("sims", "depth", "turns") else float(value)
    except ValueError:
        kind = {"sims": "an integer", "depth": "an integer", "turns": "an integer"}
        kind.update({name: " or ".join(map(repr, choices)) for name, choices in _CHOICES.items()})
        raise ValueError(f"search policy {text!r}: {key} must be {kind.get(key, 'a number')}, got {value!r}") from None
    if key == "z":  # 0 (the default) is allowed: always the best mean
        if not (number >= 0 and math.isfinite(number)):
            raise ValueError(f"search policy {text!r}: z must be 0 or more, got {value!r}")
        return float(number)
    if not (number > 0 and math.isfinite(number)):
        raise ValueError(f"search policy {text!r}: {key} must be positive, got {value!r}")
    return number
