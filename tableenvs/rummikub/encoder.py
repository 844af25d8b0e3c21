"""Rummikub encoder: action ids and the observation vector of one seat.

Where you are: the encoding layer of ``tableenvs/rummikub``, between the rules engine (``rules.py``) and the AEC
adapter (``env.py``). The greedy agent (``agents.py``) decodes observations with the same :data:`LAYOUT`.

Actions (``Discrete(55)``): ``0..52`` stage one tile of that type from the rack (``colour * 13 + number - 1``,
52 = joker); ``53`` (:data:`COMMIT`) end the turn placing the staged tiles; ``54`` (:data:`DRAW`) draw one tile
(a pass when the pool is empty).

Observation (float32, seen from the observing seat; relative seat ``r`` is the player ``r`` places after the
observer in turn order, 0 = self; seat blocks are padded to 4 with zeros): the sections of :data:`LAYOUT` (a
:class:`tableenvs.core.layout.Layout`; the table in ``docs/rummikub.md`` is its ``markdown_table()``, checked by the
tests).

Hidden: other players' racks and staged tiles, and the order of the pool: the seat sees what ``Rummikub.seen_by``
says (its own rack; the staged tiles only while it stages them, ``Rummikub.sees_staged``).
"""

from __future__ import annotations

import numpy as np

from tableenvs.core import layout

from .rules import NUM_TILES, RACK_SIZE, Rummikub
from .tiles import TILE_TYPES, TILE_VALUES, tile_count, tile_name

COMMIT = TILE_TYPES  # 53
DRAW = TILE_TYPES + 1  # 54
NUM_ACTIONS = TILE_TYPES + 2
MAX_SEATS = 4
SCORE_SCALE = 100.0


#: The observation's sections in order: ``(name, size, content)``.
LAYOUT = layout.Layout(
    [
        ("rack", TILE_TYPES, "own rack, count of each tile type 0..2 (staged tiles included)"),
        ("staged", TILE_TYPES, "own staged tiles 0..2; zeros unless the observer is the player staging"),
        ("table", TILE_TYPES, "table tile counts as of the last commit (staging is private until commit)"),
        ("last_placed", TILE_TYPES, "tiles the previous turn placed (zeros after a draw, pass or failed play)"),
        ("rack_sizes", MAX_SEATS, "tiles on each rack by relative seat, / 14"),
        ("opened", MAX_SEATS, "1 if that player has made its opening meld this game"),
        ("to_act", MAX_SEATS, "one-hot relative seat of the player to act"),
        ("scores", MAX_SEATS, "episode points so far by relative seat, / 100"),
        ("pool", 1, "tiles left in the pool, / 106"),
        ("passes", 1, "passes in a row since the pool ran out, / number of players"),
        ("num_players", 3, "one-hot 2, 3, 4 players"),
        ("game", 1, "games finished in the episode, / `games_per_episode`"),
        ("turn", 1, "turns played in the episode, / `max_turns`"),
    ]
)
Layout = LAYOUT  # the name of the former class of offsets: ``Layout.RACK`` etc. still read them
OBSERVATION_SIZE = LAYOUT.size

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
    """Writes observations of a :class:`Rummikub` game; one per env (one compiled call, no per-step objects)."""

    #: Raise when an observation entry changes meaning (saved models record it; tableenvs.core.layout.layout_version).
    LAYOUT_VERSION = 1
    #: The number of action ids (tableenvs.core.layout.Encoder).
    num_actions = NUM_ACTIONS

    def __init__(self, num_players: int, games_per_episode: int = 1):
        self.num_players = num_players
        self.size = OBSERVATION_SIZE
        self.low, self.high = observation_bounds(games_per_episode)
        self.observation_layout = LAYOUT
        self._opened_flags: list[bool] = []  # the last game.opened seen, and it as the array ``_fill`` reads
        self._opened = np.zeros(num_players, np.bool_)

    def fill(self, game: Rummikub, seat: int, out: np.ndarray) -> None:
        """Write ``seat``'s observation into the zeroed float32 vector ``out``.

        Called at every decision: one call of the compiled :func:`_fill` (a third of the time of slice copies and
        per-entry writes from Python). It writes the parts of ``game.seen_by(seat)`` (no tuple per observation): the
        seat's own rack, and the staged tiles only when ``game.sees_staged(seat)``."""
        if game.opened != self._opened_flags:  # the engine's list of flags changes at a player's first commit only
            self._opened_flags = list(game.opened)
            self._opened = np.array(game.opened, np.bool_)
        _compiled_fill()(
            out,
            game.racks,
            game.staged,
            game.table,
            game.last_placed,
            game.scores,
            self._opened,
            seat,
            game.to_act,
            game.sees_staged(seat),
            game.pool_size,
            game.passes,
            len(game.results),
            game.games_per_episode,
            game.turn,
            game.max_turns,
        )

    fill_observation = fill  # the name the Encoder protocol (tableenvs.core.layout) gives it

    @staticmethod
    def fill_mask(game: Rummikub, mask: np.ndarray) -> None:
        """Set the legal action ids of the player to act in the zeroed int8 ``mask``."""
        stage_mask, can_commit, can_draw = game.legal()
        mask[:TILE_TYPES] = stage_mask
        mask[COMMIT] = can_commit
        mask[DRAW] = can_draw

    @staticmethod
    def apply(game: Rummikub, action: int) -> list[float] | None:
        """Make the move of action id ``action``: stage a tile, commit or draw; the episode's scores if it ended."""
        if action < TILE_TYPES:
            game.stage(action)
            return None
        if action == COMMIT:
            return game.commit()
        return game.draw()

    @staticmethod
    def describe(game: Rummikub, action: int) -> str:
        """``"stage red 7"``, ``"commit 3 tile(s)"``, ``"draw"`` or ``"pass (pool empty)"``."""
        if action < TILE_TYPES:  # most actions (the event log describes every one)
            return ACTION_TEXT[action]
        if action == COMMIT:
            return f"commit {tile_count(game.staged)} tile(s)"
        return "pass (pool empty)" if game.pool_size == 0 else ACTION_TEXT[action]


# The observation's offsets as plain ints (the compiled ``_fill`` reads them as constants).
_RACK, _STAGED, _TABLE, _LAST_PLACED = LAYOUT.RACK, LAYOUT.STAGED, LAYOUT.TABLE, LAYOUT.LAST_PLACED
_RACK_SIZES, _OPENED, _TO_ACT, _SCORES = LAYOUT.RACK_SIZES, LAYOUT.OPENED, LAYOUT.TO_ACT, LAYOUT.SCORES
_POOL, _PASSES, _NUM_PLAYERS, _GAME, _TURN = LAYOUT.POOL, LAYOUT.PASSES, LAYOUT.NUM_PLAYERS, LAYOUT.GAME, LAYOUT.TURN


def _fill(
    out, racks, staged, table, last_placed, scores, opened, seat, to_act, show_staged, pool, passes, games,
    games_per_episode, turn, max_turns,
):  # fmt: skip
    """``seat``'s observation into the zeroed ``out`` (the sections of :data:`LAYOUT`; relative seat ``r`` is
    absolute seat ``(seat + r) % n``); the staged tiles only with ``show_staged``. Compiled: :func:`_compiled_fill`."""
    n = racks.shape[0]
    for t in range(TILE_TYPES):
        out[_RACK + t] = racks[seat, t]
        out[_TABLE + t] = table[t]
        out[_LAST_PLACED + t] = last_placed[t]
    if show_staged:
        for t in range(TILE_TYPES):
            out[_STAGED + t] = staged[t]
    for r in range(n):
        s = (seat + r) % n
        size = 0
        for t in range(TILE_TYPES):
            size += racks[s, t]
        out[_RACK_SIZES + r] = size / RACK_SIZE
        if opened[s]:
            out[_OPENED + r] = 1.0
        out[_SCORES + r] = scores[s] / SCORE_SCALE
    out[_TO_ACT + (to_act - seat) % n] = 1.0
    out[_POOL] = pool / NUM_TILES
    out[_PASSES] = passes / n
    out[_NUM_PLAYERS + n - 2] = 1.0
    out[_GAME] = games / games_per_episode
    out[_TURN] = turn / max_turns


_COMPILED_FILL = None


def _compiled_fill():
    """:func:`_fill` compiled with numba (once per process), cached on disk as the solver's kernels are."""
    global _COMPILED_FILL
    if _COMPILED_FILL is None:
        import numba

        from ._solver_kernel import _cached_jit, cache_dir

        _COMPILED_FILL = _cached_jit(_fill, numba, cache_dir()) or numba.njit(cache=False)(_fill)
    return _COMPILED_FILL
