"""Rummikub for tableenvs: the tile model, the meld-partition solver, the rules engine and the env.

Layers: ``tiles.py`` / ``melds.py`` (model), ``solver.py`` (legal plays), ``rules.py`` (the game engine
:class:`Rummikub`), ``encoder.py`` (action ids, observation layout), ``env.py`` (the AEC env ``rummikub_v0``,
made through ``tableenvs.make``), ``agents.py`` (greedy policy). Rules and decisions: ``docs/rummikub.md``.

Importing this package is cheap: the solver's compiled kernel is built (or loaded from numba's disk
cache) on the first solver call, not at import, and the env module (PettingZoo) is not imported here.
"""

from .melds import Meld
from .rules import GameResult, Rummikub
from .solver import Solution, arrange, is_valid_play, playable, solve
from .tiles import COLOURS, JOKER, JOKER_VALUE, TILE_TYPES, TILE_VALUES, tile_name, tile_type

__all__ = [
    "COLOURS",
    "JOKER",
    "JOKER_VALUE",
    "TILE_TYPES",
    "TILE_VALUES",
    "GameResult",
    "Meld",
    "Rummikub",
    "Solution",
    "arrange",
    "is_valid_play",
    "playable",
    "solve",
    "tile_name",
    "tile_type",
]
