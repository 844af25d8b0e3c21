"""``tableenvs.vector.draws``: draws made in compiled code through each generator's C state are numpy's own draws,
in the same order, and leave every generator in the state numpy's calls would (so a batched env and the AEC env
holding the same seed deal the same cards, and the state record's ``rng`` is the same)."""

from __future__ import annotations

import numba
import numpy as np

from tableenvs.vector.draws import Streams, integers, permutation


@numba.njit(cache=False)
def _draw(function, states, out, numbers):  # type: ignore[no-untyped-def]
    for e in range(states.shape[0]):
        permutation(function, states[e], 32, out[e])
        numbers[e, 0] = integers(function, states[e], 8)
        numbers[e, 1] = integers(function, states[e], 420)
        permutation(function, states[e], 4, out[e, 32:])
        numbers[e, 2] = integers(function, states[e], 3)
        permutation(function, states[e], 9, out[e, 36:])
        permutation(function, states[e], 1, out[e, 45:])
        numbers[e, 3] = integers(function, states[e], 1 << 32)
        numbers[e, 4] = integers(function, states[e], 1)


def test_compiled_draws_are_numpys_draws_and_leave_the_same_state():
    streams = Streams(40)
    seeds = [0, 1, 2, 123, 2**40, *range(1000, 1035)]
    streams.seed(seeds)
    out = np.full((40, 46), -1, np.int64)
    numbers = np.zeros((40, 5), np.int64)
    _draw(streams.function, streams.states, out, numbers)
    for e, seed in enumerate(seeds):
        rng = np.random.default_rng(seed)
        expected = [
            *rng.permutation(32), rng.integers(8), rng.integers(420), *rng.permutation(4), rng.integers(3),
            *rng.permutation(9), *rng.permutation(1), rng.integers(1 << 32), rng.integers(1),
        ]  # fmt: skip
        got = [*out[e, :32], numbers[e, 0], numbers[e, 1], *out[e, 32:36], numbers[e, 2], *out[e, 36:46]]
        got += [numbers[e, 3], numbers[e, 4]]
        assert [int(x) for x in got] == [int(x) for x in expected], f"seed {seed}"
        assert streams.generators[e].bit_generator.state == rng.bit_generator.state, f"seed {seed}"
