"""Evidence that the plain training job learns: the block of docs/training.md "Evidence that it learns".

For each game chosen, one ``tableenvs train`` run with the settings of that section (MaskablePPO with the defaults,
against random opponents, seed 0) in a fresh output directory, timed (wall, and CPU of the training process);
then its ``results.json`` is kept under ``--out`` (default ``benchmarks/results/training_evidence``, committed) with
the command, the time, the commit and the machine, and its learning curve goes to ``docs/img/training_<game>.png``
(the game's name without ``_v0``).
``--write-docs`` rewrites the marked block of docs/training.md from every kept run: the runs' table, and per game the
curve, the final table exactly as ``tableenvs train`` prints it (:func:`tableenvs.training.reports.format_table`)
and sentences read off it. So no figure in that block is typed by hand, and a change of the job's output shows
there the next time the runs are made.

The self-play example (``examples/self_play.py``) is one more run: its printed table is kept as printed.

Run: ``python benchmarks/training_evidence.py [--game pilipili_v0 ...] [--write-docs]`` (about 30 CPU minutes for
all five runs on this project's 2-core machine); ``--docs-only`` rewrites the docs from the kept runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

from common import children_cpu, replace_block

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "training.md"
IMAGES = ROOT / "docs" / "img"
BEGIN = "<!-- training_evidence: begin (written by benchmarks/training_evidence.py --write-docs) -->"
END = "<!-- training_evidence: end -->"

#: The runs: each game's ``tableenvs train`` flags (after the game's name), and what the section calls it.
RUNS = {
    "pilipili_v0": (
        "Pili Pili, 5 players, standard missions, expert",
        "--timesteps 100000 --eval-every 10000 --eval-games 200 --final-games 1000 --seed 0",
    ),
    "llama_party_v0": (
        "Llama Party, 4 players",
        "--timesteps 300000 --eval-every 25000 --eval-games 200 --final-games 500 --seed 0",
    ),
    "rummikub_v0": (
        "Rummikub, 4 players, default rules",
        "--timesteps 50000 --eval-every 10000 --eval-games 100 --final-games 500 --seed 0",
    ),
    "quick_start": ("the README's quick start (Pili Pili, the job's defaults)", ""),
    "self_play": (
        "self-play (Pili Pili, examples/self_play.py)",
        "pilipili_v0 --timesteps 60000 --snapshot-every 15000 --games 500 --seed 0",
    ),
}
#: Runs of an example script rather than ``tableenvs train``: the table it prints is kept as printed.
EXAMPLES = {"self_play": "examples/self_play.py"}


def run(name: str, out: Path, scratch: Path) -> dict:
    """Make one run in a fresh directory under ``scratch``; keep its results with how it was made."""
    label, flags = RUNS[name]
    game = name if name in ("pilipili_v0", "llama_party_v0", "rummikub_v0") else "pilipili_v0"
    directory = scratch / name
    shutil.rmtree(directory, ignore_errors=True)
    if name in EXAMPLES:
        command = f"python {EXAMPLES[name]} {flags} --out runs/{name}"
        argv = [sys.executable, str(ROOT / EXAMPLES[name]), *flags.split(), "--out", str(directory)]
    else:
        command = f"tableenvs train {game} {flags} --no-progress --out runs/{name}".replace("  ", " ")
        argv = [sys.executable, "-m", "tableenvs.cli", "train", game, *flags.split(), "--no-progress"]
        argv += ["--out", str(directory)]
    print(f"# {name}: {command}", flush=True)
    before, wall = children_cpu(), time.time()
    printed = subprocess.run(argv, check=True, stdout=subprocess.PIPE, text=True).stdout
    cpu, wall = children_cpu() - before, time.time() - wall
    print(printed, flush=True)
    if name in EXAMPLES:  # its table: what it printed after saving the model
        results = {"printed": printed.split("\n\n", 1)[1].strip() if "\n\n" in printed else printed.strip()}
    else:
        results = json.loads((directory / "results.json").read_text())
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    kept = {
        "name": name,
        "label": label,
        "game": game,
        "command": command,
        "wall_seconds": wall,
        "cpu_seconds": cpu,
        "commit": commit.stdout.strip() or "unknown",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {_cores()} cores, load average {_load()} at the end",
        "python": platform.python_version(),
        "results": results,
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(kept, indent=1))
    if name == game:
        shutil.copyfile(directory / "curve.png", IMAGES / _image(game))
    return kept


def _image(game: str) -> str:
    return f"training_{game.removesuffix('_v0')}.png"


def _cores() -> int:
    return os.cpu_count() or 0


def _load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def _interval(row: dict, key: str, digits: int = 2) -> str:
    f = f"+.{digits}f" if key != "win_rate" else ".3f"
    return f"{row[key]:{f}} [{row[key + '_low']:{f}}, {row[key + '_high']:{f}}]"


def _minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {int(seconds % 60)} s"


def sentences(final: list[dict]) -> list[str]:
    """What the final table says, read off it: the trained agent against a random and a heuristic player in the
    same seats, per kind of opponents, with the paired difference and its direction."""
    lines = []
    score = final[0]["score_name"]
    better = "more" if final[0].get("higher_is_better", True) else "fewer"
    key = "mean_score" if score != "reward" else "mean_reward"
    for opponents in dict.fromkeys(row["opponents"] for row in final):
        rows = {row["agent"]: row for row in final if row["opponents"] == opponents}
        trained = rows["trained"]
        for other in ("random", "heuristic"):
            if other not in rows:
                continue
            row = rows[other]
            low, high = row["trained_minus_this_score_diff_low"], row["trained_minus_this_score_diff_high"]
            diff = row["trained_minus_this_score_diff"]
            ahead = (diff > 0) == (better == "more")
            shown = low > 0 or high < 0
            verdict = ("ahead of" if ahead else "behind") if shown else "not shown different from"
            lines.append(
                f"* Against {opponents} opponents the trained agent is **{verdict} a {other} player in the same "
                f"seats**: {score} a game {_interval(trained, key)} against {_interval(row, key)} (trained − "
                f"{other} {diff:+.2f} [{low:+.2f}, {high:+.2f}], {better} {score} is better, paired p = "
                f"{row['trained_minus_this_score_p']:.2g}); win rate {_interval(trained, 'win_rate')} against "
                f"{_interval(row, 'win_rate')}."
            )
    return lines


def block(kept: dict[str, dict]) -> str:
    """The docs block: the runs' table, then each game's curve, final table and what it says."""
    from tableenvs.training.reports import format_table

    lines = [
        "| run | command | learner decisions | wall time (CPU time of the job) "
        "| commit (HEAD when the run ended), date, machine |",
        "|---|---|---:|---|---|",
    ]
    for name in RUNS:
        if name in kept:
            k = kept[name]
            r = k["results"]
            steps, split = "(the script's budget)", ""
            if "final" in r:
                steps = f"{r['timesteps']:,}"
                split = f"; training {r['train_seconds']:.0f} s, final evaluation {r['eval_seconds']:.0f} s"
            lines.append(
                f"| {k['label']} | `{k['command']}` | {steps} | {_minutes(k['wall_seconds'])} "
                f"({_minutes(k['cpu_seconds'])}{split}) | `{k['commit']}`, {k['date']}, {k['machine']} |"
            )
    for name in RUNS:
        if name not in kept:
            continue
        k = kept[name]
        lines += ["", f"### {k['label'][0].upper()}{k['label'][1:]}", ""]
        if name == k["game"]:
            lines += [f"![{k['game']} learning curve](img/{_image(k['game'])})", ""]
        if "final" in k["results"]:
            lines += ["```", format_table(k["results"]["final"]), "```", ""]
            lines += sentences(k["results"]["final"])
        else:
            lines += ["```", k["results"]["printed"], "```"]
    return "\n".join(lines)


def write_docs(out: Path) -> None:
    kept = {path.stem: json.loads(path.read_text()) for path in sorted(out.glob("*.json"))}
    if not kept:
        sys.exit(f"no kept runs under {out}: the docs block is left as it is (run the benchmark first)")
    replace_block(DOCS, BEGIN, END, block(kept))
    print(f"wrote {len(kept)} runs into {DOCS}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", action="append", choices=sorted(RUNS), help="a run (repeat; default all)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "training_evidence")
    parser.add_argument("--scratch", type=Path, default=ROOT / "runs" / "training_evidence", help="run directories")
    parser.add_argument("--write-docs", action="store_true", help="rewrite docs/training.md's block from kept runs")
    parser.add_argument("--docs-only", action="store_true", help="only rewrite the docs from the kept runs")
    args = parser.parse_args()
    if not args.docs_only:
        for name in args.game or RUNS:
            run(name, args.out, args.scratch)
    if args.write_docs or args.docs_only:
        write_docs(args.out)


if __name__ == "__main__":
    main()
