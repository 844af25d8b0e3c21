"""Clone a labeller (e.g. the game's default ``search``) into a numpy model that reads the observation plus named
derived inputs; written into docs/lab/training.md. The shipped Rummikub model came from this script.

Where you are: a long benchmark, never run in CI. The steps, each skipped when its output exists (a rerun in the
same ``--out`` continues):

1. label ``--label-games`` games with every seat playing ``--labeller`` (:func:`tableenvs.training.distill.label_games`;
   deals ``--label-seed`` + index, apart from the evaluation's), keeping each decision with a choice;
2. append the derived inputs ``--features`` (a name of :mod:`tableenvs.policies.input_features`, computed from the
   seat's observation and mask only) to every labelled observation, and fit a ReLU MLP to the labeller's choices
   (one-hot targets); export it with its header naming the features (steps 1 and 2 are the ``search-clone`` recipe,
   :func:`tableenvs.training.recipe.search_clone`, writing ``model.npz``);
3. play it against the heuristic head to head (half the seats each, every seating, duplicate deals,
   :func:`tableenvs.evaluation.evaluate`; the model is a ``.npz`` path, played by ``NumpyPolicy``).

The block written into docs/lab/training.md gives the command, the clone's agreement with its labeller on held-out
games and the head-to-head row. ``benchmarks/studies/llama_features.py`` is the Llama Party variant with PPO
fine-tuning.

    python benchmarks/studies/feature_clone.py --game rummikub_v0 --players 4 --features rummikub_turn_plans_v1 \\
        --labeller search:mode=turns:sims=40 --out runs/rk-search --label-games 600 --games 2000 --block NAME
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py, search_vs_heuristic.py

from common import finished_on_this_machine, markers, write_block
from search_vs_heuristic import cells, versus_heuristic

from tableenvs.evaluation import evaluate
from tableenvs.training import recipe


def clone(args: argparse.Namespace, options: dict[str, Any]) -> Path:
    """Steps 1 and 2: :func:`tableenvs.training.recipe.search_clone` into ``args.out`` (made once)."""
    return recipe.search_clone(
        args.game, args.out, options=options, label_games=args.label_games, labeller=args.labeller,
        features=args.features, epochs=args.epochs, workers=args.workers, seed=args.label_seed,
    )  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", required=True, help="e.g. rummikub_v0")
    parser.add_argument("--players", type=int, required=True)
    parser.add_argument("--features", required=True, help="derived inputs (tableenvs.policies.input_features)")
    parser.add_argument("--labeller", default="search", help="the policy whose choices are cloned")
    parser.add_argument("--out", type=Path, required=True, help="run directory (a rerun continues in it)")
    parser.add_argument("--label-games", type=int, default=600)
    parser.add_argument("--label-seed", type=int, default=1_000_000, help="first labelled deal's seed")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--games", type=int, default=2000, help="head-to-head games against the heuristic")
    parser.add_argument("--workers", type=int, default=2, help="labelling and playing processes, fitting threads")
    parser.add_argument("--block", required=True, help="the docs/lab/training.md block to write")
    parser.add_argument("--no-write", action="store_true", help="print the block, leave docs/lab/training.md alone")
    args = parser.parse_args()
    began, load = time.perf_counter(), os.getloadavg()[0]
    options = {"num_players": args.players}
    model = clone(args, options)
    record = json.loads((args.out / "clone.json").read_text())
    best = min(record["history"], key=lambda row: row["val_loss"])
    result = evaluate(
        args.game, [str(model), "heuristic"], args.games, num_players=args.players, seed=0, workers=args.workers,
        progress=False,
    )  # fmt: skip
    row = {**versus_heuristic(result.paired[0])[0], **versus_heuristic(result.paired[0])[1]}
    row.update(score_name=result.score_name, higher_is_better=result.higher_is_better)
    score, win = cells(row)
    text = "\n".join(
        [
            f"Run by `python benchmarks/studies/feature_clone.py --game {args.game} --players {args.players} "
            f"--features {args.features} --labeller {args.labeller} --out {args.out} --label-games {args.label_games} "
            f"--label-seed {args.label_seed} --epochs {args.epochs} --games {args.games} --block {args.block}`, "
            f"{finished_on_this_machine(load)}, {(time.perf_counter() - began) / 60:.0f} min (a rerun in the same "
            "directory skips the finished steps).",
            "",
            f"The clone agrees with its labeller (`{args.labeller}`) on {best['val_agree']:.1%} of held-out decisions "
            f"({record['meta']['labels']:,} labels).",
            "",
            f"| model − heuristic, {args.players} players, duplicate deals | games | score [95%] | win rate [95%] |",
            "|---|---|---|---|",
            f"| clone | {result.games:,} | {score} | {win} |",
        ]
    )
    print(text)
    if not args.no_write:
        write_block(*markers(args.block, "studies/feature_clone.py"), text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
