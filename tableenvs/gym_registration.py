"""Gymnasium ids for the single-agent view of every tableenvs game.

Where you are: shared training plumbing, run by ``import tableenvs``. Each game in the registry gets the
Gymnasium id of its :class:`~tableenvs.registry.GameSpec` (``registry_id``, e.g. ``tableenvs/PiliPili-v0``),
whose entry point is :class:`tableenvs.single_agent.SingleAgentEnv`. Gymnasium imports entry points only
when an env is made, so registering never imports a game module (a game still being written cannot break
``import tableenvs``)::

    import gymnasium, tableenvs
    env = gymnasium.make("tableenvs/PiliPili-v0", num_players=4, opponents="heuristic", seat="rotate")

Every keyword passes through: ``opponents`` and ``seat`` to the wrapper, the rest to the game. In a fresh
process (e.g. a ``SubprocVecEnv`` worker) use ``"tableenvs:tableenvs/PiliPili-v0"`` so Gymnasium imports
tableenvs first. A game registered later with :func:`tableenvs.register_game` gets its id from
:func:`register`.
"""

from __future__ import annotations

import gymnasium

from tableenvs.registry import names, spec

ENTRY_POINT = "tableenvs.single_agent:SingleAgentEnv"


def register(name: str) -> str:
    """Register the Gymnasium id of tableenvs game ``name`` (once; again is a no-op) and return the id."""
    game = spec(name)
    if game.registry_id not in gymnasium.registry:
        gymnasium.register(id=game.registry_id, entry_point=ENTRY_POINT, kwargs={"game": game.name})
    return game.registry_id


def register_all() -> list[str]:
    """Register every game of the tableenvs registry; the Gymnasium ids."""
    return [register(name) for name in names()]
