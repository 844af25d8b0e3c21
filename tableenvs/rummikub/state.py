"""Rummikub's rules state read back from its record: :func:`game_from_record`, the inverse of
``Rummikub.to_record``, checked in full, and the readers of its parts (melds, finished games' results).

Where you are: the Rummikub package, beside the rules engine (``rules.py``, which writes the records and knows
nothing of this module); ``TableEnv.set_state`` and ``from_state`` reach it through the adapter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from tableenvs.core import state

from .melds import Meld
from .rules import GameResult, Rummikub
from .solver import is_valid_play
from .tiles import ALL_POINTS, COLOURS, FULL_SET, JOKER, NUM_TILES, NUMBERS, TILE_TYPES


@dataclass(frozen=True)
class RummikubReader:
    """Reads a Rummikub engine back from its record with the options of ``engine`` (an env's; only its options are
    read; a :class:`~tableenvs.core.engine.StateReader`)."""

    engine: Rummikub

    def read(self, record: Any, rng: np.random.Generator) -> Rummikub:
        return game_from_record(self.engine, record, rng)


if TYPE_CHECKING:
    from tableenvs.core.engine import StateReader

    _reader: type[StateReader[Rummikub]] = RummikubReader


def game_from_record(engine: Rummikub, record: dict[str, Any], rng: np.random.Generator) -> Rummikub:
    """A copy of ``engine`` (only its options are read) in the state of ``Rummikub.to_record``'s dict; raises
    :class:`~tableenvs.core.state.StateError` naming a bad field. ``engine`` is left unchanged.

    Besides each field's type and range, the record must be consistent (``docs/rummikub.md``, State API): the 106
    tiles accounted for once; the arrangement valid melds of exactly the table; staged tiles part of the acting
    rack, none once the episode ended; the counters (game number, results, turn against ``max_turns``, passes,
    commits) and the ``over`` / ``truncated`` flags agreeing with each other; scores the sum of the results'.
    """
    n = engine.num_players
    game = engine.copy(rng)
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
        [state.as_float(x, f"rules.scores[{s}]") for s, x in enumerate(state.as_list(get("scores"), "rules.scores", n))]
    )
    game.to_act = state.as_int(get("to_act"), "rules.to_act", 0, n - 1)
    game.game_number = state.as_int(get("game_number"), "rules.game_number", 1, engine.games_per_episode)
    game.turn = state.as_int(get("turn"), "rules.turn", 0, engine.max_turns)
    game.passes = state.as_int(get("passes"), "rules.passes", 0, n)
    game.commits = state.as_int(get("commits"), "rules.commits", 0, game.turn)
    game.over = state.as_bool(get("over"), "rules.over")
    game.truncated = state.as_bool(get("truncated"), "rules.truncated")
    game.arrangement = melds_from_record(get("arrangement"), "rules.arrangement")
    game.results = [
        result_from_record(result, f"rules.results[{i}]", n)
        for i, result in enumerate(state.as_list(get("results"), "rules.results", most=engine.games_per_episode))
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
    require((game.last_placed <= game.table).all(), "rules.last_placed", "the tiles placed last must be on the table")
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
        game.over == (finished == engine.games_per_episode),
        "rules.over",
        f"the episode is over exactly when its {engine.games_per_episode} game(s) are finished",
    )
    require(not (game.over and game.truncated), "rules.truncated", "an episode that is over is not truncated")
    live = not (game.over or game.truncated)
    require(
        game.truncated == (not game.over and game.turn >= engine.max_turns),
        "rules.truncated",
        f"the episode is truncated exactly when it reaches max_turns ({engine.max_turns}) before it ends "
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
            or is_valid_play(game.table, rack, game.staged, opening=opening, min_initial=engine.min_initial),
            "rules.staged",
            "no legal play of the player to act holds every staged tile",
        )
    allowed = {"out", engine.pool_exhausted}
    for i, result in enumerate(game.results):
        require(result.end in allowed, f"rules.results[{i}].end", f"must be one of {sorted(allowed)}")
    totals = np.sum([result.scores for result in game.results], axis=0) if game.results else np.zeros(n)
    require(
        np.allclose(game.scores, totals, rtol=0.0, atol=1e-6),
        "rules.scores",
        "the episode's scores must be the sum of its games' scores",
    )
    return game


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
