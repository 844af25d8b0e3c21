"""``search:batched=1``: the paired root whose rollouts run as one batch in the game's batched engine
(:mod:`tableenvs.policies.batched_search`). Its rollouts are the flat search's rollouts (the same value, world by world
and action by action, as ``SearchPolicy._simulate`` with the Python heuristic in the same sampled world); the policy is
legal, reproducible with a ``sims`` budget, leaves the env as it was, and refuses what it cannot do in one line.
Budgets are tiny: behaviour, not strength (strength: benchmarks/batched_search.py, docs/vector.md)."""

from __future__ import annotations

import numpy as np
import pytest
from test_search import play_until_choice

import tableenvs
from tableenvs.core.registry import GameSpec, register_game
from tableenvs.policies import make_policy
from tableenvs.policies.batched_search import BatchedRollouts, check_batched, paired_choice
from tableenvs.policies.search import SearchOptions, parse_search_spec
from tests.vector_differential import paired_rollout_values

NAME = "llama_party_v0"


def test_batched_options_are_parsed_and_checked():
    assert parse_search_spec("search:batched=1:sims=40:z=2") == SearchOptions(
        sims=40, root="paired", z=2.0, batched=True
    )
    assert parse_search_spec("search:batched=0").batched is False
    for text, words in [
        ("search:batched=2", "batched must be 0 or 1"),
        ("search:batched=1:mode=ismcts", "batched=1 is the paired root of mode=flat"),
        ("search:batched=1:root=ucb", "batched=1 is the paired root of mode=flat"),
        ("search:batched=1:turns=3", "no turns"),
    ]:
        with pytest.raises(ValueError, match=words):
            parse_search_spec(text)


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_batched_rollouts_are_the_flat_search_rollouts_world_by_world(num_players):
    """The batched values of every root action in each sampled world equal the Python rollouts (the heuristic's
    ``act_in_world`` in every seat, to the end of the round) from the same worlds: the same game, the same player."""
    env = tableenvs.make_raw(NAME, num_players=num_players)
    flat = make_policy("search:sims=8:root=paired", env)
    for seed in range(3):
        play_until_choice(env, seed)
        for _ in range(seed * 7):  # further into the round (or the next one)
            env.step(int(env.legal_actions()[-1]))
        agent = env.agent_selection
        legal = env.legal_actions()
        rollouts = BatchedRollouts(env, "heuristic", depth=400)
        values = rollouts.values(env, agent, legal, np.random.default_rng(seed), 5, np.inf)
        assert values.shape == (5, len(legal))
        expected = paired_rollout_values(env, legal, np.random.default_rng(seed), 5, flat, seeded=False)
        assert np.array_equal(values, expected)
        assert values.std() > 0  # the actions and worlds differ: not a constant


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_trained_rollouts_are_the_flat_search_rollouts_of_the_shipped_model(num_players):
    """``rollout=trained``: the shipped model (greedy, a batch at a time; at 2 and 3 players its derived inputs
    worked out for the batch in one compiled call) plays the rollouts the flat search plays with ``NumpyPolicy``."""
    env = tableenvs.make_raw(NAME, num_players=num_players)
    flat = make_policy("search:sims=8:root=paired:rollout=trained", env)
    heuristic_values = None
    for seed in range(2):
        play_until_choice(env, seed)
        for _ in range(seed * 5):
            env.step(int(env.legal_actions()[-1]))
        legal = env.legal_actions()
        rollouts = BatchedRollouts(env, "trained", depth=400)
        values = rollouts.values(env, env.agent_selection, legal, np.random.default_rng(seed), 4, np.inf)
        expected = paired_rollout_values(env, legal, np.random.default_rng(seed), 4, flat, seeded=False)
        assert np.array_equal(values, expected)
        heuristic_values = BatchedRollouts(env, "heuristic", depth=400).values(
            env, env.agent_selection, legal, np.random.default_rng(seed), 4, np.inf
        )
    if num_players == 4:  # the 2- and 3-player models are clones of a search over the heuristic: often its moves
        assert not np.array_equal(values, heuristic_values)  # another rollout player: other values


def test_batched_search_is_legal_reproducible_and_simulates_every_action_on_each_world():
    env = tableenvs.make_raw(NAME, num_players=4)
    policy = make_policy("search:batched=1:sims=40:z=1", env)
    for seed in range(3):
        play_until_choice(env, seed)
        seen = env.observe(env.agent_selection)
        count = int(seen["action_mask"].sum())
        before = env.get_state()
        actions = {policy.act(seen["observation"], seen["action_mask"], np.random.default_rng(4)) for _ in range(2)}
        assert len(actions) == 1 and seen["action_mask"][actions.pop()] == 1
        assert policy.last_simulations == max(2, -(-40 // count)) * count
        assert env.get_state() == before
        # the root's values are kept: each legal action's mean over the worlds, the choice among the best unless kept
        legal, means = policy.last_values
        assert legal == np.flatnonzero(seen["action_mask"]).tolist() and means.shape == (count,)
        assert np.isfinite(means).all() and means.max() > means.min()


def test_a_millisecond_budget_plays_at_least_two_worlds_and_random_rollouts_run_too():
    env = tableenvs.make_raw(NAME, num_players=3)
    play_until_choice(env, 1)
    seen = env.observe(env.agent_selection)
    count = int(seen["action_mask"].sum())
    for spec in ("search:batched=1:ms=0.001", "search:batched=1:ms=20:rollout=random"):
        policy = make_policy(spec, env)
        action = policy.act(seen["observation"], seen["action_mask"], np.random.default_rng(0))
        assert seen["action_mask"][action] == 1
        assert policy.last_simulations >= 2 * count and policy.last_simulations % count == 0


def test_paired_choice_keeps_the_default_without_evidence():
    values = np.array([[1.0, 2.0], [1.0, 0.5], [1.0, 2.0]])  # column 1 better on average, noisily
    assert paired_choice(values, None, 0.0) == 1
    assert paired_choice(values, 0, 2.0) == 0  # gain 0.5 +- 0.5: not 2 standard errors
    assert paired_choice(values + np.array([0.0, 1.0]), 0, 2.0) == 1


def test_a_game_without_a_batched_engine_is_refused_in_one_line():
    name = "nim_batched_search_test_v0"
    if name not in tableenvs.names():
        register_game(GameSpec(name, "tableenvs.toy_game", "tableenvs/NimBatchedSearchTest-v0"))
    with pytest.raises(ValueError) as error:
        check_batched(name, "heuristic")
    assert "\n" not in str(error.value) and "has no batched engine" in str(error.value)
    with pytest.raises(ValueError, match="rollout=search cannot run in the batched engine"):
        BatchedRollouts(tableenvs.make_raw(NAME), "search", 400)
