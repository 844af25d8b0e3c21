"""The ladder of docs/agents.md: random, heuristic and search at two budgets, per game, with decision times.

For each game: a round-robin tournament (:func:`tableenvs.evaluation.evaluate`: balanced seats, duplicate deals,
95% intervals) of ``random``, ``heuristic`` and the two search specs of ``--budgets`` (or the game's defaults
below), then a timing pass: ``--timing-games`` games with one search seat among heuristic seats, timing every
search decision that had a choice (at least two legal actions) in CPU time (``time.process_time``, one process,
one core): mean and 90th percentile in ms, and simulations per CPU second.

Run: ``python benchmarks/ladder.py [--game pilipili_v0] [--games 500] [--players 4] [--workers 1]
[--budgets "search:sims=20,search:sims=60"] [--entrants heuristic,search:sims=60] [--timing-games 3] [--out DIR]``
(``--entrants`` replaces the round robin's entrants, e.g. a head-to-head table of heuristic against search).
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

from common import CLOCK, decision_times

from tableenvs.evaluation import evaluate

#: Two search budgets per game, sized so that a decision takes at most about 100 ms of CPU (docs/agents.md).
BUDGETS = {
    "pilipili_v0": ("search:sims=20", "search:sims=60"),
    "llama_party_v0": ("search:sims=50:rollout=random", "search:sims=200:rollout=random"),
    "rummikub_v0": ("search:sims=8:rollout=random:depth=30", "search:sims=24:rollout=random:depth=30"),
}
OPTIONS = {"rummikub_v0": {"max_turns": 200}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", action="append", choices=sorted(BUDGETS), help="a game (repeat; default all)")
    parser.add_argument("--games", type=int, default=500, help="games per table (default 500)")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--budgets", help="two comma-separated search specs, for every game chosen")
    parser.add_argument("--entrants", help="comma-separated policies instead of random, heuristic and the budgets")
    parser.add_argument("--timing-games", type=int, default=3, help="games of the timing pass (0: none)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="directory for one JSON file per game")
    args = parser.parse_args()
    print(f"# {platform.python_version()} on {platform.machine()}, seed {args.seed}")
    for name in args.game or sorted(BUDGETS):
        specs = tuple(args.budgets.split(",")) if args.budgets else BUDGETS[name]
        entrants = args.entrants.split(",") if args.entrants else ["random", "heuristic", *specs]
        specs = [spec for spec in entrants if spec.startswith("search")] if args.timing_games > 0 else []
        start = CLOCK()
        result = evaluate(
            name,
            entrants,
            args.games,
            num_players=args.players,
            options=OPTIONS.get(name, {}),
            seed=args.seed,
            workers=args.workers,
        )
        cpu = CLOCK() - start
        print(f"\n## {name}")
        print(f"tournament CPU (this process; workers not counted): {cpu:.0f} s")
        print(result.format_table())
        timings = [
            {
                "spec": spec,
                **decision_times(name, spec, args.players, OPTIONS.get(name, {}), args.timing_games, args.seed),
            }
            for spec in specs
        ]
        if timings:
            print("\n| search | decisions timed | mean ms | p90 ms | simulations / CPU s |\n|---|---:|---:|---:|---:|")
        for row in timings:
            print(
                f"| `{row['spec']}` | {row['decisions']} | {row['mean_ms']:.1f} | {row['p90_ms']:.1f} | "
                f"{row['simulations_per_second']:.0f} |"
            )
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            data = {"result": result.to_dict(), "timings": timings, "cpu_seconds": cpu}
            (args.out / f"{name}.json").write_text(json.dumps(data, indent=1, default=str))


if __name__ == "__main__":
    main()
