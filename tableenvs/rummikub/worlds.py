"""Rummikub: resampling what one seat cannot know, for ``RummikubEnv.sample_world`` (determinised search).

Where you are: the Rummikub package, beside the rules engine (``rules.py``); the env's ``_resample_hidden`` and
``_world_event_log`` hooks call :func:`resample_hidden` and :func:`world_event_log` on the world (a clone). Nothing
here is reached by normal play.

What a player knows of the tiles: its own rack and the table; of every other rack only its size (and whether it has
opened); of the pool only its size. Everything else it has never seen: the tiles drawn by the others, the tiles of
their failed plays (``strict_commit=False``: staged, then taken back), the others' staging in progress, the pool's
order. The world deals the unseen tiles (all 106 but the table and the own rack, as counts) afresh: a uniformly
random order of them, the other racks filled to their public sizes in seat order, the rest the pool in drawing
order. The deal is built from those counts and ``rng`` alone, so two games the player cannot tell apart give the same
world for the same generator.

Uniform: every assignment of the unseen tiles to the other racks (their public sizes) and to the pool order is
equally likely, and each is consistent with everything the player saw: a player may always draw instead of
playing, so no past play rules an assignment out (like every determinised search this ignores what the others'
choices say about their racks). Another player's staging in progress (private until it commits) is undone: that
player is put back at the start of its turn (nothing staged, the same rack size), which the observation allows,
and the world's event log drops those stagings.
"""

from __future__ import annotations

import numpy as np

from .rules import Rummikub
from .tiles import FULL_SET, TILE_TYPES


def resample_hidden(game: Rummikub, seat: int, rng: np.random.Generator) -> None:
    """Deal afresh, in place (``game`` is the world's own copy), every tile ``seat`` has not seen."""
    view = game.seen_by(seat)  # the one visibility decision (rules.SeatView)
    unseen = FULL_SET - game.table - view.rack
    tiles = rng.permutation(np.repeat(np.arange(TILE_TYPES), unseen))
    start = 0
    for other in range(game.num_players):
        if other != seat:
            size = int(game.racks[other].sum())
            game.racks[other] = np.bincount(tiles[start : start + size], minlength=TILE_TYPES)
            start += size
    game.pool = tiles[start:]
    game._drawn = 0
    if view.staged is None:  # another player's staging in progress: put it back at the start of its turn
        game.staged[:] = 0
    game._legal = None
    game._staged_is_play = None


def world_event_log(game: Rummikub, lines: list[str], seat: int) -> list[str]:
    """The event log ``lines`` as ``seat`` saw it: its own moves in full, the others' stagings as
    ``describe_action_public`` says them (``"stages a tile"``; commits and draws are public), the rules' lines
    kept; the stagings of another player's turn in progress are dropped (the world puts it back at its start)."""
    own = f"player_{seat}: "
    out = [
        f"{line.partition(': ')[0]}: stages a tile"
        if line.startswith("player_") and ": stage " in line and not line.startswith(own)
        else line
        for line in lines
    ]
    if not game.sees_staged(seat) and game.staged.any():
        acting = f"player_{game.to_act}: stages a tile"
        while out and out[-1] == acting:
            out.pop()
    return out
