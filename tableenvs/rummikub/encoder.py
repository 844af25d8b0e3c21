"""Rummikub encoder: action ids and the observation vector of one seat.

Where you are: the encoding layer of ``tableenvs/rummikub``, between the rules engine (``rules.py``) and the AEC
adapter (``env.py``). The greedy agent (``agents.py``) decodes observations with the same :data:`LAYOUT`.

Actions (``Discrete(55)``): ``0..52`` stage one tile of that type from the rack (``colour * 13 + number - 1``,
52 = joker); ``53`` (:data:`COMMIT`) end the turn placing the staged tiles; ``54`` (:data:`DRAW`) draw one tile
(a pass when the pool is empty).

Observation (float32, seen from the observing seat; relative seat ``r`` is the player ``r`` places after the
observer in turn order, 0 = self; seat blocks are padded to 4 with zeros):

=================  ====  ================================================================================
block              size  content
=================  ====  ================================================================================
``rack``           53    own rack: count of each tile type (0..2), staged tiles included
``staged``         53    own staged tiles (0..2 each); all 0 unless the observer is the one staging
``table``          53    tiles on the table (0..2 each), as of the last commit (staging is private)
``last_placed``    53    tiles the previous turn placed on the table (all 0 if it drew, passed or failed)
``rack_sizes``     4     tiles on each rack by relative seat, / 14 (staged tiles still count)
``opened``         4     1 if the player at that relative seat has made its opening meld
``to_act``         4     one-hot relative seat of the player to act
``scores``         4     episode points so far by relative seat, / 100
``pool``           1     tiles left in the pool, / 106
``passes``         1     passes in a row since the pool ran out, / number of players
``num_players``    3     one-hot 2, 3, 4 players
``game``           1     games finished in the episode, / ``games_per_episode``
``turn``           1     turns played in the episode, / ``max_turns``
=================  ====  ================================================================================

Hidden: other players' racks and staged tiles, and the order of the pool.
"""

from __future__ import annotations

import numpy as np

from .rules import NUM_TILES, RACK_SIZE, Rummikub
from .tiles import TILE_TYPES, TILE_VALUES, tile_name

COMMIT = TILE_TYPES  # 53
DRAW = TILE_TYPES + 1  # 54
NUM_ACTIONS = TILE_TYPES + 2
MAX_SEATS = 4
SCORE_SCALE = 100.0


class Layout:
    """Offsets of the observation blocks (see the module docstring)."""

    RACK = 0
    STAGED = RACK + TILE_TYPES
    TABLE = STAGED + TILE_TYPES
    LAST_PLACED = TABLE + TILE_TYPES
    RACK_SIZES = LAST_PLACED + TILE_TYPES
    OPENED = RACK_SIZES + MAX_SEATS
    TO_ACT = OPENED + MAX_SEATS
    SCORES = TO_ACT + MAX_SEATS
    POOL = SCORES + MAX_SEATS
    PASSES = POOL + 1
    NUM_PLAYERS = PASSES + 1
    GAME = NUM_PLAYERS + 3
    TURN = GAME + 1
    SIZE = TURN + 1


LAYOUT = Layout
OBSERVATION_SIZE = Layout.SIZE

#: Text of each action id (the draw action reads "draw / pass").
ACTION_TEXT = tuple(f"stage {tile_name(t)}" for t in range(TILE_TYPES)) + ("commit", "draw")


def observation_bounds(games_per_episode: int) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` of every observation entry."""
    low = np.zeros(OBSERVATION_SIZE, np.float32)
    high = np.ones(OBSERVATION_SIZE, np.float32)
    high[Layout.RACK : Layout.RACK_SIZES] = 2.0
    high[Layout.RACK_SIZES : Layout.OPENED] = NUM_TILES / RACK_SIZE
    # a game moves at most the points of all 106 tiles: a winner receives every other rack's total
    score_bound = games_per_episode * int(TILE_VALUES @ np.full(TILE_TYPES, 2)) / SCORE_SCALE
    low[Layout.SCORES : Layout.POOL] = -score_bound
    high[Layout.SCORES : Layout.POOL] = score_bound
    return low, high


class Encoder:
    """Writes observations of a :class:`Rummikub` game; one per env (slice copies, no per-step objects)."""

    def __init__(self, num_players: int):
        self.num_players = num_players
        # relative seat r of the observer ``me`` is absolute seat (me + r) % n
        self._order = [np.array([(me + r) % num_players for r in range(num_players)]) for me in range(num_players)]

    def fill(self, game: Rummikub, seat: int, out: np.ndarray) -> None:
        """Write ``seat``'s observation into the zeroed float32 vector ``out``."""
        n = self.num_players
        order = self._order[seat]
        out[Layout.RACK : Layout.STAGED] = game.racks[seat]
        live = not (game.over or game.truncated)
        if game.to_act == seat and live:
            out[Layout.STAGED : Layout.TABLE] = game.staged
        out[Layout.TABLE : Layout.LAST_PLACED] = game.table
        out[Layout.LAST_PLACED : Layout.RACK_SIZES] = game.last_placed
        out[Layout.RACK_SIZES : Layout.RACK_SIZES + n] = game.racks.sum(axis=1)[order] / RACK_SIZE
        opened = game.opened
        scores = game.scores
        for r in range(n):
            s = order[r]
            if opened[s]:
                out[Layout.OPENED + r] = 1.0
            out[Layout.SCORES + r] = scores[s] / SCORE_SCALE
        out[Layout.TO_ACT + (game.to_act - seat) % n] = 1.0
        out[Layout.POOL] = game.pool_size / NUM_TILES
        out[Layout.PASSES] = game.passes / n
        out[Layout.NUM_PLAYERS + n - 2] = 1.0
        out[Layout.GAME] = len(game.results) / game.games_per_episode
        out[Layout.TURN] = game.turn / game.max_turns

    @staticmethod
    def fill_mask(game: Rummikub, mask: np.ndarray) -> None:
        """Set the legal action ids of the player to act in the zeroed int8 ``mask``."""
        stage_mask, can_commit, can_draw = game.legal()
        mask[:TILE_TYPES] = stage_mask
        mask[COMMIT] = can_commit
        mask[DRAW] = can_draw
