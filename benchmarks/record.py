"""Run the benchmarks of docs/benchmarks.md and rewrite their blocks there: one command regenerates every table.

Where you are: the recorder of docs/benchmarks.md's "Current figures" and of the OpenSpiel demo in docs/openspiel.md
(no measured table is copied by hand). Each record is one benchmark script with the arguments below; it
runs in a subprocess of this venv from ``benchmarks/``, and what it prints goes, with the command, the date, the
commit, the machine (cores, Python) and the load average at the start and the end, between the markers::

    <!-- measured: bench-NAME (python benchmarks/record.py NAME; machine-dependent, not checked in CI) -->
    <!-- end measured: bench-NAME -->

The figures depend on the machine and its load, so CI never checks them (the seeded tables of the docs are checked,
by ``docs/generate.py``). Every script compares against its peer in the same run and prints ratios, which move far
less with the load than the rates do.

    python benchmarks/record.py                     # every record, in order (about 40 minutes on 2 cores)
    python benchmarks/record.py pilipili-env search # the named records
    python benchmarks/record.py --list

Five records run scripts that rewrite their own marked blocks (``--write-docs``: rollout_step,
training_throughput, numpy_policy_speed, turn_choices, bench_vector); record.py only runs them. ``benchmarks/web_load.py
--write`` appends its own dated section.
    python benchmarks/record.py --no-write pictures  # print only
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

from common import commit_label, replace_block

HERE = Path(__file__).resolve().parent
DOCS = HERE.parent / "docs" / "benchmarks.md"

#: A record whose script writes its own block (its ``--write-docs``), with its own date and command line.
SELF = "self"
#: name -> (what it measures, the script and its arguments[, SELF][, the page under docs/ if not benchmarks.md]).
#: The order is the page's.
RECORDS: dict[str, tuple] = {
    "rummikub-solver": (
        "the Rummikub solver against rummikub-solver's ILP on 300 seeded mid-game positions",
        ["bench_rummikub_solver.py"],
    ),
    "pilipili-env": (
        "Pili Pili random play through the AEC API against OpenSpiel's oh_hell",
        ["bench_pilipili.py", "--seconds", "2", "--repeats", "3"],
    ),
    "llama-party-env": (
        "Llama Party random play through the AEC API against PettingZoo's leduc_holdem_v4",
        ["bench_llama_party.py", "--seconds", "3", "--repeats", "5"],
    ),
    "rummikub-env": (
        "Rummikub random play, step times and CPU shares",
        ["bench_rummikub_env.py", "--games", "200"],
    ),
    "wrappers": (
        "what the PettingZoo wrappers cost per step",
        ["bench_wrappers.py", "--seconds", "1", "--repeats", "4"],
    ),
    "rummikub-limits": (
        "Rummikub's worst steps and peak memory per rule option",
        ["bench_rummikub_limits.py", "--games", "40", "--limit-mb", "6000"],
    ),
    "evaluation": ("tournaments: games per second against a plain loop", ["bench_evaluation.py", "--repeats", "3"]),
    "duplicate": (
        "duplicate deals against fresh deals: interval widths",
        ["bench_duplicate.py", "--games", "2000"],
    ),
    "state": ("get_state / from_state / clone per game", ["bench_state.py"]),
    "pictures": ("pictures (SVG, PNG) per game", ["bench_render.py"]),
    "search": ("search simulations per CPU second", ["bench_search.py", "--positions", "12", "--sims", "30"]),
    "worlds": (
        "sampled worlds: consistency with the public history, leaks, twins",
        ["world_consistency.py", "--worlds", "100000", "--budget", "150"],
    ),
    "openspiel-demo": (
        "OpenSpiel's IS-MCTS on each game through the bridge, against random and the heuristic",
        ["openspiel_demo.py"],
        "openspiel.md",
    ),
    "rollout-step": (
        "search rollouts with the checked and the trusted step",
        ["rollout_step.py", "--positions", "12", "--write-docs"],
        SELF,
    ),
    "training-throughput": (
        "training samples per CPU-second, the recipe against tableenvs train",
        ["training_throughput.py", "--steps", "20480", "--write-docs"],
        SELF,
    ),
    "numpy-policy": (
        "one numpy policy decision against a bare forward pass and SB3",
        ["numpy_policy_speed.py", "--hidden", "256,256", "--write-docs"],
        SELF,
    ),
    "turn-choices": (
        "what Rummikub's whole-turn search chooses at 2 and 4 players",
        ["turn_choices.py", "--games", "30", "--write-docs"],
        SELF,
        "agents.md",
    ),
    "vector": (
        "batched engines against the wrapped env and OpenSpiel's C++ games, and memory over 100,000 games",
        ["bench_vector.py", "--seconds", "2", "--games", "100000", "--write-docs"],
        SELF,
    ),
    "fuzz": (
        "random and adversarial games checked against every invariant, 5 minutes",
        ["fuzz.py", "--minutes", "5", "--replays", "2", "--no-progress"],
    ),
}


#: The peers the records compare against (the ``bench`` extra): a record without its peer row would be misleading.
PEERS = {"pyspiel": "open-spiel", "rummikub_solver": "rummikub-solver", "rlcard": "rlcard", "pygame": "pygame"}


def missing_peers() -> list[str]:
    import importlib.util

    return [package for module, package in PEERS.items() if importlib.util.find_spec(module) is None]


def page(name: str) -> Path:
    """The docs page a record's block lives in (docs/benchmarks.md unless the record names another; a SELF record
    names it after SELF)."""
    named = [part for part in RECORDS[name][2:] if part != SELF]
    return DOCS.with_name(named[0]) if named else DOCS


def markers(name: str) -> tuple[str, str]:
    return (
        f"<!-- measured: bench-{name} (python benchmarks/record.py {name}; machine-dependent, not checked in CI) -->",
        f"<!-- end measured: bench-{name} -->",
    )


def run(name: str, revision: str) -> str:
    """Run one record's script and return its block's text; exit with its output if it fails."""
    what, argv = RECORDS[name][:2]
    command = f"python benchmarks/{shlex.join(argv)}"
    print(f"{name}: {command} ...", file=sys.stderr, flush=True)
    load = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *argv], cwd=HERE, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{command} failed (exit {done.returncode}):\n{done.stdout[-4000:]}{done.stderr[-4000:]}")
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    head = (
        f"`{command}` ({what}), {date}, commit {revision}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, load average {load:.1f} at the start and {os.getloadavg()[0]:.1f} at "
        f"the end, {wall:.0f} s."
    )
    return f"{head}\n\n```text\n{done.stdout.rstrip()}\n```"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help="records to run (default: all; see --list)")
    parser.add_argument("--list", action="store_true", help="name each record and its command, run nothing")
    parser.add_argument("--no-write", action="store_true", help="print the blocks, leave docs/benchmarks.md alone")
    args = parser.parse_args(argv)
    if args.list:
        for name, (what, script, *_) in RECORDS.items():
            print(f"{name:19}  python benchmarks/{shlex.join(script)}  ({what}; docs/{page(name).name})")
        return 0
    unknown = [name for name in args.names if name not in RECORDS]
    if unknown:
        parser.error(f"unknown record(s) {', '.join(unknown)}: the records are {', '.join(RECORDS)}")
    missing = missing_peers()
    if missing:
        raise SystemExit(
            f"the peers {', '.join(missing)} are not installed, so the tables would lack their rows: "
            'pip install -e ".[bench]" first'
        )
    revision = commit_label(":/", ":!/docs")  # the block's own page being rewritten is not a change
    for name in args.names or list(RECORDS):
        if len(RECORDS[name]) > 2 and RECORDS[name][2] == SELF:
            if not args.no_write:  # the script rewrites its own block; with --no-write it is skipped
                print(run(name, revision), flush=True)
            continue
        text = run(name, revision)
        print(text, flush=True)
        if not args.no_write:
            replace_block(page(name), *markers(name), text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
