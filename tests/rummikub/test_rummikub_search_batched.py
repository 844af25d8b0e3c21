"""``search:batched=1`` in Rummikub: its rollouts, run in the batched engine from loaded worlds, are the flat search's
Python rollouts (the same value, world by world and action by action, as ``SearchPolicy._simulate`` with the Python
heuristic in the same sampled world), and the policy is legal, reproducible and leaves the env as it was. Budgets are
tiny: behaviour, not strength."""

from __future__ import annotations

import numpy as np
import pytest

import tableenvs
from tableenvs.policies import make_policy
from tableenvs.policies.batched_search import BatchedRollouts
from tests.vector_differential import paired_rollout_values

NAME = "rummikub_v0"


def position(env, seed: int, steps: int) -> None:
    """Reset ``env`` with ``seed`` and play ``steps`` heuristic moves, then on to a decision with a choice."""
    env.reset(seed=seed)
    heuristic = make_policy("heuristic", env)
    rng = np.random.default_rng(seed)
    played = 0
    while not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
        seen = env.observe(env.agent_selection)
        if played >= steps and int(seen["action_mask"].sum()) > 1:
            return
        env.step(int(heuristic.act(seen["observation"], seen["action_mask"], rng)))
        played += 1
    raise AssertionError("the game ended before a decision with a choice")


@pytest.mark.parametrize(("num_players", "seed", "steps"), [(2, 0, 0), (2, 1, 40), (3, 2, 25), (4, 3, 60)])
def test_batched_rollouts_are_the_flat_search_rollouts_world_by_world(num_players, seed, steps):
    env = tableenvs.make_raw(NAME, num_players=num_players)
    flat = make_policy("search:sims=8:root=paired", env)
    position(env, seed, steps)
    agent = env.agent_selection
    legal = env.legal_actions()
    worlds = 2
    rollouts = BatchedRollouts(env, "heuristic", depth=400)
    values = rollouts.values(env, agent, legal, np.random.default_rng(seed), worlds, np.inf)
    assert values.shape == (worlds, len(legal))
    expected = paired_rollout_values(env, legal, np.random.default_rng(seed), worlds, flat, seeded=False)
    assert np.array_equal(values, expected)
    assert values.std() > 0  # real game results that differ by world and action, not a constant


def test_batched_search_is_legal_reproducible_and_leaves_the_env_alone():
    env = tableenvs.make_raw(NAME, num_players=2)
    policy = make_policy("search:batched=1:sims=8:z=1", env)
    position(env, 5, 10)
    seen = env.observe(env.agent_selection)
    before = env.get_state()
    actions = {policy.act(seen["observation"], seen["action_mask"], np.random.default_rng(4)) for _ in range(2)}
    assert len(actions) == 1 and seen["action_mask"][actions.pop()] == 1
    assert env.get_state() == before
