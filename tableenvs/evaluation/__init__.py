"""Tournaments: play many games of one env between policies, seated fairly, and compare them.

Where you are: the evaluation layer on top of the games (each env reports its own result through
:meth:`tableenvs.core.table_env.TableEnv.outcome`) and the policies (:mod:`tableenvs.policies`). ``tableenvs eval`` and
``tableenvs train``'s evaluations are thin callers of :func:`evaluate`. Full guide: ``docs/evaluation.md``.

Usage::

    from tableenvs.evaluation import evaluate
    result = evaluate("llama_party_v0", ["random", "heuristic", "runs/quick/model.zip"], games=1200)
    print(result.format_table())
    result.save("runs/eval")   # results.json, policies.csv, games.csv, head_to_head.csv, paired.csv, ratings.png

One module per job:

=================  =====================================================================================================
``seating``        balanced seating designs: every entrant in every seat and after every other entrant equally
                   often, in blocks (:func:`~tableenvs.evaluation.seating.seating_plan`)
``playing``        seeds (duplicate deals: one deal per block), one game, batches of games for the workers
``backends``       local processes or Ray tasks; results never depend on them; a dead worker's games re-run once
``journal``        a running tournament's arguments and append-only log of finished games (for ``--resume``)
``statistics``     per-entrant rows, the pairwise table, paired comparisons over blocks
``reports``        :class:`EvaluationResult`: tables, strict JSON, CSV, the ratings PNG
``output_folder``  the output folder written all at once (a sibling folder renamed into place)
``models``         labels (``runs/quick/model.zip`` is ``quick``) and the training records beside saved models
=================  =====================================================================================================

Two kinds of tournament:

* **round robin** (``opponents=None``): the listed policies share the table, seated by
  :func:`~tableenvs.evaluation.seating.seating_plan`;
* **gauntlet** (``opponents`` given, as in ``tableenvs train``'s tables): each listed policy in turn holds one seat
  against a fixed field of opponents in the others (one spec for every other seat, or a list of ``n - 1``
  starting at the candidate's left); with duplicate deals every candidate plays the same cards from the same seat.

``games`` is rounded up to whole blocks of the design (the header says so): only whole blocks are balanced.

Interruption: a game depends only on the seed, its index and its seating, so ``finished=`` (games of an earlier,
interrupted run, e.g. :func:`tableenvs.evaluation.journal.read_log`) are taken as they are and only the others are
played: the result equals an uninterrupted run's. ``on_games`` receives every batch of games as it finishes (to
log them). Ctrl-C (or SIGTERM inside :func:`~tableenvs.evaluation.backends.stop_on_signals`) raises
:class:`~tableenvs.evaluation.backends.Interrupted`, and a worker that dies twice
:class:`~tableenvs.evaluation.backends.WorkerLost`, both carrying ``records`` (every game finished) and
``partial`` (an :class:`EvaluationResult` marked partial of the whole blocks finished from game 0, or None).
"""

from __future__ import annotations

import math
import pickle
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from tableenvs.core.registry import make_raw
from tableenvs.core.registry import spec as game_spec
from tableenvs.core.validation import check_at_least, check_bool
from tableenvs.paths import is_model_path
from tableenvs.policies import PolicySpec, make_policy

from .backends import BACKENDS, Interrupted, WorkerLost, run_batches
from .batched import play_batched
from .models import check_training_record, label, labels, trained_players, training_config
from .playing import (
    Batch,
    GameRecord,
    PlayedGame,
    _setup_key,
    game_seeds,
    limit_torch_threads,
    play_batch,
    play_planned_game,
)
from .reports import EvaluationResult, strict_json
from .seating import SeatingPlan, gauntlet_plan, seating_plan

__all__ = [
    "EvaluationResult",
    "GameRecord",
    "PlayedGame",
    "Interrupted",
    "SeatingPlan",
    "evaluate",
    "game_seeds",
    "gauntlet_plan",
    "play_planned_game",
    "seating_plan",
    "strict_json",
    "WorkerLost",
]

#: Most games handed to a worker at once (smaller batches balance load and move the progress bar more often) when
#: it builds the env and the policies afresh for every batch.
MAX_BATCH = 60

#: Most games handed to a worker at once when it reuses its env and policies (every policy a name or a path): a
#: batch then costs no set-up, and each finished batch reaches the journal, so an interruption loses at most the
#: games of the batches under way (minutes of search games, where batches of 60 held tens of minutes).
REUSED_BATCH = 8

#: Games per batch on the batched engine (rows of one engine; whatever the worker count).
BATCHED_GAMES = 1024

#: Where the games are played: ``"auto"`` (the batched engine when possible with the AEC path's results, else the
#: AEC env), ``"aec"`` or ``"batched"`` (an error when not possible).
ENGINES = ("auto", "aec", "batched")


def evaluate(
    env: str,
    policies: Sequence[PolicySpec],
    games: int,
    *,
    opponents: PolicySpec | Sequence[PolicySpec] | None = None,
    num_players: int | None = None,
    options: dict[str, Any] | None = None,
    seed: int = 0,
    duplicate: bool = True,
    workers: int = 1,
    backend: str = "local",
    ray_address: str | None = None,
    deterministic: bool = True,
    torch_threads: int = 1,
    progress: bool | Callable[[int], None] = False,
    finished: Iterable[PlayedGame] = (),
    trust_models: bool = False,
    on_games: Callable[[list[PlayedGame]], None] | None = None,
    engine: str = "auto",
) -> EvaluationResult:
    """Play at least ``games`` games of ``env`` between ``policies`` and return an :class:`EvaluationResult`.

    ``opponents`` turns the round robin into a gauntlet (module docstring). ``num_players`` (or
    ``options["num_players"]``) sets the seats; by default the player count a saved model's training record
    names, else one seat per policy (round robin) or the env's default (gauntlet). ``seed`` fixes every deal and
    every policy draw; ``duplicate`` deals every game of a block the same cards (default; ``False`` deals every
    game anew). ``workers`` and ``backend`` ("local" processes or "ray" tasks) never change the results.
    ``deterministic`` applies to saved SB3 models (argmax over legal actions; False samples); ``torch_threads``
    is the number of torch threads the players run on, in this process and in workers (default 1, the fastest for
    small policy networks). ``progress``: True shows a tqdm bar (redrawn every second, so its time moves during a
    long game); a callable receives 0 when the games start, then the number of games just finished.
    ``finished``: games already played by an earlier run with the same arguments (not played again);
    ``on_games(records)`` is called in this process with each batch of games as it finishes (module docstring).
    ``trust_models``: load SB3 ``.zip`` policies (pickles, which can run code; refused without it, here and in the
    workers, which get the flag with their games). ``engine``: ``"auto"`` plays on the game's batched engine
    (:mod:`tableenvs.evaluation.batched`) when it has one and every policy has a batched player (random, heuristic,
    greedy numpy models: the same records as the AEC path), else on the AEC env; ``"aec"`` always on the AEC env;
    ``"batched"`` on the batched engine or a one-line error naming the game or policy that cannot be (a sampled
    model is batched there, drawing from another stream than the AEC path's).

    Everything is checked before the first game: the env name and options, every policy (built against the env,
    so a saved model with another observation or action size fails here, and so does one whose training record
    names another game or player count), ``games``, ``workers``, ``backend``.
    """
    options = dict(options or {})
    game_spec(env)  # unknown name: ValueError listing the names
    games, seed = check_at_least("games", games, 1), check_at_least("seed", seed, 0)
    workers, torch_threads = check_at_least("workers", workers, 1), check_at_least("torch_threads", torch_threads, 1)
    duplicate = check_bool("duplicate", duplicate)
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(map(repr, BACKENDS))}, got {backend!r}")
    candidates = list(policies) if isinstance(policies, (list, tuple)) else [policies]  # one spec alone too
    if not candidates:
        raise ValueError("policies is empty: give at least one policy")
    notes: list[str] = []
    _check_model_games(env, candidates, _field_list(opponents))
    seats_from = _choose_players(env, candidates, num_players, options, opponents is None, notes)
    try:
        raw_env = make_raw(env, **options)  # checks option names and values
    except (ValueError, TypeError) as error:
        # A bad policy name is the likelier mistake than the player count it implied (evaluate(env, ["nope"]))
        _check_policy_names(env, candidates, _field_list(opponents), options)
        if seats_from == "policies":
            raise type(error)(
                f"{error} (a round robin seats one player per policy and {len(candidates)} "
                f"{'was' if len(candidates) == 1 else 'were'} given: list more policies, or give num_players)"
            ) from None
        raise
    n = raw_env.num_players

    if opponents is None:
        specs, field_labels = candidates, []
        plan = seating_plan(len(candidates), n)
    else:
        field = list(opponents) if isinstance(opponents, (list, tuple)) else [opponents]
        if len(field) not in (1, n - 1):
            raise ValueError(
                f"opponents lists one policy for every other seat or one per other seat ({n - 1} for {n} players), "
                f"got {len(field)}"
            )
        specs = candidates + field
        if len(field) == 1:
            field_labels = [f"{label(field[0])} (field)"]
        else:
            field_labels = [f"{label(spec)} (field, left +{j + 1})" for j, spec in enumerate(field)]
        plan = gauntlet_plan(len(candidates), n, len(field))
    for index, spec in enumerate(specs):
        what = f"policy #{index + 1}" if index < len(candidates) else f"opponent #{index - len(candidates) + 1}"
        try:
            make_policy(spec, raw_env, deterministic=deterministic, trust_models=trust_models)
            check_training_record(spec, raw_env)
        except (ValueError, TypeError, FileNotFoundError) as error:
            raise type(error)(f"{what} ({label(spec)}): {error}") from None
    limit_torch_threads(torch_threads)
    engine = _choose_engine(engine, env, options, specs, raw_env, deterministic, notes)
    if backend == "local" and workers > 1:
        for index, spec in enumerate(specs):
            try:
                pickle.dumps(spec)
            except Exception as error:  # noqa: BLE001 - any pickling failure means the same thing here
                raise ValueError(
                    f"policy #{index + 1} ({label(spec)}) cannot be sent to worker processes ({error}); use a "
                    "name, a .zip path, a module-level function or class instance, or workers=1"
                ) from None
    try:
        import openskill  # noqa: F401 - checked now rather than after the games
    except ImportError:
        raise ImportError("evaluation needs the openskill package: pip install 'tableenvs[eval]'") from None

    total = plan.blocks_for(games) * plan.size
    if total != games:
        notes.append(f"games rounded up from {games} to {total}: whole blocks of {plan.size} seatings are balanced")
    played = _check_finished(finished, plan, total, n)
    resumed = len(played)
    todo = [g for g in range(total) if g not in played]

    def batch(games: Sequence[int]) -> Batch:
        return Batch(
            env,
            options,
            tuple(specs),
            deterministic,
            torch_threads,
            seed,
            duplicate,
            plan,
            tuple(games),
            trust_models,
            engine,
        )

    reused = _setup_key(batch(())) is not None  # each worker builds the env and the policies once, not per batch
    if engine == "batched":
        batch_size = BATCHED_GAMES  # rows of one engine, whatever the worker count
    elif backend == "local" and workers == 1 and reused:
        batch_size = 1  # in this process, with the setup reused: every game is reported (and logged) as it ends
    else:
        batch_size = max(1, min(REUSED_BATCH if reused else MAX_BATCH, math.ceil(len(todo) / (workers * 8))))
    batches = [batch(todo[start : start + batch_size]) for start in range(0, len(todo), batch_size)]
    bar = None
    if progress is True:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, initial=resumed, unit="game", desc=env)
        tick = bar.update
        stop_refreshing = _keep_fresh(bar)
    elif callable(progress):
        tick = progress
    else:
        tick = None

    def result(records: list[PlayedGame], seconds: float, partial: dict[str, Any] | None = None) -> EvaluationResult:
        return EvaluationResult(
            env=env,
            options={key: value for key, value in options.items() if _is_jsonable(value)},
            num_players=n,
            labels=labels(candidates) + field_labels,
            candidates=len(candidates),
            seed=seed,
            plan=plan,
            duplicate=duplicate,
            records=records,
            score_name=raw_env.score_name,
            higher_is_better=raw_env.higher_is_better,
            workers=workers,
            backend=backend,
            seconds=seconds,
            notes=notes + ([] if partial is None else [partial["note"]]),
            partial=partial,
            resumed=min(resumed, len(records)),
        )

    def batch_done(_index: int, records: list[PlayedGame]) -> None:
        if on_games is not None:  # logged first: a game reported in the partial results is always in the log
            on_games(records)
        for record in records:
            played[record.index] = record
        if tick is not None:
            tick(len(records))

    started = time.perf_counter()
    if callable(progress) and progress is not True:
        progress(0)  # every check passed: the games start now
    try:
        run_batches(
            play_batched if engine == "batched" else play_batch,
            batches,
            workers=workers,
            backend=backend,
            ray_address=ray_address,
            on_result=batch_done,
        )
    except (KeyboardInterrupt, WorkerLost) as error:
        stop = error if isinstance(error, (Interrupted, WorkerLost)) else Interrupted("SIGINT")
        stop.records, stop.planned = [played[g] for g in sorted(played)], total
        whole = 0  # the finished games from game 0 on, in whole blocks: a tournament of fewer blocks
        while whole in played:
            whole += 1
        whole -= whole % plan.size
        if whole:
            why = f"stopped by {stop.signal_name}" if isinstance(stop, Interrupted) else "a worker process died twice"
            partial = {
                "reason": stop.signal_name if isinstance(stop, Interrupted) else "worker lost",
                "games_finished": len(played),
                "games_planned": total,
                "games_reported": whole,
                "note": f"PARTIAL RESULTS: {why} after {len(played)} of {total} games; these statistics cover "
                f"games 0-{whole - 1} ({whole // plan.size} whole blocks)",
            }
            stop.partial = result(stop.records[:whole], time.perf_counter() - started, partial)
        if stop is error:
            raise
        raise stop from None
    finally:
        if bar is not None:
            stop_refreshing()
            bar.close()
    return result([played[g] for g in range(total)], time.perf_counter() - started)


#: Seconds between redraws of the progress bar while no game ends (its elapsed time moves on during a long game).
REFRESH_SECONDS = 1.0


def _keep_fresh(bar: Any) -> Callable[[], None]:
    """Redraw ``bar`` every :data:`REFRESH_SECONDS` from a daemon thread, so that a tournament of few long games
    (search, OpenSpiel bots) shows its elapsed time moving rather than a frozen bar; returns the function that stops
    it (and waits for the thread)."""
    import threading

    stop = threading.Event()

    def refresh() -> None:
        while not stop.wait(REFRESH_SECONDS):
            bar.refresh()

    thread = threading.Thread(target=refresh, name="tableenvs-eval-progress", daemon=True)
    thread.start()

    def stop_refreshing() -> None:
        stop.set()
        thread.join()

    return stop_refreshing


def _check_finished(finished: Iterable[PlayedGame], plan: SeatingPlan, total: int, n: int) -> dict[int, PlayedGame]:
    """``finished`` by game index, each checked to be a game of this tournament (index, block, seating, seats)."""
    played: dict[int, PlayedGame] = {}
    for record in finished:
        if not isinstance(record, PlayedGame):
            raise TypeError(f"finished must hold PlayedGame objects, got {type(record).__name__}")
        if not 0 <= record.index < total:
            raise ValueError(f"finished game {record.index} is not a game of this tournament (games 0-{total - 1})")
        seating = plan.seating(record.index)
        if tuple(record.entrants) != seating or record.block != record.index // plan.size:
            raise ValueError(
                f"finished game {record.index} does not fit this tournament: block {record.block}, seating "
                f"{tuple(record.entrants)}; this tournament plays it in block {record.index // plan.size}, seating "
                f"{seating}"
            )
        if not len(record.rewards) == len(record.scores) == len(record.ranks) == n:
            raise ValueError(f"finished game {record.index} has {len(record.rewards)} seats, this tournament {n}")
        if played.setdefault(record.index, record) != record:
            raise ValueError(f"finished holds two different records of game {record.index}")
    return played


def _choose_players(
    env: str, candidates: list[Any], num_players: int | None, options: dict[str, Any], round_robin: bool, notes: list
) -> str:
    """Set ``options["num_players"]``: given, else a saved model's training record, else the default. Returns where
    the count came from: ``"given"`` (argument or option), ``"trained"``, ``"policies"`` (one seat per policy of
    a round robin) or ``"default"`` (the env's own)."""
    if num_players is not None:
        if not _is_int(num_players):
            raise ValueError(f"num_players must be an integer, got {num_players!r}")
        if "num_players" in options and options["num_players"] != num_players:
            raise ValueError(f"num_players={num_players} contradicts options['num_players']={options['num_players']}")
        options["num_players"] = int(num_players)
        return "given"
    if "num_players" in options:
        return "given"
    env_class = game_spec(env).raw_env_class()
    trained = {(trained_players(spec, env_class, env), label(spec)) for spec in candidates}
    trained = {(players, name) for players, name in trained if players is not None}
    counts = {players for players, _ in trained}
    if len(counts) > 1:
        said = ", ".join(f"{name}: {players}" for players, name in sorted(trained))
        raise ValueError(f"the models were trained with different player counts ({said}); give num_players")
    if counts:
        options["num_players"] = counts.pop()
        names = ", ".join(sorted(name for _, name in trained))
        notes.append(f"{options['num_players']} players, as the training record of {names} says")
        return "trained"
    if round_robin:
        options["num_players"] = len(candidates)
        return "policies"
    return "default"


def _choose_engine(
    engine: str, env: str, options: dict[str, Any], specs: list[Any], raw_env: Any, deterministic: bool, notes: list
) -> str:
    """``"aec"`` or ``"batched"``: where the games are played (``evaluate``'s ``engine``); ``"batched"`` when not
    possible is a one-line ``ValueError`` naming why."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(map(repr, ENGINES))}, got {engine!r}")
    if engine == "aec":
        return "aec"
    from .batched import cannot_batch, same_as_aec

    reason = cannot_batch(env, options, specs, raw_env, deterministic)
    if engine == "batched":
        if reason is not None:
            raise ValueError(f"engine 'batched' is not possible: {reason} (use 'auto' or 'aec')")
    elif reason is not None or not same_as_aec(specs, deterministic):
        return "aec"
    notes.append(f"played on the batched engine of {env} (tableenvs.vector)")
    return "batched"


def _field_list(opponents: Any) -> list[Any]:
    """The opponents argument as a list of specs (empty for a round robin)."""
    return [] if opponents is None else list(opponents) if isinstance(opponents, (list, tuple)) else [opponents]


def _check_model_games(env: str, candidates: list[Any], field: list[Any]) -> None:
    """Refuse, in one line, a saved model whose header or training record names another game than ``env``: before
    the player count is taken from it, which would otherwise be the first thing to fail."""
    specs = [(f"policy #{i + 1}", spec) for i, spec in enumerate(candidates)]
    specs += [(f"opponent #{i + 1}", spec) for i, spec in enumerate(field)]
    for what, spec in specs:
        found = training_config(spec, env)
        if found is not None and found[1]["env"] != env:
            raise ValueError(
                f"{what} ({label(spec)}): wrong game: this model was made for {found[1]['env']}, not {env}"
            )


def _check_policy_names(env: str, candidates: list[Any], field: list[Any], options: dict[str, Any]) -> None:
    """Raise the policy's own error (``policy #1 (nope): unknown policy 'nope'; ...``) for a policy named by text
    (not a model file) that names no policy, checked on the env with its default player count; else nothing."""
    try:
        probe = make_raw(env, **{key: value for key, value in options.items() if key != "num_players"})
    except (ValueError, TypeError):
        return  # the options themselves are wrong: the caller's error says so
    specs = [(f"policy #{i + 1}", spec) for i, spec in enumerate(candidates)]
    specs += [(f"opponent #{i + 1}", spec) for i, spec in enumerate(field)]
    for what, spec in specs:
        if isinstance(spec, str) and not is_model_path(spec) and not spec.endswith(".pt"):
            try:
                make_policy(spec, probe)
            except (ValueError, TypeError) as error:
                raise ValueError(f"{what} ({label(spec)}): {error}") from None


def _is_int(value: Any) -> bool:
    import numbers

    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_jsonable(value: Any) -> bool:
    """Whether ``strict_json`` accepts ``value``."""
    try:
        strict_json(value)
        return True
    except (TypeError, ValueError):
        return False


def __getattr__(name: str) -> Any:
    """``play_game``, this package's old name of :func:`play_planned_game` (``tableenvs.policies.play_game`` is the
    plain one-game loop), still works with a ``DeprecationWarning``."""
    if name == "play_game":
        import warnings

        warnings.warn(
            "tableenvs.evaluation.play_game is now play_planned_game (tableenvs.policies.play_game plays one game)",
            DeprecationWarning,
            stacklevel=2,
        )
        return play_planned_game
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
