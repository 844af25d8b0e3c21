"""A small masked actor-critic network and its torch-only policy file (``.pt``), playable without Ray.

Where you are: shared plumbing for the RLlib path (:mod:`tableenvs.training.rllib` trains this network inside an RLlib
module) and for evaluation (:func:`tableenvs.policies.make_policy` plays a ``.pt`` file). Only torch is needed;
``import tableenvs`` imports nothing from here, and torch is imported when a network is built or loaded.

* :func:`build_network` — the network: two MLPs (``pi``: observation -> one logit per action; ``vf``:
  observation -> value), ReLU between hidden layers; :func:`masked_logits` sets illegal actions' logits to the
  float32 minimum so they are never sampled.
* :func:`save_policy` / :func:`load_policy` — a ``.pt`` file: ``torch.save`` of a plain dict (format name and
  version, game name, game options, hidden sizes, observation size, action count, the network's ``state_dict``),
  read back with ``torch.load(weights_only=True)`` (no pickled code runs on load).
* :class:`TorchPolicy` — a loaded file as a tableenvs :class:`~tableenvs.policies.Policy`: the most likely legal
  action, or a sample from the masked distribution drawn with the caller's ``rng`` (:class:`MaskedLogitsPolicy`,
  shared with :class:`tableenvs.policies.sb3_policy.SB3Policy`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tableenvs.paths import atomic_output

#: What a policy file says it is (checked on load).
FORMAT = "tableenvs-torch-policy"
VERSION = 1
#: Hidden layer sizes of the network when none are given.
DEFAULT_HIDDEN = (128, 128)


def set_torch_threads(torch_threads: int | None) -> None:
    """torch's intra-op threads for this process (a policy's ``torch_threads``); None leaves torch's setting."""
    if torch_threads is None:
        return
    if isinstance(torch_threads, bool) or not isinstance(torch_threads, int) or torch_threads < 1:
        raise ValueError(f"torch_threads must be None or an integer >= 1, got {torch_threads!r}")
    import torch

    torch.set_num_threads(torch_threads)


class MaskedLogitsPolicy:
    """What the network policies share: a subclass gives ``_logits(observation)`` (float64, one per action id) and
    sets ``deterministic``; :meth:`act` picks the most likely legal action, or samples the distribution restricted
    to the legal ones with the caller's ``rng`` (so games stay reproducible; torch's generator is never used)."""

    deterministic: bool

    def _logits(self, observation: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def action_probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The distribution over actions, restricted to the legal ones and renormalised."""
        legal = np.asarray(action_mask).astype(bool)
        if not legal.any():
            raise ValueError(f"{type(self).__name__}: the action mask has no legal action")
        logits = np.where(legal, self._logits(observation), -np.inf)
        probabilities = np.exp(logits - logits[legal].max())
        return probabilities / probabilities.sum()

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        probabilities = self.action_probabilities(observation, action_mask)
        if self.deterministic:
            return int(np.argmax(probabilities))
        return int(rng.choice(probabilities.size, p=probabilities))


def _mlp(sizes: Sequence[int]) -> Any:
    from torch import nn

    layers: list[Any] = []
    for index in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[index], sizes[index + 1]))
        if index < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def build_network(observation_size: int, num_actions: int, hidden: Sequence[int] = DEFAULT_HIDDEN) -> Any:
    """A ``torch.nn.Module`` with ``pi`` (``observation_size`` -> ``num_actions`` logits) and ``vf`` (-> 1 value)."""
    from torch import nn

    hidden = [int(size) for size in hidden]
    if not hidden or any(size < 1 for size in hidden):
        raise ValueError(f"hidden must list one or more layer sizes >= 1, got {hidden!r}")
    network = nn.Module()
    network.pi = _mlp([observation_size, *hidden, num_actions])
    network.vf = _mlp([observation_size, *hidden, 1])
    return network


def masked_logits(network: Any, observations: Any, action_mask: Any) -> Any:
    """``network.pi``'s logits with every action whose mask entry is <= 0 set to the float32 minimum."""
    import torch

    logits = network.pi(observations)
    return torch.where(action_mask > 0, logits, torch.finfo(logits.dtype).min)


def save_policy(network: Any, path: str | Path, *, env: str, options: Mapping[str, Any], hidden: Sequence[int]) -> Path:
    """Write ``network`` (from :func:`build_network`) as a policy file for game ``env`` with ``options``."""
    import torch

    first = network.pi[0]
    record = {
        "format": FORMAT,
        "version": VERSION,
        "env": env,
        "options": dict(options),
        "hidden": [int(size) for size in hidden],
        "observation_size": int(first.in_features),
        "num_actions": int(network.pi[-1].out_features),
        "state_dict": {key: value.detach().cpu().clone() for key, value in network.state_dict().items()},
    }
    path = Path(path)
    with atomic_output(path, "wb") as handle:
        torch.save(record, handle)
    return path


def load_policy(path: str | Path) -> tuple[Any, dict[str, Any]]:
    """``(network in eval mode, the file's record without the weights)``; a clear ``ValueError`` for another file."""
    import torch

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no policy file at {str(path)!r}")
    try:
        record = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # noqa: BLE001 - any unreadable file means the same thing here
        raise ValueError(f"{str(path)!r} is not a tableenvs policy file ({type(error).__name__})") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise ValueError(f"{str(path)!r} is not a tableenvs policy file (saved by tableenvs.policies.torch_policy)")
    if record.get("version") != VERSION:
        raise ValueError(f"{str(path)!r} has policy file version {record.get('version')!r}; this reads {VERSION}")
    network = build_network(record["observation_size"], record["num_actions"], record["hidden"])
    network.load_state_dict(record["state_dict"])
    network.eval()
    return network, {key: value for key, value in record.items() if key != "state_dict"}


class TorchPolicy(MaskedLogitsPolicy):
    """A policy file (or a network from :func:`build_network`) as a tableenvs policy.

    ``env`` (optional, a tableenvs env) is checked against the file: the same game and the same observation and
    action sizes, so a policy of another game or player count fails at once with a clear message.
    ``torch_threads`` as in :class:`tableenvs.policies.sb3_policy.SB3Policy` (default 1; None leaves torch's setting).
    """

    def __init__(self, policy: Any, env: Any = None, *, deterministic: bool = True, torch_threads: int | None = 1):
        import torch

        set_torch_threads(torch_threads)
        self._torch = torch
        if isinstance(policy, (str, Path)):
            self.name = Path(policy).name
            self.network, record = load_policy(policy)
        else:
            self.name, self.network, record = "torch_policy", policy, None
        self.deterministic = bool(deterministic)
        if env is not None:
            self._check_env(env.unwrapped, record)

    def _check_env(self, raw: Any, record: dict[str, Any] | None) -> None:
        name = raw.metadata["name"]
        if record is not None and record["env"] != name:
            raise ValueError(f"policy {self.name!r} was trained on {record['env']}, not {name}")
        agent = raw.possible_agents[0]
        env_sizes = (int(raw.observation_space(agent)["observation"].shape[0]), int(raw.action_space(agent).n))
        sizes = (int(self.network.pi[0].in_features), int(self.network.pi[-1].out_features))
        if sizes != env_sizes:
            raise ValueError(
                f"policy {self.name!r} expects observations of size {sizes[0]} and {sizes[1]} actions, but {name} "
                f"with {raw.num_players} players has {env_sizes[0]} and {env_sizes[1]}: another player count?"
            )

    def _logits(self, observation: np.ndarray) -> np.ndarray:
        with self._torch.no_grad():
            logits = self.network.pi(self._torch.as_tensor(np.asarray(observation, dtype=np.float32)[None]))[0]
        return logits.numpy().astype(np.float64)
