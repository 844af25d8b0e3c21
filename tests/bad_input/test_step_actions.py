"""Actions are checked the same way in raw, wrapped (``tableenvs.make``) and single-agent envs.

Only Python ``int`` and numpy integers are actions (0-d integer arrays too, as ``model.predict`` returns them;
``None`` only for the dead step); anything else raises
:class:`tableenvs.core.actions.InvalidActionError` (a ``ValueError`` and a ``TypeError``) naming the value, its type and
the valid range, and changes nothing. Also: a single-agent env refuses ``step()`` after any exception inside
``step()``; calls before ``reset()`` and unknown agents get clear errors.
"""

from __future__ import annotations

import copy
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import tableenvs
from tableenvs.core.actions import IllegalActionError, InvalidActionError
from tableenvs.testing import per_game
from tableenvs.training.single_agent import SingleAgentEnv
from tests.bad_input.helpers_bad_input import GAMES, assert_clear_error

NUM_ACTIONS = per_game({"pilipili_v0": 234, "llama_party_v0": 32, "rummikub_v0": 55}, "builtin")

BAD_ACTIONS = [
    ("3", "str"),
    (3.7, "float"),
    (3.0, "float"),
    (float("inf"), "float"),
    (float("nan"), "float"),
    (True, "bool"),
    (False, "bool"),
    (np.bool_(True), "bool"),
    (Decimal(3), "Decimal"),
    (Fraction(3), "Fraction"),
    (np.float64(3.0), "float64"),
    (np.array(3.0), "ndarray"),
    (np.array(True), "ndarray"),
    (np.array([3]), "ndarray"),
    ([3], "list"),
    (-1, "int"),
    (10**30, "int"),
    (np.int64(-1), "int64"),
    ("out_of_range", "int"),  # replaced by num_actions below
    (None, "NoneType"),  # None while the agent is alive
]


def _bad(action, game):
    return NUM_ACTIONS[game] if isinstance(action, str) and action == "out_of_range" else action


def _names(action, type_name, game):
    return [repr(action), f"({type_name})", f"0..{NUM_ACTIONS[game] - 1}"]


def _envs(game):
    """A raw, a wrapped and a single-agent env of ``game``, each reset and a few moves in."""
    raw = tableenvs.make_raw(game, num_players=3)
    wrapped = tableenvs.make(game, num_players=3)
    for env in (raw, wrapped):
        env.reset(seed=4)
    single = SingleAgentEnv(game, num_players=3, seat=0, opponents="random")
    single.reset(seed=4)
    return raw, wrapped, single


@pytest.mark.parametrize(("action", "type_name"), BAD_ACTIONS, ids=[repr(a) for a, _ in BAD_ACTIONS])
@pytest.mark.parametrize("game", GAMES)
def test_bad_action_is_refused_alike_everywhere(game, action, type_name):
    action = _bad(action, game)
    raw, wrapped, single = _envs(game)
    names = _names(action, type_name, game)
    for env in (raw, wrapped):
        before = copy.deepcopy(env)
        error = assert_clear_error(InvalidActionError, names, lambda env=env: env.step(action))
        assert "not in action space" in error
        agent = env.agent_selection
        assert agent == before.agent_selection  # nothing moved
        np.testing.assert_array_equal(env.observe(agent)["observation"], before.observe(agent)["observation"])
        np.testing.assert_array_equal(env.observe(agent)["action_mask"], before.observe(agent)["action_mask"])
    assert_clear_error(InvalidActionError, names, lambda: single.step(action))


def test_invalid_action_error_is_a_type_and_a_value_error():
    assert issubclass(InvalidActionError, TypeError) and issubclass(InvalidActionError, ValueError)
    assert issubclass(InvalidActionError, IllegalActionError)  # what the raw env raised for these before


@pytest.mark.parametrize("kind", [int, np.int64, np.int32, np.uint8, np.array], ids=lambda k: k.__name__)
@pytest.mark.parametrize("game", GAMES)
def test_python_and_numpy_integers_play_the_same_move(game, kind):
    raw, wrapped, single = _envs(game)
    for env in (raw, wrapped):
        reference = copy.deepcopy(env)
        legal = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])
        env.step(kind(legal))
        reference.step(legal)
        assert env.agent_selection == reference.agent_selection
        assert env.unwrapped.event_log == reference.unwrapped.event_log
    single.step(kind(np.flatnonzero(single.action_masks())[0]))


@pytest.mark.parametrize("game", GAMES)
def test_in_range_illegal_integer_raises_on_raw_and_ends_the_wrapped_game(game):
    raw, wrapped, _ = _envs(game)
    illegal = int(np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError) as caught:
        raw.step(illegal)
    assert not isinstance(caught.value, InvalidActionError)
    mover = wrapped.agent_selection
    wrapped.step(np.int64(illegal))  # PettingZoo classic: the game ends, -1 to the mover
    assert all(wrapped.terminations.values())
    assert wrapped.rewards[mover] == -1.0


@pytest.mark.parametrize("game", GAMES)
def test_dead_step_takes_none_only(game):
    env = tableenvs.make_raw(game, num_players=3)
    env.reset(seed=0)
    env.terminations = dict.fromkeys(env.agents, True)  # as at the end of a game
    with pytest.raises(ValueError, match="only valid action is None"):
        env.step(0)
    env.step(None)


# ---------------------------------------------------------------- single-agent env after an exception in step()


class _FailsOnCall:
    """An opponent that plays its first legal move, and raises on its ``fail_on``-th call."""

    def __init__(self, fail_on: int):
        self.calls = 0
        self.fail_on = fail_on

    def act(self, observation, action_mask, rng):
        self.calls += 1
        if self.calls == self.fail_on:
            raise RuntimeError("opponent crashed")
        return int(np.flatnonzero(action_mask)[0])


@pytest.mark.parametrize("game", GAMES)
def test_single_agent_refuses_step_after_an_opponent_raised(game):
    opponent = _FailsOnCall(fail_on=3)
    env = SingleAgentEnv(game, num_players=2, seat=0, opponents=opponent)
    env.reset(seed=1)
    with pytest.raises(RuntimeError, match="opponent crashed"):
        for _ in range(50):
            env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert env.game.agent_selection != "player_0"  # the opponent was to move when it failed
    assert not env.action_masks().any()
    for action in (0, int(np.flatnonzero(env.game.action_masks())[0])):
        assert_clear_error(RuntimeError, ["RuntimeError: opponent crashed", "reset()"], lambda a=action: env.step(a))
    assert env.game.agent_selection != "player_0"  # the learner's action was not played for the opponent
    env.reset(seed=2)  # a reset clears it
    env.step(int(np.flatnonzero(env.action_masks())[0]))


def test_single_agent_refuses_step_after_a_bad_action_and_after_a_failed_reset():
    env = SingleAgentEnv("llama_party_v0", seat=0)
    env.reset(seed=0)
    with pytest.raises(InvalidActionError):
        env.step(2.0)
    assert_clear_error(RuntimeError, ["InvalidActionError", "2.0", "reset()"], lambda: env.step(0))
    env.reset(seed=0)
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    with pytest.raises(ValueError, match="round"):
        env.reset(options={"round": 9})
    assert_clear_error(RuntimeError, ["reset()", "round"], lambda: env.step(0))
    assert_clear_error(ValueError, ["seed", "'x'"], lambda: env.reset(seed="x"))
    env.reset(seed=np.int64(0))
    env.step(int(np.flatnonzero(env.action_masks())[0]))


# ---------------------------------------------------------------- calls before reset(), unknown agents

BEFORE_RESET_CALLS = [
    ("observe", lambda env: env.observe("player_0"), "observe('player_0')"),
    ("last", lambda env: env.last(), "last()"),
    ("step", lambda env: env.step(0), "step()"),
    ("action_masks", lambda env: env.action_masks(), "action_masks()"),
    ("legal_actions", lambda env: env.legal_actions(), "legal_actions()"),
    ("current_seat", lambda env: env.current_seat, "current_seat"),
    ("describe_action", lambda env: env.describe_action(0), "describe_action()"),
    ("render", lambda env: env.render(), "render()"),
]


@pytest.mark.parametrize(("label", "call", "what"), BEFORE_RESET_CALLS, ids=[c[0] for c in BEFORE_RESET_CALLS])
@pytest.mark.parametrize("game", GAMES)
def test_raw_env_before_reset_says_call_reset_first(game, label, call, what):
    env = tableenvs.make_raw(game, render_mode="ansi")
    assert_clear_error(RuntimeError, [game, what, "call reset() first"], lambda: call(env))


UNKNOWN_AGENT_CALLS = [
    ("observe", lambda env, agent: env.observe(agent)),
    ("observation_space", lambda env, agent: env.observation_space(agent)),
    ("action_space", lambda env, agent: env.action_space(agent)),
]


@pytest.mark.parametrize("agent", ["nobody", "player_9", 0, None])
@pytest.mark.parametrize(("label", "call"), UNKNOWN_AGENT_CALLS, ids=[c[0] for c in UNKNOWN_AGENT_CALLS])
@pytest.mark.parametrize("game", GAMES)
def test_unknown_agent_is_named_with_the_valid_ones(game, label, call, agent):
    env = tableenvs.make_raw(game, num_players=3)
    env.reset(seed=0)
    names = ["unknown agent", repr(agent), "player_0, player_1, player_2"]
    assert_clear_error(ValueError, names, lambda: call(env, agent))
    wrapped = tableenvs.make(game, num_players=3)
    wrapped.reset(seed=0)
    assert_clear_error(ValueError, names, lambda: call(wrapped, agent))
