"""Each game's heuristic ``act_in_world`` (the search rollouts' fast path, read from the rules state) makes the same
choice as its observation-based ``act`` on the same position, over every decision of many games (random and heuristic
seats mixed, so that unusual positions come up), including the draws it takes from the generator."""

from __future__ import annotations

import numpy as np
import pytest

import tableenvs
from tableenvs.policies import make_policy
from tableenvs.testing import per_game

#: (options, games played) of each game whose heuristic the search rolls out with
RUNS = per_game(
    {
        "pilipili_v0": [({"num_players": 2}, 6), ({"num_players": 3, "expert": True}, 6), ({"num_players": 5}, 4)],
        "llama_party_v0": [({"num_players": 2}, 3), ({"num_players": 4}, 3)],
        "rummikub_v0": [({"num_players": 2, "max_turns": 80}, 3), ({"num_players": 3, "max_turns": 60}, 2)],
    },
    "builtin",
    "heuristic",
    "worlds",
)
CASES = [(name, *run) for name, runs in RUNS.items() for run in runs]
#: The options of each game for the sampled worlds (None: not here; the Llama Party heuristic's act_in_world is
#: checked against its act in tests/llama_party/test_llama_party_agents.py).
IN_WORLDS = per_game(
    {"pilipili_v0": {"num_players": 4}, "llama_party_v0": None, "rummikub_v0": {"num_players": 2, "max_turns": 40}},
    "builtin",
    "heuristic",
    "worlds",
)


@pytest.mark.parametrize(("name", "options", "games"), CASES, ids=[f"{c[0]}-{c[1]['num_players']}p" for c in CASES])
def test_act_in_world_is_act_on_every_decision(name, options, games):
    env = tableenvs.make_raw(name, **options)
    heuristic = make_policy("heuristic", env)
    fast = make_policy("heuristic", env)  # its own instance: no cache shared with ``heuristic``
    checked = 0
    for seed in range(games):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
            seen = env.observe(env.agent_selection)
            draws = int(rng.integers(2**63))
            expected = heuristic.act(seen["observation"], seen["action_mask"], np.random.default_rng(draws))
            assert fast.act_in_world(env, np.random.default_rng(draws)) == expected, (seed, env.event_log[-3:])
            checked += 1
            legal = np.flatnonzero(seen["action_mask"])
            # a third of the decisions random, so that the positions are not only the heuristic's own
            env.step(expected if rng.random() < 0.67 else int(rng.choice(legal)))
    assert checked > 50


def test_act_in_world_on_sampled_worlds():
    """On sampled worlds (the rollouts' positions) too, for the seat to act, whoever it is."""
    for name, options in IN_WORLDS.items():
        if options is None:
            continue
        env = tableenvs.make_raw(name, **options)
        heuristic = make_policy("heuristic", env)
        fast = make_policy("heuristic", env)
        env.reset(seed=4)
        rng = np.random.default_rng(4)
        for _ in range(40):
            if env.terminations[env.agent_selection] or env.truncations[env.agent_selection]:
                break
            world = env.sample_world(env.agent_selection, rng)
            for _ in range(5):  # a few steps into the world, so that other seats act there
                if world.terminations[world.agent_selection] or world.truncations[world.agent_selection]:
                    break
                seen = world.observe(world.agent_selection)
                expected = heuristic.act(seen["observation"], seen["action_mask"], np.random.default_rng(1))
                assert fast.act_in_world(world, np.random.default_rng(1)) == expected
                world.step(expected)
            seen = env.observe(env.agent_selection)
            env.step(heuristic.act(seen["observation"], seen["action_mask"], rng))
