"""The learning curves of ``strong`` recipe runs (tableenvs/training/recipe.py): the block of docs/training.md "The
strong recipe".

For each run directory given (what ``tableenvs train GAME --recipe strong --out DIR`` wrote): how well the clone
copies the heuristic (``clone.json``: labels, validation agreement; the clone head to head against the heuristic),
then one row per model the fine-tuning exported (``fine-tune/model-<steps>.npz``): the learner's mean return minus
the heuristic's at the same tables during training (``fine-tune/progress.jsonl``, the updates since the previous
export), and the exported model head to head against the heuristic (half the seats each, every seating, duplicate
deals, ``--games`` games, seed 0): the paired score and win-rate differences with 95% intervals.

Run: ``python benchmarks/recipe_curve.py --run pilipili_v0=runs/strong-pp [--run ...] [--games 1000]
[--write-docs]``.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from common import replace_block
from search_vs_heuristic import cells, versus_heuristic

import tableenvs
from tableenvs.evaluation import evaluate

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "training.md"
BEGIN = "<!-- recipe_curve: begin (written by benchmarks/recipe_curve.py --write-docs) -->"
END = "<!-- recipe_curve: end -->"


def versus(game: str, options: dict, model: Path, games: int) -> dict:
    """``model`` head to head against the heuristic (half the seats each, duplicate deals, seed 0): the score and
    win-rate differences, model − heuristic, with their intervals (the keys ``search_vs_heuristic.cells`` reads)."""
    players = tableenvs.make_raw(game, **options).num_players
    result = evaluate(game, [str(model), "heuristic"], games, num_players=players, options=options, progress=False)
    diff, win = versus_heuristic(result.paired[0])
    return {
        **diff,
        **win,
        "score_name": result.score_name,
        "higher_is_better": result.higher_is_better,
        "games": result.games,
    }


def exports(run: Path) -> list[tuple[int, Path]]:
    """The fine-tuning's exported models, ``(steps, path)``, in order."""
    found = [
        (int(m.group(1)), p) for p in (run / "fine-tune").glob("model-*.npz") if (m := re.search(r"-(\d+)", p.name))
    ]
    return sorted(found)


def in_training(run: Path, after: int, upto: int) -> str:
    """The learner's mean return minus the heuristic's at the same tables over the updates in ``(after, upto]``."""
    rows = [json.loads(line) for line in (run / "fine-tune" / "progress.jsonl").read_text().splitlines()]
    rows = [r for r in rows if after < r["steps"] <= upto and r.get("opponent_return") is not None]
    if not rows:
        return "-"
    games = sum(r["games"] for r in rows)
    return f"{sum((r['mean_return'] - r['opponent_return']) * r['games'] for r in rows) / games:+.3f}"


def table(game: str, run: Path, games: int) -> str:
    labels = json.loads((run / "labels" / "labels.json").read_text())
    options = labels["options"]
    clone = json.loads((run / "clone.json").read_text())
    best = min(clone["history"], key=lambda row: row["val_loss"])
    score, win = cells(versus(game, options, run / "clone.npz", games))
    lines = [
        f"**{game}** ({tableenvs.make_raw(game, **options).num_players} players; `{run.name}`): the clone agrees with "
        f"the heuristic on {best['val_agree']:.1%} of held-out decisions ({clone['meta']['labels']:,} labels); head "
        f"to head, clone − heuristic is {score}, win rate {win} ({games} games).",
        "",
        "| fine-tuning steps | in training: learner − heuristic, same tables (mean return, more is better) "
        "| head to head: model − heuristic [95%] "
        "| win rate [95%] |",
        "|---|---|---|---|",
    ]
    previous = 0
    for steps, model in exports(run):
        score, win = cells(versus(game, options, model, games))
        lines.append(f"| {steps:,} | {in_training(run, previous, steps)} | {score} | {win} |")
        previous = steps
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="append", required=True, help="GAME=DIR of a recipe run (repeat)")
    parser.add_argument("--games", type=int, default=1000, help="head-to-head games per model (default 1000)")
    parser.add_argument("--write-docs", action="store_true", help="rewrite docs/training.md's block")
    args = parser.parse_args()
    parts = []
    for item in args.run:
        game, _, directory = item.partition("=")
        parts.append(table(game, Path(directory), args.games))
        print(parts[-1] + "\n", flush=True)
    if args.write_docs:
        commands = " ".join(f"--run {item}" for item in args.run) + f" --games {args.games}"
        body = "\n\n".join(parts) + f"\n\nWritten by `python benchmarks/recipe_curve.py {commands} --write-docs`."
        replace_block(DOCS, BEGIN, END, body)
        print(f"wrote {DOCS}")


if __name__ == "__main__":
    main()
