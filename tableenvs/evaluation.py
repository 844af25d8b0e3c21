"""Tournaments: play many games of one env between a list of policies and rate them.

Where you are: the evaluation layer on top of the games, the policies (:mod:`tableenvs.policies`), the statistics
(:mod:`tableenvs.ratings`) and the workers (:mod:`tableenvs.parallel`). ``tableenvs eval`` is a thin CLI over
:func:`evaluate`. Full guide: ``docs/evaluation.md``.

Usage::

    from tableenvs.evaluation import evaluate
    result = evaluate("pilipili_v0", ["random", "heuristic", "runs/train/model.zip"], games=600, workers=2)
    print(result.format_table())
    result.save("runs/eval")          # results.json, policies.csv, games.csv, head_to_head.csv, ratings.png

====================  ==========================================================================================
Entrants              the ``policies`` list: anything :func:`tableenvs.policies.make_policy` accepts ("random",
                      "heuristic", a saved SB3 ``.zip``, a Policy object, a callable). Listing the same spec
                      twice makes two entrants (labelled ``random``, ``random#2``)
Players               ``num_players`` defaults to the number of entrants (``k``); any count the env accepts
Seating               game ``g`` (0-based), seat ``s``: if ``n >= k``, entrant ``(s + g) mod k`` (a rotation;
                      with ``n > k`` entrants fill several seats, cycling through the list); if ``n < k``,
                      ``itertools.permutations(range(k), n)[g mod P]`` (every ordered table of ``n`` distinct
                      entrants, ``P = k!/(k-n)!``). Over every whole cycle (``k`` resp. ``P`` games) each entrant
                      sits in each seat equally often; ``games`` not a multiple of the cycle leaves a remainder
                      (reported as ``seat_counts``)
Seeds                 ``SeedSequence(seed, spawn_key=(g, 0))`` seeds game ``g``'s deal (``env.reset(seed=...)``),
                      ``SeedSequence(seed, spawn_key=(g, 1))`` the generator the policies draw from in game ``g``.
                      A game depends only on ``(seed, g)``: results are identical for any worker count, batch
                      size or backend (policies must not carry state from one game to the next)
Winners               the game's own winners (``env.unwrapped.game.winners``, tie-breaks included) when it ended
                      by its rules; for a truncated game or a game that names none: the best final score (below)
                      or, without one, the highest total reward. A win shared by ``w`` seats counts ``1/w`` each
Final score           read from the engine at the end: ``pilipili_v0`` -> ``game.chilis`` (chilis held, lower is
                      better); ``llama_party_v0`` -> ``game.totals`` (points, higher is better); ``rummikub_v0``
                      -> ``game.scores`` (episode points, higher is better; the engine names no episode winner,
                      so the best score wins); other envs: none (see :data:`FINAL_SCORES`). Total reward is the
                      sum of the env's rewards for the seat
Ranks                 winners rank 1; the others by final score (or total reward), ties sharing a rank
====================  ==========================================================================================

Per entrant: ``appearances`` (seat-games; an entrant in two seats of one game appears twice), win rate (shared
wins split) with a 95% Wilson interval, mean total reward and mean final score with 95% normal intervals, mean
rank, OpenSkill Plackett-Luce ``mu`` +- 1.96 ``sigma`` (games rated in game order), and an Elo-style Bradley-Terry
rating +- 1.96 standard errors fitted on the pairwise table. The pairwise (head-to-head) table counts, for every
game and every two seats held by different entrants, a win for the one that finished ahead (a draw for equal
ranks): with 2 players this is exactly the head-to-head record; with more players it is the pairwise finishing
order, whose pairs from one game are not independent (the Elo intervals are then too narrow). Intervals treat
appearances as independent, which they are across games, not within a game where one entrant holds several seats.
"""

from __future__ import annotations

import csv
import inspect
import itertools
import json
import math
import pickle
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tableenvs.parallel import BACKENDS, run_batches
from tableenvs.policies import PolicySpec, make_policy
from tableenvs.policies import play_game as play_game_on
from tableenvs.ratings import (
    Z95,
    competition_ranks,
    elo_ratings,
    mean_interval,
    openskill_ratings,
    wilson_interval,
)
from tableenvs.registry import make_raw
from tableenvs.registry import spec as game_spec


@dataclass(frozen=True)
class FinalScore:
    """Where a game's final score lives: ``getattr(env.unwrapped.game, attribute)``, one number per seat."""

    attribute: str
    label: str
    higher_is_better: bool


#: Final score per env name. An env missing here is ranked by total reward and reports no final score.
FINAL_SCORES: dict[str, FinalScore] = {
    "pilipili_v0": FinalScore("chilis", "chilis", higher_is_better=False),
    "llama_party_v0": FinalScore("totals", "points", higher_is_better=True),
    "rummikub_v0": FinalScore("scores", "points", higher_is_better=True),
}

#: Most games handed to a worker at once (smaller batches balance load and move the progress bar more often).
MAX_BATCH = 50


# ---------------------------------------------------------------------------------------------- seating and seeds


def cycle_length(num_entrants: int, num_players: int) -> int:
    """Games in one full seating cycle (see the module docstring)."""
    if num_players >= num_entrants:
        return num_entrants
    return math.perm(num_entrants, num_players)


def seating(game_index: int, num_entrants: int, num_players: int) -> tuple[int, ...]:
    """The entrant in each seat of game ``game_index`` (see the module docstring)."""
    k, n = num_entrants, num_players
    if n >= k:
        return tuple((seat + game_index) % k for seat in range(n))
    position = game_index % math.perm(k, n)
    return next(itertools.islice(itertools.permutations(range(k), n), position, None))


def game_seeds(seed: int, game_index: int) -> tuple[int, np.random.Generator]:
    """``(deal seed, policy generator)`` of game ``game_index``; a pure function of its arguments."""
    deal = np.random.SeedSequence(seed, spawn_key=(game_index, 0)).generate_state(2, np.uint32)
    deal_seed = int(deal[0]) << 32 | int(deal[1])
    policy_rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(game_index, 1)))
    return deal_seed, policy_rng


# ---------------------------------------------------------------------------------------------- one game


@dataclass(frozen=True)
class GameRecord:
    """The outcome of one game. Lists are by seat."""

    index: int
    entrants: tuple[int, ...]
    rewards: tuple[float, ...]  # total reward of each seat
    final_scores: tuple[float, ...] | None
    winners: tuple[int, ...]  # seats
    ranks: tuple[int, ...]
    truncated: bool
    decisions: int


def play_game(raw_env: Any, policies: Sequence[Any], game_index: int, entrants: Sequence[int], seed: int) -> GameRecord:
    """Play game ``game_index`` on the raw env with ``policies[entrants[seat]]`` in each seat."""
    deal_seed, rng = game_seeds(seed, game_index)
    totals, decisions = play_game_on(raw_env, [policies[e] for e in entrants], seed=deal_seed, rng=rng)
    totals = totals.tolist()
    terminations, truncations = raw_env.terminations, raw_env.truncations
    truncated = any(truncations.values()) and not any(terminations.values())
    return _outcome(raw_env, game_index, tuple(entrants), totals, truncated, decisions)


def _outcome(raw_env, index, entrants, totals, truncated, decisions) -> GameRecord:
    name = raw_env.metadata["name"]
    engine = getattr(raw_env, "game", None)
    final = FINAL_SCORES.get(name)
    final_scores = None
    if final is not None:
        final_scores = tuple(float(x) for x in getattr(engine, final.attribute))
        keys = [(-s if final.higher_is_better else s) for s in final_scores]
    else:
        keys = [-t for t in totals]
    named = getattr(engine, "winners", None)
    if named and not truncated:
        winners = tuple(sorted(int(s) for s in named))
    else:
        best = min(keys)
        winners = tuple(s for s, key in enumerate(keys) if key == best)
    ranks = competition_ranks([(0 if s in winners else 1, key) for s, key in enumerate(keys)])
    return GameRecord(
        index, entrants, tuple(float(t) for t in totals), final_scores, winners, tuple(ranks), truncated, decisions
    )


@dataclass(frozen=True)
class _Batch:
    env: str
    options: dict[str, Any]
    specs: tuple[Any, ...]
    deterministic: bool
    seed: int
    num_entrants: int
    games: tuple[int, ...]
    in_worker: bool  # played in a worker process or Ray task, not in the caller's process


#: ``(key, raw env, policies)`` of the last batch this process played, reused by the next batch with the same key.
_LAST_SETUP: tuple[Any, Any, list[Any]] | None = None


def _play_batch(batch: _Batch) -> list[GameRecord]:
    """Worker entry point: build the env and the policies (or reuse the last batch's), play the batch's games."""
    global _LAST_SETUP
    key = _setup_key(batch)
    if key is not None and _LAST_SETUP is not None and _LAST_SETUP[0] == key:
        _, raw_env, policies = _LAST_SETUP
    else:
        raw_env = make_raw(batch.env, **batch.options)
        policies = _build_policies(batch.specs, raw_env, batch.deterministic)
        _LAST_SETUP = None if key is None else (key, raw_env, policies)
    if batch.in_worker and "torch" in sys.modules:  # SB3 models: one thread per worker, or workers fight for cores
        sys.modules["torch"].set_num_threads(1)
    n = raw_env.num_players
    return [play_game(raw_env, policies, g, seating(g, batch.num_entrants, n), batch.seed) for g in batch.games]


def _setup_key(batch: _Batch) -> Any:
    """What identifies a batch's env and policies, or None when they must be built afresh.

    Only specs given by name or path qualify (an object arriving in a worker is a new copy each batch); a saved
    model's key includes its file's modification time and size, so a model saved again is loaded again.
    """
    files = []
    for spec in batch.specs:
        if not isinstance(spec, (str, Path)):
            return None
        if isinstance(spec, Path) or str(spec).endswith(".zip"):
            try:
                stat = Path(spec).stat()
            except OSError:
                return None
            files.append((str(Path(spec).resolve()), stat.st_mtime_ns, stat.st_size))
    try:
        options = json.dumps(batch.options, sort_keys=True)
    except (TypeError, ValueError):
        return None
    return (batch.env, options, tuple(map(str, batch.specs)), tuple(files), batch.deterministic)


def _build_policies(specs: Sequence[Any], raw_env: Any, deterministic: bool) -> list[Any]:
    built: dict[Any, Any] = {}
    policies = []
    for spec in specs:
        key = str(spec) if isinstance(spec, (str, Path)) else id(spec)
        if key not in built:
            built[key] = make_policy(spec, raw_env, deterministic=deterministic)
        policies.append(built[key])
    return policies


# ---------------------------------------------------------------------------------------------- the tournament


def evaluate(
    env: str,
    policies: Sequence[PolicySpec],
    games: int,
    *,
    num_players: int | None = None,
    options: dict[str, Any] | None = None,
    seed: int = 0,
    workers: int = 1,
    backend: str = "local",
    ray_address: str | None = None,
    deterministic: bool = True,
    progress: bool | Callable[[int], None] = False,
) -> EvaluationResult:
    """Play ``games`` games of ``env`` between ``policies`` and return an :class:`EvaluationResult`.

    ``num_players`` (default ``len(policies)``) and ``options`` (other env options) configure the env. ``seed``
    fixes every deal and every policy draw (see the module docstring for seating and seeds). ``workers`` and
    ``backend`` ("local" processes or "ray" tasks, :mod:`tableenvs.parallel`) never change the results.
    ``deterministic`` applies to saved SB3 models (argmax over legal actions; False samples). ``progress``: True
    shows a tqdm bar, a callable receives the number of games just finished.

    Everything is checked before the first game: the env name and options, every policy (built against the env,
    so a saved model with another observation or action size fails here, and so does one whose ``results.json``
    from ``tableenvs train`` names another game or player count), ``games``, ``workers``, ``backend``.
    """
    options = dict(options or {})
    game_spec(env)  # unknown name: ValueError listing the names
    if not isinstance(games, int) or isinstance(games, bool) or games < 1:
        raise ValueError(f"games must be an integer >= 1, got {games!r}")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(map(repr, BACKENDS))}, got {backend!r}")
    specs = list(policies) if not isinstance(policies, (str, Path)) else [policies]
    if not specs:
        raise ValueError("policies is empty: give at least one policy")
    if "num_players" in options and num_players is not None and options["num_players"] != num_players:
        raise ValueError(f"num_players={num_players} contradicts options['num_players']={options['num_players']}")
    options["num_players"] = options.get("num_players", num_players if num_players is not None else len(specs))
    raw_env = make_raw(env, **options)  # checks option names and values
    for index, spec in enumerate(specs):
        try:
            make_policy(spec, raw_env, deterministic=deterministic)
            _check_training_record(spec, raw_env)
        except (ValueError, TypeError, FileNotFoundError) as error:
            raise type(error)(f"policy #{index + 1} ({_label(spec)}): {error}") from None
    if backend == "local" and workers > 1:
        for index, spec in enumerate(specs):
            try:
                pickle.dumps(spec)
            except Exception as error:  # noqa: BLE001 - any pickling failure means the same thing here
                raise ValueError(
                    f"policy #{index + 1} ({_label(spec)}) cannot be sent to worker processes ({error}); use a "
                    "name, a .zip path, a module-level function or class instance, or workers=1"
                ) from None
    try:
        import openskill  # noqa: F401 - checked now rather than after the games
    except ImportError:
        raise ImportError("evaluation needs the openskill package: pip install 'tableenvs[eval]'") from None

    k, n = len(specs), raw_env.num_players
    batch_size = max(1, min(MAX_BATCH, math.ceil(games / (workers * 8))))
    batches = [
        _Batch(
            env,
            options,
            tuple(specs),
            deterministic,
            seed,
            k,
            tuple(range(start, min(games, start + batch_size))),
            in_worker=backend == "ray" or workers > 1,
        )
        for start in range(0, games, batch_size)
    ]
    bar = None
    if progress is True:
        from tqdm.auto import tqdm

        bar = tqdm(total=games, unit="game", desc=env)
        tick = bar.update
    elif callable(progress):
        tick = progress
    else:
        tick = None
    started = time.perf_counter()
    try:
        batch_results = run_batches(
            _play_batch,
            batches,
            workers=workers,
            backend=backend,
            ray_address=ray_address,
            on_result=None if tick is None else (lambda _index, records: tick(len(records))),
        )
    finally:
        if bar is not None:
            bar.close()
    elapsed = time.perf_counter() - started
    records = [record for batch in batch_results for record in batch]
    final = FINAL_SCORES.get(env)
    return EvaluationResult(
        env=env,
        options={key: value for key, value in options.items() if _jsonable(value)},
        num_players=n,
        labels=_labels(specs),
        seed=seed,
        records=records,
        final_score=final,
        workers=workers,
        backend=backend,
        seconds=elapsed,
    )


def _check_training_record(spec: Any, raw_env: Any) -> None:
    """A saved model's game and player count, when ``tableenvs train``'s ``results.json`` lies beside it.

    A ``.zip`` does not name its game; :class:`~tableenvs.sb3_policy.SB3Policy` checks the observation and action
    sizes, but Llama Party's and Rummikub's sizes do not depend on the player count. ``tableenvs train`` writes
    ``results.json`` (``config.env``, ``config.options``) next to ``model.zip``: when it is there, both must match.
    """
    if not isinstance(spec, (str, Path)) or not str(spec).endswith(".zip"):
        return
    record = Path(spec).with_name("results.json")
    try:
        config = json.loads(record.read_text())["config"]
        trained_env, trained_options = config["env"], dict(config.get("options") or {})
    except (OSError, ValueError, KeyError, TypeError):
        return  # no readable training record: the size check is all there is
    name = raw_env.metadata["name"]
    if trained_env != name:
        raise ValueError(f"{record} says this model was trained on {trained_env}, not {name}")
    players = trained_options.get("num_players")
    if players is None:
        default = inspect.signature(type(raw_env).__init__).parameters.get("num_players")
        players = None if default is None else default.default
    if players is not None and players != raw_env.num_players:
        raise ValueError(
            f"{record} says this model was trained with {players} players; this tournament has {raw_env.num_players}"
        )


def _label(spec: Any) -> str:
    if isinstance(spec, (str, Path)):
        return Path(spec).name if str(spec).endswith(".zip") or isinstance(spec, Path) else str(spec)
    return str(getattr(spec, "name", None) or getattr(spec, "__name__", None) or type(spec).__name__)


def _labels(specs: Sequence[Any]) -> list[str]:
    labels, seen = [], {}
    for spec in specs:
        base = _label(spec)
        seen[base] = seen.get(base, 0) + 1
        labels.append(base if seen[base] == 1 else f"{base}#{seen[base]}")
    return labels


def _finite_or_none(value: Any) -> Any:
    """NaN (e.g. the win rate of an entrant that never got a seat in a short run) as None: strict JSON."""
    return None if isinstance(value, float) and math.isnan(value) else value


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
        return True
    except TypeError:
        return False


# ---------------------------------------------------------------------------------------------- results


@dataclass
class EvaluationResult:
    """Every game's record and the statistics computed from them (see the module docstring)."""

    env: str
    options: dict[str, Any]
    num_players: int
    labels: list[str]
    seed: int
    records: list[GameRecord]
    final_score: FinalScore | None
    workers: int = 1
    backend: str = "local"
    seconds: float = 0.0
    policies: list[dict[str, Any]] = field(init=False)
    head_to_head: dict[str, Any] = field(init=False)

    def __post_init__(self):
        self.policies, self.head_to_head = _statistics(self)

    @property
    def games(self) -> int:
        return len(self.records)

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds if self.seconds > 0 else math.nan

    def seat_counts(self) -> np.ndarray:
        """``[entrant, seat]`` number of games the entrant sat in the seat."""
        counts = np.zeros((len(self.labels), self.num_players), dtype=np.int64)
        for record in self.records:
            for seat, entrant in enumerate(record.entrants):
                counts[entrant, seat] += 1
        return counts

    def to_dict(self) -> dict[str, Any]:
        """Everything as plain JSON data (what ``results.json`` holds), without timing."""
        return {
            "env": self.env,
            "options": self.options,
            "num_players": self.num_players,
            "entrants": self.labels,
            "games": self.games,
            "seed": self.seed,
            "cycle_length": cycle_length(len(self.labels), self.num_players),
            "final_score": None
            if self.final_score is None
            else {"name": self.final_score.label, "higher_is_better": self.final_score.higher_is_better},
            "truncated_games": sum(r.truncated for r in self.records),
            "mean_decisions": float(np.mean([r.decisions for r in self.records])),
            "policies": [{key: _finite_or_none(value) for key, value in row.items()} for row in self.policies],
            "head_to_head": self.head_to_head,
            "seat_counts": self.seat_counts().tolist(),
        }

    def format_table(self) -> str:
        """A fixed-width text table, one row per entrant."""
        score = self.final_score.label if self.final_score else None
        header = ["policy", "games", "win rate [95%]", "reward [95%]"]
        if score:
            header.append(f"{score} [95%]")
        header += ["rank", "openskill mu±1.96σ", "elo ±1.96se"]
        rows = [header]
        for row in self.policies:
            cells = [
                row["policy"],
                str(row["appearances"]),
                f"{row['win_rate']:.3f} [{row['win_rate_low']:.3f}, {row['win_rate_high']:.3f}]",
                f"{row['reward_mean']:+.2f} [{row['reward_low']:+.2f}, {row['reward_high']:+.2f}]",
            ]
            if score:
                cells.append(f"{row['score_mean']:.2f} [{row['score_low']:.2f}, {row['score_high']:.2f}]")
            cells += [
                f"{row['mean_rank']:.2f}",
                f"{row['openskill_mu']:.2f} ± {Z95 * row['openskill_sigma']:.2f}",
                "-" if row["elo"] is None else f"{row['elo']:.0f} ± {Z95 * row['elo_se']:.0f}",
            ]
            rows.append(cells)
        widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        truncated = sum(r.truncated for r in self.records)
        lines.append(
            f"{self.env}, {self.num_players} players, {self.games} games (seed {self.seed})"
            + (f", {truncated} truncated" if truncated else "")
        )
        if len(self.labels) > 1:
            lines.append("")
            lines.append(self.format_head_to_head())
        return "\n".join(lines)

    def format_head_to_head(self) -> str:
        """Row's score against column (wins + draws/2 over meetings) as a text matrix."""
        table = self.head_to_head
        what = "head-to-head" if self.num_players == 2 else "pairwise finishing order"
        width = max(8, *(len(label) for label in self.labels))
        lines = [f"{what}: row's score vs column".ljust(width + 2) + "".join(x.rjust(width + 2) for x in self.labels)]
        for i, label in enumerate(self.labels):
            cells = []
            for j in range(len(self.labels)):
                count = table["meetings"][i][j]
                cells.append("-" if i == j or count == 0 else f"{table['score_rate'][i][j]:.3f}")
            lines.append(label.ljust(width + 2) + "".join(c.rjust(width + 2) for c in cells))
        return "\n".join(lines)

    def save(self, out: str | Path, plot: bool = True) -> dict[str, Path]:
        """Write ``results.json``, ``policies.csv``, ``games.csv``, ``head_to_head.csv`` and (``plot``)
        ``ratings.png`` under ``out``; return their paths by kind."""
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        paths = {
            "json": out / "results.json",
            "policies_csv": out / "policies.csv",
            "games_csv": out / "games.csv",
            "head_to_head_csv": out / "head_to_head.csv",
        }
        paths["json"].write_text(json.dumps(self.to_dict(), indent=2) + "\n")
        with paths["policies_csv"].open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(self.policies[0]))
            writer.writeheader()
            writer.writerows(self.policies)
        with paths["games_csv"].open("w", newline="") as handle:
            writer = csv.writer(handle)
            n = self.num_players
            score = [f"score_{s}" for s in range(n)] if self.final_score else []
            writer.writerow(
                [
                    "game",
                    *(f"policy_{s}" for s in range(n)),
                    *(f"reward_{s}" for s in range(n)),
                    *score,
                    *(f"rank_{s}" for s in range(n)),
                    "winners",
                    "truncated",
                    "decisions",
                ]
            )
            for r in self.records:
                writer.writerow(
                    [
                        r.index,
                        *(self.labels[e] for e in r.entrants),
                        *(f"{x:g}" for x in r.rewards),
                        *(f"{x:g}" for x in (r.final_scores or ())),
                        *r.ranks,
                        " ".join(map(str, r.winners)),
                        int(r.truncated),
                        r.decisions,
                    ]
                )
        with paths["head_to_head_csv"].open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["policy", "opponent", "meetings", "score", "score_rate"])
            for i, a in enumerate(self.labels):
                for j, b in enumerate(self.labels):
                    count = self.head_to_head["meetings"][i][j]
                    if i != j and count:
                        writer.writerow(
                            [
                                a,
                                b,
                                count,
                                self.head_to_head["score"][i][j],
                                f"{self.head_to_head['score_rate'][i][j]:.6f}",
                            ]
                        )
        if plot:
            paths["png"] = out / "ratings.png"
            plot_ratings(self, paths["png"])
        return paths


def _statistics(result: EvaluationResult) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    k = len(result.labels)
    win_share: list[list[float]] = [[] for _ in range(k)]
    rewards: list[list[float]] = [[] for _ in range(k)]
    scores: list[list[float]] = [[] for _ in range(k)]
    ranks: list[list[int]] = [[] for _ in range(k)]
    pair_score = np.zeros((k, k))
    pair_count = np.zeros((k, k), dtype=np.int64)
    for record in result.records:
        share = 1.0 / len(record.winners)
        for seat, entrant in enumerate(record.entrants):
            win_share[entrant].append(share if seat in record.winners else 0.0)
            rewards[entrant].append(record.rewards[seat])
            ranks[entrant].append(record.ranks[seat])
            if record.final_scores is not None:
                scores[entrant].append(record.final_scores[seat])
        for a, b in itertools.combinations(range(len(record.entrants)), 2):
            ea, eb = record.entrants[a], record.entrants[b]
            if ea == eb:
                continue
            ra, rb = record.ranks[a], record.ranks[b]
            points = 1.0 if ra < rb else 0.5 if ra == rb else 0.0
            pair_score[ea, eb] += points
            pair_score[eb, ea] += 1.0 - points
            pair_count[ea, eb] += 1
            pair_count[eb, ea] += 1
    skill = openskill_ratings(k, [(r.entrants, r.ranks) for r in result.records])
    elo, elo_se = elo_ratings(pair_score, pair_count)
    rows = []
    for e, label in enumerate(result.labels):
        appearances = len(win_share[e])
        wins = float(sum(win_share[e]))
        low, high = wilson_interval(wins, appearances)
        reward_mean, reward_low, reward_high = mean_interval(rewards[e])
        row: dict[str, Any] = {
            "policy": label,
            "appearances": appearances,
            "games": len({r.index for r in result.records if e in r.entrants}),
            "wins": wins,
            "win_rate": wins / appearances if appearances else math.nan,
            "win_rate_low": low,
            "win_rate_high": high,
            "reward_mean": reward_mean,
            "reward_low": reward_low,
            "reward_high": reward_high,
        }
        if result.final_score is not None:
            score_mean, score_low, score_high = mean_interval(scores[e])
            row.update(score_mean=score_mean, score_low=score_low, score_high=score_high)
        row.update(
            mean_rank=float(np.mean(ranks[e])) if ranks[e] else math.nan,
            openskill_mu=skill[e][0],
            openskill_sigma=skill[e][1],
            openskill_ordinal=skill[e][0] - 3.0 * skill[e][1],
            elo=None if math.isnan(elo[e]) else float(elo[e]),
            elo_se=None if math.isnan(elo_se[e]) else float(elo_se[e]),
        )
        rows.append(row)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(pair_count > 0, pair_score / np.maximum(pair_count, 1), np.nan)
    head_to_head = {
        "kind": "head_to_head" if result.num_players == 2 else "pairwise_finishing_order",
        "entrants": result.labels,
        "meetings": pair_count.tolist(),
        "score": pair_score.tolist(),
        "score_rate": [[None if math.isnan(x) else float(x) for x in row] for row in rate],
    }
    return rows, head_to_head


def plot_ratings(result: EvaluationResult, path: str | Path) -> Path:
    """A PNG with three panels: win rate (Wilson 95%), OpenSkill mu +- 1.96 sigma, Elo +- 1.96 se."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result.policies
    y = np.arange(len(rows))[::-1]
    labels = [row["policy"] for row in rows]
    figure, axes = plt.subplots(1, 3, figsize=(13, 1.2 + 0.55 * len(rows)), sharey=True)
    panels = [
        (
            "win rate (95% Wilson)",
            [r["win_rate"] for r in rows],
            [(r["win_rate"] - r["win_rate_low"], r["win_rate_high"] - r["win_rate"]) for r in rows],
        ),
        (
            "OpenSkill Plackett-Luce mu ± 1.96σ",
            [r["openskill_mu"] for r in rows],
            [(Z95 * r["openskill_sigma"],) * 2 for r in rows],
        ),
        (
            "Elo (Bradley-Terry) ± 1.96 se",
            [math.nan if r["elo"] is None else r["elo"] for r in rows],
            [(0.0, 0.0) if r["elo_se"] is None else (Z95 * r["elo_se"],) * 2 for r in rows],
        ),
    ]
    for axis, (title, values, errors) in zip(axes, panels, strict=True):
        xerr = np.clip(np.array(errors, dtype=float).T, 0.0, None)
        axis.errorbar(values, y, xerr=xerr, fmt="o", capsize=4, color="tab:blue")
        axis.set_title(title, fontsize=10)
        axis.grid(axis="x", alpha=0.3)
    axes[0].axvline(1.0 / result.num_players, color="grey", linestyle=":", linewidth=1)
    axes[0].set_yticks(y, labels)
    axes[0].set_ylim(-0.7, len(rows) - 0.3)
    figure.suptitle(f"{result.env}: {result.num_players} players, {result.games} games (seed {result.seed})")
    figure.tight_layout()
    path = Path(path)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
