"""Whether a Rummikub seat plays or holds its tiles back, and what a network reads of each choice.

Where you are: a helper of ``tableenvs/rummikub`` for models that choose their opening meld and, once opened, whether
to play this turn or to hold (a candidate-scoring model file naming ``rummikub_holding_v1``,
:mod:`tableenvs.policies.input_features`). It reads only a seat's observation and action mask, so it adds no hidden
information.

Why holding: at 4 players a seat that keeps its tiles on the rack (drawing instead of playing) while no opponent is
near going out, and then goes out in one large play, wins far more often than the heuristic, which plays the most tiles
every turn; it must stop holding in time, when an opponent has few tiles left or the pool is nearly empty, or it is
caught with a full rack (docs/training.md, "The holding recipe").

**Candidates** (:class:`HoldingChoices`): before the opening meld those of
:class:`tableenvs.rummikub.openings.OpeningChoices` (the opening melds). Once opened, at the start of a turn where the
heuristic has a play that does not empty the rack and the draw is legal: two, the heuristic's play (the most tiles)
and the draw (hold). Otherwise one, the heuristic's action.

**What a network reads** (:data:`FEATURES`, float32): the 9 columns of :data:`tableenvs.rummikub.openings.FEATURES`
(the opening candidates'; 0 on the others); ``play_tiles``, the tiles of the play / 14 (on the play candidate); and on
the draw candidate, one-hot bins of the fewest tiles on an opponent's rack (1, 2, 3, 4, 5-6, 7 or more) and of the
tiles in the pool (0-4, 5-9, 10-19, 20 or more), and the own rack's tiles / 14 and points / 100 (a joker 30).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import openings
from .agents import HeuristicPolicy, next_action
from .encoder import DRAW, LAYOUT
from .tiles import NUM_TILES, TILE_VALUES

#: Upper ends of the bins of the fewest tiles on an opponent's rack (the last bin is everything above 6).
FEWEST_BINS = (1, 2, 3, 4, 6)
#: Upper ends of the bins of the tiles in the pool (the last bin is everything above 19).
POOL_BINS = (4, 9, 19)
#: The features of one candidate, in order (the module docstring).
FEATURES = (
    *openings.FEATURES,
    "play_tiles",
    "hold_fewest_1",
    "hold_fewest_2",
    "hold_fewest_3",
    "hold_fewest_4",
    "hold_fewest_5_6",
    "hold_fewest_7_up",
    "hold_pool_0_4",
    "hold_pool_5_9",
    "hold_pool_10_19",
    "hold_pool_20_up",
    "hold_rack_tiles",
    "hold_rack_points",
)
_OPENING = len(openings.FEATURES)
_PLAY = _OPENING
_FEWEST = _PLAY + 1
_POOL = _FEWEST + len(FEWEST_BINS) + 1
_RACK = _POOL + len(POOL_BINS) + 1


def fewest_other_tiles(observation: np.ndarray) -> int:
    """The fewest tiles on an opponent's rack, read from ``observation`` (its rack sizes and player count)."""
    players = int(np.argmax(observation[LAYOUT.NUM_PLAYERS : LAYOUT.NUM_PLAYERS + 3])) + 2
    sizes = observation[LAYOUT.RACK_SIZES + 1 : LAYOUT.RACK_SIZES + players] * 14.0
    return int(np.rint(sizes.min()))


def pool_tiles(observation: np.ndarray) -> int:
    """The tiles left in the pool, read from ``observation``."""
    return int(np.rint(float(observation[LAYOUT.POOL]) * NUM_TILES))


def hold_features(observation: np.ndarray, rack: np.ndarray, out: np.ndarray) -> None:
    """The draw candidate's columns of :data:`FEATURES` into the zeroed row ``out``."""
    out[_FEWEST + int(np.searchsorted(FEWEST_BINS, fewest_other_tiles(observation)))] = 1.0
    out[_POOL + int(np.searchsorted(POOL_BINS, pool_tiles(observation)))] = 1.0
    out[_RACK] = rack.sum() / 14.0
    out[_RACK + 1] = float(rack @ TILE_VALUES) / 100.0


class HoldingChoices:
    """The candidates a candidate-scoring model chooses among at a decision (``rummikub_holding_v1``):
    ``(observation, action_mask) -> (features float32 (K, size), actions int64 (K,))`` (the module docstring)."""

    size = len(FEATURES)

    def __init__(self, env: Any) -> None:
        self.openings = openings.OpeningChoices(env)
        self.heuristic = self.openings.heuristic
        self._rows = np.zeros((2, self.size), np.float32)
        self._only = np.zeros((1, self.size), np.float32)

    def __call__(self, observation: np.ndarray, action_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rack, staged, table, opened = HeuristicPolicy.read(observation)
        if not opened:
            features, actions = self.openings(observation, action_mask)
            padded = np.zeros((len(actions), self.size), np.float32)
            padded[:, :_OPENING] = features
            return padded, actions
        play = self.heuristic.plan(rack, table, staged, opened) if action_mask[DRAW] and not staged.any() else None
        if play is not None and play.sum() < rack.sum():  # a play that does not go out: it may hold instead
            action = next_action(play, staged, action_mask)
            if action is not None:
                rows = self._rows
                rows.fill(0.0)
                rows[0, _PLAY] = play.sum() / 14.0
                hold_features(observation, rack, rows[1])
                return rows, np.array([action, DRAW], np.int64)
        action = self.heuristic.act(observation, action_mask, None)  # type: ignore[arg-type]  # deterministic
        return self._only, np.array([action], np.int64)
