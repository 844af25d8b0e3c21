"""Benchmark: tournament throughput (games per second) of ``tableenvs.evaluation.evaluate`` for every game.

For each env in ``tableenvs.names()``: 4 players, policies ``heuristic,random`` (seated by the balanced design,
duplicate deals), the same games (same seats, deal seeds and policy generators) played three ways, each timed by
the wall clock (worker start-up included, as a user sees it):

* peer: the loop a user would write without tableenvs.evaluation: the wrapped env (``tableenvs.make``),
  ``agent_iter()``, ``last()``, ``policy.act``, ``step()``, dead steps, in this process;
* ``evaluate(workers=1)``: the raw env, in this process;
* ``evaluate(workers=2)``: two local worker processes (``spawn``).

The two ``evaluate`` runs must return identical records and the peer loop the same total rewards (checked).
Ratios are to the peer loop of the same run.
Besides wall-clock games/s, games per CPU-second (this process plus its worker processes, from ``getrusage``)
shows what the work costs whatever else runs on the machine: on a shared machine with no idle core, two workers
cannot be faster by the wall clock, but the CPU figure still shows their overhead (start-up, imports). The
"parallel headroom" printed before and after the table (two busy-loop processes against one) says how much a
second process could gain on the machine at that moment.
One untimed warm-up game per env is played in this process first; worker processes pay their own warm-up
(imports; Rummikub's numba kernels loaded from the cache) inside the timing. The load average is printed with
the table; each figure is the median of ``--repeats``.

A second table times a **model seat**: Pili Pili with ``random,heuristic`` and an (untrained) MaskablePPO policy
network saved to a temporary ``.zip`` (``--model-games`` games, needs the ``train`` extra), played with one torch
thread (``torch_threads=1``, the default) and with as many threads as cores (torch's own default), in the same
run, alternating.

Run: ``python benchmarks/bench_evaluation.py [--games 300,1000,60 --repeats 3 --model-games 200]``
(``--games``: one count per env, in the order of ``--envs``, by default the sorted names; ``--model-games 0``
skips the model table).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import time

import numpy as np
from common import parallel_headroom

import tableenvs
from tableenvs.evaluation import evaluate, game_seeds, seating_plan
from tableenvs.policies import make_policy

POLICIES = ["heuristic", "random"]
NUM_PLAYERS = 4
DEFAULT_GAMES = {"pilipili_v0": 1000, "llama_party_v0": 300, "rummikub_v0": 60}


def cpu_seconds() -> float:
    """CPU time (user + system) of this process and its finished child processes."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def peer_loop(env_name: str, games: int, seed: int) -> tuple[float, float, np.ndarray]:
    """(wall s, CPU s, total reward per game and seat) for ``games`` games through the wrapped AEC API, with the
    seats and seeds ``evaluate`` uses, so both play the very same games."""
    env = tableenvs.make(env_name, num_players=NUM_PLAYERS)
    policies = [make_policy(spec, env) for spec in POLICIES]
    seat_of = env.unwrapped.agent_name_mapping
    plan = seating_plan(len(POLICIES), NUM_PLAYERS)
    games = plan.blocks_for(games) * plan.size  # evaluate plays whole blocks
    totals = np.zeros((games, NUM_PLAYERS))
    start, cpu = time.perf_counter(), cpu_seconds()
    for game in range(games):
        table = plan.seating(game)
        deal_seed, policy_seed = game_seeds(seed, game, plan.size, duplicate=True)
        seat_rngs = [np.random.default_rng(child) for child in policy_seed.spawn(NUM_PLAYERS)]
        env.reset(seed=deal_seed)
        for agent in env.agent_iter():
            observation, reward, terminated, truncated, _ = env.last()
            totals[game, seat_of[agent]] += reward
            action = None
            if not (terminated or truncated):
                policy = policies[table[seat_of[agent]]]
                rng = seat_rngs[seat_of[agent]]
                action = policy.act(observation["observation"], observation["action_mask"], rng)
            env.step(action)
    return time.perf_counter() - start, cpu_seconds() - cpu, totals


def timed_evaluate(env_name: str, games: int, seed: int, workers: int):
    """(wall s, CPU s, result) of one ``evaluate`` call."""
    start, cpu = time.perf_counter(), cpu_seconds()
    result = evaluate(env_name, POLICIES, games, num_players=NUM_PLAYERS, seed=seed, workers=workers)
    return time.perf_counter() - start, cpu_seconds() - cpu, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", default=",".join(tableenvs.names()), help="comma-separated env names")
    parser.add_argument("--games", default=None, help="games per run, one per env (default 300, 1000, 60)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model-games", type=int, default=200, help="Pili Pili games with a model seat (0: skip)")
    args = parser.parse_args()
    envs = [name.strip() for name in args.envs.split(",") if name.strip()]
    if args.games:
        counts = [int(x) for x in args.games.split(",")]
        games_of = dict(zip(envs, counts, strict=True))
    else:
        games_of = {name: DEFAULT_GAMES.get(name, 100) for name in envs}

    print(f"Python {platform.python_version()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print(f"{NUM_PLAYERS} players, policies {','.join(POLICIES)}; median of {args.repeats} runs (wall clock)")
    print(f"parallel headroom (2 busy loops vs 1, throughput): {parallel_headroom():.2f}x\n")
    print("| env | games | decisions/game | wall games/s: peer loop | evaluate 1 worker | ratio | 2 workers | ratio | "
          "2 vs 1 | games per CPU-s: peer | 1 worker | 2 workers |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in envs:
        games = games_of[name]
        wall: dict[str, list[float]] = {"peer": [], "one": [], "two": []}
        cpu: dict[str, list[float]] = {"peer": [], "one": [], "two": []}
        decisions = 0.0
        peer_loop(name, 1, args.seed)  # warm-up in this process (Rummikub's solver loads its compiled kernels)
        for repeat in range(args.repeats):
            seed = args.seed + repeat
            seconds, cpu_used, peer_totals = peer_loop(name, games, seed)
            wall["peer"].append(games / seconds)
            cpu["peer"].append(games / cpu_used)
            seconds, cpu_used, result_one = timed_evaluate(name, games, seed, 1)
            wall["one"].append(games / seconds)
            cpu["one"].append(games / cpu_used)
            seconds, cpu_used, result_two = timed_evaluate(name, games, seed, 2)
            wall["two"].append(games / seconds)
            cpu["two"].append(games / cpu_used)
            if result_one.records != result_two.records:
                raise SystemExit(f"{name}: 1 and 2 workers disagree (seed {seed})")
            if not np.array_equal(peer_totals, [record.rewards for record in result_one.records]):
                raise SystemExit(f"{name}: the peer loop and evaluate played different games (seed {seed})")
            decisions = result_one.to_dict()["mean_decisions"]
        p, a, b = (statistics.median(wall[key]) for key in ("peer", "one", "two"))
        cp, ca, cb = (statistics.median(cpu[key]) for key in ("peer", "one", "two"))
        print(f"| {name} | {games} | {decisions:.0f} | {p:.1f} | {a:.1f} | {a / p:.2f}x | {b:.1f} | {b / p:.2f}x | "
              f"{b / a:.2f}x | {cp:.1f} | {ca:.1f} | {cb:.1f} |")  # fmt: skip
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}; parallel headroom {parallel_headroom():.2f}x")
    if args.model_games:
        model_seat_table(args.model_games, args.repeats, args.seed)


def model_seat_table(games: int, repeats: int, seed: int) -> None:
    """Pili Pili games/s with a saved model in one seat: one torch thread against torch's default, same run."""
    import tempfile

    import torch
    from sb3_contrib import MaskablePPO

    from tableenvs.training.single_agent import SingleAgentEnv

    players = 3
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.zip")
        MaskablePPO("MlpPolicy", SingleAgentEnv("pilipili_v0", num_players=players), seed=0).save(path)
        specs = ["random", "heuristic", path]
        runs: dict[int, list[float]] = {1: [], cores: []}
        for repeat in range(repeats):
            for threads in runs:
                start = time.perf_counter()
                # the .zip was made just above by this process: trusted (a torch model seat is what is timed)
                result = evaluate(
                    "pilipili_v0", specs, games, seed=seed + repeat, torch_threads=threads, trust_models=True
                )
                runs[threads].append(result.games / (time.perf_counter() - start))
        torch.set_num_threads(cores)
    print(f"\nmodel seat: pilipili_v0, {players} players, random,heuristic,model.zip, {result.games} games, "
          f"median of {repeats} (wall clock), load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    print("| torch threads | games/s | ratio to 1 thread |")
    print("|---:|---:|---:|")
    one = statistics.median(runs[1])
    for threads, rates in runs.items():
        print(f"| {threads} | {statistics.median(rates):.1f} | {statistics.median(rates) / one:.2f}x |")


if __name__ == "__main__":
    main()
