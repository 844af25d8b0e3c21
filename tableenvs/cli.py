"""The ``tableenvs`` command line.

Where you are: the console script. Sub-commands:

* ``tableenvs list`` — the environment names.
* ``tableenvs play ENV [--players N] [--policies heuristic,random] [--seed S]`` — one whole game between
  built-in agents, shown in the terminal: the table at the start, each decision and outcome as it
  happens, the table and the result at the end.
* ``tableenvs play ENV --policies human,heuristic,...`` — a human seat (any seats, several allowed): each human
  sees its own view of the table (``render_view``), a numbered list of its legal actions, and types a number or
  the words (``?`` for help, ``q`` to quit); ``--record FILE`` writes the game as a JSON record.
* ``tableenvs replay FILE`` — re-play a game record and check it reproduces exactly (:mod:`tableenvs.records`);
  ``--html OUT.html`` also writes a self-contained page stepping through it (:mod:`tableenvs.viewer`).
* ``tableenvs train ENV [--timesteps N] [--opponents random] [--players N] [--out DIR] [--algo A] ...`` — train
  MaskablePPO (or PPO, A2C, DQN) on one seat against the given opponents (needs the ``train`` extra): a progress
  bar, a printed line per periodic evaluation, checkpoints (periodic and on Ctrl-C/SIGTERM), the saved model, a
  learning-curve PNG and a final table against random and heuristic play; ``tableenvs train --resume DIR``
  continues a run (see :mod:`tableenvs.train`); ``--backend rllib`` trains with Ray RLlib instead, every seat
  learning, and writes a torch-only ``policy.pt`` that ``eval`` plays (see :mod:`tableenvs.rllib`).
* ``tableenvs serve [--host 127.0.0.1] [--port 8000]`` — play in the browser against any agents, several people
  at one table with a link each (needs the ``web`` extra; :mod:`tableenvs.web`, ``docs/web.md``).
* ``tableenvs export MODEL.zip OUT.npz [--game ENV] [--players N] [--option K=V]`` — write a Stable-Baselines3
  model's actor as a numpy policy file (``.npz``: plain arrays, no code runs when it is loaded, played without torch;
  see :mod:`tableenvs.numpy_policy`), reading the ``.zip`` without running its pickles; the game and options come
  from the ``results.json`` beside the model unless given.
* ``tableenvs eval ENV --policies random,heuristic,model.npz [--players N] [--games N] [--out DIR] ...`` — a
  tournament between policies, balanced seatings and duplicate deals: a progress bar, a printed table, results
  as JSON and CSV and a ratings PNG under ``--out`` (see :mod:`tableenvs.evaluation` and ``docs/evaluation.md``);
  ``--records DIR`` also writes a game record of each game (:func:`tableenvs.records.record_tournament`). Games
  are saved as they finish; Ctrl-C or SIGTERM stops the workers, writes partial results and exits 130 or 143;
  ``tableenvs eval --resume DIR`` finishes the tournament (:mod:`tableenvs.evaluation.journal`).

Flags mean one thing everywhere: ``--players`` is a number of players (seats), ``--policies`` a comma-separated
list of policies, ``--trust-models`` lets SB3 ``.zip`` models load (their pickles can run code; without it a
``.zip`` is refused in one line: ``play``, ``eval``, ``train``, ``export``, ``serve``).

Errors never end in a traceback: a user error (bad flag, value, file or output path; a missing extra) is one line
on stderr and exit code 2, checked before any game or training starts where possible; Ctrl-C prints one line and
exits 130; a closed stdout (``| head``) exits 141 quietly; anything else is one ``internal error`` line and exit
code 1 (set ``TABLEENVS_DEBUG=1`` to get the traceback instead).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile

import numpy as np

from tableenvs import __version__
from tableenvs.evaluation.playing import limit_torch_threads
from tableenvs.paths import OutputError, check_model_files, check_output_dir
from tableenvs.policies import BUILTIN_POLICIES, make_policy
from tableenvs.records import printable
from tableenvs.registry import make, names
from tableenvs.validation import check_at_least
from tableenvs.web import command as web_command

#: Smallest value of each integer flag (by argparse dest), checked for every sub-command that has the flag.
MINIMUM = {
    "games": 1,
    "workers": 1,
    "players": 1,  # a count in every sub-command; the game then checks its own range
    "torch_threads": 1,
    "timesteps": 1,
    "envs": 1,
    "eval_every": 1,
    "eval_games": 1,
    "final_games": 0,
    "record_games": 1,
    "seed": 0,
}

#: ``--trust-models``'s help, the same in every sub-command that loads models.
TRUST_HELP = (
    "load saved SB3 models (.zip): their pickles can run any code when loaded, so only for files you trust (a .npz or "
    ".pt loads without it; tableenvs export MODEL.zip MODEL.npz converts a .zip without running it)"
)

#: Modules the train extra provides (``tableenvs train`` checks them before anything else).
TRAIN_MODULES = ("torch", "stable_baselines3", "sb3_contrib", "matplotlib", "tqdm", "rich", "openskill")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block) and exit code 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code (see the module docstring for the error policy)."""
    try:
        code = _main(argv)
        sys.stdout.flush()  # a closed pipe shows up here rather than as a warning at interpreter exit
        return code
    except SystemExit as exit_:  # argparse: --help (0) and usage errors (2), already printed
        return exit_.code if isinstance(exit_.code, int) else 2
    except BrokenPipeError:  # stdout closed early (| head): stop quietly, as a SIGPIPE-killed tool would
        _silence_stdout()
        return 141
    except KeyboardInterrupt:
        print("\ntableenvs: interrupted", file=sys.stderr)
        return 130
    except (ValueError, TypeError) as error:
        if os.environ.get("TABLEENVS_DEBUG"):
            raise
        message = _one_line(error)
        if message.startswith("num_players must be") and argv_players(argv) is not None:
            message = f"--players {argv_players(argv)}: {message}"  # the game's own words, under the flag's name
        print(f"tableenvs: error: {message}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as error:  # an optional dependency the checks above did not foresee
        if os.environ.get("TABLEENVS_DEBUG"):
            raise
        print(
            f"tableenvs: error: {_one_line(error)}: an optional dependency is missing; the extras (train, eval, "
            "ray) are listed in the README",
            file=sys.stderr,
        )
        return 2
    except Exception as error:
        if os.environ.get("TABLEENVS_DEBUG"):
            raise
        print(
            f"tableenvs: internal error: {type(error).__name__}: {_one_line(error)} "
            "(set TABLEENVS_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return 1


def argv_players(argv: list[str] | None) -> str | None:
    """The value given to ``--players`` (or its ``--num-players`` alias) on the command line, if any."""
    args = sys.argv[1:] if argv is None else list(argv)
    for i, arg in enumerate(args):
        for flag in ("--players", "--num-players"):
            if arg == flag and i + 1 < len(args):
                return args[i + 1]
            if arg.startswith(flag + "="):
                return arg.split("=", 1)[1]
    return None


def _one_line(error: BaseException) -> str:
    """The error as one terminal-safe line (a record's text in it cannot send escape sequences)."""
    return printable(" ".join(str(error).split()) or type(error).__name__)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail on the closed pipe again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout is not a real file (captured in tests)
        pass


def _check_counts(args: argparse.Namespace) -> None:
    """Refuse a zero or negative count before anything runs, naming the flag, the value and the allowed range."""
    for dest, minimum in MINIMUM.items():
        value = getattr(args, dest, None)
        if value is not None:  # argparse made it an int
            check_at_least(f"--{dest.replace('_', '-')}", value, minimum)


def _main(argv: list[str] | None) -> int:
    parser = _Parser(
        prog="tableenvs",
        description="Play, replay, train and evaluate agents on the tableenvs games (Pili Pili, Llama Party, "
        "Rummikub). Run 'tableenvs COMMAND --help' for a command's flags.",
    )
    parser.add_argument("--version", action="version", version=f"tableenvs {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    commands.add_parser("list", help="list the environment names")

    play = commands.add_parser("play", help="play one game between built-in agents, shown in the terminal")
    play.add_argument("env", help=f"environment name ({', '.join(names())})")
    play.add_argument("--players", type=player_count, default=None, help="number of players (num_players option)")
    play.add_argument(
        "--policies",
        "--agents",
        dest="policies",
        default="heuristic",
        help=f"comma-separated policies, one per seat or one for all ({', '.join(BUILTIN_POLICIES)}, human, or a "
        "saved model: .npz, .pt, or .zip with --trust-models)",
    )
    play.add_argument("--trust-models", action="store_true", help=TRUST_HELP)
    play.add_argument(
        "--torch-threads", type=int, default=1, help="torch threads for model policies (default 1, the fastest)"
    )
    play.add_argument("--seed", type=int, default=None, help="seed for the deal and the agents")
    play.add_argument("--quiet", action="store_true", help="print only the final table and result")
    play.add_argument("--record", metavar="FILE", default=None, help="write the game as a JSON record to FILE")
    play.add_argument(
        "--pause",
        type=float,
        default=None,
        help="with a human seat: seconds to wait after each automatic turn (default 0.5 on a terminal, else 0)",
    )

    replay = commands.add_parser("replay", help="re-play a game record and check that it reproduces exactly")
    replay.add_argument("file", help="a record written by tableenvs play --record (or tableenvs.records)")
    replay.add_argument("--quiet", action="store_true", help="print only the result line")
    replay.add_argument(
        "--html", metavar="OUT", help="also write OUT (.html): one self-contained page stepping through the game"
    )

    _add_train_parser(commands)
    _add_eval_parser(commands)
    _add_export_parser(commands)
    web_command.add_parser(commands)

    args = parser.parse_args(argv)
    _check_counts(args)
    if args.command == "list":
        print("\n".join(names()))
        return 0
    if args.command == "train":
        return _train(args)
    if args.command == "eval":
        return _eval(args)
    if args.command == "replay":
        return _replay(args)
    if args.command == "serve":
        return web_command.run(args)
    if args.command == "export":
        return _export(args)
    return _play(args)


def _add_train_parser(commands) -> None:
    train = commands.add_parser(
        "train",
        help="train MaskablePPO (or PPO, A2C, DQN) on one seat (needs the train extra)",
        description="Train sb3-contrib's MaskablePPO (or --algo ppo|a2c|dqn) on one seat of a game against the given "
        "opponents; save the model, a learning-curve PNG and results.json under --out and print the final evaluation "
        "table. A checkpoint is saved every --checkpoint-every steps and on Ctrl-C or SIGTERM; --resume DIR continues "
        "a run to its budget.",
    )
    train.add_argument("env", nargs="?", help=f"environment name ({', '.join(names())}); omit with --resume")
    train.add_argument(
        "--timesteps",
        type=int,
        default=50_000,
        help="learner decisions to train (default 50000); the learner runs whole rollouts (MaskablePPO: 512 steps "
        "per env), so at least one, rounded up to whole ones (50000 with 4 envs runs 51200)",
    )
    train.add_argument(
        "--opponents",
        default="random",
        help="policy for every other seat, or a comma-separated list (one per other seat, from the learner's left): "
        "random, heuristic, trained, or a saved model path (.npz, .pt, or .zip with --trust-models); default random",
    )
    train.add_argument("--trust-models", action="store_true", help=TRUST_HELP)
    train.add_argument("--players", type=player_count, default=None, help="number of players (num_players option)")
    train.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a game option (repeatable); VALUE is read as JSON when it parses, else as text, e.g. --option "
        "missions=none --option max_rounds=20",
    )
    train.add_argument("--seat", default="rotate", help="learner seat: an index, 'rotate' (default) or 'random'")
    train.add_argument("--out", default="runs/train", help="output directory (default runs/train)")
    train.add_argument("--seed", type=int, default=0, help="seed for the envs, the model and evaluation (default 0)")
    train.add_argument("--envs", type=int, default=4, help="parallel envs (default 4)")
    train.add_argument("--subproc", action="store_true", help="run the envs in worker processes (SubprocVecEnv)")
    train.add_argument("--eval-every", type=int, default=10_000, help="timesteps between evaluations (default 10000)")
    train.add_argument("--eval-games", type=int, default=100, help="games per periodic evaluation (default 100)")
    train.add_argument(
        "--final-games", type=int, default=500, help="games per row of the final table (default 500; 0 skips it)"
    )
    train.add_argument("--no-progress", action="store_true", help="no progress bar")
    train.add_argument(
        "--algo",
        choices=("maskable_ppo", "ppo", "a2c", "dqn"),
        default="maskable_ppo",
        help="learner (default maskable_ppo, the only one that reads the action masks)",
    )
    train.add_argument(
        "--illegal-action",
        choices=("raise", "lose", "random"),
        default=None,
        help="what an illegal learner action does: raise (the default for maskable_ppo), random (play a random legal "
        "action instead; the default for the others) or lose (end the game, reward -1)",
    )
    train.add_argument(
        "--checkpoint-every",
        type=int,
        default=10_000,
        help="timesteps between checkpoints under OUT/checkpoint (default 10000; 0: only on Ctrl-C/SIGTERM)",
    )
    train.add_argument(
        "--self-play-every",
        type=int,
        default=0,
        help="self-play: every N steps a snapshot of the learner joins the opponent pool (default 0: off)",
    )
    train.add_argument("--resume", metavar="DIR", default=None, help="continue the run saved in DIR to its budget")
    train.add_argument("--tensorboard", metavar="DIR", default=None, help="log training and evaluation to TensorBoard")
    train.add_argument(
        "--backend",
        choices=("sb3", "rllib"),
        default="sb3",
        help="sb3 (default: one seat, the flags above) or rllib: Ray RLlib's PPO with every seat learning (needs "
        "ray[rllib], see docs/training.md#rllib; takes --timesteps, --players, --option, --seed, --out, "
        "--final-games, --no-progress and the three flags below)",
    )
    train.add_argument("--env-runners", type=int, default=1, help="with --backend rllib: sampling workers (default 1)")
    train.add_argument(
        "--ray-address", default=None, help="with --backend rllib: cluster address for ray.init (default: a local Ray)"
    )
    train.add_argument(
        "--per-seat", action="store_true", help="with --backend rllib: one policy per seat instead of one shared"
    )
    train.add_argument(
        "--log-formats",
        default="",
        help="comma-separated SB3 logger formats written to OUT/logs: stdout, csv, json, log, tensorboard",
    )
    _TRAIN_DEFAULTS.update({action.dest: action.default for action in train._actions if action.dest != "help"})


#: The train subcommand's defaults: with --resume, any other flag given is refused (the run keeps its config).
_TRAIN_DEFAULTS: dict[str, object] = {}
_RESUME_FLAGS = ("env", "resume", "no_progress", "tensorboard", "log_formats", "trust_models")


def player_count(text: str) -> int:
    """``--players``: a number of players in every subcommand (policies are listed with ``--policies``)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--players is the number of players (an integer), got {text!r}; list policies with --policies"
        ) from None


def _parse_option(text: str) -> tuple[str, object]:
    import json

    key, sep, value = text.partition("=")
    if not sep or not key:
        raise ValueError(f"--option expects KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def _missing_module(modules: tuple[str, ...]) -> str | None:
    """The first of ``modules`` that cannot be imported (found without importing it), or None."""
    for module in modules:
        try:
            if importlib.util.find_spec(module) is None:
                return module
        except (ImportError, ValueError):  # a blocked import, or a module left as None in sys.modules
            return module
    return None


#: The train flags ``--backend rllib`` reads; any other given is refused.
_RLLIB_FLAGS = ("env", "timesteps", "players", "option", "seed", "out", "final_games", "no_progress", "backend")
_RLLIB_ONLY = ("env_runners", "ray_address", "per_seat")


def _train(args: argparse.Namespace) -> int:
    if args.backend == "rllib":
        return _train_rllib(args)
    given = _flags_given(args, _RLLIB_ONLY)
    if given:
        raise ValueError(f"{', '.join(given)} only go with --backend rllib")
    missing = _missing_module(TRAIN_MODULES)
    if missing is not None:
        raise ValueError(
            f"training needs the train extra ({missing} is missing): "
            'pip install "tableenvs[train]" (from a source checkout: pip install -e ".[train]"; '
            "docs/training.md says how to get a CPU-only torch)"
        ) from None
    from tableenvs.single_agent import SingleAgentEnv
    from tableenvs.train import TrainConfig, train

    log_formats = [name.strip() for name in args.log_formats.split(",") if name.strip()]
    if args.resume is not None:
        from tableenvs.train import read_checkpoint, resume

        given = [
            "--" + name.replace("_", "-")
            for name, default in _TRAIN_DEFAULTS.items()
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
    options = dict(_parse_option(text) for text in args.option)
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
        timesteps=args.timesteps,
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


def _flags_given(args: argparse.Namespace, flags) -> list[str]:
    """The train flags among ``flags`` whose value differs from the default, as ``--flag-name``."""
    return ["--" + name.replace("_", "-") for name in flags if getattr(args, name) != _TRAIN_DEFAULTS[name]]


def _train_rllib(args: argparse.Namespace) -> int:
    """``tableenvs train --backend rllib``: :func:`tableenvs.rllib.train` with every seat learning."""
    given = _flags_given(args, [name for name in _TRAIN_DEFAULTS if name not in _RLLIB_FLAGS + _RLLIB_ONLY])
    if given:
        raise ValueError(f"--backend rllib does not take {', '.join(given)} (see tableenvs train --help)")
    if args.env is None:
        raise ValueError("train needs an environment name")
    if args.env_runners < 0:
        raise ValueError(f"--env-runners must be an integer >= 0, got {args.env_runners}")
    check_output_dir(args.out, "--out")
    options = dict(_parse_option(text) for text in args.option)
    if args.players is not None:
        options["num_players"] = args.players
    try:
        from tableenvs.rllib import train as train_rllib
    except ImportError as error:
        raise ValueError(str(error)) from None
    train_rllib(
        args.env,
        out=args.out,
        timesteps=args.timesteps,
        options=options,
        policies="per_seat" if args.per_seat else "shared",
        env_runners=args.env_runners,
        seed=args.seed,
        ray_address=args.ray_address,
        final_games=args.final_games,
        progress=None if args.no_progress else print,
    )
    return 0


def _train_exit_code(result) -> int:
    """0 when training ran to its budget; 130 after Ctrl-C, 143 after SIGTERM (the checkpoint line was printed)."""
    if result.interrupted is None:
        return 0
    return 143 if result.interrupted == "SIGTERM" else 130


def _add_eval_parser(commands) -> None:
    evaluate = commands.add_parser(
        "eval",
        help="a tournament between policies: table, JSON, CSV and a ratings PNG",
        description="Play at least --games games of ENV between the listed policies, seated so that each policy "
        "sits in every seat and after every other policy equally often (whole blocks of a balanced design), "
        "every game of a block on the same deal (duplicate deals); print a table (win rate, reward, final score, "
        "OpenSkill and Elo ratings with 95% intervals, paired differences) and write results.json, policies.csv, "
        "games.csv, head_to_head.csv, paired.csv and ratings.png under --out. Finished games are saved as they "
        "end; Ctrl-C or SIGTERM writes the partial results and --resume DIR continues. See docs/evaluation.md.",
    )
    # The flags that decide the games default to None here (their defaults are EVAL_DEFAULTS): --resume tells a
    # flag given on the command line, which must match the saved tournament, from one left out.
    evaluate.add_argument(
        "env", nargs="?", default=None, help=f"environment name ({', '.join(names())}); not needed with --resume"
    )
    evaluate.add_argument(
        "--policies",
        default=None,
        help="comma-separated policies: random, heuristic, search, trained (the model shipped for the game), numpy "
        "policy files (.npz, as train and export write), torch policy files (.pt, from train --backend rllib) or saved "
        "SB3 models (.zip, with --trust-models); the same one may be listed twice (required unless --resume)",
    )
    evaluate.add_argument(
        "--players",
        "--num-players",
        dest="players",
        type=player_count,
        default=None,
        help="players (seats) per game; default: what a listed model's training record says, else one per policy",
    )
    evaluate.add_argument(
        "--opponents",
        default=None,
        help="a gauntlet instead of a round robin: each listed policy in turn in one seat, these opponents in the "
        "others (one policy, or one per other seat from the candidate's left)",
    )
    evaluate.add_argument("--games", type=int, default=None, help="games to play, rounded up to whole blocks (1000)")
    evaluate.add_argument(
        "--duplicate",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="deal every game of a block the same cards (default); --no-duplicate deals every game anew",
    )
    evaluate.add_argument("--workers", type=int, default=1, help="worker processes or Ray tasks in flight (default 1)")
    evaluate.add_argument("--backend", choices=("local", "ray"), default="local", help="local processes or Ray")
    evaluate.add_argument(
        "--ray-address",
        default=None,
        help="with --backend ray: cluster address for ray.init (default: RAY_ADDRESS or a local Ray instance)",
    )
    evaluate.add_argument("--seed", type=int, default=None, help="tournament seed (default 0)")
    evaluate.add_argument(
        "--option",
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="a game option (repeatable), VALUE read as JSON when it parses, e.g. --option missions=none",
    )
    evaluate.add_argument(
        "--sample", action="store_true", default=None, help="saved models sample actions instead of argmax"
    )
    evaluate.add_argument(
        "--torch-threads", type=int, default=1, help="torch threads per process for model policies (default 1)"
    )
    evaluate.add_argument("--out", default=None, help="output directory (default runs/eval)")
    evaluate.add_argument(
        "--resume",
        metavar="DIR",
        default=None,
        help="continue the tournament stopped in DIR (its --out): the arguments are read from DIR/tournament.json "
        "(any given must be the same), the logged games are kept and the others played; --workers, --backend and "
        "the output flags may differ",
    )
    evaluate.add_argument("--no-plot", action="store_true", help="skip ratings.png")
    evaluate.add_argument(
        "--records",
        metavar="DIR",
        default=None,
        help="also write game records (JSON, see tableenvs replay) of the tournament's games under DIR; the games are "
        "played again for it",
    )
    evaluate.add_argument(
        "--record-games", type=int, default=None, help="with --records: only the first N games (default all)"
    )
    evaluate.add_argument("--no-progress", action="store_true", help="no progress bar")
    evaluate.add_argument("--trust-models", action="store_true", help=TRUST_HELP)


def _add_export_parser(commands) -> None:
    export = commands.add_parser(
        "export",
        help="convert a saved SB3 model (.zip) to a numpy policy (.npz) that runs no code when loaded",
        description="Write the actor of a Stable-Baselines3 model (MaskablePPO, PPO, A2C or DQN with the MlpPolicy) "
        "as a numpy policy file: plain arrays, loaded without pickles and played without torch (tableenvs eval "
        "--policies OUT.npz). The .zip is read without running its pickles (its JSON data, and its weights as plain "
        "tensors); --trust-models loads it with SB3 instead. The game and options come from the results.json that "
        "tableenvs train wrote beside the model, else from --game, --players and --option.",
    )
    export.add_argument("model", help="the saved SB3 model (.zip)")
    export.add_argument("out", help="the numpy policy file to write (.npz); an existing one is replaced")
    export.add_argument(
        "--game", default=None, help=f"environment name ({', '.join(names())}); default: the results.json beside MODEL"
    )
    export.add_argument(
        "--players", type=player_count, default=None, help="number of players the model was trained for"
    )
    export.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a game option the model was trained with (repeatable), VALUE read as JSON when it parses",
    )
    export.add_argument(
        "--trust-models",
        action="store_true",
        help="load MODEL with SB3, running its pickles (only for a file you trust)",
    )


def _export(args: argparse.Namespace) -> int:
    """``tableenvs export``: :func:`tableenvs.sb3_policy.export_sb3`, the game from the flags or the training record."""
    from pathlib import Path

    from tableenvs.evaluation.models import training_config
    from tableenvs.numpy_policy import load_numpy_policy

    if not args.model.endswith(".zip"):
        raise ValueError(f"MODEL must be a saved SB3 model (.zip), got {args.model!r}")
    check_model_files([args.model], "MODEL")
    out = Path(args.out).expanduser()
    if out.suffix != ".npz":
        raise ValueError(f"OUT must be a .npz file, got {args.out!r}")
    if out.is_dir():
        raise ValueError(f"OUT {args.out!r} is a directory")
    if not out.parent.is_dir():
        raise ValueError(f"OUT {args.out!r}: the directory {str(out.parent)!r} does not exist")
    check_output_dir(out.parent, "OUT's directory")
    options = dict(_parse_option(text) for text in args.option)
    if args.players is not None:
        options["num_players"] = args.players
    game, source = args.game, "as given"
    if game is None:
        found = training_config(args.model)
        if found is None:
            raise ValueError(
                f"no results.json beside {args.model!r} names its game: give --game (and --players, --option as "
                "trained)"
            )
        record, config = found
        game, options = config["env"], {**dict(config.get("options") or {}), **options}
        source = f"from {record}"
    missing = _missing_module(("torch",))
    if missing is not None:
        raise ValueError(f'export reads the weights with torch ({missing} is missing): pip install "tableenvs[train]"')
    from tableenvs.sb3_policy import export_sb3

    path = export_sb3(args.model, out, game, options=options, trust=args.trust_models)
    model = load_numpy_policy(path)
    print(
        printable(
            f"wrote {path}: {game} {model.options} ({source}), layers {model.observation_size}-"
            f"{'-'.join(map(str, model.hidden))}{'-' if model.hidden else ''}{model.num_actions}, {model.activation}; "
            f"play it with: tableenvs eval {game} --policies {path},heuristic"
        )
    )
    return 0


def _policy_list(text: str, flag: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise ValueError(f"{flag} lists no policy, got {text!r}")
    return names


def _check_eval_extra(plot: bool, progress: bool) -> None:
    """The eval extra's optional parts, checked before the games rather than when the results are written."""
    needed = ("openskill",) + (("matplotlib",) if plot else ()) + (("tqdm",) if progress else ())
    missing = _missing_module(needed)
    if missing is not None:
        skip = {"matplotlib": " (or pass --no-plot)", "tqdm": " (or pass --no-progress)"}.get(missing, "")
        raise ValueError(f'eval needs the eval extra ({missing} is missing): pip install "tableenvs[eval]"{skip}')


#: The eval flags that decide the games (argparse dest: default): saved in tournament.json, compared by --resume.
EVAL_DEFAULTS = {
    "env": None,
    "policies": None,
    "players": None,
    "opponents": None,
    "games": 1000,
    "duplicate": True,
    "seed": 0,
    "option": {},
    "sample": False,
}


def _eval(args: argparse.Namespace) -> int:
    from tableenvs.evaluation import Interrupted, WorkerLost, evaluate
    from tableenvs.evaluation.backends import stop_on_signals
    from tableenvs.evaluation.journal import GameLog

    given = {dest: getattr(args, dest) for dest in EVAL_DEFAULTS if getattr(args, dest) is not None}
    if "policies" in given:
        given["policies"] = _policy_list(given["policies"], "--policies")
    if "opponents" in given:
        given["opponents"] = _policy_list(given["opponents"], "--opponents")
    if "option" in given:
        given["option"] = dict(_parse_option(text) for text in given["option"])
    if args.resume is not None:
        out = check_output_dir(args.resume, "--resume")
        if args.out is not None and os.path.realpath(args.out) != os.path.realpath(out):
            raise ValueError(f"--resume {args.resume!r} continues in that directory; --out {args.out!r} is another")
        arguments, finished = _eval_saved(out, given)
    else:
        for dest, flag in (("env", "ENV (the environment name)"), ("policies", "--policies")):
            if dest not in given:
                raise ValueError(f"eval needs {flag}, or --resume DIR to continue a stopped tournament")
        out = check_output_dir(args.out or "runs/eval", "--out")  # before any game: a bad --out must not cost it
        arguments, finished = {**EVAL_DEFAULTS, **given}, []
        _note_unfinished(out)
    check_at_least("--games", arguments["games"], 1)
    _check_eval_extra(plot=not args.no_plot, progress=not args.no_progress)
    if args.records is not None:
        check_output_dir(args.records, "--records")
    elif args.record_games is not None:
        raise ValueError("--record-games needs --records DIR")
    opponents = arguments["opponents"]
    if opponents is not None:
        opponents = opponents[0] if len(opponents) == 1 else opponents
    log = GameLog(out, _tournament(arguments), resume=args.resume is not None)
    saving = {"on": True}

    def save_games(records) -> None:
        if not saving["on"]:
            return
        try:
            log.append(records)
        except OutputError as error:
            saving["on"] = False
            if args.resume is None:
                log.remove()  # a fresh log that cannot be written: leave --out as it was
            else:
                log.close()  # the earlier games stay logged
            print(f"tableenvs: warning: {error}; games are no longer saved as they finish", file=sys.stderr)

    with stop_on_signals():  # SIGTERM, like Ctrl-C, stops the workers and saves what was played
        try:
            try:
                result = evaluate(
                    arguments["env"],
                    arguments["policies"],
                    arguments["games"],
                    opponents=opponents,
                    num_players=arguments["players"],
                    options=dict(arguments["option"]),
                    seed=arguments["seed"],
                    duplicate=arguments["duplicate"],
                    workers=args.workers,
                    backend=args.backend,
                    ray_address=args.ray_address,
                    deterministic=not arguments["sample"],
                    torch_threads=args.torch_threads,
                    progress=not args.no_progress,
                    finished=finished,
                    on_games=save_games,
                    trust_models=args.trust_models,
                )
            except (ImportError, OSError) as error:
                raise ValueError(str(error)) from None
            print(result.format_table())
            paths = _save_or_rescue(lambda path: result.save(path, plot=not args.no_plot), str(out), "eval")
        except (Interrupted, WorkerLost) as stop:
            log.close()
            logged = (log.games > 0 or log.resume) and log.path.exists()  # not a log an earlier tournament left
            return _eval_stopped(stop, out, logged, plot=not args.no_plot)
        finally:
            log.close()
        log.remove()  # every game is in the results now
    played = result.games - result.resumed
    timing = f"{played} games in {result.seconds:.1f} s ({result.games_per_second:.1f} games/s)"
    if result.resumed:
        timing = f"{result.games} games: {result.resumed} from the stopped run, {timing}"
    print(f"\n{timing}; wrote " + ", ".join(str(path) for path in paths.values()))
    if args.records is not None:
        from tableenvs.records import record_tournament

        specs = list(arguments["policies"])
        if opponents is not None:
            specs += opponents if isinstance(opponents, list) else [opponents]
        count = result.games if args.record_games is None else min(args.record_games, result.games)
        deterministic = not arguments["sample"]
        written = record_tournament(
            result, specs, args.records, games=range(count), deterministic=deterministic, trust_models=args.trust_models
        )
        print(f"wrote {len(written)} game records under {args.records} (check one with: tableenvs replay FILE)")
    return 0


def _tournament(arguments: dict) -> dict:
    """What tournament.json holds: the arguments, the tableenvs version and a digest of every saved model."""
    import hashlib

    from tableenvs.numpy_policy import is_trained_spec, resolve_trained
    from tableenvs.paths import is_model_path

    models = {}
    for spec in list(arguments["policies"]) + list(arguments["opponents"] or []):
        file = spec
        if is_trained_spec(spec):  # the shipped model (or trained:path=FILE) is a file like any other
            try:
                file = str(resolve_trained(spec, arguments["env"]))
            except ValueError:
                continue
        if (is_model_path(file) or is_trained_spec(spec)) and os.path.isfile(file):
            with open(file, "rb") as handle:
                models[spec] = hashlib.sha256(handle.read()).hexdigest()
    return {"version": __version__, "arguments": arguments, "models": models}


def _eval_flag(dest: str, value) -> str:
    """One saved argument as the flag that gives it, e.g. ``--games 600``, ``--no-duplicate``."""
    if dest == "env":
        return f"ENV {value}"
    if dest == "duplicate":
        return "--duplicate" if value else "--no-duplicate"
    if dest == "sample":
        return "--sample" if value else "no --sample"
    if dest in ("policies", "opponents"):
        return f"--{dest} {'-' if value is None else ','.join(value)}"
    if dest == "option":
        return " ".join(f"--option {key}={value[key]}" for key in value) if value else "no --option"
    return f"--{dest} {'-' if value is None else value}"


def _eval_saved(out, given: dict) -> tuple[dict, list]:
    """``(arguments, finished games)`` of the tournament stopped in ``out``; ``ValueError`` if there is none, if
    ``given`` contradicts it, or if the code or a model changed since (the games would not be the same)."""
    import json

    from tableenvs.evaluation.journal import LOG_FILE, TOURNAMENT_FILE, read_log, read_tournament

    where = f"--resume {str(out)!r}"
    if not (out / TOURNAMENT_FILE).exists():
        results = out / "results.json"
        try:
            finished = results.exists() and "partial" not in json.loads(results.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            finished = False
        if finished:
            raise ValueError(f"{where}: nothing to resume, the tournament there finished (results.json)")
        raise ValueError(
            f"{where}: no stopped tournament there (no {TOURNAMENT_FILE}; a tournament writes it with its first "
            "finished game)"
        )
    saved = read_tournament(out)
    arguments = {**EVAL_DEFAULTS, **saved["arguments"]}
    texts = [arguments["env"], *(arguments["policies"] or []), *(arguments["opponents"] or [])]
    if (
        set(arguments) != set(EVAL_DEFAULTS)
        or not isinstance(arguments["policies"], list)
        or not all(isinstance(text, str) for text in texts)
        or not isinstance(arguments["option"], dict)
    ):
        raise ValueError(f"{where}: {TOURNAMENT_FILE} does not hold the arguments of a tournament")
    differ = [
        f"{_eval_flag(dest, value)} (saved: {_eval_flag(dest, arguments[dest])})"
        for dest, value in given.items()
        if value != arguments[dest]
    ]
    if differ:
        raise ValueError(
            f"{where}: the arguments differ from the stopped tournament's: {'; '.join(differ)}. Resume with the same "
            f"ones, or none (they are read from {TOURNAMENT_FILE}); to play another tournament use another --out"
        )
    if saved.get("version") != __version__:
        raise ValueError(
            f"{where}: the tournament was started by tableenvs {saved.get('version')} and this is {__version__}: "
            "its games could differ; play it anew"
        )
    now = _tournament(arguments)["models"]
    for spec, digest in (saved.get("models") or {}).items():
        if now.get(spec) != digest:
            change = "is missing" if spec not in now else "has changed"
            raise ValueError(f"{where}: the model {spec!r} {change} since the tournament started: play it anew")
    try:
        finished = read_log(out)
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None
    if not finished:
        print(f"tableenvs: note: {out / LOG_FILE} holds no finished game; playing every game", file=sys.stderr)
    return arguments, finished


def _note_unfinished(out) -> None:
    """Say so when a new tournament is about to replace a stopped one in ``out`` (``--resume`` would continue it)."""
    from tableenvs.evaluation.journal import TOURNAMENT_FILE

    if (out / TOURNAMENT_FILE).exists():
        print(
            f"tableenvs: note: {out} holds a stopped tournament; this new one replaces it with its first finished "
            f"game (tableenvs eval --resume {out} would continue it instead)",
            file=sys.stderr,
        )


def _eval_stopped(stop, out, logged: bool, plot: bool) -> int:
    """Ctrl-C, SIGTERM or a worker lost twice: write the partial results, say what was saved; the exit code."""
    import shlex

    from tableenvs.evaluation import Interrupted
    from tableenvs.evaluation.journal import LOG_FILE, read_log

    signal_name = stop.signal_name if isinstance(stop, Interrupted) else None
    resume = f"tableenvs eval --resume {shlex.quote(str(out))}"
    try:
        saved = len(read_log(out)) if logged else 0
    except ValueError:  # a log damaged meanwhile: --resume will name the line
        saved = 0
    planned = f" of {stop.planned}" if getattr(stop, "planned", 0) else ""
    said = [f"{saved}{planned} games saved in {out / LOG_FILE}" if saved else "no finished game saved"]
    if stop.partial is not None:
        stop.partial.partial["resume"] = resume
        try:
            paths = _save_or_rescue(lambda path: stop.partial.save(path, plot=plot), str(out), "eval")
            reported = stop.partial.partial["games_reported"]
            said.append(
                f"partial results (marked partial; games 0-{reported - 1}, whole blocks) in "
                + ", ".join(str(path) for path in paths.values())
            )
        except OutputError as error:
            said.append(f"the partial results were not written ({error})")
    if saved:
        said.append(f"continue with: {resume}")
    if signal_name is None:
        print(f"tableenvs: error: {_one_line(stop)}; " + "; ".join(said), file=sys.stderr)
        return 1
    print(f"\ntableenvs: stopped by {signal_name}: " + "; ".join(said), file=sys.stderr)
    print("tableenvs: interrupted" if signal_name == "SIGINT" else "tableenvs: terminated", file=sys.stderr)
    return 143 if signal_name == "SIGTERM" else 130


def _save_or_rescue(save, out: str, job: str) -> dict:
    """``save(out)``; if a file cannot be written there, save to a new temporary directory instead and raise the
    :class:`~tableenvs.paths.OutputError` naming both (the command line prints it and exits 2)."""
    try:
        return save(out)
    except OutputError as error:
        try:
            rescue = tempfile.mkdtemp(prefix=f"tableenvs-{job}-")
            save(rescue)
        except (OSError, OutputError):
            raise error from None
        raise OutputError(f"{error}; the results were saved to {rescue} instead") from None


def _play(args: argparse.Namespace) -> int:
    import time

    from tableenvs.records import Recorder

    options = {"render_mode": "ansi"}
    if args.players is not None:
        options["num_players"] = args.players
    if args.pause is not None and not (args.pause >= 0 and np.isfinite(args.pause)):
        raise ValueError(f"--pause must be a number of seconds >= 0, got {args.pause}")
    if args.record is not None:
        _check_record_file(args.record)
    env = make(args.env, **options)
    raw = env.unwrapped
    agent_names = raw.possible_agents
    policy_names = _policy_list(args.policies, "--policies")
    if len(policy_names) == 1:
        policy_names *= len(agent_names)
    if len(policy_names) != len(agent_names):
        raise ValueError(f"--policies names {len(policy_names)} policies for {len(agent_names)} players")
    check_model_files(policy_names, "--policies")
    humans = {agent for agent, name in zip(agent_names, policy_names, strict=True) if name == "human"}
    policies = {
        agent: make_policy(name, env, trust_models=args.trust_models)
        for agent, name in zip(agent_names, policy_names, strict=True)
        if agent not in humans
    }
    limit_torch_threads(args.torch_threads)
    seed = args.seed
    if seed is None and args.record is not None:  # a record needs the deal's seed
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    rng = np.random.default_rng(seed)
    pause = args.pause if args.pause is not None else (0.5 if humans and _stdin_is_tty() else 0.0)
    recorder = Recorder(args.env, {k: v for k, v in options.items() if k != "render_mode"}, seed or 0, policy_names)

    env.reset(seed=seed)
    seating = ", ".join(f"{agent}={name}" for agent, name in zip(agent_names, policy_names, strict=True))
    print(printable(f"{args.env}: {seating}") + (f" (seed {seed})" if seed is not None else "") + "\n")
    if humans:
        print("human seats see only their own view; type ? at your turn for help\n")
    else:
        print(env.render())
    totals = dict.fromkeys(agent_names, 0.0)
    shown = 0
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, _ = env.last()
        totals[agent] += reward
        action = None
        if not (terminated or truncated):
            if agent in humans:
                action = _human_turn(raw, agent, len(humans) > 1)
                if action is None:
                    if args.record is not None:  # the game so far: it replays, with no outcome
                        path = recorder.finish(env).save(args.record)
                        print(f"wrote {path} ({len(recorder.record.steps)} steps, unfinished)")
                    print(f"tableenvs: {agent} quit the game")
                    return 0
                if len(humans) == 1:
                    print(f"  {agent} (you): {raw.describe_action(action)}")
            else:
                action = policies[agent].act(observation["observation"], observation["action_mask"], rng)
            recorder.add(env, action)
            public = raw.describe_action_public(action)
        env.step(action)
        log = raw.event_log
        if humans:
            # the god-view log would show hidden moves (passed cards, staged tiles): only what the table sees
            if action is not None and agent not in humans and not args.quiet:
                print(f"  {agent}: {public}")
                if pause and raw.agent_selection != agent:  # once per turn, not per staged tile or picked card
                    time.sleep(pause)
        elif not args.quiet:
            for line in log[shown:]:
                print(f"  {line}")
        shown = len(log)
    print()
    print(env.render())
    print("total reward: " + ", ".join(f"{agent} {value:+g}" for agent, value in totals.items()))
    if args.record is not None:
        path = recorder.finish(env).save(args.record)
        print(f"wrote {path} ({len(recorder.record.steps)} steps)")
    return 0


def _stdin_is_tty() -> bool:
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


def _check_record_file(path: str, flag: str = "--record") -> None:
    """``flag FILE`` (``--record``, ``--html``) must be a file that can be written (checked before the game starts)."""
    from pathlib import Path

    from tableenvs.paths import check_output_dir

    file = Path(path).expanduser()
    if file.is_dir():
        raise ValueError(f"{flag} {path!r} is a directory, not a file")
    parent = file.parent
    if not parent.is_dir():
        raise ValueError(f"{flag} {path!r}: the directory {str(parent)!r} does not exist")
    check_output_dir(parent, f"{flag}'s directory")
    if file.exists():  # written whole at the end (atomically): until then the existing file is intact
        print(f"tableenvs: note: {flag} {path!r} exists and will be replaced", file=sys.stderr)


HUMAN_HELP = """Type the number of an action, or its words (e.g. "bid 2", "commit"; a unique start is enough).
  ?  or help   this help and the list of your actions again
  v  or view   your view of the table again
  q  or quit   leave the game (exit code 0)
Only what your seat may see is shown; the other seats play automatically."""


def _human_turn(raw, agent: str, several: bool) -> int | None:
    """Ask the human at ``agent`` for a legal action; None if they quit (or the input ended)."""
    legal = raw.legal_actions()
    choices = [raw.describe_action(action) for action in legal]
    print()
    if several:
        print(f"=== {agent}'s turn (other players, look away) ===")
    print(raw.render_view(agent))
    _print_choices(choices)
    while True:
        try:
            text = input(f"{agent}> ")
        except EOFError:
            print()
            return None
        if not _stdin_is_tty():  # piped input: echo it so the transcript reads like a terminal session
            print(text)
        answer = " ".join(text.split()).lower()
        if answer in ("q", "quit", "exit"):
            return None
        if answer in ("?", "h", "help"):
            print(HUMAN_HELP)
            _print_choices(choices)
            continue
        if answer in ("v", "view"):
            print(raw.render_view(agent))
            continue
        if not answer:
            continue
        if answer.isdigit():
            number = int(answer)
            if 1 <= number <= len(legal):
                return legal[number - 1]
            print(f"no action {number}: type a number from 1 to {len(legal)}, ? for help, q to quit")
            continue
        lowered = [choice.lower() for choice in choices]
        if answer in lowered:
            return legal[lowered.index(answer)]
        matches = [i for i, choice in enumerate(lowered) if choice.startswith(answer)]
        if len(matches) == 1:
            return legal[matches[0]]
        if matches:
            shown = ", ".join(choices[i] for i in matches[:6]) + (", ..." if len(matches) > 6 else "")
            print(f"{text.strip()!r} could be {len(matches)} actions ({shown}); type more of it or the number")
        else:
            print(
                f"{text.strip()!r} is not one of your legal actions; type a number from 1 to {len(legal)}, "
                "? for help, q to quit"
            )


def _print_choices(choices: list[str]) -> None:
    print("your legal actions:")
    items = [f"{i:>3}. {choice}" for i, choice in enumerate(choices, 1)]
    if len(items) <= 12:
        print("\n".join(items))
        return
    width = max(len(item) for item in items) + 2
    per_row = max(1, 110 // width)
    for start in range(0, len(items), per_row):
        print("".join(item.ljust(width) for item in items[start : start + per_row]).rstrip())


def _replay(args: argparse.Namespace) -> int:
    from tableenvs.records import GameRecord, replay

    record = GameRecord.load(args.file)
    if args.html is not None:
        _check_record_file(args.html, "--html")
    print(  # a record's text goes through printable(): an escape sequence in it is shown, not obeyed
        printable(
            f"{record.game} record: seed {record.seed}, options {record.options}, {len(record.steps)} steps"
            + (f", policies {','.join(record.policies)}" if record.policies else "")
        )
    )
    shown = [0]

    def on_step(env, index, step):
        log = env.event_log
        if not args.quiet:
            for line in log[shown[0] :]:
                print(f"  {printable(line)}")
        shown[0] = len(log)

    result = replay(record, on_step=on_step)
    outcome = result.outcome
    ending = "unfinished" if outcome is None else "winner(s) " + ", ".join(f"player_{s}" for s in outcome["winners"])
    print(
        f"{printable(args.file)}: reproduces exactly ({result.steps} steps; {ending}; returns "
        + ", ".join(f"{x:+g}" for x in result.returns)
        + ")"
    )
    if args.html is not None:
        from pathlib import Path

        from tableenvs.viewer import write_html

        print(f"wrote {write_html(record, Path(args.html).expanduser())} (open it in a browser)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
