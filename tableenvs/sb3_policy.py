"""A saved Stable-Baselines3 model as a tableenvs :class:`~tableenvs.policies.Policy`.

Where you are: shared plumbing for training (needs the ``train`` extra: torch, stable-baselines3, sb3-contrib).
Nothing here is imported by ``import tableenvs``; torch is imported only when a model is loaded.

:class:`SB3Policy` loads a ``.zip`` saved by ``model.save(...)`` (``MaskablePPO``, ``PPO`` or ``A2C``: any
actor-critic policy with a categorical action distribution; or ``DQN``, whose Q-values stand in for the logits)
or wraps a model already in memory, and picks an
action from the policy's action logits restricted to the legal actions: the most likely legal action
(``deterministic=True``) or a sample from the masked distribution drawn with the caller's ``rng`` (so games
stay reproducible; torch's global generator is never used).
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from tableenvs.torch_policy import MaskedLogitsPolicy, set_torch_threads

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
