"""Benchmark: how much duplicate deals narrow the 95% interval of a difference between two policies.

For each case (game, players; the two policies of ``--policies``, default ``heuristic,random``) the same tournament
is played twice with the same seed and the same number of games: once dealing every game anew
(``duplicate=False``) and once dealing every game of a seating block the same cards (``duplicate=True``, the
default). Both use the same estimator (the paired comparison
of :mod:`tableenvs.evaluation.statistics`: per-block difference of mean final score and of win rate, normal 95%
interval over blocks), so the ratio of the two interval widths is what duplicate deals buy at equal cost. A width
ratio ``r`` means fresh deals would need about ``r**2`` times as many games for the same precision.

Run: ``python benchmarks/bench_duplicate.py [--games 2000] [--cases pilipili_v0:4,llama_party_v0:3,...]
[--policies heuristic,runs/quick/model.zip]`` (``--games``: games per tournament; Rummikub cases use a fifth of
it, its games are slow).
"""

from __future__ import annotations

import argparse
import time

from tableenvs.evaluation import evaluate

#: ENV:PLAYERS is a round robin of the two policies; ENV:PLAYERS:OPPONENT a gauntlet against a field of OPPONENT.
DEFAULT_CASES = (
    "pilipili_v0:3,pilipili_v0:5,llama_party_v0:3,llama_party_v0:4,rummikub_v0:2,rummikub_v0:4,"
    "pilipili_v0:4:random,pilipili_v0:4:heuristic,llama_party_v0:3:random,rummikub_v0:2:heuristic"
)


def width(row: dict, key: str) -> float:
    return row[f"{key}_high"] - row[f"{key}_low"]


def ratio(fresh: dict, dup: dict, key: str) -> str:
    """Width with fresh deals over width with duplicate deals ("-" when both are zero: no variation at all)."""
    a, b = width(fresh, key), width(dup, key)
    if b == 0:
        return "-" if a == 0 else "inf"
    return f"{a / b:.2f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2000, help="games per tournament (Rummikub: a fifth)")
    parser.add_argument("--cases", default=DEFAULT_CASES, help="comma-separated ENV:PLAYERS[:OPPONENT]")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--policies", default="heuristic,random", help="the two policies compared, a - b")
    args = parser.parse_args()
    policies = [name.strip() for name in args.policies.split(",")]
    if len(policies) != 2:
        parser.error(f"--policies names two policies, got {args.policies!r}")
    print(f"policies {','.join(policies)}; seed {args.seed}; per-block paired differences {' - '.join(policies)}\n")
    print("| game | players | design | games | blocks | score | diff, fresh deals [95%] | diff, duplicate [95%] "
          "| width ratio | win-rate diff, fresh [95%] | duplicate [95%] | width ratio | seconds |")  # fmt: skip
    print("|---|---:|---|---:|---:|---|---|---|---:|---|---|---:|---:|")
    for case in args.cases.split(","):
        env, players, *field = case.split(":")
        opponents = field[0] if field else None
        games = args.games // 5 if env.startswith("rummikub") else args.games
        started = time.perf_counter()
        rows = {}
        for duplicate in (False, True):
            result = evaluate(
                env, policies, games, opponents=opponents, num_players=int(players), seed=args.seed, duplicate=duplicate
            )
            (rows[duplicate],) = result.paired
        fresh, dup = rows[False], rows[True]

        def cell(row: dict, key: str) -> str:
            return f"{row[key]:+.3f} [{row[f'{key}_low']:+.3f}, {row[f'{key}_high']:+.3f}]"

        design = f"gauntlet vs {opponents}" if opponents else "round robin"
        print(f"| {env} | {players} | {design} | {result.games} | {result.blocks} | {result.score_name} | "
              f"{cell(fresh, 'score_diff')} | {cell(dup, 'score_diff')} | "
              f"{ratio(fresh, dup, 'score_diff')} | {cell(fresh, 'win_diff')} | "
              f"{cell(dup, 'win_diff')} | {ratio(fresh, dup, 'win_diff')} | "
              f"{time.perf_counter() - started:.0f} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
