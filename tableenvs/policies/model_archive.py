"""A numpy policy file's ``.npz`` archive read as data: each array's declared shape checked against size caps before
anything is allocated for it.

Where you are: ``tableenvs/policies/``, under :mod:`tableenvs.policies.model_file` (the format, whose reader opens
files with :class:`Archive`). ``np.load`` would allocate whatever an ``.npy`` header declares (a 10^9-element array
from a file of a few hundred bytes; 113 MB of zeros from a 114 kB deflated member) and fail in ways that are not one
line (a deeply nested header); here the archive is opened as the zip it is, each member's ``.npy`` header parsed
with numpy's own reader (object dtypes, pickles, refused), its shape and dtype checked (at most two non-negative
sizes, a plain number dtype) and its size checked against :data:`MAX_ARRAY_BYTES`, and over the file against
:data:`MAX_TOTAL_BYTES` and :data:`MAX_EXPANSION` times the file's own size; only then is its data read, exactly as
many bytes as declared. Every problem is a ``ValueError`` of one line that starts with the file's name.
"""

from __future__ import annotations

import math
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

#: Size caps: one array's data (16 MiB: 4,194,304 float32 numbers, a 2048 x 2048 layer; the largest shipped layer is
#: 689 x 256 float16, 353 kB), all of a file's arrays together, an ``.npy`` member's own header (numpy's default) and
#: the archive's members.
MAX_ARRAY_BYTES = 16 * 2**20
MAX_TOTAL_BYTES = 64 * 2**20
MAX_NPY_HEADER = 10_000
MAX_MEMBERS = 256
#: How much a file's arrays may expand from the file's own size: at most :data:`MAX_EXPANSION` times it, or
#: :data:`EXPANSION_FLOOR`, whichever is more. Weights deflate little (the shipped models' arrays are 1.08 to 1.23
#: times their files), so only a file of long runs of one byte comes near (a zip bomb: 113 MB of zeros deflate to
#: 110 kB).
MAX_EXPANSION = 32
EXPANSION_FLOOR = 4 * 2**20


class Archive:
    """An ``.npz`` archive opened as the zip file it is, whose members are read one at a time by :meth:`read`,
    each after its declared shape was checked against the caps (nothing is allocated for a refused array)."""

    def __init__(self, path: Path, where: str):
        self.where = where
        try:
            with open(path, "rb") as handle:
                start = handle.read(6)
        except OSError as error:
            raise ValueError(f"{where} cannot be read ({short(error)})") from None
        if start == b"\x93NUMPY":
            raise ValueError(f"{where} is a single .npy array, not an .npz archive of a numpy policy")
        try:
            self.zip = zipfile.ZipFile(path)
            infos = self.zip.infolist()
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, RuntimeError, NotImplementedError) as error:
            raise ValueError(f"{where} is not a readable .npz archive ({short(error)})") from None
        if len(infos) > MAX_MEMBERS:
            self.zip.close()
            raise ValueError(f"{where} holds {len(infos)} archive members; a numpy policy has at most {MAX_MEMBERS}")
        # np.load's names: a member ``x.npy`` is the array ``x``; any other member is raw bytes (refused when read)
        self.members: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            name = info.filename.removesuffix(".npy")
            if name in self.members:
                self.zip.close()
                raise ValueError(f"{where} holds two archive members that both read as {show(name, 60)}")
            self.members[name] = info
        self.files = list(self.members)
        self.total = 0  # bytes of array data read so far (MAX_TOTAL_BYTES)
        self.file_size = path.stat().st_size

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.zip.close()

    def read(self, name: str, max_bytes: int = 0) -> Any:
        """The array ``name``: its ``.npy`` header parsed, its declared shape and dtype checked against the caps
        (``max_bytes``, else :data:`MAX_ARRAY_BYTES`; and :data:`MAX_TOTAL_BYTES` over the file), then its data
        read; a one-line ``ValueError`` otherwise. A member that is not an ``.npy`` array is returned as ``bytes``
        (the caller refuses it)."""
        where, info = self.where, self.members[name]
        cap = max_bytes or MAX_ARRAY_BYTES
        try:
            with self.zip.open(info) as handle:
                if not info.filename.endswith(".npy"):
                    return handle.read(64)  # only to tell the caller what it is
                shape, fortran, dtype = self._array_header(handle, name)
                count = math.prod(shape)
                nbytes = count * dtype.itemsize
                if nbytes > cap:
                    raise ValueError(
                        f"{where}: {name!r} declares shape {show(shape)} of {dtype} ({size_text(nbytes)}), over the "
                        f"{size_text(cap)} a numpy policy allows per array"
                    )
                if self.total + nbytes > MAX_TOTAL_BYTES:
                    raise ValueError(
                        f"{where}: {name!r} ({size_text(nbytes)}) takes the file's arrays past the "
                        f"{size_text(MAX_TOTAL_BYTES)} a numpy policy allows in total"
                    )
                expansion = max(EXPANSION_FLOOR, MAX_EXPANSION * self.file_size)
                if self.total + nbytes > expansion:
                    raise ValueError(
                        f"{where}: {name!r} ({size_text(nbytes)}) takes the file's arrays past "
                        f"{size_text(expansion)}, {MAX_EXPANSION} times the file's {size_text(self.file_size)} (or "
                        f"{size_text(EXPANSION_FLOOR)}): a numpy policy's weights do not deflate that far"
                    )
                stored = info.file_size - handle.tell()
                if stored != nbytes:
                    raise ValueError(
                        f"{where}: {name!r} declares shape {show(shape)} of {dtype} ({nbytes} bytes) but stores "
                        f"{stored} bytes of data"
                    )
                self.total += nbytes
                data = bytearray(nbytes)
                if handle.readinto(data) != nbytes:  # type: ignore[attr-defined]  # a ZipExtFile, a BufferedIOBase
                    raise ValueError(f"{where}: {name!r} ends before its {nbytes} bytes of data")
        except ValueError as error:
            if str(error).startswith(where):
                raise
            raise ValueError(f"{where}: {name!r} cannot be read ({short(error)})") from None
        except (OSError, EOFError, zipfile.BadZipFile, RuntimeError, NotImplementedError, zlib.error) as error:
            raise ValueError(f"{where}: {name!r} cannot be read ({type(error).__name__}: {short(error)})") from None
        return np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C")

    def _array_header(self, handle: Any, name: str) -> tuple[tuple[int, ...], bool, np.dtype]:
        """The ``.npy`` header of ``name``: (shape, fortran order, dtype), each checked to be what numpy writes."""
        where = self.where
        try:
            version = np.lib.format.read_magic(handle)
            if version not in ((1, 0), (2, 0)):
                raise ValueError(f".npy format version {version[0]}.{version[1]}, not 1.0 or 2.0")
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, fortran, dtype = read(handle, max_header_size=MAX_NPY_HEADER)
        except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError, OverflowError, EOFError) as error:
            raise ValueError(f"{where}: {name!r} has a malformed .npy header ({short(error)})") from None
        if dtype.hasobject:
            raise ValueError(f"{where}: {name!r} holds Python objects (a pickle), which this format refuses")
        if dtype.kind not in "biuf" or dtype.fields is not None or dtype.subdtype is not None:
            raise ValueError(f"{where}: {name!r} has dtype {show(str(dtype))}, which a numpy policy never stores")
        if (
            not isinstance(shape, tuple)
            or len(shape) > 2
            or not all(isinstance(size, int) and not isinstance(size, bool) and size >= 0 for size in shape)
            or not isinstance(fortran, bool)
        ):
            raise ValueError(
                f"{where}: {name!r} has a malformed .npy header (shape {show(shape)}: a numpy policy stores arrays "
                "of one or two non-negative sizes)"
            )
        return shape, fortran, dtype


def short(error: BaseException, limit: int = 200) -> str:
    """``error``'s message on one line, cut to ``limit`` characters (a hostile file can make it huge)."""
    return cut(" ".join(str(error).split()) or type(error).__name__, limit)


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def show(value: Any, limit: int = 120) -> str:
    """``repr(value)`` cut to ``limit`` characters, for error messages about values read from a file."""
    return cut(repr(value), limit)


def size_text(nbytes: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes} bytes"
