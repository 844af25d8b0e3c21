"""The melds of a sweep path from the compiled replay (``kernel.meld_records``) against the
Python replay it replaced, kept here as the reference.

Both replay the sweep's run rule per colour (short runs first, runs without a piece close, leftover pieces start
runs) and split each number's group tiles with ``split_groups``; the melds must be the same, in the same order (the
published arrangement is compared meld for meld by the trajectory digests).
"""

from __future__ import annotations

import numpy as np
import pytest
from rummikub_support import random_rack, random_table
from test_solver_tail import TAIL, counts

from tableenvs.rummikub import solver, sweep
from tableenvs.rummikub.melds import Meld, group_meld, split_groups
from tableenvs.rummikub.tiles import JOKER, NUMBERS


def reference_melds(choices: list[int]) -> list[Meld]:
    """The Python replay used before (``solver._melds_from_choices`` up to commit 35198c9)."""
    melds: list[Meld] = []
    open_runs: tuple[list[list[int]], ...] = ([], [], [], [])  # per colour: [first cell's type, tile, tile, ...]
    for number0 in range(NUMBERS):
        layer = number0 * 5
        group_counts = None
        for colour in range(4):
            code = choices[layer + colour]
            runs = open_runs[colour]
            if not code and not runs:
                continue
            to_groups = (code >> 2) & 3
            if to_groups:
                group_counts = group_counts or [0, 0, 0, 0]
                group_counts[colour] = to_groups
            real = (code >> 4) - to_groups
            pieces = real + (code & 3)
            if len(runs) > 1:
                runs.sort(key=len)
            if len(runs) > pieces:
                melds.extend(run_meld(run) for run in runs[pieces:])
                del runs[pieces:]
            t = colour * NUMBERS + number0
            for k in range(pieces):
                tile = t if k < real else JOKER
                if k < len(runs):
                    runs[k].append(tile)
                else:
                    runs.append([t, tile])
        group_jokers = choices[layer + 4]
        if group_jokers or group_counts:
            for colours, jokers in split_groups(tuple(group_counts or (0, 0, 0, 0)), group_jokers):
                melds.append(group_meld(number0 + 1, colours, jokers))
    for runs in open_runs:
        melds.extend(run_meld(run) for run in runs)
    return melds


def run_meld(run: list[int]) -> Meld:
    first = run[0]
    return Meld("run", tuple(run[1:]), tuple(range(first, first + len(run) - 1)))


def path_choices(table, rack, objective):
    """Choices of a best play (``solve``'s scored sweep) and of the table's own arrangement."""
    found = []
    arrangement = solver._arrangement(table.tobytes())
    if arrangement is not None:
        found.append(list(arrangement))
    solution = solver.solve(table, rack, objective=objective)
    if solution is not None:
        found.append(list(solution._choices))
    opening = solver.solve(table, rack, objective=objective, opening=True, min_initial=10)
    if opening is not None:
        found.append(list(opening._choices))
    return found


@pytest.mark.parametrize("seed", range(4))
def test_compiled_replay_equals_the_python_one(seed):
    rng = np.random.default_rng(2400 + seed)
    positions = [tuple(counts(tiles) for tiles in TAIL[seed])[:2]]  # a tail position: both jokers on the table
    for _ in range(60):
        table = random_table(rng, int(rng.integers(0, 100)))
        rack = random_rack(rng, table, int(rng.integers(3, 25)))
        if table[52] + rack[52] < 2 and rng.random() < 0.5:
            rack[52] += 1
        positions.append((table, rack))
    compared = runs = groups = jokers = 0
    for table, rack in positions:
        for choices in path_choices(table, rack, "tiles" if rng.random() < 0.5 else "value"):
            got = sweep.melds_from_choices(choices)
            expected = reference_melds(choices)
            assert got == expected
            compared += 1
            runs += sum(m.kind == "run" for m in got)
            groups += sum(m.kind == "group" for m in got)
            jokers += sum(JOKER in m.tiles for m in got)
    assert compared > 100 and runs > 300 and groups > 100 and jokers > 20
