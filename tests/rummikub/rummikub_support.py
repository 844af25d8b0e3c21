"""Test support for the Rummikub solver: random positions and an independent meld validator.

You are in test code; nothing here imports the solver. Tile types are ``colour * 13 + number - 1`` and
52 for the joker; positions are count vectors of length 53.
"""

from __future__ import annotations

import numpy as np

TYPES = 53
JOKER = 52
FULL_SET = np.array([2] * 52 + [2], dtype=np.int64)


def random_meld(rng: np.random.Generator, max_run: int = 8) -> list[int]:
    """Tile types of a random meld (run of 3..max_run or group of 3..4), maybe with up to two jokers."""
    if rng.random() < 0.5:
        colour = int(rng.integers(4))
        length = int(rng.integers(3, max_run + 1))
        start = int(rng.integers(1, 14 - length + 1))
        tiles = [colour * 13 + n - 1 for n in range(start, start + length)]
    else:
        number = int(rng.integers(1, 14))
        colours = rng.permutation(4)[: int(rng.integers(3, 5))]
        tiles = [int(c) * 13 + number - 1 for c in colours]
    jokers = int(rng.choice(3, p=[0.75, 0.18, 0.07]))
    for spot in rng.permutation(len(tiles))[: min(jokers, len(tiles) - 1)]:
        tiles[spot] = JOKER
    return tiles


def random_table(rng: np.random.Generator, target_tiles: int) -> np.ndarray:
    """A valid table (union of random melds that fit the tile supply) of about ``target_tiles`` tiles."""
    table = np.zeros(TYPES, dtype=np.int64)
    for _ in range(200):
        if table.sum() >= target_tiles:
            break
        meld = np.bincount(random_meld(rng), minlength=TYPES)
        if np.all(table + meld <= FULL_SET):
            table += meld
    return table


def random_rack(rng: np.random.Generator, table: np.ndarray, size: int, near: float = 0.5) -> np.ndarray:
    """``size`` tiles drawn from what the table leaves; with probability ``near`` per tile, a tile next
    to (same number or neighbouring number of the same colour) a table tile, to make plays likelier."""
    rack = np.zeros(TYPES, dtype=np.int64)
    for _ in range(size):
        left = FULL_SET - table - rack
        candidates = np.flatnonzero(left)
        if candidates.size == 0:
            break
        if rng.random() < near and table[:52].any():
            t = int(rng.choice(np.flatnonzero(table[:52])))
            colour, number0 = divmod(t, 13)
            options = [colour * 13 + n for n in (number0 - 1, number0 + 1) if 0 <= n < 13]
            options += [c * 13 + number0 for c in range(4) if c != colour]
            options = [o for o in options if left[o] > 0]
            if options:
                rack[int(rng.choice(options))] += 1
                continue
        rack[int(rng.choice(candidates, p=left[candidates] / left[candidates].sum()))] += 1
    return rack


def meld_problem(kind: str, tiles, stands_for) -> str | None:
    """Why the meld breaks the rules, or ``None`` when it is a legal group or run."""
    tiles, stands_for = list(tiles), list(stands_for)
    if len(tiles) != len(stands_for):
        return "tiles and stand-ins differ in length"
    if not all(0 <= s < 52 for s in stands_for):
        return "a tile stands for a non-numbered type"
    if any(t != JOKER and t != s for t, s in zip(tiles, stands_for, strict=True)):
        return "a real tile stands for another tile"
    if tiles.count(JOKER) == len(tiles):
        return "no real tile"
    colours = [s // 13 for s in stands_for]
    numbers = [s % 13 + 1 for s in stands_for]
    if kind == "group":
        if not 3 <= len(tiles) <= 4:
            return f"group of {len(tiles)} tiles"
        if len(set(numbers)) != 1:
            return "group mixes numbers"
        if len(set(colours)) != len(colours):
            return "group repeats a colour"
        return None
    if kind == "run":
        if not 3 <= len(tiles) <= 13:
            return f"run of {len(tiles)} tiles"
        if len(set(colours)) != 1:
            return "run mixes colours"
        if numbers != list(range(numbers[0], numbers[0] + len(numbers))):
            return f"run numbers {numbers} are not consecutive ascending"
        return None
    return f"unknown kind {kind!r}"


def check_arrangement(melds, expected: np.ndarray) -> None:
    """Assert every meld is legal and together they hold exactly the tiles ``expected``."""
    held = np.zeros(TYPES, dtype=np.int64)
    for meld in melds:
        problem = meld_problem(meld.kind, meld.tiles, meld.stands_for)
        assert problem is None, f"{meld}: {problem}"
        for t in meld.tiles:
            held[t] += 1
    assert np.array_equal(held, expected), f"melds hold {held.tolist()}, expected {expected.tolist()}"
