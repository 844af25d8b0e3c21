"""Compiling a batched engine's numba kernels once, cached on disk, and saying so.

Where you are: :mod:`tableenvs.vector` (no game here). The cache lives where :mod:`tableenvs.core.numba_cache`
says (the user cache directory, ``NUMBA_CACHE_DIR`` when set); when the kernels will be compiled rather than
loaded, one line on stderr says so first, never a silent stall.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from tableenvs.core.numba_cache import CACHE_ENV, cache_dir, cache_is_current, cached_jit, index_path, numba_options


def compile_kernels(functions: Sequence[Callable[..., Any]], what: str, source_file: str, cost: str) -> tuple[Any, ...]:
    """``functions`` compiled with numba (``cache=True``); ``what`` and ``cost`` name them in the one line said
    before a compilation (``"tableenvs: compiling <what>, once: <cost>"``). The first function is the one whose
    cache decides whether that line is said (call it first)."""
    import numba

    directory = cache_dir()
    compiled = [cached_jit(function, numba, directory) for function in functions]
    if any(kernel is None for kernel in compiled):
        warnings.warn(
            f"tableenvs: no writable cache directory for {what}; it is compiled in memory ({cost}) in every "
            f"process. Set {CACHE_ENV} to a writable directory to cache it.",
            RuntimeWarning,
            stacklevel=3,
        )
        return tuple(numba.njit(cache=False, **numba_options(function))(function) for function in functions)
    if not cache_is_current(compiled[0], source_file):
        index = index_path(compiled[0])
        where = f" (cached in {index.rpartition('/')[0]})" if index else ""
        print(f"tableenvs: compiling {what}, once: {cost}{where}", file=sys.stderr, flush=True)
    return tuple(compiled)


_COMPILED: dict[tuple[Callable[..., Any], ...], tuple[Any, ...]] = {}


def kernels_once(functions: Sequence[Callable[..., Any]], what: str, source_file: str, cost: str) -> tuple[Any, ...]:
    """:func:`compile_kernels` once per process for the same ``functions`` (later calls return the same kernels)."""
    key = tuple(functions)
    if key not in _COMPILED:
        _COMPILED[key] = compile_kernels(functions, what, source_file, cost)
    return _COMPILED[key]
