"""Bad policy specs and bad policy output, by table: each case names the exception type and what the message
must name (the parameter or the policy, the value, what is allowed)."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest

import tableenvs
from tableenvs.core.actions import InvalidActionError
from tableenvs.policies import CallablePolicy, make_policy, play_game
from tableenvs.training.single_agent import OpponentPool, SingleAgentEnv
from tests.bad_input.helpers_bad_input import GAMES, assert_clear_error

ENV_CASES = [
    # make_policy(spec, env) with something that is not a tableenvs env
    ("heuristic", None, ["env", "None", "tableenvs env"]),
    ("random", "pilipili_v0", ["env", "'pilipili_v0'", "tableenvs env"]),
    ("heuristic", object(), ["env", "object", "tableenvs env"]),
]


@pytest.mark.parametrize(("spec", "env", "names"), ENV_CASES)
def test_make_policy_needs_a_tableenvs_env(spec, env, names):
    assert_clear_error(TypeError, names, lambda: make_policy(spec, env))


SPEC_CASES = [
    ("greedy", ValueError, ["'greedy'", "random", "heuristic", ".zip"]),
    ("", ValueError, ["''", "random", "heuristic"]),
    (42, TypeError, ["42", "int", "'random'", "'heuristic'"]),
    (None, TypeError, ["None", "'random'", "'heuristic'"]),
    ("no/such/model.zip", FileNotFoundError, ["no/such/model.zip"]),
]


@pytest.mark.parametrize(("spec", "error", "names"), SPEC_CASES)
@pytest.mark.parametrize("game", GAMES)
def test_bad_policy_spec(game, spec, error, names):
    if spec == "no/such/model.zip":
        pytest.importorskip("stable_baselines3")
    env = tableenvs.make_raw(game)
    assert_clear_error(error, names, lambda: make_policy(spec, env))
    assert_clear_error(error, names, lambda: make_policy(spec, tableenvs.make(game)))


POOL_CASES = [
    ({"members": []}, ["OpponentPool", "member"]),
    ({"latest_prob": 1.5}, ["latest_prob", "[0, 1]", "1.5"]),
    ({"latest_prob": -0.1}, ["latest_prob", "[0, 1]", "-0.1"]),
]


@pytest.mark.parametrize(("options", "names"), POOL_CASES)
def test_bad_opponent_pool(options, names):
    assert_clear_error(ValueError, names, lambda: OpponentPool(**options))


BAD_OUTPUTS = [(3.7, "float"), ("3", "str"), (True, "bool"), (Decimal(1), "Decimal"), (np.float64(1), "float64")]


@pytest.mark.parametrize(("output", "type_name"), BAD_OUTPUTS, ids=[repr(o) for o, _ in BAD_OUTPUTS])
def test_callable_policy_returning_a_non_integer_is_refused(output, type_name):
    def returns_bad(observation, action_mask, rng):
        return output

    policy = CallablePolicy(returns_bad)
    names = ["'returns_bad'", repr(output), f"({type_name})", "0..2"]
    assert_clear_error(InvalidActionError, names, lambda: policy.act(np.zeros(2), np.ones(3, np.int8), None))


def test_callable_policy_numpy_integer_output_is_an_int():
    policy = CallablePolicy(lambda observation, action_mask, rng: np.int64(2))
    action = policy.act(np.zeros(2), np.ones(3, np.int8), None)
    assert action == 2 and type(action) is int


@pytest.mark.parametrize("game", GAMES)
def test_opponent_returning_a_float_stops_the_single_agent_env(game):
    def floaty(observation, action_mask, rng):
        return float(np.flatnonzero(action_mask)[0])  # 3.0 would have been played as 3 before

    env = SingleAgentEnv(game, num_players=2, seat=1, opponents=floaty)

    def play_until_the_opponent_acts():
        env.reset(seed=0)
        while True:
            env.step(int(np.flatnonzero(env.action_masks())[0]))

    with pytest.raises(InvalidActionError, match="floaty"):
        play_until_the_opponent_acts()
    assert_clear_error(RuntimeError, ["reset()", "InvalidActionError"], lambda: env.step(0))


@pytest.mark.parametrize("game", GAMES)
def test_play_game_with_a_bad_policy_output(game):
    env = tableenvs.make_raw(game, num_players=2)
    policies = [CallablePolicy(lambda observation, action_mask, rng: "0")] * 2
    assert_clear_error(
        InvalidActionError, ["'0'", "(str)"], lambda: play_game(env, policies, seed=0, rng=np.random.default_rng())
    )
