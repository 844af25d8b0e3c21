"""Experiment: does the strong recipe beat the Llama Party heuristic when the network also sees the
heuristic's value of each card? Written into docs/lab/training.md. (The inputs are
:class:`tableenvs.llama_party.features.CardValues`; the shipped Llama Party model came from this script.)

Where you are: a long benchmark, never run in CI. The recipe's clone of the Llama Party heuristic agrees with it on
only about three decisions in four, and its fine-tuning stays below the heuristic (docs/lab/training.md). A player
knows what the heuristic computes (the expected points of the hand left by each pick, over the goals that are
known or could be), so this run appends, to each observation, for every card id ``c``:

* ``(value(c) - best) / 10``, clipped to [-5, 0], for a legal card (``HeuristicPolicy.values``), -5 otherwise;
* 1 if ``c`` is the heuristic's pick, else 0.

Then the recipe's three steps with those inputs (:mod:`tableenvs.training.recipe`): labels of heuristic games,
a clone (:func:`tableenvs.training.distill.fit`), MaskablePPO fine-tuning against heuristic opponents
(:func:`tableenvs.training.recipe.fine_tune_sb3` with ``features``), and the final model against the heuristic head to
head (half the seats each, every seating, duplicate deals) with :func:`tableenvs.evaluation.evaluate`, the model
played by a numpy forward pass on the observation and its features. The block written into docs/lab/training.md gives
the clone's agreement, the curve and the head-to-head row. The features are not part of any shipped layout: a model
made here plays only through this script's policy.

    python benchmarks/studies/llama_features.py --out runs/llama-features [--label-games 600] [--steps 600000]
        [--games 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py, search_vs_heuristic.py

import numpy as np
from common import finished_on_this_machine, write_block
from common import markers as common_markers
from search_vs_heuristic import cells, versus_heuristic

import tableenvs
from tableenvs.evaluation import evaluate
from tableenvs.llama_party.features import CardValues
from tableenvs.policies.numpy_policy import NumpyPolicy, load_numpy_policy
from tableenvs.training import distill, recipe

GAME = "llama_party_v0"
OPTIONS = {"num_players": 4}


def markers(block: str) -> tuple[str, str]:
    """The docs/lab/training.md markers of a block of this script's runs (one block per kind of run)."""
    return common_markers(block, "studies/llama_features.py")


class FeaturePolicy:
    """A numpy model fitted on observation + :class:`CardValues`, played on observations of the plain game."""

    name = "card-values model"

    def __init__(self, path: Path, features: CardValues) -> None:
        self.model = NumpyPolicy(load_numpy_policy(path))
        self.features = features

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        extra = self.features(observation, action_mask)
        return self.model.act(np.concatenate([observation, extra]), action_mask, rng)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="run directory (a rerun continues in it)")
    parser.add_argument("--label-games", type=int, default=600)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--steps", type=int, default=600_000, help="fine-tuning decisions (0: the clone only)")
    parser.add_argument("--games", type=int, default=2000, help="head-to-head games against the heuristic")
    parser.add_argument("--workers", type=int, default=2, help="labelling processes and fitting threads")
    parser.add_argument("--no-choice", action="store_true", help="leave the heuristic's pick out of the inputs")
    parser.add_argument(
        "--labeller", default="heuristic", help="the policy whose choices are cloned (e.g. search; default heuristic)"
    )
    parser.add_argument(
        "--lr", type=float, default=recipe.FINE_TUNE_SB3["learning_rate"], help="fine-tuning learning rate"
    )
    parser.add_argument("--ent-coef", type=float, default=recipe.FINE_TUNE_SB3["ent_coef"], help="entropy bonus")
    parser.add_argument("--clip", type=float, default=recipe.FINE_TUNE_SB3["clip_range"], help="PPO clip range")
    parser.add_argument("--block", default="llama-features", help="the docs/lab/training.md block to write")
    parser.add_argument("--no-write", action="store_true", help="print the block, leave docs/lab/training.md alone")
    args = parser.parse_args()
    began, load = time.perf_counter(), os.getloadavg()[0]
    features = CardValues(tableenvs.make_raw(GAME, **OPTIONS), choice=not args.no_choice)
    clone = args.out / "clone.npz"
    if not clone.exists():
        distill.label_games(
            GAME, OPTIONS, games=args.label_games, out_dir=args.out / "labels", seed=0, search_spec=args.labeller,
            workers=args.workers,
        )  # fmt: skip
        data = distill.with_features(distill.read_shards(args.out / "labels"), features)
        data["target"] = np.eye(data["target"].shape[1], dtype=np.float32)[data["action"]]  # the choice made
        print(f"cloning from {len(data['action'])} labels, {data['observation'].shape[1]} inputs", flush=True)
        result = distill.fit(data, hidden=(256, 256), epochs=args.epochs, batch=1024, seed=0, threads=args.workers)
        meta = {"experiment": "llama_features: observation + card values", "labels": int(len(data["action"]))}
        distill.export(result, clone, GAME, OPTIONS, meta)
        (args.out / "clone.json").write_text(json.dumps({"meta": meta, "history": result.history}, indent=2) + "\n")
    record = json.loads((args.out / "clone.json").read_text())
    best = min(record["history"], key=lambda row: row["val_loss"])
    models = [("clone", clone)]
    if args.steps > 0:
        settings = {"learning_rate": args.lr, "ent_coef": args.ent_coef, "clip_range": args.clip}
        final = recipe.fine_tune_sb3(
            GAME, OPTIONS, clone, args.out / "fine-tune", steps=args.steps, features=features, settings=settings
        )
        models.append(("fine-tuned", final))
    rows = {}
    for name, path in models:
        policy = FeaturePolicy(path, features)
        result = evaluate(GAME, [policy, "heuristic"], args.games, num_players=4, seed=0, progress=False)
        paired = {**versus_heuristic(result.paired[0])[0], **versus_heuristic(result.paired[0])[1]}
        rows[name] = {**paired, "score_name": result.score_name, "higher_is_better": True, "games": result.games}
    base = recipe_reference() if args.steps > 0 else 0.0
    lines = [
        f"Run by `python benchmarks/studies/llama_features.py --out {args.out} --label-games {args.label_games} "
        f"--epochs {args.epochs} --steps {args.steps} --games {args.games}"
        + (" --no-choice" if args.no_choice else "")
        + (f" --labeller {args.labeller}" if args.labeller != "heuristic" else "")
        + f" --lr {args.lr:g} --ent-coef {args.ent_coef:g} --clip {args.clip:g}`, {finished_on_this_machine(load)}, "
        f"{(time.perf_counter() - began) / 60:.0f} min (a rerun in the same directory skips the finished steps).",
        "",
        f"The clone agrees with its labeller (`{args.labeller}`) on {best['val_agree']:.1%} of held-out decisions "
        f"({record['meta']['labels']:,} labels).",
        "",
        "| model − heuristic, 4 players, duplicate deals | games | points [95%] | win rate [95%] |",
        "|---|---|---|---|",
    ]
    for name, row in rows.items():
        score, win = cells(row)
        lines.append(f"| {name} | {row['games']:,} | {score} | {win} |")
    if args.steps > 0:
        lines += ["", "| fine-tuning steps | learner's mean return | − heuristic's |", "|---|---|---|"]
        for end, mean, _ in curve(args.out, 100_000):
            lines.append(f"| ≤ {end:,} | {mean:+.3f} | {mean - base:+.3f} |")
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        write_block(*markers(args.block), text)
    return 0


def recipe_reference() -> float:
    """The heuristic's mean return per seat in a table of heuristics (what the learner's return is compared with)."""
    result = evaluate(GAME, ["heuristic"] * 4, 400, options=OPTIONS, seed=0, progress=False)
    return sum(row["reward_mean"] for row in result.policies) / 4


def curve(run: Path, window: int) -> list[tuple[int, float, int]]:
    """``(window end, mean return, games)`` per window of the SB3 fine-tuning's progress log."""
    rows = [json.loads(line) for line in (run / "fine-tune" / "progress.jsonl").read_text().splitlines()]
    windows: dict[int, list[tuple[float, int]]] = {}
    for row in rows:
        end = -(-row["steps"] // window) * window
        windows.setdefault(end, []).append((row["mean_return"] * row["games"], row["games"]))
    return [
        (end, sum(t for t, _ in parts) / sum(n for _, n in parts), sum(n for _, n in parts))
        for end, parts in sorted(windows.items())
    ]


if __name__ == "__main__":
    sys.exit(main())
