"""Benchmark: instructions per agent-step of Rummikub random play, counted by valgrind (callgrind), per checkout.

Where you are: ``benchmarks/``. CPU-time rates on these shared machines swing 10-15% between runs (the same
baseline measured 239..280 µs a 4-player step within one hour); an instruction count does not. It is not time
(cache misses and branch mispredictions are not counted: the solver's hash tables cost more per instruction than the
Python), so it complements ``bench_rummikub_env.py --compare``, it does not replace it.

For each checkout (``--checkout PATH``, repeatable; default this one) a child process under
``valgrind --tool=callgrind --instr-atstart=no`` imports that checkout's ``tableenvs``, plays ``--warm-up`` games
(numba kernels loaded or compiled, caches filled), freezes the garbage collector's heap (``gc.freeze``: a collection
of the import-time objects would otherwise land at random in the counted games), switches counting on
(``callgrind_control -i on``), plays games ``0 .. --games - 1`` of ``--players``-player uniformly random legal play
through the full wrapped API (as ``common.random_play``: ``last()``, the mask, ``step()``), switches it off and
reports the steps. The same seeds give the same games in every checkout whose rules and seeding are unchanged (the
step counts must agree: the script refuses to compare otherwise).

Run: ``python benchmarks/studies/bench_instructions.py --checkout /tmp/base --checkout . [--games 40 --players 4]``
(needs ``valgrind``; about two minutes per checkout for 40 games, the two checkouts in parallel on two cores).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

CHILD = r"""
import gc, os, subprocess, sys
import numpy as np
sys.path[:0] = [sys.argv[1], sys.argv[5]]  # the checkout's tableenvs; benchmarks/ (common.py)
import tableenvs
from common import play_out
from tableenvs.rummikub import _solver_kernel as kernel

players, warm_up, games = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
env = tableenvs.make("rummikub_v0", num_players=players)


def play(seed):
    env.reset(seed=seed)
    return play_out(env, np.random.default_rng(seed))


for seed in range(100_000, 100_000 + warm_up):
    play(seed)
# the kernels random play calls only now and then (a scored sweep's best path: an arrangement whose search runs out of
# budget), loaded before counting
tableenvs.rummikub.solve(np.zeros(53, np.int64), np.bincount([0, 1, 2], minlength=53))
compiled = sum(len(k.signatures) for k in kernel.kernels())
gc.collect()
gc.freeze()
subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], check=True, capture_output=True)
steps = sum(play(seed) for seed in range(games))
subprocess.run(["callgrind_control", "-i", "off", str(os.getpid())], check=True, capture_output=True)
print("steps", steps, "compiled while counting", sum(len(k.signatures) for k in kernel.kernels()) - compiled)
"""


def count(checkout: Path, players: int, warm_up: int, games: int) -> tuple[int, int]:
    """``(instructions, agent-steps)`` of the counted games of ``checkout``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        run = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--instr-atstart=no",
                f"--callgrind-out-file={out}",
                sys.executable,
                "-c",
                CHILD,
                str(checkout),
                str(players),
                str(warm_up),
                str(games),
                str(Path(__file__).resolve().parents[1]),  # benchmarks/, for common.py
            ],
            cwd=checkout,
            env={**os.environ, "PYTHONHASHSEED": "0"},
            capture_output=True,
            text=True,
        )
        text = run.stdout + run.stderr
        steps = re.search(r"^steps (\d+) compiled while counting (\d+)", text, re.M)
        collected = re.search(r"Collected : (\d+)", text)
        if run.returncode != 0 or steps is None or collected is None:
            raise SystemExit(f"{checkout}: the counted run failed (exit {run.returncode}):\n{text[-3000:]}")
        if int(steps.group(2)):
            raise SystemExit(f"{checkout}: a kernel was compiled while counting; raise --warm-up")
        return int(collected.group(1)), int(steps.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkout", action="append", type=Path, help="a checkout's root (repeat; default: this one)")
    parser.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    parser.add_argument("--games", type=int, default=40, help="counted games, seeds 0..games-1")
    parser.add_argument("--warm-up", type=int, default=12, help="games played before counting")
    args = parser.parse_args()
    if args.games < 1 or args.warm_up < 1:
        parser.error("--games and --warm-up must be at least 1")
    for tool in ("valgrind", "callgrind_control"):
        if shutil.which(tool) is None:
            parser.error(f"{tool} not found: install valgrind (Debian: apt-get install valgrind)")
    checkouts = [path.resolve() for path in (args.checkout or [Path(__file__).resolve().parents[2]])]
    for path in checkouts:
        if not (path / "tableenvs" / "__init__.py").is_file():
            parser.error(f"--checkout {path}: no tableenvs package there")
    print(f"counting {args.games} {args.players}-player games per checkout under callgrind ...", flush=True)
    with ThreadPoolExecutor(max_workers=2) as pool:
        counts = list(pool.map(lambda path: count(path, args.players, args.warm_up, args.games), checkouts))
    if len({steps for _, steps in counts}) > 1:
        raise SystemExit(f"the checkouts played different games (steps {[s for _, s in counts]}): no comparison")
    print("\n| checkout | agent-steps | instructions | instructions / step | vs first |")
    print("| --- | ---: | ---: | ---: | ---: |")
    first = counts[0][0] / counts[0][1]
    for path, (instructions, steps) in zip(checkouts, counts, strict=True):
        per_step = instructions / steps
        print(f"| {path} | {steps:,} | {instructions:,} | {per_step:,.0f} | {first / per_step:.2f}x |")


if __name__ == "__main__":
    main()
