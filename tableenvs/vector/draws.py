"""numpy's default generator (PCG64) compiled: the draws every batched engine makes, exactly as numpy makes them.

Where you are: shared plumbing of :mod:`tableenvs.vector` (no game here). A batched engine keeps each env's
generator as one row of a ``uint64`` array ``(num_envs, GENERATOR_WORDS)`` (:func:`seeded`): the 128-bit LCG state
(high, low), the 128-bit increment (high, low) and numpy's buffered half-word (``has_uint32``, ``uinteger``). The
functions below take one such row (``rows[e]``) and advance it as numpy does (``pcg64.h``: step, then the XSL-RR
output; ``distributions.c``: Lemire's bounded draw for ``Generator.integers``, ``random_interval`` for
``shuffle``/``permutation``), so env ``i`` seeded ``s`` draws the very numbers ``numpy.random.default_rng(s)``
draws, and its row turned back into a state (:func:`state_of`) is the AEC record's ``rng``
(``tests/test_vector_draws.py`` checks both, draw for draw). A row is plain data: an engine copies it in compiled
code (a game's starting generator, to replay it) as it copies any other field.

The functions are ``register_jitable``: each engine's kernels compile them in (``tableenvs.vector.compile``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]
from numba import types
from numba.extending import intrinsic, register_jitable

#: The words of one generator row: state high, state low, increment high, increment low, has_uint32, uinteger.
STATE_HIGH, STATE_LOW, INC_HIGH, INC_LOW, HAS_UINT32, UINTEGER = range(6)
GENERATOR_WORDS = 6

_M32 = np.uint64(0xFFFFFFFF)
_M64 = (1 << 64) - 1
_MULT_HIGH = np.uint64(0x2360ED051FC65DA4)
_MULT_LOW = np.uint64(0x4385DF649FCCF645)
_S32 = np.uint64(32)
_S58 = np.uint64(58)
_S63 = np.uint64(63)
_S64 = np.uint64(64)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)


@intrinsic
def _multiply_high(typingctx, a, b):
    """The high 64 bits of the 128-bit product ``a * b`` (two uint64), as numpy's C does it: one 128-bit multiply."""
    signature = types.uint64(types.uint64, types.uint64)

    def codegen(context, builder, sig, args):
        wide = ir.IntType(128)
        product = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        return builder.trunc(builder.lshr(product, ir.Constant(wide, 64)), ir.IntType(64))

    return signature, codegen


@register_jitable
def next64(gen):
    """The next 64-bit output of generator row ``gen`` (state = state * MULT + inc, then XSL-RR of the new state)."""
    high = gen[STATE_HIGH]
    low = gen[STATE_LOW]
    new_low = low * _MULT_LOW
    new_high = high * _MULT_LOW + low * _MULT_HIGH + _multiply_high(low, _MULT_LOW)
    low2 = new_low + gen[INC_LOW]
    carry = _ONE if low2 < new_low else _ZERO
    high2 = new_high + gen[INC_HIGH] + carry
    gen[STATE_HIGH] = high2
    gen[STATE_LOW] = low2
    x = high2 ^ low2
    rot = high2 >> _S58
    return (x >> rot) | (x << ((_S64 - rot) & _S63))


@register_jitable
def next32(gen):
    """The next 32-bit output (numpy's ``next_uint32``: half of a 64-bit output, the other half buffered)."""
    if gen[HAS_UINT32] != _ZERO:
        gen[HAS_UINT32] = _ZERO
        return gen[UINTEGER]
    value = next64(gen)
    gen[HAS_UINT32] = _ONE
    gen[UINTEGER] = value >> _S32
    return value & _M32


@register_jitable
def interval(gen, max_value):
    """numpy's ``random_interval(max_value)`` for ``max_value < 2**32``: uniform in ``0..max_value``."""
    if max_value == 0:
        return 0
    top = np.uint64(max_value)
    mask = top
    mask |= mask >> np.uint64(1)
    mask |= mask >> np.uint64(2)
    mask |= mask >> np.uint64(4)
    mask |= mask >> np.uint64(8)
    mask |= mask >> np.uint64(16)
    value = next32(gen) & mask
    while value > top:
        value = next32(gen) & mask
    return np.int64(value)


@register_jitable
def integers(gen, high):
    """``Generator.integers(high)`` for ``1 <= high <= 2**32``: numpy's ``random_bounded_uint64`` (Lemire)."""
    rng = np.uint64(high - 1)
    if rng == 0:
        return 0
    if rng == _M32:
        return np.int64(next32(gen))
    rng_excl = np.uint64(rng + _ONE)
    m = next32(gen) * rng_excl
    leftover = m & _M32
    if leftover < rng_excl:
        threshold = (_M32 - rng) % rng_excl
        while leftover < threshold:
            m = next32(gen) * rng_excl
            leftover = m & _M32
    return np.int64(m >> _S32)


@register_jitable
def permutation(gen, n, out):
    """``Generator.permutation(n)`` written into ``out[:n]`` (numpy's shuffle: Fisher-Yates from the last position)."""
    for i in range(n):
        out[i] = i
    for i in range(n - 1, 0, -1):
        j = interval(gen, i)
        if j != i:
            held = out[j]
            out[j] = out[i]
            out[i] = held


def state_row(state: Mapping[str, Any]) -> np.ndarray:
    """A ``bit_generator.state`` dict of numpy's PCG64 as a generator row (``ValueError`` for another bit
    generator): what the batched engines' loaders write for a game's generator."""
    if state.get("bit_generator") != "PCG64":
        raise ValueError(f"the batched engines draw as numpy's PCG64, not {state.get('bit_generator')!r}")
    words = state["state"]
    row = np.zeros(GENERATOR_WORDS, np.uint64)
    row[STATE_HIGH], row[STATE_LOW] = words["state"] >> 64, words["state"] & _M64
    row[INC_HIGH], row[INC_LOW] = words["inc"] >> 64, words["inc"] & _M64
    row[HAS_UINT32], row[UINTEGER] = int(state["has_uint32"]), int(state["uinteger"])
    return row


def load_state(gen: np.ndarray, generator: np.random.Generator) -> None:
    """Copy ``generator``'s PCG64 state into row ``gen`` (``ValueError`` for another bit generator)."""
    gen[:] = state_row(generator.bit_generator.state)


def state_of(gen: np.ndarray) -> dict[str, Any]:
    """Row ``gen`` as a ``bit_generator.state`` dict (what ``Generator.bit_generator.state = ...`` takes)."""
    row = [int(x) for x in gen]
    return {
        "bit_generator": "PCG64",
        "state": {"state": (row[STATE_HIGH] << 64) | row[STATE_LOW], "inc": (row[INC_HIGH] << 64) | row[INC_LOW]},
        "has_uint32": row[HAS_UINT32],
        "uinteger": row[UINTEGER],
    }


def seeded(seeds: Sequence[int]) -> np.ndarray:
    """One row per seed: ``numpy.random.default_rng(seeds[i])``'s state in row ``i`` (as an AEC env's
    ``reset(seed)`` makes its generator)."""
    rows = np.zeros((len(seeds), GENERATOR_WORDS), np.uint64)
    for i, seed in enumerate(seeds):
        load_state(rows[i], np.random.default_rng(seed))
    return rows
