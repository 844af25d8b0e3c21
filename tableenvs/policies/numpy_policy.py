"""Trained policies as plain numbers: one ``.npz`` file that numpy plays and that cannot run code when loaded.

Where you are: shared plumbing for playing trained agents: ``make_policy("trained", env)`` (the model shipped for the
game), any ``.npz`` path given to :func:`tableenvs.policies.make_policy` (``tableenvs eval --policies model.npz``,
``SingleAgentEnv(opponents="model.npz")``). Only numpy is needed: nothing here imports torch, so a model plays where
torch is not installed. ``tableenvs train`` writes ``model.npz`` beside ``model.zip``, and ``tableenvs export
MODEL.zip OUT.npz`` (:func:`tableenvs.policies.sb3_policy.export_sb3`) converts a Stable-Baselines3 model, whose
``.zip`` holds pickles that can run code.

The file format (version 1) and its reader and writers are :mod:`tableenvs.policies.model_file`, whose names
this module offers too.

* :func:`save_numpy_policy` — write a file atomically, checked as :func:`load_numpy_policy` checks it.
* :func:`load_numpy_policy` — read and check a file into a :class:`NumpyModel`; any problem in it is a one-line
  ``ValueError`` naming the file and what is wrong (a missing file is ``FileNotFoundError``).
* :class:`NumpyPolicy` — a model as a :class:`~tableenvs.policies.Policy` for an env: the most likely legal action,
  or a sample from the masked softmax drawn with the caller's ``rng`` (a candidate-scoring model: the action of its
  best-scoring candidate play, or of one sampled from the softmax of the scores). A model whose game, options, layout
  version, observation size or action count differ from the env's is refused at once, in one line naming both.
* :func:`convert_numpy_policy` — rewrite a file with its weight matrices stored in another dtype (float16: half
  the size; the greedy actions of the shipped models were checked against their float32 originals).
* :func:`random_numpy_policy` — a file with random weights for an env (tests, benchmarks, a smoke check).
* :func:`trained_model_path` — the model ``make_policy("trained", env)`` plays: ``<game>.npz`` in the directory named
  by the environment variable ``TABLEENVS_MODELS`` if set, else in :data:`MODELS_DIR` (``tableenvs/models``,
  shipped as package data).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tableenvs.policies.input_features import candidate_choices, input_features
from tableenvs.policies.model_env import check_model_fits, model_options
from tableenvs.policies.model_file import (
    ACTIVATIONS,
    FORMAT,
    VERSION,
    WEIGHT_DTYPES,
    NumpyModel,
    convert_numpy_policy,
    load_numpy_policy,
    read_header,
    save_for_env,
    save_numpy_policy,
)
from tableenvs.policies.torch_policy import (
    MaskedLogitsPolicy,  # numpy only: torch_policy imports torch when a net is built
)

#: This module's names, with those of the file format (:mod:`tableenvs.policies.model_file`) it has always offered.
__all__ = [
    "ACTIVATIONS",
    "FORMAT",
    "MODELS_DIR",
    "MODELS_ENV",
    "VERSION",
    "WEIGHT_DTYPES",
    "NumpyModel",
    "NumpyPolicy",
    "check_model_fits",
    "convert_numpy_policy",
    "is_trained_spec",
    "load_numpy_policy",
    "model_options",
    "models_dir",
    "random_numpy_policy",
    "read_header",
    "resolve_trained",
    "save_for_env",
    "save_numpy_policy",
    "shipped_models",
    "model_files",
    "trained_model_path",
]

#: Where the shipped models are (``<game>.npz``); ``$TABLEENVS_MODELS`` names another directory.
MODELS_DIR = Path(__file__).resolve().parent.parent / "models"
MODELS_ENV = "TABLEENVS_MODELS"


class NumpyPolicy(MaskedLogitsPolicy):
    """A numpy policy file (a path or a loaded :class:`NumpyModel`) as a tableenvs policy.

    ``env`` (a tableenvs env, raw or wrapped; None skips the check) must match the model (:func:`check_model_fits`).
    ``deterministic=True`` plays the most likely legal action; False samples the softmax over the legal actions
    with the caller's ``rng``. The weights are converted once and the forward pass writes into buffers allocated
    here (a lock keeps two threads sharing one policy apart).
    """

    def __init__(self, model: NumpyModel | str | os.PathLike, env: Any = None, *, deterministic: bool = True):
        if isinstance(model, (str, os.PathLike)):
            model = load_numpy_policy(model)
        elif not isinstance(model, NumpyModel):
            raise TypeError(f"NumpyPolicy takes a .npz path or a NumpyModel, got {type(model).__name__}")
        if env is not None:
            check_model_fits(model, env)
        self._features = None  # derived inputs the model was fitted on, appended to each observation in act()
        if model.input_features:
            if env is None:
                raise ValueError(f"{model.name!r} reads input_features {model.input_features!r}: give the env it plays")
            self._features = input_features(model.input_features, env)
        self._candidates = None  # a candidate-scoring model's candidate plays (act() scores each)
        if model.candidates:
            if env is None:
                raise ValueError(f"{model.name!r} scores candidates {model.candidates!r}: give the env it plays")
            self._candidates = candidate_choices(model.candidates, env)
        self.model, self.name = model, model.name
        self.deterministic = bool(deterministic)
        self._weights = [
            (np.ascontiguousarray(w, np.float32), np.ascontiguousarray(b, np.float32)) for w, b in model.weights
        ]
        self._outputs = [np.empty(bias.shape, np.float32) for _, bias in self._weights]
        self._offset, self._scale = model.input_offset, model.input_scale
        self._input = np.empty(model.observation_size, np.float32)
        self._relu = model.activation == "relu"
        self._legal = np.empty(model.num_actions, bool)
        self._masked = np.empty(model.num_actions, np.float32)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        m = self.model
        shape = "x".join(str(n) for n in (m.observation_size, *m.hidden, m.num_actions))
        return f"NumpyPolicy({m.name!r}, {m.game}, {shape} {m.activation}, deterministic={self.deterministic})"

    def _forward(self, observation: np.ndarray) -> np.ndarray:
        """The logits in this policy's output buffer (valid until the next call; hold the lock)."""
        x = observation = observation if isinstance(observation, np.ndarray) else np.asarray(observation)
        if self._offset is not None or self._scale is not None or x.dtype != np.float32:
            x = self._input
            if self._offset is not None:
                np.subtract(observation, self._offset, out=x)
            else:
                np.copyto(x, observation, casting="same_kind")
            if self._scale is not None:
                np.multiply(x, self._scale, out=x)
        last = len(self._weights) - 1
        for index, (weight, bias) in enumerate(self._weights):
            out = self._outputs[index]
            np.dot(x, weight, out=out)  # a little faster than matmul for one vector
            np.add(out, bias, out=out)
            if index < last:
                if self._relu:
                    np.maximum(out, 0, out=out)
                else:
                    np.tanh(out, out=out)
            x = out
        return x

    def _logits(self, observation: np.ndarray) -> np.ndarray:
        with self._lock:
            return self._forward(observation).astype(np.float64)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        if self._candidates is not None:
            return self._choose_candidate(observation, action_mask, rng)
        if self._features is not None:
            observation = np.concatenate([observation, self._features(observation, action_mask)])
        if not self.deterministic:
            return super().act(observation, action_mask, rng)
        with self._lock:
            logits = self._forward(observation)
            legal = np.not_equal(action_mask, 0, out=self._legal)  # nonzero is legal, as in MaskedLogitsPolicy
            masked = self._masked
            masked.fill(-np.inf)
            np.copyto(masked, logits, where=legal)
            best = int(masked.argmax())
            if legal[best]:
                return best
            if not legal.any():
                raise ValueError(f"{type(self).__name__}: the action mask has no legal action")
            return int(np.flatnonzero(legal)[0])  # every legal logit is -inf

    def _choose_candidate(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        """A candidate-scoring model's action: its candidates' features through the network (one row each), then
        the action of the first best score (or of one drawn from the softmax of the scores with ``rng``)."""
        assert self._candidates is not None  # act() calls this only for a candidate-scoring model
        features, actions = self._candidates(observation, action_mask)
        if len(actions) == 1:
            return int(actions[0])
        scores = self.model.logits(features)[:, 0].astype(np.float64)
        if self.deterministic:
            return int(actions[int(scores.argmax())])
        weights = np.exp(scores - scores.max())
        return int(actions[int(rng.choice(len(actions), p=weights / weights.sum()))])


def random_numpy_policy(
    path: str | os.PathLike,
    env: Any,
    *,
    hidden: Sequence[int] = (64,),
    activation: str = "tanh",
    seed: int = 0,
    meta: Mapping[str, Any] | None = None,
) -> Path:
    """Write a numpy policy with random weights (Glorot-scaled normals, zero biases) that fits ``env``; its path."""
    raw = env.unwrapped
    agent = raw.possible_agents[0]
    sizes = [
        int(raw.observation_space(agent)["observation"].shape[0]),
        *map(int, hidden),
        int(raw.action_space(agent).n),
    ]
    rng = np.random.default_rng(seed)
    weights = [
        (rng.normal(0.0, np.sqrt(2.0 / (a + b)), (a, b)), np.zeros(b)) for a, b in zip(sizes, sizes[1:], strict=False)
    ]
    return save_for_env(path, raw, weights=weights, activation=activation, meta=meta)


# ---------------------------------------------------------------------------------------------- shipped models


def models_dir() -> Path:
    """Where ``"trained"`` looks: ``$TABLEENVS_MODELS`` if set, else :data:`MODELS_DIR`."""
    override = os.environ.get(MODELS_ENV)
    return Path(override).expanduser() if override else MODELS_DIR


def shipped_models() -> list[str]:
    """The games with a model in :func:`models_dir` (``<game>.npz`` or ``<game>-<setting>.npz``)."""
    directory = models_dir()
    if not directory.is_dir():
        return []
    return sorted({path.stem.partition("-")[0] for path in directory.glob("*.npz")})


def model_files(game: str) -> list[Path]:
    """The model files of ``game`` in :func:`models_dir`: ``<game>.npz`` (its default setting) first, then every
    ``<game>-<setting>.npz`` (e.g. ``llama_party_v0-2p.npz``), sorted."""
    directory = models_dir()
    default = directory / f"{game}.npz"
    others = sorted(directory.glob(f"{game}-*.npz")) if directory.is_dir() else []
    return ([default] if default.is_file() else []) + others


def trained_model_path(game: str, options: Mapping[str, Any] | None = None) -> Path:
    """The model ``make_policy("trained", env)`` plays for ``game``: with ``options`` (the env's
    :func:`~tableenvs.policies.model_env.model_options`), the file among :func:`model_files` whose header was made
    for exactly them (else the default file, whose own check then refuses the setting in one line); without, the
    default file. A one-line ``ValueError`` when the game has none."""
    files = model_files(game)
    if options is not None:
        for path in files:
            try:
                header = read_header(path)
            except (OSError, ValueError):
                continue
            if header["game"] == game and header["options"] == dict(options):
                return path
    if files:
        return files[0]
    where = f" in {models_dir()} (${MODELS_ENV})" if os.environ.get(MODELS_ENV) else ""
    raise ValueError(
        f"no trained model is shipped for {game}{where} (shipped: {', '.join(shipped_models()) or 'none'}); play "
        f"'search' or 'heuristic' there, or train one (tableenvs train {game}) and pass its model.npz"
    )


def check_trained_fits(path: Path, raw: Any) -> None:
    """Refuse ``"trained"`` in one line where the shipped model at ``path`` was made for other options than ``raw``'s:
    the line names the settings the shipped models of this game were made for and suggests ``search`` or
    ``heuristic`` (or training one). Nothing when the options match (the model's other checks follow)."""
    game = raw.metadata["name"]
    options = model_options(raw)
    try:
        header = read_header(path)
    except (OSError, ValueError):
        return  # the model's own loading says what is wrong with the file
    if header["game"] != game or header["options"] == options:
        return
    differences = []  # each shipped model of this game: the options where it differs from this env's
    for other in model_files(game):
        try:
            found = read_header(other)
        except (OSError, ValueError):
            continue
        if found["game"] == game:
            made_for = found["options"]
            keys = sorted(key for key in set(options) | set(made_for) if options.get(key) != made_for.get(key))
            differences.append((keys, made_for))
    closest = min((keys for keys, _ in differences), key=len, default=sorted(options))
    wanted = ", ".join(f"{key}={options.get(key)!r}" for key in closest)
    players = f" --players {options['num_players']}" if "num_players" in closest else ""
    raise ValueError(
        f"'trained' has no model for {game} with {wanted}; it has one for {shipped_settings(differences)} (the rest "
        f"as this env's): play 'search' or 'heuristic' there, or train one (tableenvs train {game}{players})"
    )


def shipped_settings(differences: list[tuple[list[str], dict[str, Any]]]) -> str:
    """The settings of shipped models, each given by the options where it differs from an env's (``(keys,
    options)`` per model), those differing alike but for the player count joined: ``"max_turns=1000 at 2-4
    players; missions='standard' at 5 players"``, the closest first."""
    groups: dict[str, list[int]] = {}
    order: dict[str, int] = {}
    for keys, made_for in differences:
        rest = ", ".join(f"{key}={made_for.get(key)!r}" for key in keys if key != "num_players")
        groups.setdefault(rest, []).append(int(made_for.get("num_players", 0)))
        order[rest] = min(order.get(rest, len(keys)), len(keys))
    texts = []
    for rest in sorted(groups, key=lambda text: order[text]):
        counts = sorted(set(groups[rest]))
        runs: list[list[int]] = []
        for count in counts:
            if runs and count == runs[-1][1] + 1:
                runs[-1][1] = count
            else:
                runs.append([count, count])
        spans = ", ".join(str(low) if low == high else f"{low}-{high}" for low, high in runs)
        texts.append(f"{rest} at {spans} players" if rest else f"{spans} players")
    return "; ".join(texts)


def trained_file(spec: str, raw: Any) -> Path:
    """The file a ``"trained"`` or ``"trained:path=FILE.npz"`` spec names for the env ``raw``: the shipped model made
    for its options (:func:`resolve_trained`), checked to fit them (:func:`check_trained_fits`: a one-line refusal
    naming the settings that have one), or the given file (checked where it is loaded)."""
    path = resolve_trained(spec, raw.metadata["name"], model_options(raw))
    if spec == "trained":
        check_trained_fits(path, raw)
    return path


def is_trained_spec(spec: Any) -> bool:
    """Whether a policy spec is ``"trained"`` or ``"trained:path=FILE.npz"``."""
    return isinstance(spec, str) and (spec == "trained" or spec.startswith("trained:"))


def resolve_trained(spec: str, game: str, options: Mapping[str, Any] | None = None) -> Path:
    """The file of a ``"trained"`` spec for ``game``: the shipped model (for ``options``, the env's model options,
    when given: :func:`trained_model_path`), or ``trained:path=FILE.npz``'s file."""
    if spec == "trained":
        return trained_model_path(game, options)
    key, sep, value = spec[len("trained:") :].partition("=")
    if key != "path" or not sep or not value:
        raise ValueError(f"policy {spec!r}: 'trained' takes only path=FILE.npz (e.g. trained:path=runs/x/model.npz)")
    return Path(value).expanduser()
