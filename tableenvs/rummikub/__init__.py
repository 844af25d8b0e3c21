"""Rummikub for tableenvs: for now the tile model and the meld-partition solver.

Importing this package is cheap: the solver's compiled kernel is built (or loaded from numba's disk
cache) on the first solver call, not at import.
"""

from .melds import Meld
from .solver import Solution, arrange, is_valid_play, playable, solve
from .tiles import COLOURS, JOKER, JOKER_VALUE, TILE_TYPES, TILE_VALUES, tile_name, tile_type

__all__ = [
    "COLOURS",
    "JOKER",
    "JOKER_VALUE",
    "TILE_TYPES",
    "TILE_VALUES",
    "Meld",
    "Solution",
    "arrange",
    "is_valid_play",
    "playable",
    "solve",
    "tile_name",
    "tile_type",
]
