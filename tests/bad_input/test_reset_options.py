"""Bad ``reset(seed=..., options=...)``, by table; and a reset that raises leaves the env exactly as it was.

Each case names the exception type and the words its message must hold (the option, and the value or what is
allowed). The second half plays some moves, takes a deepcopy, makes a bad reset, and checks that observe, last,
the masks and further steps go on exactly as in the copy, for raw and wrapped envs of every game, mid-game and
after the game has ended.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import tableenvs
from tableenvs.testing import per_game
from tests.bad_input.helpers_bad_input import GAMES, assert_clear_error, play_steps

SEED_CASES = [
    ("x", ["seed", "'x'", "non-negative integer"]),
    (-1, ["seed", "-1", "non-negative integer"]),
    (1.5, ["seed", "1.5", "non-negative integer"]),
    (True, ["seed", "True", "non-negative integer"]),
    ([1, 2], ["seed", "[1, 2]", "non-negative integer"]),
]

#: Bad reset options of each game: (options, words the ValueError message must contain); every game has 4 players.
BAD_OPTIONS = {
    "pilipili_v0": [
        ({"dealer": 9}, ["dealer", "0..3", "9"]),
        ({"dealer": "0"}, ["dealer", "'0'", "integer"]),
        ({"chilis": [1]}, ["chilis", "4", "[1]"]),
        ({"chilis": [0, 0, 0, 9]}, ["chilis[3]", "0..5", "9"]),
        ({"chilis": 3}, ["chilis", "3"]),
        ({"mission": 999}, ["mission", "999", "'none'"]),
        ({"mission": True}, ["mission", "True", "'none'"]),
        ({"mission": 5.0}, ["mission", "5.0", "'none'"]),
        ({"mission": {"id": 1, "hand_size": 5.0, "expert": False, "effects": []}}, ["hand_size", "5.0"]),
        ({"mission": 0, "hands": [[1], [2], [3], [4]]}, ["hands", "5"]),
        ({"hands": 5}, ["hands", "5"]),
        ({"hands": [[1.0, 2, 3, 4, 5]] * 4}, ["hands[0]", "1.0", "integer"]),
        ({"deck_order": [0] * 56}, ["deck_order", "each exactly once"]),
        ({"deck_order": "abc"}, ["deck_order", "'abc'"]),
        ({"deck_order": list(range(55)) + [99]}, ["deck_order[55]", "0..55", "99"]),
    ],
    "llama_party_v0": [
        ({"hands": [[0] * 8] * 4}, ["hands", "every card exactly once"]),
        ({"hands": "A1"}, ["hands", "'A1'"]),
        ({"hands": [list(range(8 * i, 8 * i + 8)) for i in range(3)] + [["Z9"] * 8]}, ["'Z9'"]),
        ({"totals": [1, 2]}, ["totals", "4", "[1, 2]"]),
        ({"totals": [0, 0, 0, 0.5]}, ["totals[3]", "0.5", "integer"]),
        ({"round": 9}, ["round", "1..4", "9"]),
        ({"dummy_feeds": 1}, ["dummy_feeds", "3 players"]),
    ],
    "rummikub_v0": [
        ({"racks": [["red 5"]]}, ["racks", "4", "tile lists"]),
        ({"racks": [["purple 5"], ["red 1"], ["red 2"], ["red 3"]]}, ["racks[0]", "'purple 5'"]),
        ({"racks": [[7.0], ["red 1"], ["red 2"], ["red 3"]]}, ["racks[0]", "7.0", "integer"]),
        ({"table": ["red 1"]}, ["table", "not valid"]),
        ({"pool": ["red 1"]}, ["pool", "racks"]),
        ({"first_player": 9}, ["first_player", "0..3", "9"]),
        ({"opened": [1, 0, 0, 0]}, ["opened[0]", "True or False", "1"]),
    ],
}
OPTION_CASES = [(game, *case) for game, cases in per_game(BAD_OPTIONS, "builtin").items() for case in cases]

#: Bad resets tried on a game in progress and on an ended game (a bad seed, bad options, both together).
BAD_RESETS = per_game(
    {
        "pilipili_v0": [
            {"seed": "x"},
            {"seed": 3, "options": {"hands": [[1, 2, 3, 4, 5]] * 4}},
            {"options": {"deck_order": [0] * 56}},
            {"options": {"mission": 999}},
            {"options": {"dealer": 1, "chilis": [0, 0, 0, 9]}},
        ],
        "llama_party_v0": [
            {"seed": -1},
            {"seed": 3, "options": {"hands": [[0] * 8] * 4}},
            {"options": {"totals": [0, 0, 0, 0.5]}},
            {"options": {"round": 2, "dummy_feeds": 1}},
        ],
        "rummikub_v0": [
            {"seed": 1.5},
            {"seed": 3, "options": {"table": ["red 1"]}},
            {"options": {"racks": [["red 5"], ["red 1"], ["red 2"], ["joker", "joker", "joker"]]}},
            {"options": {"first_player": 0, "opened": [1, 0, 0, 0]}},
        ],
    },
    "builtin",
)
#: Options of a short game: Pili Pili and Rummikub cut short, Llama Party played out.
SHORT_GAME = per_game(
    {"pilipili_v0": {"max_rounds": 1}, "llama_party_v0": {}, "rummikub_v0": {"max_turns": 6}}, "builtin"
)


@pytest.mark.parametrize("seed, names", SEED_CASES)
@pytest.mark.parametrize("game", GAMES)
def test_bad_seed(game, seed, names):
    assert_clear_error(ValueError, names, lambda: tableenvs.make_raw(game).reset(seed=seed))
    assert_clear_error(ValueError, names, lambda: tableenvs.make(game).reset(seed=seed))


@pytest.mark.parametrize(("game", "options", "names"), OPTION_CASES)
def test_bad_reset_option(game, options, names):
    env = tableenvs.make_raw(game, num_players=4)
    assert_clear_error(ValueError, names, lambda: env.reset(seed=0, options=options))


@pytest.mark.parametrize("game", GAMES)
def test_options_must_be_a_dict(game):
    env = tableenvs.make_raw(game)
    assert_clear_error(ValueError, ["options", "dict", "'hands'"], lambda: env.reset(options="hands"))


def _snapshot(env) -> tuple:
    """Everything an agent loop can read from ``env``: every observation and mask, last(), the bookkeeping."""
    raw = env.unwrapped
    observations = [env.observe(agent) for agent in raw.possible_agents]
    last = None
    if raw.agents:  # last() is PettingZoo's, for an agent still in the game
        obs, reward, terminated, truncated, info = env.last()
        last = (obs["observation"].tolist(), reward, terminated, truncated, repr(info))
    return (
        [o["observation"].tolist() for o in observations],
        [o["action_mask"].tolist() for o in observations],
        last,
        list(raw.agents),
        raw.agent_selection,
        dict(raw.rewards),
        dict(raw._cumulative_rewards),
        dict(raw.terminations),
        dict(raw.truncations),
        list(raw.event_log),
    )


def _play_on_together(env, twin, steps: int) -> None:
    """Step ``env`` and ``twin`` with the same moves (dead steps included) and compare after every step."""
    rng = np.random.default_rng(11)
    for _ in range(steps):
        assert _snapshot(env) == _snapshot(twin)
        if not env.agents:
            break
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            action = None
        else:
            action = int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"])))
        env.step(action)
        twin.step(action)
    # a later good reset with the same seed also deals the same
    env.reset(seed=5)
    twin.reset(seed=5)
    assert _snapshot(env) == _snapshot(twin)


BAD_RESET_CASES = [(game, bad) for game, bads in BAD_RESETS.items() for bad in bads]


@pytest.mark.parametrize("wrapped", [False, True], ids=["raw", "wrapped"])
@pytest.mark.parametrize(("game", "bad"), BAD_RESET_CASES)
def test_failed_reset_mid_game_leaves_the_env_as_it_was(game, bad, wrapped):
    env = (tableenvs.make if wrapped else tableenvs.make_raw)(game, num_players=4)
    env.reset(seed=1)
    play_steps(env, 25)
    twin = copy.deepcopy(env)
    with pytest.raises(ValueError):
        env.reset(**bad)
    _play_on_together(env, twin, 40)


@pytest.mark.parametrize(("game", "bad"), BAD_RESET_CASES)
def test_failed_reset_after_the_game_ended_keeps_it_ended(game, bad):
    env = tableenvs.make_raw(game, num_players=4, **SHORT_GAME[game])
    env.reset(seed=2)
    play_steps(env, 10_000)
    agent = env.agent_selection
    assert env.terminations[agent] or env.truncations[agent]
    twin = copy.deepcopy(env)
    with pytest.raises(ValueError):
        env.reset(**bad)
    assert not env.action_masks().any()  # still over: no legal move, no second game in the episode
    _play_on_together(env, twin, 10)


@pytest.mark.parametrize("game", GAMES)
def test_failed_first_reset_still_asks_for_reset(game):
    env = tableenvs.make_raw(game)
    with pytest.raises(ValueError):
        env.reset(seed=-1)
    assert_clear_error(RuntimeError, ["reset() first"], lambda: env.observe("player_0"))
    wrapped = tableenvs.make(game)
    with pytest.raises(ValueError):
        wrapped.reset(seed=-1)
    with pytest.raises(AttributeError, match="agent_selection cannot be accessed before reset"):
        wrapped.agent_selection  # noqa: B018 - PettingZoo's OrderEnforcingWrapper still refuses: no reset happened
    wrapped.reset(seed=0)
    assert wrapped.agent_selection in wrapped.agents
