"""Where Rummikub's batched engine spends its CPU time, and the wrapped AEC env's solver share, in one run.

The batched engine (``tableenvs.vector.make("rummikub_v0", ...)``, 4 players) plays random legal moves (the
benchmark's jitted picker, ``bench_vector.pick``) after ``bench_vector.WARM_STEPS`` steps, so its batch holds games
at every stage, for ``--seconds`` CPU seconds with timers (``common.timed``, CPU time) around its parts: the
compiled mask kernel (the turns whose sweep fits each env's compiled slots), the envs' Python ``TurnSweep``s (the
other turns), split into what they ran (recorded sweeps that finished, sweeps given up at the state limit after
which a table is searched, searches, searches over their budget, ``reach`` on a recorded sweep, and the Python
around them), the end-of-turn buffer renewal, the rules and observation kernel, and the rest (the picker, the
Python and numpy of ``step``). Then the wrapped AEC env (``tableenvs.make``) plays random legal moves for
``--seconds`` with a timer around its solver's per-turn cache (``TurnSweep.legal``, asked once a step).

The last lines compare the two: both ask the same exact solver one question a step, so the batched engine's agent-
steps per CPU-second cannot exceed the wrapped env's step time divided by the batched engine's own solver time a
step (the ceiling it prints) until the solver itself gets faster.

Run: ``python benchmarks/vector_rummikub_profile.py [--seconds 20] [--envs 1024] [--write-docs]`` (use
``nice -n 19``; ``--write-docs`` writes the table into docs/vector.md between its markers).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict

import numpy as np
from bench_vector import WARM_STEPS, pick
from common import CLOCK, commit_label, finished_on_this_machine, markers, random_play, timed, write_block

import tableenvs
import tableenvs.vector
from tableenvs.rummikub import turn_sweep
from tableenvs.rummikub.tiles import JOKER

NAME = "rummikub_v0"
PLAYERS = 4
BEGIN, END = markers("rummikub-batched-profile", "vector_rummikub_profile.py")


class Timers:
    """CPU seconds and calls per part of one timed run (``add`` counts only while ``on``)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self.on = False

    def add(self, part: str, seconds: float) -> None:
        if self.on:
            self.seconds[part] += seconds
            self.calls[part] += 1

    def adder(self, part: str):  # type: ignore[no-untyped-def]
        return lambda seconds: self.add(part, seconds)


class Watch:
    """Timers around ``TurnSweep``'s questions and what they run (its class, for the rest of the process), counted
    into ``timers`` (the run under way: the batched engine's, then the wrapped env's)."""

    def __init__(self) -> None:
        self.timers = Timers()
        cls = turn_sweep.TurnSweep
        legal, record, search, reach = cls.legal, cls._record, cls._search, cls._reach
        watch = self

        def timed_legal(self, *args):  # type: ignore[no-untyped-def]
            start = CLOCK()
            answer = legal(self, *args)
            watch.timers.add("TurnSweep questions", CLOCK() - start)
            return answer

        def timed_record(self, table, rack, staged, opening, min_initial, give_up):  # type: ignore[no-untyped-def]
            start = CLOCK()
            answer = record(self, table, rack, staged, opening, min_initial, give_up)
            seconds = CLOCK() - start
            part = "opening sweeps" if opening else "sweeps, finished" if answer is not None else "sweeps, given up"
            watch.timers.add(part, seconds)
            if not opening:
                tiles = int(table.sum())
                jokers = "with" if table[JOKER] + rack[JOKER] else "without"
                watch.timers.add(f"{tiles // 20 * 20}-{tiles // 20 * 20 + 19} tiles, {jokers} jokers", seconds)
            return answer

        def timed_search(self, table, rack, staged):  # type: ignore[no-untyped-def]
            start = CLOCK()
            answer = search(self, table, rack, staged)
            watch.timers.add("searches" if answer is not None else "searches over budget", CLOCK() - start)
            return answer

        def timed_reach(self, delta):  # type: ignore[no-untyped-def]
            start = CLOCK()
            answer = reach(self, delta)
            watch.timers.add("reach on a recorded sweep", CLOCK() - start)
            return answer

        cls.legal, cls._record, cls._search, cls._reach = timed_legal, timed_record, timed_search, timed_reach


def profile_batched(num_envs: int, seconds: float, timers: Timers) -> tuple[float, int, int, int]:
    """(CPU seconds, agent-steps, mask questions, questions the Python ``TurnSweep``s answered) of the timed run."""
    games = tableenvs.vector.make(NAME, num_envs, num_players=PLAYERS, trusted=True)
    masks = games._masks
    masks._kernel = timed(masks._kernel, timers.adder("compiled masks"))
    masks.renew = timed(masks.renew, timers.adder("end-of-turn renewal"))
    games._step = timed(games._step, timers.adder("rules + observation"))
    rng = np.random.default_rng(0)
    _, mask = games.reset(0)
    actions = np.zeros(num_envs, np.int64)
    for _ in range(WARM_STEPS[NAME]):
        pick(mask, rng.random(num_envs), actions)
        _, mask, _, _, _ = games.step(actions)
    questions, python = masks.questions, masks.python_questions
    steps = 0
    timers.on = True
    start = CLOCK()
    while CLOCK() - start < seconds:
        for _ in range(10):
            pick(mask, rng.random(num_envs), actions)
            _, mask, _, _, _ = games.step(actions)
        steps += 10 * num_envs
    elapsed = CLOCK() - start
    timers.on = False
    return elapsed, steps, masks.questions - questions, masks.python_questions - python


def profile_wrapped(seconds: float, timers: Timers) -> tuple[float, int]:
    """(CPU seconds, agent-steps) of the wrapped env's timed random play."""
    random_play(tableenvs.make(NAME, num_players=PLAYERS), 0.5)  # warm
    timers.on = True
    start = CLOCK()
    rate = random_play(tableenvs.make(NAME, num_players=PLAYERS), seconds)
    elapsed = CLOCK() - start
    timers.on = False
    return elapsed, rate.steps


QUESTIONS = "TurnSweep questions"
#: the parts inside ``TurnSweep.legal`` (the rest of it is its Python)
INNER = (
    "sweeps, finished",
    "sweeps, given up",
    "opening sweeps",
    "searches",
    "searches over budget",
    "reach on a recorded sweep",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="CPU seconds of each timed run")
    parser.add_argument("--envs", type=int, default=1024, help="envs of the batched engine")
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/vector.md")
    args = parser.parse_args()
    if args.seconds <= 0 or args.envs < 1:
        sys.exit("--seconds must be positive and --envs at least 1")
    load = os.getloadavg()[0]
    watch = Watch()
    batched = watch.timers
    elapsed, steps, questions, python = profile_batched(args.envs, args.seconds, batched)
    print(f"batched: {steps:,} agent-steps in {elapsed:.1f} CPU-s", file=sys.stderr, flush=True)
    watch.timers = wrapped = Timers()
    wrapped_elapsed, wrapped_steps = profile_wrapped(args.seconds, wrapped)
    print(f"wrapped: {wrapped_steps:,} agent-steps in {wrapped_elapsed:.1f} CPU-s", file=sys.stderr, flush=True)

    per_step = 1e6 * elapsed / steps
    seconds = batched.seconds
    inner = sum(seconds[part] for part in INNER)
    python_glue = seconds["TurnSweep questions"] - inner
    named = seconds["TurnSweep questions"] + sum(
        seconds[part] for part in ("compiled masks", "end-of-turn renewal", "rules + observation")
    )
    rows = [
        ("compiled masks (one call a step, every env)", seconds["compiled masks"], ""),
        *((f"Python TurnSweeps: {part}", seconds[part], f"{batched.calls[part]:,} calls") for part in INNER),
        ("Python TurnSweeps: the Python around them", python_glue, f"{batched.calls[QUESTIONS]:,} questions"),
        ("end-of-turn renewal of the TurnSweeps' buffers", seconds["end-of-turn renewal"], ""),
        ("rules + observation (compiled)", seconds["rules + observation"], ""),
        ("the rest (random picker, the Python and numpy of step)", elapsed - named, ""),
    ]
    lines = [
        f"Batched engine, {args.envs:,} envs, 4 players, random legal play: {steps / elapsed:,.0f} agent-steps per "
        f"CPU-second ({per_step:.1f} µs a step); {python / questions:.0%} of its {questions:,} mask questions went "
        "to the Python TurnSweeps.",
        "",
        "| part of the batched step | µs a step | share | |",
        "|---|---:|---:|---|",
    ]
    for label, part_seconds, note in rows:
        lines.append(f"| {label} | {1e6 * part_seconds / steps:.1f} | {part_seconds / elapsed:.0%} | {note} |")
    solver = seconds["compiled masks"] + inner
    wrapped_step = 1e6 * wrapped_elapsed / wrapped_steps
    wrapped_solver = 1e6 * wrapped.seconds["TurnSweep questions"] / wrapped_steps
    lines += [
        "",
        f"Solver kernels in the batched step (compiled masks and what the TurnSweeps ran): {1e6 * solver / steps:.1f} "
        f"µs a step ({solver / elapsed:.0%}).",
        f"Wrapped env (`tableenvs.make`), same run: {wrapped_steps / wrapped_elapsed:,.0f} agent-steps per CPU-second "
        f"({wrapped_step:.1f} µs a step), of which its TurnSweep questions {wrapped_solver:.1f} µs "
        f"({wrapped_solver / wrapped_step:.0%}); batched / wrapped: {wrapped_step / per_step:.2f}x.",
        f"Ceiling with this solver: the wrapped step over the batched engine's solver time a step, "
        f"{wrapped_step / (1e6 * solver / steps):.1f}x the wrapped env.",
    ]
    buckets = sorted(part for part in seconds if part.endswith(" jokers"))
    if buckets:
        lines += [
            "",
            "| the Python TurnSweeps' sweeps of plays onto the table, by table | sweeps | µs a sweep | µs a step |",
            "|---|---:|---:|---:|",
        ]
        for part in sorted(buckets, key=lambda part: (int(part.split("-")[0]), part)):
            calls = batched.calls[part]
            lines.append(
                f"| {part} | {calls:,} | {1e6 * seconds[part] / calls:,.0f} | {1e6 * seconds[part] / steps:.1f} |"
            )
    text = "\n".join(lines)
    print(text)
    if args.write_docs:
        command = f"python benchmarks/vector_rummikub_profile.py --seconds {args.seconds:g} --envs {args.envs}"
        stamp = f"`{command}`, commit {commit_label(':/', ':!/docs')}, {finished_on_this_machine(load)}."
        body = stamp + "\n\n" + text
        print(f"wrote {write_block(BEGIN, END, body)}", file=sys.stderr)


if __name__ == "__main__":
    started = time.perf_counter()
    main()
    print(f"({time.perf_counter() - started:.0f} s wall)", file=sys.stderr)
