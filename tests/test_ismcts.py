"""Information-set MCTS (``search:mode=ismcts``, tableenvs/policies/ismcts.py): options, legality, reproducibility with
a ``sims`` budget, the anytime ``ms`` budget, one tree over the agent's information sets. Tiny budgets: behaviour,
not strength (strength: docs/agents.md, benchmarks/search_vs_heuristic.py)."""

from __future__ import annotations

import numpy as np
import pytest
from test_search import play_until_choice

import tableenvs
from tableenvs.policies import make_policy, play_game
from tableenvs.policies.ismcts import ISMCTS
from tableenvs.policies.search import SearchOptions, parse_search_spec
from tableenvs.testing import per_game

#: (options, policy spec) of each game the search can play (tiny budgets)
RUNS = per_game(
    {
        "pilipili_v0": [({"num_players": 3}, "search:mode=ismcts:sims=30")],
        "llama_party_v0": [
            ({"num_players": 4}, "search:mode=ismcts:sims=20"),
            ({"num_players": 2}, "search:mode=ismcts:sims=20:rollout=random"),
        ],
        "rummikub_v0": [({"num_players": 2, "max_turns": 30}, "search:mode=ismcts:sims=6:turns=2")],
    },
    "builtin",
    "worlds",
)
GAMES = [(name, *run) for name, runs in RUNS.items() for run in runs]


def test_ismcts_options_are_parsed_and_checked():
    assert parse_search_spec("search:mode=ismcts:sims=50") == SearchOptions(sims=50, mode="ismcts")
    assert parse_search_spec("search:mode=ismcts:ms=20:c=1.2") == SearchOptions(ms=20.0, c=1.2, mode="ismcts")
    with pytest.raises(ValueError, match="root applies to mode=flat only"):
        parse_search_spec("search:mode=ismcts:root=paired")
    with pytest.raises(ValueError, match="mode must be"):
        parse_search_spec("search:mode=tree")


@pytest.mark.parametrize(("name", "options", "spec"), GAMES, ids=[f"{g[0]}-{g[1]['num_players']}p" for g in GAMES])
def test_ismcts_is_legal_and_reproducible_with_a_sims_budget(name, options, spec):
    env = tableenvs.make_raw(name, **options)
    policy = make_policy(spec, env)
    budget = parse_search_spec(spec).sims
    for seed in range(2):
        play_until_choice(env, seed)
        seen = env.observe(env.agent_selection)
        before = env.get_state()
        actions = {policy.act(seen["observation"], seen["action_mask"], np.random.default_rng(3)) for _ in range(2)}
        assert len(actions) == 1 and seen["action_mask"][actions.pop()] == 1
        assert policy.last_simulations == budget
        assert env.get_state() == before  # searching never changes the real game


def test_the_tree_counts_availability_and_visits_every_root_action():
    env = tableenvs.make_raw("pilipili_v0", num_players=3)
    play_until_choice(env, 1)
    agent = env.agent_selection
    legal = env.legal_actions()
    heuristic = make_policy("heuristic", env)
    tree = ISMCTS(env, agent, parse_search_spec("search:mode=ismcts:sims=40"), heuristic, None)
    action = tree.search(np.random.default_rng(0))
    root = tree.root
    assert action in legal and sorted(root.visits) == legal  # every root action tried (in id order)
    assert sum(root.visits.values()) == 40
    assert all(root.avail[a] >= root.visits[a] for a in legal)  # available at least as often as chosen
    assert action == max(legal, key=lambda a: (root.visits[a], root.totals[a] / root.visits[a], -a))
    # deeper nodes are the agent's later information sets: keyed by its observation there
    children = [child for nodes in root.children.values() for child in nodes.values()]
    assert children and all(child.visits for child in children if child.avail)


def test_ms_budget_is_anytime():
    env = tableenvs.make_raw("llama_party_v0", num_players=3)
    play_until_choice(env, 0)
    seen = env.observe(env.agent_selection)
    policy = make_policy("search:mode=ismcts:ms=15:rollout=random", env)
    action = policy.act(seen["observation"], seen["action_mask"], np.random.default_rng(0))
    assert seen["action_mask"][action] == 1 and 1 <= policy.last_simulations < 10_000


def test_ismcts_plays_a_whole_game_reproducibly():
    results = []
    for _ in range(2):
        env = tableenvs.make_raw("pilipili_v0", num_players=3)
        seats = [make_policy("search:mode=ismcts:sims=6", env)] + [make_policy("heuristic", env)] * 2
        results.append(play_game(env, seats, seed=2, rng=np.random.default_rng(2))[0])
        assert env.outcome() is not None
    assert np.array_equal(*results)
