"""Benchmark: ``tableenvs eval GAME --policies trained,heuristic`` on the batched engine against the AEC path, in the
same run: games per CPU-second, and the same records on the same games.

For every game with a batched engine (at the player count of its shipped model), ``evaluate(GAME,
["trained", "heuristic"], engine=...)`` (what ``tableenvs eval`` calls; duplicate deals, every seating, seed 0,
one process) is timed by this process's CPU time (``time.process_time``: numpy's BLAS and numba's threads
included), alternating AEC and batched ``--repeats`` times; the figure is the median, and each repeat's own
ratio (its batched rate over the AEC rate measured just before) is listed too, median and range. Two rates each:

* **eval**: the whole ``evaluate`` call: checks, setting up the players (and the batched engine), the games, and
  the report (the per-game OpenSkill update, the tables), as ``tableenvs eval`` spends it;
* **play**: from the first game to the last one finished (from ``evaluate``'s progress callback), the games alone.

The AEC path plays ``--aec-games`` games, the batched engine ``--batched-games`` (more: its per-game cost is small
beside its fixed costs). The batched records of the first ``--aec-games`` games are checked equal to the AEC
path's (every game: seating, total rewards, final scores, winners, ranks, decisions). One untimed warm-up of each
path runs first (imports, the compiled kernels loaded from their cache). A game whose policies cannot be batched is
listed with the reason.

Run: ``python benchmarks/bench_batched_eval.py [--aec-games 96 --batched-games 2048 --repeats 3 --write-docs]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from common import commit_label, finished_on_this_machine, markers, write_block

import tableenvs
import tableenvs.vector
from tableenvs.evaluation import evaluate
from tableenvs.evaluation.batched import cannot_batch
from tableenvs.policies.numpy_policy import load_numpy_policy, trained_model_path

POLICIES = ["trained", "heuristic"]
#: CPU seconds inside each batched player's act() and the engine's step() (the last timed batched run's share).
INSIDE: dict[str, float] = {}


def count_inside() -> None:
    """Time every batched player's ``act`` or ``act_rows`` (by policy spec) and every batched engine's step into
    :data:`INSIDE` (wrapping the evaluation's player factory and each engine class's ``_play``, the compiled step
    every ``step`` ends in, and its ``step_rows``)."""
    import tableenvs.evaluation.batched as batched

    def timing(function, key):
        def timed(*args, **kwargs):
            start = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                INSIDE[key] = INSIDE.get(key, 0.0) + time.process_time() - start

        return timed

    make_players = batched.players

    def players(specs, games, raw_env, deterministic, seed):
        built = make_players(specs, games, raw_env, deterministic, seed)
        for spec, player in zip(specs, built, strict=True):
            if not getattr(player, "_timed", False):
                if hasattr(player, "act_rows"):  # what the evaluation calls (act would call it too)
                    player.act_rows = timing(player.act_rows, f"{spec} act()")
                else:
                    player.act = timing(player.act, f"{spec} act()")
                player._timed = True
        return built

    batched.players = players
    for name in tableenvs.vector.batched_names():
        engine = type(tableenvs.vector.make(name, 1))
        engine._play = timing(engine._play, "engine step()")
        if hasattr(engine, "step_rows"):  # the rows still playing, once some games are over
            engine.step_rows = timing(engine.step_rows, "engine step()")


BEGIN, END = markers("bench-batched-eval", "bench_batched_eval.py --write-docs")


def timed_eval(name: str, players: int, games: int, engine: str) -> tuple[float, float, object]:
    """(CPU s of the whole evaluate call, CPU s from the first game to the last, result)."""
    marks: list[float] = []

    def progress(count: int) -> None:
        marks.append(time.process_time())

    start = time.process_time()
    result = evaluate(name, POLICIES, games, num_players=players, seed=0, engine=engine, progress=progress)
    whole = time.process_time() - start
    return whole, marks[-1] - marks[0], result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--aec-games", type=int, default=96)
    parser.add_argument("--batched-games", type=int, default=2048)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/evaluation.md")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    rows, skipped, shares = [], [], []
    count_inside()
    for name in tableenvs.vector.batched_names():
        players = int(load_numpy_policy(trained_model_path(name)).options["num_players"])
        raw = tableenvs.make_raw(name, num_players=players)
        reason = cannot_batch(name, {"num_players": players}, POLICIES, raw, True)
        if reason is not None:
            skipped.append(f"{name} {players}p: not batched ({reason})")
            continue
        print(f"{name} {players}p: warm-up", file=sys.stderr, flush=True)
        for engine in ("aec", "batched"):
            timed_eval(name, players, 8, engine)
        aec_rates, batched_rates = [], []
        same = compared = 0
        for repeat in range(args.repeats):
            whole, play, aec = timed_eval(name, players, args.aec_games, "aec")
            aec_rates.append((aec.games / whole, aec.games / play))
            INSIDE.clear()
            whole, play, batched = timed_eval(name, players, args.batched_games, "batched")
            inside = dict(INSIDE)
            batched_rates.append((batched.games / whole, batched.games / play))
            first = batched.records[: aec.games]
            same += sum(a == b for a, b in zip(aec.records, first, strict=True))
            compared += aec.games
            print(
                f"{name} {players}p repeat {repeat + 1}: AEC {aec_rates[-1][0]:.1f} games/CPU-s (play "
                f"{aec_rates[-1][1]:.1f}), batched {batched_rates[-1][0]:.1f} (play {batched_rates[-1][1]:.1f})",
                file=sys.stderr,
                flush=True,
            )
        aec_eval = statistics.median(r[0] for r in aec_rates)
        aec_play = statistics.median(r[1] for r in aec_rates)
        batched_eval = statistics.median(r[0] for r in batched_rates)
        batched_play = statistics.median(r[1] for r in batched_rates)
        parts = ", ".join(f"{key} {1000 * value / args.batched_games:.2f} ms" for key, value in inside.items())
        rest = 1000 * (play - sum(inside.values())) / args.batched_games
        shares.append(
            f"{name} {players}p, batched, per game (last run): {parts}, the rest of the games' loop {rest:.2f} ms; "
            f"the whole call {1000 * whole / args.batched_games:.2f} ms."
        )
        paired = sorted(b[0] / a[0] for a, b in zip(aec_rates, batched_rates, strict=True))
        rows.append(
            f"| {name} {players}p | {aec_eval:,.1f} ({aec_play:,.1f}) | {batched_eval:,.0f} ({batched_play:,.0f}) | "
            f"**{batched_eval / aec_eval:.1f}x** ({batched_play / aec_play:.1f}x) | {statistics.median(paired):.1f}x "
            f"({paired[0]:.1f}-{paired[-1]:.1f}x) | {same:,} of {compared:,} |"
        )
    table = [
        "| game | AEC: games per CPU-second, eval (play) | batched | batched / AEC | each repeat's ratio, eval: "
        "median (range) | same records |",
        "|---|---|---|---|---|---|",
        *rows,
    ]
    text = "\n".join(table + [""] + shares + ([""] + skipped if skipped else []))
    print(text)
    if args.write_docs:
        command = (
            f"python benchmarks/bench_batched_eval.py --aec-games {args.aec_games} --batched-games "
            f"{args.batched_games} --repeats {args.repeats} --write-docs"
        )
        stamp = (
            f"`{command}`, commit {commit_label(':/', ':!/docs')}, {finished_on_this_machine(load)}. "
            f"`evaluate(GAME, {POLICIES!r})` at the shipped model's player count, one process; CPU time of this "
            f"process, the median of {args.repeats} alternating runs; AEC {args.aec_games} games, batched "
            f"{args.batched_games}. eval: the whole call (checks, set-up, games, report); play: the games alone. "
            "each repeat's ratio: a repeat's batched rate over the AEC rate measured just before it (the load "
            "moves between repeats). same records: the batched games equal to the AEC path's, game for game."
        )
        path = write_block(BEGIN, END, f"{stamp}\n\n{text}")
        print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    started = time.perf_counter()
    main()
    print(f"({time.perf_counter() - started:.0f} s wall)", file=sys.stderr)
