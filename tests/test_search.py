"""The built-in ``"search"`` policy (tableenvs/policies/search.py): options, reproducibility, and every path that
accepts a policy (play_game, ``tableenvs play``, ``tableenvs eval``, SingleAgentEnv opponents, parallel evaluation
workers). Budgets are tiny: these tests check behaviour, not strength (strength is in docs/agents.md,
benchmarks/ladder.py)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import tableenvs
from tableenvs.cli import main
from tableenvs.evaluation import evaluate
from tableenvs.policies import BUILTIN_POLICIES, make_policy, play_game
from tableenvs.policies.search import SearchOptions, SearchPolicy, parse_search_spec
from tableenvs.testing import per_game
from tableenvs.training.single_agent import SingleAgentEnv

#: (options, a small budget for the reproducibility test, whether test_search_plays_whole_games plays it) of each
#: game the search can play (heuristic rollouts where they are cheap).
RUNS = per_game(
    {
        "pilipili_v0": ({"num_players": 3}, "search:sims=12", True),
        "llama_party_v0": ({"num_players": 2}, "search:sims=12:rollout=random", True),
        "rummikub_v0": ({"num_players": 2, "max_turns": 30}, "search:sims=12:rollout=random:depth=20", False),
    },
    "builtin",
    "worlds",
)
GAMES = [(name, options) for name, (options, _, _) in RUNS.items()]
SPECS = {name: spec for name, (_, spec, _) in RUNS.items()}
WHOLE_GAMES = [(name, options) for name, (options, _, whole) in RUNS.items() if whole]


def test_search_is_a_builtin_policy():
    assert "search" in BUILTIN_POLICIES
    env = tableenvs.make("pilipili_v0", num_players=3)  # wrapped envs too
    policy = make_policy("search", env)
    assert isinstance(policy, SearchPolicy) and policy.options.simulations == 60  # the spec's search_default
    assert policy.rollout_policy is not None
    assert make_policy("search:rollout=random", env).rollout_policy is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("search", SearchOptions()),
        ("search:sims=200", SearchOptions(sims=200)),
        ("search:ms=50:rollout=random", SearchOptions(ms=50.0, rollout="random")),
        ("search:sims=30:c=1.5:depth=20", SearchOptions(sims=30, c=1.5, depth=20)),
    ],
)
def test_options_are_parsed(text, expected):
    assert parse_search_spec(text) == expected


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("search:sims=0", "sims must be positive"),
        ("search:sims=2.5", "sims must be an integer"),
        ("search:ms=-3", "ms must be positive"),
        ("search:ms=nan", "ms must be positive"),
        ("search:speed=3", "bad option 'speed=3'"),
        ("search:sims", "bad option 'sims'"),
        ("search:rollout=greedy", "rollout must be 'heuristic' or 'random'"),
        ("search:sims=10:ms=5", "not both"),
        ("search:sims=10:sims=20", "given twice"),
    ],
)
def test_bad_options_are_refused_clearly(text, words):
    env = tableenvs.make_raw("pilipili_v0", num_players=3)
    with pytest.raises(ValueError, match=words):
        make_policy(text, env)


def play_until_choice(env, seed):
    """Reset and play random moves until the agent to act has at least two legal actions."""
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while len(env.legal_actions()) < 2:
        env.step(int(rng.choice(env.legal_actions())))


@pytest.mark.parametrize(("name", "options"), GAMES, ids=[name for name, _ in GAMES])
def test_search_is_legal_and_reproducible_with_a_sims_budget(name, options):
    env = tableenvs.make_raw(name, **options)
    policy = make_policy(SPECS[name], env)
    for seed in range(2):
        play_until_choice(env, seed)
        seen = env.observe(env.agent_selection)
        before = env.get_state()
        actions = {policy.act(seen["observation"], seen["action_mask"], np.random.default_rng(9)) for _ in range(2)}
        assert len(actions) == 1 and seen["action_mask"][actions.pop()] == 1
        assert policy.last_simulations == 12
        assert env.get_state() == before  # searching never changes the real game


def test_ms_budget_runs_at_least_one_simulation_and_stops():
    env = tableenvs.make_raw("llama_party_v0", num_players=3)
    play_until_choice(env, 0)
    seen = env.observe(env.agent_selection)
    policy = make_policy("search:ms=20:rollout=random", env)
    action = policy.act(seen["observation"], seen["action_mask"], np.random.default_rng(0))
    assert seen["action_mask"][action] == 1
    assert 1 <= policy.last_simulations < 10_000


def test_search_refuses_an_observation_of_another_env():
    env = tableenvs.make_raw("pilipili_v0", num_players=3)
    play_until_choice(env, 0)
    other = tableenvs.make_raw("pilipili_v0", num_players=3)
    play_until_choice(other, 5)
    seen = other.observe(other.agent_selection)
    with pytest.raises(ValueError, match="make_policy"):
        make_policy("search:sims=5", env).act(seen["observation"], seen["action_mask"], np.random.default_rng(0))


@pytest.mark.parametrize(("name", "options"), WHOLE_GAMES, ids=[name for name, _ in WHOLE_GAMES])
def test_search_plays_whole_games(name, options):
    env = tableenvs.make_raw(name, **options)
    seats = [make_policy("search:sims=4:rollout=random", env)] + [make_policy("heuristic", env)] * (env.num_players - 1)
    totals, decisions = play_game(env, seats, seed=3, rng=np.random.default_rng(3))
    assert env.outcome() is not None and decisions > 0
    again = tableenvs.make_raw(name, **options)
    seats = [make_policy("search:sims=4:rollout=random", again)] + [make_policy("heuristic", again)] * (
        again.num_players - 1
    )
    assert np.array_equal(play_game(again, seats, seed=3, rng=np.random.default_rng(3))[0], totals)  # reproducible


def test_search_as_a_single_agent_opponent():
    env = SingleAgentEnv("llama_party_v0", num_players=2, opponents="search:sims=3:rollout=random", seat=0)
    observation, _ = env.reset(seed=1)
    rng = np.random.default_rng(0)
    done = False
    while not done:
        legal = np.flatnonzero(env.action_masks())
        observation, reward, terminated, truncated, _ = env.step(int(rng.choice(legal)))
        done = terminated or truncated
    assert env.game.outcome() is not None


def test_search_in_evaluation_workers_gives_the_same_results():
    specs = ["search:sims=3:rollout=random", "random"]
    kwargs = dict(num_players=2, seed=2)
    serial = evaluate("llama_party_v0", specs, 4, **kwargs)
    parallel = evaluate("llama_party_v0", specs, 4, workers=2, **kwargs)
    assert serial.to_dict()["policies"] == parallel.to_dict()["policies"]
    policy = make_policy(specs[0], tableenvs.make_raw("llama_party_v0", num_players=2))
    assert pickle.loads(pickle.dumps(policy)).options == policy.options


def test_cli_play_and_eval_accept_search(tmp_path, capsys):
    assert main(["play", "pilipili_v0", "--players", "2", "--quiet", "--seed", "0",
                 "--policies", "search:sims=3:rollout=random,heuristic"]) == 0  # fmt: skip
    argv = ["eval", "llama_party_v0", "--policies", "search:sims=2:rollout=random,random", "--players", "2"]
    assert main(argv + ["--games", "2", "--no-progress", "--no-plot", "--out", str(tmp_path / "eval")]) == 0
    assert "search:sims=2:rollout=random" in capsys.readouterr().out
    assert main(["eval", "llama_party_v0", "--policies", "search:sims=0,random", "--games", "2"]) == 2
    assert "sims must be positive" in capsys.readouterr().err


def test_rollout_trained_plays_the_rollouts_with_the_shipped_model_and_is_refused_where_there_is_none(
    tmp_path, monkeypatch
):
    from tableenvs.policies.numpy_policy import NumpyPolicy

    results = []
    for _ in range(2):
        env = tableenvs.make_raw("llama_party_v0")
        search = make_policy("search:sims=3:rollout=trained", env)
        assert isinstance(search.rollout_policy, NumpyPolicy) and search.rollout_policy.name == "llama_party_v0.npz"
        seats = [search] + [make_policy("heuristic", env)] * 3
        results.append(play_game(env, seats, seed=4, rng=np.random.default_rng(4)))
        assert env.outcome() is not None
    assert np.array_equal(results[0][0], results[1][0])  # reproducible, as every sims budget
    refused = r"^search policy 'search:sims=3:rollout=trained': rollout=trained: no trained model is shipped"
    monkeypatch.setenv("TABLEENVS_MODELS", str(tmp_path))  # an empty models directory: no model for any game
    with pytest.raises(ValueError, match=refused):
        make_policy("search:sims=3:rollout=trained", tableenvs.make_raw("rummikub_v0"))
