"""``tableenvs train``: check the flags and the train extra, then train with Stable-Baselines3 (one seat learning,
:mod:`tableenvs.training.job`), with ``--recipe strong`` or ``--recipe search-clone`` a recipe
(:mod:`tableenvs.training.recipe`; ``--recipe NAME``, a recipe the game's spec declares:
:mod:`tableenvs.training.scorer_recipes`), with
``--backend rllib`` Ray RLlib (every seat learning,
:mod:`tableenvs.training.rllib`), or with ``--backend batched`` the batched trainer (every seat learning,
:mod:`tableenvs.training.batched`).

Where you are: the train sub-command's implementation, called by :mod:`tableenvs.cli` with the parsed flags and the
train parser's defaults (the parser, and so the defaults, stay in the CLI; ``--resume`` and ``--backend rllib`` refuse
a flag given that they would not read). Everything is checked before training starts: the extra, the flags, the output
directory, the game options, seat and opponents (one env is built and closed). User errors are ``ValueError`` (the CLI
prints them, exit 2); an interrupted run exits 130 (Ctrl-C) or 143 (SIGTERM) after its checkpoint.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tableenvs.commands.extras import missing_module
from tableenvs.commands.flags import parse_option
from tableenvs.paths import check_model_files, check_output_dir

#: Modules the train extra provides (``tableenvs train`` checks them before anything else).
TRAIN_MODULES = ("torch", "stable_baselines3", "sb3_contrib", "matplotlib", "tqdm", "rich", "openskill")

#: The flags ``--resume`` takes; any other given is refused (the run keeps its config).
_RESUME_FLAGS = ("env", "resume", "no_progress", "tensorboard", "log_formats", "trust_models")

#: The train flags ``--backend rllib`` reads; any other given is refused.
_RLLIB_FLAGS = ("env", "timesteps", "players", "option", "seed", "out", "final_games", "no_progress", "backend")
_RLLIB_ONLY = ("env_runners", "ray_address", "per_seat")
#: The train flags ``--backend batched`` reads; any other given is refused.
_BATCHED_FLAGS = ("env", "timesteps", "players", "option", "seed", "out", "no_progress", "backend")

#: The train flags each game-independent ``--recipe`` reads; any other given is refused.
_RECIPE_FLAGS = {
    "strong": ("env", "timesteps", "players", "seed", "out", "recipe", "label_games", "learner_seats"),
    "search-clone": ("env", "players", "seed", "out", "recipe", "label_games"),
    "league": ("env", "timesteps", "players", "seed", "out", "recipe", "label_games", "init"),
    "advantage": ("env", "players", "out", "recipe", "label_games", "init", "steps", "bonus", "objective"),
}
#: The train flags a game's own recipe (a cross-entropy scorer its spec declares in ``recipes``) reads.
_SCORER_RECIPE_FLAGS = (
    "env", "timesteps", "players", "seed", "out", "recipe", "init", "spread", "rank_points", "table_games", "against"
)  # fmt: skip
#: ``--label-games`` when not given, by recipe.
RECIPE_LABEL_GAMES = {"strong": 1500, "search-clone": 300, "league": 3000, "advantage": 3000}
#: The flags only ``--recipe advantage`` reads (None when not given: the recipe's defaults).
ADVANTAGE_FLAGS = ("steps", "bonus", "objective")
#: ``--timesteps`` when not given (the parser's default is None, so that a given 50000 is told from none): the plain
#: job's budget (the quick start's: its curve is flat after about 10k steps), ``--backend rllib``'s and ``batched``'s,
#: and the recipe's PPO budget.
PLAIN_TIMESTEPS = 20_000
BACKEND_TIMESTEPS = 50_000
RECIPE_TIMESTEPS = 10_000_000


def run(args: argparse.Namespace, defaults: dict[str, object]) -> int:
    """Train as the flags say; ``defaults`` is the train parser's default of every flag (by argparse dest): with
    ``--resume`` or ``--backend rllib`` a flag that differs from its default is refused. The exit code: 0 when
    training ran to its budget, 130 after Ctrl-C, 143 after SIGTERM."""
    if args.recipe is not None:
        return _train_recipe(args, defaults)
    given = _flags_given(args, ("label_games", "learner_seats"), defaults)
    if given:
        raise ValueError(f"{', '.join(given)} only goes with --recipe strong or search-clone")
    given = _flags_given(args, ("init", "spread", "rank_points", "table_games", "against"), defaults)
    if given:
        raise ValueError(f"{', '.join(given)} only goes with a game's own --recipe (a candidate scorer)")
    given = _flags_given(args, ADVANTAGE_FLAGS, defaults)
    if given:
        raise ValueError(f"{', '.join(given)} only goes with --recipe advantage")
    if args.backend == "rllib":
        return _train_rllib(args, defaults)
    if args.backend == "batched":
        return _train_batched(args, defaults)
    given = _flags_given(args, _RLLIB_ONLY, defaults)
    if given:
        raise ValueError(f"{', '.join(given)} only go with --backend rllib")
    _require_train_extra("training")
    from tableenvs.training.job import TrainConfig, train
    from tableenvs.training.single_agent import SingleAgentEnv

    log_formats = [name.strip() for name in args.log_formats.split(",") if name.strip()]
    if args.resume is not None:
        from tableenvs.training.job import read_checkpoint, resume

        _refuse_recipe_resume(Path(args.resume))
        given = [
            "--" + name.replace("_", "-")
            for name, default in defaults.items()
            if name not in _RESUME_FLAGS and getattr(args, name, default) != default
        ]
        if args.env is not None and args.env != read_checkpoint(args.resume)["config"]["env"]:
            given.insert(0, f"environment {args.env!r}")
        if given:
            raise ValueError(
                f"--resume continues the run with its saved configuration; drop {', '.join(given)} "
                "(only --no-progress, --tensorboard, --log-formats and --trust-models may be given)"
            )
        changes: dict[str, object] = {"progress_bar": not args.no_progress}
        if args.tensorboard is not None:
            changes["tensorboard"] = args.tensorboard
        if log_formats:
            changes["log_formats"] = log_formats
        if args.trust_models:
            changes["trust_models"] = True
        return _train_exit_code(resume(args.resume, **changes))
    if args.env is None:
        raise ValueError("train needs an environment name (or --resume DIR)")
    options = dict(parse_option(text) for text in args.option)
    if args.players is not None:
        options["num_players"] = args.players
    opponents = [name.strip() for name in args.opponents.split(",") if name.strip()]
    if not opponents:
        raise ValueError(f"--opponents names no policy: {args.opponents!r}")
    check_model_files(opponents, "--opponents")
    seat = int(args.seat) if args.seat.lstrip("-").isdigit() else args.seat
    config = TrainConfig(
        args.env,
        out=args.out,
        timesteps=PLAIN_TIMESTEPS if args.timesteps is None else args.timesteps,
        opponents=opponents[0] if len(opponents) == 1 else opponents,
        seat=seat,
        options=options,
        num_envs=args.envs,
        vec_env="subproc" if args.subproc else "dummy",
        seed=args.seed,
        eval_every=args.eval_every,
        eval_games=args.eval_games,
        final_games=args.final_games,
        progress_bar=not args.no_progress,
        algo=args.algo,
        illegal_action=args.illegal_action,
        checkpoint_every=args.checkpoint_every,
        self_play_every=args.self_play_every,
        tensorboard=args.tensorboard,
        log_formats=log_formats,
        trust_models=args.trust_models,
    )
    check_output_dir(args.out, "--out")
    # The game options, seat and opponents (saved models loaded and matched to the game) once, before training.
    SingleAgentEnv(
        config.env, opponents=config.opponents, seat=config.seat, trust_models=config.trust_models, **config.options
    ).close()
    return _train_exit_code(train(config))


def _require_train_extra(job: str) -> None:
    """A one-line ``ValueError`` saying how to install the train extra when one of its modules is missing."""
    missing = missing_module(TRAIN_MODULES)
    if missing is not None:
        raise ValueError(
            f"{job} needs the train extra ({missing} is missing): "
            'pip install "tableenvs[train]" (from a source checkout: pip install -e ".[train]"; '
            "docs/training.md says how to get a CPU-only torch)"
        ) from None


def _flags_given(args: argparse.Namespace, flags, defaults: dict[str, object]) -> list[str]:
    """The train flags among ``flags`` whose value differs from the default, as ``--flag-name``."""
    return ["--" + name.replace("_", "-") for name in flags if getattr(args, name) != defaults[name]]


def _train_recipe(args: argparse.Namespace, defaults: dict[str, object]) -> int:
    """``tableenvs train GAME --recipe strong|search-clone|league``: :func:`tableenvs.training.recipe.strong`,
    :func:`~tableenvs.training.recipe.search_clone` or :func:`tableenvs.training.league.league` under ``--out`` (a
    rerun on the same directory continues it)."""
    name = args.recipe
    if args.resume is not None:
        raise ValueError(
            f"--recipe {name} does not take --resume: rerun the same command (GAME --recipe {name} --out DIR) to "
            "continue a recipe run"
        )
    if args.env is None:
        raise ValueError(f"train --recipe {name} needs an environment name")
    from tableenvs.core.registry import spec

    own = spec(args.env).recipes
    if name not in _RECIPE_FLAGS and name not in own:
        known = ", ".join([*_RECIPE_FLAGS, *own])
        raise ValueError(f"--recipe {name}: {args.env} has no such recipe; its recipes: {known}")
    reads = _RECIPE_FLAGS.get(name, _SCORER_RECIPE_FLAGS)
    given = _flags_given(args, [flag for flag in defaults if flag not in reads], defaults)
    if given:
        raise ValueError(f"--recipe {name} does not take {', '.join(given)} (see tableenvs train --help)")
    if name not in _RECIPE_FLAGS:
        return _train_scorer(args)
    if name == "advantage":
        return _train_advantage(args)
    if name == "league":
        from tableenvs.training.league import check_league_game

        check_league_game(args.env)  # the engine and heuristic it steps, before anything runs
        if args.init is not None and args.label_games is not None:
            raise ValueError("--recipe league takes --label-games or --init, not both (--init replaces the clone)")
    label_games = RECIPE_LABEL_GAMES[name] if args.label_games is None else args.label_games
    if label_games < 1:
        raise ValueError(f"--label-games must be an integer >= 1, got {label_games}")
    _require_train_extra(f"the {name} recipe")
    check_output_dir(args.out, "--out")
    options = {} if args.players is None else {"num_players": args.players}
    from tableenvs.core.registry import make_raw

    env = make_raw(args.env, **options)  # the game and its player count, checked before anything runs
    seats = args.learner_seats
    if seats is not None and not 1 <= seats < env.num_players:
        env.close()
        raise ValueError(
            f"--learner-seats must be from 1 to {env.num_players - 1} (the heuristic keeps a seat), got {seats}"
        )
    try:
        for made in ("clone.npz", "model.npz"):  # a rerun continues: the run in --out must be of this game, options
            path = Path(args.out) / made
            if path.exists():
                from tableenvs.policies.numpy_policy import check_model_fits, load_numpy_policy

                try:
                    check_model_fits(load_numpy_policy(path), env)
                except ValueError as error:
                    raise ValueError(f"--out {args.out!r} holds another recipe run: {error}") from None
    finally:
        env.close()
    from tableenvs.training import recipe

    if name == "search-clone":
        recipe.search_clone(args.env, args.out, options=options, label_games=label_games, seed=args.seed)
        return 0
    steps = RECIPE_TIMESTEPS if args.timesteps is None else args.timesteps
    if name == "league":
        from tableenvs.training.league import league

        league(  # a bad --init is refused in one line before anything is written (league_start.start_from_init)
            args.env, args.out, options=options, steps=steps, label_games=label_games, seed=args.seed, init=args.init
        )
        return 0
    recipe.strong(
        args.env,
        args.out,
        options=options,
        label_games=label_games,
        steps=steps,
        seed=args.seed,
        fine_tune_options=None if seats is None else {"learner_seats": seats},
    )
    return 0


def add_advantage_flags(train: argparse.ArgumentParser) -> None:
    """The train parser's flags of ``--recipe advantage`` (None when not given)."""
    on = "with --recipe advantage: "
    train.add_argument("--steps", type=int, help=on + "steps of advantage iteration, each from the model of the step "
                       "before (default 3)")  # fmt: skip
    train.add_argument("--bonus", type=float, help=on + "reward units added to the value of the model's own choice "
                       "in the fit: the network departs from it only where another action is fitted to be worth "
                       "more by that margin (default 3)")  # fmt: skip
    train.add_argument("--objective", choices=("score", "margin"), help=on + "an action's value: the seat's own "
                       "reward over the scoring period (score, the default) or that less the other seats' mean "
                       "(margin)")  # fmt: skip


def _train_advantage(args: argparse.Namespace) -> int:
    """``tableenvs train GAME --recipe advantage --init FILE``: :func:`tableenvs.training.advantage_iteration.
    advantage_iteration` from ``--init`` under ``--out`` (``step-K/model.npz`` each step; a rerun on the same
    ``--out`` continues it), ``--label-games`` games a step, 2 worker processes. Needs torch (the fit)."""
    if args.init is None:
        raise ValueError("--recipe advantage needs --init FILE: the numpy policy file it improves (e.g. a shipped "
                         "model, or a clone made by --recipe search-clone)")  # fmt: skip
    steps = 3 if args.steps is None else args.steps
    if steps < 1:
        raise ValueError(f"--steps must be an integer >= 1, got {steps}")
    bonus = 3.0 if args.bonus is None else args.bonus
    if not bonus >= 0:
        raise ValueError(f"--bonus must be >= 0, got {args.bonus}")
    label_games = RECIPE_LABEL_GAMES["advantage"] if args.label_games is None else args.label_games
    if label_games < 2:
        raise ValueError(f"--label-games must be an integer >= 2, got {label_games}")
    if not str(args.init).endswith(".npz"):
        raise ValueError(f"--init: the advantage recipe improves a numpy policy file (.npz), got {args.init!r}")
    check_model_files([args.init], "--init")
    _require_train_extra("the advantage recipe")
    check_output_dir(args.out, "--out")
    options = {} if args.players is None else {"num_players": args.players}
    from tableenvs.training.advantage_iteration import advantage_iteration  # it checks --init fits before it runs

    model = advantage_iteration(args.env, args.out, start=args.init, options=options, steps=steps,
                                label_games=label_games, bonus=bonus, objective=args.objective or "score",
                                workers=2)  # fmt: skip
    print(f"the last step's model: {model}")
    return 0


def _train_scorer(args: argparse.Namespace) -> int:
    """``tableenvs train GAME --recipe NAME`` for a recipe the game's spec declares (a cross-entropy candidate
    scorer): :func:`tableenvs.training.scorer_recipes.train_scorer` under ``--out``, ``--timesteps`` games in all
    (whole generations of weight vectors, the recipe's budget; by default its generations), in 2 worker processes;
    ``--init FILE`` starts from a model file's weights, ``--spread`` sets the first generation's spread,
    ``--rank-points`` the points a place of mean rank is worth, ``--table-games`` the games of each table,
    ``--against FILE`` (repeatable) one more table of a policy file each. Numpy only: the train extra is not
    needed."""
    name = args.recipe
    from tableenvs.training.scorer_recipes import against_files, recipe_of, start_weights, train_scorer

    chosen = recipe_of(args.env, name)
    games = chosen.games if args.table_games is None else args.table_games
    population = chosen.population
    if games < 2:
        raise ValueError(f"--table-games must be an integer >= 2, got {games}")
    if not args.spread > 0:
        raise ValueError(f"--spread must be > 0, got {args.spread}")
    if args.rank_points is not None and not args.rank_points >= 0:
        raise ValueError(f"--rank-points must be >= 0, got {args.rank_points}")
    if args.init is not None:
        start_weights(args.init, chosen)  # a one-line error before anything is written
    options = {} if args.players is None else {"num_players": args.players}
    against = tuple(args.against or ())
    if against:  # a one-line error before anything is written
        from tableenvs.core.registry import make_raw
        from tableenvs.policies.model_env import model_options

        against_files(args.env, model_options(make_raw(args.env, **options)), against)
    per_generation = games * population * (len(chosen.tables) + len(against))  # each vector plays every table
    budget = per_generation * chosen.generations if args.timesteps is None else args.timesteps
    if budget < per_generation:
        raise ValueError(f"--timesteps (games, with --recipe {name}) must be at least {per_generation}, got {budget}")
    check_output_dir(args.out, "--out")
    train_scorer(
        args.env,
        args.out,
        recipe=name,
        options=options,
        generations=budget // per_generation,
        population=population,
        games=games,
        seed=args.seed,
        init=args.init,
        spread=args.spread,
        rank_points=args.rank_points,
        against=against,
    )
    return 0


def _refuse_recipe_resume(run: Path) -> None:
    """``--resume DIR`` on a directory the strong recipe wrote (``clone.npz``, no checkpoint): say how to continue."""
    if not (run / "clone.npz").exists() or (run / "checkpoint").exists():
        return
    from tableenvs.policies.numpy_policy import read_header

    try:
        header = read_header(run / "clone.npz")
        command = f"{header['game']} --recipe strong --players {header['options'].get('num_players')}"
    except ValueError:
        command = "GAME --recipe strong"
    raise ValueError(
        f"{str(run)!r} is a --recipe strong run, which --resume does not continue: rerun "
        f"tableenvs train {command} --out {run}"
    )


def _train_rllib(args: argparse.Namespace, defaults: dict[str, object]) -> int:
    """``tableenvs train --backend rllib``: :func:`tableenvs.training.rllib.train_rllib` with every seat learning."""
    given = _flags_given(args, [name for name in defaults if name not in _RLLIB_FLAGS + _RLLIB_ONLY], defaults)
    if given:
        raise ValueError(f"--backend rllib does not take {', '.join(given)} (see tableenvs train --help)")
    if args.env is None:
        raise ValueError("train needs an environment name")
    if args.env_runners < 0:
        raise ValueError(f"--env-runners must be an integer >= 0, got {args.env_runners}")
    check_output_dir(args.out, "--out")
    options = dict(parse_option(text) for text in args.option)
    if args.players is not None:
        options["num_players"] = args.players
    try:
        from tableenvs.training.rllib import train_rllib
    except ImportError as error:
        raise ValueError(str(error)) from None
    train_rllib(
        args.env,
        out=args.out,
        timesteps=BACKEND_TIMESTEPS if args.timesteps is None else args.timesteps,
        options=options,
        policies="per_seat" if args.per_seat else "shared",
        env_runners=args.env_runners,
        seed=args.seed,
        ray_address=args.ray_address,
        final_games=args.final_games,
        progress=None if args.no_progress else print,
    )
    return 0


def _train_batched(args: argparse.Namespace, defaults: dict[str, object]) -> int:
    """``tableenvs train --backend batched``: :func:`tableenvs.training.batched.train_batched`, self-play with every
    seat learning, its model in ``OUT/model.npz`` and its per-update history in ``OUT/progress.jsonl``."""
    given = _flags_given(args, [name for name in defaults if name not in _BATCHED_FLAGS], defaults)
    if given:
        raise ValueError(f"--backend batched does not take {', '.join(given)} (see tableenvs train --help)")
    if args.env is None:
        raise ValueError("train needs an environment name")
    _require_train_extra("the batched trainer")
    check_output_dir(args.out, "--out")
    options = dict(parse_option(text) for text in args.option)
    if args.players is not None:
        options["num_players"] = args.players
    from tableenvs.core.registry import make_raw
    from tableenvs.training.batched import train_batched

    make_raw(args.env, **options).close()  # the game and its options, checked before anything is built
    samples = BACKEND_TIMESTEPS if args.timesteps is None else args.timesteps
    result = train_batched(
        args.env, samples=samples, out=args.out, say=None if args.no_progress else print, options=options,
        seed=args.seed,
    )  # fmt: skip
    print(f"wrote {result.model} ({result.samples:,} samples, {result.cpu_seconds:.0f} CPU s)")
    return 0


def _train_exit_code(result) -> int:
    """0 when training ran to its budget; 130 after Ctrl-C, 143 after SIGTERM (the checkpoint line was printed)."""
    if result.interrupted is None:
        return 0
    return 143 if result.interrupted == "SIGTERM" else 130
