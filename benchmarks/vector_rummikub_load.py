"""What it costs to load a Rummikub game under way into the batched engine, and a broader differential sweep of loads.

Costs: ``--loads`` positions under way (``tests/rummikub/game_positions.positions_under_way``: random legal play at
2, 3 and 4 players in turn, stopped at the start of a turn, in the middle of one, near the end of the pool or once it
is empty) are each loaded into one row of a 64-row engine that has played (its rows hold other games' turns) by
``load_state(i, record)`` (checked), ``load_state(i, record, check=False)`` and ``load_env(i, env)``, and by
``load_env`` into a block of 8 rows (a search's root actions, per row); CPU time per load, with the part spent on the
loaded rows' masks (their first question: a sweep from the staged tiles) apart. For scale, the AEC env's own copy and
first question: ``env.clone()`` and its mask, and ``TableEnv.from_state(record)`` and its mask.

Sweep: within ``--seconds`` of CPU, batches of ``--batch`` positions (the player counts and rules options of
``tests/rummikub/test_rummikub_batched_load.py`` in turn, new seeds each batch) are loaded into an engine that has
played 40 steps, and ``tests/vector_differential.py``'s ``loaded_rows_play_on`` steps them and the AEC envs opened
from the records to the end of their game (seat to act, observation, mask, rewards, game end at every step). Any
disagreement stops it with the assertion naming the row and step.

Run: ``nice -n 19 python benchmarks/vector_rummikub_load.py [--loads 300] [--seconds 120] [--write-docs]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the shared differential harness
sys.path.insert(0, str(ROOT / "tests" / "rummikub"))  # the positions under way

from common import commit_label, finished_on_this_machine, markers, write_block  # noqa: E402
from game_positions import positions_under_way  # noqa: E402
from vector_differential import loaded_rows_play_on  # noqa: E402

import tableenvs  # noqa: E402
import tableenvs.vector  # noqa: E402
from tableenvs.core.table_env import TableEnv  # noqa: E402

NAME = "rummikub_v0"
CLOCK = time.process_time
BEGIN, END = markers("vector-rummikub-load", "vector_rummikub_load.py --write-docs")
#: the sweep's settings, in turn (the test's)
SETTINGS = (
    {"num_players": 2},
    {"num_players": 3},
    {"num_players": 4},
    {"num_players": 4, "strict_commit": False, "draw_after_play": True, "games_per_episode": 2},
    {"num_players": 3, "pool_exhausted": "draw", "end_on_empty_pool": True, "min_initial": 0},
    {"num_players": 2, "max_turns": 120, "min_initial": 12, "games_per_episode": 3},
)


class MaskClock:
    """Times ``MaskSolver.load_rows`` (the loaded rows' first question) while installed."""

    def __init__(self) -> None:
        from tableenvs.rummikub.batched_masks import MaskSolver

        self.seconds = 0.0
        self._original = MaskSolver.load_rows
        clock = self

        def timed(solver, engine, rows):
            start = CLOCK()
            clock._original(solver, engine, rows)
            clock.seconds += CLOCK() - start

        MaskSolver.load_rows = timed  # type: ignore[method-assign]


def warm_engine(players: int, rows: int) -> object:
    batched = tableenvs.vector.make(NAME, rows, num_players=players)
    batched.reset(seed=1)
    rng = np.random.default_rng(2)
    for _ in range(40):
        batched.step([rng.choice(np.flatnonzero(m)) for m in batched.mask])
    return batched


def costs(loads: int) -> tuple[list[str], dict[str, int]]:
    """The cost table's rows (µs of CPU a load or a row), and what the positions were."""
    per_count = -(-loads // 3)
    envs = [env for players in (2, 3, 4) for env in positions_under_way({"num_players": players}, per_count, 500)]
    kinds = {
        "positions": len(envs),
        "mid-turn": sum(bool(env.game.staged.any()) for env in envs),
        "seat not opened": sum(not env.game.opened[env.game.to_act] for env in envs),
        "pool <= 4": sum(env.game.pool_size <= 4 for env in envs),
    }
    records = [env.get_state() for env in envs]
    engines = {players: warm_engine(players, 64) for players in (2, 3, 4)}
    for env, record in zip(envs[:6], records[:6], strict=True):  # compile the loader before timing
        engines[env.num_players].load_state(0, record)
    swept = np.zeros(len(envs), np.bool_)  # the positions whose first question goes to the Python TurnSweep
    for i, env in enumerate(envs):
        masks = engines[env.num_players]._masks
        before = masks.python_questions
        engines[env.num_players].load_env(0, env)
        swept[i] = masks.python_questions > before
    kinds["answered by the Python TurnSweeps"] = int(swept.sum())
    clock = MaskClock()
    rows: list[str] = []

    def timed(what: str, load, per_rows: int = 1) -> None:
        rng = np.random.default_rng(0)
        clock.seconds = 0.0
        spent = np.zeros(len(envs))
        for i, (env, record) in enumerate(zip(envs, records, strict=True)):
            engine, row = engines[env.num_players], int(rng.integers(0, 64 - per_rows))
            start = CLOCK()
            load(engine, row, env, record)
            spent[i] = (CLOCK() - start) / per_rows
        rows.append(
            f"| {what} | {1e6 * spent.mean():,.0f} | {1e6 * spent[~swept].mean():,.0f} | "
            f"{1e6 * spent[swept].mean():,.0f} | {clock.seconds / (spent.sum() * per_rows):.0%} |"
        )
        print(rows[-1], file=sys.stderr, flush=True)

    timed("`load_state(i, record)` (checked)", lambda b, i, env, record: b.load_state(i, record))
    timed("`load_state(i, record, check=False)`", lambda b, i, env, record: b.load_state(i, record, check=False))
    timed("`load_env(i, env)`", lambda b, i, env, record: b.load_env(i, env))
    timed("`load_env(range(i, i + 8), env)`, per row", lambda b, i, env, record: b.load_env(range(i, i + 8), env), 8)
    for what, make in (
        ("AEC, for scale: `env.clone()` and its mask", lambda env, record: env.clone()),
        ("AEC, for scale: `TableEnv.from_state(record)` and its mask", lambda env, record: TableEnv.from_state(record)),
    ):
        spent = np.zeros(len(envs))
        for i, (env, record) in enumerate(zip(envs, records, strict=True)):
            start = CLOCK()
            copy = make(env, record)
            copy.observe(copy.agent_selection)
            spent[i] = CLOCK() - start
        rows.append(
            f"| {what} | {1e6 * spent.mean():,.0f} | {1e6 * spent[~swept].mean():,.0f} | "
            f"{1e6 * spent[swept].mean():,.0f} | |"
        )
        print(rows[-1], file=sys.stderr, flush=True)
    return rows, kinds


def sweep(seconds: float, batch: int) -> dict[str, int]:
    """Batches of loaded positions played on against the AEC env until ``seconds`` of CPU are spent."""
    start = CLOCK()
    totals = {"batches": 0, "positions": 0, "mid-turn": 0, "steps": 0, "row-steps": 0}
    number = 0
    while CLOCK() - start < seconds:
        options = SETTINGS[number % len(SETTINGS)]
        envs = positions_under_way(options, batch, seed=100_000 + 1_000 * number)
        batched = tableenvs.vector.make(NAME, batch + 3, **options)
        batched.reset(seed=number)
        rng = np.random.default_rng(number)
        for _ in range(40):
            batched.step([rng.choice(np.flatnonzero(m)) for m in batched.mask])
        rows = [batch + 2 - i for i in range(batch)]
        for env, row in zip(envs, rows, strict=True):
            batched.load_state(row, env.get_state())
        opened = [TableEnv.from_state(env.get_state()) for env in envs]
        steps = loaded_rows_play_on(batched, opened, rows, rng, games=1)
        totals["batches"] += 1
        totals["positions"] += batch
        totals["mid-turn"] += sum(bool(env.game.staged.any()) for env in envs)
        totals["steps"] += steps
        totals["row-steps"] += steps * batch
        print(f"batch {number}: {options}: {steps} steps agreed", file=sys.stderr, flush=True)
        number += 1
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loads", type=int, default=300, help="positions timed (a third at each player count)")
    parser.add_argument("--seconds", type=float, default=120.0, help="CPU seconds of the differential sweep")
    parser.add_argument("--batch", type=int, default=16, help="positions loaded per sweep batch")
    parser.add_argument("--write-docs", action="store_true", help="write the figures into docs/vector.md")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    rows, kinds = costs(args.loads)
    totals = sweep(args.seconds, args.batch) if args.seconds > 0 else None
    described = ", ".join(f"{value} {key}" for key, value in kinds.items())
    text = "\n".join(
        [
            f"Positions timed: {described}; each loaded into a row of a 64-row engine (2, 3 or 4 players) that had "
            "played 40 random steps. Mean µs of CPU per load (per row for the block), over all positions and apart "
            "for those whose first question fits the compiled slots and those whose sweep does not (big tables: "
            "the row's Python TurnSweep answers, as the AEC env's does); masks: the share of the time spent on the "
            "loaded rows' first question (a new sweep from the staged tiles), the rest is writing the rows and their "
            "observations (and, checked, reading the record in full).",
            "",
            "| load | µs, all | compiled slots | Python TurnSweeps | masks |",
            "|---|---|---|---|---|",
            *rows,
        ]
        + (
            [
                "",
                f"Sweep: {totals['positions']:,} loaded positions ({totals['mid-turn']:,} mid-turn) in "
                f"{totals['batches']} batches over the six option sets of the tests played on to the end of their "
                f"game as the AEC env does: {totals['row-steps']:,} row-steps ({totals['steps']:,} batched steps) "
                "compared, no disagreement.",
            ]
            if totals is not None
            else []
        )
    )
    print(text)
    if args.write_docs:
        command = (
            f"nice -n 19 python benchmarks/vector_rummikub_load.py --loads {args.loads} --seconds {args.seconds:g} "
            f"--batch {args.batch} --write-docs"
        )
        stamp = f"`{command}`, commit {commit_label(':/', ':!/docs')}, {finished_on_this_machine(load)}."
        path = write_block(BEGIN, END, f"{stamp}\n\n{text}")
        print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
