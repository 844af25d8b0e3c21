"""The ladder of docs/agents.md: per game, each rung a head-to-head of one built-in agent against the one below it.

The rungs are random < heuristic < search and random < heuristic < trained (where a model is shipped), and trained
against search. Each rung is a head-to-head table (half the seats each, every seating, duplicate deals: one deal per
block, paired differences over the blocks, 95% intervals; :func:`tableenvs.evaluation.evaluate`) with the decision
times of the upper agent (CPU time of one process, in games with one such seat among heuristics). Its rows come from
three scripts, each saving its rows as JSON under ``benchmarks/results/``: this one (``ladder/``: the rungs that
are neither of the others), ``search_vs_heuristic.py`` (``search_vs_heuristic/``) and ``trained_vs_heuristic.py``
(``trained_vs_heuristic/``, the shipped model's rows only). ``--write-docs`` rewrites the ladder block of
docs/agents.md from all of them, each row with the command that made it. A run keeps its finished games and the
same command resumes it (``search_vs_heuristic.py``'s journal).

Run: ``python benchmarks/ladder.py --game pilipili_v0 --rung random,heuristic [--games 2000] [--players 5]
[--default-options] [--workers 1] [--seed 0] [--timing-games 2] [--write-docs]``; ``--docs-only`` rewrites the docs
from saved rows.
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

import search_vs_heuristic
from common import replace_block

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
#: The field tables' saved rows (benchmarks/field.py): a game and player count there has no trained rows here.
FIELD = RESULTS / "field"
BEGIN = "<!-- ladder: begin (written by benchmarks/ladder.py --write-docs) -->"
END = "<!-- ladder: end -->"
#: The players of each game's rungs: the default player count (Pili Pili 5, the shipped model's), Rummikub 2 as in
#: its first rows, with ``max_turns=200`` (``--players 4`` gives the default count's rung; no 4-player game of the
#: random rung reached 200 turns: each of its 2,000 had a winner).
GAMES = {
    "pilipili_v0": {"players": 5, "options": {}},
    "llama_party_v0": {"players": 4, "options": {}},
    "rummikub_v0": {"players": 2, "options": {"max_turns": 200}},
}


def rows() -> list[dict]:
    """Every saved rung: this script's, the search rows, and the shipped model's rows, by game then file name; the
    head-to-heads of ``trained`` that a field table (``field.py``) of the game and player count holds on as many games
    or more are left out."""
    found = []
    covered = {  # (game, players, other agent): games of each head-to-head row of a field table (benchmarks/field.py)
        (saved["game"], saved["players"], row["other"]): row["games"]
        for saved in map(json.loads, map(Path.read_text, FIELD.glob("*.json")))
        for name, row in saved["rows"].items()
        if not name.startswith("company")
    }
    for folder in ("ladder", "search_vs_heuristic", "trained_vs_heuristic"):
        for path in sorted((RESULTS / folder).glob("*.json")):
            row = json.loads(path.read_text())
            if folder == "trained_vs_heuristic" and row["spec"] != "trained":
                continue  # a recipe run's model, not the shipped one
            pair = (row["spec"], row.get("baseline", "heuristic"))
            field_games = covered.get((row["game"], row["players"], pair[pair[0] == "trained"]), 0)
            if "trained" in pair and field_games >= row["games"]:
                continue  # the field table of this game and count (benchmarks/field.py) holds it, on as many games
            row.setdefault("baseline", "heuristic")
            found.append(row)
    order = list(GAMES)
    return sorted(found, key=lambda row: (order.index(row["game"]), row["baseline"] != "random", row["spec"]))


def table(found: list[dict]) -> str:
    """The ladder as a markdown table, with the commands under it."""
    lines = [
        "| game | rung: upper − lower | games (blocks) | score: upper − lower [95%] | win rate: upper − lower [95%] "
        "| upper's ms / decision mean (p90) |",
        "|---|---|---|---|---|---|",
    ]
    for row in found:
        score, win = search_vs_heuristic.cells(row)
        timing = row["timing"]
        ms = f"{timing['mean_ms']:.2f} ({timing['p90_ms']:.2f})" if timing["decisions"] else "-"
        lines.append(
            f"| {row['game']} {row['players']}p | {search_vs_heuristic.setting(row)} − "
            f"{search_vs_heuristic.shown(row, row['baseline'])} | "
            f"{row['games']} ({row['blocks']}) | {score} | {win} | {ms} |"
        )
    lines += [
        "",
        "Commands (one per row, in order), with the date each finished and the wall time of the sitting that finished "
        "it (a run may carry its games over several sittings; one process per worker, `--workers` when more than 1):",
        "",
    ]
    for row in found:
        seconds = row.get("wall_seconds")
        wall = "" if seconds is None else f"; {seconds:.0f} s" if seconds < 90 else f"; {seconds / 60:.0f} min"
        lines.append(f"* `{row['command']}` ({row['date']}{wall})")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", action="append", choices=sorted(GAMES), help="a game (repeat; default all)")
    parser.add_argument("--rung", help="LOWER,UPPER: the two policies of the rung (e.g. random,heuristic)")
    parser.add_argument("--games", type=int, default=2000, help="games per rung (rounded up to whole blocks)")
    parser.add_argument("--players", type=int, help="seats (default: the game's row in GAMES)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--default-options",
        action="store_true",
        help="play the game's default options, not its row's in GAMES (a shipped model fits only those)",
    )
    parser.add_argument("--timing-games", type=int, default=2, help="games of the timing pass (0: none)")
    parser.add_argument("--out", type=Path, default=RESULTS / "ladder")
    parser.add_argument("--write-docs", action="store_true", help="rewrite docs/agents.md's ladder from saved rows")
    parser.add_argument("--docs-only", action="store_true", help="only rewrite the docs from the saved rows")
    args = parser.parse_args()
    if not args.docs_only:
        if args.rung is None or len(args.rung.split(",")) != 2:
            parser.error("--rung LOWER,UPPER is required (two policies), e.g. --rung random,heuristic")
        lower, upper = args.rung.split(",")
        print(f"# {platform.python_version()} on {platform.machine()}, seed {args.seed}")
        for name in args.game or GAMES:
            search_vs_heuristic.GAMES[name] = {**GAMES[name], **({"options": {}} if args.default_options else {})}
            players = args.players
            args.players = players or GAMES[name]["players"]
            # the row and its journal are named by both policies: two rungs with one upper agent never share a journal
            path = search_vs_heuristic.row_path(args.out, name, f"{lower}-{upper}", args.games, args.seed, args.players)
            row = search_vs_heuristic.run(name, upper, args, baseline=lower, label=f"{lower}-{upper}")
            args.players = players
            row["command"] = f"python benchmarks/ladder.py --game {name} --rung {args.rung} --games {args.games}"
            row["command"] += f" --seed {args.seed}" + (f" --players {players}" if players else "")
            row["command"] += " --default-options" if args.default_options else ""
            args.out.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(row, indent=1))
            print(table([{**row, "baseline": lower}]), flush=True)
    if args.write_docs or args.docs_only:
        replace_block(search_vs_heuristic.DOCS, BEGIN, END, table(rows()))
        print(f"wrote the ladder into {search_vs_heuristic.DOCS}")


if __name__ == "__main__":
    search_vs_heuristic.run_script(main, __file__)
