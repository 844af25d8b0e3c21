"""The learning curves of ``strong`` recipe runs (tableenvs/training/recipe.py): the block of docs/training.md "The
strong recipe" (issue 28).

For each run directory given (what ``python -m tableenvs.training.recipe GAME DIR`` wrote): how well the clone copies
the heuristic (``clone.json``: labels, validation agreement) and the fine-tuning's mean episode return of the learner
against heuristic opponents, averaged over each ``--window`` steps of ``fine-tune/progress.jsonl`` (the first
window is the value network's, with the policy still the clone's). The heuristic's own mean return in the same seat
against the same opponents (a whole table of heuristics, ``--reference-games`` games, seed 0) is the row to beat.

Run: ``python benchmarks/recipe_curve.py --run pilipili_v0=runs/strong-pp [--run ...] [--window 100000]
[--write-docs]``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from common import replace_block
from search_vs_heuristic import versus_heuristic

import tableenvs
from tableenvs.evaluation import evaluate

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "training.md"
BEGIN = "<!-- recipe_curve: begin (written by benchmarks/recipe_curve.py --write-docs) -->"
END = "<!-- recipe_curve: end -->"


def reference(game: str, options: dict, games: int) -> float:
    """The heuristic's mean return per seat in a table of heuristics (what the learner's return is compared with)."""
    players = tableenvs.make_raw(game, **options).num_players
    result = evaluate(game, ["heuristic"] * players, games, options=options, seed=0, progress=False)
    return sum(row["reward_mean"] for row in result.policies) / players


def clone_vs_heuristic(game: str, options: dict, clone: Path, games: int) -> str:
    """The clone's paired score difference from the heuristic (half the seats each, duplicate deals), as text."""
    players = tableenvs.make_raw(game, **options).num_players
    result = evaluate(game, [str(clone), "heuristic"], games, num_players=players, options=options, progress=False)
    diff, _ = versus_heuristic(result.paired[0])
    better = "more is better" if result.higher_is_better else "fewer is better"
    return (
        f"{diff['score_diff']:+.2f} [{diff['score_diff_low']:+.2f}, {diff['score_diff_high']:+.2f}] "
        f"{result.score_name} a game ({better}; {result.games} games)"
    )


def curve(run: Path, window: int) -> list[tuple[int, float, int]]:
    """``(window end, mean return, games)`` per window of the fine-tuning's progress log."""
    rows = [json.loads(line) for line in (run / "fine-tune" / "progress.jsonl").read_text().splitlines()]
    windows: dict[int, list[tuple[float, int]]] = {}
    for row in rows:
        end = -(-row["steps"] // window) * window
        windows.setdefault(end, []).append((row["mean_return"] * row["games"], row["games"]))
    return [
        (end, sum(t for t, _ in parts) / sum(n for _, n in parts), sum(n for _, n in parts))
        for end, parts in sorted(windows.items())
    ]


def table(game: str, run: Path, window: int, reference_games: int) -> str:
    labels = json.loads((run / "labels" / "labels.json").read_text())
    clone = json.loads((run / "clone.json").read_text())
    best = min(clone["history"], key=lambda row: row["val_loss"])
    base = reference(game, labels["options"], reference_games)
    versus = clone_vs_heuristic(game, labels["options"], run / "clone.npz", reference_games)
    lines = [
        f"**{game}** ({tableenvs.make_raw(game, **labels['options']).num_players} players; `{run.name}`): the clone "
        f"agrees with the heuristic on {best['val_agree']:.1%} of held-out decisions ({clone['meta']['labels']:,} "
        f"labels); head to head, clone − heuristic is {versus}. A heuristic in the learner's seat averages "
        f"{base:+.3f} (mean return, {reference_games} games).",
        "",
        "| fine-tuning steps | learner's mean return | − heuristic's | games |",
        "|---|---|---|---|",
    ]
    for end, mean, games in curve(run, window):
        lines.append(f"| ≤ {end:,} | {mean:+.3f} | {mean - base:+.3f} | {games:,} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="append", required=True, help="GAME=DIR of a recipe run (repeat)")
    parser.add_argument("--window", type=int, default=100_000, help="steps per row (default 100,000)")
    parser.add_argument("--reference-games", type=int, default=400)
    parser.add_argument("--write-docs", action="store_true", help="rewrite docs/training.md's block")
    args = parser.parse_args()
    parts = []
    for item in args.run:
        game, _, directory = item.partition("=")
        parts.append(table(game, Path(directory), args.window, args.reference_games))
        print(parts[-1] + "\n", flush=True)
    if args.write_docs:
        commands = " ".join(f"--run {item}" for item in args.run)
        body = "\n\n".join(parts) + f"\n\nWritten by `python benchmarks/recipe_curve.py {commands} --write-docs`."
        replace_block(DOCS, BEGIN, END, body)
        print(f"wrote {DOCS}")


if __name__ == "__main__":
    main()
