"""One step of a rollout in a sampled world, shared by the flat search (:mod:`tableenvs.policies.search`) and IS-MCTS
(:mod:`tableenvs.policies.ismcts`).

Where you are: search plumbing below both searches (it imports neither). A rollout plays the rollout policy from
a position of a world (:meth:`tableenvs.core.table_env.TableEnv.sample_world`) until the scoring period ends (a reward
is paid or the game ends) or a depth or turn budget is spent; these two functions are its one step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tableenvs.core.table_env import TableEnv


def checks_actions(policy: Any, in_world: Any) -> bool:
    """Whether a rollout must check the actions of ``policy``: those of a policy's ``act`` (any object with one may be
    passed), not those of the uniform choice among the legal actions or of a heuristic's ``act_in_world``, which
    read the world's own legal moves (``tests/test_act_in_world.py``)."""
    return policy is not None and in_world is None


def rollout_action(world: TableEnv, policy: Any, in_world: Any, rng: np.random.Generator) -> int:
    """The rollout policy's action for the seat to act in ``world``: uniformly random without a ``policy``, through
    its ``act_in_world`` (``in_world``) when it has one, so that no observation is encoded, else its ``act``."""
    if policy is None:
        legal = world.legal_actions()
        return legal[int(rng.integers(len(legal)))]
    if in_world is not None:
        return in_world(world, rng)
    seen = world.observe(world.agent_selection)
    return policy.act(seen["observation"], seen["action_mask"], rng)


def advance(
    world: TableEnv, action: int, agent: str, turns_left: int | None, checked: bool = False
) -> tuple[float, bool, int | None]:
    """Play ``action`` in ``world``: (``agent``'s reward for it, whether the scoring period or the game ended, the
    turns left: one fewer when the seat to act changed, 0 once the budget is spent, None for no budget).

    ``action`` is legal in ``world`` (a root or tree action the world's mask allows, or a rollout action of a policy
    that :func:`checks_actions` trusts) and is played by :meth:`~tableenvs.core.aec_base.AECBase.step_trusted`,
    unless ``checked``: then by ``step``, which refuses an illegal one."""
    acting = world.agent_selection
    if checked:
        world.step(action)
    else:
        world.step_trusted(action)
    rewards = world.rewards
    following = world.agent_selection
    ended = bool(world.terminations[following] or world.truncations[following] or any(rewards.values()))
    if turns_left is not None and not ended and following != acting:
        turns_left -= 1
    return rewards[agent], ended, turns_left
