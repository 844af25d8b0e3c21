"""Rummikub's rules and observation as numba kernels over many games at once (the batched engine's compiled core).

Where you are: the compiled half of ``tableenvs/rummikub``'s batched engine (the Python half, the
:class:`tableenvs.vector.BatchedGame` object, is ``batched.py``; the masks come from the solver through
``batched_masks.py``). Each function below is a transcription of ``rules.py`` (``Rummikub.start``, ``_deal``,
``commit``, ``draw``, ``_draw_tiles``, ``_pass``, ``_pool_end``, ``_score_out``, ``_finish``, ``_end_turn``) drawing
from each env's own ``numpy.random.Generator`` in the same order (:mod:`tableenvs.vector.draws`), and the
observation is the encoder's own compiled ``_fill``, so env ``i`` plays exactly the game the AEC env plays with the
same seed and actions (``tests/test_vector_rummikub.py`` checks it step by step).

State, per env ``e``: count vectors ``racks[e, seat]``, ``table[e]``, ``staged[e]``, ``last_placed[e]`` (53 tile
types), the pool in drawing order ``pool[e]`` (106 slots, drawn from ``g[e, DRAWN]`` on), ``opened[e, seat]``,
``scores[e, seat]`` (float64, the episode's) and the counters of ``g[e]`` (the columns below). Kernels are plain
functions here; ``batched.py`` compiles them (cached on disk) on first use.
"""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

from tableenvs.rummikub.encoder import _fill as _python_fill
from tableenvs.rummikub.rules import PENALTY_TILES, RACK_SIZE
from tableenvs.rummikub.tiles import FULL_SET, NUM_TILES, TILE_TYPES, TILE_VALUES
from tableenvs.vector.draws import integers, interval

# g[e] columns
TO_ACT = 0
DRAWN = 1  # pool tiles drawn so far this game
GAME_NUMBER = 2  # 1-based, of the episode
TURN = 3  # turns completed in the episode
PASSES = 4
COMMITS = 5
FINISHED = 6  # games finished in the episode (len(results))
STAGED_IS_PLAY = 7  # the solver's verdict on the staged tiles at the last decision: 1, 0, -1 (not asked)
LOG_LEN = 8  # actions played in the episode (the replay log's length)
G_WIDTH = 9

# options (an int64 vector, read by every kernel)
O_PLAYERS = 0
O_STRICT = 1
O_DRAW_AFTER_PLAY = 2
O_LOWEST_RACK = 3  # pool_exhausted == "lowest_rack"
O_GAMES = 4  # games_per_episode
O_MAX_TURNS = 5
O_END_ON_EMPTY_POOL = 6
O_WIDTH = 7

# what a step ended: the episode's end (a game end's scores are the step's rewards)
RUNNING, TERMINATED, TRUNCATED = 0, 1, 2

_FULL_SET = np.repeat(np.arange(TILE_TYPES), FULL_SET)  # the 106 tiles in type order (what the deal shuffles)
_VALUES = TILE_VALUES.copy()
_COMMIT = TILE_TYPES
_fill = register_jitable(_python_fill)  # the encoder's observation, compiled into these kernels
_DRAW = TILE_TYPES + 1


@register_jitable
def _deal(e, n, racks, table, staged, last, pool, opened, g, gen):
    """``Rummikub._deal(None, zeros, None, None, None)``: a new game of the episode from the generator."""
    g[e, GAME_NUMBER] += 1
    for t in range(TILE_TYPES):
        table[e, t] = 0
        staged[e, t] = 0
        last[e, t] = 0
    order = pool[e]
    for i in range(NUM_TILES):
        order[i] = _FULL_SET[i]
    for i in range(NUM_TILES - 1, 0, -1):  # Generator.permutation(array): numpy's shuffle, from the last position
        j = interval(gen, i)
        held = order[j]
        order[j] = order[i]
        order[i] = held
    for seat in range(racks.shape[1]):
        for t in range(TILE_TYPES):
            racks[e, seat, t] = 0
    for seat in range(n):
        for k in range(seat * RACK_SIZE, (seat + 1) * RACK_SIZE):
            racks[e, seat, order[k]] += 1
        opened[e, seat] = False
    g[e, DRAWN] = n * RACK_SIZE  # the pool is what follows the racks
    g[e, TO_ACT] = integers(gen, n)
    g[e, PASSES] = 0
    g[e, STAGED_IS_PLAY] = -1


@register_jitable
def _start(e, n, racks, table, staged, last, pool, opened, scores, g, gen):
    """``Rummikub.start(rng)`` without scripted parts: a new episode."""
    for seat in range(scores.shape[1]):
        scores[e, seat] = 0.0
    g[e, TURN] = 0
    g[e, COMMITS] = 0
    g[e, FINISHED] = 0
    g[e, GAME_NUMBER] = 0
    g[e, LOG_LEN] = 0
    _deal(e, n, racks, table, staged, last, pool, opened, g, gen)


@register_jitable
def _draw_tiles(e, seat, count, racks, pool, g):
    take = min(count, NUM_TILES - g[e, DRAWN])
    for k in range(take):
        racks[e, seat, pool[e, g[e, DRAWN] + k]] += 1
    g[e, DRAWN] += take
    return take


@register_jitable
def _rack_total(racks, e, seat):
    total = 0
    for t in range(TILE_TYPES):
        total += racks[e, seat, t] * _VALUES[t]
    return total


@register_jitable
def _finish(e, n, game_scores, scores, g, options):
    """``Rummikub._finish``: add the game's scores; whether the episode is over."""
    for seat in range(n):
        scores[e, seat] += game_scores[seat]
    g[e, FINISHED] += 1
    return g[e, GAME_NUMBER] >= options[O_GAMES]


@register_jitable
def _pool_end(e, n, racks, game_scores, options):
    """``Rummikub._pool_end``'s scores: a draw, or the lowest rack(s) win the others' totals."""
    if options[O_LOWEST_RACK] == 0:
        for seat in range(n):
            game_scores[seat] = 0.0
        return
    low = _rack_total(racks, e, 0)
    for seat in range(1, n):
        low = min(low, _rack_total(racks, e, seat))
    winners = 0
    losers_total = 0
    for seat in range(n):
        total = _rack_total(racks, e, seat)
        if total == low:
            winners += 1
        else:
            losers_total += total
    for seat in range(n):
        total = _rack_total(racks, e, seat)
        game_scores[seat] = losers_total / winners if total == low else -float(total)


@register_jitable
def _end_turn(e, n, ended, racks, table, staged, last, pool, opened, scores, g, gen, options, game_scores):
    """``Rummikub._end_turn``; ``ended``: whether the game ended in this turn (its scores in ``game_scores``).
    Returns ``(game ended, RUNNING / TERMINATED / TRUNCATED)``."""
    over = False
    g[e, TURN] += 1
    if ended:
        over = _finish(e, n, game_scores, scores, g, options)
    elif options[O_END_ON_EMPTY_POOL] and g[e, DRAWN] == NUM_TILES:
        _pool_end(e, n, racks, game_scores, options)
        ended = True
        over = _finish(e, n, game_scores, scores, g, options)
    g[e, STAGED_IS_PLAY] = -1
    if ended and not over:
        _deal(e, n, racks, table, staged, last, pool, opened, g, gen)
    elif not over:
        g[e, TO_ACT] = (g[e, TO_ACT] + 1) % n
    if over:
        return ended, TERMINATED
    if g[e, TURN] >= options[O_MAX_TURNS]:
        return ended, TRUNCATED
    return ended, RUNNING


@register_jitable
def _pass(e, n, racks, g, game_scores, options):
    """``Rummikub._pass``: whether the game ends (scores in ``game_scores``)."""
    g[e, PASSES] += 1
    if g[e, PASSES] < n:
        return False
    _pool_end(e, n, racks, game_scores, options)
    return True


@register_jitable
def _act(e, action, racks, table, staged, last, pool, opened, scores, g, gen, options, game_scores):
    """One legal action of env ``e``'s seat to act (``Encoder.apply``): stage, commit or draw. Returns ``(game ended,
    RUNNING / TERMINATED / TRUNCATED)``."""
    n = options[O_PLAYERS]
    seat = g[e, TO_ACT]
    if action < _COMMIT:
        staged[e, action] += 1
        g[e, STAGED_IS_PLAY] = -1
        return False, RUNNING
    ended = False
    if action == _COMMIT:
        if options[O_STRICT] or g[e, STAGED_IS_PLAY] == 1:
            empty = True
            for t in range(TILE_TYPES):
                k = staged[e, t]
                table[e, t] += k
                racks[e, seat, t] -= k
                last[e, t] = k
                staged[e, t] = 0
                if racks[e, seat, t]:
                    empty = False
            opened[e, seat] = True
            g[e, PASSES] = 0
            g[e, COMMITS] += 1
            if empty:  # _score_out
                total = 0
                for s in range(n):
                    game_scores[s] = -float(_rack_total(racks, e, s))
                    total += _rack_total(racks, e, s)
                game_scores[seat] = float(total)
                ended = True
            elif options[O_DRAW_AFTER_PLAY]:
                _draw_tiles(e, seat, 1, racks, pool, g)
        else:  # a failed play (strict_commit=False): the tiles go back, penalty draw
            for t in range(TILE_TYPES):
                staged[e, t] = 0
                last[e, t] = 0
            if _draw_tiles(e, seat, PENALTY_TILES, racks, pool, g) == 0:
                ended = _pass(e, n, racks, g, game_scores, options)
    else:  # draw (a pass once the pool is empty)
        for t in range(TILE_TYPES):
            last[e, t] = 0
        if _draw_tiles(e, seat, 1, racks, pool, g) == 0:
            ended = _pass(e, n, racks, g, game_scores, options)
    return _end_turn(e, n, ended, racks, table, staged, last, pool, opened, scores, g, gen, options, game_scores)


@register_jitable
def _observe(e, racks, table, staged, last, opened, scores, g, options, obs):
    """The seat to act's observation (``Encoder.fill``, its compiled ``_fill`` itself) into ``obs[e]``."""
    n = options[O_PLAYERS]
    out = obs[e]
    out[:] = 0.0
    seat = g[e, TO_ACT]
    _fill(
        out, racks[e, :n], staged[e], table[e], last[e], scores[e, :n], opened[e, :n], seat, seat, True,
        NUM_TILES - g[e, DRAWN], g[e, PASSES], g[e, FINISHED], options[O_GAMES], g[e, TURN], options[O_MAX_TURNS],
    )  # fmt: skip


def reset_kernel(racks, table, staged, last, pool, opened, scores, g, gens, starts, options, obs):
    """New episodes in every env from its generator row (``starts[e]``: the row each episode started from)."""
    for e in range(g.shape[0]):
        starts[e, :] = gens[e, :]
        _start(e, options[O_PLAYERS], racks, table, staged, last, pool, opened, scores, g, gens[e])
        _observe(e, racks, table, staged, last, opened, scores, g, options, obs)


@register_jitable
def _step_env(
    e, action, racks, table, staged, last, pool, opened, scores, g, gens, starts, options, log, obs, rewards,
    terminated, truncated, ended_scores, game_scores,
):  # fmt: skip
    """Env ``e``'s step: its action logged and played, its rewards and episode end; at an episode's end its scores
    kept in ``ended_scores[e]`` (``last_results``) before the next episode starts; the seat to act's observation."""
    n = options[O_PLAYERS]
    log[e, g[e, LOG_LEN]] = action
    g[e, LOG_LEN] += 1
    ended, how = _act(e, action, racks, table, staged, last, pool, opened, scores, g, gens[e], options, game_scores)
    for seat in range(n):
        rewards[e, seat] = game_scores[seat] if ended else 0.0
    terminated[e] = how == TERMINATED
    truncated[e] = how == TRUNCATED
    if how != RUNNING:
        for seat in range(scores.shape[1]):
            ended_scores[e, seat] = scores[e, seat]
        starts[e, :] = gens[e, :]
        _start(e, n, racks, table, staged, last, pool, opened, scores, g, gens[e])
    _observe(e, racks, table, staged, last, opened, scores, g, options, obs)


def step_kernel(
    actions, racks, table, staged, last, pool, opened, scores, g, gens, starts, options, log, obs, rewards,
    terminated, truncated, ended_scores,
):  # fmt: skip
    """One legal action per env; the rewards, the episode ends (an ended episode's scores kept in ``ended_scores``,
    then the next episode started from the same generator) and the observation of the seat to act. The masks are
    the caller's (``batched_masks``)."""
    game_scores = np.zeros(4, np.float64)
    for e in range(g.shape[0]):
        _step_env(e, actions[e], racks, table, staged, last, pool, opened, scores, g, gens, starts, options, log, obs,
                  rewards, terminated, truncated, ended_scores, game_scores)  # fmt: skip


def step_rows_kernel(
    rows, actions, racks, table, staged, last, pool, opened, scores, g, gens, starts, options, log, obs, rewards,
    terminated, truncated, ended_scores,
):  # fmt: skip
    """``step_kernel`` for the envs ``rows`` only (distinct), ``actions[i]`` played in env ``rows[i]``; every other
    env is left as it is, its rewards zero and not ended on this step."""
    rewards[:, :] = 0.0
    terminated[:] = False
    truncated[:] = False
    game_scores = np.zeros(4, np.float64)
    for i in range(rows.shape[0]):
        _step_env(rows[i], actions[i], racks, table, staged, last, pool, opened, scores, g, gens, starts, options, log,
                  obs, rewards, terminated, truncated, ended_scores, game_scores)  # fmt: skip


def observe_rows_kernel(rows, racks, table, staged, last, opened, scores, g, options, obs):
    """The observation of the seat to act in every env of ``rows`` (a game loaded there: ``batched_load.py``)."""
    for i in range(rows.shape[0]):
        _observe(rows[i], racks, table, staged, last, opened, scores, g, options, obs)
