"""Trained models against the heuristic, head to head, per game: the table of docs/agents.md "Trained against the
heuristic".

For each game chosen: :func:`tableenvs.evaluation.evaluate` of ``heuristic`` against a model (``trained``, the
model shipped in the package, or a ``.npz`` path) with half the seats each, every seating, duplicate deals, as
``search_vs_heuristic.py`` does (its ``run`` plays and times the rows), at the game's default player count.
Rows are saved as JSON under ``--out`` (default ``benchmarks/results/trained_vs_heuristic``, committed so that the
docs block can be rewritten on any machine); ``--write-docs`` rewrites the marked block of docs/agents.md from every
saved row, each with the command that made it.

Run: ``python benchmarks/trained_vs_heuristic.py --games 2000 [--game pilipili_v0 ...] [--spec trained]
[--workers 2] [--seed 0] [--write-docs]``; ``--docs-only`` rewrites the docs from saved rows.
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

import search_vs_heuristic

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "agents.md"
BEGIN = "<!-- trained_vs_heuristic: begin (written by benchmarks/trained_vs_heuristic.py --write-docs) -->"
END = "<!-- trained_vs_heuristic: end -->"
#: The default player count and options of each game (what the recipe trains on: a model is refused elsewhere).
GAMES = {
    "pilipili_v0": {"players": 5, "options": {}},
    "llama_party_v0": {"players": 4, "options": {}},
    "rummikub_v0": {"players": 4, "options": {}},
}


def table(rows: list[dict]) -> str:
    """The markdown table of the saved rows (model - heuristic, per game, with the commands)."""
    lines = [
        "| game | model | games (blocks) | score: model − heuristic [95%] | win rate: model − heuristic [95%] | "
        "µs / decision mean (p90) |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        score, win = search_vs_heuristic.cells(row)
        timing = row["timing"]
        us = f"{1000 * timing['mean_ms']:.0f} ({1000 * timing['p90_ms']:.0f})" if timing["decisions"] else "-"
        lines.append(
            f"| {row['game']} {row['players']}p | {search_vs_heuristic.shown(row, row['spec'])} | "
            f"{row['games']} ({row['blocks']}) | "
            f"{score} | {win} | {us} |"
        )
    lines += ["", "Commands (one per row, in order), with the date each finished:", ""]
    lines += [f"* `{row['command']}` ({row['date']}; `{row['resolved']}`)" for row in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", action="append", choices=sorted(GAMES), help="a game (repeat; default all)")
    parser.add_argument("--games", type=int, default=2000, help="games per row (rounded up to whole blocks)")
    parser.add_argument("--spec", default="trained", help="the model: 'trained' (shipped) or a .npz path")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timing-games", type=int, default=2, help="games of the timing pass (0: none)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "trained_vs_heuristic")
    parser.add_argument("--write-docs", action="store_true", help="rewrite docs/agents.md's block from saved rows")
    parser.add_argument("--docs-only", action="store_true", help="only rewrite the docs from the saved rows")
    args = parser.parse_args()
    if not args.docs_only:
        print(f"# {platform.python_version()} on {platform.machine()}, seed {args.seed}")
        for name in args.game or GAMES:
            search_vs_heuristic.GAMES[name] = GAMES[name]
            args.players = GAMES[name]["players"]
            row = search_vs_heuristic.run(name, args.spec, args)
            row["command"] = f"python benchmarks/trained_vs_heuristic.py --game {name} --games {args.games}"
            row["command"] += f" --seed {args.seed}" + (f" --spec {args.spec}" if args.spec != "trained" else "")
            args.out.mkdir(parents=True, exist_ok=True)
            slug = Path(row["spec"]).stem
            (args.out / f"{name}__{slug}__{row['games']}__s{args.seed}.json").write_text(json.dumps(row, indent=1))
            print(table([row]), flush=True)
    if args.write_docs or args.docs_only:
        search_vs_heuristic.write_docs(args.out, BEGIN, END, table)


if __name__ == "__main__":
    search_vs_heuristic.run_script(main, __file__)
