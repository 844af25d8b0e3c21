"""Playing a tournament's games on the game's batched engine: every game of a batch at once, the same games as the
AEC path.

Where you are: beside :mod:`tableenvs.evaluation.playing` (the AEC game loop), for
:func:`tableenvs.evaluation.evaluate`'s ``engine="batched"`` (``tableenvs eval --engine``). A batch's games are
the rows of one :class:`tableenvs.vector.BatchedGame`: row ``i`` is reset with game ``i``'s deal seed
(:func:`~tableenvs.evaluation.playing.game_seeds`, as the AEC path deals it), its entrants sit as the seating plan
says, and each step every row's seat to act is played by its entrant's batched player
(:func:`tableenvs.vector.batched_policy`), one call per player over all the rows it holds (``act_rows``: read in
place from the engine's buffers, where the player has it). A row whose game ended waits for the batch's last game:
an engine with ``step_rows`` steps only the rows still playing, else the row plays on (its first legal action, not
counted). The deal seeds and the seat generators of all the rows are computed at once
(:mod:`tableenvs.vector.seeding`: numpy's ``SeedSequence`` compiled, the same states).

Results: the engine plays the AEC env's game, so deterministic players (greedy model files, the heuristics) play
the very games of the AEC path, and ``random`` draws from the seat generators the AEC path gives it
(:class:`~tableenvs.vector.players.BatchedRandomPolicy`): the same :class:`PlayedGame` records. A sampled model
(``deterministic=False``) draws from its own generator (``default_rng`` of the game's policy seed), not the AEC
stream. A game's result comes from the engine (``last_results(envs)``: total rewards, final scores, the rules'
winners) when it keeps one, else from replaying the game's actions in the AEC env (exact, slower).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from tableenvs.core.registry import make_raw
from tableenvs.core.registry import spec as game_spec

from .playing import Batch, PlayedGame, _setup_key, game_seeds

#: ``(key, raw env, engine, players by entrant, distinct players)`` of the last batch this process played.
_LAST: tuple[Any, ...] | None = None


def cannot_batch(
    env: str, options: dict[str, Any], specs: Sequence[Any], raw_env: Any, deterministic: bool
) -> str | None:
    """Why the tournament's policies cannot all be played on ``env``'s batched engine (one phrase naming the game or
    the policy), or None when they can. ``deterministic=False`` is no reason here (a sampled model is batched, with
    its own stream): :func:`same_as_aec` says whether the results equal the AEC path's."""
    from tableenvs.evaluation.models import label
    from tableenvs.vector.players import not_batchable

    game = game_spec(env)
    if game.batched is None:
        return f"{env} has no batched engine"
    for index, spec in enumerate(specs):
        reason = not_batchable(spec)
        if reason is not None:
            return f"policy #{index + 1} ({label(spec)}): {reason}"
    try:
        import tableenvs.vector

        games = tableenvs.vector.make(env, 1, **options)
        games.reset(0)
        players(specs, games, raw_env, deterministic, seed=0)
    except ValueError as error:
        return str(error)
    return None


def same_as_aec(specs: Sequence[Any], deterministic: bool) -> bool:
    """Whether the batched path gives the AEC path's records for these policies: always, unless a model file is
    sampled (``deterministic=False``), whose draws come from another stream."""
    if deterministic:
        return True
    return all(str(spec) in ("random", "heuristic") for spec in specs)


def players(specs: Sequence[Any], games: Any, raw_env: Any, deterministic: bool, seed: int) -> list[Any]:
    """One batched player per spec (equal specs share one), each refused in one line naming its policy."""
    from tableenvs.evaluation.models import label
    from tableenvs.vector.players import batched_policy

    built: dict[str, Any] = {}
    out = []
    for index, spec in enumerate(specs):
        key = str(spec)
        if key not in built:
            try:
                built[key] = batched_policy(spec, games, env=raw_env, deterministic=deterministic, seed=seed)
            except ValueError as error:
                raise ValueError(f"policy #{index + 1} ({label(spec)}): {error}") from None
        out.append(built[key])
    return out


def play_batched(batch: Batch) -> list[PlayedGame]:
    """Worker entry point of the batched path: the batch's games as rows of one batched engine."""
    global _LAST
    import tableenvs.vector

    setup = _setup_key(batch)  # None: build afresh (options that are not JSON); a model saved again is reloaded
    key = None if setup is None else (setup, len(batch.games))
    if key is not None and _LAST is not None and _LAST[0] == key:
        _, raw_env, games, by_entrant = _LAST
    else:
        raw_env = make_raw(batch.env, **batch.options)
        games = tableenvs.vector.make(batch.env, len(batch.games), trusted=True, **batch.options)
        games.reset(0)
        by_entrant = players(batch.specs, games, raw_env, batch.deterministic, seed=batch.seed)
        _LAST = (key, raw_env, games, by_entrant)
    from tableenvs.vector.players import blas_threads

    with blas_threads(batch.torch_threads):  # the models' products: one thread by default (torch_threads=1)
        return play_rows(batch, raw_env, games, by_entrant)


def play_rows(batch: Batch, raw_env: Any, games: Any, by_entrant: Sequence[Any]) -> list[PlayedGame]:
    """Play ``batch.games`` on ``games`` (one row each), ``by_entrant[e]`` playing entrant ``e``'s seats; their
    records in game order. The rows hold the games sorted by seating, so that a player's rows are often one run of
    rows (handed over as a view of the engine's buffers, not a copy); a player with ``act_rows(obs, mask, rows)``
    reads its rows of the buffers in place. Once a row's game is over it waits (an engine with
    ``step_rows(rows, actions)`` steps the others only) or plays on with its first legal action, uncounted."""
    from tableenvs.vector.model_kernels import first_legal

    plan, n, m = batch.plan, games.num_players, len(batch.games)
    batch = replace(batch, games=tuple(sorted(batch.games, key=lambda game: (plan.seating(game), game))))
    distinct: list[Any] = []
    for player in by_entrant:
        if not any(player is seen for seen in distinct):
            distinct.append(player)
    which = np.array([next(i for i, seen in enumerate(distinct) if seen is p) for p in by_entrant], np.int64)
    entrants = np.array([plan.seating(g) for g in batch.games], np.int64).reshape(m, n)
    deal_seeds = _start_rows(batch, n, distinct)
    obs, mask = games.reset(deal_seeds)
    for player in distinct:  # new games in every row: a player that keeps state per env drops it
        forget = getattr(player, "forget", None)
        if forget is not None:
            forget()
    results = getattr(games, "last_results", None)
    log: list[np.ndarray] = []
    active = np.ones(m, bool)
    idle = np.zeros(0, np.int64)
    decisions = np.zeros(m, np.int64)
    seat_player = which[entrants].ravel()  # the index in distinct of the player in each row's seat; -1: row ended
    first_seat = np.arange(m) * n
    records: list[PlayedGame] = []
    act_rows: list[Any] = [getattr(player, "act_rows", None) for player in distinct]
    step_rows = getattr(games, "step_rows", None)  # an engine that steps some rows only: ended rows wait
    actions = np.zeros(m, np.int64)
    while idle.size < m:
        holder = seat_player[first_seat + games.to_act]
        if idle.size and step_rows is None:  # an ended row plays on with its first legal action
            actions[idle] = first_legal(mask, idle)
        for index, player in enumerate(distinct):
            rows = np.flatnonzero(holder == index)
            if rows.size == 0:
                continue
            first, last = int(rows[0]), int(rows[-1]) + 1
            reader = act_rows[index]
            if reader is not None:
                actions[rows] = reader(obs, mask, rows)
            elif last - first == rows.size:  # one run of rows: views of the buffers
                actions[first:last] = player.act(obs[first:last], mask[first:last], rows)
            else:
                actions[rows] = player.act(obs[rows], mask[rows], rows)
        decisions += active
        if results is None:
            log.append(actions.copy())
        if idle.size and step_rows is not None:
            playing = np.flatnonzero(active)
            obs, mask, _rewards, terminated, truncated = step_rows(playing, actions[playing])
        else:
            obs, mask, _rewards, terminated, truncated = games.step(actions)
        ended = np.flatnonzero(active & (terminated | truncated))
        if ended.size == 0:
            continue
        active[ended] = False
        idle = np.flatnonzero(~active)
        seat_player.reshape(m, n)[ended] = -1
        if results is not None:
            returns, scores, winners = results(ended)
            records += _records(
                batch, ended, entrants, returns, scores, winners, truncated[ended], decisions, raw_env.higher_is_better
            )
        else:
            for row in ended.tolist():
                records.append(_replayed(batch, row, entrants[row], deal_seeds[row], log, int(decisions[row]), raw_env))
    return sorted(records, key=lambda record: record.index)


def _start_rows(batch: Batch, n: int, distinct: Sequence[Any]) -> list[int]:
    """Each row's deal seed; the players that draw get each row's seat generators, a sampled model its generator
    (from the batch's first game's policy seed): :func:`~tableenvs.evaluation.playing.game_seeds`'s seeds and the
    AEC path's seat generators (``policy_seed.spawn(n)``), computed for all rows at once
    (:mod:`tableenvs.vector.seeding`, numpy's own hashing compiled)."""
    from tableenvs.vector.seeding import spawned_generators, spawned_words

    drawing = [player for player in distinct if hasattr(player, "seat_generators")]
    sampled = [player for player in distinct if not batch.deterministic and hasattr(player, "rng")]
    games = np.array(batch.games, np.int64)
    ids = games // batch.plan.size if batch.duplicate else games  # the spawn key's first entry: block or game
    deal_tag, policy_tag = (2, 3) if batch.duplicate else (0, 1)
    words = spawned_words(batch.seed, np.stack([ids, np.full_like(ids, deal_tag)], axis=1), 2)
    deal_seeds = [int(high) << 32 | int(low) for high, low in words.tolist()]
    if drawing:  # the seat generators of the AEC path (play_planned_game's: the policy seed spawned per seat)
        keys = np.stack([np.repeat(ids, n), np.full(len(ids) * n, policy_tag), np.tile(np.arange(n), len(ids))], 1)
        states = spawned_generators(batch.seed, keys).reshape(len(ids), n, -1)
        for player in drawing:
            if hasattr(player, "seat_states"):
                for row in range(len(ids)):
                    player.seat_states(row, states[row])
            else:
                for row in range(len(ids)):
                    player.seat_generators(row, [_generator(state) for state in states[row]])
    for player in sampled:  # a sampled model: its batch's first game's policy seed
        first = game_seeds(batch.seed, batch.games[0], batch.plan.size, batch.duplicate)[1]
        player.rng = np.random.default_rng(first)
    return deal_seeds


def _generator(state: np.ndarray) -> np.random.Generator:
    """A numpy generator in the state of generator row ``state``."""
    from tableenvs.vector.draws import state_of

    generator = np.random.default_rng(0)
    generator.bit_generator.state = state_of(state)
    return generator


def _records(
    batch: Batch,
    ended: np.ndarray,
    entrants: np.ndarray,
    returns: np.ndarray,
    scores: np.ndarray,
    named: np.ndarray,
    truncated: np.ndarray,
    decisions: np.ndarray,
    higher: bool,
) -> list[PlayedGame]:
    """The :class:`PlayedGame` of each row of ``ended`` (its results in the same order), the winners as
    ``TableEnv.outcome`` names them (the rules' winners unless the game was cut short or they name none, else the
    best scores) and the ranks as ``Outcome.ranks`` gives them (winners first, then by score), for all at once."""
    scores = np.asarray(scores, np.float64)
    winners = np.asarray(named, bool) & ~np.asarray(truncated, bool)[:, None]
    unnamed = ~winners.any(axis=1)
    if unnamed.any():
        best = scores.max(axis=1, keepdims=True) if higher else scores.min(axis=1, keepdims=True)
        winners[unnamed] = (scores == best)[unnamed]
    group = (~winners).astype(np.int64)  # 0: a winner
    key = -scores if higher else scores
    below = (group[:, None, :] < group[:, :, None]) | (
        (group[:, None, :] == group[:, :, None]) & (key[:, None, :] < key[:, :, None])
    )  # below[j, s, t]: seat t's key is below seat s's
    ranks = 1 + below.sum(axis=2)
    size = batch.plan.size
    out = []
    for j, row in enumerate(ended.tolist()):
        game = batch.games[row]
        out.append(
            PlayedGame(
                index=game,
                block=game // size,
                entrants=tuple(entrants[row].tolist()),
                rewards=tuple(float(x) for x in returns[j].tolist()),
                scores=tuple(scores[j].tolist()),
                winners=tuple(np.flatnonzero(winners[j]).tolist()),
                ranks=tuple(ranks[j].tolist()),
                truncated=bool(truncated[j]),
                decisions=int(decisions[row]),
            )
        )
    return out


def _replayed(
    batch: Batch, row: int, entrants: np.ndarray, deal_seed: int, log: list[np.ndarray], decisions: int, raw_env: Any
) -> PlayedGame:
    """A game's record from its actions replayed in the AEC env (for an engine that keeps no results)."""
    raw_env.reset(seed=deal_seed)
    for step in range(decisions):
        raw_env.step(int(log[step][row]))
    outcome = raw_env.outcome()
    if outcome is None:
        raise RuntimeError(
            f"{batch.env}: game {batch.games[row]} ended on the batched engine after {decisions} actions but not in "
            "the AEC env replaying them (the engines disagree: please report it)"
        )
    return PlayedGame.from_outcome(batch.games[row], batch.plan.size, entrants, outcome, decisions)
