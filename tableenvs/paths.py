"""The paths a job reads and writes: early checks, and atomic writes of every file the project saves.

Where you are: shared plumbing, used by the command line (``tableenvs train`` / ``tableenvs eval``) and usable
by any script that writes results at the end of a long run.

* The checks (:func:`check_output_dir`, :func:`check_model_files`) raise ``ValueError`` with one line that names
  the option (``--out``, ``--opponents``, ...) and the path, before any game or training starts; nothing is
  created or left behind.
* :func:`atomic_output` (and :func:`write_text_atomic`, :func:`write_bytes_atomic`): every file the project writes
  goes to a temporary file in the same directory, is flushed to disk, and is renamed over the target only once
  complete, so a full disk, a read-only directory or a crash never leaves a truncated or empty file and an
  existing file survives a failed write. A failure raises :class:`OutputError` (a ``ValueError``: one line naming
  the path; the command line prints it and exits 2).
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal, overload

#: The permission bits a plain ``open(path, "w")`` would give a new file (``mkstemp`` alone gives 0600).
_UMASK = os.umask(0)
os.umask(_UMASK)
_FILE_MODE = 0o666 & ~_UMASK


class OutputError(ValueError):
    """A file that could not be written; the message names the path and why. Any earlier file there is intact."""


@overload
def atomic_output(
    path: str | os.PathLike, mode: Literal["w"] = "w", **open_options: Any
) -> contextlib.AbstractContextManager[io.TextIOWrapper]: ...


@overload
def atomic_output(
    path: str | os.PathLike, mode: Literal["wb"], **open_options: Any
) -> contextlib.AbstractContextManager[io.BufferedWriter]: ...


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, mode: str = "w", **open_options: Any) -> Iterator[Any]:
    """Open a temporary file beside ``path`` for writing; on a clean exit rename it over ``path``.

    ``mode`` is ``"w"`` (text; ``encoding`` defaults to UTF-8) or ``"wb"``; ``open_options`` go to ``open`` (e.g.
    ``newline=""`` for CSV). If the block raises, or writing, flushing or renaming fails, the temporary file is
    removed and ``path`` is left as it was; an ``OSError`` becomes an :class:`OutputError` naming ``path``.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_output mode must be 'w' or 'wb', got {mode!r}")
    if mode == "w":
        open_options.setdefault("encoding", "utf-8")
    path = Path(path)
    try:
        descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    except OSError as error:
        raise OutputError(f"cannot write {str(path)!r}: {error.strerror or error}") from error
    try:
        with os.fdopen(descriptor, mode, **open_options) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, _FILE_MODE)
        os.replace(temporary, path)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(error, OSError):
            raise OutputError(f"cannot write {str(path)!r}: {error.strerror or error}") from error
        raise


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (see :func:`atomic_output`); return ``path``."""
    with atomic_output(path, "w") as handle:
        handle.write(text)
    return Path(path)


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_output`); return ``path``."""
    with atomic_output(path, "wb") as handle:
        handle.write(data)
    return Path(path)


def check_output_dir(path: str | os.PathLike, name: str = "--out") -> Path:
    """Return ``path`` if it is a writable directory or one that can be created; else raise ``ValueError``.

    Refused: an existing file (or anything that is not a directory) at ``path``, a file where a parent directory
    would go, and a directory in which this process cannot create files (checked by creating and removing a
    temporary entry, so read-only file systems and ``/proc`` are caught even when running as root).
    """
    path = Path(path).expanduser()
    try:
        if path.exists() and not path.is_dir():
            raise ValueError(f"{name} {str(path)!r} is an existing file, not a directory")
        existing = path
        while not existing.exists() and existing.parent != existing:  # the nearest existing ancestor
            existing = existing.parent
        if not existing.is_dir():
            raise ValueError(f"{name} {str(path)!r} cannot be created: {str(existing)!r} is a file")
    except OSError as error:  # e.g. a parent that cannot be searched
        raise ValueError(f"{name} {str(path)!r} cannot be checked: {error.strerror or error}") from None
    try:
        probe = tempfile.mkdtemp(prefix=".tableenvs-write-check-", dir=existing)
        os.rmdir(probe)
    except OSError as error:
        reason = error.strerror or str(error)
        if existing == path:
            raise ValueError(f"{name} {str(path)!r} is not writable: {reason}") from None
        raise ValueError(
            f"{name} {str(path)!r} cannot be created: cannot write in {str(existing)!r} ({reason})"
        ) from None
    return path


#: File name endings of saved models: a Stable-Baselines3 ``.zip``, a torch-only policy ``.pt`` (RLlib's export), a
#: numpy policy ``.npz`` (:mod:`tableenvs.policies.numpy_policy`).
MODEL_SUFFIXES = (".zip", ".pt", ".npz")


def is_model_path(spec: Any) -> bool:
    """Whether a policy spec names a saved model file (as :func:`tableenvs.policies.make_policy` reads it)."""
    return isinstance(spec, os.PathLike) or (isinstance(spec, str) and spec.endswith(MODEL_SUFFIXES))


def check_model_files(specs: Iterable[Any], name: str) -> None:
    """Raise ``ValueError`` naming ``name`` and the path if a policy spec that is a model path is not a file."""
    for spec in specs:
        if not is_model_path(spec):
            continue
        file = Path(spec).expanduser()
        if file.is_dir():
            raise ValueError(f"{name}: {str(spec)!r} is a directory, not a saved model file")
        if not file.is_file():
            raise ValueError(f"{name}: no saved model at {str(spec)!r}")
