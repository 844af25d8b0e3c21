"""Rummikub tile types, names, values and the checks for tile count vectors.

You are in the tile model shared by the Rummikub solver (and later the environment). Rules and units:

- 106 physical tiles: numbers 1..13 in four colours (black, red, blue, orange), two copies of each, and
  two jokers.
- A tile *type* is an integer id: ``colour * 13 + (number - 1)`` for the 52 numbered types (0..51) and
  ``JOKER = 52``. A position (table, rack, play) is a *count vector*: an integer array of length
  ``TILE_TYPES = 53`` whose entry ``t`` is how many tiles of type ``t`` it holds (0, 1 or 2).
- A tile's *face value* is its number; a joker's value is ``JOKER_VALUE = 30`` points (the penalty a joker
  costs when left on a rack). Inside a meld a joker instead "stands for" a numbered type and then counts
  as that type's number (this is what the opening threshold counts).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tableenvs.core.validation import check_int

TILE_TYPES = 53
JOKER = 52
NUMBERS = 13
COLOURS = ("black", "red", "blue", "orange")
COPIES = 2
JOKERS = 2
JOKER_VALUE = 30

#: Face value of each tile type in points: the number for numbered tiles, ``JOKER_VALUE`` for the joker.
TILE_VALUES = np.array([n + 1 for _ in COLOURS for n in range(NUMBERS)] + [JOKER_VALUE], dtype=np.int64)
TILE_VALUES.setflags(write=False)
_ONES = np.ones(TILE_TYPES, dtype=np.int64)
NUM_TILES = 106
#: The whole set as counts: two of each numbered type, two jokers
FULL_SET = np.array([COPIES] * (TILE_TYPES - 1) + [JOKERS], dtype=np.int64)
FULL_SET.setflags(write=False)
#: Points of all 106 tiles (a joker 30): no rack total, and no game's score, is larger
ALL_POINTS = 2 * 4 * sum(range(1, NUMBERS + 1)) + JOKERS * 30


def rack_total(rack: np.ndarray) -> int:
    """Points on a rack: face values, a joker 30."""
    return int(rack @ TILE_VALUES)


def tile_count(counts: np.ndarray) -> int:
    """How many tiles the count vector ``counts`` holds: its sum, as a dot product (half the time of
    ``counts.sum()`` on 53 entries; the engine asks it at every turn)."""
    return int(counts.dot(_ONES))


def tile_type(colour: int, number: int) -> int:
    """Type id of the numbered tile ``number`` (1..13) in colour index ``colour`` (0..3)."""
    if not 0 <= colour < len(COLOURS):
        raise ValueError(f"colour must be in 0..{len(COLOURS) - 1}, got {colour}")
    if not 1 <= number <= NUMBERS:
        raise ValueError(f"number must be in 1..{NUMBERS}, got {number}")
    return colour * NUMBERS + number - 1


def colour_of(t: int) -> int:
    """Colour index (0..3) of numbered tile type ``t``."""
    return t // NUMBERS


def number_of(t: int) -> int:
    """Number (1..13) of numbered tile type ``t``."""
    return t % NUMBERS + 1


def tiles_played_text(counts: np.ndarray) -> str:
    """Tiles of a count vector in short, by colour, consecutive numbers joined: ``"red 4-5-6 9, blue 9, joker"``."""
    words = []
    for colour, name in enumerate(COLOURS):
        runs: list[list[int]] = []
        for n in range(1, 14):
            for _ in range(int(counts[colour * 13 + n - 1])):
                if runs and runs[-1][-1] == n - 1:
                    runs[-1].append(n)
                else:
                    runs.append([n])
        if runs:
            words.append(f"{name} " + " ".join("-".join(map(str, run)) for run in runs))
    words += ["joker"] * int(counts[JOKER])
    return ", ".join(words)


def tile_name(t: int) -> str:
    """Readable name of tile type ``t``: ``"red 7"``, ``"joker"``."""
    if not 0 <= t < TILE_TYPES:
        raise ValueError(f"tile type must be in 0..{TILE_TYPES - 1}, got {t}")
    if t == JOKER:
        return "joker"
    return f"{COLOURS[colour_of(t)]} {number_of(t)}"


def as_counts(name: str, value: Any) -> np.ndarray:
    """Return ``value`` as a non-negative int64 count vector of length 53; else raise ``ValueError``.

    Each entry must be an integer 0..2 (two copies of every tile, two jokers).
    """
    array = np.asarray(value)
    if array.shape != (TILE_TYPES,):
        raise ValueError(f"{name} must be a count vector of shape ({TILE_TYPES},), got shape {array.shape}")
    if array.dtype.kind not in "iub":
        if array.dtype.kind == "f" and np.all(np.isfinite(array)) and np.all(array == np.round(array)):
            array = array.astype(np.int64)
        else:
            raise ValueError(f"{name} must hold integer counts, got dtype {array.dtype}")
    array = array.astype(np.int64)
    negative = np.flatnonzero(array < 0)
    if negative.size:
        t = int(negative[0])
        raise ValueError(f"{name}[{t}] ({tile_name(t)}) is {array[t]}; counts must be >= 0")
    too_many = np.flatnonzero(array > COPIES)
    if too_many.size:
        t = int(too_many[0])
        raise ValueError(f"{name}[{t}] ({tile_name(t)}) is {array[t]}; at most {COPIES} exist")
    return array


def check_total(names: str, total: np.ndarray) -> None:
    """Raise ``ValueError`` if the summed count vector ``total`` holds more tiles than the game has."""
    too_many = np.flatnonzero(total > COPIES)
    if too_many.size:
        t = int(too_many[0])
        limit = f"{JOKERS} jokers" if t == JOKER else f"{COPIES} copies of {tile_name(t)}"
        raise ValueError(f"{names} hold {total[t]} of tile {t} ({tile_name(t)}); the game has only {limit}")


def check_within(name: str, part: np.ndarray, whole_name: str, whole: np.ndarray) -> None:
    """Raise ``ValueError`` if count vector ``part`` takes more of some tile than ``whole`` holds."""
    over = np.flatnonzero(part > whole)
    if over.size:
        t = int(over[0])
        raise ValueError(f"{name}[{t}] ({tile_name(t)}) is {part[t]} but {whole_name} holds only {whole[t]}")


#: Tile type id by name (``"red 7"``, ``"joker"``), for scripted deals
_TILE_NAMES = {tile_name(t): t for t in range(TILE_TYPES)}


def tile_ids(name: str, tiles: Any) -> list[int]:
    """Tile type ids of ``tiles``: a list of ids (0..52) or names (``"red 7"``, ``"joker"``), order kept."""
    if isinstance(tiles, (str, bytes)) or not isinstance(tiles, (list, tuple, np.ndarray)):
        raise ValueError(f"{name} must be a list of tile ids (0..52) or names like 'red 7', got {tiles!r}")
    ids = []
    for tile in tiles:
        if isinstance(tile, str):
            key = " ".join(tile.lower().split())
            if key not in _TILE_NAMES:
                raise ValueError(
                    f"{name}: unknown tile name {tile!r}; use '<colour> <1..13>' with colour in "
                    f"{', '.join(COLOURS)}, or 'joker'"
                )
            ids.append(_TILE_NAMES[key])
        else:
            ids.append(check_int(f"{name} tile id", tile, 0, TILE_TYPES - 1))
    return ids


def parse_tiles(name: str, tiles: Any) -> np.ndarray:
    """Count vector (53,) of ``tiles`` given as in :func:`tile_ids`."""
    return np.bincount(np.array(tile_ids(name, tiles), np.int64), minlength=TILE_TYPES).astype(np.int64)
