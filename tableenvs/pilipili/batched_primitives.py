"""The small compiled primitives the batched Pili Pili kernels build on: arrays taken borrowed, seat arithmetic
without divisions, card bitmask bits.

Where you are: the Pili Pili package, under ``batched_kernels.py`` (which compiles these in). numba's disk cache
watches only the kernels' own file: after editing this one, touch ``batched_kernels.py`` before measuring.
"""

from __future__ import annotations

from numba import types
from numba.core import cgutils
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros
from numba.extending import intrinsic, register_jitable


@intrinsic
def borrowed(typingctx, array):
    """``array`` without its reference count: the same data, shape and strides, a null meminfo. Every helper a
    kernel calls with an array increfs and decrefs it (two atomic operations, a quarter of a step's time when
    counted); a kernel takes its arguments borrowed once at its entry (the caller holds them for the whole call),
    so those become null checks."""
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        view = context.make_array(array)(context, builder, value=args[0])
        view.meminfo = cgutils.get_null_value(view.meminfo.type)
        return view._getvalue()

    return array(array), codegen


@register_jitable
def wrap_seat(x, n):
    """``x % n`` for ``-n <= x < 2 * n`` (a seat one step or a trick's length away), without a division."""
    if x >= n:
        return x - n
    if x < 0:
        return x + n
    return x


@register_jitable
def popcount(x):
    """Set bits of ``x`` (a card bitmask: bits 0..55, so the SWAR product's top byte never reaches the sign)."""
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return (x * 0x0101010101010101) >> 56


@register_jitable
def lowest_bit(x):
    """Index of the lowest set bit of a nonzero ``x``."""
    return trailing_zeros(x)


@register_jitable
def highest_bit(x):
    """Index of the highest set bit of a nonzero ``x``."""
    return 63 - leading_zeros(x)
