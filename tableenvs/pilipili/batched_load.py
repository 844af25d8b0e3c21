"""Pili Pili's batched engine started from a running AEC game: ``PiliPiliBatched.load_state(i, record)`` and
``load_env(i, env)`` (a search's sampled worlds).

Where you are: beside the batched engine (``batched.py``, whose ``_load_rows`` / ``_load_env_rows`` hooks call
:func:`load_rows` / :func:`load_env_rows`). The rules state of a raw env's game (``PiliPiliGame``: a game under way,
a sampled world) becomes the engine's arrays for one or more rows: the scalars of ``g``, the per-seat values of
``ps`` (hands and picks as card bitmasks), the memorised hand positions, the stock (the tail of the row's deck), the
mission pile still to draw and the generator row, the inverse of what the step kernel keeps. The observation and
mask of the seat to act come from the engine's own ``fill_observation`` / ``fill_mask`` (compiled here, for the loaded
rows only). From there a row plays on as the raw env does, draw for draw, through the end of that game and into the
next one (``tests/pilipili/test_pilipili_batched_load.py``).

``get_state`` of a loaded row replays the actions played since the load in a copy of the env the row was loaded
from (the batched engine keeps no event log of its own), until the row's game ends; its next game is replayed from
its start as every other row's. ``load_env`` keeps the env it is given (no copy: the search's worlds are thrown away
after loading), so that env must stay as it is for ``get_state`` of those rows to answer (else a one-line error).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from tableenvs.pilipili import batched_kernels as k
from tableenvs.vector.compile import kernels_once
from tableenvs.vector.draws import state_row


def observe_rows_kernel(rows, n, g, ps, mp, mnz, mvec, obs, mask, to_act):
    """The seat to act, its observation and the mask in every env of ``rows`` (as the step kernel writes them)."""
    for i in range(rows.shape[0]):
        e = rows[i]
        to_act[e] = g[e, k.G_TO_ACT]
        k.fill_observation(e, n, to_act[e], g, ps, mp, mnz, mvec, obs)
        k.fill_mask(e, n, g, ps, mp, mask)


def _kernel() -> Any:
    (kernel,) = kernels_once((observe_rows_kernel,), "the Pili Pili batched loader", __file__, "about 10 CPU-seconds")
    return kernel


def _bits(cards: Any) -> int:
    mask = 0
    for card in cards:
        mask |= 1 << card
    return mask


def load_env_rows(engine: Any, rows: np.ndarray, env: Any) -> None:
    """``engine`` (a ``PiliPiliBatched``) gets the game of ``env`` (a ``pilipili_v0`` raw env with the engine's
    options, its game running) in every env of ``rows``. ``env`` itself is kept, not a copy (a search loads each
    world once and throws it away): ``get_state`` of those rows replays from it while it is as it was loaded, and
    refuses in one line once it has moved on (:func:`loaded_env`)."""
    _write(engine, rows, env)
    engine._loaded_from.update(dict.fromkeys(rows.tolist(), (env, env.game, env.event_log, len(env.event_log))))


def loaded_env(engine: Any, index: int) -> Any:
    """A copy of the env that row ``index`` was loaded from, as it was then (``get_state`` replays from it)."""
    env, game, log, length = engine._loaded_from[index]
    if env.game is not game or env.event_log is not log or len(log) != length:
        raise ValueError(
            f"{engine.name}: get_state({index}): env {index} was loaded by load_env from an env that has moved on "
            "since (its game or event log changed); load it with load_state(i, env.get_state()) to keep its record"
        )
    return env.clone()


def load_rows(engine: Any, rows: np.ndarray, record: Mapping[str, Any], check: bool) -> None:
    """``engine`` gets ``record``'s game (an AEC state record of ``pilipili_v0``) in every env of ``rows``."""
    from tableenvs.core.table_env import TableEnv

    theirs = dict(record["options"])
    if check and theirs != engine.options:
        differ = sorted(key for key in engine.options if theirs.get(key) != engine.options[key])
        raise ValueError(
            f"{engine.name}: load_state: the record was saved with other options ({', '.join(differ)}) than this "
            "engine's; make the engine with the record's options"
        )
    env = TableEnv.from_state(record)
    _write(engine, rows, env)
    engine._loaded_from.update(dict.fromkeys(rows.tolist(), (env, env.game, env.event_log, len(env.event_log))))


def _mission_of(engine: Any, mission: Any) -> int:
    """The row of ``mission`` in the engine's mission table (``ValueError`` for one outside its deck: a first round
    scripted with another mission)."""
    known = engine._mission_ids.get(id(mission))  # (the mission, its row): kept, so that its id is never reused
    if known is not None and known[0] is mission:
        return known[1]
    index = engine._mission_index.get(mission)  # by value (a frozen dataclass): another env's copy of the deck
    if index is None:
        raise ValueError(f"{engine.name}: load_state: mission {mission.id} is not in this engine's mission deck")
    engine._mission_ids[id(mission)] = (mission, index)
    return index


def _write(engine: Any, rows: np.ndarray, env: Any) -> None:
    game = env.game
    if game is None or game.over:
        raise ValueError(f"{engine.name}: load_env takes an env whose game is running (reset it first; not ended)")
    n = engine.num_players
    g = [0] * k.NG
    g[k.G_PHASE] = int(game.phase)
    g[k.G_TO_ACT] = game.to_act
    g[k.G_DEALER] = game.dealer
    g[k.G_LEADER] = game.leader
    g[k.G_MIS] = _mission_of(engine, game.mission)
    g[k.G_H] = game.hand_size
    g[k.G_TOTAL] = game.total_tricks
    g[k.G_BIDS_MADE] = game.bids_made
    g[k.G_LAST_BID] = game.last_bid
    g[k.G_ACTED] = game.acted
    g[k.G_TPLAYED] = game.tricks_played
    g[k.G_TLEN] = len(game.trick)
    g[k.G_LAST_WINNER] = game.last_winner
    g[k.G_REVEALED] = int(game.revealed)
    g[k.G_SWAP_W] = game.swap_winner
    g[k.G_SWAP_T] = game.swap_target
    g[k.G_ROUNDS] = game.rounds_completed
    g[k.G_STOCK] = k.NUM_CARDS - len(game.stock)
    g[k.G_PLAYED] = _bits(game.played_cards)
    pile = game._mission_pile
    nm = engine._nm
    g[k.G_PILE_POS] = nm - len(pile)
    summary = game.last_scored
    g[k.G_PREV] = int(summary is not None)
    g[k.G_PREV_WINNER] = -1 if summary is None else summary.last_winner
    g[k.G_TRUNC] = int(game.truncated)
    g[k.G_LOG_LEN] = 0  # get_state replays the actions since the load from the env's copy
    ps = [[0] * 8 for _ in range(k.NP)]
    ps[k.P_CHILIS][:n] = game.chilis
    ps[k.P_BIDS][:n] = game.bids
    ps[k.P_WON][:n] = game.tricks_won
    ps[k.P_EXTRAS][:n] = game.extras
    ps[k.P_DESIG][:n] = game.designations
    ps[k.P_CHANGE][:n] = game.last_round_change
    for seat, card, value in game.trick:
        ps[k.P_TCARD][seat] = card
        ps[k.P_TVAL][seat] = value
    for seat, card, value in game.last_trick:
        ps[k.P_LCARD][seat] = card
        ps[k.P_LVAL][seat] = value
    if summary is not None:
        ps[k.P_PBID][:n] = summary.bids
        ps[k.P_PWON][:n] = summary.tricks_won
        ps[k.P_PTAKEN][:n] = summary.taken
        ps[k.P_PDISC][:n] = summary.discarded
        for seat, card, value in summary.last_trick:
            ps[k.P_PLVAL][seat] = value
            ps[k.P_PLWILD][seat] = int(card == 0)
    hands, staged = game.hands, game.staged
    for seat in range(n):
        ps[k.P_NSTAGED][seat] = len(staged[seat])
        ps[k.P_HAND][seat] = _bits(hands[seat])
        ps[k.P_STAGED][seat] = _bits(staged[seat])
    # the memorised hand positions: read only under the memorise mission, whose look writes them afresh each round
    positions = [[0] * 28 for _ in range(8)] if game.mission.memorise else None
    if positions is not None:
        for seat in range(n):
            cards = game.position_cards[seat]
            positions[seat][: len(cards)] = cards
            ps[k.P_POSLEN][seat] = len(cards)
            ps[k.P_POSUSED][seat] = sum(1 << p for p, used in enumerate(game.position_used[seat]) if used)
    order = [_mission_of(engine, mission) for mission in reversed(pile)]  # drawn from its end in the AEC game
    engine._g[rows] = g
    engine._ps[rows] = ps
    if positions is not None:
        engine._posc[rows] = positions
    if game.stock:  # the round's deck: only its tail, the stock, is read again (extra draws)
        engine._deck[rows, g[k.G_STOCK] :] = game.stock
    if nm:  # drawn from G_PILE_POS on
        engine._pile[rows, g[k.G_PILE_POS] :] = order
    engine._rng[rows] = state_row(game.rng.bit_generator.state)
    engine._rng0[rows] = 0  # no generator has an even increment: the mark of a row loaded mid-game (get_state)
    engine.rewards[rows] = 0.0
    engine.terminated[rows] = False
    engine.truncated[rows] = False
    _kernel()(rows, n, engine._g, engine._ps, engine._mp, engine._mnz, engine._mvec, engine.obs, engine.mask,
              engine.to_act)  # fmt: skip
