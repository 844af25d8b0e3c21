"""Rummikub melds: the ``Meld`` record, how the tiles of one number split into groups, and a quick bound on the
opening points a set of tiles can make (``opening_bound``).

You are in the meld model used by the solver's answers. Rules:

- A *group* is 3 or 4 tiles of one number, all colours different.
- A *run* is 3..13 tiles of one colour with consecutive numbers (no wrap from 13 to 1).
- A joker stands for any tile a meld needs; a meld may hold both jokers (joker, joker, 7 is a meld).

A ``Meld`` lists its tiles in meld order (runs ascending by number, groups by colour) as tile type ids
(``JOKER`` for a joker) and, position by position, the numbered type each tile stands for (a real tile
stands for itself).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Literal

import numpy as np

from .tiles import COLOURS, JOKER, NUMBERS, number_of, tile_name

# Per tile type its most opening points (a joker stands for at most a 13) * 128 + 1: one dot product of a count
# vector gives its points bound (bits 7..) and its number of tiles (bits 0..6: at most 106), asked at every decision
# of a player who has not opened (a third of the time of a dot and a sum)
_BOUND_AND_COUNT = np.array([(t % 13 + 1) * 128 + 1 for t in range(52)] + [13 * 128 + 1], dtype=np.int64)


def opening_bound(tiles: np.ndarray) -> int:
    """Upper bound on the opening points of the count vector ``tiles`` (a joker at most 13); 0 below 3 tiles (no
    meld)."""
    packed = int(tiles.dot(_BOUND_AND_COUNT))
    return packed >> 7 if packed & 127 >= 3 else 0


@dataclass(frozen=True)
class Meld:
    """One meld on the table: ``kind`` is ``"group"`` or ``"run"``; ``tiles[i]`` stands for ``stands_for[i]``."""

    kind: Literal["group", "run"]
    tiles: tuple[int, ...]
    stands_for: tuple[int, ...]

    @property
    def value(self) -> int:
        """Points of the meld, each joker counted as the number it stands for (the opening-meld count)."""
        return sum(number_of(t) for t in self.stands_for)

    def __str__(self) -> str:
        parts = [
            f"joker={tile_name(s)}" if t == JOKER else tile_name(t)
            for t, s in zip(self.tiles, self.stands_for, strict=True)
        ]
        return f"{self.kind}[{', '.join(parts)}]"


@cache
def split_groups(colour_counts: tuple[int, ...], jokers: int) -> tuple[tuple[tuple[int, ...], int], ...] | None:
    """Split the tiles of one number into groups, or ``None`` if they cannot be.

    ``colour_counts[c]`` is how many tiles of colour ``c`` (0..2 each) and ``jokers`` how many jokers
    (0..2) must all be placed in groups. Returns ``((colours, joker_count), ...)``, one entry per group,
    or ``()`` when there is nothing to place. Exhaustive search (at most 8 tiles), so sizing is exact.
    """
    if not any(colour_counts):
        return () if jokers == 0 else None
    first = next(c for c, k in enumerate(colour_counts) if k)
    others = [c for c in range(len(COLOURS)) if c != first and colour_counts[c]]
    for mask in range(1 << len(others)):
        members = (first, *(c for i, c in enumerate(others) if mask >> i & 1))
        for group_jokers in range(min(jokers, 4 - len(members)) + 1):
            if not 3 <= len(members) + group_jokers <= 4:
                continue
            rest = list(colour_counts)
            for c in members:
                rest[c] -= 1
            tail = split_groups(tuple(rest), jokers - group_jokers)
            if tail is not None:
                return ((members, group_jokers), *tail)
    return None


@cache
def group_meld(number: int, colours: tuple[int, ...], jokers: int) -> Meld:
    """The group of ``number`` holding ``colours``; its jokers stand for the lowest missing colours."""
    missing = [c for c in range(len(COLOURS)) if c not in colours][:jokers]
    slots = sorted([(c, c * NUMBERS + number - 1) for c in colours] + [(c, JOKER) for c in missing])
    return Meld(
        "group",
        tuple(t for _, t in slots),
        tuple(c * NUMBERS + number - 1 for c, _ in slots),
    )
