"""The paired root of the search policy (``root=paired``, ``z``), the ``turns`` cut-off and the rollout hooks it
uses (a heuristic's ``act_in_world`` and ``estimate``; the Llama Party heuristic's ``act_in_world`` is checked
against its ``act`` in tests/llama_party/test_llama_party_agents.py).
Budgets are tiny: behaviour, not strength (strength: docs/agents.md, benchmarks/ladder.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from test_search import play_until_choice

import tableenvs
from tableenvs.policies import make_policy, play_game
from tableenvs.policies.search import SearchOptions, SearchPolicy, parse_search_spec
from tableenvs.testing import per_game

#: (options, policy spec) of each game the search can play (tiny budgets)
PAIRED = per_game(
    {
        "pilipili_v0": ({"num_players": 3}, "search:sims=12:root=paired"),
        "llama_party_v0": ({"num_players": 4}, "search:sims=12:root=paired:z=1"),
        "rummikub_v0": ({"num_players": 2, "max_turns": 30}, "search:sims=8:root=paired:z=1:depth=6"),
    },
    "builtin",
    "worlds",
)


def test_paired_options_are_parsed_and_checked():
    assert parse_search_spec("search:sims=40:root=paired:z=1.5") == SearchOptions(sims=40, root="paired", z=1.5)
    assert parse_search_spec("search:root=paired:z=0") == SearchOptions(root="paired", z=0.0)
    assert parse_search_spec("search").root == "ucb"
    for text, words in [
        ("search:root=tree", "root must be 'ucb' or 'paired'"),
        ("search:z=1", "z applies to root=paired only"),
        ("search:root=paired:z=-1", "z must be 0 or more"),
        ("search:root=paired:z=x", "z must be a number"),
    ]:
        with pytest.raises(ValueError, match=words):
            parse_search_spec(text)


@pytest.mark.parametrize(("name", "options", "spec"), [(name, *run) for name, run in PAIRED.items()])
def test_paired_search_is_legal_reproducible_and_simulates_every_action_on_each_world(name, options, spec):
    env = tableenvs.make_raw(name, **options)
    policy = make_policy(spec, env)
    for seed in range(2):
        play_until_choice(env, seed)
        seen = env.observe(env.agent_selection)
        count = int(seen["action_mask"].sum())
        before = env.get_state()
        actions = {policy.act(seen["observation"], seen["action_mask"], np.random.default_rng(4)) for _ in range(2)}
        assert len(actions) == 1 and seen["action_mask"][actions.pop()] == 1
        worlds = max(2, -(-policy.options.sims // count))  # at least two worlds, then up to the budget
        assert policy.last_simulations == worlds * count
        assert env.get_state() == before


def test_paired_search_keeps_the_heuristic_move_without_evidence_and_leaves_it_on_evidence():
    env = tableenvs.make_raw("llama_party_v0", num_players=4)
    heuristic = make_policy("heuristic", env)
    stubborn = make_policy("search:sims=40:root=paired:z=1000", env)  # no gain is ever 1000 standard errors
    free = make_policy("search:sims=200:root=paired", env)
    rng = np.random.default_rng(0)
    differed = False
    for seed in range(2):
        env.reset(seed=seed)
        for _ in range(12):
            seen = env.observe(env.agent_selection)
            own = heuristic.act(seen["observation"], seen["action_mask"], rng)
            assert stubborn.act(seen["observation"], seen["action_mask"], rng) == own
            # (the free search is asked until it first leaves the heuristic's move: one case shows it can)
            differed = differed or free.act(seen["observation"], seen["action_mask"], rng) != own
            env.step(own)
    assert differed  # without z the paired search does leave the heuristic's move


def test_a_cut_off_rollout_is_valued_by_the_estimate():
    env = tableenvs.make_raw("rummikub_v0", num_players=2, max_turns=30)
    play_until_choice(env, 1)
    agent = env.agent_selection
    calls = []

    def estimate(world, who):
        calls.append(who)
        return 7.5

    policy = SearchPolicy(env, SearchOptions(sims=5, depth=1, rollout="random"), None, estimate)
    world = env.sample_world(agent, np.random.default_rng(0))
    assert policy._simulate(world, agent, env.legal_actions()[0], np.random.default_rng(0)) == 7.5
    assert calls == [agent]
    # a rollout that reaches the end of the scoring period is not estimated
    lp = tableenvs.make_raw("llama_party_v0", num_players=2)
    play_until_choice(lp, 0)
    policy = SearchPolicy(lp, SearchOptions(sims=5, rollout="random"), None, estimate)
    world = lp.sample_world(lp.agent_selection, np.random.default_rng(0))
    policy._simulate(world, lp.agent_selection, lp.legal_actions()[0], np.random.default_rng(0))
    assert calls == [agent]


def test_rummikub_estimate_is_zero_sum_with_two_players_and_favours_the_smaller_rack():
    env = tableenvs.make_raw("rummikub_v0", num_players=2, max_turns=30)
    heuristic = make_policy("heuristic", env)
    assert make_policy("search:sims=3", env).estimate == heuristic.estimate
    env.reset(
        seed=0, options={"racks": [["red 1", "red 2", "blue 9"], ["black 13"] * 2 + ["orange 12"] * 2 + ["blue 12"]]}
    )
    mine, theirs = (heuristic.estimate(env, agent) for agent in env.possible_agents)
    assert mine == pytest.approx(-theirs)
    # player_0: 3 tiles, 12 points; player_1: 5 tiles, 62 points: p0 = (1/3) / (1/3 + 1/5) = 5/8
    assert mine == pytest.approx(5 / 8 * 62 - 3 / 8 * 12)


def test_paired_search_plays_a_whole_llama_party_game_reproducibly():
    def play():
        env = tableenvs.make_raw("llama_party_v0", num_players=3)
        seats = [make_policy("search:sims=8:root=paired:z=1", env)] + [make_policy("heuristic", env)] * 2
        return play_game(env, seats, seed=2, rng=np.random.default_rng(2))[0]

    assert np.array_equal(play(), play())


def test_turns_cuts_every_rollout_when_the_agent_is_back_to_act():
    assert parse_search_spec("search:root=paired:turns=2") == SearchOptions(root="paired", turns=2)
    with pytest.raises(ValueError, match="turns must be positive"):
        parse_search_spec("search:turns=0")
    env = tableenvs.make_raw("rummikub_v0", num_players=2, max_turns=60)
    play_until_choice(env, 2)
    agent = env.agent_selection
    seen = []

    def estimate(world, who):
        seen.append((world.agent_selection, int(world.unwrapped.game.turn)))
        return 1.0

    turn = env.unwrapped.game.turn
    policy = SearchPolicy(env, SearchOptions(sims=5, turns=2, rollout="random"), None, estimate)
    for action in env.legal_actions():
        world = env.sample_world(agent, np.random.default_rng(action))
        assert policy._simulate(world, agent, action, np.random.default_rng(0)) == 1.0
    # every root action, a one-decision draw or the first tile of a longer play, is valued two turns on
    assert seen == [(agent, turn + 2)] * len(env.legal_actions())
