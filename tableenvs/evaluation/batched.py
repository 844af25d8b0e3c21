"""Playing a tournament's games on the game's batched engine: every game of a batch at once, the same games as the
AEC path.

Where you are: beside :mod:`tableenvs.evaluation.playing` (the AEC game loop), for
:func:`tableenvs.evaluation.evaluate`'s ``engine="batched"`` (``tableenvs eval --engine``). A batch's games are
the rows of one :class:`tableenvs.vector.BatchedGame`: row ``i`` is reset with game ``i``'s deal seed
(:func:`~tableenvs.evaluation.playing.game_seeds`, as the AEC path deals it), its entrants sit as the seating plan
says, and each step every row's seat to act is played by its entrant's batched player
(:func:`tableenvs.vector.batched_policy`), one call per player over all the rows it holds. A row whose game ended
plays on (its first legal action, not counted) until the batch's last game ends.

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

from tableenvs.core.outcome import competition_ranks
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
    rows (handed over as a view of the engine's buffers, not a copy)."""
    plan, n, m = batch.plan, games.num_players, len(batch.games)
    batch = replace(batch, games=tuple(sorted(batch.games, key=lambda game: (plan.seating(game), game))))
    distinct: list[Any] = []
    for player in by_entrant:
        if not any(player is seen for seen in distinct):
            distinct.append(player)
    which = np.array([next(i for i, seen in enumerate(distinct) if seen is p) for p in by_entrant], np.int64)
    entrants = np.array([plan.seating(g) for g in batch.games], np.int64).reshape(m, n)
    drawing = [player for player in distinct if hasattr(player, "seat_generators")]
    sampled = [player for player in distinct if not batch.deterministic and hasattr(player, "rng")]
    deal_seeds = []
    for row, game in enumerate(batch.games):
        deal_seed, policy_seed = game_seeds(batch.seed, game, plan.size, batch.duplicate)
        deal_seeds.append(deal_seed)
        if drawing:  # the seat generators of the AEC path (play_planned_game's)
            seat_rngs = [np.random.default_rng(child) for child in policy_seed.spawn(n)]
            for player in drawing:
                player.seat_generators(row, seat_rngs)
        if row == 0:
            for player in sampled:
                player.rng = np.random.default_rng(policy_seed)  # a sampled model: its batch's first game's seed
    obs, mask = games.reset(deal_seeds)
    results = getattr(games, "last_results", None)
    log: list[np.ndarray] = []
    active = np.ones(m, bool)
    decisions = np.zeros(m, np.int64)
    everyone = np.arange(m)
    records: list[PlayedGame | None] = [None] * m
    while active.any():
        holder = which[entrants[everyone, games.to_act]]
        actions = np.zeros(m, np.int64)
        idle = np.flatnonzero(~active)
        if idle.size:  # an ended row plays on with its first legal action
            actions[idle] = mask[idle].argmax(axis=1)
        for index, player in enumerate(distinct):
            rows = np.flatnonzero(active & (holder == index))
            if rows.size == 0:
                continue
            first, last = int(rows[0]), int(rows[-1]) + 1
            if last - first == rows.size:  # one run of rows: views of the buffers
                actions[first:last] = player.act(obs[first:last], mask[first:last], rows)
            else:
                actions[rows] = player.act(obs[rows], mask[rows], rows)
        decisions += active
        if results is None:
            log.append(actions.copy())
        obs, mask, _rewards, terminated, truncated = games.step(actions)
        ended = np.flatnonzero(active & (terminated | truncated))
        if ended.size == 0:
            continue
        active[ended] = False
        if results is not None:
            returns, scores, winners = results(ended)
            for j, row in enumerate(ended.tolist()):
                records[row] = _record(
                    batch, row, entrants[row], returns[j], scores[j], np.flatnonzero(winners[j]), bool(truncated[row]),
                    int(decisions[row]), raw_env.higher_is_better,
                )  # fmt: skip
        else:
            for row in ended.tolist():
                records[row] = _replayed(batch, row, entrants[row], deal_seeds[row], log, int(decisions[row]), raw_env)
    return sorted((record for record in records if record is not None), key=lambda record: record.index)


def _record(
    batch: Batch,
    row: int,
    entrants: np.ndarray,
    returns: np.ndarray,
    scores: np.ndarray,
    named: np.ndarray,
    truncated: bool,
    decisions: int,
    higher: bool,
) -> PlayedGame:
    """A game's :class:`PlayedGame`, its winners as ``TableEnv.outcome`` names them (the rules' winners unless the
    game was cut short or they name none, else the best scores)."""
    score = tuple(float(x) for x in scores)
    winners = () if truncated else tuple(sorted(int(s) for s in named))
    if not winners:
        best = max(score) if higher else min(score)
        winners = tuple(s for s, x in enumerate(score) if x == best)
    keys = [(0 if s in winners else 1, -x if higher else x) for s, x in enumerate(score)]
    game = batch.games[row]
    return PlayedGame(
        index=game,
        block=game // batch.plan.size,
        entrants=tuple(int(e) for e in entrants),
        rewards=tuple(float(x) for x in returns),
        scores=score,
        winners=winners,
        ranks=tuple(competition_ranks(keys)),
        truncated=truncated,
        decisions=decisions,
    )


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
