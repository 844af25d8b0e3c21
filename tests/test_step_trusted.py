"""``step_trusted`` (search rollouts) plays the same game as ``step``: same observations, masks,
rewards, terminations and next agents, with nothing written to the event log; and the rollouts of a policy whose
actions are not read from the world's legal moves still go through the checked ``step``."""

from __future__ import annotations

import numpy as np
import pytest

import tableenvs
from tableenvs.policies.rollouts import advance, checks_actions
from tableenvs.testing import games


@pytest.mark.parametrize("name", games("builtin"))
def test_a_trusted_game_is_the_checked_game(name):
    for seed in range(3):
        checked, trusted = tableenvs.make_raw(name), tableenvs.make_raw(name)
        checked.reset(seed=seed)
        trusted.reset(seed=seed)
        logged = len(trusted.event_log)
        rng = np.random.default_rng(seed)
        for _ in range(10_000):
            agent = checked.agent_selection
            assert trusted.agent_selection == agent
            if checked.terminations[agent] or checked.truncations[agent]:
                break
            for who in checked.possible_agents:
                a, b = checked.observe(who), trusted.observe(who)
                assert a["observation"].tobytes() == b["observation"].tobytes()
                assert a["action_mask"].tobytes() == b["action_mask"].tobytes()
            action = int(rng.choice(checked.legal_actions()))
            checked.step(action)
            trusted.step_trusted(action)
            assert checked.rewards == trusted.rewards
            assert checked._cumulative_rewards == trusted._cumulative_rewards
            assert (checked.terminations, checked.truncations) == (trusted.terminations, trusted.truncations)
        else:
            raise AssertionError("the game did not end in 10,000 random moves")
        assert checked.outcome() == trusted.outcome()
        # only what the engine itself logs (round results), never the moves' own lines
        assert len(trusted.event_log) - logged < len(checked.event_log) - logged


def test_only_policies_reading_the_worlds_legal_moves_are_trusted():
    class Policy:
        def act(self, observation, mask, rng):
            return 0

    assert checks_actions(Policy(), None)
    assert not checks_actions(Policy(), lambda world, rng: 0)  # a heuristic's act_in_world
    assert not checks_actions(None, None)  # the uniform choice among the legal actions


def test_a_checked_rollout_step_refuses_an_illegal_action():
    env = tableenvs.make_raw("llama_party_v0")
    env.reset(seed=0)
    illegal = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0])
    with pytest.raises(tableenvs.core.actions.IllegalActionError):
        advance(env, illegal, env.agent_selection, None, checked=True)
