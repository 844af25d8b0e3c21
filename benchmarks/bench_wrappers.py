"""What PettingZoo's wrapper stack costs each game: random play wrapped (``tableenvs.make``) against raw
(``tableenvs.make_raw``), in the same run.

Each registered game of the package with its default options; the two contenders are interleaved, ``--repeats``
runs of ``--seconds`` CPU-seconds each on the same deals (``benchmarks/common.py``), after a warm-up; the table
shows the median agent-steps (decisions) per CPU-second and the ratio wrapped / raw (1.0 = the wrappers cost
nothing).

    python benchmarks/bench_wrappers.py [--seconds 1] [--repeats 3]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

from common import random_play

import tableenvs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    games = [name for name in tableenvs.names() if tableenvs.spec(name).module.startswith("tableenvs.")]
    when = time.strftime("%Y-%m-%d")
    print(f"# {when}, Python {platform.python_version()}, {args.repeats} x {args.seconds:g} s, median")
    print("| game | raw steps/CPU-s | wrapped steps/CPU-s | wrapped / raw |")
    print("|---|---:|---:|---:|")
    for name in games:
        random_play(tableenvs.make_raw(name), 0.2)  # warm-up: imports and first-use caches count for neither
        raw, wrapped = [], []
        contenders = [(tableenvs.make_raw, raw), (tableenvs.make, wrapped)]
        for repeat in range(args.repeats):  # the same deals for both; which goes first alternates
            for make, rates in contenders if repeat % 2 == 0 else contenders[::-1]:
                rates.append(random_play(make(name), args.seconds, seed=repeat).steps_per_second)
        raw_median, wrapped_median = statistics.median(raw), statistics.median(wrapped)
        print(f"| {name} | {raw_median:,.0f} | {wrapped_median:,.0f} | {wrapped_median / raw_median:.2f} |")


if __name__ == "__main__":
    main()
