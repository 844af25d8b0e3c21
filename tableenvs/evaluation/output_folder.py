"""An evaluation's output folder written all at once: its result files go to a sibling temporary folder, which is
renamed into place only once every file is complete.

Where you are: the evaluation package's output (:meth:`tableenvs.evaluation.reports.EvaluationResult.save` writes
through :func:`result_folder`). A folder therefore never mixes the files of two runs (a run that writes no
``ratings.png`` leaves none of an earlier run's) nor holds half of one: a full disk, a crash or an error while the
files are written leaves the folder exactly as it was, and the temporary folder is removed.

Anything else in the folder (a stopped tournament's ``games.jsonl`` and ``tournament.json`` that ``--resume`` reads,
a ``--records`` directory, files of your own) is moved into the new folder before it is renamed into place, so it
stays. The swap is two renames on the same file system (the old folder aside, the new one in its place) and the old
folder's result files are then deleted; only a crash between those two renames, a few microseconds, leaves the
complete new results in the sibling ``.NAME.*.partial`` folder and the old ones in ``.NAME.*.old``, both beside
``NAME``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from tableenvs.paths import OutputError

#: The files an evaluation writes in its output folder. Every one of them belongs to a run: the new folder holds
#: those the new run wrote and none of an earlier run's.
RESULT_FILES = ("results.json", "policies.csv", "games.csv", "head_to_head.csv", "paired.csv", "ratings.png")


_UMASK = os.umask(0)
os.umask(_UMASK)
#: The permission bits a plain ``mkdir`` would give a new folder.
_FOLDER_MODE = 0o777 & ~_UMASK


def _reason(error: BaseException) -> str:
    cause = error.__cause__ if isinstance(error, OutputError) and error.__cause__ is not None else error
    if isinstance(cause, OSError):
        return cause.strerror or str(cause)
    return str(error)


def _sync_directory(path: Path) -> None:
    with contextlib.suppress(OSError):
        descriptor = os.open(path, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


@contextlib.contextmanager
def result_folder(out: str | os.PathLike) -> Iterator[Path]:
    """A new empty folder beside ``out`` to write the results in; on a clean exit it replaces ``out`` (see the
    module docstring), keeping every entry of ``out`` but the :data:`RESULT_FILES`.

    If the block raises, or the swap fails, ``out`` is left as it was and the new folder removed; an ``OSError``
    (also one inside an :class:`~tableenvs.paths.OutputError` from a write in the block) becomes an
    :class:`~tableenvs.paths.OutputError` naming the file under ``out`` it was writing (``'out/results.json'``).
    """
    out = Path(out)
    if out.is_symlink():  # the folder it names is the one replaced (the link stays)
        out = Path(os.path.realpath(out))
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        if out.exists() and not out.is_dir():
            raise OutputError(f"cannot write {str(out)!r}: it is a file, not a folder")
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent))
    except OSError as error:
        raise OutputError(f"cannot write {str(out)!r}: {_reason(error)}") from error
    try:
        yield staging
        _sync_directory(staging)
        # the folder keeps its permissions (mkdtemp makes it 0700); a new one gets a plain mkdir's
        os.chmod(staging, stat.S_IMODE(out.stat().st_mode) if out.is_dir() else _FOLDER_MODE)
        _swap(staging, out)
    except BaseException as error:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(error, (OSError, OutputError)):
            # name the file as it would be under ``out`` (the temporary folder is gone)
            said = str(error).replace(str(staging), str(out))
            if isinstance(error, OSError):
                said = f"cannot write {str(out) + os.sep!r}: {_reason(error)}"
            raise OutputError(said) from error
        raise


def _swap(staging: Path, out: Path) -> None:
    """Move ``out``'s other entries into ``staging``, then put ``staging`` in ``out``'s place; on failure put every
    entry back and raise the ``OSError``."""
    if not out.exists():
        os.replace(staging, out)
        _sync_directory(out.parent)
        return
    carried: list[str] = []
    aside: Path | None = None
    try:
        for name in sorted(os.listdir(out)):
            if name not in RESULT_FILES:
                os.rename(out / name, staging / name)
                carried.append(name)
        aside = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
        os.replace(out, aside)  # over the empty folder just made: the old results aside
        try:
            os.replace(staging, out)
        except OSError:
            os.rename(aside, out)  # the old folder back (``out`` is free: the rename into it failed)
            aside = None
            raise
    except OSError:
        for name in carried:  # best effort: the entries back where they were
            with contextlib.suppress(OSError):
                os.rename(staging / name, out / name)
        if aside is not None and aside.exists() and not any(aside.iterdir()):
            with contextlib.suppress(OSError):
                aside.rmdir()
        raise
    _sync_directory(out.parent)
    shutil.rmtree(aside, ignore_errors=True)  # the old run's result files
