"""The ``tableenvs`` command line.

Where you are: the console script: the parser (every sub-command's flags and help texts), the checks every
sub-command's counts share, the error policy below, and the dispatch to the sub-command's implementation in
:mod:`tableenvs.commands` (``serve``: :mod:`tableenvs.web.command`). Sub-commands:

* ``tableenvs list`` — the environment names.
* ``tableenvs play ENV [--players N] [--policies heuristic,random] [--seed S]`` — one whole game between
  built-in agents, shown in the terminal: the table at the start, each decision and outcome as it
  happens, the table and the result at the end.
* ``tableenvs play ENV --policies human,heuristic,...`` — a human seat (any seats, several allowed): each human
  sees its own view of the table (``render_view``), a numbered list of its legal actions, and types a number or
  the words (``?`` for help, ``q`` to quit); ``--record FILE`` writes the game as a JSON record.
* ``tableenvs replay FILE`` — re-play a game record and check it reproduces exactly (:mod:`tableenvs.play.records`);
  ``--html OUT.html`` also writes a self-contained page stepping through it (:mod:`tableenvs.play.viewer`).
* ``tableenvs train ENV [--timesteps N] [--opponents random] [--players N] [--out DIR] [--algo A] ...`` — train
  MaskablePPO (or PPO, A2C, DQN) on one seat against the given opponents (needs the ``train`` extra): a progress
  bar, a printed line per periodic evaluation, checkpoints (periodic and on Ctrl-C/SIGTERM), the saved model, a
  learning-curve PNG and a final table against random and heuristic play; ``tableenvs train --resume DIR``
  continues a run (see :mod:`tableenvs.training.job`); ``--backend rllib`` trains with Ray RLlib instead, every seat
  learning, and writes a torch-only ``policy.pt`` that ``eval`` plays (see :mod:`tableenvs.training.rllib`); ``--recipe
  strong`` or ``--recipe search-clone`` runs a recipe instead (:mod:`tableenvs.training.recipe`; a rerun on the same
  ``--out`` continues it), or a recipe the game's spec declares (Rummikub's ``openings`` and ``holding``:
  :mod:`tableenvs.training.scorer_recipes`).
* ``tableenvs serve [--host 127.0.0.1] [--port 8000]`` — play in the browser against any agents, several people
  at one table with a link each (needs the ``web`` extra; :mod:`tableenvs.web`, ``docs/web.md``).
* ``tableenvs export MODEL.zip OUT.npz [--game ENV] [--players N] [--option K=V]`` — write a Stable-Baselines3
  model's actor as a numpy policy file (``.npz``: plain arrays, no code runs when it is loaded, played without torch;
  see :mod:`tableenvs.policies.numpy_policy`), reading the ``.zip`` without running its pickles; the game and options
  come from the ``results.json`` beside the model unless given.
* ``tableenvs eval ENV --policies random,heuristic,model.npz [--players N] [--games N] [--out DIR] ...`` — a
  tournament between policies, balanced seatings and duplicate deals: a progress bar, a printed table, results
  as JSON and CSV and a ratings PNG under ``--out`` (see :mod:`tableenvs.evaluation` and ``docs/evaluation.md``);
  ``--records DIR`` also writes a game record of each game (:func:`tableenvs.play.records.record_tournament`). Games
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
import sys

from tableenvs import __version__
from tableenvs.commands import eval as eval_command
from tableenvs.commands import export as export_command
from tableenvs.commands import play as play_command
from tableenvs.commands import replay as replay_command
from tableenvs.commands import train as train_command
from tableenvs.commands.errors import exit_code
from tableenvs.core.registry import discover_games, names, spec
from tableenvs.core.validation import check_at_least
from tableenvs.policies import BUILTIN_POLICIES
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
    "label_games": 1,
    "learner_seats": 1,
    "seed": 0,
}

#: ``--trust-models``'s help, the same in every sub-command that loads models.
TRUST_HELP = (
    "load saved SB3 models (.zip): their pickles can run any code when loaded, so only for files you trust (a .npz or "
    ".pt loads without it; tableenvs export MODEL.zip MODEL.npz converts a .zip without running it)"
)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block) and exit code 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _scorer_recipes_help() -> str:
    """The recipes the games' specs declare, as ``NAME (GAME: what it trains)``, for ``train --help``."""
    found = []
    for game in names():
        for recipe in spec(game).recipes:
            try:
                what = spec(game).load("recipes", recipe).description
            except ValueError as error:  # a broken game's recipe: said in its place, the help still prints
                what = str(error)
            found.append(f"{recipe} ({game}: {what})" if what else f"{recipe} ({game})")
    return "; ".join(found) or "none declared"


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code (the error policy of the module docstring is
    :func:`tableenvs.commands.errors.exit_code`)."""
    _discover_installed_games()
    return exit_code(lambda: _main(argv), argv)


def _discover_installed_games() -> None:
    """Register the games installed packages declare (entry points, :func:`tableenvs.core.registry.discover_games`)
    before the parser lists the games; an entry point that cannot be loaded is one line on stderr, and the rest
    of the command runs (asking for that game is an error naming the same cause)."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        discover_games()
    for warning in caught:
        print(f"tableenvs: warning: {str(warning.message).removeprefix('tableenvs: ')}", file=sys.stderr)


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
    replay.add_argument("file", help="a record written by tableenvs play --record (or tableenvs.play.records)")
    replay.add_argument("--quiet", action="store_true", help="print only the result line")
    replay.add_argument(
        "--html", metavar="OUT", help="also write OUT (.html): one self-contained page stepping through the game"
    )

    train_defaults = _add_train_parser(commands)
    _add_eval_parser(commands)
    _add_export_parser(commands)
    web_command.add_parser(commands)

    args = parser.parse_args(argv)
    _check_counts(args)
    if args.command == "list":
        print("\n".join(names()))
        return 0
    if args.command == "train":
        return train_command.run(args, train_defaults)
    if args.command == "eval":
        return eval_command.run(args)
    if args.command == "replay":
        return replay_command.run(args)
    if args.command == "serve":
        return web_command.run(args)
    if args.command == "export":
        return export_command.run(args)
    return play_command.run(args)


def _add_train_parser(commands) -> dict[str, object]:
    """Add ``train``; return its default of every flag (by argparse dest): ``--resume`` and ``--backend rllib``
    refuse a flag that differs from it."""
    train = commands.add_parser(
        "train",
        help="train MaskablePPO (or PPO, A2C, DQN) on one seat (needs the train extra)",
        description="Train sb3-contrib's MaskablePPO (or --algo ppo|a2c|dqn) on one seat of a game against the given "
        "opponents; save the model, a learning-curve PNG and results.json under --out and print the final evaluation "
        "table. A checkpoint is saved every --checkpoint-every steps and on Ctrl-C or SIGTERM; --resume DIR continues "
        "a run to its budget.",
    )
    train.add_argument("env", nargs="?", help=f"environment name ({', '.join(names())}); omit with --resume")
    train.add_argument(  # None: not given (the plain job's 20000, rllib's and batched's 50000, the recipe's 10000000)
        "--timesteps",
        type=int,
        default=None,
        help="learner decisions to train (default 20000; --backend rllib or batched: 50000); the learner runs whole "
        "rollouts (MaskablePPO: 512 steps per env), so at least one, rounded up to whole ones (20000 with 4 envs runs "
        "20480)",
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
    train.add_argument("--eval-every", type=int, default=4_000, help="timesteps between evaluations (default 4000)")
    train.add_argument("--eval-games", type=int, default=100, help="games per periodic evaluation (default 100)")
    train.add_argument(
        "--final-games", type=int, default=200, help="games per row of the final table (default 200; 0 skips it)"
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
        choices=("sb3", "rllib", "batched"),
        default="sb3",
        help="sb3 (default: one seat, the flags above); rllib: Ray RLlib's PPO with every seat learning (needs "
        "ray[rllib], see docs/training.md#rllib; takes --timesteps, --players, --option, --seed, --out, "
        "--final-games, --no-progress and the three flags below); batched: the in-process batched PPO trainer, "
        "self-play with every seat learning, several times the samples per CPU-second of sb3 "
        "(tableenvs.training.batched; takes --timesteps, --players, --option, --seed, --out, --no-progress; writes "
        "OUT/model.npz)",
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
    train.add_argument(
        "--recipe",
        default=None,
        help="strong: clone the heuristic from its own games, then PPO from the clone in the batched trainer, the "
        "learner in every seat but one heuristic's (tableenvs.training.recipe, docs/training.md 'The strong "
        "recipe'); takes --timesteps (PPO steps, default 10000000 with the recipe), --players, --seed, --out, "
        "--label-games. search-clone: clone the game's default search from its own games, on the observation and "
        "the game's derived inputs, no PPO; takes --players, --seed, --out, --label-games. league: clone the "
        "heuristic from its games in the batched engine, then PPO on the batched engine against a population (its "
        "past snapshots, the batched heuristic, itself) drawn by how much each still beats it "
        "(tableenvs.training.league; games with a batched engine and batched heuristic); takes --timesteps "
        "(default 10000000), --players, --seed, --out, --label-games (default 3000) or --init (a model to start "
        "from instead of the clone). advantage: advantage iteration from the model --init (its own games replayed "
        "from the true state; tableenvs.training.advantage_iteration); takes --players, --out, --init, "
        "--label-games (a step's, default 3000), --steps, --bonus, --objective. Or a recipe of the "
        "game's own (numpy, no torch): " + _scorer_recipes_help() + ", each a candidate scorer trained by the "
        "cross-entropy method on its score against the heuristic (tableenvs.training.scorer_recipes); takes "
        "--timesteps (games played, by default the recipe's generations), --players, --seed, --out, --init, "
        "--spread, --rank-points, --table-games, --against. Rerun a recipe on the same --out to continue it "
        "(--resume is only for the plain job)",
    )
    train.add_argument(  # None: not given (the recipe's own default, tableenvs.commands.train)
        "--label-games",
        type=int,
        default=None,
        help="with --recipe: games to clone from (default 1500 heuristic games for strong, 300 search games for "
        "search-clone, 3000 heuristic games for league)",
    )
    train.add_argument(  # None: not given (the recipe's default: every seat but one)
        "--learner-seats",
        type=int,
        default=None,
        help="with --recipe strong: the seats of each table the learner plays while fine-tuning, the heuristic the "
        "others (default: every seat but one)",
    )
    # with a game's own --recipe (None: the recipe's own value)
    scorer = "with a game's own --recipe: "
    train.add_argument("--init", metavar="FILE", help="with --recipe league or advantage: start from this numpy "
                       "policy file (same game and player count, e.g. a shipped model; league: instead of the "
                       "heuristic's clone); "
                       "with a game's own --recipe: start from this candidate-scoring model file's weights (one of "
                       "the same candidates, e.g. trained at another player count)")  # fmt: skip
    train.add_argument("--spread", type=float, default=1.0, help=scorer + "the first generation's spread of every "
                       "weight (default 1; smaller keeps a run near its --init)")  # fmt: skip
    train.add_argument("--rank-points", type=float, help=scorer + "the points one place of mean rank is worth in "
                       "the fitness, where it weighs finishing rank (population; default the recipe's)")  # fmt: skip
    train.add_argument("--table-games", type=int, help=scorer + "the games that score a weight vector at each "
                       "table (default the recipe's)")  # fmt: skip
    train.add_argument("--against", metavar="FILE", action="append", default=None, help=scorer + "a policy file "
                       "(.npz) of the game and player count, one more table of the fitness: one seat of it among "
                       "the weights' own, the weights in a seat minus it there (e.g. a best response found "
                       "against an earlier model; repeatable)")  # fmt: skip
    train_command.add_advantage_flags(train)
    return {action.dest: action.default for action in train._actions if action.dest != "help"}


def player_count(text: str) -> int:
    """``--players``: a number of players in every subcommand (policies are listed with ``--policies``)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--players is the number of players (an integer), got {text!r}; list policies with --policies"
        ) from None


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
    # The flags that decide the games default to None here (their defaults are EVAL_DEFAULTS, in
    # tableenvs.commands.eval_resume): --resume tells a flag given on the command line, which must match the saved
    # tournament, from one left out.
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
        "--engine",
        choices=("auto", "aec", "batched"),
        default=None,
        help="where the games are played: auto (default: the game's batched engine when every policy has a batched "
        "player, random, heuristic or a greedy .npz model, with the same results; else the AEC env), aec, or batched "
        "(an error naming what cannot be batched)",
    )
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


if __name__ == "__main__":
    sys.exit(main())
