"""Why the strong recipe's fine-tuning takes two epochs at learning rate 2e-4 (issue 28): the settings compared.

Where you are: a long benchmark, never run in CI; it writes the ``fine-tune-settings`` block of docs/training.md.
:data:`tableenvs.training.recipe.FINE_TUNE` takes two PPO epochs per rollout at 2e-4; the update is most of a
sample's CPU cost, so fewer epochs are what keep the recipe at 5x the default job's samples per CPU-second. This
script makes one clone of the heuristic (the recipe's first stage, ``recipe.strong``), then fine-tunes it once per
setting (:data:`SETTINGS`, each over :data:`FINE_TUNE`, everything else the recipe's) for ``--steps`` learner
decisions, and plays each final model against the heuristic (``--games`` games, half the seats each, every seating,
duplicate deals, :func:`tableenvs.evaluation.evaluate`): the table gives the paired score and win-rate differences
and the CPU seconds of each fine-tuning (``time.process_time`` of this process; torch runs one thread).

    python benchmarks/fine_tune_settings.py --out runs/settings [--game pilipili_v0] [--steps 3000000]
        [--games 1000] [--seed 0] [--write-docs]

A rerun with the same ``--out`` keeps what is done (the clone, finished fine-tunings, their evaluations).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from common import finished_on_this_machine, replace_block
from feature_clone import markers

from tableenvs.core.registry import make_raw
from tableenvs.evaluation import evaluate
from tableenvs.paths import write_text_atomic
from tableenvs.training import recipe

DOCS = Path(__file__).resolve().parents[1] / "docs" / "training.md"
BLOCK = "fine-tune-settings"
#: name -> the fields of FINE_TUNE it changes (the recipe's own setting is "2 epochs, 2e-4").
SETTINGS: dict[str, dict[str, Any]] = {
    "2 epochs, 1e-4": {"epochs": 2, "learning_rate": 1e-4},
    "4 epochs, 1e-4": {"epochs": 4, "learning_rate": 1e-4},
    "2 epochs, 2e-4": {"epochs": 2, "learning_rate": 2e-4},
    "2 epochs, 4e-4": {"epochs": 2, "learning_rate": 4e-4},
}


def folder(name: str) -> str:
    return name.replace(" ", "").replace(",", "-")


def run(args: argparse.Namespace, name: str, clone: Path) -> dict[str, Any]:
    """One setting's fine-tuning and evaluation (kept in ``OUT/<setting>/row.json``)."""
    out = args.out / folder(name)
    row_path = out / "row.json"
    if row_path.exists():
        return json.loads(row_path.read_text())
    out.mkdir(parents=True, exist_ok=True)
    began = time.process_time()
    model = recipe.fine_tune(
        args.game, {}, clone, out, steps=args.steps, seed=args.seed, settings=SETTINGS[name], say=lambda _: None
    )
    cpu = time.process_time() - began
    players = make_raw(args.game).num_players  # the default count, the recipe's
    result = evaluate(
        args.game, [str(model), "heuristic"], args.games, num_players=players, seed=args.seed, workers=args.workers
    )
    paired = result.paired[0]
    row = {"setting": name, "steps": args.steps, "cpu": cpu, "games": args.games, **paired}
    row["score_name"], row["higher_is_better"] = result.score_name, result.higher_is_better
    write_text_atomic(row_path, json.dumps(row, indent=1) + "\n")
    return row


def block(rows: list[dict[str, Any]], command: str, finished: str) -> str:
    better = "more is better" if rows[0]["higher_is_better"] else "fewer is better"
    lines = [
        f"Run by `{command}`, {finished}.",
        "",
        f"| setting (over the recipe's FINE_TUNE) | learner decisions | fine-tuning CPU s | model − heuristic, "
        f"{rows[0]['score_name']} a game ({better}) [95%] | win rate [95%] | games |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['setting']} | {row['steps']:,} | {row['cpu']:.0f} | {row['score_diff']:+.2f} "
            f"[{row['score_diff_low']:+.2f}, {row['score_diff_high']:+.2f}] | {row['win_diff']:+.3f} "
            f"[{row['win_diff_low']:+.3f}, {row['win_diff_high']:+.3f}] | {row['games']:,} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="working directory (kept between reruns)")
    parser.add_argument("--game", default="pilipili_v0")
    parser.add_argument("--steps", type=int, default=3_000_000, help="learner decisions of each fine-tuning")
    parser.add_argument("--games", type=int, default=1000, help="games of each evaluation")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1, help="processes of the clone's labelling and evaluations")
    parser.add_argument("--write-docs", action="store_true", help=f"write the {BLOCK} block of docs/training.md")
    args = parser.parse_args()
    for name in ("steps", "games", "workers"):
        if getattr(args, name) < 1:
            sys.exit(f"--{name} must be at least 1, got {getattr(args, name)}")
    load = os.getloadavg()[0]
    clone = args.out / "clone" / "clone.npz"
    if not clone.exists():  # the recipe's first stage alone (one fine-tuning step, then the clone is kept)
        stage = args.out / "clone"
        recipe.strong(args.game, stage, steps=1, workers=args.workers, seed=args.seed, say=print)
        shutil.rmtree(stage / "fine-tune")
    rows = []
    for name in SETTINGS:
        row = run(args, name, clone)
        rows.append(row)
        print(f"{name:15s} {row['score_diff']:+.2f} [{row['score_diff_low']:+.2f}, {row['score_diff_high']:+.2f}] "
              f"win {row['win_diff']:+.3f}  {row['cpu']:.0f} CPU s", flush=True)  # fmt: skip
    if args.write_docs:
        command = "python benchmarks/fine_tune_settings.py " + " ".join(sys.argv[1:])
        replace_block(DOCS, *markers(BLOCK, "fine_tune_settings.py"), block(rows, command,
                      finished_on_this_machine(load)))  # fmt: skip
        print(f"wrote the {BLOCK} block of {DOCS}")


if __name__ == "__main__":
    main()
