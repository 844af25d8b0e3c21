"""Training samples per CPU-second: the strong recipe's PPO step against today's default ``tableenvs train``, in the
same run (issue 28, item 2). The block of docs/benchmarks.md "Training throughput".

For each game: (1) :func:`tableenvs.training.job.train` with its defaults (MaskablePPO, 4 envs x 512 steps, minibatch
64,
10 epochs, a (64, 64) network) against ``random`` (its default) and against ``heuristic`` opponents; (2) the recipe's
fine-tuning, :func:`tableenvs.training.recipe.fine_tune` (8 envs x 512 steps, minibatch 1,024, 4 epochs, a (256, 256)
network started from a random numpy policy of that shape, no frozen phase) against ``heuristic``. Each is timed in CPU
seconds of this process (``time.process_time``: every thread, torch's included), setup and the one evaluation
game of (1) included; a sample is one learner decision. Torch runs one thread in both.

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
from tableenvs.training.job import TrainConfig, train

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "benchmarks.md"
BEGIN = "<!-- training_throughput: begin (written by benchmarks/training_throughput.py --write-docs) -->"
END = "<!-- training_throughput: end -->"
GAMES = ("pilipili_v0", "llama_party_v0")


def default_job(game: str, opponents: str, steps: int, out: Path) -> tuple[int, float]:
    began = time.process_time()
    config = TrainConfig(
        game,
        out=out,
        timesteps=steps,
        opponents=opponents,
        eval_every=10 * steps,
        eval_games=1,
        final_games=0,
        checkpoint_every=0,
        progress_bar=False,
        verbose=False,
    )
    result = train(config)
    return result.timesteps, time.process_time() - began


def recipe_job(game: str, steps: int, out: Path) -> tuple[int, float]:
    start = random_numpy_policy(out / "start.npz", tableenvs.make_raw(game), hidden=(256, 256), activation="relu")
    began = time.process_time()
    final = recipe.fine_tune(
        game, {}, start, out / "ft", steps=steps, freeze=0, chunk=10 * steps, say=lambda text: None
    )
    return int(load_numpy_policy(final).meta["steps"]), time.process_time() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20_480, help="learner decisions per job (default 20480)")
    parser.add_argument("--game", action="append", choices=GAMES, help="a game (repeat; default both)")
    parser.add_argument("--write-docs", action="store_true", help="rewrite docs/benchmarks.md's block")
    args = parser.parse_args()
    lines = [
        "| game | job | samples | CPU s | samples / CPU-s | recipe ÷ this |",
        "|---|---|---|---|---|---|",
    ]
    for game in args.game or GAMES:
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
                ("recipe fine-tuning, heuristic opponents", *recipe_job(game, args.steps, Path(tmp))),
            ]
        fast = rows[-1][1] / rows[-1][2]
        for name, samples, seconds in rows:
            rate = samples / seconds
            lines.append(f"| {game} | {name} | {samples:,} | {seconds:.1f} | {rate:,.0f} | {fast / rate:.2f}x |")
            print(lines[-1], flush=True)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    body = "\n".join(lines) + (
        f"\n\nMeasured {when} on this project's 2-core machine (Python {platform.python_version()}, "
        f"{platform.machine()}), shared with other jobs (CPU seconds of this process only): "
        f"`python benchmarks/training_throughput.py --steps {args.steps}`."
    )
    print(body)
    if args.write_docs:
        replace_block(DOCS, BEGIN, END, body)
        print(f"wrote {DOCS}")


if __name__ == "__main__":
    main()
