"""The compiled kernels of a numpy policy file played for many rows at once (:class:`tableenvs.vector.players.
BatchedNumpyPolicy`) and of a batched evaluation's waiting rows.

Where you are: :mod:`tableenvs.vector` (no game here). Each kernel reads the rows it is given (``rows``: int64
indices into an engine's whole ``obs`` / ``mask`` buffers) in place, so no row is copied out of the engine.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba.extending import register_jitable

from tableenvs.core.numba_cache import jit_options
from tableenvs.vector.compile import kernels_once

#: Below this gap between the two best legal logits (relative to ``1 + |best|``) a greedy row is decided again by
#: the one-row forward pass of ``NumpyPolicy`` (float32 rounding of a batched product is ~1e-6 relative); the batched
#: candidate-scoring player (:mod:`tableenvs.vector.candidates`) scores a row again below the same gap of its scores.
TIE_MARGIN = 1e-4


@jit_options(fastmath={"reassoc", "contract"})
def sparse_layer_kernel(x, rows, scale, weight, bias, out):
    """``out[i] = (x[rows[i]] * scale) @ weight + bias`` summed over that row's nonzero inputs only (``scale``
    empty: none). A row of Llama Party or Pili Pili holds about 50 nonzero inputs of 469 or 689: a tenth of the
    dense product's work. The row's nonzero inputs are found without a branch, then their weight rows are added four
    at a time (one pass over the row's sums for four inputs), which numba may reassociate and fuse into multiply-adds:
    a rounding within float32's, which :data:`TIE_MARGIN` covers, and no other fast-math flag."""
    scaled = scale.shape[0] > 0
    width = weight.shape[1]
    nonzero = np.empty(x.shape[1], np.int64)
    value = np.empty(x.shape[1], np.float32)
    acc = np.empty(width, np.float32)
    for i in range(rows.shape[0]):
        r = rows[i]
        count = 0
        for j in range(x.shape[1]):
            nonzero[count] = j
            count += x[r, j] != 0.0
        for q in range(count):
            j = nonzero[q]
            value[q] = x[r, j] * scale[j] if scaled else x[r, j]
        for c in range(width):
            acc[c] = bias[c]
        q = 0
        while q + 4 <= count:
            j0, j1, j2, j3 = nonzero[q], nonzero[q + 1], nonzero[q + 2], nonzero[q + 3]
            v0, v1, v2, v3 = value[q], value[q + 1], value[q + 2], value[q + 3]
            for c in range(width):
                acc[c] += (v0 * weight[j0, c] + v1 * weight[j1, c]) + (v2 * weight[j2, c] + v3 * weight[j3, c])
            q += 4
        while q < count:
            j0, v0 = nonzero[q], value[q]
            for c in range(width):
                acc[c] += v0 * weight[j0, c]
            q += 1
        for c in range(width):
            out[i, c] = acc[c]


def first_legal_kernel(mask, rows, out):
    """``out[i]``: the first legal action of ``mask[rows[i]]`` (0 when it has none)."""
    for i in range(rows.shape[0]):
        out[i] = 0
        for a in range(mask.shape[1]):
            if mask[rows[i], a] != 0:
                out[i] = a
                break


def first_legal(mask: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """int64: the first legal action of each row ``rows`` of ``mask`` (an engine's int8 buffer), read in place (what
    a batched evaluation plays in rows whose game is over while others finish)."""
    (kernel,) = kernels_once((first_legal_kernel,), "the batched first-legal-action kernel", __file__, "about 1 s")
    out = np.empty(len(rows), np.int64)
    kernel(mask, np.ascontiguousarray(rows, np.int64), out)
    return out


@register_jitable
def best_legal(values, legal, count, margin):
    """The action of the highest of ``values[a]`` over the legal actions ``a`` in ``legal[:count]`` (increasing: the
    first of equal ones wins), or -1 when there is none; and whether its two best values are within
    ``margin * (1 + |best|)``, or one is not a number or not finite (the row is decided again by the reference
    player). Legal actions whose values are all not numbers give ``(0, True)``. Both greedy kernels decide with it."""
    chosen = -1
    top = second = -np.inf
    odd = False
    for q in range(count):
        a = legal[q]
        v = values[a]
        if v != v:
            odd = True
        elif chosen < 0 or v > top:
            second = top
            top = v
            chosen = a
        elif v > second:
            second = v
    if chosen < 0 and not odd:
        return -1, False
    return max(chosen, 0), odd or not np.isfinite(top) or top - second <= margin * (1.0 + abs(top))


@jit_options(fastmath={"reassoc", "contract"})
def greedy_output_kernel(hidden, weight_t, bias, mask, rows, margin, best, close):
    """:func:`greedy_kernel` of the output layer's logits (``hidden @ weight_t.T + bias``, float32) computed for the
    legal actions only: a few of Pili Pili's 234 actions. Each is one dot product that numba may reassociate (and
    fuse into multiply-adds) to vectorise it: four times faster than in order, a rounding within float32's (the
    ``margin`` covers it); no other fast-math flag, so a logit that is not a number is still seen."""
    width = hidden.shape[1]
    logits = np.empty(mask.shape[1], np.float32)  # written at the row's legal actions only
    legal = np.empty(mask.shape[1], np.int64)
    for i in range(hidden.shape[0]):
        r = rows[i]
        count = 0
        for a in range(mask.shape[1]):
            legal[count] = a
            count += mask[r, a] != 0
        for q in range(count):
            a = legal[q]
            total = np.float32(0.0)
            for c in range(width):
                total += hidden[i, c] * weight_t[a, c]
            logits[a] = total + bias[a]
        chosen, near = best_legal(logits, legal, count, margin)
        if chosen < 0:
            return i
        best[i] = chosen
        close[i] = near
    return -1


def only_legal_kernel(mask, rows, out):
    """``out[i]``: the one legal action of ``mask[rows[i]]``, -1 when it has several, -2 when it has none."""
    for i in range(rows.shape[0]):
        r = rows[i]
        found = -2
        for a in range(mask.shape[1]):
            if mask[r, a] != 0:
                if found >= 0:
                    found = -1
                    break
                found = a
        out[i] = found


def greedy_kernel(logits, mask, rows, margin, best, close):
    """``best[i]``: the legal action (``mask[rows[i]]``) of the highest logit of ``logits[i]`` (the first of equal
    ones); ``close[i]``: its two best legal logits are within ``margin * (1 + |best|)``, or one is not finite
    (decided again row by row). Returns the first ``i`` without a legal action, else -1."""
    legal = np.empty(logits.shape[1], np.int64)
    for i in range(logits.shape[0]):
        r = rows[i]
        count = 0
        for a in range(logits.shape[1]):
            legal[count] = a
            count += mask[r, a] != 0
        chosen, near = best_legal(logits[i], legal, count, margin)
        if chosen < 0:
            return i
        best[i] = chosen
        close[i] = near
    return -1


def model_kernels() -> tuple[Any, ...]:
    """``(sparse_layer_kernel, greedy_kernel, greedy_output_kernel, only_legal_kernel)`` compiled (once; cached on
    disk)."""
    functions = (sparse_layer_kernel, greedy_kernel, greedy_output_kernel, only_legal_kernel)
    return kernels_once(functions, "the batched model player", __file__, "about 4 s")
