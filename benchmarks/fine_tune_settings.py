"""Why the strong recipe's fine-tuning takes two epochs at learning rate 2e-4: the settings compared.

Where you are: a long benchmark, never run in CI; it writes the ``fine-tune-settings`` block of docs/lab/training.md.
:data:`tableenvs.training.recipe.FINE_TUNE` takes two PPO epochs per rollout at 2e-4; the update is most of a
sample's CPU cost, so fewer epochs are what keep the recipe at 5x the default job's samples per CPU-second. This
script makes one clone of the heuristic (the recipe's first stage, ``recipe.clone_heuristic_aec``), then fine-tunes it
once per setting (:data:`SETTINGS`, each over :data:`FINE_TUNE`, everything else the recipe's) for ``--steps`` learner
decisions, and plays each final model against the heuristic (``--games`` games, half the seats each, every seating,
duplicate deals, :func:`tableenvs.evaluation.evaluate`): the table gives the paired score and win-rate differences
and the CPU seconds of each fine-tuning (``time.process_time`` of this process; torch runs one thread). With
``--full SETTING`` (repeatable) a setting also gets a whole run from the same clone, ``--full-steps`` learner
decisions in ``--full-seats`` seats (default 10,000,000 in 3 seats: how Pili Pili's shipped model was made),
evaluated over ``--full-games`` games.

    python benchmarks/fine_tune_settings.py --out runs/settings [--game pilipili_v0] [--steps 3000000]
        [--games 1000] [--seed 0] [--full "2 epochs, 2e-4" ...] [--write-docs]

A rerun with the same ``--out`` keeps what is done (the clone, finished fine-tunings, their evaluations).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from common import finished_on_this_machine, markers, write_block
from recipe_reproduce import same_as_shipped

from tableenvs.core.registry import make_raw
from tableenvs.evaluation import evaluate
from tableenvs.paths import write_text_atomic
from tableenvs.training import recipe

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


def run_dir(args: argparse.Namespace, name: str, seats: int | None) -> Path:
    """Where a setting's fine-tuning (``seats``: a whole run's learner seats; None: a short run) keeps its files."""
    return args.out / (folder(name) + ("" if seats is None else f"-full-{seats}seats"))


def run(
    args: argparse.Namespace, name: str, clone: Path, steps: int, games: int, seats: int | None = None
) -> dict[str, Any]:
    """One setting's fine-tuning (``seats`` learner seats, default the recipe's) and evaluation (kept in
    ``run_dir(...)/row.json``)."""
    out = run_dir(args, name, seats)
    row_path = out / "row.json"
    if row_path.exists():
        return json.loads(row_path.read_text())
    out.mkdir(parents=True, exist_ok=True)
    began = time.process_time()
    model = recipe.fine_tune(
        args.game, {}, clone, out, steps=steps, seed=args.seed, learner_seats=seats, settings=SETTINGS[name],
        say=lambda _: None,
    )  # fmt: skip
    cpu = time.process_time() - began
    players = make_raw(args.game).num_players  # the default count, the recipe's
    result = evaluate(
        args.game, [str(model), "heuristic"], games, num_players=players, seed=args.seed, workers=args.workers
    )
    paired = result.paired[0]
    row = {"setting": name, "steps": steps, "seats": seats or players - 1, "players": players, "cpu": cpu}
    row.update(games=games, **paired)
    row["score_name"], row["higher_is_better"] = result.score_name, result.higher_is_better
    write_text_atomic(row_path, json.dumps(row, indent=1) + "\n")
    return row


def block(rows: list[dict[str, Any]], command: str, finished: str) -> str:
    better = "more is better" if rows[0]["higher_is_better"] else "fewer is better"
    lines = [
        f"Run by `{command}`, {finished}.",
        "",
        f"| setting (over the recipe's FINE_TUNE) | learner seats | learner decisions | fine-tuning CPU s | model − "
        f"heuristic, {rows[0]['score_name']} a game ({better}) [95%] | win rate [95%] | games |",
        "|---|---|---|---|---|---|---|",
    ]
    same = [row["setting"] for row in rows if row.get("as_shipped", "").startswith("yes")]
    for row in rows:
        lines.append(
            f"| {row['setting']} | {row['seats']} of {row['players']} | {row['steps']:,} | {row['cpu']:.0f} | "
            f"{row['score_diff']:+.2f} "
            f"[{row['score_diff_low']:+.2f}, {row['score_diff_high']:+.2f}] | {row['win_diff']:+.3f} "
            f"[{row['win_diff_low']:+.3f}, {row['win_diff_high']:+.3f}] | {row['games']:,} |"
        )
    if same:
        lines += ["", f"The whole run of {', '.join(same)} made the shipped model's arrays, array for array."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="working directory (kept between reruns)")
    parser.add_argument("--game", default="pilipili_v0")
    parser.add_argument("--steps", type=int, default=3_000_000, help="learner decisions of each fine-tuning")
    parser.add_argument("--games", type=int, default=1000, help="games of each evaluation")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1, help="processes of the clone's labelling and evaluations")
    parser.add_argument("--full", action="append", choices=list(SETTINGS), help="also a whole run of this setting")
    parser.add_argument("--full-steps", type=int, default=10_000_000, help="learner decisions of a whole run")
    parser.add_argument("--full-seats", type=int, default=3, help="learner seats of a whole run (Pili Pili's model)")
    parser.add_argument("--full-games", type=int, default=2000, help="games of a whole run's evaluation")
    parser.add_argument("--write-docs", action="store_true", help=f"write the {BLOCK} block of docs/lab/training.md")
    args = parser.parse_args()
    for name in ("steps", "games", "workers", "full_steps", "full_seats", "full_games"):
        if getattr(args, name) < 1:
            sys.exit(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    load = os.getloadavg()[0]
    clone = recipe.clone_heuristic_aec(args.game, args.out / "clone", workers=args.workers, seed=args.seed)
    rows = []
    runs = [(name, args.steps, args.games, None) for name in SETTINGS]
    runs += [(name, args.full_steps, args.full_games, args.full_seats) for name in args.full or []]
    for name, steps, games, seats in runs:
        row = run(args, name, clone, steps, games, seats)
        if seats is not None:  # a whole run: does it make the shipped model (recipe_reproduce's check)?
            row = {**row, "as_shipped": same_as_shipped(args.game, run_dir(args, name, seats) / "model.npz")}
        rows.append(row)
        print(f"{name:15s} {row['score_diff']:+.2f} [{row['score_diff_low']:+.2f}, {row['score_diff_high']:+.2f}] "
              f"win {row['win_diff']:+.3f}  {row['cpu']:.0f} CPU s", flush=True)  # fmt: skip
    if args.write_docs:
        command = "python benchmarks/fine_tune_settings.py " + shlex.join(sys.argv[1:])
        docs = write_block(*markers(BLOCK, "fine_tune_settings.py"), block(rows, command,
                      finished_on_this_machine(load)))  # fmt: skip
        print(f"wrote the {BLOCK} block of {docs}")


if __name__ == "__main__":
    main()
