"""Early checks of the paths a job reads and writes, so it fails before any game or training starts.

Where you are: shared plumbing, used by the command line (``tableenvs train`` / ``tableenvs eval``) and usable
by any script that writes results at the end of a long run. Each check raises ``ValueError`` with one line that
names the option (``--out``, ``--opponents``, ...) and the path; nothing is created or left behind.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any


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


#: File name endings of saved models: a Stable-Baselines3 ``.zip``, a torch-only policy ``.pt`` (RLlib's export).
MODEL_SUFFIXES = (".zip", ".pt")


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
