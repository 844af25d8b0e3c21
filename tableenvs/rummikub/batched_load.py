"""Rummikub's batched engine started from a running AEC game: ``RummikubBatched.load_state(i, record)`` and
``load_env(i, env)`` (a search's sampled worlds).

Where you are: beside the batched engine (``batched.py``, whose ``_load_rows`` / ``_load_env_rows`` hooks call
:func:`load_rows` / :func:`load_env_rows`). A running game, read from its state record (``TableEnv.get_state()``'s
``rules``) or straight from a raw env's rules engine (``Rummikub``), becomes the engine's per-row arrays: the racks,
the table, the staged tiles (a turn under way), the tiles placed last turn, the pool in drawing order (its tail: the
future draws), the opened flags, the episode's scores, the counters of ``g`` and the generator row (the next game's
deal). There is nothing else to carry over: the staged tiles are the whole of a turn's progress (they stay on the
rack until the commit) and the table's arrangement is only read by ``get_state``, which replays.

What the engine caches across a turn is its masks' sweeps (``batched_masks.py``): each loaded row forgets them (its
compiled slots' mode and table sizes, and a Python ``TurnSweep`` that was used) and answers its first question with
a new sweep from the tiles staged so far, as the AEC env opened from the record does (a copy's ``TurnSweep`` starts
empty): the masks are the solver's either way, from the start of a turn or in the middle of one. A block of rows
loaded with one game sweeps once (its first row) and copies that row's compiled slots to the others. That sweep is
most of a load's cost (``benchmarks/vector_rummikub_load.py``). The observation is
the step kernel's own (``batched_kernels.observe_rows_kernel``, for the loaded rows only). From there a row plays on
as the AEC env does, draw for draw, through the end of its game and into the next (``tests/rummikub/
test_rummikub_batched_load.py``).

``get_state`` of a loaded row replays the actions played since the load in a copy of the game it was loaded from (the
engine replays every episode from its start; a loaded one has no start of its own), until its episode ends; the next
episode replays from its own start as every other row's. ``load_state`` keeps a copy of the record for that;
``load_env`` keeps the env it is given (no copy: a search's worlds are thrown away after loading), so that env must
stay as it is for ``get_state`` of those rows to answer (else a one-line error).
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tableenvs.rummikub import batched_kernels as k
from tableenvs.rummikub.tiles import NUM_TILES, TILE_TYPES
from tableenvs.vector.compile import kernels_once
from tableenvs.vector.draws import state_row


def observe_kernel() -> Any:
    """``batched_kernels.observe_rows_kernel`` compiled (once per process; on disk across processes)."""
    (kernel,) = kernels_once((k.observe_rows_kernel,), "the Rummikub batched loader", k.__file__, "about 5 s")
    return kernel


def load_rows(engine: Any, rows: np.ndarray, record: Mapping[str, Any], check: bool) -> None:
    """``engine`` (a ``RummikubBatched``) gets ``record``'s game (an AEC state record of ``rummikub_v0``, running) in
    every env of ``rows``; a copy of the record is kept for their ``get_state``."""
    theirs = dict(record["options"])
    if check and theirs != engine._env_options:
        differ = sorted(key for key in engine._env_options if theirs.get(key) != engine._env_options[key])
        raise ValueError(
            f"{engine.name}: load_state: the record was saved with other options ({', '.join(differ)}) than this "
            "engine's; make the engine with the record's options"
        )
    rules = record["rules"]
    agents = [f"player_{seat}" for seat in range(engine.num_players)]
    rewards = record["rewards"]
    _write(
        engine, rows, rules["racks"], rules["table"], rules["staged"], rules["last_placed"], rules["pool"],
        rules["opened"], rules["scores"], len(rules["results"]), record["rng"],
        [rewards[agent] for agent in agents],
        (rules["to_act"], rules["game_number"], rules["turn"], rules["passes"], rules["commits"]),
    )  # fmt: skip
    kept = ("record", pickle.dumps(dict(record), pickle.HIGHEST_PROTOCOL))  # a copy (a tenth of deepcopy's cost)
    engine._loaded_from.update(dict.fromkeys(rows.tolist(), kept))


def load_env_rows(engine: Any, rows: np.ndarray, env: Any) -> None:
    """``engine`` gets the game of ``env`` (a raw ``rummikub_v0`` env with the engine's options, its game running) in
    every env of ``rows``, read from the env and its rules engine directly. ``env`` itself is kept, not a copy:
    ``get_state`` of those rows replays from it while it is as it was loaded, and refuses in one line once it has
    moved on (:func:`loaded_env`)."""
    from tableenvs.rummikub.env import RummikubEnv

    if not isinstance(env, RummikubEnv):
        raise ValueError(f"{engine.name}: load_env takes a raw {engine.name} env (tableenvs.make_raw), not {env!r}")
    if not env._has_started or env._ended is not None:
        raise ValueError(f"{engine.name}: load_env takes an env whose game is running (reset it first; not ended)")
    if env._state_options() != engine._env_options:
        theirs = env._state_options()
        differ = sorted(key for key in engine._env_options if theirs.get(key) != engine._env_options[key])
        raise ValueError(
            f"{engine.name}: load_env: the env was made with other options ({', '.join(differ)}) than this engine's"
        )
    game = env.game
    rewards = env.rewards
    _write(
        engine, rows, game.racks, game.table, game.staged, game.last_placed, game.pool[game._drawn :], game.opened,
        game.scores, len(game.results), env._started_rng().bit_generator.state,
        [rewards[agent] for agent in env.possible_agents],
        (game.to_act, game.game_number, game.turn, game.passes, game.commits),
    )  # fmt: skip
    kept = ("env", (env, game, env.event_log, len(env.event_log)))
    engine._loaded_from.update(dict.fromkeys(rows.tolist(), kept))


def loaded_env(engine: Any, index: int) -> Any:
    """A raw env in the game that row ``index`` was loaded with, as it was then (``get_state`` replays from it)."""
    from tableenvs.core.table_env import TableEnv

    kind, source = engine._loaded_from[index]
    if kind == "record":
        return TableEnv.from_state(pickle.loads(source))  # the bytes this module pickled at the load
    env, game, log, length = source
    if env.game is not game or env.event_log is not log or len(log) != length:
        raise ValueError(
            f"{engine.name}: get_state({index}): env {index} was loaded by load_env from an env that has moved on "
            "since (its game or event log changed); load it with load_state(i, env.get_state()) to keep its record"
        )
    return env.clone()


def _write(
    engine: Any,
    rows: np.ndarray,
    racks: Any,
    table: Any,
    staged: Any,
    last_placed: Any,
    pool: Any,
    opened: Sequence[bool],
    scores: Any,
    finished: int,
    rng: Mapping[str, Any],
    rewards: Sequence[float],
    counters: tuple[int, int, int, int, int],
) -> None:
    n = engine.num_players
    to_act, game_number, turn, passes, commits = counters
    generator = state_row(rng)  # the one part that can still be refused: before anything changes
    g = [0] * k.G_WIDTH
    drawn = NUM_TILES - len(pool)
    g[k.TO_ACT] = to_act
    g[k.DRAWN] = drawn
    g[k.GAME_NUMBER] = game_number
    g[k.TURN] = turn
    g[k.PASSES] = passes
    g[k.COMMITS] = commits
    g[k.FINISHED] = finished
    g[k.STAGED_IS_PLAY] = -1  # the masks' verdict, asked below
    g[k.LOG_LEN] = 0  # get_state replays the actions since the load from the game it was loaded from
    all_racks = np.zeros((4, TILE_TYPES), np.int64)
    all_racks[:n] = racks
    order = np.zeros(NUM_TILES, np.int64)
    order[drawn:] = pool
    engine._racks[rows] = all_racks
    engine._table[rows] = table
    engine._staged[rows] = staged
    engine._last[rows] = last_placed
    engine._pool[rows] = order
    engine._opened[rows] = False
    engine._opened[rows, :n] = opened
    engine._scores[rows] = 0.0
    engine._scores[rows, :n] = scores
    engine._g[rows] = g
    engine._generators[rows] = generator
    engine._starts[rows] = 0  # no generator has an even increment: the mark of a row loaded mid-episode (get_state)
    engine.rewards[rows] = 0.0
    engine.rewards[rows, :n] = rewards
    engine.terminated[rows] = False
    engine.truncated[rows] = False
    engine._masks.load_rows(engine, rows)
    observe_kernel()(
        rows, engine._racks, engine._table, engine._staged, engine._last, engine._opened, engine._scores, engine._g,
        engine._options, engine.obs,
    )  # fmt: skip
