"""``wrap``'s outer wrapper answers ordinary calls in one hop (``aec._OrderEnforcingWrapper``); it must behave exactly
as PettingZoo's own three wrappers stacked the same way.

Differential: the three games and the toy Nim, driven side by side through ``wrap`` and through PettingZoo's
``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(TerminateIllegalWrapper(raw)))``, with legal moves, illegal moves
(the game ends with -1 for the mover), numpy-integer actions, dead steps, observations of agents not to act and
``last(observe=False)``; everything each call returns and all public state must match after every call.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.utils import wrappers

import tableenvs
from tableenvs.core.wrappers import wrap
from tableenvs.testing import games
from tableenvs.toy_game import NimEnv


def plain_stack(raw):
    return wrappers.OrderEnforcingWrapper(
        wrappers.AssertOutOfBoundsWrapper(wrappers.TerminateIllegalWrapper(raw, illegal_reward=-1.0))
    )


def same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def state(env) -> tuple:
    return (
        list(env.agents),
        env.agent_selection,
        dict(env.rewards),
        dict(env._cumulative_rewards),
        dict(env.terminations),
        dict(env.truncations),
        env.infos,
    )


def drive(fast, plain, seed: int, rng, illegal_rate: float) -> int:
    """One episode side by side; returns the steps taken."""
    fast.reset(seed=seed)
    plain.reset(seed=seed)
    steps = 0
    # each iterator checks that a step came between; both end together
    for agent, plain_agent in zip(fast.agent_iter(400), plain.agent_iter(400), strict=True):
        assert agent == plain_agent
        assert same(state(fast), state(plain))
        roll = rng.random()
        if roll < 0.15:  # look at some agent's observation first (maybe not the one to act)
            agent = fast.possible_agents[rng.integers(len(fast.possible_agents))]
            assert same(fast.observe(agent), plain.observe(agent))
        if roll < 0.05:  # step without last(): TerminateIllegalWrapper observes for itself
            observation = plain.observe(plain.agent_selection)
            fast_last = (None,)
        elif roll < 0.1:
            fast_last, plain_last = fast.last(observe=False), plain.last(observe=False)
            assert same(fast_last, plain_last)
            observation = plain.observe(plain.agent_selection)
            assert same(fast.observe(fast.agent_selection), observation)
        else:
            fast_last, plain_last = fast.last(), plain.last()
            assert same(fast_last, plain_last)
            observation = plain_last[0]
        agent = plain.agent_selection
        if plain.terminations[agent] or plain.truncations[agent]:
            action = None
        else:
            mask = observation["action_mask"]
            legal, illegal = np.flatnonzero(mask), np.flatnonzero(mask == 0)
            if illegal.size and rng.random() < illegal_rate:
                action = int(illegal[rng.integers(illegal.size)])
            else:
                action = int(legal[rng.integers(legal.size)])
            if rng.random() < 0.2:
                action = np.int64(action)
        fast.step(action)
        plain.step(action)
        steps += 1
    assert same(state(fast), state(plain))
    return steps


# the package's games by name (other test files register toy games in the same registry), and Nim directly
@pytest.mark.parametrize("name", [*games("builtin"), "nim"])
def test_the_one_hop_path_behaves_as_pettingzoos_wrappers(name):
    rng = np.random.default_rng(7)
    steps = illegal_endings = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PettingZoo warns on each illegal move
        for seed in range(12):
            if name == "nim":
                fast, plain = wrap(NimEnv(num_players=3, pile=40)), plain_stack(NimEnv(num_players=3, pile=40))
            else:
                fast, plain = tableenvs.make(name), plain_stack(tableenvs.make(name).unwrapped)
            assert fast._illegal is not None  # the one-hop path is on for wrap's stack
            steps += drive(fast, plain, seed, rng, 0.3 if name == "nim" else 0.02)
            illegal_endings += fast.env.env._terminated
    assert steps > 200 and illegal_endings > 0
