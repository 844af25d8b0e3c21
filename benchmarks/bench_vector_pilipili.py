"""Pili Pili's batched engine against the wrapped AEC env: agent-steps per CPU-second, random legal play.

The batched engine (``tableenvs.pilipili.batched.make_batched``, 5 players, default options: the standard 36-card
mission deck) at 256, 1,024 and 4,096 envs: each step returns every env's observation of the seat to act and its
mask, and a compiled chooser picks a uniformly random legal action per env from the mask (its time is counted: it is
the cheapest possible policy); checked (every action checked against the mask) and ``trusted``. In the same run:
the wrapped AEC env (``tableenvs.make``) through the full AEC API (``benchmarks/common.py``'s ``random_play``:
``last()`` with the observation and mask, ``step``). CPU time of this process (``time.process_time``); each figure
is the median of ``--repeats`` runs of about ``--seconds`` CPU-seconds, interleaved. The engine's kernels are
compiled (or loaded from numba's disk cache) before any timing.

    python benchmarks/bench_vector_pilipili.py [--seconds 2] [--repeats 3] [--players 5] [--sizes 256 1024 4096]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from typing import Any

import numba
import numpy as np
from common import random_play

import tableenvs
from tableenvs.pilipili.batched import make_batched

CLOCK = time.process_time


@numba.njit(cache=True)
def choose(mask, state, actions):
    """A uniformly random legal action per env (``state``: one xorshift64 word per env)."""
    for e in range(mask.shape[0]):
        row = mask[e]
        count = 0
        for a in range(row.shape[0]):
            count += row[a]
        x = state[e]
        x ^= x << np.uint64(13)
        x ^= x >> np.uint64(7)
        x ^= x << np.uint64(17)
        state[e] = x
        k = np.int64(x % np.uint64(count))
        for a in range(row.shape[0]):
            if row[a]:
                if k == 0:
                    actions[e] = a
                    break
                k -= 1


def batched_rate(num_envs: int, players: int, seconds: float, trusted: bool, seed: int = 0) -> tuple[float, float]:
    """Agent-steps per CPU-second: of the whole loop (the engine's steps and the compiled random chooser), and of
    the engine's steps alone."""
    engine = make_batched(num_envs, num_players=players, trusted=trusted)
    _, mask = engine.reset(seed)
    state = np.arange(1, num_envs + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    actions = np.zeros(num_envs, np.int64)
    for _ in range(50):  # warm up: past the first deals, caches filled
        choose(mask, state, actions)
        _, mask, _, _, _ = engine.step(actions)
    steps = 0
    in_step = 0.0
    start = CLOCK()
    while CLOCK() - start < seconds:
        for _ in range(20):
            choose(mask, state, actions)
            before = CLOCK()
            _, mask, _, _, _ = engine.step(actions)
            in_step += CLOCK() - before
        steps += 20 * num_envs
    return steps / (CLOCK() - start), steps / in_step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0, help="CPU-seconds per timed run (default 2)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per contender, median shown (default 3)")
    parser.add_argument("--players", type=int, default=5, help="player count (default 5)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 1024, 4096], help="batch sizes")
    args = parser.parse_args()
    n = args.players
    compile_start = CLOCK()
    engine = make_batched(2, num_players=n)
    _, mask = engine.reset(0)
    choose(mask, np.ones(2, np.uint64), np.zeros(2, np.int64))
    print(f"kernels ready in {CLOCK() - compile_start:.1f} CPU-s (compiled, or loaded from the disk cache)")
    contenders: dict[str, Any] = {}
    for size in args.sizes:
        for trusted in (False, True):
            label = f"batched, {size:,} envs, {'trusted' if trusted else 'checked'}"
            contenders[label] = lambda size=size, trusted=trusted: batched_rate(size, n, args.seconds, trusted)
    wrapped = "wrapped AEC env (tableenvs.make), one game at a time"
    contenders[wrapped] = lambda: (
        (random_play(tableenvs.make("pilipili_v0", num_players=n), args.seconds).steps_per_second,) * 2
    )
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in contenders}
    for repeat in range(args.repeats):
        for name, run in contenders.items():
            results[name].append(run())
            print(f"  run {repeat + 1}/{args.repeats}: {name}: {results[name][-1][0]:,.0f}", flush=True)
    medians = {
        name: tuple(statistics.median(run[i] for run in values) for i in (0, 1)) for name, values in results.items()
    }
    base = medians[wrapped][0]
    print()
    print(
        f"# pilipili_v0, {n} players, default options (standard missions); random legal play with observation and "
        f"mask every step; {time.strftime('%Y-%m-%d')}, Python {platform.python_version()}, numba "
        f"{numba.__version__}, median of {args.repeats} x {args.seconds:g} CPU-s. 'with chooser': the whole loop "
        "(engine steps and a compiled uniform-random chooser reading each mask); 'engine': CPU time inside step()"
    )
    print(
        "| contender | agent-steps/CPU-s with chooser | agent-steps/CPU-s, engine | ns/agent-step, engine "
        "| vs wrapped env |"
    )
    print("|---|---:|---:|---:|---:|")
    for name, (whole, engine) in medians.items():
        print(f"| {name} | {whole:,.0f} | {engine:,.0f} | {1e9 / engine:,.0f} | {whole / base:,.1f}x |")


if __name__ == "__main__":
    main()
