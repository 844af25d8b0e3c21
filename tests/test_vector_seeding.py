"""``tableenvs.vector.seeding``: numpy's SeedSequence hashing and PCG64 seeding compiled give the very words and
generator states numpy gives, for seeds of one to three 32-bit words (0 included) and spawn keys of several
lengths and values; bad keys are refused in one line."""

from __future__ import annotations

import numpy as np
import pytest

from tableenvs.vector.draws import load_state
from tableenvs.vector.seeding import spawned_generators, spawned_words


@pytest.mark.parametrize("seed", [0, 1, 11, 2**32 - 1, 2**32, 12345678901234, 2**70 + 5])
def test_the_words_and_generators_are_numpys(seed):
    rng = np.random.default_rng(seed % 1000)
    for length in (1, 2, 3, 5, 7):  # 3 + 4 words of entropy: past the pool's four
        keys = rng.integers(0, 2**32, (20, length), dtype=np.int64)
        keys[0] = 0
        keys[1, -1] = 2**32 - 1
        words = spawned_words(seed, keys, 5)
        rows = spawned_generators(seed, keys)
        for key, mine, row in zip(keys, words, rows, strict=True):
            sequence = np.random.SeedSequence(seed, spawn_key=tuple(int(k) for k in key))
            assert mine.tolist() == sequence.generate_state(5, np.uint32).tolist()
            expected = np.zeros(len(row), np.uint64)
            load_state(expected, np.random.default_rng(sequence))
            assert row.tolist() == expected.tolist()


def test_spawned_children_and_a_generator_that_draws_on():
    """A spawned child (the evaluation's seat generators: spawn_key + (seat,)) is the same sequence, and the
    compiled row draws as numpy's generator does."""
    from tableenvs.vector.draws import state_of

    parent = np.random.SeedSequence(7, spawn_key=(3, 1))
    children = parent.spawn(4)
    rows = spawned_generators(7, np.array([[3, 1, s] for s in range(4)]))
    for child, row in zip(children, rows, strict=True):
        generator = np.random.default_rng(0)
        generator.bit_generator.state = state_of(row)
        assert generator.integers(0, 1000, 20).tolist() == np.random.default_rng(child).integers(0, 1000, 20).tolist()


def test_bad_keys_are_refused_in_one_line():
    for keys, match in ((np.array([[-1]]), "0..2\\*\\*32"), (np.array([[2**32]]), "0..2\\*\\*32"),
                        (np.array([1, 2]), "2-D int array"), (np.array([[0.5]]), "2-D int array")):  # fmt: skip
        with pytest.raises(ValueError, match=match) as error:
            spawned_words(1, keys, 2)
        assert "\n" not in str(error.value)
