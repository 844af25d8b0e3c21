"""Benchmark: RLlib PPO training throughput (env steps per second) with 1 and 2 env runners, in the same run.

Runs in the RLlib venv (docs/training.md#rllib). For each ``--runners`` count, alternating over ``--repeats``
rounds so both see the same machine load: build :func:`tableenvs.training.rllib.ppo_config` (every seat learning, one
shared module, ``--batch`` env steps per iteration), run one untimed warm-up iteration, then ``--iterations`` timed
``algo.train()`` calls. Reported per count (median over rounds):

* env steps/s by the wall clock over the timed iterations (sampling and the PPO update, as a user waits for them);
* sampling env steps/s from RLlib's own ``env_runner_sampling_timer`` (the part env runners parallelise);
* the driver's CPU seconds per 1,000 env steps (``time.process_time``; the env runners are other processes).

Ratios are to 1 runner in the same run. The load average and the parallel headroom (two busy-loop processes
against one: how much a second process could gain on the machine at that moment) are printed with the table: on a
2-core machine shared with other jobs a second runner cannot gain much by the wall clock.

``--write-docs`` also rewrites the ``bench-rllib`` block of docs/training.md with the table, the date, the load and
the headroom (machine-dependent, so never checked in CI). Ray is started on 127.0.0.1 only.

Run: ``.venv-rllib/bin/python benchmarks/bench_rllib.py [--env pilipili_v0 --players 3 --runners 1,2] [--write-docs]``
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import time
from pathlib import Path

import ray
from common import parallel_headroom, replace_block

from tableenvs.training.rllib import init_ray, ppo_config

DOCS = Path(__file__).resolve().parents[1] / "docs" / "training.md"
BEGIN = (
    "<!-- measured: bench-rllib (.venv-rllib/bin/python benchmarks/bench_rllib.py --write-docs; machine-dependent, "
    "not checked in CI) -->"
)
END = "<!-- end measured: bench-rllib -->"


def measure(env: str, players: int, runners: int, batch: int, iterations: int, seed: int) -> dict[str, float]:
    config = ppo_config(env, options={"num_players": players}, env_runners=runners, train_batch_size=batch, seed=seed)
    algo = config.build_algo()
    try:
        algo.train()  # warm-up: actors started, first weights synced
        steps = sampling = 0.0
        cpu, wall = time.process_time(), time.perf_counter()
        for _ in range(iterations):
            result = algo.train()
            steps += result["env_runners"]["num_env_steps_sampled"]
            sampling += result["timers"]["env_runner_sampling_timer"]
        wall = time.perf_counter() - wall
        cpu = time.process_time() - cpu
    finally:
        algo.stop()
    return {"wall": steps / wall, "sampling": steps / sampling, "cpu": 1000 * cpu / steps}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="pilipili_v0")
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--runners", default="1,2", help="comma-separated env runner counts (first: the baseline)")
    parser.add_argument("--batch", type=int, default=2000, help="env steps per iteration (default 2000)")
    parser.add_argument("--iterations", type=int, default=3, help="timed iterations per measurement (default 3)")
    parser.add_argument("--repeats", type=int, default=2, help="alternating rounds; medians are reported (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--write-docs", action="store_true", help="rewrite the bench-rllib block of docs/training.md")
    args = parser.parse_args()
    counts = [int(text) for text in args.runners.split(",")]

    load_start, headroom_start = os.getloadavg()[0], parallel_headroom()
    print(f"ray {ray.__version__}, {os.cpu_count()} cores, load average {load_start:.1f}")
    print(f"parallel headroom before: {headroom_start:.2f}x (2.00 = two free cores)")
    init_ray()
    rows: dict[int, list[dict[str, float]]] = {count: [] for count in counts}
    for _ in range(args.repeats):
        for count in counts:
            rows[count].append(measure(args.env, args.players, count, args.batch, args.iterations, args.seed))
    ray.shutdown()
    load_end, headroom_end = os.getloadavg()[0], parallel_headroom()
    print(f"parallel headroom after: {headroom_end:.2f}x, load average {load_end:.1f}")

    median = {
        count: {key: statistics.median(r[key] for r in rows[count]) for key in rows[count][0]} for count in counts
    }
    base = median[counts[0]]
    title = (
        f"{args.env}, {args.players} players, PPO, shared module, {args.batch} env steps per iteration, "
        f"{args.iterations} timed iterations, median of {args.repeats}"
    )
    lines = [
        "env runners  env steps/s (wall)  ratio  sampling env steps/s  ratio  driver CPU s per 1000 steps",
        "-----------  ------------------  -----  --------------------  -----  ---------------------------",
    ]
    for count in counts:
        row = median[count]
        lines.append(
            f"{count:<11}  {row['wall']:>18.0f}  {row['wall'] / base['wall']:>5.2f}  {row['sampling']:>20.0f}  "
            f"{row['sampling'] / base['sampling']:>5.2f}  {row['cpu']:>27.2f}"
        )
    share = (
        f"With {counts[0]} runner(s) an env step took {1000 / base['wall']:.1f} ms of an iteration, "
        f"{1000 / base['sampling']:.1f} ms of it sampling."
    )
    print(f"\n{title}", *lines, share, sep="\n")
    if args.write_docs:
        date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
        head = (
            f"{date}, ray {ray.__version__}, {os.cpu_count()} cores: load average {load_start:.1f} at the start and "
            f"{load_end:.1f} at the end, parallel headroom {headroom_start:.2f}x before and {headroom_end:.2f}x after."
        )
        replace_block(DOCS, BEGIN, END, "\n".join([head, "", "```text", title, *lines, "```", "", share]))


if __name__ == "__main__":
    main()
