"""numpy's ``SeedSequence`` and PCG64 seeding compiled, for many spawn keys at once: the generators a tournament
gives its games (deal seeds, each seat's generator) without a numpy object per game.

Where you are: shared plumbing of :mod:`tableenvs.vector` (no game here), beside :mod:`tableenvs.vector.draws` (whose
generator rows these fill). ``SeedSequence(seed, spawn_key=key)`` hashes its entropy (the seed's 32-bit words,
padded to the pool size, then the key's words) into a pool of four words (``mix_entropy``) and draws its state
from the pool (``generate_state``); ``numpy.random.default_rng`` seeds PCG64 from four 64-bit words of it
(``pcg64_set_seed``). Both are written here operation for operation (numpy's ``bit_generator.pyx`` and
``pcg64.c``), so the rows are the very states numpy makes (``tests/test_vector_seeding.py`` compares them).

* :func:`spawned_words` — ``SeedSequence(seed, spawn_key=keys[i]).generate_state(words, np.uint32)`` for every row.
* :func:`spawned_generators` — the PCG64 state of ``default_rng(SeedSequence(seed, spawn_key=keys[i]))`` for every
  row, as generator rows (``GENERATOR_WORDS`` uint64 each).

A key's entries must be non-negative and below ``2**32`` (one word each, as any game or seat index is).
"""

from __future__ import annotations

import numpy as np

from tableenvs.vector.compile import kernels_once
from tableenvs.vector.draws import (
    GENERATOR_WORDS,
    HAS_UINT32,
    INC_HIGH,
    INC_LOW,
    STATE_HIGH,
    STATE_LOW,
    UINTEGER,
    next64,
)

POOL_SIZE = 4
_INIT_A = np.uint64(0x43B0D7E5)
_MULT_A = np.uint64(0x931E8875)
_INIT_B = np.uint64(0x8B51F9DD)
_MULT_B = np.uint64(0x58F38DED)
_MIX_MULT_L = np.uint64(0xCA01F9DD)
_MIX_MULT_R = np.uint64(0x4973F715)
_XSHIFT = np.uint64(16)
_M32 = np.uint64(0xFFFFFFFF)


def seed_words(seed: int) -> list[int]:
    """numpy's ``_int_to_uint32_array(seed)``: the 32-bit words of a non-negative int, lowest first (0: one word)."""
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    words = [0] if seed == 0 else []
    while seed > 0:
        words.append(seed & 0xFFFFFFFF)
        seed >>= 32
    return words


def pool_kernel(entropy, length, pool):
    """``SeedSequence.mix_entropy`` of row ``i``'s assembled entropy ``entropy[i, :length]`` into ``pool[i]``."""
    for i in range(entropy.shape[0]):
        hash_const = _INIT_A
        for k in range(POOL_SIZE):
            value = entropy[i, k] if k < length else np.uint64(0)
            value = (value ^ hash_const) & _M32  # hashmix
            hash_const = (hash_const * _MULT_A) & _M32
            value = (value * hash_const) & _M32
            pool[i, k] = value ^ (value >> _XSHIFT)
        for src in range(max(length, POOL_SIZE)):
            for dst in range(POOL_SIZE):
                if src < POOL_SIZE:  # the pool's words into each other
                    if src == dst:
                        continue
                    value = pool[i, src]
                else:  # then the entropy beyond the pool's size
                    value = entropy[i, src]
                value = (value ^ hash_const) & _M32  # hashmix
                hash_const = (hash_const * _MULT_A) & _M32
                value = (value * hash_const) & _M32
                value ^= value >> _XSHIFT
                mixed = (_MIX_MULT_L * pool[i, dst] - _MIX_MULT_R * value) & _M32  # mix
                pool[i, dst] = mixed ^ (mixed >> _XSHIFT)


def state_kernel(pool, out):
    """``SeedSequence.generate_state(out.shape[1], np.uint32)`` of every row's pool."""
    for i in range(pool.shape[0]):
        hash_const = _INIT_B
        for k in range(out.shape[1]):
            value = (pool[i, k % POOL_SIZE] ^ hash_const) & _M32
            hash_const = (hash_const * _MULT_B) & _M32
            value = (value * hash_const) & _M32
            out[i, k] = value ^ (value >> _XSHIFT)


def pcg64_kernel(words, rows):
    """``pcg64_set_seed`` from each row's eight 32-bit words (``generate_state(4, np.uint64)``, little-endian):
    state 0, increment ``initseq * 2 + 1``, a step, the initial state added, a step."""
    for i in range(words.shape[0]):
        w = np.empty(4, np.uint64)
        for k in range(4):
            w[k] = words[i, 2 * k] | (words[i, 2 * k + 1] << np.uint64(32))
        gen = rows[i]
        gen[STATE_HIGH] = np.uint64(0)
        gen[STATE_LOW] = np.uint64(0)
        gen[INC_HIGH] = (w[2] << np.uint64(1)) | (w[3] >> np.uint64(63))
        gen[INC_LOW] = (w[3] << np.uint64(1)) | np.uint64(1)
        next64(gen)
        low = gen[STATE_LOW] + w[1]
        carry = np.uint64(1) if low < gen[STATE_LOW] else np.uint64(0)
        gen[STATE_HIGH] = gen[STATE_HIGH] + w[0] + carry
        gen[STATE_LOW] = low
        next64(gen)
        gen[HAS_UINT32] = np.uint64(0)
        gen[UINTEGER] = np.uint64(0)


def _kernels() -> tuple:
    return kernels_once((pool_kernel, state_kernel, pcg64_kernel), "numpy's seeding", __file__, "about 3 s")


def _pools(seed: int, keys: np.ndarray) -> np.ndarray:
    """Every row's ``SeedSequence(seed, spawn_key=keys[i]).pool`` (uint64 words)."""
    keys = np.asarray(keys)
    if keys.ndim != 2 or keys.dtype.kind not in "iu":
        raise ValueError(f"spawn keys must be a 2-D int array, got shape {keys.shape} dtype {keys.dtype}")
    if keys.size and (keys.min() < 0 or keys.max() > 0xFFFFFFFF):
        raise ValueError("spawn key entries must be in 0..2**32 - 1")
    run = seed_words(int(seed))
    if keys.shape[1]:
        run += [0] * (POOL_SIZE - len(run))  # numpy pads the seed's words to the pool size before a spawn key
    entropy = np.empty((len(keys), len(run) + keys.shape[1]), np.uint64)
    entropy[:, : len(run)] = np.array(run, np.uint64)
    entropy[:, len(run) :] = keys
    pool = np.empty((len(keys), POOL_SIZE), np.uint64)
    _kernels()[0](entropy, entropy.shape[1], pool)
    return pool


def spawned_words(seed: int, keys: np.ndarray, words: int) -> np.ndarray:
    """uint64 ``(len(keys), words)``: row ``i`` is ``SeedSequence(seed, spawn_key=tuple(keys[i]))
    .generate_state(words, np.uint32)``."""
    out = np.empty((len(keys), words), np.uint64)
    _kernels()[1](_pools(seed, keys), out)
    return out


def spawned_generators(seed: int, keys: np.ndarray) -> np.ndarray:
    """uint64 ``(len(keys), GENERATOR_WORDS)``: row ``i`` is the generator row (:mod:`tableenvs.vector.draws`) of
    ``numpy.random.default_rng(SeedSequence(seed, spawn_key=tuple(keys[i])))``."""
    words = spawned_words(seed, keys, 8)
    rows = np.zeros((len(keys), GENERATOR_WORDS), np.uint64)
    _kernels()[2](words, rows)
    return rows
