"""The measured transcripts of docs/training.md, run as written and rewritten into the page.

Where you are: a benchmark script (training times depend on the machine, so these blocks are never checked in CI;
the seeded tables of the docs are, by ``docs/generate.py``). Each case runs the page's commands in a scratch
directory as a user would, in subprocesses, and rewrites its block of docs/training.md, between::

    <!-- measured: training-CASE (python benchmarks/training_transcripts.py CASE; machine-dependent, ...) -->
    <!-- end measured: training-CASE -->

with the date, the commit, the core count and the load average at the start and the end. The cases:

* ``progress`` — the head of a ``tableenvs train`` run's output (the ``masks`` case's MaskablePPO command), up to
  its first periodic checkpoint.
* ``resumed`` — ``tableenvs train`` sent SIGINT 3 s after its first periodic checkpoint, then ``--resume``d to its
  budget; beside it the same command uninterrupted, and their learning curves side by side.
* ``masks`` — the same training with ``--algo maskable_ppo`` and ``--algo ppo`` (illegal actions replaced), their
  figures in one table, then the page's tournament snippet (the python block after "Both trained models") run on
  the two models.
* ``rllib`` — the page's ``--backend rllib`` command in the RLlib venv (``.venv-rllib`` of the checkout, made as
  ``.ci/run`` makes it), twice with the same seed (does it reproduce?), then ``tableenvs eval`` of the exported
  ``policy.pt`` in this venv.

    python benchmarks/training_transcripts.py               # every case (about 15 minutes on 2 cores)
    python benchmarks/training_transcripts.py resumed masks # the named cases
    python benchmarks/training_transcripts.py --no-write    # print the blocks only
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from common import children_cpu, commit_label, replace_block

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "training.md"
TABLEENVS = str(Path(sys.executable).with_name("tableenvs"))
RLLIB_PYTHON = ROOT / ".venv-rllib" / "bin" / "python"
#: The page's tournament of the two models of the ``masks`` case: the python block after this sentence.
MASKS_SNIPPET = re.compile(r"Both trained models then met.*?```python\n(.*?)```", re.S)

RESUMED = (
    "train pilipili_v0 --players 3 --timesteps 30000 --checkpoint-every 10000 --eval-every 10000 --eval-games 200 "
    "--final-games 500 --seed 0 --no-progress --out runs/{out}"
)
MASKS = (
    "train pilipili_v0 --players 3 --algo {algo} --timesteps 40000 --eval-every 10000 --eval-games 200 "
    "--final-games 500 --seed 0 --no-progress --out runs/{algo}"
)
RLLIB = "train pilipili_v0 --backend rllib --players 3 --timesteps 20000 --final-games 300 --out runs/{out}"
RLLIB_EVAL = "eval pilipili_v0 --policies runs/rllib/policy.pt,heuristic,random --games 300"


class Run:
    """One command run in ``cwd``: its printed lines, exit status, wall and CPU seconds (the process and its
    children, from ``getrusage``). ``interrupt_after`` (a line prefix, seconds): send SIGINT that long after the
    first line starting with the prefix, as Ctrl-C would."""

    def __init__(self, argv: list[str], cwd: Path, interrupt_after: tuple[str, float] | None = None) -> None:
        print(f"  $ {shlex.join(argv)}", file=sys.stderr, flush=True)
        self.argv = argv
        before = children_cpu()
        start = time.perf_counter()
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        errors: list[str] = []
        reader = threading.Thread(target=lambda: errors.extend(process.stderr), daemon=True)
        reader.start()
        self.lines: list[str] = []
        timer = None
        for line in process.stdout:
            self.lines.append(line.rstrip("\n"))
            if interrupt_after and timer is None and line.startswith(interrupt_after[0]):
                timer = threading.Timer(interrupt_after[1], process.send_signal, (signal.SIGINT,))
                timer.start()
        self.status = process.wait()
        reader.join()
        self.wall = time.perf_counter() - start
        self.cpu = children_cpu() - before
        self.errors = "".join(errors)
        expected = 130 if interrupt_after else 0
        if self.status != expected:
            raise SystemExit(
                f"{shlex.join(argv)} exited {self.status} (expected {expected}):\n"
                + "\n".join(self.lines[-30:])
                + self.errors[-3000:]
            )

    def transcript(self, program: str) -> str:
        """``$ command`` then its output, the program named as a user types it."""
        return "\n".join([f"$ {program} {shlex.join(self.argv[1:])}", *self.lines])


def results(scratch: Path, out: str) -> dict:
    return json.loads((scratch / "runs" / out / "results.json").read_text(encoding="utf-8"))


def curve(result: dict) -> dict[int, float]:
    """Step -> win rate of the periodic evaluations of a run's ``results.json``."""
    return {entry["timesteps"]: entry["win_rate"] for entry in result["history"]}


def final_row(result: dict, opponents: str, agent: str) -> dict:
    (row,) = (r for r in result["final"] if r["opponents"] == opponents and r["agent"] == agent)
    return row


def case_resumed(scratch: Path) -> str:
    first = Run([TABLEENVS, *RESUMED.format(out="resumed").split()], scratch, ("checkpoint (periodic)", 3.0))
    resumed = Run([TABLEENVS, "train", "--resume", "runs/resumed", "--no-progress"], scratch)
    whole = Run([TABLEENVS, *RESUMED.format(out="uninterrupted").split()], scratch)
    record = results(scratch, "resumed")
    stopped = [line for line in first.lines if line.startswith("checkpoint (")][-1]
    interrupted_at = re.search(r"at step ([\d,]+)", stopped).group(1)
    rows = ["| step | uninterrupted | interrupted, then resumed |", "|---:|---:|---:|"]
    reference, after = curve(results(scratch, "uninterrupted")), curve(record)
    for step in sorted(set(reference) | set(after)):
        cells = [f"{c[step]:.3f}" if step in c else "—" for c in (reference, after)]
        rows.append(f"| {step:,} | {cells[0]} | {cells[1]} |")
    return "\n".join(
        [
            "```",
            first.transcript("tableenvs"),
            "$ echo $?",
            str(first.status),
            resumed.transcript("tableenvs"),
            "```",
            "",
            f"* The interrupted part took {first.wall:.1f} s wall ({first.cpu:.1f} s CPU) and saved its last "
            f"checkpoint at step {interrupted_at}; the resume took {resumed.wall:.1f} s wall ({resumed.cpu:.1f} s CPU) "
            f'and ran to step {record["timesteps"]:,}. `results.json` says `"timesteps": {record["timesteps"]}, '
            f'"interruptions": {record["interruptions"]}, "resumes": {record["resumes"]}`.',
            f"* The same command uninterrupted ({whole.wall:.1f} s wall) ended at step "
            f"{results(scratch, 'uninterrupted')['timesteps']:,}. Win rate against random opponents at each periodic "
            "evaluation (201 games each):",
            "",
            *rows,
        ]
    )


def masks_snippet() -> str:
    found = MASKS_SNIPPET.search(DOCS.read_text(encoding="utf-8"))
    if found is None:
        raise SystemExit(f"{DOCS}: no python block after 'Both trained models then met'")
    return found.group(1)


def case_masks(scratch: Path) -> str:
    runs = {algo: Run([TABLEENVS, *MASKS.format(algo=algo).split()], scratch) for algo in ("maskable_ppo", "ppo")}
    record = {algo: results(scratch, algo) for algo in runs}
    (scratch / "tournament.py").write_text(masks_snippet(), encoding="utf-8")
    tournament = Run([sys.executable, "tournament.py"], scratch)

    def each(cell) -> str:
        return " | ".join(cell(algo) for algo in runs)

    def final(algo: str, agent: str, key: str, digits: int) -> str:
        row = final_row(record[algo], "random", agent)
        return f"{row[key]:.{digits}f} [{row[key + '_low']:.{digits}f}, {row[key + '_high']:.{digits}f}]"

    def timing(algo: str) -> str:
        r = record[algo]
        return (
            f"{runs[algo].wall:.1f} s ({runs[algo].cpu:.1f} s): {r['train_seconds']:.0f} s training, "
            f"{r['eval_seconds']:.0f} s final evaluation"
        )

    def illegal(algo: str) -> str:
        if algo == "maskable_ppo":
            return "none (masked)"
        return f"{100 * record[algo]['illegal_action_rate']:.1f}% (replaced by a random legal action)"

    def periodic(algo: str) -> str:
        return " / ".join(f"{rate:.3f}" for rate in curve(record[algo]).values())

    def baseline(algo: str, agent: str) -> str:
        row = final_row(record[algo], "random", agent)
        return f"{row['win_rate']:.3f}, {row['mean_score']:.2f} chilis"

    steps = " / ".join(f"{step / 1000:.0f}k" for step in curve(record["maskable_ppo"]))
    return "\n".join(
        [
            "| | MaskablePPO | PPO (illegal actions replaced) |",
            "|---|---|---|",
            f"| wall time (CPU time) | {each(timing)} |",
            f"| learner actions that were illegal | {each(illegal)} |",
            f"| periodic evaluation, win rate at {steps} steps (201 games each) | {each(periodic)} |",
            "| final table vs random opponents, win rate [95% CI] | "
            f"{each(lambda a: final(a, 'trained', 'win_rate', 3))} |",
            f"| final table vs random opponents, chilis per game [95% CI] (fewer is better) | "
            f"{each(lambda a: final(a, 'trained', 'mean_score', 2))} |",
            f"| random agent in the same seats on the same deals | {each(lambda a: baseline(a, 'random'))} |",
            f"| heuristic in the same seats on the same deals | {each(lambda a: baseline(a, 'heuristic'))} |",
            "",
            f"The tournament snippet above, run on the two models ({tournament.wall:.0f} s wall):",
            "",
            "```",
            *tournament.lines,
            "```",
        ]
    )


def progress(line: str) -> tuple[str, str]:
    """An RLlib iteration line's games so far and mean returns (its times left out): what a rerun should repeat."""
    games = re.search(r"(\d+) games", line)
    return (games.group(1) if games else "", line.split(";", 1)[-1])


def case_rllib(scratch: Path) -> str:
    if not RLLIB_PYTHON.exists():
        raise SystemExit(
            f"{RLLIB_PYTHON} is missing: make the RLlib venv as .ci/run does (python3 -m venv .venv-rllib; "
            '.venv-rllib/bin/python -m pip install torch==2.13.0 -e ".[rllib]") and run again'
        )
    rllib_tableenvs = str(RLLIB_PYTHON.with_name("tableenvs"))
    runs = [Run([rllib_tableenvs, *RLLIB.format(out=out).split()], scratch) for out in ("rllib", "rllib-again")]
    table = Run([TABLEENVS, *RLLIB_EVAL.split()], scratch)
    first, again = ([progress(line) for line in run.lines if line.startswith("iteration ")] for run in runs)
    steps = json.loads((scratch / "runs" / "rllib" / "results.json").read_text(encoding="utf-8"))
    same = [i + 1 for i, (a, b) in enumerate(zip(first, again, strict=True)) if a == b]
    repeat = (
        f"the second run with the same seed printed the same games and returns at iteration(s) "
        f"{', '.join(map(str, same))} of {len(first)}"
        if same
        else f"the second run with the same seed printed other games or returns at every one of its {len(first)} "
        "iterations"
    )
    return "\n".join(
        [
            "```text",
            runs[0].transcript(".venv-rllib/bin/tableenvs"),
            table.transcript("tableenvs"),
            "```",
            "",
            f"The training command took {runs[0].wall:.0f} s wall with Ray's start and the final table "
            f"({steps['env_steps']:,} env steps); {repeat}. The eval command ran in this (main) venv, "
            f"without Ray, in {table.wall:.0f} s.",
        ]
    )


def case_progress(scratch: Path) -> str:
    """The head of a run's output: the header, the first evaluations and the first periodic checkpoint."""
    run = Run([TABLEENVS, *MASKS.format(algo="maskable_ppo").split()], scratch)
    head = []
    for line in run.lines:
        head.append(line)
        if line.startswith("checkpoint (periodic)"):
            break
    return "\n".join(["```", *head, "```"])


CASES = {"progress": case_progress, "resumed": case_resumed, "masks": case_masks, "rllib": case_rllib}


def block(case: str, revision: str) -> str:
    with tempfile.TemporaryDirectory(prefix=f"training-{case}-") as scratch:
        print(f"{case}: running in {scratch}", file=sys.stderr, flush=True)
        load = os.getloadavg()[0]
        body = CASES[case](Path(scratch))
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    head = (
        f"Run by `python benchmarks/training_transcripts.py {case}` on {date}, commit {revision}, "
        f"{os.cpu_count()} cores, load average {load:.1f} at the start and {os.getloadavg()[0]:.1f} at the end "
        "(times depend on the machine and its load):"
    )
    return f"{head}\n\n{body}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", metavar="CASE", help=f"cases to run, of {', '.join(CASES)} (default: all)")
    parser.add_argument("--no-write", action="store_true", help="print the blocks, leave docs/training.md alone")
    args = parser.parse_args(argv)
    unknown = [case for case in args.cases if case not in CASES]
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}: the cases are {', '.join(CASES)}")
    revision = commit_label()  # before this run rewrites docs/training.md
    for case in args.cases or list(CASES):
        text = block(case, revision)
        print(text, flush=True)
        if not args.no_write:
            replace_block(
                DOCS,
                f"<!-- measured: training-{case} (python benchmarks/training_transcripts.py {case}; "
                "machine-dependent, not checked in CI) -->",
                f"<!-- end measured: training-{case} -->",
                text,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
