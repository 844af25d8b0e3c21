"""Where numba's compiled kernels are cached on disk, for every compiled part of tableenvs (the Rummikub solver's
kernels, the batched engines of :mod:`tableenvs.vector`).

Where you are: :mod:`tableenvs.core`, shared plumbing (numba is imported only by the callers, when they compile).
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from typing import Any

CACHE_ENV = "NUMBA_CACHE_DIR"


def cache_dir() -> str | None:
    """The cache directory for the compiled kernel, or ``None`` to leave the choice to numba.

    ``None`` when the user set ``NUMBA_CACHE_DIR`` (numba uses it). Otherwise the first of these that can be
    created and written: the user cache directory ``$XDG_CACHE_HOME/tableenvs/numba`` (default
    ``~/.cache/tableenvs/numba``), so the cache stays out of the package directory (an editable install's source
    tree); else this user's own directory in the temporary directory (:func:`private_temporary_cache`), so a
    read-only install without a writable home compiles once per machine (until the temporary directory is
    cleared) rather than in every process; else ``None``.
    """
    if os.environ.get(CACHE_ENV):
        return None
    root = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(root):  # unset, empty or relative: the XDG default
        root = os.path.join(os.path.expanduser("~"), ".cache")
    if os.path.isabs(root):  # else no home directory known
        path = os.path.join(root, "tableenvs", "numba")
        try:
            os.makedirs(path, exist_ok=True)
            tempfile.TemporaryFile(dir=path).close()  # writable? (numba's own locators test the same way)
            return path
        except OSError:
            pass
    return private_temporary_cache()


def private_temporary_cache() -> str | None:
    """``<temporary directory>/tableenvs-numba-<uid>``, created ``0700``; ``None`` if it cannot be used safely.

    The temporary directory is shared by every user, so a directory there is used only if it is this user's own:
    a real directory (not a symbolic link), owned by this user and closed to everyone else. Anything else (another
    user's directory planted at that name, a link, open permissions, no ``getuid`` on this platform) gives
    ``None``: a cache another user could write would let them run code in this process.
    """
    if not hasattr(os, "getuid"):
        return None
    path = os.path.join(tempfile.gettempdir(), f"tableenvs-numba-{os.getuid()}")
    try:
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        status = os.lstat(path)
        if not stat.S_ISDIR(status.st_mode) or status.st_uid != os.getuid() or status.st_mode & 0o077:
            return None
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return None
    return path


def jit_options(**options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a kernel with numba options of its own (``@jit_options(fastmath={"reassoc", "contract"})``), which
    :func:`cached_jit` passes to ``numba.njit``; the function itself is returned unchanged."""

    def mark(function: Callable[..., Any]) -> Callable[..., Any]:
        function.numba_options = dict(options)  # type: ignore[attr-defined]
        return function

    return mark


def numba_options(function: Callable[..., Any]) -> dict[str, Any]:
    """The numba options a kernel was marked with (:func:`jit_options`), or none."""
    return dict(getattr(function, "numba_options", {}))


def cached_jit(function: Callable[..., Any], numba: Any, directory: str | None) -> Any:
    """``numba.njit(cache=True)`` with the cache in ``directory`` (or numba's choice), or ``None`` if unwritable;
    with the options ``function`` was marked with (:func:`jit_options`)."""
    from numba.core import config as numba_config

    config: Any = numba_config  # numba sets its settings (CACHE_DIR, ...) at import time: its types do not list them
    saved = config.CACHE_DIR
    if directory is not None:
        config.CACHE_DIR = directory  # read only while the cache locator is chosen, below
    try:
        return numba.njit(cache=True, **numba_options(function))(function)
    except RuntimeError as error:  # "cannot cache function ...: no locator available for file ..."
        if "locator" not in str(error):
            raise
        return None
    finally:
        config.CACHE_DIR = saved


def index_path(dispatcher: Any) -> str | None:
    """The numba cache index file of a ``cache=True`` dispatcher, or ``None`` if numba does not say."""
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    return getattr(cache_file, "_index_path", None)


def cache_is_current(dispatcher: Any, source_file: str) -> bool:
    """Whether the disk cache holds ``dispatcher`` compiled from the current ``source_file`` (numba only loads it)."""
    index = index_path(dispatcher)
    try:
        return index is not None and os.path.getmtime(index) >= os.path.getmtime(source_file)
    except OSError:
        return False
