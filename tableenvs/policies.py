"""Policies: anything that picks a legal action from an observation.

Where you are: shared plumbing used by the CLI, the tournaments and the single-agent wrappers.
A policy sees exactly what its seat's agent sees (the observation vector and the action mask), never
the env's hidden state, so heuristics cannot cheat.

* :class:`Policy` — the protocol: ``act(observation, action_mask, rng) -> int``.
* :class:`RandomPolicy` — uniform over the legal actions.
* :func:`make_policy` — a policy from a name (``"random"``, ``"heuristic"``) for a given env.
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol, runtime_checkable

import numpy as np

from tableenvs.registry import spec as game_spec


@runtime_checkable
class Policy(Protocol):
    """Chooses an action id for the agent to act.

    ``observation`` is the agent's ``observe(agent)["observation"]`` vector, ``action_mask`` the matching
    int8 mask (1 = legal); ``rng`` is the caller's generator, the only source of randomness allowed.
    The returned id must be legal.
    """

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int: ...


class RandomPolicy:
    """Uniformly random legal action."""

    name = "random"

    def __init__(self, env: Any = None):
        del env  # accepted so every built-in policy is constructed the same way

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("RandomPolicy.act: the action mask has no legal action")
        return int(legal[rng.integers(legal.size)])


BUILTIN_POLICIES = ("random", "heuristic")


def make_policy(name: str, env: Any) -> Policy:
    """A built-in policy for ``env`` (a raw or wrapped tableenvs env): ``"random"`` or ``"heuristic"``."""
    raw = env.unwrapped
    if name == "random":
        return RandomPolicy(raw)
    if name == "heuristic":
        game = game_spec(raw.metadata["name"])
        if game.heuristic is None:
            raise ValueError(f"{game.name} has no heuristic policy; use 'random'")
        module, cls = game.heuristic.split(":")
        return getattr(importlib.import_module(module), cls)(raw)
    raise ValueError(f"unknown policy {name!r}; built-in policies: {', '.join(BUILTIN_POLICIES)}")
