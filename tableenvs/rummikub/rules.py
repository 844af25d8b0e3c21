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
from typing import TYPE_CHECKING, Any

import numpy as np

from tableenvs.core import state
from tableenvs.core.engine import RestorableEngine, RulesError
from tableenvs.core.validation import check_bool, check_choice, check_int

from .melds import Meld
from .solver import TurnSweep, _arranged, arrange, is_valid_play
from .tiles import COLOURS, COPIES, JOKER, JOKERS, NUMBERS, TILE_TYPES, TILE_VALUES, tile_name

RACK_SIZE = 14  # tiles dealt to each player
PENALTY_TILES = 3  # tiles drawn after a failed play (strict_commit=False)
NUM_TILES = 106
POOL_EXHAUSTED = ("lowest_rack", "draw")
FULL_SET = np.array([COPIES] * (TILE_TYPES - 1) + [JOKERS], dtype=np.int64)
FULL_SET.setflags(write=False)
_TILE_NAMES = {tile_name(t): t for t in range(TILE_TYPES)}
#: Largest ``max_turns`` and ``games_per_episode`` (2**53: the turn counters stay exact as floats and fit the int64
#: arguments of the compiled observation code)
MAX_COUNT = state.MAX_INT


def _check_count(name: str, value: Any) -> int:
    """An integer option in ``1..MAX_COUNT``; the ``ValueError`` names the bound that ``value`` breaks."""
    value = check_int(name, value, 1)
    if value > MAX_COUNT:
        raise ValueError(f"{name} must be <= 2**53 ({MAX_COUNT}), got {value}")
    return value


#: Points of all 106 tiles (a joker 30): no rack total, and no game's score, is larger
ALL_POINTS = 2 * 4 * sum(range(1, NUMBERS + 1)) + JOKERS * 30


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


# Per tile type its most opening points (a joker stands for at most a 13) * 128 + 1: one dot product of a count
# vector gives its points bound (bits 7..) and its number of tiles (bits 0..6: at most 106), asked at every decision
# of a player who has not opened (a third of the time of a dot and a sum)
_BOUND_AND_COUNT = np.array([(t % 13 + 1) * 128 + 1 for t in range(52)] + [13 * 128 + 1], dtype=np.int64)


def _opening_bound(tiles: np.ndarray) -> int:
    """Upper bound on the opening points of ``tiles`` (a joker at most 13); 0 below 3 tiles (no meld)."""
    packed = int(tiles.dot(_BOUND_AND_COUNT))
    return packed >> 7 if packed & 127 >= 3 else 0


def rack_total(rack: np.ndarray) -> int:
    """Points on a rack: face values, a joker 30."""
    return int(rack @ TILE_VALUES)


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
            if opening and _opening_bound(rack) < max(self.min_initial, 1):
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
            elif opening and _opening_bound(staged) < max(self.min_initial, 1):
                can_commit = False  # exact shortcut: an opening needs a meld (3 tiles: bound 0 below) and min_initial
            else:
                if staged_is_play is None:  # never: a tile is only playable when the solver was asked
                    raise RuntimeError("Rummikub.legal: playable tiles without the solver's verdict on the staged ones")
                can_commit = staged_is_play
            self._staged_is_play = staged_is_play if anything_staged else None
            self._legal = (stage_mask, can_commit, not anything_staged)
        return self._legal

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

    def load_record(self, record: dict[str, Any], rng: np.random.Generator) -> Rummikub:
        """A copy of this (fresh) engine, with its options, in the state of :meth:`to_record`'s dict; raises
        :class:`~tableenvs.core.state.StateError` naming a bad field. This engine is left unchanged.

        Besides each field's type and range, the record must be consistent (``docs/rummikub.md``, State API): the 106
        tiles accounted for once; the arrangement valid melds of exactly the table; staged tiles part of the acting
        rack, none once the episode ended; the counters (game number, results, turn against ``max_turns``, passes,
        commits) and the ``over`` / ``truncated`` flags agreeing with each other; scores the sum of the results'.
        """
        n = self.num_players
        game = self.copy(rng)
        require = state.require

        def get(key: str) -> Any:
            return state.field(record, key, "rules")

        def counts(value: Any, where: str) -> np.ndarray:
            return np.array(state.int_list(value, where, 0, 2, TILE_TYPES), np.int64)

        game.racks = np.array(
            [counts(rack, f"rules.racks[{s}]") for s, rack in enumerate(state.as_list(get("racks"), "rules.racks", n))],
            np.int64,
        ).reshape(n, TILE_TYPES)
        game.table = counts(get("table"), "rules.table")
        game.staged = counts(get("staged"), "rules.staged")
        game.last_placed = counts(get("last_placed"), "rules.last_placed")
        game.pool = np.array(state.int_list(get("pool"), "rules.pool", 0, TILE_TYPES - 1, most=NUM_TILES), np.int64)
        game._drawn = 0
        game.opened = state.bool_list(get("opened"), "rules.opened", n)
        game.scores = np.array(
            [
                state.as_float(x, f"rules.scores[{s}]")
                for s, x in enumerate(state.as_list(get("scores"), "rules.scores", n))
            ]
        )
        game.to_act = state.as_int(get("to_act"), "rules.to_act", 0, n - 1)
        game.game_number = state.as_int(get("game_number"), "rules.game_number", 1, self.games_per_episode)
        game.turn = state.as_int(get("turn"), "rules.turn", 0, self.max_turns)
        game.passes = state.as_int(get("passes"), "rules.passes", 0, n)
        game.commits = state.as_int(get("commits"), "rules.commits", 0, game.turn)
        game.over = state.as_bool(get("over"), "rules.over")
        game.truncated = state.as_bool(get("truncated"), "rules.truncated")
        game.arrangement = melds_from_record(get("arrangement"), "rules.arrangement")
        game.results = [
            result_from_record(result, f"rules.results[{i}]", n)
            for i, result in enumerate(state.as_list(get("results"), "rules.results", most=self.games_per_episode))
        ]
        game.log = []
        game._legal = None
        game._staged_is_play = None
        everything = game.racks.sum(axis=0) + game.table + np.bincount(game.pool, minlength=TILE_TYPES)
        if not np.array_equal(everything, FULL_SET):
            raise state.StateError("rules: racks, table and pool must hold the 106 tiles exactly")
        if (game.staged > game.racks[game.to_act]).any():
            raise state.StateError("rules.staged must be part of the rack of the player to act")
        placed = sorted(t for meld in game.arrangement for t in meld.tiles)
        if placed != np.repeat(np.arange(TILE_TYPES), game.table).tolist():
            raise state.StateError("rules.arrangement must hold exactly the tiles on the table")
        require(
            (game.last_placed <= game.table).all(), "rules.last_placed", "the tiles placed last must be on the table"
        )
        # the counters and flags of the episode
        finished = len(game.results)
        require(
            [result.number for result in game.results] == list(range(1, finished + 1)),
            "rules.results",
            "the results must be numbered 1, 2, ... in order",
        )
        require(
            finished == game.game_number - (not game.over),
            "rules.results",
            f"game {game.game_number} {'has ended' if game.over else 'is running'}, so {finished} result(s) is wrong",
        )
        require(
            game.over == (finished == self.games_per_episode),
            "rules.over",
            f"the episode is over exactly when its {self.games_per_episode} game(s) are finished",
        )
        require(not (game.over and game.truncated), "rules.truncated", "an episode that is over is not truncated")
        live = not (game.over or game.truncated)
        require(
            game.truncated == (not game.over and game.turn >= self.max_turns),
            "rules.truncated",
            f"the episode is truncated exactly when it reaches max_turns ({self.max_turns}) before it ends "
            f"(turn {game.turn}, truncated {game.truncated})",
        )
        require(game.passes < n or not live, "rules.passes", f"{n} passes in a row end the game")
        require(game.passes == 0 or game.pool_size == 0, "rules.passes", "players pass only once the pool is empty")
        require(live or not game.staged.any(), "rules.staged", "nothing is staged once the episode has ended")
        require(
            not live or all(game.racks[s].any() for s in range(n)),
            "rules.racks",
            "a player whose rack is empty has gone out: the game cannot be running",
        )
        if live and game.staged.any():  # staged only while some legal play holds them all (the sweep's mask says)
            opening = not game.opened[game.to_act]
            rack = game.racks[game.to_act]
            require(
                game.legal()[0].any()
                or is_valid_play(game.table, rack, game.staged, opening=opening, min_initial=self.min_initial),
                "rules.staged",
                "no legal play of the player to act holds every staged tile",
            )
        allowed = {"out", self.pool_exhausted}
        for i, result in enumerate(game.results):
            require(result.end in allowed, f"rules.results[{i}].end", f"must be one of {sorted(allowed)}")
        totals = np.sum([result.scores for result in game.results], axis=0) if game.results else np.zeros(n)
        require(
            np.allclose(game.scores, totals, rtol=0.0, atol=1e-6),
            "rules.scores",
            "the episode's scores must be the sum of its games' scores",
        )
        return game


def melds_record(melds: Sequence[Meld]) -> list[Any]:
    return [[meld.kind, list(meld.tiles), list(meld.stands_for)] for meld in melds]


def melds_from_record(value: Any, where: str) -> tuple[Meld, ...]:
    """Melds from :func:`melds_record`'s lists; :class:`~tableenvs.core.state.StateError` unless each is a valid
    meld."""
    melds = []
    for i, meld in enumerate(state.as_list(value, where, most=NUM_TILES // 3)):
        kind, tiles, stands_for = state.as_list(meld, f"{where}[{i}]", 3)
        if kind not in ("group", "run"):
            raise state.StateError(f"{where}[{i}]: kind must be 'group' or 'run', got {kind!r}")
        tiles = state.int_list(tiles, f"{where}[{i}].tiles", 0, TILE_TYPES - 1, most=NUMBERS)
        stands_for = state.int_list(stands_for, f"{where}[{i}].stands_for", 0, TILE_TYPES - 1, len(tiles))
        problem = meld_problem(kind, tiles, stands_for)
        if problem:
            raise state.StateError(f"{where}[{i}]: not a valid {kind}: {problem}")
        melds.append(Meld(kind, tuple(tiles), tuple(stands_for)))
    return tuple(melds)


def meld_problem(kind: str, tiles: Sequence[int], stands_for: Sequence[int]) -> str:
    """Why ``Meld(kind, tiles, stands_for)`` is not a meld (``""`` if it is): a group is 3 or 4 tiles of one number in
    different colours, a run 3..13 consecutive numbers of one colour ascending; each tile stands for itself, a joker
    for a numbered type."""
    if any(t != s and t != JOKER for t, s in zip(tiles, stands_for, strict=True)):
        return "a tile other than a joker must stand for itself"
    if JOKER in stands_for:
        return "a joker must stand for a numbered tile"
    colours = [s // NUMBERS for s in stands_for]
    numbers = [s % NUMBERS for s in stands_for]
    if kind == "group":
        if not 3 <= len(tiles) <= len(COLOURS):
            return f"a group has 3 or 4 tiles, not {len(tiles)}"
        if len(set(numbers)) != 1 or colours != sorted(set(colours)):
            return "a group's tiles have one number and different colours (in colour order)"
        return ""
    if not 3 <= len(tiles) <= NUMBERS:
        return f"a run has 3..13 tiles, not {len(tiles)}"
    if len(set(colours)) != 1 or numbers != list(range(numbers[0], numbers[0] + len(numbers))):
        return "a run's tiles have one colour and consecutive numbers (ascending)"
    return ""


def result_record(result: GameResult) -> dict[str, Any]:
    return {
        "number": result.number,
        "end": result.end,
        "winners": list(result.winners),
        "scores": list(result.scores),
        "rack_totals": list(result.rack_totals),
        "arrangement": melds_record(result.arrangement),
    }


def result_from_record(value: Any, where: str, num_players: int | None = None) -> GameResult:
    """A :class:`GameResult` from :func:`result_record`'s dict (``num_players``, when given, fixes the seats)."""
    n = num_players
    end = state.field(value, "end", where)
    if end not in ("out", "lowest_rack", "draw"):
        raise state.StateError(f"{where}.end must be 'out', 'lowest_rack' or 'draw', got {end!r}")
    top = 3 if n is None else n - 1
    winners = state.int_list(state.field(value, "winners", where), f"{where}.winners", 0, top, most=top + 1)
    state.distinct(winners, f"{where}.winners")
    scores = [
        state.as_float(x, f"{where}.scores[{i}]")
        for i, x in enumerate(state.as_list(state.field(value, "scores", where), f"{where}.scores", n, most=4))
    ]
    totals = state.int_list(
        state.field(value, "rack_totals", where), f"{where}.rack_totals", 0, ALL_POINTS, len(scores)
    )
    state.require(
        (len(winners) == 1) if end == "out" else (not winners) if end == "draw" else bool(winners),
        f"{where}.winners",
        f"a game that ends {end!r} has {'one winner' if end == 'out' else 'no winner' if end == 'draw' else 'winners'}",
    )
    state.require(max(winners, default=0) < len(scores), f"{where}.winners", "a winner must be a seat of the scores")
    state.require(
        all(abs(x) <= ALL_POINTS for x in scores) and abs(sum(scores)) <= 1e-6 * ALL_POINTS,
        f"{where}.scores",
        f"a game's scores are at most {ALL_POINTS} points each and sum to 0",
    )
    return GameResult(
        state.as_int(state.field(value, "number", where), f"{where}.number", 1),
        end,
        tuple(winners),
        tuple(scores),
        tuple(totals),
        melds_from_record(state.field(value, "arrangement", where), f"{where}.arrangement"),
    )


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
