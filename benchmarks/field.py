"""The shipped ``trained`` agent against a field, per game and player count: the tables of docs/agents.md "Trained
against a field".

For one game at one player count (default options), each row is one :func:`tableenvs.evaluation.evaluate` of
``trained`` and another agent, duplicate deals (one deal per block of seatings), every seating, paired differences
over the blocks (trained − other, seat for seat on the same cards; 95% normal intervals), with both mean finishing
ranks (1 is first):

* ``random``, ``heuristic``, ``search`` (the game's default search): head to head, half the seats each (a round robin
  of the two);
* ``company-heuristic``, ``company-search``: in its own company, one seat of the other agent among ``trained`` seats
  (a gauntlet of the two against a field of ``trained``: each in turn holds the one seat, so the difference is what
  the other agent scores in that seat minus what ``trained`` scores there).

The decision time is ``trained``'s (CPU time of this process, every decision with a choice, in ``--timing-games``
games with one ``trained`` seat among heuristics). Under each table, the model's best-response gains saved by
``benchmarks/exploitability.py`` for that game and count (its runs of another model left out), with the heuristic's
at the same budget and their ratio. The rows of a game and player count are saved in one JSON file
under ``benchmarks/results/field/`` (a later run replaces the rows it played and keeps the others; the rows of a
model no longer shipped move to ``replaced/``), and
``--write-docs`` rewrites the field block of docs/agents.md from every saved file, one table per game and count, each
row with the command that made it. A run keeps its finished games in a journal beside the file (``.partial``), and
the same command continues it.

Run: ``nice -n 19 python benchmarks/field.py --game rummikub_v0 --players 4 [--games 2000] [--rows
random,heuristic,company-heuristic] [--search-games 400] [--seed 0] [--workers 1] [--timing-games 2]
[--write-docs]``; ``--docs-only`` rewrites the docs from saved rows. The search rows cost the search's decision time
(tens of ms): by default they run only at the game's default player count, with ``--search-games`` games.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import search_vs_heuristic
from common import CLOCK, decision_times, replace_block
from exploitability import model_digest, saved_runs, summary
from search_vs_heuristic import journaled_evaluate, versus_heuristic

import tableenvs
from tableenvs.policies import make_policy

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "field"
DOCS = ROOT / "docs" / "agents.md"
BEGIN = "<!-- field: begin (written by benchmarks/field.py --write-docs) -->"
END = "<!-- field: end -->"
#: Each row: the other agent and whether ``trained`` fills the other seats (its own company) or half of them.
ROWS = {
    "random": ("random", False),
    "heuristic": ("heuristic", False),
    "search": ("search", False),
    "company-heuristic": ("heuristic", True),
    "company-search": ("search", True),
}
#: What each row is called in a table.
TITLES = {
    "random": "vs random (half the seats each)",
    "heuristic": "vs heuristic (half the seats each)",
    "search": "vs search (half the seats each)",
    "company-heuristic": "own company: one heuristic seat among trained",
    "company-search": "own company: one search seat among trained",
}
GAME_ORDER = ("pilipili_v0", "llama_party_v0", "rummikub_v0")


def saved_path(game: str, players: int, seed: int) -> Path:
    return RESULTS / f"{game}__{players}p__s{seed}.json"


def play_row(game: str, players: int, name: str, games: int, seed: int, workers: int) -> dict:
    """One row (:data:`ROWS`): ``trained`` − the other agent, its intervals and both mean ranks."""
    other, company = ROWS[name]
    arguments = {
        "env": game,
        "policies": ["trained", other],
        "games": games,
        "num_players": players,
        "options": {},
        "seed": seed,
    }
    if company:
        arguments["opponents"] = "trained"
    journal = RESULTS / f"{game}__{players}p__s{seed}__{name}__{games}.partial"
    wall, cpu = time.time(), CLOCK()
    result = journaled_evaluate(journal, arguments, workers)
    wall, cpu = time.time() - wall, CLOCK() - cpu
    diff, win = versus_heuristic(result.paired[0], other)  # trained − other
    ranks = {row["policy"]: row["mean_rank"] for row in result.policies}
    return {
        "row": name,
        "other": other,
        "games": result.games,
        "blocks": result.blocks,
        "score_name": result.score_name,
        "higher_is_better": result.higher_is_better,
        **diff,
        **win,
        "rank_trained": ranks["trained"],
        "rank_other": ranks[other],
        "resolved": search_vs_heuristic.described(make_policy(other, tableenvs.make_raw(game, num_players=players))),
        "command": f"python benchmarks/field.py --game {game} --players {players} --rows {name} --games {games} "
        f"--seed {seed}" + (f" --workers {workers}" if workers > 1 else ""),
        "wall_seconds": round(wall, 1),
        "cpu_seconds": round(cpu, 1),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load": [round(x, 1) for x in os.getloadavg()],
    }


def cells(row: dict) -> tuple[str, str]:
    better = "more is better" if row["higher_is_better"] else "fewer is better"
    score = (
        f"{row['score_diff']:+.2f} [{row['score_diff_low']:+.2f}, {row['score_diff_high']:+.2f}] {row['score_name']}"
    )
    win = f"{row['win_diff']:+.3f} [{row['win_diff_low']:+.3f}, {row['win_diff_high']:+.3f}]"
    return f"{score} ({better})", win


def verdict(row: dict) -> str:
    """What the row says against the field's tests: ahead / behind / level on score (interval excluding 0 or not),
    and for head-to-head rows whether trained's mean rank is no worse."""
    ahead = row["score_diff_low"] > 0 if row["higher_is_better"] else row["score_diff_high"] < 0
    behind = row["score_diff_high"] < 0 if row["higher_is_better"] else row["score_diff_low"] > 0
    word = "ahead" if ahead else "behind" if behind else "level"
    rank = "rank no worse" if row["rank_trained"] <= row["rank_other"] else "rank worse"
    return f"{word}, {rank}"


def table(saved: dict, runs: list[dict] | None = None) -> str:
    """One game and player count's table, its decision time, its model's best-response gains (from ``runs``,
    exploitability.py's saved runs; None reads them) and its commands."""
    game, players = saved["game"], saved["players"]
    model = saved.get("model", ["?", "?"])
    lines = [
        f"**{game}, {players} players** (`trained`: `{model[0]}`, {model[1]})",
        "",
        "| table | games (blocks) | score: trained − other [95%] | win rate: trained − other [95%] | mean rank: "
        "trained / other | reads |",
        "|---|---|---|---|---|---|",
    ]
    rows = [saved["rows"][name] for name in ROWS if name in saved["rows"]]
    for row in rows:
        score, win = cells(row)
        lines.append(
            f"| {TITLES[row['row']]} | {row['games']} ({row['blocks']}) | {score} | {win} | "
            f"{row['rank_trained']:.2f} / {row['rank_other']:.2f} | {verdict(row)} |"
        )
    timing = saved.get("timing")
    if timing and timing["decisions"]:
        lines += [
            "",
            f"`trained`'s decision time: {timing['mean_ms']:.3f} ms mean ({timing['p90_ms']:.3f} p90) over "
            f"{timing['decisions']} decisions with a choice (CPU time of one process; {timing['command']}, "
            f"{timing['date']}).",
        ]
    gains = summary(game, players, tuple(model), runs)
    if gains:
        lines += [
            "",
            "Best-response gain ([exploitability](#exploitability): a learner's gain over the agent's seats at a "
            "table of it, per game, 95% interval; more is a more exploitable agent):",
            "",
            *[f"* {line}" for line in gains],
        ]
    lines += ["", "Commands (one per row, in order), with the date each finished and the load average then:", ""]
    for row in rows:
        lines.append(f"* `{row['command']}` ({row['date']}; {row['wall_seconds']:.0f} s, load {row['load'][0]})")
    return "\n".join(lines)


def all_tables() -> str:
    found = [json.loads(path.read_text()) for path in sorted(RESULTS.glob("*.json"))]
    if not found:
        raise SystemExit(f"no saved rows under {RESULTS}: the docs block is left as it is (run the benchmark first)")
    found.sort(key=lambda s: (GAME_ORDER.index(s["game"]) if s["game"] in GAME_ORDER else 99, s["players"], s["seed"]))
    runs = saved_runs()  # read once for every table
    return "\n\n".join(table(saved, runs) for saved in found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=sorted(GAME_ORDER))
    parser.add_argument("--players", type=int, help="seats (default: the game's default count)")
    parser.add_argument(
        "--rows",
        help=f"comma-separated rows of {', '.join(ROWS)} (default: all but the search "
        "rows away from the default count)",
    )
    parser.add_argument("--games", type=int, default=2000, help="games per row (rounded up to whole blocks)")
    parser.add_argument("--search-games", type=int, help="games of the search rows (default --games)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--timing-games", type=int, default=2, help="games of the timing pass (0: none)")
    parser.add_argument("--write-docs", action="store_true", help="rewrite docs/agents.md's field block")
    parser.add_argument("--docs-only", action="store_true", help="only rewrite the docs from the saved rows")
    args = parser.parse_args()
    if not args.docs_only:
        if args.game is None:
            parser.error("--game is required (or --docs-only)")
        default = tableenvs.make_raw(args.game).num_players
        players = args.players or default
        tableenvs.make_raw(args.game, num_players=players)  # the player count is checked before anything runs
        names = (
            args.rows.split(",")
            if args.rows
            else [name for name in ROWS if players == default or ROWS[name][0] != "search"]
        )
        unknown = [name for name in names if name not in ROWS]
        if unknown:
            parser.error(f"--rows: no row named {', '.join(unknown)}; the rows: {', '.join(ROWS)}")
        for flag in ("games", "seed", "workers", "timing_games"):
            if getattr(args, flag) < (0 if flag in ("seed", "timing_games") else 1):
                parser.error(
                    f"--{flag.replace('_', '-')} must be at least {0 if flag in ('seed', 'timing_games') else 1}"
                )
        path = saved_path(args.game, players, args.seed)
        saved = (
            json.loads(path.read_text())
            if path.exists()
            else {"game": args.game, "players": players, "seed": args.seed, "rows": {}}
        )
        model = list(model_digest(args.game, players))
        if saved.get("model", model) != model:  # another model's rows: kept aside, this model's table starts anew
            aside = RESULTS / "replaced" / f"{path.stem}__{saved['model'][1]}.json"
            aside.parent.mkdir(parents=True, exist_ok=True)
            path.replace(aside)
            print(f"# the rows of {saved['model'][0]} ({saved['model'][1]}) moved to {aside}", flush=True)
            saved = {"game": args.game, "players": players, "seed": args.seed, "rows": {}}
        saved["model"] = model
        print(
            f"# {platform.python_version()} on {platform.machine()}, {args.game} {players}p, seed {args.seed}, "
            f"trained = {saved['model'][0]} ({saved['model'][1]})",
            flush=True,
        )
        RESULTS.mkdir(parents=True, exist_ok=True)
        for name in names:
            games = args.search_games if ROWS[name][0] == "search" and args.search_games else args.games
            print(f"# {name}: {games} games", flush=True)
            row = play_row(args.game, players, name, games, args.seed, args.workers)
            if path.exists() and json.loads(path.read_text()).get("model") == model:  # rows saved meanwhile: kept
                saved["rows"] = {**json.loads(path.read_text())["rows"], name: row}
            saved["rows"][name] = row
            path.write_text(json.dumps(saved, indent=1))
            print(table(saved), flush=True)
        if args.timing_games:
            timing = decision_times(args.game, "trained", players, {}, args.timing_games, args.seed)
            command = (
                f"`python benchmarks/field.py --game {args.game} --players {players} --rows ... "
                f"--timing-games {args.timing_games}`"
            )
            saved["timing"] = {**timing, "command": command, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
            if path.exists():  # every row saved so far, this run's among them
                saved["rows"] = json.loads(path.read_text())["rows"]
            path.write_text(json.dumps(saved, indent=1))
        print(table(saved), flush=True)
    if args.write_docs or args.docs_only:
        replace_block(DOCS, BEGIN, END, all_tables())
        print(f"wrote the field tables into {DOCS}")


if __name__ == "__main__":
    search_vs_heuristic.run_script(main, __file__)
