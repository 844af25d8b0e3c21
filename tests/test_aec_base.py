"""The shared AEC base class, exercised through a toy game (Nim) so no real game is needed."""

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from tableenvs.core.actions import IllegalActionError, InvalidActionError
from tableenvs.core.wrappers import wrap
from tableenvs.toy_game import NimEnv


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_api_test_passes(num_players):
    api_test(wrap(NimEnv(num_players=num_players)), num_cycles=200)


def test_seed_test_passes():
    seed_test(lambda: wrap(NimEnv(num_players=3)), num_cycles=100)


def test_same_seed_same_first_player_and_different_seeds_differ():
    firsts = set()
    for seed in range(20):
        a, b = NimEnv(num_players=4), NimEnv(num_players=4)
        a.reset(seed=seed)
        b.reset(seed=seed)
        assert a.agent_selection == b.agent_selection
        firsts.add(a.agent_selection)
    assert len(firsts) > 1


def test_mask_only_for_the_agent_to_act():
    env = NimEnv(num_players=3)
    env.reset(seed=1)
    for agent in env.agents:
        mask = env.observe(agent)["action_mask"]
        assert mask.dtype == np.int8
        assert mask.any() == (agent == env.agent_selection)


def test_illegal_action_on_raw_env_raises_with_legal_list():
    env = NimEnv(num_players=2, pile=2)
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match=r"illegal action 2 \(take 3\).*legal: 0 \(take 1\), 1 \(take 2\)"):
        env.step(2)
    with pytest.raises(IllegalActionError, match="out of range"):
        env.step(7)
    with pytest.raises(IllegalActionError, match="integer id"):
        env.step("x")


def test_illegal_action_on_wrapped_env_ends_game_with_minus_one():
    env = wrap(NimEnv(num_players=2, pile=2))
    env.reset(seed=0)
    mover = env.agent_selection
    env.step(2)
    assert all(env.terminations.values())
    assert env.rewards[mover] == -1


def test_rewards_and_dead_steps_after_the_end():
    env = NimEnv(num_players=3, pile=1)
    env.reset(seed=3)
    loser = env.agent_selection
    env.step(0)
    assert all(env.terminations.values())
    totals = {}
    for agent in env.agent_iter():
        _, reward, terminated, _, _ = env.last()
        assert terminated
        totals[agent] = reward
        env.step(None)
    assert totals[loser] == -1.0
    assert sum(totals.values()) == pytest.approx(0.0)
    assert env.agents == []


def test_reset_options_are_used_and_unknown_ones_warned():
    env = NimEnv()
    env.reset(seed=0, options={"pile": 2})
    assert env.observe(env.agent_selection)["observation"][0] == 2
    with pytest.warns(UserWarning, match="ignoring unknown reset option.*'colour'.*known options: pile"):
        env.reset(seed=0, options={"colour": "red"})


def test_bad_constructor_values_name_the_option():
    with pytest.raises(ValueError, match=r"num_players must be in 2\.\.4, got 9"):
        NimEnv(num_players=9)
    with pytest.raises(ValueError, match="render_mode must be one of"):
        NimEnv(render_mode="rgb")


def test_render_modes():
    env = NimEnv(render_mode="ansi")
    env.reset(seed=0)
    assert env.render().startswith("pile 10")
    env = NimEnv()
    env.reset(seed=0)
    assert env.render() is None


def test_action_masks_method_matches_observation_mask():
    env = NimEnv(pile=2)
    env.reset(seed=0)
    assert env.action_masks().tolist() == [True, True, False]
    assert env.legal_actions() == [0, 1]


def test_wrapped_env_is_pettingzoo_classic_stack():
    from pettingzoo.utils import wrappers

    env = wrap(NimEnv())
    assert isinstance(env, wrappers.OrderEnforcingWrapper)
    assert isinstance(env.env, wrappers.AssertOutOfBoundsWrapper)
    assert isinstance(env.env.env, wrappers.TerminateIllegalWrapper)


def test_wrapped_env_refuses_state_before_reset_and_out_of_bounds_actions():
    env = wrap(NimEnv())
    for name in ("agents", "agent_selection", "rewards", "terminations", "truncations", "infos"):
        with pytest.raises(AttributeError, match=f"{name} cannot be accessed before reset"):
            getattr(env, name)
    assert env.possible_agents == ["player_0", "player_1"]
    env.reset(seed=0)
    # a clear InvalidActionError (as on the raw env), no longer PettingZoo's bare AssertionError
    with pytest.raises(InvalidActionError, match="not in action space"):
        env.step(3)
    with pytest.raises(InvalidActionError, match="not in action space"):
        env.step(-1)


def test_wrapped_env_state_tracks_the_raw_env():
    env = wrap(NimEnv(num_players=3, pile=1))
    env.reset(seed=5)
    raw = env.unwrapped
    assert env.agent_selection == raw.agent_selection
    env.step(np.int64(0))  # numpy integers take the checked path and are accepted
    assert env.terminations is raw.terminations and all(env.terminations.values())
    assert env.rewards == raw.rewards and env._cumulative_rewards == raw._cumulative_rewards
