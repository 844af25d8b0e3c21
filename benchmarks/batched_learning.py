"""Learning per sample: today's default ``tableenvs train`` job against the batched self-play trainer, at the same
number of learner decisions ("at equal or better learning per sample").

For each game: (a) :func:`tableenvs.training.job.train` with its defaults (MaskablePPO on one rotating seat against
``random`` opponents, 4 envs) and (b) :func:`tableenvs.training.batched.train_batched` with its defaults (self-play:
every seat is the learner), each for ``--samples`` learner decisions, from ``--seeds`` seeds counted from
``--first-seed``. Every exported model (numpy policy files, greedy play) then plays in one gauntlet of
:func:`tableenvs.evaluation.evaluate` against ``random`` and one against ``heuristic`` opponents on duplicate deals
(every agent gets the same cards from the same seats), ``--games`` games each; the table gives each agent's mean final
score and win rate with 95% intervals and the paired difference batched - default of the same seed over the same
deals. CPU seconds are this process's (``time.process_time``) for each training.

Run: ``python benchmarks/batched_learning.py [--samples 100000] [--games 1000] [--game pilipili_v0 ...] [--seeds 1]
[--first-seed 0] [--write-docs]``; ``--write-docs`` writes the table into docs/training.md's block
``batched-learning``.
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

from common import replace_block
from training_throughput import quiet_default_job

from tableenvs.evaluation import evaluate
from tableenvs.training.batched import train_batched

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "training.md"
BEGIN = (
    "<!-- measured: batched-learning (python benchmarks/batched_learning.py --write-docs; machine-dependent, "
    "not checked in CI) -->"
)
END = "<!-- end measured: batched-learning -->"
GAMES = ("pilipili_v0", "llama_party_v0")


def default_model(game: str, samples: int, seed: int, out: Path) -> tuple[Path, int, float]:
    """Today's default job; (model.npz, samples trained, CPU seconds)."""
    result, cpu = quiet_default_job(game, out, samples, seed=seed)
    if result.numpy_model_path is None:
        raise RuntimeError(f"{game}: the default job wrote no model.npz")
    return result.numpy_model_path, result.timesteps, cpu


def batched_model(game: str, samples: int, seed: int, out: Path) -> tuple[Path, int, float]:
    """The batched trainer's defaults (self-play); (model.npz, samples trained, CPU seconds)."""
    began = time.process_time()
    result = train_batched(game, samples=samples, seed=seed, out=out)
    assert result.model is not None
    return result.model, result.samples, time.process_time() - began


def show(value: float, low: float, high: float, digits: int = 2) -> str:
    return f"{value:+.{digits}f} [{low:+.{digits}f}, {high:+.{digits}f}]"


def batched_minus_default(result: Any, default: int, batched: int) -> dict[str, tuple[float, float, float]]:
    """The paired differences entrant ``batched`` - entrant ``default`` over the same deals: score and win rate, each
    (mean, low, high) of the 95% interval."""
    labels = {result.labels[default], result.labels[batched]}
    row = next(r for r in result.paired if {r["policy"], r["opponent"]} == labels)
    sign = 1.0 if row["policy"] == result.labels[batched] else -1.0
    out = {}
    for name, key in (("score", "score_diff"), ("win", "win_diff")):
        low, high = sorted((sign * row[key + "_low"], sign * row[key + "_high"]))
        out[name] = (sign * row[key], low, high)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=100_000, help="learner decisions per training (default 100000)")
    parser.add_argument("--games", type=int, default=1000, help="evaluation games per agent and opponent kind")
    parser.add_argument("--game", action="append", choices=GAMES, help="a game (repeat; default pilipili_v0)")
    parser.add_argument("--seeds", type=int, default=1, help="trainings of each kind (default 1)")
    parser.add_argument("--first-seed", type=int, default=0, help="their seeds: this one and the next (default 0)")
    parser.add_argument("--workers", type=int, default=1, help="evaluation processes (default 1)")
    parser.add_argument("--write-docs", action="store_true", help="rewrite docs/training.md's block")
    args = parser.parse_args()
    lines = [
        "| game | opponents | agent | seed | samples | train CPU s | final score [95%] | win rate [95%] | "
        "batched − default, same seed: score [95%] | win rate [95%] |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for game in args.game or ["pilipili_v0"]:
        with tempfile.TemporaryDirectory() as tmp:
            agents = []  # (name, seed, path, samples, CPU seconds): default then batched for each seed
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                for name, trainer in (("`tableenvs train` defaults", default_model), ("batched", batched_model)):
                    path, samples, seconds = trainer(game, args.samples, seed, Path(tmp) / f"{trainer.__name__}{seed}")
                    print(f"{game}: {name} seed {seed}: {samples:,} samples in {seconds:.1f} CPU s", flush=True)
                    agents.append((name, seed, str(path), samples, seconds))
            for opponents in ("random", "heuristic"):
                result = evaluate(
                    game,
                    [path for _, _, path, _, _ in agents],
                    len(agents) * args.games,
                    opponents=opponents,
                    seed=10_000,
                    duplicate=True,
                    workers=args.workers,
                )
                score = result.score_name
                better = "higher is better" if result.higher_is_better else "lower is better"
                for index, (name, seed, _, samples, seconds) in enumerate(agents):
                    row = result.policies[index]
                    compared = "| "
                    if index % 2:
                        diff = batched_minus_default(result, index - 1, index)
                        compared = f"{show(*diff['score'])} | {show(*diff['win'], digits=3)}"
                    lines.append(
                        f"| {game} | {opponents} | {name} | {seed} | {samples:,} | {seconds:.1f} | "
                        f"{row['score_mean']:.2f} [{row['score_low']:.2f}, {row['score_high']:.2f}] "
                        f"({score}, {better}) | "
                        f"{row['win_rate']:.3f} [{row['win_rate_low']:.3f}, {row['win_rate_high']:.3f}] | {compared} |"
                    )
                    print(lines[-1], flush=True)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    games_flag = " ".join(f"--game {g}" for g in args.game or ["pilipili_v0"])
    body = "\n".join(lines) + (
        f"\n\nMeasured {when} on this project's 2-core machine (Python {platform.python_version()}), shared with other "
        f"jobs: `python benchmarks/batched_learning.py --samples {args.samples} --games {args.games} {games_flag}"
        f" --seeds {args.seeds} --first-seed {args.first_seed}`. Each agent plays greedily from its exported model "
        f"file; {args.games} games per agent and opponent kind, every agent on the same duplicate deals; each "
        "difference is paired over those deals."
    )
    print(body)
    if args.write_docs:
        replace_block(DOCS, BEGIN, END, body)
        print(f"wrote {DOCS}")


if __name__ == "__main__":
    main()
