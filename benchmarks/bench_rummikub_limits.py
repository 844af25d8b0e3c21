"""Benchmark: worst Rummikub step time and peak memory (RSS) per option setting, and the biggest solver calls.

Each row runs in a fresh child process (so its peak RSS is its own): random play (or greedy, where named) through
the raw AEC API for ``--games`` seeded games, timing every agent-step in CPU time (``time.process_time``):
``last()`` (observation and mask) plus the policy's choice plus ``step()``. One warm-up game first, so numba's
compilation or cache load is not counted; the RSS after it is printed as the baseline (interpreter, numpy, numba,
PettingZoo). Position rows time one solver call on a fixed opening rack. ``--budget-ms`` / ``--budget-mb`` make
the script exit with status 1 when a row's worst step or peak RSS exceeds them; ``--limit-mb`` caps each child's
address space (a runaway allocation then shows as ``MemoryError`` instead of taking the machine down).

Run: ``python benchmarks/bench_rummikub_limits.py [--games 30] [--budget-ms 2000 --budget-mb 1000]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

CLOCK = time.process_time

# (label, env options, policy) per game row; the position rows are below.
GAME_ROWS = [
    ("default (4 players)", {}, "random"),
    ("2 players", {"num_players": 2}, "random"),
    ("min_initial=300", {"min_initial": 300}, "random"),
    ("min_initial=300, 2 players", {"min_initial": 300, "num_players": 2}, "random"),
    ("min_initial=754 (most any rack can score)", {"min_initial": 754, "num_players": 2}, "random"),
    ("strict_commit=False (penalty draws)", {"strict_commit": False}, "random"),
    ("strict_commit=False, 2 players", {"strict_commit": False, "num_players": 2}, "random"),
    (
        "strict_commit=False, min_initial=300, 2 players",
        {"strict_commit": False, "min_initial": 300, "num_players": 2},
        "random",
    ),
    ("draw_after_play=True", {"draw_after_play": True}, "random"),
    ("greedy, min_initial=300, 2 players", {"min_initial": 300, "num_players": 2}, "heuristic"),
]
# (label, rack size, min_initial, call) per position row: an opening on the empty table, both jokers in the rack.
POSITION_ROWS = [
    ("80-tile opening rack, min_initial=300: playable", 80, 300, "playable"),
    ("80-tile opening rack, min_initial=300: solve(value)", 80, 300, "solve"),
    ("104-tile opening rack, min_initial=300: playable", 104, 300, "playable"),
    ("104-tile opening rack, min_initial=300: solve(value)", 104, 300, "solve"),
]


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def run_games(options: dict, policy_name: str, games: int, seed: int) -> dict:
    import numpy as np

    import tableenvs
    from tableenvs.policies import make_policy

    env = tableenvs.make_raw("rummikub_v0", **options)
    policies = [make_policy(policy_name, env) for _ in range(env.num_players)]
    worst = (0.0, -1, 0)  # seconds, game seed, rack tiles of the player who acted
    steps = 0
    biggest_rack = 0
    ends: dict[str, int] = {}
    baseline = None
    for game in range(-1, games):  # game -1: the warm-up
        game_seed = seed + 10_000 if game < 0 else seed + game
        rng = np.random.default_rng(game_seed)
        env.reset(seed=game_seed)
        for agent in env.agent_iter():
            start = CLOCK()
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            seat = env.agent_name_mapping[agent]
            rack = int(env.game.racks[seat].sum())
            env.step(policies[seat].act(observation["observation"], observation["action_mask"], rng))
            elapsed = CLOCK() - start
            if game >= 0:
                steps += 1
                biggest_rack = max(biggest_rack, rack)
                if elapsed > worst[0]:
                    worst = (elapsed, game_seed, rack)
        if game < 0:
            baseline = rss_mb()
        else:
            end = env.game.results[-1].end if env.game.results else "truncated"
            ends[end] = ends.get(end, 0) + 1
    return {
        "worst_ms": worst[0] * 1e3,
        "worst_seed": worst[1],
        "worst_rack": worst[2],
        "steps": steps,
        "biggest_rack": biggest_rack,
        "ends": ends,
        "baseline_mb": baseline,
        "peak_mb": peak_mb(),
    }


def run_position(size: int, min_initial: int, call: str, seed: int) -> dict:
    import numpy as np

    from tableenvs.rummikub import JOKER, TILE_TYPES, playable, solve

    rng = np.random.default_rng(seed)
    rack = np.bincount(rng.choice(np.repeat(np.arange(JOKER), 2), size - 2, replace=False), minlength=TILE_TYPES)
    rack[JOKER] = 2
    empty = np.zeros(TILE_TYPES, np.int64)
    small = np.zeros(TILE_TYPES, np.int64)
    small[[0, 1, 2]] = 1
    playable(empty, small, empty, opening=True)  # warm-up: compile or load the kernels
    solve(empty, small, opening=True, min_initial=6)
    baseline = rss_mb()
    start = CLOCK()
    if call == "playable":
        playable(empty, rack, empty, opening=True, min_initial=min_initial)
    else:
        solve(empty, rack, objective="value", opening=True, min_initial=min_initial)
    elapsed = CLOCK() - start
    return {"worst_ms": elapsed * 1e3, "steps": 1, "biggest_rack": size, "baseline_mb": baseline, "peak_mb": peak_mb()}


def child(spec: dict) -> None:
    if spec.get("limit_mb"):
        limit = spec["limit_mb"] * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        if spec["kind"] == "games":
            result = run_games(spec["options"], spec["policy"], spec["games"], spec["seed"])
        else:
            result = run_position(spec["size"], spec["min_initial"], spec["call"], spec["seed"])
    except MemoryError:
        result = {"error": "MemoryError", "peak_mb": peak_mb()}
    print(json.dumps(result))


def run_child(spec: dict) -> dict:
    done = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)], capture_output=True, text=True
    )
    if done.returncode != 0 or not done.stdout.strip():
        return {"error": (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=30, help="seeded games per option row (after one warm-up)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget-ms", type=float, default=None, help="fail if a row's worst step exceeds this")
    parser.add_argument("--budget-mb", type=float, default=None, help="fail if a row's peak RSS exceeds this")
    parser.add_argument("--limit-mb", type=int, default=None, help="address-space limit of each child process")
    parser.add_argument("--only", default=None, help="run only rows whose label contains this text")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(json.loads(args.child))
        return
    specs = [
        (label, {"kind": "games", "options": options, "policy": policy, "games": args.games, "seed": args.seed})
        for label, options, policy in GAME_ROWS
    ] + [
        (label, {"kind": "position", "size": size, "min_initial": min_initial, "call": call, "seed": args.seed})
        for label, size, min_initial, call in POSITION_ROWS
    ]
    if args.only:
        specs = [(label, spec) for label, spec in specs if args.only in label]
    print(
        f"python {platform.python_version()}, {os.cpu_count()} CPUs; {args.games} games per option row "
        f"(seeds {args.seed}..{args.seed + args.games - 1}), random play unless named; CPU time per agent-step"
    )
    print("| setting | steps | biggest rack | worst step ms | peak RSS MB | RSS after warm-up MB | ends |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    over = []
    for label, spec in specs:
        spec["limit_mb"] = args.limit_mb
        result = run_child(spec)
        if "error" in result:
            print(f"| {label} | - | - | - | {result.get('peak_mb', float('nan')):.0f} | - | {result['error']} |")
            over.append(label)
            continue
        ends = ", ".join(f"{k} {v}" for k, v in sorted(result.get("ends", {}).items())) or "-"
        worst = f"{result['worst_ms']:.1f}"
        if "worst_seed" in result:
            worst += f" (seed {result['worst_seed']}, rack {result['worst_rack']})"
        print(
            f"| {label} | {result['steps']} | {result['biggest_rack']} | {worst} | {result['peak_mb']:.0f} | "
            f"{result['baseline_mb']:.0f} | {ends} |",
            flush=True,
        )
        if (args.budget_ms is not None and result["worst_ms"] > args.budget_ms) or (
            args.budget_mb is not None and result["peak_mb"] > args.budget_mb
        ):
            over.append(label)
    if over:
        print(f"over budget or failed: {', '.join(over)}")
        sys.exit(1)


if __name__ == "__main__":
    main()
