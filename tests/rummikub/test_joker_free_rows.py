"""The sweep's joker-free relaxation per colour (``kernel.joker_free_rows``), checked directly.

``joker_free_rows(lo, hi, rows)`` sets bit ``r`` of ``rows[c, n]`` when colour ``c`` could finish from run state
``r`` before its cell at 0-based number ``n`` (13: after the last number) without any joker, in a relaxation that
must allow every move the sweep makes. So along any accepted path that has placed all of its jokers, every colour's
run state lies in its row: here the path of a valid table's own arrangement (``lo = hi = table``), replayed cell by
cell. The sweep drops a state only when a colour lies outside its row (and counts a joker for it), so a row missing
a state that a real finish passes through would remove plays: the differential tests would see that too, this test
names it.
"""

from __future__ import annotations

import numpy as np
import pytest
from rummikub_support import random_table

from tableenvs.rummikub import _solver_kernel as kernel
from tableenvs.rummikub import solver

ALL_RUN_STATES = (1 << len(kernel.RUN_STATES)) - 1


def joker_free_rows(lo, hi) -> np.ndarray:
    rows = np.zeros((4, 14), np.int64)
    kernel.joker_free_rows(lo, hi, rows)
    return rows


def run_states_before_each_number(choices) -> list[tuple[list[int], int]]:
    """Per number 1..13 and after 13: each colour's run state before that number's cells, and the jokers placed."""
    states, jokers, out = [0, 0, 0, 0], 0, []
    for number0 in range(13):
        out.append((list(states), jokers))
        for colour in range(4):
            code = int(choices[5 * number0 + colour])
            used, to_groups, run_jokers = code >> 4, (code >> 2) & 3, code & 3
            states[colour] = int(kernel.RUN_NEXT[states[colour], used - to_groups + run_jokers])
            assert states[colour] >= 0
            jokers += run_jokers
        jokers += int(choices[5 * number0 + 4])
    out.append((list(states), jokers))
    return out


@pytest.mark.parametrize("seed", range(3))
def test_an_arranged_table_path_stays_in_the_rows(seed):
    rng = np.random.default_rng(2600 + seed)
    checked = narrower = 0
    for _ in range(150):
        table = random_table(rng, int(rng.integers(3, 90)))
        choices = solver._arrangement(table.tobytes())
        assert choices is not None  # a valid table
        rows = joker_free_rows(table, table)
        narrower += int(np.count_nonzero(rows[:, :13] != ALL_RUN_STATES))
        for number0, (states, jokers) in enumerate(run_states_before_each_number(choices)):
            if jokers < table[52]:
                continue  # jokers still to place: the relaxation says nothing
            for colour in range(4):
                assert rows[colour, number0] >> states[colour] & 1, (table, number0, colour, states)
                checked += 1
    assert checked > 3000  # most positions of most paths have no joker left to place
    assert narrower > 3000  # and the rows do leave states out (else the relaxation would prune nothing)


def test_the_rows_end_with_the_finished_run_states():
    rows = joker_free_rows(np.zeros(53, np.int64), np.zeros(53, np.int64))
    finished = [r for r, (k1, k2, _) in enumerate(kernel.RUN_STATES) if k1 == 0 and k2 == 0]
    assert rows[:, 13].tolist() == [sum(1 << r for r in finished)] * 4
    # an empty table: a colour finishes only with no short run open, at every number (no tile extends one)
    assert rows[:, :13].tolist() == [[sum(1 << r for r in finished)] * 13] * 4
