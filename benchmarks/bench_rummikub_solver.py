"""Benchmark of the Rummikub solver against the ``rummikub-solver`` package (an ILP on cvxpy + HiGHS).

Run: ``python benchmarks/bench_rummikub_solver.py [--positions 300] [--seed 7]``. Prints one table row per
timed call: median, p90 and worst time in milliseconds over the same fixed, seeded mid-game positions
(tables of 9..60 tiles built from random melds, jokers included; racks of 4..20 tiles drawn at random
from the rest). Each call is timed alone in CPU time (``time.process_time``) after one warm-up (so numba's
compilation or disk-cache load is not counted); our calls keep the least of ``--repeats`` rounds (default
3) per position, the peer is timed once. ``rummikub-solver`` is imported lazily; if it is missing
its row says so.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from tableenvs.rummikub import JOKER, TILE_TYPES, playable, solve

FULL = np.full(TILE_TYPES, 2, dtype=np.int64)
CLOCK = time.process_time  # CPU time of this process: other jobs on the machine do not count


def random_meld(rng: np.random.Generator) -> np.ndarray:
    """Count vector of a random run (3..7) or group (3..4), with a joker in one meld of six."""
    if rng.random() < 0.5:
        colour, length = int(rng.integers(4)), int(rng.integers(3, 8))
        start = int(rng.integers(1, 15 - length))
        tiles = [colour * 13 + n - 1 for n in range(start, start + length)]
    else:
        number = int(rng.integers(1, 14))
        tiles = [int(c) * 13 + number - 1 for c in rng.permutation(4)[: int(rng.integers(3, 5))]]
    if rng.random() < 1 / 6:
        tiles[int(rng.integers(len(tiles)))] = JOKER
    return np.bincount(tiles, minlength=TILE_TYPES)


def positions(count: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``count`` (table, rack) pairs: tables of 9..60 tiles, racks of 4..20 tiles."""
    rng = np.random.default_rng(seed)
    result = []
    while len(result) < count:
        target = int(rng.integers(9, 61))
        table = np.zeros(TILE_TYPES, dtype=np.int64)
        for _ in range(100):
            meld = random_meld(rng)
            if table.sum() + meld.sum() <= target and np.all(table + meld <= FULL):
                table += meld
        if table.sum() < 9:
            continue
        bag = np.repeat(np.arange(TILE_TYPES), FULL - table)
        rack = np.bincount(rng.choice(bag, size=int(rng.integers(4, 21)), replace=False), minlength=TILE_TYPES)
        result.append((table, rack))
    return result


def timed(call, cases, repeats: int = 1) -> np.ndarray:
    """Milliseconds per case: the least CPU time over ``repeats`` rounds (the shared machine adds noise)."""
    call(*cases[0])  # warm-up: compile or load the kernels
    best = np.full(len(cases), np.inf)
    for _ in range(repeats):
        for i, case in enumerate(cases):
            start = CLOCK()
            call(*case)
            best[i] = min(best[i], CLOCK() - start)
    return best * 1e3


def peer_solver():
    """``(solve(table, rack), version)`` of the ``rummikub-solver`` package, or ``None`` if missing."""
    try:
        import rummikub_solver as rs
    except ImportError:
        return None
    ruleset = rs.RuleSet()

    def peer_solve(table, rack):
        state = ruleset.new_game()
        state.add_table(*(np.repeat(np.arange(TILE_TYPES), table) + 1).tolist())
        state.add_rack(*(np.repeat(np.arange(TILE_TYPES), rack) + 1).tolist())
        state.initial = False
        return ruleset.solve(state, rs.SolverMode.TILE_COUNT)

    return peer_solve, f"{rs.__version__}, backend {ruleset.backend.value}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeats", type=int, default=3, help="rounds per call of ours (least time kept)")
    parser.add_argument("--no-peer", action="store_true", help="skip the rummikub-solver row")
    args = parser.parse_args()
    cases = positions(args.positions, args.seed)
    empty = np.zeros(TILE_TYPES, dtype=np.int64)
    rows = {
        "solve(objective='tiles')": timed(lambda t, r: solve(t, r), cases, args.repeats),
        "playable(staged=0)": timed(lambda t, r: playable(t, r, empty), cases, args.repeats),
    }
    peer = None if args.no_peer else peer_solver()
    if peer is not None:
        rows[f"rummikub-solver TILE_COUNT ({peer[1]})"] = timed(peer[0], cases)
    tables = np.array([t.sum() for t, _ in cases])
    racks = np.array([r.sum() for _, r in cases])
    print(
        f"{len(cases)} positions (seed {args.seed}); table tiles {tables.min()}..{tables.max()} "
        f"(median {int(np.median(tables))}), rack tiles {racks.min()}..{racks.max()}, "
        f"{sum(int(t[JOKER] + r[JOKER] > 0) for t, r in cases)} with a joker; "
        f"python {platform.python_version()}"
    )
    print("| call | median ms | p90 ms | worst ms |")
    print("| --- | ---: | ---: | ---: |")
    for name, ms in rows.items():
        print(f"| {name} | {np.median(ms):.3f} | {np.percentile(ms, 90):.3f} | {ms.max():.3f} |")
    if peer is None:
        print("no peer row (--no-peer, or rummikub-solver is not installed: pip install rummikub-solver)")
    else:
        peer_ms = rows[next(name for name in rows if name.startswith("rummikub-solver"))]
        solve_ms = rows["solve(objective='tiles')"]
        print(f"median speed-up of solve over rummikub-solver: {np.median(peer_ms) / np.median(solve_ms):.0f}x")
    worst = int(np.argmax(rows["solve(objective='tiles')"]))
    print(
        f"worst solve: position {worst}, table {tables[worst]} tiles, rack {racks[worst]} tiles, "
        f"jokers {int(cases[worst][0][JOKER] + cases[worst][1][JOKER])}"
    )


if __name__ == "__main__":
    main()
