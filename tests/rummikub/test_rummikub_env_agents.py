"""The greedy Rummikub agent plays the solver's best play and beats random (legality and the docs table:
tests/test_conformance.py)."""

import numpy as np

from tableenvs.policies import RandomPolicy, make_policy
from tableenvs.rummikub.encoder import COMMIT, DRAW
from tableenvs.rummikub.env import raw_env
from tableenvs.rummikub.rules import parse_tiles
from tableenvs.rummikub.solver import solve


def test_heuristic_is_found_by_make_policy():
    policy = make_policy("heuristic", raw_env(num_players=2))
    assert type(policy).__name__ == "HeuristicPolicy" and policy.name == "heuristic"
    assert isinstance(make_policy("random", raw_env()), RandomPolicy)


def run_turn(e, policy):
    """Let ``policy`` play the current player's whole turn; return the tiles it placed (count vector)."""
    seat = e.game.to_act
    before = e.game.racks[seat].copy()
    while e.game.to_act == seat and not e.game.over:
        observation = e.observe(e.agent_selection)
        action = policy.act(observation["observation"], observation["action_mask"], np.random.default_rng(0))
        e.step(action)
        if action in (COMMIT, DRAW):
            break
    return before - e.game.racks[seat]


def test_greedy_opens_by_value_then_plays_most_tiles():
    racks = [
        # found by search: the most points (5 tiles, 61 with the joker at 30) are not the most tiles (6, 56)
        ["black 2", "black 3", "black 8", "black 13", "orange 6", "orange 7", "orange 8", "orange 10", "joker"],
        ["black 2", "black 3"],
    ]
    e = raw_env(num_players=2)
    e.reset(seed=0, options={"racks": racks, "first_player": 0})
    policy = make_policy("heuristic", e)
    rack = parse_tiles("rack", racks[0])
    expected = solve(np.zeros(53, np.int64), rack, objective="value", opening=True).played
    placed = run_turn(e, policy)
    assert np.array_equal(placed, expected) and e.game.opened[0]
    assert not np.array_equal(expected, solve(np.zeros(53, np.int64), rack, objective="tiles", opening=True).played)
    run_turn(e, policy)  # player_1 draws: it has no opening
    assert e.game.racks[1].sum() == 3


def test_greedy_plays_most_tiles_once_opened():
    table = ["red 1", "red 2", "red 3"]
    rack = ["red 4", "red 5", "black 7", "blue 7", "orange 7", "joker", "blue 1", "orange 12"]
    e = raw_env(num_players=2)
    e.reset(seed=0, options={"racks": [rack, ["black 2"]], "table": table, "first_player": 0, "opened": [True, True]})
    expected = solve(parse_tiles("t", table), parse_tiles("r", rack), objective="tiles").played
    placed = run_turn(e, make_policy("heuristic", e))
    assert np.array_equal(placed, expected) and placed.sum() == 7


def test_greedy_draws_without_a_play():
    e = raw_env(num_players=2)
    e.reset(seed=0, options={"racks": [["red 1", "blue 7"], ["black 2"]], "first_player": 0})
    observation = e.observe("player_0")
    assert make_policy("heuristic", e).act(observation["observation"], observation["action_mask"], None) == DRAW


def play_match(seed: int, heuristic_seat: int) -> tuple[int, ...]:
    e = raw_env(num_players=2)
    e.reset(seed=seed)
    policies = [make_policy("random", e), make_policy("random", e)]
    policies[heuristic_seat] = make_policy("heuristic", e)
    rng = np.random.default_rng(seed)
    while not (e.game.over or e.game.truncated):
        observation = e.observe(e.agent_selection)
        e.step(policies[e.game.to_act].act(observation["observation"], observation["action_mask"], rng))
    return e.game.results[-1].winners if e.game.results else ()


def test_greedy_beats_random_two_players():
    games = 40
    wins = sum(seed % 2 in play_match(seed, seed % 2) for seed in range(games))
    assert wins / games > 0.55, f"greedy won {wins} of {games}"
