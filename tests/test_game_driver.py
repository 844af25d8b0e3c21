"""The one game driver, ``tableenvs.policies.play_game``, and its per-step hook."""

from __future__ import annotations

import numpy as np
import pytest

import tableenvs
from tableenvs.policies import make_policy, play_game
from tableenvs.testing import games


@pytest.mark.parametrize("name", games("builtin"))
def test_the_hook_sees_every_decision_before_its_step_and_changes_nothing(name):
    env = tableenvs.make_raw(name)
    seats = [make_policy("random", env)] * env.num_players
    plain = play_game(env, seats, seed=4, rng=np.random.default_rng(4))
    plain_log = list(env.event_log)

    seen = []

    def on_step(raw, agent, observation, action):
        assert raw is env and agent == env.agent_selection
        assert np.array_equal(observation["action_mask"], env.observe(agent)["action_mask"])
        assert observation["action_mask"][action] == 1
        seen.append((agent, env.describe_action(action)))

    hooked = play_game(env, seats, seed=4, rng=np.random.default_rng(4), on_step=on_step)
    assert np.array_equal(hooked[0], plain[0]) and hooked[1] == plain[1] == len(seen)
    assert env.event_log == plain_log


def test_an_exception_in_the_hook_stops_the_game_there():
    env = tableenvs.make_raw("llama_party_v0")

    class Stop(Exception):
        pass

    def on_step(raw, agent, observation, action):
        if len(raw.event_log) > 3:
            raise Stop

    with pytest.raises(Stop):
        play_game(
            env, [make_policy("random", env)] * env.num_players, seed=0, rng=np.random.default_rng(0), on_step=on_step
        )
    assert env.outcome() is None  # the game was left where the hook stopped it
