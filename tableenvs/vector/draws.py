"""Draws from many ``numpy.random.Generator`` objects inside compiled code, exactly as numpy draws them.

Where you are: shared plumbing of :mod:`tableenvs.vector` (no game here). A batched engine keeps one
``numpy.random.Generator`` per env, the very object the AEC env would hold, so env ``i`` deals the same cards as
``tableenvs.make_raw(name).reset(seed=s)`` and its ``bit_generator.state`` is the AEC record's ``rng``. Numba
accepts one Generator as an argument, not an array of them; so the compiled kernels get, per env, the address of
the bit generator's C state (``bit_generator.ctypes.state``) and one ``next_uint32`` function pointer, and call it
through :func:`next_uint32`. The bounded draws below are numpy's own algorithms (``Generator.integers`` with one
bound below 2**32: Lemire's rejection on 32-bit draws; ``Generator.shuffle``/``permutation``: Fisher-Yates with
masked rejection, ``random_interval``), checked draw for draw against numpy by ``tests/test_vector_draws.py``.

The generators must stay alive while their addresses are used (:class:`Streams` holds them).
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]
from numba import types
from numba.extending import intrinsic, register_jitable


@intrinsic
def next_uint32(typingctx, function, state):
    """``function(state)`` for a bit generator's ``next_uint32`` address and its C state's address (both uintp)."""
    signature = types.uint32(types.uintp, types.uintp)

    def codegen(context, builder, sig, args):
        address, state_address = args
        function_type = ir.FunctionType(ir.IntType(32), (context.get_value_type(types.uintp),))
        pointer = builder.inttoptr(address, function_type.as_pointer())
        return builder.call(pointer, (state_address,))

    return signature, codegen


@register_jitable
def integers(function, state, high):
    """``Generator.integers(high)`` for ``1 <= high <= 2**32``: numpy's ``random_bounded_uint64`` (Lemire)."""
    rng = np.uint64(high - 1)
    if rng == 0:
        return 0
    if rng == np.uint64(0xFFFFFFFF):
        return np.int64(next_uint32(function, state))
    rng_excl = np.uint64(rng + np.uint64(1))
    m = np.uint64(next_uint32(function, state)) * rng_excl
    leftover = m & np.uint64(0xFFFFFFFF)
    if leftover < rng_excl:
        threshold = (np.uint64(0xFFFFFFFF) - rng) % rng_excl
        while leftover < threshold:
            m = np.uint64(next_uint32(function, state)) * rng_excl
            leftover = m & np.uint64(0xFFFFFFFF)
    return np.int64(m >> np.uint64(32))


@register_jitable
def interval(function, state, max_value):
    """numpy's ``random_interval(max_value)`` for ``max_value < 2**32``: a uniform draw in ``0..max_value``."""
    if max_value == 0:
        return 0
    top = np.uint64(max_value)
    mask = top
    mask |= mask >> np.uint64(1)
    mask |= mask >> np.uint64(2)
    mask |= mask >> np.uint64(4)
    mask |= mask >> np.uint64(8)
    mask |= mask >> np.uint64(16)
    value = np.uint64(next_uint32(function, state)) & mask
    while value > top:
        value = np.uint64(next_uint32(function, state)) & mask
    return np.int64(value)


@register_jitable
def permutation(function, state, n, out):
    """``Generator.permutation(n)`` written into ``out[:n]``."""
    for i in range(n):
        out[i] = i
    for i in range(n - 1, 0, -1):
        j = interval(function, state, i)
        if j != i:
            held = out[j]
            out[j] = out[i]
            out[i] = held


class Streams:
    """One ``numpy.random.Generator`` per env and the addresses the kernels draw through.

    ``generators[i]`` is env ``i``'s generator (PCG64, as ``numpy.random.default_rng`` makes it); ``states`` holds
    the address of each one's C state and ``function`` the address of PCG64's ``next_uint32``.
    """

    def __init__(self, num_envs: int):
        self.generators: list[np.random.Generator] = []
        self.states = np.zeros(num_envs, np.uintp)
        self.function = 0
        self.num_envs = num_envs

    def seed(self, seeds: Sequence[int]) -> None:
        """Fresh generators, ``default_rng(seeds[i])`` for env ``i`` (as an AEC env's ``reset(seed)`` makes one)."""
        generators = [np.random.default_rng(seed) for seed in seeds]
        functions = {
            int(ctypes.cast(g.bit_generator.ctypes.next_uint32, ctypes.c_void_p).value or 0) for g in generators
        }
        if len(functions) != 1 or 0 in functions:
            raise RuntimeError("tableenvs.vector: the generators' next_uint32 functions differ; expected PCG64 only")
        self.generators = generators
        self.function = functions.pop()
        self.states[:] = [int(g.bit_generator.ctypes.state_address) for g in generators]
