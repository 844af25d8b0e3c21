"""Questions answered at a cut from kept words (``kernel.reach``) against a whole walk.

For a play onto the table the engine keeps, per entry of the turn's recorded sweep, a forward word (reached from the
root, along an exact path, tile types used above their bounds) and a backward word (the same towards an accepted
end), and answers each question at one layer boundary (the cut): a later question redoes only the layers between the
boundaries still known and the new cut. Every answer (mask and exact-play flag), at whatever cut it is asked and
after whatever questions came before, must equal a whole walk of the same recorded sweep (``sweep.walk``, which
the ILP differential tests tie to the oracle); and the backward words asked down to the root must give the same
exact-play flag as the walk's ``exact_to_end``.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_rewalk import growing_questions, tail_and_random_positions

from tableenvs.rummikub import _solver_kernel as kernel
from tableenvs.rummikub.sweep import ZERO_DELTA, graph, walk


def ask(recorded, delta, old_delta, words, bounds, cut):
    lo, _, result = recorded
    return kernel.kernels()[5](delta, old_delta, lo[52] + delta[52], *graph(result), *words, bounds, cut)


@pytest.mark.parametrize("seed", range(6))
def test_answers_from_kept_words_equal_a_whole_walk(seed):
    rng = np.random.default_rng(2100 + seed)
    positions = tail_and_random_positions(rng, seed)
    compared = jokers = cuts = 0
    for table, rack in positions:
        recorded = None
        for question_recorded, delta in growing_questions(rng, table, rack, False):
            if recorded is None:  # the turn's first question: nothing staged, no words known
                recorded = question_recorded
                n_entries = recorded[2][0]
                words = (np.full(n_entries + 3, -7, np.int64), np.full(n_entries + 3, -7, np.int64))  # garbage
                bounds = np.array([-1, 66], np.int64)
                mask, exact = ask(recorded, ZERO_DELTA, ZERO_DELTA, words, bounds, -1)
                expected = walk(recorded, ZERO_DELTA)
                assert np.array_equal(mask, expected[0]) and exact == expected[1]
                old_delta = ZERO_DELTA
            assert question_recorded is recorded
            cut = -1 if rng.random() < 0.6 else int(rng.integers(0, 66))  # the engine's choice, or any boundary
            mask, exact = ask(recorded, delta, old_delta, words, bounds, cut)
            expected = walk(recorded, delta)
            assert np.array_equal(mask, expected[0]) and exact == expected[1]
            assert 0 <= bounds[1] <= bounds[0] <= 65  # some boundary is known both ways
            if rng.random() < 0.3:  # the backward words at every boundary, as the arrangement at a commit reads them
                ask(recorded, delta, delta, words, bounds, 0)
                assert bool(words[1][0] & kernel.EXACT) == expected[1] and bounds[1] == 0
                cuts += 1
            old_delta = delta
            compared += 1
            jokers += bool(delta[52])
    assert compared > 40 and jokers > 0 and cuts > 5
