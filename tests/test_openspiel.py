"""The OpenSpiel bridge (tableenvs/openspiel/): OpenSpiel's own checks, its bots, and agents both ways.

Where you are: tests of ``tableenvs.openspiel`` (guide: docs/openspiel.md). Skipped as a whole when pyspiel is not
importable (``pip install open-spiel``; CI installs it). Small games throughout (2 players, few rounds or turns,
few deal seeds) so the file runs in well under a minute on 2 cores.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from load_bounds import HANG

pyspiel = pytest.importorskip("pyspiel", reason="OpenSpiel is not installed (pip install open-spiel)")

import tableenvs.openspiel as tos  # noqa: E402  (after the skip)
from tableenvs.core.registry import make_raw  # noqa: E402
from tableenvs.core.registry import spec as game_spec  # noqa: E402
from tableenvs.testing import per_game  # noqa: E402

#: The parameters of a small game of each bridged game, by its OpenSpiel name.
SMALL = {
    f"tableenvs_{name}": params
    for name, params in per_game(
        {
            "pilipili_v0": {"num_players": 2, "max_rounds": 2, "deal_seeds": 64},
            "llama_party_v0": {"num_players": 2, "deal_seeds": 64},
            "rummikub_v0": {"num_players": 2, "max_turns": 30, "deal_seeds": 64},
        },
        "builtin",
        "openspiel",
    ).items()
}
NAMES = sorted(SMALL)


def small(name: str, **extra):
    return pyspiel.load_game(name, {**SMALL[name], **extra})


def play_random(state, rng: np.random.Generator, moves: int | None = None):
    """Apply uniform random chance outcomes and legal actions (``moves`` of them, or to the end)."""
    done = 0
    while not state.is_terminal() and (moves is None or done < moves):
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        else:
            legal = state.legal_actions()
            state.apply_action(int(legal[rng.integers(len(legal))]))
        done += 1
    return state


@pytest.mark.parametrize("name", NAMES)
def test_registered_with_the_env_defaults_and_truthful_type(name):
    game = pyspiel.load_game(name)
    title = tos.TITLES[name]
    defaults = {
        key: p.default
        for key, p in inspect.signature(game_spec(title.env).raw_env_class().__init__).parameters.items()
        if key not in ("self", "render_mode")
    }
    if name == "tableenvs_llama_party_v0":
        defaults["deck"] = "standard"  # None (the standard deck) as an OpenSpiel string
    params = game.get_parameters()
    assert {key: params[key] for key in defaults} == defaults
    assert params["deal_seeds"] == tos.DEFAULT_DEAL_SEEDS and params["reward_model"] == "terminal"
    kind = game.get_type()
    assert kind.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert kind.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert kind.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert kind.reward_model == pyspiel.GameType.RewardModel.TERMINAL
    zero_sum = name == "tableenvs_rummikub_v0"
    assert (kind.utility == pyspiel.GameType.Utility.ZERO_SUM) == zero_sum
    assert (kind.utility == pyspiel.GameType.Utility.GENERAL_SUM) == (not zero_sum)
    env = make_raw(title.env)
    assert game.num_distinct_actions() == env.num_actions
    assert game.num_players() == env.num_players
    assert game.max_chance_outcomes() == tos.DEFAULT_DEAL_SEEDS
    assert game.observation_tensor_size() == env.observation_size
    assert (kind.min_num_players, kind.max_num_players) == (min(title_counts(title)), max(title_counts(title)))


def title_counts(title):
    return game_spec(title.env).player_counts


def test_facts_derived_from_the_options():
    rummikub = pyspiel.load_game("tableenvs_rummikub_v0", {"max_turns": 50, "games_per_episode": 2})
    assert rummikub.max_game_length() == 50 + 106 * 2  # each turn ends once; each staged tile stays on the table
    assert (rummikub.min_utility(), rummikub.max_utility()) == (-788 * 2, 788 * 2)
    pilipili = pyspiel.load_game("tableenvs_pilipili_v0", {"reward": "win", "max_rounds": 10})
    assert (pilipili.min_utility(), pilipili.max_utility()) == (-1, 1)
    assert (
        pilipili.max_game_length()
        == 10 * pyspiel.load_game("tableenvs_pilipili_v0", {"max_rounds": 1}).max_game_length()
    )
    llama = pyspiel.load_game("tableenvs_llama_party_v0", {"num_players": 3})
    assert llama.max_game_length() == 4 * 3 * 11  # 4 rounds, each seat: a goal and 4 + 3 + 2 + 1 passed cards


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"num_players": 9}, "num_players must be in 2..4"),
        ({"deal_seeds": 0}, "deal_seeds must be in 1.."),
        ({"reward_model": "shaped"}, "reward_model must be one of 'terminal', 'rewards'"),
        ({"reward": "chips"}, "reward must be one of"),
    ],
)
def test_bad_parameters_are_refused_by_name(params, message):
    with pytest.raises(ValueError, match=message):
        pyspiel.load_game("tableenvs_llama_party_v0", params)


@pytest.mark.parametrize("name", NAMES)
def test_openspiel_random_sim_test_with_serialisation(name):
    pyspiel.random_sim_test(small(name), num_sims=2, serialize=True, verbose=False)


def test_random_sim_test_with_intermediate_rewards():
    game = small("tableenvs_pilipili_v0", reward_model="rewards")
    assert game.get_type().reward_model == pyspiel.GameType.RewardModel.REWARDS
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


@pytest.mark.parametrize("name", NAMES)
def test_resample_from_infostate_keeps_what_the_seat_knows(name):
    game = small(name)
    rng = np.random.default_rng(1)
    state = play_random(game.new_initial_state(), rng, moves=1)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    checked = 0
    while not state.is_terminal() and checked < 25:
        for player in range(game.num_players()):
            other = state.resample_from_infostate(player, sampler)
            assert other.information_state_string(player) == state.information_state_string(player)
            assert other.information_state_tensor(player) == state.information_state_tensor(player)
            assert other.observation_string(player) == state.observation_string(player)
            assert other.current_player() == state.current_player()
            if player == state.current_player():
                assert other.legal_actions() == state.legal_actions()
        play_random(state, rng, moves=3)
        checked += 1


def test_resampling_changes_what_the_seat_cannot_see():
    game = small("tableenvs_llama_party_v0")
    state = play_random(game.new_initial_state(), np.random.default_rng(2), moves=4)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    worlds = {str(state.resample_from_infostate(0, sampler)) for _ in range(8)}
    assert len(worlds) > 1  # seat 1's hand (and the dummies') differ between samples


def test_information_state_string_adds_the_recall_line():
    """The information state string is the view plus a hash of everything the seat has observed and done; the
    observation string is the view alone."""
    game = small("tableenvs_rummikub_v0")
    state = game.new_initial_state()
    state.apply_action(5)
    start = state.information_state_string(0)
    assert "recall " in start and "recall " not in state.observation_string(0)
    draw = 54  # a draw changes seat 0's rack; the recall line changes with it
    state.apply_action(draw)
    assert state.information_state_string(0) != start


@pytest.mark.parametrize("name", NAMES)
def test_serialize_round_trip_continues_identically(name):
    game = small(name)
    state = play_random(game.new_initial_state(), np.random.default_rng(3), moves=6)
    text = pyspiel.serialize_game_and_state(game, state)
    game2, copy = pyspiel.deserialize_game_and_state(text)
    assert str(game2) == str(game) and str(copy) == str(state) and copy.history() == state.history()
    for player in range(game.num_players()):
        assert copy.information_state_string(player) == state.information_state_string(player)
    a, b = play_random(state, np.random.default_rng(4)), play_random(copy, np.random.default_rng(4))
    assert a.returns() == b.returns() and str(a) == str(b)


def test_returns_are_the_env_returns():
    game = small("tableenvs_llama_party_v0")
    state = play_random(game.new_initial_state(), np.random.default_rng(5))
    assert state.returns() == list(state.env.outcome().returns)
    assert sum(state.returns()) != 0  # general-sum: the points are not a transfer


def test_the_deal_is_the_seeded_reset():
    game = small("tableenvs_pilipili_v0")
    state = game.new_initial_state()
    assert state.is_chance_node() and len(state.chance_outcomes()) == 64
    state.apply_action(17)
    env = make_raw("pilipili_v0", num_players=2, max_rounds=2)
    env.reset(seed=17)
    for agent in env.possible_agents:
        np.testing.assert_array_equal(state.env.observe(agent)["observation"], env.observe(agent)["observation"])
    assert state.legal_actions() == env.legal_actions()


# ---------------------------------------------------------------------------------------------- OpenSpiel's bots


def whole_game(game, bots, seed):
    from open_spiel.python.algorithms import evaluate_bots

    returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, np.random.RandomState(seed))
    assert game.min_utility() <= min(returns) and max(returns) <= game.max_utility()
    return returns


@pytest.mark.parametrize("name", NAMES)
def test_uniform_random_bots_play_whole_games(name):
    from open_spiel.python.bots.uniform_random import UniformRandomBot

    game = small(name)
    for seed in range(2):
        bots = [UniformRandomBot(p, np.random.RandomState(seed + p)) for p in range(2)]
        whole_game(game, bots, seed)


@pytest.mark.parametrize("name", NAMES)
def test_mcts_and_ismcts_play_whole_games(name):
    """OpenSpiel's Python MCTS (on the true state: it sees hidden cards, as it does in any imperfect-information
    game) against its Python IS-MCTS (information sets, worlds from resample_from_infostate)."""
    from open_spiel.python.algorithms import ismcts, mcts

    game = small(name)
    rs = np.random.RandomState(0)
    evaluator = mcts.RandomRolloutEvaluator(1, rs, max_length=10)
    bots = [
        mcts.MCTSBot(game, 2.0, 4, evaluator, random_state=rs, solve=False),
        ismcts.ISMCTSBot(game, evaluator, 2.0, 4, random_state=rs),
    ]
    state = game.new_initial_state()
    while not state.is_terminal():  # evaluate_bots refuses IS-MCTS: see the next test
        if state.is_chance_node():
            state.apply_action(int(rs.randint(game.max_chance_outcomes())))
        else:
            state.apply_action(int(bots[state.current_player()].step(state)))
    assert game.min_utility() <= min(state.returns()) and max(state.returns()) <= game.max_utility()
    assert state.returns() == list(state.env.outcome().returns)


def test_evaluate_bots_refuses_python_ismcts():
    """OpenSpiel's evaluate_bots starts with bot.restart_at(state), which its Python ISMCTSBot does not implement
    (for any game); play IS-MCTS with a loop calling step, as above, or seat it through BotPolicy."""
    from open_spiel.python.algorithms import ismcts, mcts

    game = small("tableenvs_llama_party_v0")
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, np.random.RandomState(0)), 2.0, 4)
    with pytest.raises(pyspiel.SpielError, match=r"RestartAt\(state\) not implemented"):
        whole_game(game, [bot, bot], 0)


def test_cpp_search_bots_do_not_accept_python_games():
    """pyspiel's C++ ISMCTSBot (and C++ MCTSBot) crash the process with a segmentation fault on any Python game
    in this OpenSpiel build, OpenSpiel's own python_kuhn_poker included: their C++ Clone/Resample calls do not
    survive the Python state. Use open_spiel.python.algorithms.ismcts / mcts (tested above)."""
    script = textwrap.dedent(
        """
        import sys, pyspiel, tableenvs.openspiel
        from open_spiel.python.games import kuhn_poker  # noqa: F401  (registers python_kuhn_poker)
        game = pyspiel.load_game(sys.argv[1], {} if sys.argv[1] == "python_kuhn_poker" else {"num_players": 2})
        state = game.new_initial_state()
        for action in ((0, 1) if sys.argv[1] == "python_kuhn_poker" else (3,)):
            state.apply_action(action)
        bot = pyspiel.ISMCTSBot(0, pyspiel.RandomRolloutEvaluator(1, 0), 2.0, 10)
        print("stepping", flush=True)
        bot.step(state)
        print("no crash", flush=True)
        """
    )
    for name in ("python_kuhn_poker", "tableenvs_llama_party_v0"):
        run = subprocess.run([sys.executable, "-c", script, name], capture_output=True, text=True, timeout=HANG)
        assert run.stdout.strip() == "stepping", (name, run.stdout, run.stderr[-2000:])
        assert run.returncode == -11, (name, run.returncode, run.stderr[-2000:])  # SIGSEGV


# ---------------------------------------------------------------------------------------------- agents both ways


@pytest.mark.parametrize("name", NAMES)
def test_tableenvs_policies_play_in_evaluate_bots(name):
    game = small(name)
    bots = [tos.PolicyBot(0, "heuristic", seed=0), tos.PolicyBot(1, "search:sims=4:depth=20", seed=1)]
    returns = whole_game(game, bots, 0)
    assert len(returns) == 2


def test_policy_bot_refuses_another_players_turn():
    game = small("tableenvs_llama_party_v0")
    state = game.new_initial_state()
    state.apply_action(0)
    with pytest.raises(ValueError, match="this bot is 1"):
        tos.PolicyBot(1, "random").step(state)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("openspiel:alphazero", "not an OpenSpiel bot spec"),
        ("openspiel:mcts:sims=0", "sims must be positive"),
        ("openspiel:ismcts:budget=3", "bad option 'budget=3'"),
        ("openspiel:random:sims=3", "options of openspiel:random: none"),
    ],
)
def test_bad_bot_specs(spec, message):
    with pytest.raises(ValueError, match=message):
        tos.parse_bot_spec(spec)


def test_bot_policy_is_reproducible_and_legal():
    env = make_raw("llama_party_v0", num_players=2)
    env.reset(seed=3)
    policy = tos.make_bot_policy("openspiel:ismcts:sims=8", env)
    seen = env.observe(env.agent_selection)
    first = policy.act(seen["observation"], seen["action_mask"], np.random.default_rng(7))
    again = policy.act(seen["observation"], seen["action_mask"], np.random.default_rng(7))
    assert first == again and seen["action_mask"][first]
    other = make_raw("llama_party_v0", num_players=2)
    other.reset(seed=4)
    elsewhere = other.observe(other.agent_selection)
    with pytest.raises(ValueError, match="the env the policy was made with"):
        policy.act(elsewhere["observation"], elsewhere["action_mask"], np.random.default_rng(0))


def test_game_for_env_refuses_options_openspiel_cannot_hold():
    with pytest.raises(ValueError, match="max_rounds"):
        tos.game_for_env(make_raw("pilipili_v0", num_players=2, max_rounds=None))


def test_openspiel_bots_seated_in_tableenvs_evaluation():
    """An OpenSpiel bot in ``tableenvs.evaluation.evaluate``, named as ``tableenvs eval --policies`` names it."""
    import tableenvs.evaluation as evaluation

    result = evaluation.evaluate(
        "llama_party_v0", ["openspiel:mcts:sims=6:depth=10", "random"], games=2, num_players=2, seed=0
    )
    assert len(result.records) == 2
    assert all(record.decisions == 88 for record in result.records)
