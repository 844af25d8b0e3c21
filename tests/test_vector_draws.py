"""``tableenvs.vector.draws``: the compiled generator rows every batched engine draws from make numpy's own draws, in
the same order, and end in the state numpy's calls leave (so a batched env and the AEC env holding the same seed deal
the same cards, and the state record's ``rng`` is the same)."""

from __future__ import annotations

import numba
import numpy as np

from tableenvs.vector.draws import GENERATOR_WORDS, integers, load_state, permutation, seeded, state_of


@numba.njit(cache=False)
def _draw(rows, out, numbers):  # type: ignore[no-untyped-def]
    for e in range(rows.shape[0]):
        gen = rows[e]
        permutation(gen, 32, out[e])
        numbers[e, 0] = integers(gen, 8)
        numbers[e, 1] = integers(gen, 420)
        permutation(gen, 4, out[e, 32:])
        numbers[e, 2] = integers(gen, 3)
        permutation(gen, 9, out[e, 36:])
        permutation(gen, 1, out[e, 45:])
        numbers[e, 3] = integers(gen, 1 << 32)
        numbers[e, 4] = integers(gen, 1)


def test_compiled_draws_are_numpys_draws_and_leave_the_same_state():
    seeds = [0, 1, 2, 123, 2**40, *range(1000, 1035)]
    rows = seeded(seeds)
    out = np.full((40, 46), -1, np.int64)
    numbers = np.zeros((40, 5), np.int64)
    _draw(rows, out, numbers)
    for e, seed in enumerate(seeds):
        rng = np.random.default_rng(seed)
        expected = [
            *rng.permutation(32), rng.integers(8), rng.integers(420), *rng.permutation(4), rng.integers(3),
            *rng.permutation(9), *rng.permutation(1), rng.integers(1 << 32), rng.integers(1),
        ]  # fmt: skip
        got = [*out[e, :32], numbers[e, 0], numbers[e, 1], *out[e, 32:36], numbers[e, 2], *out[e, 36:46]]
        got += [numbers[e, 3], numbers[e, 4]]
        assert [int(x) for x in got] == [int(x) for x in expected], f"seed {seed}"
        assert state_of(rows[e]) == rng.bit_generator.state, f"seed {seed}"


@numba.njit(cache=False)
def _integer_then_permutation(gen, out, k, n):  # type: ignore[no-untyped-def]
    first = integers(gen, n)
    permutation(gen, k, out)
    return first


def test_draws_continue_a_generator_already_in_use_with_a_buffered_half_word():
    """A row loaded from a generator mid-stream (odd 32-bit draws leave numpy's half-word buffered) goes on as it."""
    for seed in range(50):
        generator = np.random.default_rng(seed)
        gen = np.zeros(GENERATOR_WORDS, np.uint64)
        load_state(gen, generator)
        for n, k in ((2, 56), (3, 36), (8, 19), (5, 1)):
            out = np.zeros(56, np.int64)
            assert _integer_then_permutation(gen, out, k, n) == generator.integers(n)
            assert out[:k].tolist() == generator.permutation(k).tolist()
        assert state_of(gen) == generator.bit_generator.state
