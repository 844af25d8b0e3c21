"""Search against the heuristic, head to head, per game: the table of docs/agents.md "Search against the heuristic".

For each game chosen: :func:`tableenvs.evaluation.evaluate` of ``heuristic`` against a search spec (half the seats
each, every seating, duplicate deals: one deal per block of seatings, so the paired differences over blocks compare
the two on the same cards), then a timing pass (``--timing-games`` games with one search seat among heuristics,
every search decision with at least two legal actions timed in CPU time of this process, ``time.process_time``).
Each row is saved as JSON under ``--out`` (default ``benchmarks/results/search_vs_heuristic``, committed), and
``--write-docs`` rewrites the marked results block of docs/agents.md from every saved row, each with the command
that made it.

A long run keeps its finished games: while it plays, every game is appended to ``<row>.partial/games.jsonl`` beside
the row (the journal of ``tableenvs eval``, :mod:`tableenvs.evaluation.journal`), and the same command run again
plays only the games the journal does not hold (a game depends only on the arguments and its index, so the result
is the one an uninterrupted run gives). A journal made with other arguments is refused, naming them. The journal is
removed once the row is saved; commit it to carry a run that did not finish over to another machine.

Run: ``python benchmarks/search_vs_heuristic.py --games 400 [--game pilipili_v0 ...] [--spec search:...]
[--players 4] [--workers 1] [--seed 0] [--timing-games 2] [--write-docs]``; ``--spec`` defaults to ``search`` (the
game's default setting, its spec's ``search_default``); ``--docs-only`` rewrites the docs from saved
rows.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import CLOCK, decision_times, replace_block

import tableenvs
from tableenvs.evaluation import evaluate
from tableenvs.evaluation.journal import GameLog, read_log, read_tournament
from tableenvs.policies import make_policy
from tableenvs.policies.numpy_policy import is_trained_spec, trained_model_path

#: The table of each game: players and options (Rummikub 2 players, ``max_turns=200`` as in the earlier tables).
GAMES = {
    "pilipili_v0": {"players": 4, "options": {}},
    "llama_party_v0": {"players": 4, "options": {}},
    "rummikub_v0": {"players": 2, "options": {"max_turns": 200}},
}
ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "agents.md"
BEGIN = "<!-- search_vs_heuristic: begin (written by benchmarks/search_vs_heuristic.py --write-docs) -->"
END = "<!-- search_vs_heuristic: end -->"


def versus_heuristic(paired: dict, baseline: str = "heuristic") -> tuple[dict, dict]:
    """The score and win-rate differences of an evaluation's paired row (``a - b``) turned into "the other policy
    minus ``baseline``" (default the heuristic): ``({score_diff, score_diff_low, score_diff_high}, {win_diff,
    win_diff_low, win_diff_high})``."""
    sign = -1.0 if paired["policy"] == baseline else 1.0
    diff = {key: sign * paired[key] for key in ("score_diff", "score_diff_low", "score_diff_high")}
    win = {key: sign * paired[key] for key in ("win_diff", "win_diff_low", "win_diff_high")}
    if sign < 0:  # the interval's ends swap with the sign
        diff["score_diff_low"], diff["score_diff_high"] = diff["score_diff_high"], diff["score_diff_low"]
        win["win_diff_low"], win["win_diff_high"] = win["win_diff_high"], win["win_diff_low"]
    return diff, win


def row_path(out: Path, name: str, spec: str, games: int, seed: int, players: int | None = None) -> Path:
    """Where the row of a run is saved (its journal is the same name with ``.partial`` for ``.json``); a player count
    other than the table's (:data:`GAMES`) is part of the name, so rows of two player counts never share a file."""
    slug = spec.replace(":", "_").replace("=", "").replace("/", "_")
    seats = "" if players in (None, GAMES[name]["players"]) else f"__{players}p"
    return out / f"{name}__{slug}__{games}__s{seed}{seats}.json"


def journal_models(arguments: dict) -> dict[str, str]:
    """The SHA-256 of every model file ``arguments``' policies play (the shipped file for ``trained``, at the
    journal's player count and options), as ``tableenvs eval``'s resume records them."""
    from tableenvs.commands.eval_resume import tournament

    setting = {"env": arguments["env"], "policies": arguments["policies"], "opponents": None}
    setting.update(players=arguments["num_players"], option=arguments["options"])
    return dict(tournament(setting)["models"])


def journaled_evaluate(journal: Path, arguments: dict, workers: int):
    """``evaluate(**arguments)``, every finished game appended to ``journal``'s log and the games it already holds
    not played again; the journal is removed once the result is complete. ``ValueError`` naming the arguments that
    differ from the journal's, or when a model file the policies play (:func:`journal_models`) is not the one the
    journal was started with (a shipped model replaced since; a journal that names no digests is refused too)."""
    finished = []
    resume = (journal / "tournament.json").exists()
    models = journal_models(arguments)
    if resume:
        started = read_tournament(journal)
        saved = started["arguments"]
        differ = sorted(key for key in set(saved) | set(arguments) if saved.get(key) != arguments.get(key))
        if differ:
            raise ValueError(f"{journal} was made with other arguments ({', '.join(differ)}): remove it or rerun those")
        if started.get("models") != models:
            raise ValueError(
                f"{journal} was played with other model files or names none (now {models}): its games may not be "
                "this row's; remove it and play the row anew"
            )
        finished = read_log(journal)
        print(f"# resuming {journal}: {len(finished)} games already played", flush=True)
    log = GameLog(journal, {"arguments": arguments, "models": models}, resume=resume)
    try:
        result = evaluate(**arguments, workers=workers, finished=finished, on_games=log.append)
    finally:
        log.close()
    log.remove()
    journal.rmdir()
    return result


def run(name: str, spec: str, args: argparse.Namespace, baseline: str = "heuristic", label: str | None = None) -> dict:
    """Play ``spec`` against ``baseline`` head to head (``args``: games, players, seed, workers, timing games, out)
    and return the saved row: ``spec`` − ``baseline`` with its intervals, the decision times of ``spec``. The
    journal is named by ``label`` (default ``spec``), as the row is by :func:`row_path`."""
    setting = GAMES[name]
    players = args.players or setting["players"]
    wall, cpu = time.time(), CLOCK()
    arguments = {
        "env": name,
        "policies": [baseline, spec],
        "games": args.games,
        "num_players": players,
        "options": setting["options"],
        "seed": args.seed,
    }
    journal = row_path(args.out, name, label or spec, args.games, args.seed, players).with_suffix(".partial")
    result = journaled_evaluate(journal, arguments, args.workers)
    wall, cpu = time.time() - wall, CLOCK() - cpu
    print(result.format_table(), flush=True)
    paired = result.paired[0]
    diff, win = versus_heuristic(paired, baseline)
    timing = decision_times(name, spec, players, setting["options"], args.timing_games, args.seed)
    command = f"python benchmarks/search_vs_heuristic.py --game {name} --games {args.games} --seed {args.seed}"
    if spec != "search":
        command += f" --spec {spec}"
    if players != setting["players"]:
        command += f" --players {players}"
    if args.workers > 1:
        command += f" --workers {args.workers}"
    return {
        "game": name,
        "players": players,
        "spec": spec,
        "baseline": baseline,
        "resolved": described(make_policy(spec, tableenvs.make_raw(name, num_players=players, **setting["options"]))),
        "models": model_digests(name, [baseline, spec]),
        "games": result.games,
        "blocks": result.blocks,
        "score_name": result.score_name,
        "higher_is_better": result.higher_is_better,
        **diff,
        "score_p": paired["score_p"],
        **win,
        "win_p": paired["win_p"],
        "policies": result.policies,
        "truncated_games": result.to_dict()["truncated_games"],
        "timing": timing,
        "command": command,
        "wall_seconds": wall,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "python": platform.python_version(),
    }


def model_digests(name: str, specs: list[str]) -> dict[str, str]:
    """The first 12 hex digits of the SHA-256 of each spec that is a numpy policy file (``trained``: the model shipped
    for ``name`` now; a ``.npz`` path), so a row says which model it played when the shipped file changes."""
    digests = {}
    for spec in specs:
        path = trained_model_path(name) if is_trained_spec(spec) else Path(spec) if spec.endswith(".npz") else None
        if path is not None:
            digests[spec] = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    return digests


def shown(row: dict, spec: str) -> str:
    """``spec`` as a table shows it: a model file with its digest (:func:`model_digests`), or, for a ``trained`` row
    saved before digests were kept, the date it was played (the model shipped then)."""
    digest = row.get("models", {}).get(spec)
    if digest is not None:
        return f"`{spec}` ({digest})"
    if spec == "trained":
        return f"`trained` (as shipped at {row['date']})"
    return f"`{spec}`"


def cells(row: dict) -> tuple[str, str]:
    """A saved row's two difference cells: the score's, with its name and direction, and the win rate's (also used by
    ``trained_vs_heuristic.py`` and ``ladder.py``)."""
    better = "more is better" if row["higher_is_better"] else "fewer is better"
    score = f"{row['score_diff']:+.2f} [{row['score_diff_low']:+.2f}, {row['score_diff_high']:+.2f}]"
    win = f"{row['win_diff']:+.3f} [{row['win_diff_low']:+.3f}, {row['win_diff_high']:+.3f}]"
    return f"{score} {row['score_name']} ({better})", win


def setting(row: dict) -> str:
    """A saved row's policy as a table shows it: the bare ``search`` with the setting it stood for when the row was
    played (from the row's ``resolved`` repr), so rows of past defaults read apart; other specs as given."""
    if row["spec"] != "search" or not row.get("resolved", "").startswith("SearchPolicy("):
        return shown(row, row["spec"])
    found = dict(re.findall(r"(\w+)=('?[\w.]+'?)", row["resolved"]))
    parts = [f"sims={found['sims']}"] if found.get("sims", "None") != "None" else [f"ms={found['ms']}"]
    if found.get("root", "'ucb'") != "'ucb'":
        parts.append(f"root={found['root'].strip(chr(39))}")
    if float(found.get("z", "0")) != 0:
        parts.append(f"z={float(found['z']):g}")
    if found.get("mode", "'flat'") != "'flat'":
        parts.append(f"mode={found['mode'].strip(chr(39))}")
    return f"`search` (then `search:{':'.join(parts)}`)"


def table(rows: list[dict]) -> str:
    """The markdown table of the saved rows (search - heuristic, per game, with the commands)."""
    lines = [
        "| game | search setting | games (blocks) | score: search − heuristic [95%] | win rate: search − heuristic "
        "[95%] | ms / decision mean (p90) | ms / searching decision mean (p90) |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        score, win = cells(row)
        timing = row["timing"]
        ms = f"{timing['mean_ms']:.0f} ({timing['p90_ms']:.0f})" if timing["decisions"] else "-"
        searching = "-"
        if timing.get("searched_decisions"):
            searching = f"{timing['searched_mean_ms']:.0f} ({timing['searched_p90_ms']:.0f})"
        lines.append(
            f"| {row['game']} {row['players']}p | {setting(row)} | {row['games']} ({row['blocks']}) | {score} | "
            f"{win} | {ms} | {searching} |"
        )
    lines.append("")
    lines.append("Commands (one per row, in order), with the date each finished:")
    lines.append("")
    for row in rows:
        lines.append(f"* `{row['command']}` ({row['date']}; `{row['resolved']}`)")
    return "\n".join([*lines, "", verdict(rows)])


def described(policy: Any) -> str:
    """What a row says it played: the policy's repr, or its class's dotted name where the repr would be the default
    one (an object's memory address, which differs between runs)."""
    if type(policy).__repr__ is object.__repr__:
        return f"{type(policy).__module__}.{type(policy).__qualname__}"
    return repr(policy)


#: Issue 29's test: at least this many games of the game's default ``search``, whose mean decision time (ms) is
#: within the game's limit, both 95% intervals excluding 0 in the search's favour.
TEST_GAMES = 1000
TEST_MS = {"pilipili_v0": 100.0, "llama_party_v0": 100.0, "rummikub_v0": 300.0}


def verdict(rows: list[dict]) -> str:
    """One line per game: does a saved row pass the search's strength test with the game's default ``search``?"""
    parts = []
    for name in GAMES:
        players = GAMES[name]["players"]
        current = repr(make_policy("search", tableenvs.make_raw(name, num_players=players, **GAMES[name]["options"])))
        candidates = [
            row
            for row in rows
            if row["game"] == name
            and row["players"] == players  # the test is at the table's player count
            and row["spec"] == "search"
            and row["resolved"] == current
            and row.get("baseline", "heuristic") == "heuristic"
        ]
        full = [row for row in candidates if row["games"] >= TEST_GAMES]
        if not full:
            parts.append(f"* {name}: no row of {TEST_GAMES:,} games or more with its current default `search` yet.")
            continue
        row = max(full, key=lambda r: r["games"])
        ahead = row["score_diff_low"] > 0 if row["higher_is_better"] else row["score_diff_high"] < 0
        wins = row["win_diff_low"] > 0
        ms = row["timing"]["mean_ms"] if row["timing"]["decisions"] else float("nan")
        fast = ms <= TEST_MS[name]
        result = "passes" if ahead and wins and fast else "does not pass"
        parts.append(
            f"* {name}: {result} over {row['games']:,} games: score interval "
            f"{'excludes' if ahead else 'does not exclude'} 0 in the search's favour, win-rate interval "
            f"{'excludes' if wins else 'does not exclude'} 0, {ms:.0f} ms a decision (limit {TEST_MS[name]:.0f})."
        )
    head = (
        f"The test, read off the rows above (at least {TEST_GAMES:,} games of the game's current default "
        "`search` at the table's player count, both 95% intervals excluding 0 in its favour, mean decision time "
        "within the limit):"
    )
    return "\n".join([head, "", *parts])


def write_docs(out: Path, begin: str = BEGIN, end: str = END, make_table=None) -> None:
    """Rewrite the ``begin`` ... ``end`` block of docs/agents.md with ``make_table`` (default :func:`table`) of every
    row saved under ``out`` (also used by ``trained_vs_heuristic.py`` with its own block and table)."""
    rows = [json.loads(path.read_text()) for path in sorted(out.glob("*.json"))]
    if not rows:
        sys.exit(f"no saved rows under {out}: the docs block is left as it is (run the benchmark first)")
    replace_block(DOCS, begin, end, (make_table or table)(rows))
    print(f"wrote {len(rows)} rows into {DOCS}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", action="append", choices=sorted(GAMES), help="a game (repeat; default all)")
    parser.add_argument("--games", type=int, default=400, help="games per table (rounded up to whole blocks)")
    parser.add_argument("--spec", default="search", help="the search setting (default: the game's default)")
    parser.add_argument("--players", type=int, help="seats (default: 4, Rummikub 2)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timing-games", type=int, default=2, help="games of the timing pass (0: none)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "search_vs_heuristic")
    parser.add_argument("--write-docs", action="store_true", help="rewrite docs/agents.md's block from saved rows")
    parser.add_argument("--docs-only", action="store_true", help="only rewrite the docs from the saved rows")
    args = parser.parse_args()
    if not args.docs_only:
        print(f"# {platform.python_version()} on {platform.machine()}, seed {args.seed}")
        for name in args.game or GAMES:
            row = run(name, args.spec, args)
            args.out.mkdir(parents=True, exist_ok=True)
            path = row_path(args.out, name, args.spec, args.games, args.seed, row["players"])
            path.write_text(json.dumps(row, indent=1))
            print(table([row]), flush=True)
    if args.write_docs or args.docs_only:
        write_docs(args.out)


def run_script(main: Callable[[], None], script: str) -> None:
    """Run a journaled script's ``main``: a bad policy, game option or journal is one line (exit 1), not a traceback;
    Ctrl-C (or SIGTERM) stops it with one line saying that the finished games are kept (exit 130)."""
    try:
        main()
    except ValueError as error:
        sys.exit(f"{Path(script).name}: {error}")
    except KeyboardInterrupt:
        print(
            f"{Path(script).name}: interrupted; the games finished are kept in the journal (.partial), and the same "
            "command continues from them",
            file=sys.stderr,
        )
        sys.exit(130)


if __name__ == "__main__":
    run_script(main, __file__)
