"""Batched games: ``tableenvs.vector.make(name, num_envs, **options)``, many games of one kind stepped at once by a
compiled engine that plays exactly the AEC env's game.

Where you are: the front door of the batched engines (no game is named here). A game has one when its spec says
so (``GameSpec.batched``, ``"module:factory"``, imported on first use); :class:`BatchedGame` is the contract every
engine keeps. Example::

    import numpy as np
    import tableenvs.vector

    games = tableenvs.vector.make("llama_party_v0", 1024, num_players=4)
    obs, mask = games.reset(seed=0)                    # env i plays the game of make_raw(...).reset(seed=i)
    actions = np.array([np.flatnonzero(m)[0] for m in mask])
    obs, mask, rewards, terminated, truncated = games.step(actions)
"""

from __future__ import annotations

import importlib
from typing import Any

from tableenvs.core.registry import check_option_names, names, spec
from tableenvs.core.validation import check_at_least
from tableenvs.vector.contract import BatchedGame, BatchedPolicy

__all__ = ["BatchedGame", "BatchedPolicy", "batched_heuristic", "batched_names", "batched_policy", "make"]

#: Options every batched engine takes besides the game's own.
ENGINE_OPTIONS = ("trusted",)


def batched_names() -> list[str]:
    """The registered games that have a batched engine, sorted."""
    return [name for name in names() if spec(name).batched is not None]


def make(name: str, num_envs: int, **options: Any) -> BatchedGame:
    """``num_envs`` games of ``name`` (with the AEC env's ``options``) as one :class:`BatchedGame`.

    ``trusted=True`` skips the legality check of every action (for callers that pick from the mask). An option the
    batched engine does not support is refused with a one-line ``ValueError``; a game without a batched engine too.
    """
    game = spec(name)
    if game.batched is None:
        have = ", ".join(batched_names()) or "none"
        raise ValueError(
            f"{name} has no batched engine (its GameSpec names none in 'batched'); games that have one: {have}"
        )
    num_envs = check_at_least("num_envs", num_envs, 1)
    check_option_names(game, options, ENGINE_OPTIONS)
    module, _, factory = game.batched.partition(":")
    return getattr(importlib.import_module(module), factory)(num_envs=num_envs, **options)


def batched_heuristic(games: BatchedGame) -> BatchedPolicy:
    """The game's heuristic for a whole batch of ``games`` (a :class:`BatchedGame` from :func:`make`): the same
    choice as the game's Python heuristic for every row. A game whose spec names none (``GameSpec.batched_heuristic``)
    is a one-line ``ValueError`` naming the games that have one."""
    from tableenvs.vector.players import batched_heuristic as heuristic

    return heuristic(games)


def batched_policy(spec: Any, games: BatchedGame, **kwargs: Any) -> BatchedPolicy:
    """The player of policy ``spec`` (``"random"``, ``"heuristic"``, ``"trained"``, a ``.npz`` path) for the rows of
    ``games``, or a one-line ``ValueError`` naming why it cannot be batched: see
    :func:`tableenvs.vector.players.batched_policy` (``env=``, ``deterministic=``, ``seed=``)."""
    from tableenvs.vector.players import batched_policy as make_player

    return make_player(spec, games, **kwargs)
