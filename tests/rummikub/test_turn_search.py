"""The Rummikub search over whole turns (``search:mode=turns``): the heuristic proposes only complete legal turns
(checked against the env's masks, step by step, on many positions), the search plays its chosen turn to the end,
is reproducible with a ``sims`` budget, and the fitted cut-off estimate is zero-sum with two players."""

from __future__ import annotations

import numpy as np

import tableenvs
from tableenvs.policies import make_policy, play_game
from tableenvs.rummikub.agents import FEATURES, FITTED_WEIGHTS, HeuristicPolicy, estimate_features
from tableenvs.rummikub.encoder import COMMIT, DRAW


def turn_starts(env, games, seed=0):
    """Envs (clones) at the start of every turn of heuristic games (nothing staged)."""
    heuristic = make_policy("heuristic", env)
    for game in range(games):
        env.reset(seed=seed + game)
        rng = np.random.default_rng(game)
        while not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
            if not env.game.staged.any():
                yield env.clone()
            seen = env.observe(env.agent_selection)
            env.step(heuristic.act(seen["observation"], seen["action_mask"], rng))


def test_proposed_turns_are_complete_legal_turns():
    env = tableenvs.make_raw("rummikub_v0", num_players=3, max_turns=60)
    heuristic = make_policy("heuristic", env)
    checked = plays = 0
    for position in turn_starts(env, 2):
        agent = position.agent_selection
        seen = position.observe(agent)
        turns = heuristic.propose_turns(seen["observation"], seen["action_mask"])
        names = [name for name, _ in turns]
        assert len(set(names)) == len(names) and len({tuple(t) for _, t in turns}) == len(turns)
        first = heuristic.act(seen["observation"], seen["action_mask"], np.random.default_rng(0))
        assert turns[0][1][0] == first  # the heuristic's own turn comes first
        for _, actions in turns:
            world = position.clone()
            turn = world.game.turn
            for i, action in enumerate(actions):
                assert world.agent_selection == agent and world.action_masks()[action], (actions, i)
                world.step(action)
            assert world.game.turn == turn + 1 or world.outcome() is not None  # the turn is over, not before
            assert actions[-1] in (COMMIT, DRAW) and all(a < COMMIT for a in actions[:-1])
            plays += actions[-1] == COMMIT
            checked += 1
    assert checked > 100 and plays > 30


def test_turn_search_plays_whole_turns_and_is_reproducible():
    totals = []
    for _ in range(2):
        env = tableenvs.make_raw("rummikub_v0", num_players=2, max_turns=24)
        search = make_policy("search:mode=turns:sims=6", env)
        totals.append(play_game(env, [search, make_policy("heuristic", env)], seed=5, rng=np.random.default_rng(5)))
        assert env.outcome() is not None
    assert np.array_equal(totals[0][0], totals[1][0]) and totals[0][1] == totals[1][1]


def test_fitted_estimate_is_zero_sum_with_two_players():
    assert len(FITTED_WEIGHTS) == len(FEATURES)
    env = tableenvs.make_raw("rummikub_v0", num_players=2, max_turns=60)
    for position in list(turn_starts(env, 1))[::10]:
        values = [HeuristicPolicy.fitted_estimate(position, agent) for agent in position.possible_agents]
        assert abs(sum(values)) < 1e-6
        assert estimate_features(position.game, 0).shape == (len(FEATURES),)


def test_the_bare_search_is_each_games_default_setting():
    from tableenvs.policies.search import parse_search_spec

    for name, options in (("rummikub_v0", {"num_players": 2}), ("llama_party_v0", {}), ("pilipili_v0", {})):
        policy = make_policy("search", tableenvs.make_raw(name, **options))
        assert policy.options == parse_search_spec(tableenvs.spec(name).search_default)
    assert make_policy("search", tableenvs.make_raw("rummikub_v0", num_players=2)).options.mode == "turns"


def test_last_turn_names_the_proposal_played_at_a_turn_start_and_is_none_within_the_turn():
    env = tableenvs.make_raw("rummikub_v0", num_players=2, max_turns=40)
    search, heuristic = make_policy("search:mode=turns:sims=4", env), make_policy("heuristic", env)
    rng = np.random.default_rng(0)
    named = followed = 0
    env.reset(seed=3)
    while env.outcome() is None:
        seen = env.observe(env.agent_selection)
        observation, mask = seen["observation"], seen["action_mask"]
        if env.agent_selection != "player_0":
            env.step(heuristic.act(observation, mask, rng))
            continue
        start = not heuristic.turn_under_way(observation) and mask.sum() > 1  # a choice to make
        proposals = dict(heuristic.propose_turns(observation, mask)) if start else {}
        action = search.act(observation, mask, rng)
        if start:
            assert search.last_turn in proposals and proposals[search.last_turn][0] == action
            named += 1
        else:
            assert search.last_turn is None
            followed += 1
        env.step(action)
    assert named > 5 and followed > 0


def test_lead_trained_puts_the_shipped_models_turn_first(monkeypatch):
    """``lead=trained``: the shipped model plays its turn out on a copy and that turn leads the candidates; a search
    that always keeps the first candidate then plays exactly the model's game, action for action."""
    from tableenvs.policies.search import SearchPolicy

    monkeypatch.setattr(SearchPolicy, "_paired_turns", lambda self, *args: 0)
    for seed in (3, 4):
        games = []
        for first in ("trained", "search:mode=turns:sims=2:lead=trained"):
            env = tableenvs.make_raw("rummikub_v0", num_players=4)
            seats = [make_policy(first, env)] + [make_policy("heuristic", env) for _ in range(3)]
            played: list[int] = []
            totals = play_game(env, seats, seed=seed, rng=np.random.default_rng(seed),
                               on_step=lambda env, agent, seen, action, out=played: out.append(action))  # fmt: skip
            games.append((played, totals))
        assert games[0][0] == games[1][0] and len(games[0][0]) > 50
        assert np.array_equal(games[0][1][0], games[1][1][0])


def test_lead_is_refused_outside_mode_turns_and_where_no_model_is_shipped():
    env = tableenvs.make_raw("rummikub_v0", num_players=4, max_turns=24)
    for spec, why in (
        ("search:sims=4:lead=trained", "lead applies to mode=turns only"),
        ("search:mode=turns:lead=trained", "lead=trained: 'trained' has no model for rummikub_v0"),
        ("search:mode=turns:lead=random", "lead must be 'heuristic' or 'trained'"),
    ):
        try:
            make_policy(spec, env)
        except ValueError as error:
            assert why in str(error) and "\n" not in str(error), str(error)
        else:
            raise AssertionError(f"{spec} was not refused")
