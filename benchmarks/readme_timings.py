"""How long the README's long commands and snippets take, at their full budgets, written into docs/development.md.

Where you are: a benchmark script (machine-dependent figures, so never checked in CI). Each case runs as a user
would run it, in a scratch directory, in a subprocess of this venv: the README's Stable-Baselines3 block (taken
from README.md as it stands, run as a script), the quick start's ``tableenvs train pilipili_v0`` command, the
test command's install into a fresh venv and its ``python -m pytest -q`` (in the checkout; the row also gives
pytest's count), and
what ``.ci/run`` does after it: ``python -m mypy`` with no cache (cold), making the RLlib venv in a scratch directory
(with pip's download cache as it is on the machine), and the RLlib tests in the checkout's ``.venv-rllib`` (made as
``.ci/run`` makes it; the case says so if it is missing).
Wall time and CPU time (the subprocess and its children) are printed as a table and written, with the date, the
machine's core count and its load average at the start and at the end, into docs/development.md's ``measured:
readme-timings`` block (the README links it); the load says whether other work shared the machine (CPU time depends
on that far less
than wall time).

    python benchmarks/readme_timings.py                 # every case, then rewrite the table in docs/development.md
    python benchmarks/readme_timings.py --only sb3      # one case; the block keeps the others' last figures
    python benchmarks/readme_timings.py --no-write      # print only
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import children_cpu

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: Where the table lives (the README links it): the maintainers' page.
TABLE = ROOT / "docs" / "development.md"
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)
BLOCK = re.compile(r"(<!-- measured: readme-timings [^\n]*-->\n)(.*?)(\n?<!-- end measured: readme-timings -->)", re.S)
END = "<!-- end measured: readme-timings -->"
ROW = re.compile(r"^\| `(?P<case>[a-z0-9-]+)` \|.*$", re.M)


def sb3_block() -> str:
    """The README's Stable-Baselines3 block (the one that calls ``MaskablePPO(...).learn``)."""
    found = [code for code in FENCE.findall(README.read_text(encoding="utf-8")) if "MaskablePPO(" in code]
    if len(found) != 1:
        raise SystemExit(f"README.md: expected one python block calling MaskablePPO(, found {len(found)}")
    return found[0]


def tableenvs_command() -> str:
    return str(Path(sys.executable).with_name("tableenvs"))


#: case -> (what the README calls it, how to run it in a scratch directory)
CASES = {
    "sb3": ("the Stable-Baselines3 block (`learn(50_000)`, 4 envs)", lambda: [sys.executable, "snippet.py"]),
    "quick-start": (
        "the quick start's `tableenvs train pilipili_v0 --out runs/quick`",
        lambda: [tableenvs_command(), "train", "pilipili_v0", "--out", "runs/quick"],
    ),
    "tests": (
        "the test command's `python -m pytest -q` (after the install)",
        lambda: [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(ROOT / "tests")],
    ),
    "install": (
        'the test command\'s install into a fresh venv: `pip install torch==2.13.0 -e ".[dev,train,render]"` '
        "(pip's cache as found)",
        lambda: fresh_venv_install("dev,train,render"),
    ),
    "mypy": (
        "`.ci/run`'s `python -m mypy`, cold (no cache)",
        lambda: [sys.executable, "-m", "mypy", "--cache-dir", os.devnull],
    ),
    "rllib-venv": (
        '`.ci/run`\'s RLlib venv: `python3 -m venv`, then `pip install torch==2.13.0 -e ".[rllib]"` '
        "(pip's cache as found)",
        lambda: fresh_venv_install("rllib"),
    ),
    "rllib-tests": (
        "`.ci/run`'s RLlib tests: `.venv-rllib/bin/python -m pytest -q -n 0 tests_rllib`",
        lambda: [str(rllib_python()), "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "tests_rllib"],
    ),
}
#: The cases run in the checkout rather than in a scratch directory (pytest and mypy read the project's settings).
IN_CHECKOUT = {"tests", "mypy", "rllib-tests"}


def fresh_venv_install(extras: str) -> list[str]:
    """A new venv in the scratch directory, pip upgraded, then the checkout installed with ``extras``."""
    return [
        "bash",
        "-c",
        "python3 -m venv venv && venv/bin/python -m pip install --quiet --upgrade pip && "
        f"venv/bin/python -m pip install --quiet torch==2.13.0 -e '{ROOT}[{extras}]'",
    ]


def rllib_python() -> Path:
    python = ROOT / ".venv-rllib" / "bin" / "python"
    if not python.exists():
        raise SystemExit(
            f"{python} is missing: make the RLlib venv as .ci/run does (python3 -m venv .venv-rllib; "
            '.venv-rllib/bin/python -m pip install torch==2.13.0 -e ".[rllib]" "pytest>=8" "pytest-xdist>=3.5")'
        )
    return python


#: pytest's closing line ("2130 passed, 3 skipped in 549.12s"), whose counts the tests row gives.
PYTEST_SUMMARY = re.compile(r"^=*\s*(\d+ passed.*?) in [\d.]+s", re.M)


def run_case(case: str) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"readme-{case}-") as scratch:
        (Path(scratch) / "snippet.py").write_text(sb3_block(), encoding="utf-8")
        load_start = os.getloadavg()[0]
        before = children_cpu()
        start = time.perf_counter()
        print(f"{case}: running {' '.join(CASES[case][1]())} ...", file=sys.stderr, flush=True)
        cwd = ROOT if case in IN_CHECKOUT else scratch
        env = {**os.environ, "TABLEENVS_MAIN_PYTHON": sys.executable}  # the RLlib tests play in this venv too
        done = subprocess.run(CASES[case][1](), cwd=cwd, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        cpu = children_cpu() - before
    if done.returncode != 0:
        raise SystemExit(f"{case} failed (exit {done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    result = {"case": case, "wall_s": wall, "cpu_s": cpu, "load_start": load_start, "load_end": os.getloadavg()[0]}
    summary = PYTEST_SUMMARY.search(done.stdout)
    if summary is not None:
        result["counts"] = summary.group(1)
    return result


def row(result: dict, date: str) -> str:
    label = CASES[result["case"]][0]
    if "counts" in result:
        label += f": {result['counts']}"
    return (
        f"| `{result['case']}` | {label} | {result['wall_s'] / 60:.1f} min | {result['cpu_s'] / 60:.1f} min | "
        f"{date}, {os.cpu_count()} cores, load average {result['load_start']:.1f} at the start, "
        f"{result['load_end']:.1f} at the end |"
    )


def rewrite(rows: dict[str, str]) -> None:
    from tableenvs.paths import write_text_atomic

    text = TABLE.read_text(encoding="utf-8")
    match = BLOCK.search(text)
    if match is None:
        raise SystemExit(f"{TABLE.relative_to(ROOT)} has no <!-- measured: readme-timings --> block")
    kept = {m["case"]: m.group(0) for m in ROW.finditer(match.group(2))}
    kept.update(rows)
    header = "| case | what | wall time | CPU time | measured |\n|---|---|---|---|---|"
    body = "\n".join(kept[case] for case in CASES if case in kept)
    write_text_atomic(TABLE, text[: match.start(2)] + f"{header}\n{body}\n" + text[match.end(3) - len(END) :])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=list(CASES), action="append", help="run only these cases (repeatable)")
    parser.add_argument("--no-write", action="store_true", help="print the table, leave docs/development.md alone")
    parser.add_argument(
        "--from-log",
        metavar="FILE",
        help="write the table from the JSON result lines an earlier run printed (its stderr), running nothing",
    )
    args = parser.parse_args(argv)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    rows = {}
    earlier = {}
    if args.from_log:
        for line in Path(args.from_log).read_text(encoding="utf-8").splitlines():
            if line.startswith("{"):
                result = json.loads(line)
                earlier[result["case"]] = result
        date = datetime.datetime.fromtimestamp(Path(args.from_log).stat().st_mtime, datetime.timezone.utc)
        date = date.strftime("%Y-%m-%d")
    for case in args.only or list(earlier or CASES):
        result = earlier[case] if args.from_log else run_case(case)
        rows[case] = row(result, date)
        print(rows[case], flush=True)
        print(json.dumps(result), file=sys.stderr)
    if not args.no_write:
        rewrite(rows)
        print(f"wrote {TABLE.relative_to(ROOT)} (measured: readme-timings)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
