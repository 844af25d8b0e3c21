"""The cross-entropy recipes a game declares (its spec's ``recipes``): candidate scorers trained on the returns of
games.

Where you are: training recipes beside :mod:`tableenvs.training.recipe`, for the games that declare one
(:class:`~tableenvs.core.declarations.ScorerRecipe`; Rummikub's ``openings`` and ``holding``, in
:mod:`tableenvs.rummikub.recipes`). The model is a **candidate scorer**: at each decision it scores every candidate
play (the game's ``candidates`` the recipe names) from that candidate's features (a linear layer: ``features @ W +
b``) and plays towards the best. Rummikub's ``openings`` scores the candidate opening melds and plays the heuristic's
play once opened; ``holding`` scores those and, once opened, the heuristic's play against a draw: the model shipped
as ``trained``. The file is a numpy policy whose header names ``candidates`` (:mod:`tableenvs.policies.model_file`).

**Training: the cross-entropy method on returns.** A Gaussian over the weights (mean ``mu``, per-weight spread ``sd``),
started at the recipe's ``start`` with ``sd`` = 1. Each generation draws ``population`` weight vectors (the first is
``mu`` itself), plays each in the standard evaluation against the heuristic (``games`` games, two seats against two
heuristics, every seating, duplicate deals: :func:`tableenvs.evaluation.evaluate`, as ``tableenvs eval`` does) on the
generation's own deals (``seed`` ``= TRAIN_SEED + 1000 * (seed + 1) + generation``: never the deals of ``tableenvs
eval``'s default seeds), keeps the ``elite`` of highest paired score difference, and moves ``mu`` to their mean and
``sd`` to 0.8 times their spread plus 0.05. The score of ``mu`` on each generation's fresh deals is an unbiased
measure of where the recipe stands: that is the learning curve (``progress.jsonl``, one line per generation). Every
draw comes from a generator seeded by ``(seed, generation)``, and the games are deterministic, so a rerun makes the
same model; a rerun on the same directory continues from its last finished generation. A run may instead start from a
model file's weights (``init``: a scorer of the same candidates, e.g. one trained at another player count) with
another first spread (``spread``), weigh finishing rank otherwise than its recipe (``rank_points``) or play more games
a table (``games``); each is kept in the run's settings. Units: games; times are seconds.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from tableenvs.core.declarations import ScorerRecipe
from tableenvs.core.registry import make_raw, spec
from tableenvs.core.validation import check_at_least
from tableenvs.paths import write_text_atomic
from tableenvs.policies.model_env import model_options
from tableenvs.policies.model_file import NumpyModel, save_for_env
from tableenvs.policies.numpy_policy import NumpyPolicy

#: Deals of the training games: ``TRAIN_SEED + 1000 * (seed + 1) + generation`` (``tableenvs eval`` uses 0, 1, ...).
TRAIN_SEED = 7_000_000


def recipes(game: str) -> dict[str, ScorerRecipe]:
    """The cross-entropy recipes ``game``'s spec declares, by name (imported now)."""
    return {name: spec(game).load("recipes", name) for name in spec(game).recipes}


def recipe_of(game: str, name: str | None) -> ScorerRecipe:
    """``game``'s recipe ``name`` (``None``: the first it declares); ``ValueError`` naming the game's recipes if it
    declares none of that name."""
    return spec(game).load("recipes", next(iter(spec(game).recipes), "") if name is None else name)


def scorer(env: Any, weights: np.ndarray, name: str = "scorer", recipe: str | None = None) -> NumpyPolicy:
    """The candidate scorer of ``recipe``'s candidates with these weights (one per feature; the bias is 0: it moves
    every score alike) as a policy for ``env``."""
    from tableenvs.core.layout import layout_version

    raw = env.unwrapped
    chosen = recipe_of(raw.metadata["name"], recipe)
    model = NumpyModel(
        name=name,
        game=raw.metadata["name"],
        options=model_options(raw),
        layout_version=layout_version(raw),
        observation_size=len(chosen.start),
        num_actions=1,
        hidden=(),
        activation="relu",
        weights=((np.asarray(weights, np.float32).reshape(-1, 1), np.zeros(1, np.float32)),),
        candidates=chosen.candidates,
    )
    return NumpyPolicy(model, raw)


#: The tables a recipe's fitness may mix (its ``tables``), each played by :func:`tableenvs.evaluation.evaluate` on
#: the generation's deals and read as a paired difference of the weight vector's seats over another's, seat for seat:
#: ``heuristic``, its seats against heuristic seats (a round robin of the two); ``company``, one heuristic seat among
#: its own seats (a gauntlet of the two against a field of the weights: the weights in that seat minus the heuristic
#: there); ``elite``, one seat among the generation's mean weights (a gauntlet of the two against a field of the mean:
#: the weights in that seat minus the mean there). A run may add ``against:NAME`` tables (``train_scorer``'s
#: ``against``): one seat of the policy file ``NAME`` among the weights' own seats, the weights in a seat minus the
#: file there (``company`` with the file in the heuristic's place: how much that player, e.g. a best response found
#: against an earlier model, gains at a table of these weights).
TABLES = ("heuristic", "company", "elite")
#: The prefix of a table of a policy file (:data:`TABLES`).
AGAINST = "against:"


def table_scores(
    game: str,
    recipe: str,
    options: dict[str, Any],
    weights: np.ndarray,
    elite: np.ndarray,
    seed: int,
    games: int,
    tables: tuple[str, ...] = ("heuristic",),
    files: dict[str, str] | None = None,
) -> dict[str, tuple[float, float]]:
    """Per table of ``tables`` (:data:`TABLES`): the paired score difference of ``weights`` over the other entrant
    (the heuristic, the ``elite`` weights, or the policy file ``files[table]`` of an ``against:`` table), and the
    other's mean finishing rank minus the weights' (> 0: the weights finish ahead), over ``games`` games from deal
    ``seed``."""
    from tableenvs.evaluation import evaluate

    env = make_raw(game, **options)
    candidate = scorer(env, weights, name="candidate", recipe=recipe)
    players = options.get("num_players")
    rest = {key: value for key, value in options.items() if key != "num_players"}
    out: dict[str, tuple[float, float]] = {}
    for table in tables:
        other: Any = "heuristic"
        if table == "elite":
            other = scorer(env, elite, name="elite", recipe=recipe)
        elif table.startswith(AGAINST):
            other = (files or {})[table]
        field = None if table == "heuristic" else other if table == "elite" else candidate
        result = evaluate(
            game, [candidate, other], games, opponents=field, num_players=players, options=rest, seed=seed, workers=1
        )
        ranks = {row["policy"]: row["mean_rank"] for row in result.policies}
        out[table] = (
            float(result.paired[0]["score_diff"]),
            float(ranks[str(result.paired[0]["opponent"])] - ranks["candidate"]),
        )
    return out


def _score(
    job: tuple[str, str, dict[str, Any], np.ndarray, np.ndarray, int, int, tuple[str, ...], dict[str, str]],
) -> dict:
    """:func:`table_scores` of one weight vector (a worker's task)."""
    return table_scores(*job)


def start_weights(path: str | Path, recipe: ScorerRecipe, flag: str = "--init") -> np.ndarray:
    """The weights of the candidate-scoring model file at ``path``, to start a run of ``recipe`` from; a one-line
    ``ValueError`` (naming ``flag``) unless it scores ``recipe``'s candidates with one weight per feature."""
    from tableenvs.policies.model_file import load_numpy_policy

    try:
        model = load_numpy_policy(path)
    except (OSError, ValueError) as error:
        raise ValueError(f"{flag} {str(path)!r}: {error}") from None
    shapes = [weight.shape for weight, _ in model.weights]
    if model.candidates != recipe.candidates or shapes != [(len(recipe.start), 1)]:
        raise ValueError(
            f"{flag} {str(path)!r}: not a {recipe.candidates} scorer of {len(recipe.start)} weights (it scores "
            f"{model.candidates or 'no candidates'}, layers {shapes})"
        )
    return model.weights[0][0][:, 0].astype(np.float64)


def check_method(generations: int, population: int, elite: int, games: int, workers: int, spread: float) -> None:
    """A one-line ``ValueError`` for cross-entropy settings that cannot run (each count at least its least, the
    elite below the population, a positive first spread)."""
    for name, value, least in (
        ("generations", generations, 1), ("population", population, 2), ("games", games, 2), ("workers", workers, 1)
    ):  # fmt: skip
        check_at_least(name, value, least)
    check_at_least("elite", elite, 1)
    if elite >= population:
        raise ValueError(f"elite must be below population ({population}), got {elite}")
    if not spread > 0:
        raise ValueError(f"spread must be > 0, got {spread}")


def generation_draws(mu: np.ndarray, sd: np.ndarray, population: int, seed: int, generation: int) -> np.ndarray:
    """Generation ``generation``'s ``population`` weight vectors, drawn from ``N(mu, sd)`` by a generator seeded
    ``(seed, generation)``; the first is ``mu`` itself (its score on the generation's deals is the curve)."""
    rng = np.random.default_rng([seed, generation])
    draws = mu + sd * rng.standard_normal((population, len(mu)))
    draws[0] = mu
    return draws


def generation_deals(seed: int, generation: int) -> int:
    """The deal seed of a generation's games: ``TRAIN_SEED + 1000 * (seed + 1) + generation``."""
    return TRAIN_SEED + 1000 * (seed + 1) + generation


def elite_update(draws: np.ndarray, scores: np.ndarray, elite: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``elite`` draws of highest score (first of equal ones first), and the next ``mu`` (their mean) and ``sd``
    (0.8 times their spread plus 0.05)."""
    best = np.argsort(-scores, kind="stable")[:elite]
    return best, draws[best].mean(axis=0), 0.8 * draws[best].std(axis=0) + 0.05


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes (hex)."""
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def against_files(game: str, options: dict[str, Any], paths: tuple[str | Path, ...]) -> dict[str, str]:
    """The ``against:NAME`` tables of ``paths`` (policy files), each table's file by name; a one-line ``ValueError``
    naming the file if one is missing, is not a policy of ``game`` at ``options`` with a batched player, or shares
    its name with another."""
    import tableenvs.vector
    from tableenvs.training.best_response import batched_target

    files: dict[str, str] = {}
    engine = tableenvs.vector.make(game, 1, trusted=True, **options) if paths else None
    for path in paths:
        where = Path(path).expanduser()
        if not where.is_file():
            raise ValueError(f"--against {str(path)!r}: no such file")
        if where.suffix != ".npz":
            raise ValueError(f"--against {str(path)!r}: not a numpy policy file (.npz)")
        table = AGAINST + where.name
        if table in files:
            raise ValueError(f"--against {str(path)!r}: two files named {where.name!r}; rename one")
        try:
            batched_target(str(where), engine, options)
        except ValueError as error:
            raise ValueError(f"--against {str(path)!r}: {error}") from None
        files[table] = str(where.resolve())
    return files


def fitness(scores: dict[str, tuple[float, float]], rank_points: float) -> float:
    """A weight vector's fitness: the mean over its tables of the score difference plus ``rank_points`` per place of
    mean finishing rank gained."""
    return float(np.mean([score + rank_points * rank for score, rank in scores.values()]))


def train_scorer(
    game: str,
    out_dir: str | Path,
    *,
    recipe: str | None = None,
    options: dict[str, Any] | None = None,
    generations: int | None = None,
    population: int | None = None,
    elite: int = 4,
    games: int | None = None,
    workers: int = 2,
    seed: int = 0,
    init: str | Path | None = None,
    spread: float = 1.0,
    rank_points: float | None = None,
    against: tuple[str | Path, ...] = (),
    say: Callable[[str], Any] = print,
) -> Path:
    """Run ``game``'s ``recipe`` (a name of its spec's ``recipes``; the module docstring) under ``out_dir``; returns
    ``out_dir/model.npz``. ``options``: the env's (the player count among them; default the game's);
    ``generations``, ``population``, ``games`` and ``rank_points`` default to the recipe's. ``init``: a model file
    whose weights are the start instead of the recipe's (:func:`start_weights`); ``spread``: the first generation's
    ``sd`` (every weight's); ``against``: policy files of the game at these options, each one more table of the
    fitness (``against:NAME``, :data:`TABLES`), their names and digests kept in the run's settings."""
    chosen = recipe_of(game, recipe)
    recipe = recipe or next(iter(spec(game).recipes))
    generations = chosen.generations if generations is None else generations
    population = chosen.population if population is None else population
    games = chosen.games if games is None else games
    check_method(generations, population, elite, games, workers, spread)
    if rank_points is not None and not rank_points >= 0:
        raise ValueError(f"rank_points must be >= 0, got {rank_points}")
    options = dict(options or {})
    env = make_raw(game, **options)
    options = model_options(env)
    files = against_files(game, options, against)  # a one-line refusal before anything is written
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    progress = out / "progress.jsonl"
    lines = [json.loads(line) for line in progress.read_text().splitlines()] if progress.exists() else []
    settings = {"options": options, "population": population, "elite": elite, "games": games, "seed": seed}
    if recipe != "openings":  # the openings recipe's runs predate the key
        settings["recipe"] = recipe
    candidates = chosen.candidates
    start = chosen.start if init is None else tuple(start_weights(init, chosen).tolist())
    if init is not None:  # only when given: runs from the recipe's start keep their settings as they were
        settings["init"] = {"file": Path(init).name, "weights": list(start)}
    if spread != 1.0:
        settings["spread"] = spread
    if rank_points is not None and rank_points != chosen.rank_points:
        settings["rank_points"] = rank_points
    if files:
        settings["against"] = [{"file": Path(path).name, "sha256": file_sha256(path)} for path in files.values()]
    table_names = chosen.tables + tuple(files)
    rank_points = chosen.rank_points if rank_points is None else rank_points
    if lines and lines[0].get("settings") != settings:
        raise ValueError(f"{out} holds a run with other settings ({lines[0].get('settings')}); use another --out")
    size = len(start)
    mu = np.array(start) if not lines else np.asarray(lines[-1]["mu"])
    sd = np.full(size, spread) if not lines else np.asarray(lines[-1]["sd"])
    began = time.perf_counter()
    with ProcessPoolExecutor(workers) as pool:
        for generation in range(len(lines), generations):
            draws = generation_draws(mu, sd, population, seed, generation)
            deals = generation_deals(seed, generation)
            jobs = [(game, recipe, options, w, mu, deals, games, table_names, files) for w in draws]
            tables = list(pool.map(_score, jobs))
            scores = np.array([fitness(table, rank_points) for table in tables])
            best, mu, sd = elite_update(draws, scores, elite)
            line: dict[str, Any] = {
                "generation": generation,
                "deals": deals,
                "mu_score": float(scores[0]),  # the start of this generation on its fresh deals: the curve
                "best_score": float(scores[best[0]]),
                "mean_score": float(scores.mean()),
                "seconds": round(time.perf_counter() - began, 1),
            }
            if table_names != ("heuristic",):  # each table's (score difference, rank gained) of the mean weights
                line["mu_tables"] = {name: list(value) for name, value in tables[0].items()}
                line["best_tables"] = {name: list(value) for name, value in tables[best[0]].items()}
            line.update(mu=mu.tolist(), sd=sd.tolist())
            if generation == 0:
                line["settings"] = settings
            lines.append(line)
            write_text_atomic(progress, "".join(json.dumps(entry) + "\n" for entry in lines))
            told = (
                "against the heuristic"
                if table_names == ("heuristic",)
                else "of fitness ("
                + ", ".join(f"{name} {value[0]:+.1f} pts {value[1]:+.2f} places" for name, value in tables[0].items())
                + ")"
            )
            say(
                f"generation {generation + 1}/{generations}: the mean weights score {scores[0]:+.2f} points {told}, "
                f"the best {scores[best[0]]:+.2f} ({line['seconds']:.0f} s)"
            )
    model = save_for_env(
        out / "model.npz",
        env,
        weights=[(mu.reshape(-1, 1), np.zeros(1))],
        activation="relu",
        meta={"recipe": recipe, **settings, "generations": generations},
        candidates=candidates,
    )
    say(f"wrote {model}")
    return model
