"""The Pili Pili heuristic plays sensibly and beats random play (its legality: tests/test_conformance.py)."""

import numpy as np
from helpers_pilipili import bid, effect, play, run, scripted

from tableenvs.pilipili.agents import HeuristicPolicy
from tableenvs.pilipili.env import raw_env
from tableenvs.policies import RandomPolicy, make_policy, play_game


def act(env, agent=None):
    policy = HeuristicPolicy(env)
    agent = agent or env.agent_selection
    observation = env.observe(agent)
    return policy.act(observation["observation"], observation["action_mask"], np.random.default_rng(0))


def test_make_policy_finds_the_heuristic():
    assert isinstance(make_policy("heuristic", raw_env(num_players=3)), HeuristicPolicy)


def test_bids_follow_card_strength():
    env = scripted(3, [[53, 54, 55], [1, 2, 3], [20, 21, 22]])
    assert act(env) == bid(3)
    run(env, bid(3))
    assert act(env) == bid(0)
    env = scripted(3, [[53, 54, 55], [1, 2, 3], [20, 21, 22]], effect("reversed_values"))
    assert act(env) == bid(0)


def test_hidden_hand_bids_the_average():
    env = scripted(3, [[53, 54, 55, 52, 51, 50], [1, 2, 3, 4, 5, 6], [20, 21, 22, 23, 24, 25]], effect("blind"))
    assert act(env) == bid(2)  # 6 cards / 3 players


def test_plays_the_cheapest_winner_when_last_and_its_weakest_card_once_its_bid_is_met():
    env = scripted(3, [[10, 40, 50], [30, 5, 6], [20, 41, 1]], dealer=1)
    run(env, bid(0), bid(0), bid(1))  # bidding order: player_1, player_2, player_0
    run(env, play(30), play(20))
    assert act(env) == play(40)  # needs a trick and plays last: the cheapest card beating 30
    run(env, play(40))
    assert env.agent_selection == "player_0"
    assert act(env) == play(10)  # bid met, leading: its weakest card


def test_ducks_with_the_strongest_card_that_still_loses():
    env = scripted(3, [[10, 40, 50], [45, 5, 6], [20, 41, 1]], dealer=1)
    run(env, bid(0), bid(0), bid(2))
    run(env, play(45), play(20))
    env.game.tricks_won[0] = 2  # pretend the bid is met: the heuristic must now avoid winning
    env.game.bids[0] = 2
    env._mask = None
    assert act(env) == play(40)


def test_wild_declared_strongest_when_needing_a_trick_and_weakest_otherwise():
    env = scripted(2, [[0, 3], [50, 2]], dealer=1)
    run(env, bid(1), bid(2), play(50))
    assert act(env) == play(0, 56)  # needs tricks, no number card wins: the wild as 56
    env = scripted(2, [[0, 3], [50, 2]], dealer=1)
    run(env, bid(0), bid(0), play(50))
    assert act(env) == play(3)  # wants to lose and the 3 loses: keeps the wild
    env = scripted(2, [[0, 3], [50, 2]], dealer=1)
    run(env, bid(0), bid(0), play(2))
    assert act(env) == play(0, 0)  # every number card would win: the wild declared 0 loses
    env = scripted(2, [[0, 3], [50, 2]], effect("reversed_values"), dealer=1)
    run(env, bid(1), bid(2), play(2))
    assert act(env) == play(0, 0)  # reversed: 0 is the strongest value


def test_heuristic_beats_random_clearly():
    """One heuristic seat (rotating) against four random seats; the full 1,000-game figure is in the docs."""
    games, n = 150, 5
    env = raw_env(num_players=n)
    heuristic, random_policy = HeuristicPolicy(env), RandomPolicy(env)
    rng = np.random.default_rng(7)
    share, mine, theirs = [], [], []
    for g in range(games):
        seat = g % n
        seats = [heuristic if s == seat else random_policy for s in range(n)]
        play_game(env, seats, seed=1000 + g, rng=rng)
        game = env.game
        share.append(1 / len(game.winners) if seat in game.winners else 0.0)
        mine.append(game.chilis[seat] / game.rounds_completed)
        theirs.append(np.mean([game.chilis[s] for s in range(n) if s != seat]) / game.rounds_completed)
    assert np.mean(share) > 0.5  # a fair share is 0.2
    assert np.mean(mine) < 0.5 * np.mean(theirs)
