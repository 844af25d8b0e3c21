"""Shared helpers of the bad-input tests: one assertion for "this raises that type, naming these words"."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pytest

from tableenvs.testing import games

#: The package's games (the toy games other test modules register declare nothing, so they are left out).
GAMES = tuple(games("builtin"))


def assert_clear_error(error_type: type[BaseException], names: Iterable[str], call: Callable[[], Any]) -> str:
    """``call()`` raises ``error_type`` whose message contains every one of ``names``; returns the message."""
    with pytest.raises(error_type) as caught:
        call()
    message = str(caught.value)
    missing = [name for name in names if name not in message]
    assert not missing, f"{type(caught.value).__name__} message {message!r} does not name {missing}"
    return message


def play_steps(env: Any, steps: int, seed: int = 0) -> None:
    """Play ``steps`` random legal moves on a reset raw or wrapped env (fewer if the game ends)."""
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            return
        env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))
