"""The league's runs: the tables of docs/training.md "The league's runs" (a Pili Pili model for each player count,
and the Llama Party runs that did not beat the heuristic), written from what the runs left and saved results.

``collect RUN_DIR... --players N... --past STEPS[,STEPS...]`` reads each run directory of ``tableenvs train GAME
--recipe league --out RUN_DIR`` (read only): the exports ``league/model-<steps>.npz`` and ``league/progress.jsonl``
(one line per PPO update, ``cpu_seconds`` counted from the start of the process that wrote it: a continued run starts
again from 0, so a drop marks a new process). For each threshold of ``--past`` it keeps the first export past it:
its samples, the PPO CPU seconds up to it (summed over the processes that made it, the clone left out), the SHA-256
of the export, and the first 12 hex digits of the SHA-256 of that export converted to float16 (what a shipped model
is, and how ``benchmarks/field.py`` names the model its rows played). One JSON file per run is saved under
``benchmarks/results/league_runs/`` (``--label`` names the run in the tables, e.g. ``league``).

Scores: a Pili Pili run's rows come from the field rows ``benchmarks/field.py`` saved
(``benchmarks/results/field/*.json``) for the same game, player count and model hash (the ``heuristic`` row, half
the seats each, and the ``company-heuristic`` row); a missing or different model is an error, never a guess. Another
game's exports carry their evaluation against the heuristic: ``--eval STEPS=DIR`` reads the ``results.json`` a
``tableenvs eval ... --out DIR`` wrote (checked: the game, the player count, the export's name among the entrants);
``--printed STEPS=DIFF,LOW,HIGH,GAMES`` stores figures copied from an evaluation's printed report whose output
folder was not kept (``--printed-command`` gives its command), and the docs say which rows those are.

``--write-docs`` (alone, or after ``collect``) rewrites the two blocks of docs/training.md from the saved files; the
text around them stays.

Run: ``python benchmarks/league_runs.py collect runs/pp2 runs/pp3 --players 2,3 --past 3000000`` then
``python benchmarks/league_runs.py --write-docs``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shlex
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any, NoReturn

from common import markers, write_block

from tableenvs.policies.model_file import read_header

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "league_runs"
FIELD = ROOT / "benchmarks" / "results" / "field"
SCRIPT = "league_runs.py --write-docs"
SHIPPED_GAME = "pilipili_v0"  # the runs whose models are shipped: scored by the field rows
PRINTED = "copied from the evaluation's printed report (its output folder was not kept)"


def die(message: str) -> NoReturn:
    sys.exit(f"league_runs.py: {message}")


def progress_lines(run: Path) -> list[dict[str, Any]]:
    path = run / "league" / "progress.jsonl"
    if not path.is_file():
        die(f"{path} does not exist (not a league run directory?)")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def cpu_up_to(lines: list[dict[str, Any]], steps: int) -> tuple[float, int]:
    """The PPO CPU seconds of the run up to the update that reached ``steps`` samples, summed over the processes
    (``cpu_seconds`` restarts in a continued run), and how many processes that took."""
    total, processes, last = 0.0, 1, 0.0
    for line in lines:
        if line["cpu_seconds"] < last:  # a new process: the previous one's seconds are done
            total += last
            processes += 1
        last = line["cpu_seconds"]
        if line["steps"] == steps:
            return total + last, processes
    die(f"no progress line reached {steps:,} samples exactly (the export's step count)")


def float16_hash(export: Path) -> str:
    """The first 12 hex digits of the SHA-256 of ``export`` converted to float16 (a shipped model's form)."""
    from tableenvs.policies.numpy_policy import convert_numpy_policy

    with tempfile.TemporaryDirectory() as scratch:
        converted = convert_numpy_policy(export, Path(scratch) / export.name)
        return hashlib.sha256(converted.read_bytes()).hexdigest()[:12]


def model_path(export: Path) -> str:
    """``runs/<run>/league/<file>``: an export as a command names it (the run directory under ``runs/``)."""
    return f"runs/{export.parent.parent.name}/league/{export.name}"


def evaluation_from_results(directory: Path, game: str, players: int, export: Path) -> dict[str, Any]:
    """The model − heuristic figures of ``directory/results.json`` (a ``tableenvs eval --out`` folder), checked to
    be this export's evaluation."""
    path = directory / "results.json"
    if not path.is_file():
        die(f"--eval: {path} does not exist")
    saved = json.loads(path.read_text())
    if saved["env"] != game or saved["num_players"] != players or export.stem not in saved["entrants"]:
        die(f"--eval: {path} evaluated {saved['entrants']} in {saved['env']} at {saved['num_players']} players, "
            f"not {export.stem} in {game} at {players}")  # fmt: skip
    (paired,) = [row for row in saved["paired"] if row["policy"] == export.stem and row["opponent"] == "heuristic"]
    asked = next((int(m.group(1)) for n in saved["notes"] if (m := re.search(r"rounded up from (\d+)", n))), None)
    return {
        "source": f"{directory.name}/results.json",
        "score_name": saved["final_score"]["name"],
        "higher_is_better": saved["final_score"]["higher_is_better"],
        "score_diff": paired["score_diff"],
        "score_diff_low": paired["score_diff_low"],
        "score_diff_high": paired["score_diff_high"],
        "games": saved["games"],
        "games_asked": asked or saved["games"],
        "seed": saved["seed"],
        "command": f"tableenvs eval {game} --players {players} --policies {model_path(export)},heuristic --games "
        f"{asked or saved['games']} --seed {saved['seed']}",
    }


def evaluation_printed(figures: str, command: str, game: str, players: int, export: Path) -> dict[str, Any]:
    try:
        diff, low, high, games = figures.split(",")
        values = {"score_diff": float(diff), "score_diff_low": float(low), "score_diff_high": float(high)}
        asked = int(games)
    except ValueError:
        die(f"--printed: give STEPS=DIFF,LOW,HIGH,GAMES (four numbers), got {figures!r}")
    command = command.format(game=game, players=players, model=model_path(export), games=asked)
    return {"source": PRINTED, **values, "games_asked": asked, "command": command}


def steps_map(entries: list[str], flag: str) -> dict[int, str]:
    found = {}
    for entry in entries:
        steps, sep, value = entry.partition("=")
        if not sep or not steps.isdigit():
            die(f"{flag}: give STEPS=..., got {entry!r}")
        found[int(steps)] = value
    return found


def collect(args: argparse.Namespace, command_line: list[str]) -> None:
    runs = [Path(run) for run in args.runs]
    players = [int(p) for p in args.players.split(",")]
    past = [int(p) for p in args.past.split(",")]
    if len(players) != len(runs):
        die(f"--players gives {len(players)} counts for {len(runs)} run directories (one each, in order)")
    evals, printed = steps_map(args.eval, "--eval"), steps_map(args.printed, "--printed")
    summaries = {}
    for run, count in zip(runs, players, strict=True):
        lines = progress_lines(run)
        exports = sorted((int(m.group(1)), p) for p in (run / "league").glob("model-*.npz")
                         if (m := re.fullmatch(r"model-(\d+)\.npz", p.name)))  # fmt: skip
        kept = []
        for threshold in past:
            first = next(((steps, path) for steps, path in exports if steps > threshold), None)
            if first is None:
                die(f"{run}: no export past {threshold:,} samples (the last is {exports[-1][0] if exports else 0:,})")
            steps, path = first
            model = read_header(path)  # checked, as any model file's
            if model["options"].get("num_players") != count:
                die(f"{path} is a {model['options'].get('num_players')}-player model, not {count}")
            cpu, processes = cpu_up_to(lines, steps)
            entry: dict[str, Any] = {
                "past": threshold,
                "steps": steps,
                "file": f"league/{path.name}",
                "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                "float16_sha256": float16_hash(path),
                "ppo_cpu_seconds": round(cpu, 1),
                "processes": processes,
            }
            if steps in evals:
                entry["evaluation"] = evaluation_from_results(Path(evals.pop(steps)), model["game"], count, path)
            elif steps in printed:
                figures = printed.pop(steps)
                entry["evaluation"] = evaluation_printed(figures, args.printed_command, model["game"], count, path)
            kept.append(entry)
            print(f"{run.name}: {path.name} ({steps:,} samples, {cpu:.0f} PPO CPU s, float16 "
                  f"{entry['float16_sha256']})", flush=True)  # fmt: skip
        saved = {
            "game": model["game"],
            "players": count,
            "run": run.name,
            "label": args.label,
            "exports": kept,
            "command": "python benchmarks/league_runs.py " + shlex.join(command_line),
            "collected": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        }
        summaries[RESULTS / f"{model['game']}__{count}p__{run.name}.json"] = saved
    unused = sorted(evals) + sorted(printed)
    if unused:
        die(f"--eval/--printed name steps no kept export has: {', '.join(f'{s:,}' for s in unused)}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    for out, saved in summaries.items():  # written once every run was read: a refusal writes nothing
        out.write_text(json.dumps(saved, indent=1) + "\n")
        print(f"wrote {out.relative_to(ROOT)}", flush=True)


def caption(text: str) -> str:
    """A paragraph wrapped at the docs' 120 columns."""
    return textwrap.fill(text, 120, break_long_words=False, break_on_hyphens=False)


def signed(value: float) -> str:
    return f"{value:+.2f}".replace("-", "−")


def interval(row: dict[str, Any]) -> str:
    return f"{signed(row['score_diff'])} [{signed(row['score_diff_low'])}, {signed(row['score_diff_high'])}]"


def field_rows(game: str, players: int, model_hash: str) -> dict[str, Any]:
    found = [
        saved
        for path in sorted(FIELD.glob("*.json"))
        if (saved := json.loads(path.read_text()))["game"] == game
        and saved["players"] == players
        and saved.get("model", ["", ""])[1] == model_hash
    ]
    if len(found) != 1:
        die(f"{len(found)} field files under {FIELD} hold {game} at {players} players with model "
            f"{model_hash} (run benchmarks/field.py for it)")  # fmt: skip
    missing = [name for name in ("heuristic", "company-heuristic") if name not in found[0]["rows"]]
    if missing:
        die(f"the field file of {game} at {players} players has no {' or '.join(missing)} row")
    return found[0]["rows"]


def saved_runs() -> list[dict[str, Any]]:
    runs = [json.loads(path.read_text()) for path in sorted(RESULTS.glob("*.json"))]
    if not runs:
        die(f"no saved runs under {RESULTS} (run collect first)")
    return runs


def shipped_table(runs: list[dict[str, Any]]) -> str:
    lines = [
        "| players | samples of the shipped export | PPO CPU s | model − heuristic, half the seats each | own company: "
        "model − a heuristic seat |",
        "|---|---|---|---|---|",
    ]
    sources = []
    for run in sorted(runs, key=lambda r: r["players"]):
        (export,) = run["exports"]
        rows = field_rows(run["game"], run["players"], export["float16_sha256"])
        lines.append(
            f"| {run['players']} | {export['steps']:,} | {export['ppo_cpu_seconds']:.0f} | "
            f"{interval(rows['heuristic'])} | {interval(rows['company-heuristic'])} |"
        )
        sources.append(f"{run['players']}p `{run['run']}/{export['file']}` {export['float16_sha256']}")
    lines += [
        "",
        caption(
            "Samples and CPU seconds from each run's exports and `league/progress.jsonl`; the scores from the field "
            "rows `benchmarks/field.py` saved for the same model file (run, export, SHA-256 of the float16 file: "
            + "; ".join(sources)
            + ")."
        ),
    ]
    return "\n".join(lines)


def other_table(runs: list[dict[str, Any]]) -> str:
    lines = ["| players | run | samples (PPO CPU s) | model − heuristic [95%] |", "|---|---|---|---|"]
    printed, measured = [], []
    for run in sorted(runs, key=lambda r: (r["players"], r["run"])):
        for export in run["exports"]:
            found = export.get("evaluation")
            if found is None:
                die(f"{run['run']}/{export['file']} has no evaluation (collect it with --eval or --printed)")
            label = run["label"] + (", continued" if export["processes"] > 1 else "")
            games = ""
            if found["games_asked"] != 1000:
                played = found.get("games")
                games = f" (`--games {found['games_asked']}`" + (f", {played:,} played" if played else "") + ")"
            cpu = f"{export['ppo_cpu_seconds']:,.0f} CPU s" + (
                f" in {export['processes']} runs" if export["processes"] > 1 else ""
            )
            lines.append(f"| {run['players']} | {label} | {export['steps']:,} ({cpu}) | {interval(found)}{games} |")
            where = f"{run['players']}p {export['steps']:,}"
            (printed if found["source"] == PRINTED else measured).append(where)
    lines += [
        "",
        caption(
            "From each run's exports and `league/progress.jsonl` (CPU seconds of PPO, summed over a continued run's "
            f"two processes); the scores of {', '.join(measured)} from the evaluations' saved `results.json`; those of "
            f"{', '.join(printed)} {PRINTED}."
        ),
    ]
    return "\n".join(lines)


def blocks() -> dict[tuple[str, str], str]:
    """Each docs block's markers and its text, from the saved runs."""
    runs = saved_runs()
    shipped = [run for run in runs if run["game"] == SHIPPED_GAME]
    others = [run for run in runs if run["game"] != SHIPPED_GAME]
    return {
        markers("league-runs-pilipili", SCRIPT): shipped_table(shipped),
        markers("league-runs-llama-party", SCRIPT): other_table(others),
    }


def write_docs() -> None:
    for (begin, end), text in blocks().items():
        page = write_block(begin, end, text)
        print(f"wrote {begin.split('(')[0].removeprefix('<!-- measured: ').strip()} in {page}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write-docs", action="store_true", help="rewrite docs/training.md's blocks from saved runs")
    commands = parser.add_subparsers(dest="command")
    run = commands.add_parser("collect", help="summarise league run directories into benchmarks/results/league_runs/")
    run.add_argument("runs", nargs="+", help="league run directories (read only)")
    run.add_argument("--players", required=True, help="comma-separated player count of each run, in order")
    run.add_argument("--past", required=True, help="comma-separated sample counts: the first export past each")
    run.add_argument("--label", default="league", help="the run's name in the tables")
    run.add_argument("--eval", action="append", default=[], help="STEPS=DIR: the export's tableenvs eval --out DIR")
    run.add_argument(
        "--printed", action="append", default=[], help="STEPS=DIFF,LOW,HIGH,GAMES copied from a printed report"
    )
    run.add_argument(
        "--printed-command",
        default="tableenvs eval {game} --players {players} --policies {model},heuristic --games {games} --seed 11",
        help="the command of the --printed figures ({game}, {players}, {model}: runs/RUN/league/FILE, {games})",
    )
    run.add_argument("--write-docs", action="store_true", default=argparse.SUPPRESS, help="then rewrite the docs")
    args = parser.parse_args(argv)
    if args.command is None and not args.write_docs:
        parser.error("give collect ... and/or --write-docs")
    if args.command == "collect":
        collect(args, sys.argv[1:] if argv is None else argv)
    if args.write_docs:
        write_docs()


if __name__ == "__main__":
    main()
