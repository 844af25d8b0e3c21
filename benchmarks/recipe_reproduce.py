"""A fresh clone reproduces a shipped model with the documented recipe command, into the docs.

Where you are: a long benchmark (the recipe's whole budget: about half an hour of 2 cores per game), never run in
CI. It clones this checkout's ``HEAD`` into a scratch directory, makes a venv there and installs the package as the
README says (``pip install torch==2.13.0 -e ".[train]"``), then, in the clone:

1. ``tableenvs train GAME --recipe RECIPE --out runs/RECIPE`` (the command of docs/training.md for the game's shipped
   model: :data:`RECIPES`), timed (wall clock, and CPU time of the command and its children);
2. ``python benchmarks/trained_vs_heuristic.py --game GAME --spec MODEL --games 2000`` (the test the shipped model
   passed: duplicate deals, every seating, the paired 95% intervals).

It then rewrites the game's block of the docs (named in :data:`RECIPES`) with the commit, the machine, the
times, the run's learning curve (the strong recipe's: ``recipe_curve.table``, each exported model head to head
against the heuristic; a cross-entropy recipe's: its ``progress.jsonl``),
whether the model equals the shipped file, and the head-to-head row, and says whether the reproduced model passes
(the interval of the paired score difference and of the win-rate difference both exclude 0 in its favour).

    python benchmarks/recipe_reproduce.py [--game llama_party_v0] [--games 2000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import children_cpu, write_block
from recipe_curve import table as curve_table

ROOT = Path(__file__).resolve().parent.parent
#: The command that made each game's shipped model: its recipe, the flags beyond ``--out``, where the run writes the
#: model (under ``runs/RECIPE``), and the docs block (docs/training.md or docs/lab/training.md) its reproduction is
#: written into.
RECIPES = {
    "pilipili_v0": ("strong", ("--learner-seats", "3"), "fine-tune/model.npz", "recipe-reproduce-pilipili_v0-strong"),
    "llama_party_v0": ("strong", (), "fine-tune/model.npz", "recipe-reproduce-llama_party_v0-strong"),
    "rummikub_v0": ("holding", (), "model.npz", "recipe-reproduce-rummikub_v0-holding"),
}
#: The player count whose shipped file holds the recipe's weights, where it is not the game's default count: the
#: holding recipe's weights ship at 2 players (``rummikub_v0-2p.npz``, the same arrays under a 2-player header).
SHIPPED_PLAYERS = {"rummikub_v0": 2}


def markers(game: str) -> tuple[str, str]:
    """The markers of ``game``'s block."""
    block = RECIPES[game][3]
    return (
        f"<!-- measured: {block} (python benchmarks/recipe_reproduce.py; machine-dependent, not checked in CI) -->",
        f"<!-- end measured: {block} -->",
    )


def same_as_shipped(game: str, model: Path) -> str:
    """Whether ``model`` holds the shipped model's arrays (each cast to the shipped array's dtype: a model shipped as
    float16 is its run's float32 file converted), the file of :data:`SHIPPED_PLAYERS`' count where it names one: "yes"
    or how far apart they are."""
    import numpy as np

    import tableenvs
    from tableenvs.policies.model_env import model_options
    from tableenvs.policies.numpy_policy import trained_model_path

    players = SHIPPED_PLAYERS.get(game)
    options = None if players is None else model_options(tableenvs.make_raw(game, num_players=players))
    shipped_path = trained_model_path(game, options)
    with np.load(shipped_path, allow_pickle=False) as shipped, np.load(model, allow_pickle=False) as made:
        names = sorted(name for name in shipped.files if name != "header")
        if sorted(name for name in made.files if name != "header") != names:
            return "no (other arrays)"
        if any(shipped[name].shape != made[name].shape for name in names):
            return "no (other shapes)"
        cast = {n: made[n].astype(shipped[n].dtype) for n in names}
        gap = max(float(np.max(np.abs(shipped[n].astype(np.float64) - cast[n].astype(np.float64)))) for n in names)
        converted = any(made[n].dtype != shipped[n].dtype for n in names)
    if gap == 0:
        return "yes, array for array" + (" (the run's weights cast to the shipped file's float16)" if converted else "")
    return f"no: the largest difference of a weight is {gap:.3g}"


def cem_curve(run: Path) -> str:
    """The learning curve of a cross-entropy recipe's run (its ``progress.jsonl``) as a markdown table."""
    lines = [
        "| generation | mean weights − heuristic on the generation's own deals, points a game | best draw |",
        "|---|---|---|",
    ]
    for line in (run / "progress.jsonl").read_text().splitlines():
        entry = json.loads(line)
        lines.append(f"| {entry['generation'] + 1} | {entry['mu_score']:+.2f} | {entry['best_score']:+.2f} |")
    return "\n".join(lines)


def step(argv: list[str], cwd: Path, log: Path) -> tuple[float, float]:
    """Run ``argv`` in ``cwd`` with its output appended to ``log``; return (wall, CPU) seconds; exit if it fails."""
    print(f"$ {shlex.join(argv)}  (output: {log})", file=sys.stderr, flush=True)
    before = children_cpu()
    start = time.perf_counter()
    with log.open("a", encoding="utf-8") as out:
        out.write(f"$ {shlex.join(argv)}\n")
        out.flush()
        status = subprocess.run(argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT).returncode
    wall = time.perf_counter() - start
    cpu = children_cpu() - before
    if status != 0:
        raise SystemExit(f"{shlex.join(argv)} exited {status}; its output is in {log}")
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="llama_party_v0", choices=sorted(RECIPES), help="whose shipped model")
    parser.add_argument("--games", type=int, default=2000, help="games of the head-to-head test (default 2000)")
    parser.add_argument("--keep", type=Path, help="clone into this new directory and keep it (default: a temp dir)")
    parser.add_argument("--no-write", action="store_true", help="print the block, leave the docs alone")
    args = parser.parse_args()

    revision = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    scratch = args.keep or Path(tempfile.mkdtemp(prefix="recipe-reproduce-"))
    clone = scratch / "tableenvs"
    log = scratch / "log.txt"
    load = os.getloadavg()[0]
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "checkout", "--quiet", revision], cwd=clone, check=True)
    python = clone / ".venv" / "bin" / "python"
    parts = [
        step(["python3", "-m", "venv", ".venv"], clone, log),
        step([str(python), "-m", "pip", "install", "--quiet", "--upgrade", "pip"], clone, log),
        step([str(python), "-m", "pip", "install", "--quiet", "torch==2.13.0", "-e", ".[train]"], clone, log),
    ]
    install = (sum(wall for wall, _ in parts), sum(cpu for _, cpu in parts))
    recipe, flags, made, _ = RECIPES[args.game]
    train_command = ["tableenvs", "train", args.game, "--recipe", recipe, *flags, "--out", f"runs/{recipe}"]
    train = step([str(python.with_name("tableenvs")), *train_command[1:]], clone, log)
    model = f"runs/{recipe}/{made}"
    test_command = [
        "python",
        "benchmarks/trained_vs_heuristic.py",
        *("--game", args.game, "--spec", model, "--games", str(args.games)),
        *("--workers", "2", "--out", "runs/test"),
    ]
    test = step([str(python), *test_command[1:]], clone, log)
    (row,) = [json.loads(path.read_text()) for path in (clone / "runs" / "test").glob("*.json")]
    better = "more is better" if row["higher_is_better"] else "fewer is better"
    # the score's interval lies wholly on the model's side of 0, and so does the win rate's
    ahead = row["score_diff_low"] > 0 if row["higher_is_better"] else row["score_diff_high"] < 0
    passes = ahead and row["win_diff_low"] > 0
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    text = "\n".join(
        [
            f"Run by `python benchmarks/recipe_reproduce.py --game {args.game} --games {args.games}`, finished {date}: "
            f"a fresh clone of commit `{revision[:7]}`, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"load average {load:.1f} at the start and {os.getloadavg()[0]:.1f} at the end (other jobs shared the "
            "machine when it was above 2).",
            "",
            "| step | command (in the clone) | wall | CPU |",
            "|---|---|---|---|",
            f'| install | a venv, then `pip install torch==2.13.0 -e ".[train]"` | {install[0] / 60:.1f} min | '
            f"{install[1] / 60:.1f} min |",
            f"| recipe | `{shlex.join(train_command)}` | {train[0] / 60:.1f} min | {train[1] / 60:.1f} min |",
            f"| test | `{shlex.join(test_command)}` | {test[0] / 60:.1f} min | {test[1] / 60:.1f} min |",
            "",
            *([curve_table(args.game, clone / "runs" / "strong", 1000), ""] if recipe == "strong" else []),
            *([cem_curve(clone / "runs" / recipe), ""] if recipe != "strong" else []),
            f"The same as the shipped model (`tableenvs/models/`): {same_as_shipped(args.game, clone / model)}.",
            "",
            f"The test, the reproduced model − the heuristic over {row['games']:,} games ({row['blocks']} blocks of "
            f"duplicate deals): {row['score_diff']:+.2f} [{row['score_diff_low']:+.2f}, {row['score_diff_high']:+.2f}] "
            f"{row['score_name']} a game ({better}), win rate {row['win_diff']:+.3f} [{row['win_diff_low']:+.3f}, "
            f"{row['win_diff_high']:+.3f}]: "
            + (
                "**passes** (both intervals exclude 0 in the model's favour)."
                if passes
                else "**does not pass** (an interval includes 0 or favours the heuristic)."
            ),
        ]
    )
    print(text)
    if not args.no_write:
        write_block(*markers(args.game), text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
