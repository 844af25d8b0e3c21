"""The steps of an advantage-iteration run, measured: the table of docs/training.md "Advantage iteration".

For a run directory of :func:`tableenvs.training.advantage_iteration.advantage_iteration` (``step-1``, ``step-2``,
... each with ``model.npz``, ``fit.json`` and ``labels/labels.json``), one row per step: the labelled decisions, the
kept epoch's held-out figures from ``fit.json`` (how often the network chooses as its start, its gain a seat and
game over the start's choices on the held-out games), and two batched tournaments (:func:`tableenvs.evaluation.
evaluate`, duplicate deals, every seating, paired 95% intervals): the step's model against the heuristic (half the
seats each) and head to head against its start (the step before, or the run's start). The rows are saved in
``benchmarks/results/advantage/<game>-<N>p.json`` (or ``<game>-<N>p-<name>.json`` with ``--name``, for a run that
continues another from its last model); ``--write-docs`` rewrites the block of docs/training.md from every
saved file, each with its command.

Run: ``python benchmarks/advantage_steps.py --game llama_party_v0 --players 4 --run runs/adv4 [--games 4000]
[--seed 21] [--name NAME] [--write-docs]``; ``--docs-only`` rewrites the docs from the saved rows. About a second a
tournament in Llama Party (its batched engine).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import time
from pathlib import Path

from common import CLOCK, replace_block
from search_vs_heuristic import versus_heuristic

from tableenvs.evaluation import evaluate

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "advantage"
DOCS = ROOT / "docs" / "training.md"
BEGIN = "<!-- advantage: begin (written by benchmarks/advantage_steps.py --write-docs) -->"
END = "<!-- advantage: end -->"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def versus(game: str, players: int, model: Path, other: str, games: int, seed: int) -> dict:
    """``model`` − ``other`` over ``games`` games (half the seats each): score and win-rate differences, 95%."""
    result = evaluate(game, [f"trained:path={model}", other], games, num_players=players, seed=seed)
    diff, win = versus_heuristic(result.paired[0], other)
    return {**diff, **win, "games": result.games, "blocks": result.blocks, "score_name": result.score_name}


def measure(game: str, players: int, run: Path, games: int, seed: int, name: str | None = None) -> dict:
    steps = sorted((p for p in run.glob("step-*") if (p / "model.npz").exists()), key=lambda p: int(p.name[5:]))
    if not steps:
        raise SystemExit(f"{run}: no step-K/model.npz")
    start = Path(json.loads((steps[0] / "labels" / "labels.json").read_text())["model"])
    rows = []
    began = CLOCK()
    for step in steps:
        fit = json.loads((step / "fit.json").read_text())
        kept = max(fit["history"], key=lambda row: row["val_gain"])
        model = step / "model.npz"
        previous = Path(json.loads((step / "labels" / "labels.json").read_text())["model"])
        rows.append({
            "step": int(step.name[5:]),
            "model": digest(model),
            "start": digest(previous),
            "labels": fit["meta"]["labels"],
            "label_games": fit["meta"]["label_games"],
            "bonus": fit["meta"]["bonus"],
            "objective": fit["meta"].get("objective", "score"),
            "epoch": kept["epoch"],
            "agree": kept["val_agree"],
            "gain_per_seat_game": kept["val_gain_per_seat_game"],
            "vs_heuristic": versus(game, players, model, "heuristic", games, seed),
            "vs_start": versus(game, players, model, f"trained:path={previous}", games, seed),
        })  # fmt: skip
        print(f"step {rows[-1]['step']}: {rows[-1]}", flush=True)
    start_row = versus(game, players, start, "heuristic", games, seed)
    return {
        "game": game,
        "players": players,
        "run": str(run),
        "start": [start.name, digest(start)],
        "start_vs_heuristic": start_row,
        "rows": rows,
        "name": name,
        "command": f"python benchmarks/advantage_steps.py --game {game} --players {players} --run {run} "
        f"--games {games} --seed {seed}" + (f" --name {name}" if name else ""),
        "cpu_seconds": round(CLOCK() - began, 1),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load": round(os.getloadavg()[0], 1),
    }


def interval(row: dict) -> str:
    return f"{row['score_diff']:+.2f} [{row['score_diff_low']:+.2f}, {row['score_diff_high']:+.2f}]"


def settings(rows: list[dict]) -> str:
    """The steps' bonus and objective, said once when every step shares them."""
    pairs = {(row["bonus"], row.get("objective", "score")) for row in rows}
    if len(pairs) != 1:
        return "steps' bonus and objective: " + ", ".join(f"{b:g} {o}" for b, o in sorted(pairs))
    bonus, objective = pairs.pop()
    return f"bonus {bonus:g}, objective `{objective}`"


def table(saved: dict) -> str:
    first = saved["start_vs_heuristic"]
    lines = [
        f"**{saved['game']}, {saved['players']} players**, from `{saved['start'][0]}` ({saved['start'][1]}; against "
        f"the heuristic {interval(first)} {first['score_name']} a game over {first['games']} games); "
        f"{settings(saved['rows'])}",
        "",
        "| step | model | labelled decisions (games) | kept epoch: chooses as its start, held-out gain a seat and game "
        f"| against the heuristic, {first['games']} games [95%] | head to head with its start [95%] |",
        "|---|---|---|---|---|---|",
    ]
    for row in saved["rows"]:
        lines.append(
            f"| {row['step']} | {row['model']} | {row['labels']:,} ({row['label_games']:,}) | epoch {row['epoch']}: "
            f"{row['agree']:.1%}, {row['gain_per_seat_game']:+.2f} | {interval(row['vs_heuristic'])} "
            f"| {interval(row['vs_start'])} |"
        )
    lines += ["", f"`{saved['command']}` ({saved['date']}; {saved['cpu_seconds']:.0f} CPU s, load {saved['load']})"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game")
    parser.add_argument("--players", type=int)
    parser.add_argument("--run", type=Path, help="the run directory (its step-K subdirectories)")
    parser.add_argument("--games", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument(
        "--name", help="save as <game>-<N>p-NAME.json, beside the count's first run (letters, digits, -)"
    )
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument("--docs-only", action="store_true")
    args = parser.parse_args()
    if not args.docs_only:
        if args.game is None or args.players is None or args.run is None:
            parser.error("--game, --players and --run are required (or --docs-only)")
        if args.games < 2:
            parser.error("--games must be at least 2")
        if args.name is not None and not re.fullmatch(r"[A-Za-z0-9-]+", args.name):
            parser.error(f"--name {args.name!r}: letters, digits and '-' only")
        saved = measure(args.game, args.players, args.run, args.games, args.seed, args.name)
        RESULTS.mkdir(parents=True, exist_ok=True)
        suffix = f"-{args.name}" if args.name else ""
        (RESULTS / f"{args.game}-{args.players}p{suffix}.json").write_text(json.dumps(saved, indent=2) + "\n")
        print(table(saved))
    if args.write_docs or args.docs_only:
        saved_runs = [json.loads(p.read_text()) for p in sorted(RESULTS.glob("*.json"))]
        saved_runs.sort(key=lambda s: (s["game"], s["players"], s.get("name") or ""))
        replace_block(DOCS, BEGIN, END, "\n\n".join(table(s) for s in saved_runs))
        print(f"wrote {DOCS}")


if __name__ == "__main__":
    main()
