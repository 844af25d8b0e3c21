"""Rummikub rules engine: tile pool, racks, table, turns, opening meld, staging, scoring, pool exhaustion.

Where you are: the pure rules layer of ``tableenvs/rummikub`` (no RL or space concepts). The encoder
(``encoder.py``) turns a :class:`Rummikub` state into vectors and action ids; the AEC adapter (``env.py``)
drives it. Legality of plays comes from the meld-partition solver (``solver.py``); this module never
decides melds itself. Rules in English and every decision: ``docs/rummikub.md``.

Units: tiles are type ids (``colour * 13 + number - 1``, joker 52) and positions are int64 count vectors
of length 53; points are face values with a joker worth 30 on a rack (``TILE_VALUES``).

A turn, tile by tile: the player to act either *stages* rack tiles one at a time (staging is private;
a tile may be staged only while some legal play contains every staged tile) and then *commits* them, or,
with nothing staged, *draws* one tile from the pool (a *pass* once the pool is empty). Every staged
prefix therefore has a legal completion, so a player can never get stuck. The first play of each player
(the opening) uses only its own tiles, leaves the table untouched and is worth ``min_initial`` points.
A game ends when a player empties its rack, or, once the pool is empty, when every player has passed in
a row (``pool_exhausted`` decides the scores); with ``end_on_empty_pool=True`` (the write-up's literal
rule) it ends instead at the end of the turn in which the pool runs out (same scoring). An episode is
``games_per_episode`` games; it is truncated after ``max_turns`` turns in total.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from tableenvs.core import state
from tableenvs.core.engine import RestorableEngine, RulesError, ViewedEngine
from tableenvs.core.validation import check_bool, check_choice, check_int

from .melds import Meld, opening_bound
from .solver import TurnSweep, _arranged, arrange, is_valid_play
from .tiles import FULL_SET, NUM_TILES, TILE_TYPES, parse_tiles, rack_total, tile_ids, tile_name, tiles_played_text

RACK_SIZE = 14  # tiles dealt to each player
PENALTY_TILES = 3  # tiles drawn after a failed play (strict_commit=False)
POOL_EXHAUSTED = ("lowest_rack", "draw")
#: Largest ``max_turns`` and ``games_per_episode`` (2**53: the turn counters stay exact as floats and fit the int64
#: arguments of the compiled observation code)
MAX_COUNT = state.MAX_INT


def _check_count(name: str, value: Any) -> int:
    """An integer option in ``1..MAX_COUNT``; the ``ValueError`` names the bound that ``value`` breaks."""
    value = check_int(name, value, 1)
    if value > MAX_COUNT:
        raise ValueError(f"{name} must be <= 2**53 ({MAX_COUNT}), got {value}")
    return value


@dataclass(frozen=True)
class GameResult:
    """How one game of the episode ended.

    ``end``: ``"out"`` (a player emptied its rack), ``"lowest_rack"`` or ``"draw"`` (the pool ran out and
    every player passed). ``winners``: winning seats (empty for a draw). ``scores``: points of this game
    by seat (they sum to 0). ``rack_totals``: points left on each rack (a joker 30). ``arrangement``: the
    table's melds at the end of the game.
    """

    number: int
    end: str
    winners: tuple[int, ...]
    scores: tuple[float, ...]
    rack_totals: tuple[int, ...]
    arrangement: tuple[Meld, ...] = ()


class SeatView(NamedTuple):
    """What one seat may see now of the tiles off the table: Rummikub's one visibility decision
    (:meth:`Rummikub.seen_by`), read alike by the text view, the picture, the world sampler and the public move text
    (``docs/rummikub.md``, "What a seat sees"). The parts are the engine's arrays (not copies): read them only. The
    table, the tiles placed last turn, every rack's size, the opened flags, the scores and the pool's size are
    public; the others' racks and the pool's order it never sees."""

    rack: np.ndarray  # its own rack, as counts (its staged tiles included)
    staged: np.ndarray | None  # the tiles staged this turn when it is the one staging them (``sees_staged``)


class Rummikub:
    """State and transitions of a Rummikub episode (one or more games); see the module docstring.

    Public state (read it, do not write it): ``racks`` (n x 53 counts), ``table`` (53 counts), ``staged``
    (53 counts, part of the acting player's rack), ``opened`` (per seat), ``to_act``, ``pool_size``,
    ``scores`` (episode totals by seat), ``game_number`` (1-based), ``turn`` (turns completed in the
    episode), ``passes`` (passes in a row since the pool ran out), ``last_placed`` (tiles the previous
    turn placed), ``arrangement`` (the solver's melds of the table, updated at each commit), ``results``
    (one :class:`GameResult` per finished game), ``over``, ``truncated``, ``log`` (outcome lines).
    """

    def __init__(
        self,
        num_players: int = 4,
        *,
        min_initial: int = 30,
        draw_after_play: bool = False,
        strict_commit: bool = True,
        pool_exhausted: str = "lowest_rack",
        games_per_episode: int = 1,
        max_turns: int = 1000,
        end_on_empty_pool: bool = False,
    ):
        self.num_players = check_int("num_players", num_players, 2, 4)
        self.min_initial = check_int("min_initial", min_initial, 0)
        self.draw_after_play = check_bool("draw_after_play", draw_after_play)
        self.strict_commit = check_bool("strict_commit", strict_commit)
        self.pool_exhausted = check_choice("pool_exhausted", pool_exhausted, POOL_EXHAUSTED)
        self.games_per_episode = _check_count("games_per_episode", games_per_episode)
        self.max_turns = _check_count("max_turns", max_turns)
        self.end_on_empty_pool = check_bool("end_on_empty_pool", end_on_empty_pool)
        n = self.num_players
        self.racks = np.zeros((n, TILE_TYPES), np.int64)
        self.table = np.zeros(TILE_TYPES, np.int64)
        self.staged = np.zeros(TILE_TYPES, np.int64)
        self.last_placed = np.zeros(TILE_TYPES, np.int64)
        self.pool = np.zeros(0, np.int64)  # tile types, drawn from index ``_drawn`` on
        self._drawn = 0
        self.opened = [False] * n
        self.scores = np.zeros(n, np.float64)
        self.to_act = 0
        self.game_number = 0
        self.turn = 0
        self.passes = 0
        self.arrangement: tuple[Meld, ...] = ()
        self.results: list[GameResult] = []
        self.over = False
        self.truncated = False
        self.log: list[str] = []
        self.rng: np.random.Generator | None = None
        self._legal: tuple[np.ndarray, bool, bool] | None = None  # cached per decision
        self._staged_is_play: bool | None = None  # set with ``_legal`` when the solver was asked
        self._sweeps = TurnSweep()  # the solver's sweep of this turn, reused as tiles are staged
        self.commits = 0  # successful plays in the episode (the adapter reads it to publish the arrangement)

    # ------------------------------------------------------------------ setup

    def start(
        self,
        rng: np.random.Generator,
        *,
        racks: Sequence[Any] | None = None,
        table: Any = None,
        pool: Any = None,
        first_player: int | None = None,
        opened: Sequence[bool] | None = None,
    ) -> None:
        """Begin a new episode. The keywords script the first game (tiles as ids or names, see ``parse_tiles``).

        ``racks``: one tile list per seat (any sizes); ``table``: tiles of a valid table (default empty);
        ``pool``: the pool in drawing order (first drawn first); it must hold exactly the tiles not on a rack
        or the table. Without ``pool`` the rest is shuffled; without ``racks`` 14 tiles each are dealt from
        the rest. ``first_player``: seat to act first (default random). ``opened``: per-seat opened flags
        (default all False; a non-empty table with no opened player is allowed for scripted positions).
        """
        n = self.num_players
        table_counts = np.zeros(TILE_TYPES, np.int64) if table is None else parse_tiles("table", table)
        rack_counts = None
        if racks is not None:
            if not isinstance(racks, (list, tuple)) or len(racks) != n:
                raise ValueError(f"racks must list {n} tile lists (one per seat), got {racks!r}")
            rack_counts = np.array([parse_tiles(f"racks[{s}]", r) for s, r in enumerate(racks)], np.int64)
            empty = [s for s in range(n) if not rack_counts[s].any()]
            if empty:
                raise ValueError(f"racks[{empty[0]}] is empty; every rack needs at least one tile at the start")
        used = table_counts + (rack_counts.sum(axis=0) if rack_counts is not None else 0)
        over_supply = np.flatnonzero(used > FULL_SET)
        if over_supply.size:
            t = int(over_supply[0])
            raise ValueError(f"racks and table hold {used[t]} of {tile_name(t)}; the game has {FULL_SET[t]}")
        if table is not None and table_counts.any() and arrange(table_counts) is None:
            raise ValueError("table is not valid: its tiles cannot be partitioned into melds")
        rest = FULL_SET - used
        pool_order = None
        if pool is not None:
            if rack_counts is None:
                raise ValueError("a scripted pool needs scripted racks (pass racks too)")
            pool_order = np.array(tile_ids("pool", pool), np.int64)
            pool_counts = np.bincount(pool_order, minlength=TILE_TYPES)
            if not np.array_equal(pool_counts, rest):
                diff = np.flatnonzero(pool_counts != rest)
                t = int(diff[0])
                raise ValueError(
                    f"pool must hold exactly the {int(rest.sum())} tiles not on racks or the table; "
                    f"it has {pool_counts[t]} of {tile_name(t)}, expected {rest[t]}"
                )
        if first_player is not None:
            first_player = check_int("first_player", first_player, 0, n - 1)
        if opened is not None:
            if not isinstance(opened, (list, tuple)) or len(opened) != n:
                raise ValueError(f"opened must list {n} booleans (one per seat), got {opened!r}")
            opened = [check_bool(f"opened[{s}]", flag) for s, flag in enumerate(opened)]
        # Everything is checked: only now change the game (a failed start leaves the previous episode as it was).
        self.rng = rng
        self.scores[:] = 0.0
        self.results = []
        self.turn = 0
        self.commits = 0
        self.over = self.truncated = False
        self.log = []
        self.game_number = 0
        self._deal(rack_counts, table_counts, pool_order, first_player, opened)

    def _deal(
        self,
        racks: np.ndarray | None,
        table: np.ndarray,
        pool_order: np.ndarray | None,
        first_player: int | None,
        opened: Sequence[bool] | None,
    ) -> None:
        """Start the next game of the episode (scripted parts given, the rest from the rng)."""
        rng = self.rng
        if rng is None:
            raise RuntimeError("Rummikub: no generator to deal with (start() sets it)")
        n = self.num_players
        self.game_number += 1
        self.table[:] = table
        rest = FULL_SET - table - (racks.sum(axis=0) if racks is not None else 0)
        if pool_order is None:
            pool_order = rng.permutation(np.repeat(np.arange(TILE_TYPES), rest))
        if racks is None:
            racks = np.zeros((n, TILE_TYPES), np.int64)
            for seat in range(n):
                racks[seat] = np.bincount(pool_order[seat * RACK_SIZE : (seat + 1) * RACK_SIZE], minlength=TILE_TYPES)
            pool_order = pool_order[n * RACK_SIZE :]
        self.racks[:] = racks
        self.pool = pool_order
        self._drawn = 0
        self.staged[:] = 0
        self.last_placed[:] = 0
        self.opened = list(opened) if opened is not None else [False] * n
        self.to_act = int(rng.integers(n)) if first_player is None else first_player
        self.passes = 0
        self.arrangement = tuple(arrange(self.table) or ()) if self.table.any() else ()
        self._legal = None

    # ------------------------------------------------------------------ queries

    @property
    def pool_size(self) -> int:
        return len(self.pool) - self._drawn

    def legal(self) -> tuple[np.ndarray, bool, bool]:
        """``(stage_mask, can_commit, can_draw)`` of the player to act, computed once per decision.

        ``stage_mask[t]``: some legal play contains the staged tiles plus one more of type ``t``.
        ``can_commit``: something is staged and (``strict_commit``) the staged tiles are a legal play,
        or (``strict_commit=False``) always once something is staged. ``can_draw``: nothing is staged.
        """
        if self._legal is None:
            seat = self.to_act
            opening = not self.opened[seat]
            rack = self.racks[seat]
            staged = self.staged
            staged_is_play = None  # whether the staged tiles are a legal play, when the solver was asked
            if opening and opening_bound(rack) < max(self.min_initial, 1):
                stage_mask = np.zeros(TILE_TYPES, bool)  # exact shortcut: the rack cannot reach min_initial
            else:
                # one sweep gives the mask and is_valid_play(staged), reused while the turn stages tiles; the
                # engine's positions are valid by construction, so this skips the public input validation
                stage_mask, staged_is_play = self._sweeps.legal(self.table, rack, staged, opening, self.min_initial)
            anything_staged = bool(np.count_nonzero(staged))  # as staged.any(), at a fifth of its cost on 53 entries
            if not anything_staged:
                can_commit = False
            elif not self.strict_commit or not np.count_nonzero(stage_mask):
                # strict: a feasible staged set that no tile extends is itself a legal play
                can_commit = True
            elif opening and opening_bound(staged) < max(self.min_initial, 1):
                can_commit = False  # exact shortcut: an opening needs a meld (3 tiles: bound 0 below) and min_initial
            else:
                if staged_is_play is None:  # never: a tile is only playable when the solver was asked
                    raise RuntimeError("Rummikub.legal: playable tiles without the solver's verdict on the staged ones")
                can_commit = staged_is_play
            self._staged_is_play = staged_is_play if anything_staged else None
            self._legal = (stage_mask, can_commit, not anything_staged)
        return self._legal

    def seen_by(self, seat: int) -> SeatView:
        """What ``seat`` may see now: its own rack, and the staged tiles when it stages them. The observation
        encoder reads the same two parts directly (no tuple per observation)."""
        return SeatView(self.racks[seat], self.staged if self.sees_staged(seat) else None)

    def sees_staged(self, seat: int) -> bool:
        """Whether ``seat`` sees the tiles staged this turn: only the player staging them (private until commit)."""
        return seat == self.to_act and not (self.over or self.truncated)

    def rack_totals(self) -> list[int]:
        return [rack_total(rack) for rack in self.racks]

    # ------------------------------------------------------------------ transitions

    def stage(self, t: int) -> None:
        """Stage one tile of type ``t`` from the acting player's rack."""
        self._check_live()
        if not self.legal()[0][t]:
            if self.racks[self.to_act][t] <= self.staged[t]:
                raise RulesError(f"cannot stage {tile_name(t)}: the rack holds no more of it")
            raise RulesError(f"cannot stage {tile_name(t)}: no legal play contains it with the staged tiles")
        self.staged[t] += 1
        self._legal = None

    def commit(self) -> list[float] | None:
        """End the turn placing the staged tiles; returns this game's scores by seat if the game ended."""
        self._check_live()
        if not self.legal()[1]:
            raise RulesError(
                "cannot commit: nothing staged" if not self.staged.any() else "staged tiles are no legal play"
            )
        seat = self.to_act
        opening = not self.opened[seat]
        staged = self.staged
        rack = self.racks[seat]
        if self.strict_commit or self._staged_valid(rack, opening):
            # the decision's sweep already holds the arrangement of the table after the play (not for an opening)
            melds = self._sweeps.played_arrangement(self.table, rack, staged, opening, self.min_initial)
            self.log.append(f"player_{seat} played {tiles_played_text(staged)}")  # public: the table shows them
            self.table += staged
            rack -= staged
            self.last_placed[:] = staged
            staged[:] = 0
            self.opened[seat] = True
            self.passes = 0
            self.commits += 1
            if melds is None:
                melds = _arranged(self.table)
                if melds is None:  # never: the play is legal
                    raise RuntimeError("Rummikub.commit: the table after a legal play has no arrangement")
            self.arrangement = tuple(melds)
            if not np.count_nonzero(rack):
                return self._end_turn(self._score_out(seat))
            if self.draw_after_play:
                self._draw_tiles(seat, 1)
            return self._end_turn(None)
        # failed play (strict_commit=False): tiles return, the table stays, penalty draw
        staged[:] = 0
        self.last_placed[:] = 0
        drawn = self._draw_tiles(seat, PENALTY_TILES)
        self.log.append(f"player_{seat}: invalid play taken back; penalty: draws {drawn} tile(s)")
        if drawn == 0:
            return self._end_turn(self._pass())
        return self._end_turn(None)

    def draw(self) -> list[float] | None:
        """End the turn drawing one tile (or passing when the pool is empty); returns scores if the game ended."""
        self._check_live()
        if not self.legal()[2]:
            raise RulesError("cannot draw with tiles staged; commit them (or keep staging)")
        self.last_placed[:] = 0
        if self._draw_tiles(self.to_act, 1) == 0:
            return self._end_turn(self._pass())
        return self._end_turn(None)

    # ------------------------------------------------------------------ internals

    def _staged_valid(self, rack: np.ndarray, opening: bool) -> bool:
        """Whether the (non-empty) staged tiles are a legal play: from the decision's sweep when it ran."""
        if self._staged_is_play is not None:
            return self._staged_is_play
        return is_valid_play(self.table, rack, self.staged, opening=opening, min_initial=self.min_initial)

    def _check_live(self) -> None:
        if self.over or self.truncated:
            raise RulesError("the episode is over; start a new one")

    def _draw_tiles(self, seat: int, count: int) -> int:
        take = min(count, self.pool_size)
        rack = self.racks[seat]
        for t in self.pool[self._drawn : self._drawn + take]:
            rack[t] += 1
        self._drawn += take
        return take

    def _pass(self) -> list[float] | None:
        self.passes += 1
        if self.passes < self.num_players:
            return None
        return self._pool_end("pool empty and every player passed")

    def _pool_end(self, why: str) -> list[float]:
        """End the game without a player going out: ``pool_exhausted`` decides (a draw, or the lowest rack)."""
        totals = self.rack_totals()
        n = self.num_players
        if self.pool_exhausted == "draw":
            self.log.append(f"game {self.game_number}: {why}: a draw")
            return self._finish("draw", (), [0.0] * n, totals)
        low = min(totals)
        winners = tuple(s for s in range(n) if totals[s] == low)
        losers_total = sum(totals[s] for s in range(n) if s not in winners)
        scores = [losers_total / len(winners) if s in winners else -float(totals[s]) for s in range(n)]
        names = ", ".join(f"player_{s}" for s in winners)
        self.log.append(f"game {self.game_number}: {why}; lowest rack ({low}): {names}")
        return self._finish("lowest_rack", winners, scores, totals)

    def _score_out(self, seat: int) -> list[float]:
        totals = self.rack_totals()
        scores = [-float(totals[s]) for s in range(self.num_players)]
        scores[seat] = float(sum(totals))
        self.log.append(f"game {self.game_number}: player_{seat} empties its rack (Rummikub!)")
        return self._finish("out", (seat,), scores, totals)

    def _finish(self, end: str, winners: tuple[int, ...], scores: list[float], totals: list[int]) -> list[float]:
        self.scores += scores
        self.results.append(
            GameResult(self.game_number, end, tuple(winners), tuple(scores), tuple(totals), self.arrangement)
        )
        self.log.append(f"game {self.game_number} scores: " + ", ".join(f"{s:+g}" for s in scores))
        if self.game_number >= self.games_per_episode:
            self.over = True
        return scores

    def _end_turn(self, game_scores: list[float] | None) -> list[float] | None:
        self.turn += 1
        if game_scores is None and self.end_on_empty_pool and self.pool_size == 0:
            game_scores = self._pool_end("the pool is drawn out (end_on_empty_pool)")
        self._legal = None
        if game_scores is not None and not self.over:
            self._deal(None, np.zeros(TILE_TYPES, np.int64), None, None, None)
        elif not self.over:
            self.to_act = (self.to_act + 1) % self.num_players
        if not self.over and self.turn >= self.max_turns:
            self.truncated = True
        return game_scores

    # ------------------------------------------------------------------ copies and records (the state API)

    def copy(self, rng: np.random.Generator) -> Rummikub:
        """An independent copy drawing from ``rng``: count arrays and lists the rules change in place are copied;
        the pool order, the arrangement, finished results and this decision's legal moves are shared (never
        changed in place); the solver's turn sweep (a cache of several MB) starts empty in the copy."""
        new = Rummikub.__new__(Rummikub)
        d = self.__dict__.copy()
        d["rng"] = rng
        for key in ("racks", "table", "staged", "last_placed", "scores"):
            d[key] = d[key].copy()
        for key in ("opened", "results", "log"):
            d[key] = d[key][:]
        d["_sweeps"] = TurnSweep()
        new.__dict__ = d
        return new

    def to_record(self) -> dict[str, Any]:
        """The episode as plain JSON values (the rules options are the env's); the pool as the tiles still to draw."""
        return {
            "racks": self.racks.tolist(),
            "table": self.table.tolist(),
            "staged": self.staged.tolist(),
            "last_placed": self.last_placed.tolist(),
            "pool": self.pool[self._drawn :].tolist(),
            "opened": list(self.opened),
            "scores": self.scores.tolist(),
            "to_act": self.to_act,
            "game_number": self.game_number,
            "turn": self.turn,
            "passes": self.passes,
            "commits": self.commits,
            "over": self.over,
            "truncated": self.truncated,
            "arrangement": melds_record(self.arrangement),
            "results": [result_record(result) for result in self.results],
        }


def melds_record(melds: Sequence[Meld]) -> list[Any]:
    return [[meld.kind, list(meld.tiles), list(meld.stands_for)] for meld in melds]


def result_record(result: GameResult) -> dict[str, Any]:
    return {
        "number": result.number,
        "end": result.end,
        "winners": list(result.winners),
        "scores": list(result.scores),
        "rack_totals": list(result.rack_totals),
        "arrangement": melds_record(result.arrangement),
    }


__all__ = [
    "FULL_SET",
    "NUM_TILES",
    "PENALTY_TILES",
    "POOL_EXHAUSTED",
    "RACK_SIZE",
    "GameResult",
    "Rummikub",
    "parse_tiles",
    "rack_total",
    "tile_ids",
]


if TYPE_CHECKING:  # the type checker holds the engine to the contract of tableenvs.core.engine
    _contract: type[RestorableEngine] = Rummikub
    _views: type[ViewedEngine] = Rummikub
