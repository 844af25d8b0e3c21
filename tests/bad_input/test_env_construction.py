"""Bad constructor options, by table: each case names the exception type and the words its message must hold
(the parameter, the value, what is allowed). Also: numpy integers are accepted wherever integers are."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import tableenvs
from tableenvs.decks import DeckError
from tableenvs.testing import per_game
from tableenvs.training.single_agent import SingleAgentEnv
from tests.bad_input.helpers_bad_input import GAMES, assert_clear_error

#: Bad constructor options of each game: (options, exception type, words the message must contain).
BAD_OPTIONS = {
    "pilipili_v0": [
        ({"num_players": 9}, ValueError, ["num_players", "2..8", "9"]),
        ({"num_players": "4"}, ValueError, ["num_players", "'4'", "integer"]),
        ({"num_players": 4.0}, ValueError, ["num_players", "4.0", "integer"]),
        ({"num_players": True}, ValueError, ["num_players", "True", "integer"]),
        ({"missions": "bogus"}, ValueError, ["missions", "'bogus'", "'standard'", "'none'"]),
        ({"missions": 7}, ValueError, ["missions", "7", "'standard'", "'none'"]),
        ({"expert": "yes"}, ValueError, ["expert", "'yes'", "True or False"]),
        ({"reward": "score"}, ValueError, ["reward", "'score'", "'penalty'", "'win'"]),
        ({"max_rounds": 0}, ValueError, ["max_rounds", ">= 1", "0"]),
        ({"max_rounds": 2.5}, ValueError, ["max_rounds", "2.5", "integer"]),
        ({"render_mode": "rgb"}, ValueError, ["render_mode", "'rgb'", "'ansi'", "'human'"]),
        ({"players": 4}, TypeError, ["'players'", "num_players", "missions"]),
    ],
    "llama_party_v0": [
        ({"num_players": 5}, ValueError, ["num_players", "2..4", "5"]),
        ({"num_players": np.float64(3)}, ValueError, ["num_players", "3.0", "integer"]),
        ({"deck": 42}, DeckError, ["deck", "int", "32 card tables"]),
        ({"deck": "no/such/deck.toml"}, DeckError, ["no/such/deck.toml", "does not exist"]),
        ({"reward": "points"}, ValueError, ["reward", "'points'", "'score'", "'win'"]),
        ({"colour": "red"}, TypeError, ["'colour'", "num_players", "deck"]),
    ],
    "rummikub_v0": [
        ({"num_players": 1}, ValueError, ["num_players", "2..4", "1"]),
        ({"min_initial": "x"}, ValueError, ["min_initial", "'x'", "integer"]),
        ({"pool_exhausted": "x"}, ValueError, ["pool_exhausted", "'lowest_rack'", "'draw'"]),
        ({"games_per_episode": 0}, ValueError, ["games_per_episode", ">= 1", "0"]),
        ({"max_turns": 0}, ValueError, ["max_turns", ">= 1", "0"]),
        ({"strict_commit": 1}, ValueError, ["strict_commit", "1", "True or False"]),
    ],
}
CONSTRUCTION_CASES = [(game, *case) for game, cases in per_game(BAD_OPTIONS, "builtin").items() for case in cases]


@pytest.mark.parametrize(("game", "options", "error", "names"), CONSTRUCTION_CASES)
def test_bad_constructor_option(game, options, error, names):
    assert_clear_error(error, names, lambda: tableenvs.make(game, **options))
    assert_clear_error(error, names, lambda: tableenvs.make_raw(game, **options))


@pytest.mark.parametrize("game", GAMES)
def test_unknown_option_of_single_agent_env_lists_wrapper_options_too(game):
    registry_id = tableenvs.spec(game).registry_id
    names = ["'oponents'", "num_players", "opponents", "seat"]
    assert_clear_error(TypeError, names, lambda: gymnasium.make(registry_id, oponents="random"))
    assert_clear_error(TypeError, names, lambda: SingleAgentEnv(game, oponents="random"))


SINGLE_AGENT_CASES = [
    ({"seat": "left"}, ValueError, ["seat", "'left'", "'rotate'", "'random'"]),
    ({"seat": 9}, ValueError, ["seat", "9", "0..3"]),
    ({"seat": True}, ValueError, ["seat", "True"]),
    ({"opponents": "greedy"}, ValueError, ["'greedy'", "random", "heuristic"]),
    ({"opponents": ["random"]}, ValueError, ["opponents", "3", "got 1"]),
    ({"render_mode": "rgb"}, TypeError, ["render_mode", "'rgb'", "'ansi'", "'rgb_array'"]),
]


@pytest.mark.parametrize(("options", "error", "names"), SINGLE_AGENT_CASES)
def test_bad_single_agent_option(options, error, names):
    assert_clear_error(error, names, lambda: SingleAgentEnv("llama_party_v0", num_players=4, **options))


NUMPY_INT_OPTIONS = per_game(
    {
        "pilipili_v0": {"num_players": np.int64(4), "max_rounds": np.int32(7)},
        "llama_party_v0": {"num_players": np.int64(3)},
        "rummikub_v0": {
            "num_players": np.int64(3),
            "min_initial": np.int16(20),
            "games_per_episode": np.int64(2),
            "max_turns": np.uint16(300),
        },
    },
    "builtin",
)


@pytest.mark.parametrize("game", GAMES)
def test_numpy_integers_are_accepted_wherever_integers_are(game):
    options = NUMPY_INT_OPTIONS[game]
    plain = {key: int(value) for key, value in options.items()}
    env, reference = tableenvs.make(game, **options), tableenvs.make(game, **plain)
    env.reset(seed=np.int64(3))
    reference.reset(seed=3)
    assert env.num_agents == reference.num_agents == int(options["num_players"])
    agent = env.agent_selection
    assert agent == reference.agent_selection
    observation = env.observe(agent)
    np.testing.assert_array_equal(observation["observation"], reference.observe(agent)["observation"])
    action = np.int64(np.flatnonzero(observation["action_mask"])[0])
    env.step(action)  # a numpy integer action is accepted
    reference.step(int(action))
    assert env.agent_selection == reference.agent_selection
    # the single-agent view: numpy integers for the game's options, the seat and the seed
    single = SingleAgentEnv(game, seat=np.int64(1), **options)
    single_reference = SingleAgentEnv(game, seat=1, **plain)
    obs, info = single.reset(seed=np.int64(5))
    reference_obs, _ = single_reference.reset(seed=5)
    assert info["seat"] == 1
    np.testing.assert_array_equal(obs, reference_obs)
    single.step(np.int64(np.flatnonzero(single.action_masks())[0]))
