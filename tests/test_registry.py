"""Making environments by name: tableenvs' registry, PettingZoo's registry, and the errors for bad names."""

import numpy as np
import pettingzoo
import pytest

import tableenvs
from tableenvs.core.registry import GameSpec
from tableenvs.core.table_env import TableEnv
from tableenvs.policies import RandomPolicy, make_policy

TOY = GameSpec("nim_v0", "tableenvs.toy_game", "tableenvs/NimTest-v0", picture=True)
tableenvs.register_game(TOY)


def test_make_returns_wrapped_env_and_make_raw_the_raw_one():
    env = tableenvs.make("nim_v0", num_players=3)
    assert isinstance(env.unwrapped, TableEnv)
    assert not isinstance(env, TableEnv)
    raw = tableenvs.make_raw("nim_v0", pile=4)
    assert isinstance(raw, TableEnv)
    assert raw.pile_size == 4


def test_names_lists_registered_games():
    assert "nim_v0" in tableenvs.names()
    assert tableenvs.names() == sorted(tableenvs.names())


def test_unknown_name_lists_the_valid_ones():
    with pytest.raises(ValueError, match=r"unknown environment 'pilipil_v0'; available: .*nim_v0"):
        tableenvs.make("pilipil_v0")


def test_unknown_option_lists_the_valid_ones():
    with pytest.raises(
        TypeError, match=r"unknown option\(s\) 'players'; valid options: num_players, pile, render_mode"
    ):
        tableenvs.make("nim_v0", players=3)


def test_bad_option_value_is_a_value_error():
    with pytest.raises(ValueError, match="num_players must be in 2..4, got 1"):
        tableenvs.make("nim_v0", num_players=1)


def test_registered_in_pettingzoo():
    env = pettingzoo.make("aec", "tableenvs/NimTest-v0", num_players=2)
    env.reset(seed=0)
    assert env.agents == ["player_0", "player_1"]


def test_registering_a_name_twice_is_refused():
    with pytest.raises(ValueError, match="already registered"):
        tableenvs.register_game(TOY)


def test_make_policy():
    env = tableenvs.make("nim_v0")
    assert isinstance(make_policy("random", env), RandomPolicy)
    with pytest.raises(ValueError, match="has no heuristic"):
        make_policy("heuristic", env)
    with pytest.raises(ValueError, match="unknown policy 'greedy'; built-in policies: random, heuristic"):
        make_policy("greedy", env)


def test_registered_in_gymnasium_as_the_single_agent_view():
    import gymnasium

    from tableenvs.training.single_agent import SingleAgentEnv

    env = gymnasium.make("tableenvs/NimTest-v0", num_players=2, opponents="random")
    assert isinstance(env.unwrapped, SingleAgentEnv)
    env.reset(seed=0)
    assert env.unwrapped.action_masks().any()


def test_play_game_plays_to_the_end_with_one_policy_per_seat():
    import numpy as np

    from tableenvs.policies import play_game

    env = tableenvs.make_raw("nim_v0", num_players=3, pile=7)
    totals, decisions = play_game(env, [RandomPolicy()] * 3, seed=4, rng=np.random.default_rng(0))
    assert all(env.terminations.values())
    assert 3 <= decisions <= 7  # 1..3 counters per decision from a pile of 7
    assert sorted(totals.tolist()) == [-1.0, 0.5, 0.5]  # the loser pays -1, the others +1/2


def _has(env, capability: str) -> bool:
    """Whether ``env`` (reset) really does what ``capability`` declares: its calls answer instead of raising
    NotImplementedError (the base class's answer for a hook the game did not write)."""
    agent = env.agents[0]
    calls = {
        "state": lambda: env.set_state(env.get_state()),
        "worlds": lambda: env.sample_world(agent, np.random.default_rng(0)),
        "views": lambda: env.render_view(agent),
        "picture": lambda: env.render_svg(agent),
    }
    try:
        calls[capability]()
    except NotImplementedError:
        return False
    return True


@pytest.mark.parametrize("name", tableenvs.names())
def test_declared_capabilities_are_what_the_game_does(name):
    """A spec that claims a capability its game lacks, or leaves out one it has (its game then tested less), fails."""
    from tableenvs import openspiel

    spec = tableenvs.spec(name)
    env = tableenvs.make_raw(name)
    env.reset(seed=0)
    for capability in ("state", "worlds", "views", "picture"):
        assert spec.declares(capability) == _has(env, capability), f"{name}: {capability}"
    assert spec.declares("openspiel") == (f"tableenvs_{name}" in openspiel.TITLES), f"{name}: openspiel"
    assert spec.declares("heuristic") == (spec.heuristic is not None)
