"""PettingZoo-classic habits: ``from tableenvs import pilipili_v0; pilipili_v0.env()``.

Where you are: shared plumbing behind the three modules ``tableenvs/pilipili_v0.py``, ``llama_party_v0.py`` and
``rummikub_v0.py``, which give each game the shape of a PettingZoo classic module (``env()`` the wrapped env,
``raw_env`` the unwrapped class). Adding a game: write its ``<name>.py`` like those three (two lines).

PettingZoo's ``api_test`` exempts its own classic envs *by name* from two warnings that the classic observation
convention (a ``Dict`` of ``"observation"`` and ``"action_mask"``) always triggers: "Observation is not a NumPy
array" and "Observation space ... should be gymnasium.spaces.box or gymnasium.spaces.discrete" (its lists
``env_obs_dicts`` and ``env_obs_space`` in ``pettingzoo/test/api_test.py``). Our envs follow that convention on
purpose (MaskablePPO reads the mask from it), so :func:`classic_module` adds their names to exactly those two lists
and no other; every other check of ``api_test`` applies to them unchanged. It imports ``pettingzoo.test.api_test``
(and pytest with it, ~0.15 s), which is why ``import tableenvs`` alone does not do it: importing one of the game
modules does, or call :func:`declare_to_api_test` yourself.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from tableenvs.core.registry import spec


def declare_to_api_test(name: str) -> None:
    """Tell PettingZoo's ``api_test`` that env ``name`` uses the classic ``Dict`` observation (see the module)."""
    spec(name)  # ValueError listing the valid names for an unknown one
    api_test = importlib.import_module("pettingzoo.test.api_test")  # the module (the package exports the function)
    for allowed in (api_test.env_obs_dicts, api_test.env_obs_space):
        if name not in allowed:
            allowed.append(name)


def classic_module(name: str) -> tuple[Callable[..., Any], type]:
    """``(env, raw_env)`` of the registered game ``name``, declared to ``api_test``."""
    module = importlib.import_module(spec(name).module)
    declare_to_api_test(name)
    return module.env, module.raw_env
