"""Training samples per CPU-second: the strong recipe's PPO step and the batched trainer against today's default
``tableenvs train``, in the same run. The block of docs/benchmarks.md "Training throughput".

For each game: (1) :func:`tableenvs.training.job.train` with its defaults (MaskablePPO, 4 envs x 512 steps, minibatch
256, 10 epochs, a (128, 128) actor and critic: ``tableenvs.training.config.DEFAULT_HYPERPARAMETERS``) against
``random`` (its default) and against ``heuristic`` opponents; (2) the strong recipe's fine-tuning,
:func:`tableenvs.training.recipe.fine_tune` (the batched trainer with ``recipe.FINE_TUNE``: the learner in all seats
but one, the heuristic in that one, 64 envs, rollouts of 8,192+, minibatch ~2,048, 2 epochs, a (256, 256) actor
started from a random numpy policy of that shape and a (256, 256) critic, no frozen phase: the rate of the steady
state), and the first recipe's, :func:`tableenvs.training.recipe.fine_tune_sb3` (MaskablePPO on one seat against
four heuristics, 8 envs x 512 steps, minibatch 1,024, 4 epochs, the same network); (3) the batched in-process
trainer, :func:`tableenvs.training.batched.train_batched` with its defaults (self-play: every seat learns; 64 envs
stepped as one batch, rollouts of 8,192+ decisions, minibatch ~2,048, 4 epochs, a (128, 128) actor and critic), its
model file written. Each is timed in CPU seconds of this process (``time.process_time``: every thread, torch's
included), setup and the one evaluation game of (1) included; a sample is one learner decision. Torch runs one
thread in all. The last column is each row's rate divided by the first row's (the default job against ``random``,
what ``tableenvs train GAME`` runs); the issue asks for 5x. The run ends with the batched trainer's split of its CPU
time between collecting (envs and the actor's forward passes) and updating (PPO), per sample.

Run: ``python benchmarks/training_throughput.py [--steps 20480] [--game pilipili_v0 ...] [--write-docs]``.
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from pathlib import Path

from common import replace_block

import tableenvs
from tableenvs.policies.numpy_policy import load_numpy_policy, random_numpy_policy
from tableenvs.training import recipe
from tableenvs.training.batched import train_batched
from tableenvs.training.job import TrainConfig, train

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "benchmarks.md"
BEGIN = "<!-- training_throughput: begin (written by benchmarks/training_throughput.py --write-docs) -->"
END = "<!-- training_throughput: end -->"
GAMES = ("pilipili_v0", "llama_party_v0")


def quiet_default_job(game: str, out: Path, steps: int, *, opponents: str = "random", seed: int = 0) -> tuple:
    """Today's default ``tableenvs train`` job for ``steps`` (no periodic evaluation, checkpoint or output beyond its
    model files); (its TrainResult, CPU seconds of this process). Also used by ``batched_learning.py``."""
    began = time.process_time()
    config = TrainConfig(
        game,
        out=out,
        timesteps=steps,
        opponents=opponents,
        seed=seed,
        eval_every=10 * steps,
        eval_games=1,
        final_games=0,
        checkpoint_every=0,
        progress_bar=False,
        verbose=False,
    )
    result = train(config)
    return result, time.process_time() - began


def default_job(game: str, opponents: str, steps: int, out: Path) -> tuple[int, float]:
    result, cpu = quiet_default_job(game, out, steps, opponents=opponents)
    return result.timesteps, cpu


def recipe_job(game: str, steps: int, out: Path, first: bool = False, seats: int | None = None) -> tuple[int, float]:
    """The strong recipe's fine-tuning (``first``: the first recipe's, SB3; ``seats``: ``--learner-seats``) from a
    random (256, 256) numpy policy, no frozen phase, for ``steps`` learner decisions; (samples, CPU seconds)."""
    start = random_numpy_policy(out / "start.npz", tableenvs.make_raw(game), hidden=(256, 256), activation="relu")
    quiet = {"chunk": 10 * steps, "say": lambda text: None}
    began = time.process_time()
    if first:
        final = recipe.fine_tune_sb3(game, {}, start, out / "ft-sb3", steps=steps, freeze=0, **quiet)
    else:
        final = recipe.fine_tune(
            game, {}, start, out / f"ft{seats}", steps=steps, learner_seats=seats, settings={"value_warmup": 0}, **quiet
        )
    return int(load_numpy_policy(final).meta["steps"]), time.process_time() - began


def batched_job(game: str, steps: int, out: Path) -> tuple[int, float, str]:
    """The batched trainer's defaults for ``steps`` samples; (samples, CPU seconds, its collect/update split)."""
    began = time.process_time()
    result = train_batched(game, samples=steps, out=out)
    seconds = time.process_time() - began
    collect = sum(row["collect_seconds"] for row in result.history) / result.samples * 1e6
    update = sum(row["update_seconds"] for row in result.history) / result.samples * 1e6
    return result.samples, seconds, f"{game}: collect {collect:.1f} µs + update {update:.1f} µs per sample"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20_480, help="learner decisions per job (default 20480)")
    parser.add_argument("--game", action="append", choices=GAMES, help="a game (repeat; default both)")
    parser.add_argument("--write-docs", action="store_true", help="rewrite docs/benchmarks.md's block")
    args = parser.parse_args()
    lines = [
        "| game | job | samples | CPU s | samples / CPU-s | × default |",
        "|---|---|---|---|---|---|",
    ]
    splits = []
    for game in args.game or GAMES:
        players = tableenvs.make_raw(game).num_players
        with tempfile.TemporaryDirectory() as tmp:
            rows = [
                (
                    "`tableenvs train` defaults, random opponents",
                    *default_job(game, "random", args.steps, Path(tmp) / "a"),
                ),
                (
                    "`tableenvs train` defaults, heuristic opponents",
                    *default_job(game, "heuristic", args.steps, Path(tmp) / "b"),
                ),
                (
                    "first recipe's fine-tuning (SB3), heuristic opponents",
                    *recipe_job(game, args.steps, Path(tmp), first=True),
                ),
                (
                    "**strong recipe's fine-tuning** (batched), learner in all seats but the heuristic's",
                    *recipe_job(game, args.steps, Path(tmp)),
                ),
                (
                    f"strong recipe's fine-tuning with `--learner-seats {players - 2}` (two heuristics)",
                    *recipe_job(game, args.steps, Path(tmp), seats=players - 2),
                ),
            ]
            samples, seconds, split = batched_job(game, args.steps, Path(tmp) / "batched")
            rows.append(("batched trainer (`tableenvs.training.batched`), self-play", samples, seconds))
            splits.append(split)
        default = rows[0][1] / rows[0][2]
        for name, samples, seconds in rows:
            rate = samples / seconds
            lines.append(f"| {game} | {name} | {samples:,} | {seconds:.1f} | {rate:,.0f} | {rate / default:.2f}x |")
            print(lines[-1], flush=True)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    body = "\n".join(lines) + (
        f"\n\nMeasured {when} on this project's 2-core machine (Python {platform.python_version()}, "
        f"{platform.machine()}), shared with other jobs (CPU seconds of this process only): "
        f"`python benchmarks/training_throughput.py --steps {args.steps}`. Batched trainer, CPU time per sample: "
        + "; ".join(splits)
        + "."
    )
    print(body)
    if args.write_docs:
        replace_block(DOCS, BEGIN, END, body)
        print(f"wrote {DOCS}")


if __name__ == "__main__":
    main()
