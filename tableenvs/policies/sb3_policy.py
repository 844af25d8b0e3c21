"""A saved Stable-Baselines3 model as a tableenvs :class:`~tableenvs.policies.Policy`.

Where you are: shared plumbing for training (needs the ``train`` extra: torch, stable-baselines3, sb3-contrib).
Nothing here is imported by ``import tableenvs``; torch is imported only when a model is loaded.

:class:`SB3Policy` loads a ``.zip`` saved by ``model.save(...)`` (``MaskablePPO``, ``PPO`` or ``A2C``: any
actor-critic policy with a categorical action distribution; or ``DQN``, whose Q-values stand in for the logits)
or wraps a model already in memory, and picks an
action from the policy's action logits restricted to the legal actions: the most likely legal action
(``deterministic=True``) or a sample from the masked distribution drawn with the caller's ``rng`` (so games
stay reproducible; torch's global generator is never used).

Trust: a ``.zip`` holds pickles (SB3's ``data`` entries and its policy class), which run code when SB3 loads the file,
so :func:`tableenvs.policies.make_policy` loads one only with ``trust_models=True``. :class:`SB3Policy` and
:func:`load_model` called directly load what they are given.

:func:`export_sb3` writes a model's actor as a numpy policy file (:mod:`tableenvs.policies.numpy_policy`, ``tableenvs
export MODEL.zip OUT.npz``): the policy network (features extractor ``FlattenExtractor``, ``mlp_extractor.policy_net``
of ``Linear`` layers each followed by the one activation, Tanh (SB3's default) or ReLU, then ``action_net``; DQN: its
``q_net``). From a path it reads the file without running any of its pickles (``data`` as JSON, whose readable
fields name the policy class, the activation and the features extractor, and ``policy.pth`` with
``torch.load(weights_only=True)``); ``trust=True`` loads it with SB3 instead. Anything the format cannot express
(another features extractor, extra parameters, another activation, a custom policy class) is refused in one line.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tableenvs.policies.torch_policy import MaskedLogitsPolicy, set_torch_threads

if TYPE_CHECKING:
    from stable_baselines3.common.base_class import BaseAlgorithm

#: Algorithms a saved model may come from, by name (classes are imported on demand).
ALGORITHMS = ("MaskablePPO", "PPO", "A2C", "DQN")


def load_model(path: str | Path, algorithm: str = "auto") -> Any:
    """Load a saved SB3 model on the CPU; ``algorithm="auto"`` reads which one from the file."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no saved SB3 model at {str(path)!r}")
    if algorithm == "auto":
        algorithm = _detect_algorithm(path)
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be 'auto' or one of {', '.join(ALGORITHMS)}; got {algorithm!r}")
    cls: type[BaseAlgorithm]
    if algorithm == "MaskablePPO":
        from sb3_contrib import MaskablePPO as cls
    elif algorithm == "PPO":
        from stable_baselines3 import PPO as cls
    elif algorithm == "DQN":
        from stable_baselines3 import DQN as cls
    else:
        from stable_baselines3 import A2C as cls
    return cls.load(str(path), device="cpu")


def _detect_algorithm(path: Path) -> str:
    try:
        with zipfile.ZipFile(path) as archive:
            data = json.loads(archive.read("data"))
    except (zipfile.BadZipFile, KeyError, json.JSONDecodeError) as error:
        raise ValueError(f"{str(path)!r} is not a saved SB3 model ({error})") from None
    policy_module = data.get("policy_class", {}).get("__module__", "")
    if policy_module.startswith("sb3_contrib.common.maskable"):
        return "MaskablePPO"
    if policy_module.startswith("stable_baselines3.dqn"):
        return "DQN"
    return "PPO" if "clip_range" in data else "A2C"


class SB3Policy(MaskedLogitsPolicy):
    """Masked prediction from a Stable-Baselines3 actor-critic model.

    ``model`` is a ``.zip`` path or a loaded model. ``env`` (optional, a tableenvs env) is used to check that the
    model's observation and action sizes match the game, so a model trained on another game or player count
    fails at once with a clear message instead of mid-game. ``torch_threads`` (default 1) sets torch's intra-op
    threads for this process: one observation at a time through a small network gains nothing from more, and on
    a busy machine more threads made 200 Pili Pili games 10-30x slower (``docs/benchmarks.md``); None leaves
    torch's setting alone.
    """

    def __init__(
        self,
        model: Any,
        env: Any = None,
        *,
        deterministic: bool = True,
        algorithm: str = "auto",
        torch_threads: int | None = 1,
    ):
        import torch

        set_torch_threads(torch_threads)
        self._torch = torch
        if isinstance(model, (str, Path)):
            self.name = Path(model).name
            model = load_model(model, algorithm)
        else:
            self.name = type(model).__name__
        self.model = model
        self.deterministic = bool(deterministic)
        observation_shape = tuple(model.observation_space.shape)
        num_actions = int(model.action_space.n)
        if env is not None:
            raw = env.unwrapped
            agent = raw.possible_agents[0]
            env_shape = tuple(raw.observation_space(agent)["observation"].shape)
            env_actions = int(raw.action_space(agent).n)
            if (observation_shape, num_actions) != (env_shape, env_actions):
                raise ValueError(
                    f"SB3 model {self.name!r} expects observations of shape {observation_shape} and "
                    f"{num_actions} actions, but {raw.metadata['name']} with {raw.num_players} players has "
                    f"{env_shape} and {env_actions}: was it trained on another game or player count, or before the "
                    f"game's observation changed (see the observation layout in its docs page)?"
                )

    def _logits(self, observation: np.ndarray) -> np.ndarray:
        """The policy's action logits (DQN: its Q-values) for one observation."""
        torch = self._torch
        policy = self.model.policy
        with torch.no_grad():
            obs_tensor, _ = policy.obs_to_tensor(np.asarray(observation, dtype=np.float32))
            if hasattr(policy, "q_net"):  # DQN: the Q-values play the logits (argmax; softmax when sampling)
                return policy.q_net(obs_tensor)[0].cpu().numpy().astype(np.float64)
            return policy.get_distribution(obs_tensor).distribution.logits[0].cpu().numpy().astype(np.float64)


# ---------------------------------------------------------------------------------------------- export to numpy

#: Policy classes whose network :func:`export_sb3` knows, by module: actor-critic (Tanh by default) and DQN (ReLU).
_ACTOR_CRITIC_MODULES = ("stable_baselines3.common.policies", "sb3_contrib.common.maskable.policies")
_DQN_MODULES = ("stable_baselines3.dqn.policies",)
_ACTIVATIONS = {"Tanh": "tanh", "ReLU": "relu"}
_FLATTEN = "<class 'stable_baselines3.common.torch_layers.FlattenExtractor'>"
#: ``policy_kwargs`` that leave the actor a plain MLP on the flattened observation.
_HARMLESS_KWARGS = (
    "net_arch",
    "activation_fn",
    "ortho_init",
    "features_extractor_class",
    "features_extractor_kwargs",
    "share_features_extractor",
    "normalize_images",
    "optimizer_class",
    "optimizer_kwargs",
)


def _actor_from_zip(path: Path, where: str) -> tuple[str, str, dict[str, np.ndarray], dict[str, Any]]:
    """``(kind, activation, policy parameters, data)`` of a saved model, read without unpickling anything."""
    try:
        with zipfile.ZipFile(path) as archive:
            data = json.loads(archive.read("data"))
            weights = archive.read("policy.pth")
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as error:
        raise ValueError(f"{where} is not a saved SB3 model ({type(error).__name__}: {error})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{where} is not a saved SB3 model (its data is not a JSON object)")
    policy_class = data.get("policy_class")
    module = policy_class.get("__module__") if isinstance(policy_class, dict) else None
    if module in _DQN_MODULES:
        kind, activation = "dqn", "relu"
    elif module in _ACTOR_CRITIC_MODULES:
        kind, activation = "actor_critic", "tanh"
    else:
        raise ValueError(
            f"{where}: its policy class comes from {module!r}; without running the file's pickles only SB3's and "
            "sb3-contrib's MlpPolicy can be read (with trust, tableenvs export --trust-models loads it with SB3)"
        )
    kwargs = data.get("policy_kwargs") or {}
    if not isinstance(kwargs, dict):
        raise ValueError(f"{where}: policy_kwargs is not readable ({type(kwargs).__name__})")
    readable = {key: value for key, value in kwargs.items() if not key.startswith(":")}  # SB3 writes str(value)
    unknown = sorted(set(readable) - set(_HARMLESS_KWARGS))
    if unknown:
        raise ValueError(f"{where}: policy_kwargs {', '.join(unknown)} may change the network; the format cannot say")
    if "activation_fn" in readable:
        match = re.fullmatch(r"<class 'torch\.nn\.modules\.activation\.(\w+)'>", str(readable["activation_fn"]))
        if match is None or match.group(1) not in _ACTIVATIONS:
            raise ValueError(f"{where}: activation {readable['activation_fn']!r}; the format has only Tanh and ReLU")
        activation = _ACTIVATIONS[match.group(1)]
    extractor = readable.get("features_extractor_class")
    if extractor is not None and extractor != _FLATTEN:
        raise ValueError(f"{where}: features extractor {extractor!r}; the format takes only FlattenExtractor")
    observation_space, action_space = data.get("observation_space") or {}, data.get("action_space") or {}
    if (
        observation_space.get(":type:") != "<class 'gymnasium.spaces.box.Box'>"
        or len(observation_space.get("_shape") or ()) != 1
    ):
        raise ValueError(f"{where}: the observation space is not a 1-D Box ({observation_space.get(':type:')})")
    if action_space.get(":type:") != "<class 'gymnasium.spaces.discrete.Discrete'>":
        raise ValueError(f"{where}: the action space is not Discrete ({action_space.get(':type:')})")
    import torch

    try:
        state = torch.load(io.BytesIO(weights), map_location="cpu", weights_only=True)
    except Exception as error:  # noqa: BLE001 - anything but plain tensors means the same here
        raise ValueError(f"{where}: policy.pth is not plain tensors ({type(error).__name__})") from None
    if not isinstance(state, dict) or not all(isinstance(value, torch.Tensor) for value in state.values()):
        raise ValueError(f"{where}: policy.pth is not a dict of tensors")
    return kind, activation, {key: value.detach().cpu().numpy() for key, value in state.items()}, data


def _actor_from_model(model: Any, where: str) -> tuple[str, str, dict[str, np.ndarray]]:
    """``(kind, activation, policy parameters)`` of a loaded model, its modules checked to be a plain MLP."""
    from stable_baselines3.common.torch_layers import FlattenExtractor
    from torch import nn

    policy: Any = getattr(model, "policy", None)  # any object until the checks below
    if hasattr(policy, "q_net"):
        kind, extractors, sequential = "dqn", [policy.q_net.features_extractor], policy.q_net.q_net
    elif hasattr(policy, "mlp_extractor") and isinstance(getattr(policy, "action_net", None), nn.Linear):
        kind = "actor_critic"
        names = ("features_extractor", "pi_features_extractor")
        extractors = [getattr(policy, name) for name in names if getattr(policy, name, None) is not None]
        sequential = policy.mlp_extractor.policy_net
        distribution = type(getattr(policy, "action_dist", None)).__name__
        if distribution not in ("CategoricalDistribution", "MaskableCategoricalDistribution"):
            raise ValueError(f"{where}: its action distribution is {distribution}, not categorical")
    else:
        raise ValueError(f"{where}: {type(policy).__name__} is neither an actor-critic MLP policy nor DQN's")
    for extractor in extractors:
        if type(extractor) is not FlattenExtractor:
            raise ValueError(f"{where}: features extractor {type(extractor).__name__}; the format takes only Flatten")
    if not isinstance(sequential, nn.Sequential):
        raise ValueError(f"{where}: the policy network is a {type(sequential).__name__}, not a Sequential")
    activations = set()
    for index, module in enumerate(sequential):
        if index % 2 == 0 and type(module) is not nn.Linear:
            raise ValueError(f"{where}: layer {index} of the policy network is {type(module).__name__}, not Linear")
        if index % 2 == 1:
            activations.add(type(module).__name__)
    if activations - set(_ACTIVATIONS) or len(activations) > 1:
        raise ValueError(f"{where}: activations {sorted(activations)}; the format has one, Tanh or ReLU")
    activation = _ACTIVATIONS[activations.pop()] if activations else ("relu" if kind == "dqn" else "tanh")
    return kind, activation, {key: value.detach().cpu().numpy() for key, value in policy.state_dict().items()}


def _layers(kind: str, state: Mapping[str, np.ndarray], where: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """The actor's ``(W (in, out), b)`` layers from a policy's parameters; anything else in them is refused."""
    prefix = "q_net.q_net." if kind == "dqn" else "mlp_extractor.policy_net."
    ignored = ("q_net_target.",) if kind == "dqn" else ("mlp_extractor.value_net.", "value_net.")
    head = () if kind == "dqn" else ("action_net.weight", "action_net.bias")
    found: dict[int, dict[str, np.ndarray]] = {}
    for key, value in state.items():
        if key.startswith(ignored) or key in head:
            continue
        match = re.fullmatch(re.escape(prefix) + r"(\d+)\.(weight|bias)", key)
        if match is None:
            raise ValueError(
                f"{where}: parameter {key!r} is not part of a plain MLP actor; the format cannot express it"
            )
        found.setdefault(int(match.group(1)), {})[match.group(2)] = value
    indices = sorted(found)
    if indices != list(range(0, 2 * len(indices), 2)) or any(set(found[i]) != {"weight", "bias"} for i in indices):
        raise ValueError(f"{where}: the policy network's layers {indices} are not Linear, activation, Linear, ...")
    pairs = [(found[i]["weight"], found[i]["bias"]) for i in indices]
    if head:
        pairs.append((state["action_net.weight"], state["action_net.bias"]))
    if not pairs:
        raise ValueError(f"{where}: no policy layers found")
    layers: list[tuple[np.ndarray, np.ndarray]] = []
    for weight, bias in pairs:
        if (
            weight.ndim != 2
            or bias.shape != (weight.shape[0],)
            or (layers and layers[-1][0].shape[1] != weight.shape[1])
        ):
            raise ValueError(f"{where}: the policy network's layer shapes do not chain")
        layers.append((np.ascontiguousarray(weight.T, dtype=np.float32), np.asarray(bias, dtype=np.float32)))
    return layers


def export_sb3(
    model: Any,
    out_npz: str | Path,
    env_or_game: Any,
    *,
    options: Mapping[str, Any] | None = None,
    trust: bool = False,
    meta: Mapping[str, Any] | None = None,
) -> Path:
    """Write the actor of an SB3 model (a ``.zip`` path or a loaded MaskablePPO, PPO, A2C or DQN model) as a numpy
    policy file for ``env_or_game`` (a tableenvs env, or a game name with ``options``); return its path.

    A path is read without running its pickles unless ``trust=True`` (then SB3 loads it; see the module docstring).
    The header records the env's game, options and layout version; the model's observation and action sizes must
    be the env's. ``meta`` is added to the header's ``meta`` (with the source, algorithm, steps and date).
    """
    from datetime import datetime, timezone

    from tableenvs import __version__
    from tableenvs.core.registry import make_raw
    from tableenvs.core.table_env import TableEnv
    from tableenvs.policies.numpy_policy import save_for_env

    if isinstance(env_or_game, str):
        raw = make_raw(env_or_game, **dict(options or {}))
    else:
        raw = getattr(env_or_game, "unwrapped", None)
        if not isinstance(raw, TableEnv):
            raise TypeError(f"export_sb3: env_or_game must be a tableenvs env or a game name, got {env_or_game!r}")
        if options:
            raise TypeError("export_sb3: options go with a game name, not with an env")
    if isinstance(model, (str, Path)):
        path = Path(model)
        where = f"SB3 model {str(path)!r}"
        if not path.is_file():
            raise FileNotFoundError(f"no saved SB3 model at {str(path)!r}")
        algorithm = _detect_algorithm(path)
        steps: int | None
        if trust:
            loaded = load_model(path)
            kind, activation, state = _actor_from_model(loaded, where)
            steps = int(getattr(loaded, "num_timesteps", 0))
        else:
            kind, activation, state, data = _actor_from_zip(path, where)
            steps = data.get("num_timesteps") if isinstance(data.get("num_timesteps"), int) else None
        source = path.name
    else:
        where = f"SB3 model {type(model).__name__}"
        kind, activation, state = _actor_from_model(model, where)
        algorithm, steps, source = type(model).__name__, int(getattr(model, "num_timesteps", 0)), "memory"
    layers = _layers(kind, state, where)
    agent = raw.possible_agents[0]
    env_sizes = (int(raw.observation_space(agent)["observation"].shape[0]), int(raw.action_space(agent).n))
    sizes = (layers[0][0].shape[0], layers[-1][0].shape[1])
    if sizes != env_sizes:
        raise ValueError(
            f"{where} has observations of size {sizes[0]} and {sizes[1]} actions, but {raw.metadata['name']} with "
            f"{raw.num_players} players has {env_sizes[0]} and {env_sizes[1]}: another game or player count?"
        )
    record = {
        "source": source,
        "algorithm": algorithm,
        "timesteps": steps,
        "exported": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "tableenvs": __version__,
        **dict(meta or {}),
    }
    return save_for_env(out_npz, raw, weights=layers, activation=activation, meta=record)
