"""numpy's default generator (PCG64) and the few draws Pili Pili makes, compiled: the batched engine's randomness.

Where you are: the Pili Pili package, under the batched engine (``batched.py``). Each batched env keeps its
generator's whole state in one row of a ``uint64`` array ``(num_envs, 6)``: the 128-bit LCG state (high, low), the
128-bit increment (high, low), and numpy's buffered half-word (``has_uint32``, ``uinteger``). The functions here
advance it exactly as numpy does (``pcg64.h``: step, then the XSL-RR output; ``distributions.c``:
``random_interval`` for ``shuffle``/``permutation`` and Lemire's bounded draw for ``integers``), so a batched env
draws the very numbers the AEC env's ``numpy.random.Generator`` draws (tests/pilipili/test_batched.py checks it
against numpy). :func:`load_state` and :func:`store_state` move a state between a row and a ``Generator``.
"""

from __future__ import annotations

import numba
import numpy as np

U64 = np.uint64
_M32 = np.uint64(0xFFFFFFFF)
_M64 = (1 << 64) - 1
_MULT_HI = np.uint64(0x2360ED051FC65DA4)
_MULT_LO = np.uint64(0x4385DF649FCCF645)
_S32 = np.uint64(32)
_S58 = np.uint64(58)
_S63 = np.uint64(63)
_S64 = np.uint64(64)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
HI, LO, INC_HI, INC_LO, HAS32, UINT = range(6)
RNG_WORDS = 6


@numba.njit(cache=True, inline="always")
def _mulhi(a, b):
    a0 = a & _M32
    a1 = a >> _S32
    b0 = b & _M32
    b1 = b >> _S32
    p00 = a0 * b0
    p01 = a0 * b1
    p10 = a1 * b0
    p11 = a1 * b1
    mid = (p00 >> _S32) + (p01 & _M32) + (p10 & _M32)
    return p11 + (p01 >> _S32) + (p10 >> _S32) + (mid >> _S32)


@numba.njit(cache=True)
def next64(rng, e):
    """The next 64-bit output of row ``e`` (state = state * MULT + inc, then XSL-RR of the new state)."""
    hi = rng[e, HI]
    lo = rng[e, LO]
    new_lo = lo * _MULT_LO
    new_hi = hi * _MULT_LO + lo * _MULT_HI + _mulhi(lo, _MULT_LO)
    inc_lo = rng[e, INC_LO]
    lo2 = new_lo + inc_lo
    carry = _ONE if lo2 < new_lo else _ZERO
    hi2 = new_hi + rng[e, INC_HI] + carry
    rng[e, HI] = hi2
    rng[e, LO] = lo2
    x = hi2 ^ lo2
    rot = hi2 >> _S58
    return (x >> rot) | (x << ((_S64 - rot) & _S63))


@numba.njit(cache=True)
def next32(rng, e):
    if rng[e, HAS32] != _ZERO:
        rng[e, HAS32] = _ZERO
        return rng[e, UINT]
    value = next64(rng, e)
    rng[e, HAS32] = _ONE
    rng[e, UINT] = value >> _S32
    return value & _M32


@numba.njit(cache=True)
def interval(rng, e, most):
    """numpy's ``random_interval``: uniform in ``0..most`` (``most`` below 2**32), by masked rejection."""
    if most == 0:
        return 0
    top = np.uint64(most)
    mask = top
    mask |= mask >> np.uint64(1)
    mask |= mask >> np.uint64(2)
    mask |= mask >> np.uint64(4)
    mask |= mask >> np.uint64(8)
    mask |= mask >> np.uint64(16)
    mask |= mask >> _S32
    value = next32(rng, e) & mask
    while value > top:
        value = next32(rng, e) & mask
    return np.int64(value)


@numba.njit(cache=True)
def below(rng, e, n):
    """``Generator.integers(n)`` for ``1 <= n < 2**32``: Lemire's bounded draw on 32-bit words, as numpy's."""
    if n == 1:
        return 0
    excl = np.uint64(n)
    m = next32(rng, e) * excl
    leftover = m & _M32
    if leftover < excl:
        threshold = (_M32 - (excl - _ONE)) % excl
        while leftover < threshold:
            m = next32(rng, e) * excl
            leftover = m & _M32
    return np.int64(m >> _S32)


@numba.njit(cache=True)
def permutation(rng, e, out, k):
    """``Generator.permutation(k)`` into ``out[:k]`` (numpy's shuffle: Fisher-Yates from the last position)."""
    for i in range(k):
        out[i] = i
    for i in range(k - 1, 0, -1):
        j = interval(rng, e, i)
        t = out[i]
        out[i] = out[j]
        out[j] = t


def load_state(rng: np.ndarray, e: int, generator: np.random.Generator) -> None:
    """Copy ``generator``'s PCG64 state into row ``e`` (``ValueError`` for another bit generator)."""
    state = generator.bit_generator.state
    if state.get("bit_generator") != "PCG64":
        raise ValueError(f"the batched engine draws as numpy's PCG64, not {state.get('bit_generator')!r}")
    words = state["state"]
    rng[e, HI] = words["state"] >> 64
    rng[e, LO] = words["state"] & _M64
    rng[e, INC_HI] = words["inc"] >> 64
    rng[e, INC_LO] = words["inc"] & _M64
    rng[e, HAS32] = int(state["has_uint32"])
    rng[e, UINT] = int(state["uinteger"])


def store_state(rng: np.ndarray, e: int) -> dict:
    """Row ``e`` as a ``bit_generator.state`` dict (what ``Generator.bit_generator.state = ...`` takes)."""
    row = [int(x) for x in rng[e]]
    return {
        "bit_generator": "PCG64",
        "state": {"state": (row[HI] << 64) | row[LO], "inc": (row[INC_HI] << 64) | row[INC_LO]},
        "has_uint32": row[HAS32],
        "uinteger": row[UINT],
    }
