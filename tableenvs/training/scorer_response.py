"""An approximate best response of a game's own cross-entropy recipe: a candidate scorer trained against a frozen
table.

Where you are: ``tableenvs/training/``, beside :mod:`tableenvs.training.best_response` (the PPO learner) and
:mod:`tableenvs.training.scorer_recipes` (the recipes whose model and method this learner shares). A game whose
shipped model is a candidate scorer (a few weights over the features of whole-turn candidates, trained by the
cross-entropy method) is best answered by a learner of the same kind and recipe: a network that chooses one small
action at a time can start far below such a player (in one game shipped here, at the budgets tried, it never passed
even the heuristic's seats). So this learner is the recipe itself, pointed at a table of the target:

* **The table**: the learner's weights in ONE seat, the frozen target (``heuristic``, ``trained``, ``trained:path=
  FILE.npz`` or a ``.npz`` path, as :func:`tableenvs.evaluation.evaluate` plays them) in every other seat.
* **The learner**: the cross-entropy method of :mod:`tableenvs.training.scorer_recipes` over the recipe's weights,
  from the recipe's ``start`` with spread ``spread`` (the same start for every target), or from a model file's
  weights (``start``: ``"trained"``, the model shipped for the game and options, ``"trained:path=FILE.npz"`` or a
  path; a scorer of the recipe's candidates), so that the learner does not begin behind a strong target. A weight
  vector's fitness is its paired score difference over the target in the same seat, on the same deals, with the
  target in every other seat (a gauntlet of the two against a field of the target:
  :func:`tableenvs.evaluation.evaluate`), over ``games`` games of the generation's own deals (``TRAIN_SEED + 1000 *
  (seed + 1) + generation``, never the measure's). The elite's mean and spread move as in the recipe. **Budget**:
  ``generations x population x games`` games.
* **The measure**: :func:`tableenvs.training.best_response.evaluate_gain` of the final mean weights, the same
  quantity as the PPO learner's (the learner seat's total minus the mean of the target seats', per game, paired 95%
  interval over fresh duplicate deals from ``seed + 1``).

Units: games; rewards in the game's own units; CPU seconds of this process and its workers.
"""

from __future__ import annotations

import json
import resource
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tableenvs.core.validation import check_at_least

__all__ = ["ELITE", "ScorerResponseResult", "check_scorer_response", "scorer_best_response", "start_of"]

#: The weight vectors a generation keeps (its elite), by default.
ELITE = 4


@dataclass
class ScorerResponseResult:
    """What :func:`scorer_best_response` measured: the final weights' ``gain`` over the target's seats per game with
    its paired 95% interval ``low, high`` over ``deals`` duplicate deals (``games`` = deals x players), both sides'
    mean totals, and the budget spent: ``training_games`` games in ``cpu_seconds`` (this process and its workers)."""

    game: str
    options: dict[str, Any]
    target: str
    recipe: str
    training_games: int
    cpu_seconds: float
    deals: int
    games: int
    gain: float
    low: float
    high: float
    learner_mean: float
    target_mean: float

    def line(self) -> str:
        return (
            f"{self.game} {self.options}: {self.recipe} best response to {self.target} after "
            f"{self.training_games:,} games ({self.cpu_seconds:.0f} CPU s): gain {self.gain:+.3f} [{self.low:+.3f}, "
            f"{self.high:+.3f}] per game over {self.deals} deals x {self.games // max(self.deals, 1)} seatings"
        )


def check_scorer_response(game: str, recipe: str | None, options: dict[str, Any] | None = None) -> str:
    """The name of ``game``'s cross-entropy recipe ``recipe``; ``None``: the first it declares whose candidates the
    model shipped for ``options`` scores (the shipped agent's recipe), else its first. A one-line ``ValueError`` if
    the game declares none (its spec's ``recipes``) or none of that name."""
    from tableenvs.core.registry import make_raw, spec
    from tableenvs.policies.numpy_policy import load_numpy_policy, trained_file
    from tableenvs.training.scorer_recipes import recipe_of

    declared = tuple(spec(game).recipes)
    if not declared:
        raise ValueError(f"{game}'s GameSpec declares no cross-entropy recipe (its `recipes`): no scorer learner")
    if recipe is not None:
        if recipe not in declared:
            raise ValueError(f"{game} has no recipe {recipe!r}; its recipes: {', '.join(declared)}")
        return recipe
    try:
        shipped = load_numpy_policy(trained_file("trained", make_raw(game, **dict(options or {})))).candidates
    except ValueError:  # no model shipped for these options
        shipped = None
    return next((name for name in declared if recipe_of(game, name).candidates == shipped), declared[0])


def start_of(game: str, options: dict[str, Any], recipe: str, start: str | Path | None) -> np.ndarray:
    """The learner's first mean weights: ``recipe``'s start, or the weights of the model file ``start``
    (``"trained"``, ``"trained:path=FILE.npz"`` or a path) for ``game`` at ``options``; a one-line ``ValueError``
    naming ``start`` if there is none or it does not score the recipe's candidates."""
    from tableenvs.core.registry import make_raw
    from tableenvs.policies.numpy_policy import is_trained_spec, trained_file
    from tableenvs.training.scorer_recipes import recipe_of, start_weights

    chosen = recipe_of(game, recipe)
    if start is None:
        return np.array(chosen.start, np.float64)
    try:
        where = trained_file(str(start), make_raw(game, **options)) if is_trained_spec(str(start)) else Path(start)
    except ValueError as error:
        raise ValueError(f"start {str(start)!r}: {error}") from None
    return start_weights(where.expanduser(), chosen, flag="start")


def _fitness(job: tuple[str, str, dict[str, Any], np.ndarray, str, int, int]) -> float:
    """The paired score difference of one weight vector over ``target`` in the same seat, at a table of ``target``
    (a worker's task)."""
    from tableenvs.core.registry import make_raw
    from tableenvs.evaluation import evaluate
    from tableenvs.training.scorer_recipes import scorer

    game, recipe, options, weights, target, deals, games = job
    candidate = scorer(make_raw(game, **options), weights, name="learner", recipe=recipe)
    players = options.get("num_players")
    rest = {key: value for key, value in options.items() if key != "num_players"}
    result = evaluate(
        game, [candidate, target], games, opponents=target, num_players=players, options=rest, seed=deals, workers=1
    )
    return float(result.paired[0]["score_diff"])


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def scorer_best_response(
    game: str,
    target: str,
    out_dir: str | Path,
    *,
    options: dict[str, Any] | None = None,
    recipe: str | None = None,
    generations: int = 8,
    population: int = 8,
    elite: int = ELITE,
    games: int = 240,
    spread: float = 1.0,
    start: str | Path | None = None,
    eval_games: int = 2000,
    seed: int = 0,
    workers: int = 1,
    say: Callable[[str], None] = print,
) -> ScorerResponseResult:
    """Train ``game``'s cross-entropy ``recipe`` (default: the shipped model's, :func:`check_scorer_response`) as a
    best response to ``target`` for ``generations`` generations of ``population`` weight vectors, ``games`` games
    each (module docstring), then measure the final mean weights' gain on ``eval_games`` fresh games. ``start``: the
    weights of a model file instead of the recipe's start (``"trained"``, ``"trained:path=FILE.npz"`` or a path).
    The weights are written to ``out_dir/scorer-response-<target>[-from-<start>].npz``, each generation to the same
    name's ``.jsonl``. Everything is checked before the first game (a one-line ``ValueError``)."""
    import tableenvs.vector
    from tableenvs.core.registry import make_raw
    from tableenvs.paths import write_text_atomic
    from tableenvs.policies.model_env import model_options
    from tableenvs.policies.model_file import save_for_env
    from tableenvs.training.best_response import batched_target, evaluate_gain, target_stem
    from tableenvs.training.scorer_recipes import (
        check_method,
        elite_update,
        generation_deals,
        generation_draws,
        recipe_of,
    )

    name = check_scorer_response(game, recipe, options)
    check_method(generations, population, elite, games, workers, spread)
    chosen = recipe_of(game, name)
    options = dict(options or {})
    env = make_raw(game, **options)
    options = model_options(env)
    players = env.num_players
    check_at_least("eval_games", eval_games, 2 * players)
    engine = tableenvs.vector.make(game, 1, trusted=True, **options)
    batched_target(target, engine, options)  # an unknown or unfitting target: refused before any game
    first = start_of(game, options, name, start)
    stem = target_stem(target)
    if start is not None:  # a run from another start keeps its own files
        stem += "-from-" + target_stem(str(start))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    progress = out / f"scorer-response-{stem}.jsonl"
    mu = first
    sd = np.full(len(mu), spread)
    began, children = time.process_time(), _children_cpu()
    lines = []
    pool = ProcessPoolExecutor(workers) if workers > 1 else None
    try:
        for generation in range(generations):
            draws = generation_draws(mu, sd, population, seed, generation)
            deals = generation_deals(seed, generation)
            jobs = [(game, name, options, w, target, deals, games) for w in draws]
            scores = np.array(list(pool.map(_fitness, jobs)) if pool else [_fitness(job) for job in jobs])
            best, mu, sd = elite_update(draws, scores, elite)
            line: dict[str, Any] = {"generation": generation, "deals": deals, "mu_score": float(scores[0]),
                    "best_score": float(scores[best[0]]), "mean_score": float(scores.mean())}  # fmt: skip
            line.update(mu=mu.tolist(), sd=sd.tolist())
            lines.append(line)
            write_text_atomic(progress, "".join(json.dumps(entry) + "\n" for entry in lines))
            say(
                f"{name} best response to {target}: generation {generation + 1}/{generations}: the mean weights "
                f"{scores[0]:+.2f} over the target's seat, the best {scores[best[0]]:+.2f} "
                f"({time.process_time() - began:.0f} CPU s here)"
            )
    finally:
        if pool is not None:
            pool.shutdown()
    cpu = time.process_time() - began + _children_cpu() - children
    path = save_for_env(
        out / f"scorer-response-{stem}.npz", env, weights=[(mu.reshape(-1, 1), np.zeros(1))],
        activation="relu", candidates=chosen.candidates,
        meta={"best_response_to": target, "recipe": name, "generations": generations, "population": population,
              "games": games, "seed": seed, "start": str(start or "recipe")},
    )  # fmt: skip
    deals = eval_games // players
    gain, low, high, learner_mean, target_mean = evaluate_gain(
        game, options, str(path), target, deals=deals, seed=seed + 1
    )
    result = ScorerResponseResult(
        game, options, target, name, generations * population * games, cpu, deals, deals * players, gain, low, high,
        learner_mean, target_mean,
    )  # fmt: skip
    say(result.line())
    return result
