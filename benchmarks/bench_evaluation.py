"""Benchmark: tournament throughput (games per second) of ``tableenvs.evaluation.evaluate`` for every game.

For each env in ``tableenvs.names()``: 4 players, policies ``heuristic,random`` (seats filled by rotation), the
same number of games played three ways (the peer loop deals from ``seed + game``, so its deals differ), each
timed by the wall clock (worker start-up included, as a user sees it):

* peer: the loop a user would write without tableenvs.evaluation: the wrapped env (``tableenvs.make``),
  ``agent_iter()``, ``last()``, ``policy.act``, ``step()``, dead steps, in this process;
* ``evaluate(workers=1)``: the raw env, in this process;
* ``evaluate(workers=2)``: two local worker processes (``spawn``).

The two ``evaluate`` runs must return identical records (checked). Ratios are to the peer loop of the same run.
The machine is shared: the load average is printed with the table; each figure is the median of ``--repeats``.

Run: ``python benchmarks/bench_evaluation.py [--games 200,400,40 --repeats 3]`` (``--games``: one count per env,
in the order of ``--envs``, by default the sorted names).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numpy as np

import tableenvs
from tableenvs.evaluation import evaluate, seating
from tableenvs.policies import make_policy

POLICIES = ["heuristic", "random"]
NUM_PLAYERS = 4
DEFAULT_GAMES = {"pilipili_v0": 400, "llama_party_v0": 200, "rummikub_v0": 40}


def peer_loop(env_name: str, games: int, seed: int) -> float:
    """Wall seconds for ``games`` games through the wrapped AEC API, seats rotated like ``evaluate``."""
    env = tableenvs.make(env_name, num_players=NUM_PLAYERS)
    policies = [make_policy(spec, env) for spec in POLICIES]
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    for game in range(games):
        table = seating(game, len(POLICIES), NUM_PLAYERS)
        env.reset(seed=seed + game)
        for agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            action = None
            if not (terminated or truncated):
                policy = policies[table[env.unwrapped.agent_name_mapping[agent]]]
                action = policy.act(observation["observation"], observation["action_mask"], rng)
            env.step(action)
    return time.perf_counter() - start


def timed_evaluate(env_name: str, games: int, seed: int, workers: int):
    start = time.perf_counter()
    result = evaluate(env_name, POLICIES, games, num_players=NUM_PLAYERS, seed=seed, workers=workers)
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", default=",".join(tableenvs.names()), help="comma-separated env names")
    parser.add_argument("--games", default=None, help="games per run, one per env (default 200, 400, 40)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    envs = [name.strip() for name in args.envs.split(",") if name.strip()]
    if args.games:
        counts = [int(x) for x in args.games.split(",")]
        games_of = dict(zip(envs, counts, strict=True))
    else:
        games_of = {name: DEFAULT_GAMES.get(name, 100) for name in envs}

    print(f"Python {platform.python_version()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print(f"{NUM_PLAYERS} players, policies {','.join(POLICIES)}; median of {args.repeats} runs (wall clock)\n")
    print("| env | games | decisions/game | peer loop games/s | evaluate 1 worker | ratio | 2 workers | ratio | "
          "2 vs 1 |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in envs:
        games = games_of[name]
        peer, one, two = [], [], []
        decisions = 0.0
        for repeat in range(args.repeats):
            seed = args.seed + repeat
            peer.append(games / peer_loop(name, games, seed))
            seconds_one, result_one = timed_evaluate(name, games, seed, 1)
            seconds_two, result_two = timed_evaluate(name, games, seed, 2)
            if result_one.records != result_two.records:
                raise SystemExit(f"{name}: 1 and 2 workers disagree (seed {seed})")
            one.append(games / seconds_one)
            two.append(games / seconds_two)
            decisions = result_one.to_dict()["mean_decisions"]
        p, a, b = statistics.median(peer), statistics.median(one), statistics.median(two)
        print(f"| {name} | {games} | {decisions:.0f} | {p:.1f} | {a:.1f} | {a / p:.2f}x | {b:.1f} | {b / p:.2f}x | "
              f"{b / a:.2f}x |")  # fmt: skip
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
