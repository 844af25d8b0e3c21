"""The numpy policy file format: one ``.npz`` archive that numpy plays and that cannot run code when loaded.

Where you are: ``tableenvs/policies/``, under :mod:`tableenvs.policies.numpy_policy` (the player of these files and
the shipped models), beside :mod:`tableenvs.policies.model_env` (a model against the env it plays) and the writers
that export to it (``tableenvs train``, ``tableenvs export``, the strong
recipe). Only numpy is needed.

The format (version 1) is one ``.npz`` archive (a zip of ``.npy`` arrays, as ``np.savez`` writes it). The reader
opens it as a zip and reads each array itself (:mod:`tableenvs.policies.model_archive`): its ``.npy`` header is parsed
(object dtypes, pickles, are refused), its declared shape and dtype checked against size caps (16 MiB per array, 64
MiB per file) before anything is allocated for it, and only then its data read. Every malformed file, however it is
malformed, is refused in one line naming the file:

=====================  ========================================================================================
``header``             1-D uint8 array: UTF-8 JSON with ``format`` (``"tableenvs-numpy-policy"``), ``version``
                       (1), ``game`` (the registry name), ``options`` (the env's options as
                       ``env.unwrapped.get_state()["options"]`` reports them, the player count included; see
                       :func:`model_options`), ``layout_version`` (the encoder's observation layout,
                       :func:`tableenvs.core.layout.layout_version`), ``observation_size``, ``num_actions``, ``hidden``
                       (hidden layer sizes, a list, may be empty), ``activation`` (``"relu"`` or ``"tanh"``) and
                       optionally ``meta`` (a free dict: recipe, steps, date, ...; ``weight_dtype`` when
                       :func:`convert_numpy_policy` wrote the file) and ``input_features`` (the name of derived
                       inputs appended to the observation, :mod:`tableenvs.policies.input_features`; then
                       ``observation_size`` counts both) or ``candidates`` (a candidate-scoring model: the name of
                       the candidate plays it scores, :data:`~tableenvs.policies.input_features.CANDIDATES`; then
                       ``observation_size`` is the features of one candidate, ``num_actions`` is 1, and not both
                       ``candidates`` and ``input_features``)
``layer<i>.weight``    float32 or float16 (either, per matrix), shape (inputs, outputs), ``i`` = 0 ..
                       ``len(hidden)``: the sizes chain from ``observation_size`` through ``hidden`` to
                       ``num_actions``. float16 halves the file (the shipped models) and is widened to float32 once
                       when loaded, so the forward pass is the same. Still version 1: a reader from before float16
                       was allowed refuses such a file in one line (``'layer0.weight' has dtype float16, not
                       float32``) and reads float32 files as before
``layer<i>.bias``      float32 only, shape (outputs,)
``input.offset``       optional, float32 only, (observation_size,); the network's input is ``(observation -
``input.scale``        offset) * scale`` (either may be absent: offset 0, scale 1)
=====================  ========================================================================================

The network: ``x = activation(x @ W_i + b_i)`` for every layer but the last, whose output is one logit per action
(for a candidate-scoring model: one score per candidate, each candidate's features a row of ``x``).
Nothing else may be in the file, and every number must be finite. :func:`save_numpy_policy` writes the archive
with ``np.savez_compressed`` (compressed and uncompressed archives are read alike).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tableenvs.core.layout import layout_version
from tableenvs.paths import atomic_output
from tableenvs.policies.input_features import CANDIDATES, FEATURES
from tableenvs.policies.model_archive import MAX_ARRAY_BYTES, Archive, cut, short, show
from tableenvs.policies.model_env import model_options

#: What a numpy policy file says it is (checked on load).
FORMAT = "tableenvs-numpy-policy"
VERSION = 1
ACTIVATIONS = ("relu", "tanh")
HEADER_KEYS = (
    "format",
    "version",
    "game",
    "options",
    "layout_version",
    "observation_size",
    "num_actions",
    "hidden",
    "activation",
)
OPTIONAL_HEADER_KEYS = ("meta", "input_features", "candidates")
INPUT_ARRAYS = ("input.offset", "input.scale")
#: The dtypes a weight matrix may be stored in (biases and the input transform are always float32).
WEIGHT_DTYPES = ("float32", "float16")
#: Caps of the header, beside those of the arrays (:mod:`tableenvs.policies.model_archive`): the JSON header's size
#: and nesting depth, the hidden layers and a layer's size (one float32 array at the per-array cap).
MAX_HEADER_BYTES = 2**20
MAX_HEADER_DEPTH = 32
MAX_LAYERS = 64
MAX_LAYER_SIZE = MAX_ARRAY_BYTES // 4


@dataclass(frozen=True, eq=False)
class NumpyModel:
    """A checked numpy policy: the header's fields, ``weights`` as ``(W (in, out), b)`` float32 pairs, and the
    optional input transform. ``name`` is the file's name (what error messages call the model)."""

    name: str
    game: str
    options: dict[str, Any]
    layout_version: int
    observation_size: int
    num_actions: int
    hidden: tuple[int, ...]
    activation: str
    weights: tuple[tuple[np.ndarray, np.ndarray], ...]
    input_offset: np.ndarray | None = None
    input_scale: np.ndarray | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    input_features: str | None = None  # derived inputs appended to the observation (policies.input_features)
    candidates: str | None = None  # a candidate-scoring model: the candidate plays it scores (input_features)

    def header(self) -> dict[str, Any]:
        """The header as the file stores it."""
        header = {
            "format": FORMAT,
            "version": VERSION,
            "game": self.game,
            "options": self.options,
            "layout_version": self.layout_version,
            "observation_size": self.observation_size,
            "num_actions": self.num_actions,
            "hidden": list(self.hidden),
            "activation": self.activation,
        }
        if self.meta:
            header["meta"] = self.meta
        if self.input_features:
            header["input_features"] = self.input_features
        if self.candidates:
            header["candidates"] = self.candidates
        return header

    def logits(self, observations: np.ndarray) -> np.ndarray:
        """The logits of one observation (or a batch, one per row), float32: a plain reference forward pass
        (:class:`NumpyPolicy` runs the same one with its buffers)."""
        x = np.asarray(observations, dtype=np.float32)
        if self.input_offset is not None:
            x = x - self.input_offset
        if self.input_scale is not None:
            x = x * self.input_scale
        for index, (weight, bias) in enumerate(self.weights):
            x = x @ weight + bias
            if index < len(self.weights) - 1:
                x = np.maximum(x, 0) if self.activation == "relu" else np.tanh(x)
        return x


# ---------------------------------------------------------------------------------------------- checking


def _is_int(value: Any, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def _reject_constant(text: str) -> Any:
    raise ValueError(f"the header holds {text}, which is not JSON")


def _parse_header(array: Any, where: str) -> dict[str, Any]:
    if not isinstance(array, np.ndarray) or array.dtype != np.uint8 or array.ndim != 1:
        shown = f"{array.dtype} array of shape {array.shape}" if isinstance(array, np.ndarray) else type(array).__name__
        raise ValueError(f"{where}: 'header' must be a 1-D uint8 array of UTF-8 JSON, got a {shown}")
    try:
        header = json.loads(array.tobytes().decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError) as error:
        raise ValueError(f"{where}: 'header' is not UTF-8 JSON ({short(error)})") from None
    except RecursionError:
        raise ValueError(f"{where}: 'header' nests deeper than JSON can be read here") from None
    if not isinstance(header, dict):
        raise ValueError(f"{where}: 'header' must be a JSON object, got {type(header).__name__}")
    if _depth(header) > MAX_HEADER_DEPTH:
        raise ValueError(f"{where}: 'header' nests more than {MAX_HEADER_DEPTH} levels deep")
    return header


def _depth(value: Any) -> int:
    """How deep JSON ``value`` nests (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > MAX_HEADER_DEPTH:
            break
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
    return deepest


def _check_header(header: dict[str, Any], where: str) -> None:
    if header.get("format") != FORMAT:
        raise ValueError(
            f"{where} is not a tableenvs numpy policy (header format {show(header.get('format'))}, not {FORMAT!r})"
        )
    if header.get("version") != VERSION or isinstance(header.get("version"), bool):
        raise ValueError(
            f"{where} has format version {show(header.get('version'))}; this tableenvs reads version {VERSION}"
        )
    missing = [key for key in HEADER_KEYS if key not in header]
    unknown = sorted(set(header) - set(HEADER_KEYS) - set(OPTIONAL_HEADER_KEYS))
    if missing or unknown:
        shown = cut(", ".join(cut(key, 40) for key in unknown[:5]) + (", ..." if len(unknown) > 5 else ""), 240)
        said = [f"missing {', '.join(missing)}" if missing else "", f"unknown {shown}" if unknown else ""]
        raise ValueError(f"{where}: header keys: {'; '.join(part for part in said if part)}")
    problems = []
    if not isinstance(header["game"], str) or not header["game"]:
        problems.append(f"game must be a name, got {show(header['game'])}")
    if not isinstance(header["options"], dict):
        problems.append(f"options must be a JSON object, got {type(header['options']).__name__}")
    for key in ("layout_version", "observation_size", "num_actions"):
        if not _is_int(header[key], 1):
            problems.append(f"{key} must be an integer >= 1, got {show(header[key])}")
        elif key != "layout_version" and header[key] > MAX_LAYER_SIZE:
            problems.append(f"{key} is {show(header[key])}, over the {MAX_LAYER_SIZE} a numpy policy allows")
    hidden = header["hidden"]
    if not isinstance(hidden, list) or not all(_is_int(size, 1) for size in hidden):
        problems.append(f"hidden must be a list of layer sizes >= 1, got {show(hidden)}")
    elif len(hidden) > MAX_LAYERS or any(size > MAX_LAYER_SIZE for size in hidden):
        problems.append(
            f"hidden is {show(hidden)}: a numpy policy has at most {MAX_LAYERS} hidden layers of at most "
            f"{MAX_LAYER_SIZE} units"
        )
    if header["activation"] not in ACTIVATIONS:
        problems.append(f"activation must be one of {', '.join(ACTIVATIONS)}, got {show(header['activation'])}")
    if "meta" in header and not isinstance(header["meta"], dict):
        problems.append(f"meta must be a JSON object, got {type(header['meta']).__name__}")
    if "input_features" in header and not (
        isinstance(header["input_features"], str) and header["input_features"] in FEATURES
    ):
        problems.append(f"input_features must be one of {', '.join(FEATURES)}, got {show(header['input_features'])}")
    if "candidates" in header:
        if not (isinstance(header["candidates"], str) and header["candidates"] in CANDIDATES):
            problems.append(f"candidates must be one of {', '.join(CANDIDATES)}, got {show(header['candidates'])}")
        if "input_features" in header:
            problems.append("a candidate-scoring model (candidates) reads no input_features")
        if header["num_actions"] != 1:
            problems.append(
                f"a candidate-scoring model (candidates) has num_actions 1, got {show(header['num_actions'])}"
            )
    if problems:
        raise ValueError(f"{where}: header: {'; '.join(problems)}")


def _array_names(header: dict[str, Any]) -> list[str]:
    names = ["header"]
    for index in range(len(header["hidden"]) + 1):
        names += [f"layer{index}.weight", f"layer{index}.bias"]
    return names


def _check_array(
    array: Any, name: str, shape: tuple[int, ...], where: str, dtypes: tuple[str, ...] = ("float32",)
) -> np.ndarray:
    """``array`` checked (a numpy array of one of ``dtypes``, of ``shape``, finite), as float32."""
    if not isinstance(array, np.ndarray):
        raise ValueError(f"{where}: {name!r} is not a numpy array (a raw archive member)")
    if array.dtype.name not in dtypes:
        raise ValueError(f"{where}: {name!r} has dtype {array.dtype}, not {' or '.join(dtypes)}")
    if array.shape != shape:
        raise ValueError(f"{where}: {name!r} has shape {array.shape}, expected {shape} (from the header's sizes)")
    if not np.isfinite(array).all():
        raise ValueError(f"{where}: {name!r} holds {int((~np.isfinite(array)).sum())} non-finite value(s)")
    return array.astype(np.float32, copy=False)


def _model(header: dict[str, Any], arrays: Mapping[str, Any], where: str, name: str) -> NumpyModel:
    """Check ``header`` and ``arrays`` (every array of the file but the header) together; the model."""
    _check_header(header, where)
    expected = _array_names(header)[1:]
    missing = [key for key in expected if key not in arrays]
    extra = sorted(set(arrays) - set(expected) - set(INPUT_ARRAYS))
    if missing or extra:
        said = [f"missing {', '.join(missing)}" if missing else "", f"unexpected {', '.join(extra)}" if extra else ""]
        raise ValueError(
            f"{where}: arrays: {'; '.join(part for part in said if part)} (hidden {show(header['hidden'])} means "
            f"layer0..layer{len(header['hidden'])})"
        )
    sizes = [header["observation_size"], *header["hidden"], header["num_actions"]]
    weights = []
    for index in range(len(sizes) - 1):
        weight = _check_array(
            arrays[f"layer{index}.weight"],
            f"layer{index}.weight",
            (sizes[index], sizes[index + 1]),
            where,
            WEIGHT_DTYPES,
        )
        bias = _check_array(arrays[f"layer{index}.bias"], f"layer{index}.bias", (sizes[index + 1],), where)
        weights.append((weight, bias))
    transform = {
        key: _check_array(arrays[key], key, (sizes[0],), where) if key in arrays else None for key in INPUT_ARRAYS
    }
    return NumpyModel(
        name=name,
        game=header["game"],
        options=header["options"],
        layout_version=header["layout_version"],
        observation_size=header["observation_size"],
        num_actions=header["num_actions"],
        hidden=tuple(header["hidden"]),
        activation=header["activation"],
        weights=tuple(weights),
        input_offset=transform["input.offset"],
        input_scale=transform["input.scale"],
        meta=dict(header.get("meta") or {}),
        input_features=header.get("input_features"),
        candidates=header.get("candidates"),
    )


# ---------------------------------------------------------------------------------------------- files


def _open(path: Path, where: str) -> Archive:
    if not path.is_file():
        raise FileNotFoundError(f"no numpy policy file at {cut(repr(str(path)), 300)}")
    return Archive(path, where)


def _read_header_member(archive: Archive, where: str) -> dict[str, Any]:
    if "header" not in archive.files:
        raise ValueError(f"{where} has no 'header' array: not a tableenvs numpy policy")
    return _parse_header(archive.read("header", MAX_HEADER_BYTES), where)


def read_header(path: str | os.PathLike) -> dict[str, Any]:
    """The checked header of a numpy policy file, without reading its weights."""
    path = Path(path)
    where = f"numpy policy {str(path)!r}"
    with _open(path, where) as archive:
        header = _read_header_member(archive, where)
    _check_header(header, where)
    return header


def load_numpy_policy(path: str | os.PathLike) -> NumpyModel:
    """Read and check the numpy policy file at ``path`` (see the module docstring for what is checked)."""
    path = Path(path)
    where = f"numpy policy {str(path)!r}"
    with _open(path, where) as archive:
        names = list(archive.files)
        header = _read_header_member(archive, where)
        _check_header(header, where)
        allowed = set(_array_names(header)) | set(INPUT_ARRAYS)
        extra = sorted(set(names) - allowed)
        if extra:  # refused before anything else is read
            raise ValueError(f"{where}: unexpected archive member(s) {', '.join(show(name, 60) for name in extra[:5])}")
        arrays = {name: archive.read(name) for name in names if name != "header"}
    return _model(header, arrays, where, path.name)


def _weight_dtype(dtype: Any, where: str) -> str:
    """``dtype`` (a name, or a numpy dtype or type) as one of :data:`WEIGHT_DTYPES`; a ``ValueError`` otherwise."""
    try:
        name = np.dtype(dtype).name if dtype is not None else None
    except (TypeError, ValueError):
        name = None
    if name not in WEIGHT_DTYPES:
        raise ValueError(
            f"{where}: dtype (the weights' storage) must be one of {', '.join(WEIGHT_DTYPES)}, got {dtype!r}"
        )
    return name


def _stored_weight(weight: Any, dtype: str, name: str, where: str) -> np.ndarray:
    """``weight`` as the contiguous ``dtype`` array the file stores; refused if the cast itself overflows."""
    with np.errstate(over="ignore"):  # reported below, as a one-line error
        stored = np.ascontiguousarray(weight, dtype=dtype)
    if dtype != "float32" and not np.isfinite(stored).all():
        original = np.asarray(weight, dtype=np.float64)
        overflow = int((np.isfinite(original) & ~np.isfinite(stored)).sum())
        if overflow:  # a non-finite input is refused by the usual check, with the usual message
            raise ValueError(
                f"{where}: {name!r} has {overflow} value(s) beyond {dtype}'s range (|w| > "
                f"{float(np.finfo(dtype).max):g}); store it as float32"
            )
    return stored


def save_numpy_policy(
    path: str | os.PathLike,
    *,
    game: str,
    options: Mapping[str, Any],
    layout_version: int,
    weights: Sequence[tuple[np.ndarray, np.ndarray]],
    activation: str,
    input_offset: np.ndarray | None = None,
    input_scale: np.ndarray | None = None,
    meta: Mapping[str, Any] | None = None,
    dtype: str = "float32",
    input_features: str | None = None,
    candidates: str | None = None,
) -> Path:
    """Write a numpy policy file (atomically: an existing file survives a failed write); return its path.

    ``weights``: ``(W, b)`` per layer, ``W`` of shape (inputs, outputs); ``W`` stored as ``dtype`` (one of
    :data:`WEIGHT_DTYPES`: ``"float16"`` halves the file), ``b`` as float32. ``options`` and ``meta`` must be JSON.
    ``input_features`` or ``candidates``: the names the header records (module docstring).
    Everything is checked as :func:`load_numpy_policy` checks it, before anything is written.
    """
    path = Path(path)
    where = f"numpy policy {str(path)!r}"
    dtype = _weight_dtype(dtype, where)
    if not weights:
        raise ValueError(f"{where}: weights must list at least one (W, b) layer")
    arrays: dict[str, Any] = {}  # Any: numpy's savez stub also types a keyword allow_pickle
    for index, (weight, bias) in enumerate(weights):
        arrays[f"layer{index}.weight"] = _stored_weight(weight, dtype, f"layer{index}.weight", where)
        arrays[f"layer{index}.bias"] = np.ascontiguousarray(bias, dtype=np.float32)
    for key, value in zip(INPUT_ARRAYS, (input_offset, input_scale), strict=True):
        if value is not None:
            arrays[key] = np.ascontiguousarray(value, dtype=np.float32)
    first, last = arrays["layer0.weight"], arrays[f"layer{len(weights) - 1}.weight"]
    if any(arrays[f"layer{i}.weight"].ndim != 2 for i in range(len(weights))):
        raise ValueError(f"{where}: every weight must be a 2-D (inputs, outputs) array")
    header: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "game": game,
        "options": dict(options),
        "layout_version": layout_version,
        "observation_size": int(first.shape[0]),
        "num_actions": int(last.shape[1]),
        "hidden": [int(arrays[f"layer{i}.weight"].shape[1]) for i in range(len(weights) - 1)],
        "activation": activation,
    }
    if meta:
        header["meta"] = dict(meta)
    if input_features:
        header["input_features"] = input_features
    if candidates:
        header["candidates"] = candidates
    try:
        text = json.dumps(header, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{where}: the header (options, meta) must be plain JSON ({error})") from None
    _model(json.loads(text), arrays, where, path.name)  # the same checks as loading
    arrays["header"] = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    with atomic_output(path, "wb") as handle:
        np.savez_compressed(handle, **arrays)
    return path


def convert_numpy_policy(
    source: str | os.PathLike, target: str | os.PathLike, dtype: str = "float16", input_features: str | None = None
) -> Path:
    """Rewrite the numpy policy file ``source`` as ``target`` with its weight matrices stored as ``dtype`` (one of
    :data:`WEIGHT_DTYPES`); the header is the same but for ``meta["weight_dtype"]``, which records the storage dtype,
    and ``input_features`` when given (name the derived inputs a network was fitted on). Biases and the input
    transform are copied exactly. ``target`` may be ``source`` (the write is atomic); its path."""
    dtype = _weight_dtype(dtype, f"numpy policy {str(Path(target))!r}")
    model = load_numpy_policy(source)
    return save_numpy_policy(
        target,
        game=model.game,
        options=model.options,
        layout_version=model.layout_version,
        weights=model.weights,
        activation=model.activation,
        input_offset=model.input_offset,
        input_scale=model.input_scale,
        meta={**model.meta, "weight_dtype": dtype},
        dtype=dtype,
        input_features=input_features or model.input_features,
        candidates=model.candidates,
    )


# ---------------------------------------------------------------------------------------------- envs and models


def save_for_env(
    path: str | os.PathLike,
    env: Any,
    *,
    weights: Sequence[tuple[np.ndarray, np.ndarray]],
    activation: str,
    input_scale: np.ndarray | None = None,
    meta: Mapping[str, Any] | None = None,
    dtype: str = "float32",
    input_features: str | None = None,
    candidates: str | None = None,
) -> Path:
    """:func:`save_numpy_policy` for a model that plays ``env`` (raw or wrapped): the header's game, options and
    layout version are ``env``'s (:func:`model_options`, :func:`tableenvs.core.layout.layout_version`); ``dtype`` and
    ``input_features`` (derived inputs read after the observation) and ``candidates`` as there."""
    raw = getattr(env, "unwrapped", env)
    return save_numpy_policy(
        path,
        game=raw.metadata["name"],
        options=model_options(raw),
        layout_version=layout_version(raw),
        weights=weights,
        activation=activation,
        input_scale=input_scale,
        meta=meta,
        dtype=dtype,
        input_features=input_features,
        candidates=candidates,
    )
