"""The two action errors and the one action check that raw, wrapped and single-agent envs share.

Where you are: :mod:`tableenvs.core`, the shared base under every game. :class:`IllegalActionError` is an action the
current mask forbids (raised by a raw env; the wrapped env of :func:`tableenvs.make` ends the game with -1 to the
mover instead, as PettingZoo classic does); :class:`InvalidActionError`, a subclass, is a value that is no action id
at all (raised by every env alike, from :func:`check_action`).
"""

from __future__ import annotations

from typing import Any

import numpy as np


class IllegalActionError(ValueError):
    """An action outside the current agent's mask was given to an unwrapped env."""


class InvalidActionError(IllegalActionError, TypeError):
    """An action that is not an integer id of the action space (a str, float, bool, out of range, ...).

    Raised the same way by raw, wrapped (:func:`tableenvs.make`) and single-agent envs. Only Python ``int`` and
    numpy integers (``bool`` excluded; 0-d integer arrays included) are action ids; ``None`` only for the dead step
    after the game ends.
    A subclass of :class:`IllegalActionError` (so of ``ValueError``) and of ``TypeError``.
    """


def check_action(action: Any, num_actions: int, env_name: str) -> int:
    """``action`` as an ``int`` if it is an integer id in ``0..num_actions-1``; else :class:`InvalidActionError`.

    Nothing is converted: ``"3"``, ``3.7``, ``3.0``, ``True``, ``Decimal(3)`` and ``np.float64(3)`` are refused.
    A 0-d integer array (``np.array(3)``, what Stable-Baselines3's ``model.predict`` returns for one observation)
    counts as a numpy integer, as in Gymnasium's ``Discrete.contains``.
    """
    is_integer_array = isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer)
    if (isinstance(action, (int, np.integer)) and not isinstance(action, bool)) or is_integer_array:
        action_id = int(action)
        if 0 <= action_id < num_actions:
            return action_id
        problem = "is out of range"
    elif action is None:
        problem = "is only for the dead step after the game has ended"
    else:
        problem = "is not an integer"
    raise InvalidActionError(
        f"{env_name}: action {action!r} ({type(action).__name__}) {problem}; not in action space: "
        f"an action is an int or numpy integer id in 0..{num_actions - 1}"
    )
