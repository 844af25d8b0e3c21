"""``sample_world`` against exact enumeration on small configurations of each game (chi-square).

Each test fixes a small position, enumerates what the worlds consistent with the agent's view can hold in one hidden
place (with the probability each has when every consistent assignment of the unseen cards is equally likely), samples
worlds with a seeded generator and compares the counts by Pearson's chi-square test. The seeds are fixed, so each
p-value is a fixed number (printed with ``-s``); a sampler that keeps part of the real deal, or weighs the worlds
unevenly, gives p-values near 0.
"""

from __future__ import annotations

import itertools
from collections import Counter
from math import comb, prod

import numpy as np
from scipy.stats import chisquare

import tableenvs
from tableenvs.pilipili.worlds import _plays_were_extremes, _unseen_hidden_cards
from tableenvs.rummikub.rules import FULL_SET
from tableenvs.rummikub.tiles import TILE_TYPES

P_MIN = 1e-3


def chi_square(observed: Counter, expected: dict, samples: int) -> float:
    keys = sorted(expected)
    assert set(observed) <= set(keys), set(observed) - set(keys)  # no sample outside the consistent worlds
    counts = [observed.get(key, 0) for key in keys]
    result = chisquare(counts, [samples * expected[key] for key in keys])
    print(f"chi-square {result.statistic:.1f}, {len(keys) - 1} dof, p = {result.pvalue:.3f}")
    return float(result.pvalue)


def test_pilipili_highest_or_lowest_against_enumeration():
    """2 players, highest-or-lowest, three tricks played: the other's 2 cards left must keep each of its 3 plays
    the highest or lowest number card it then held. Every legal pair of the 48 unseen cards is equally likely."""
    deck = [{"id": 1, "hand_size": 5, "expert": True, "effects": [{"type": "highest_or_lowest"}]}]
    env = tableenvs.make_raw("pilipili_v0", num_players=2, missions=deck, max_rounds=1)
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    while env.game.tricks_played < 3:
        env.step(int(rng.choice(env.legal_actions())))
    game, seat = env.game, env.current_seat
    other = 1 - seat
    unseen = _unseen_hidden_cards(game, seat)
    hand = game.hands[other]
    legal = []
    for pair in itertools.combinations(sorted(unseen), len(hand)):
        if _plays_were_extremes(game, other, dict(zip(hand, pair, strict=True))):  # the other holding ``pair``
            legal.append(pair)
    assert 50 < len(legal) < comb(len(unseen), len(hand))  # constrained, not trivially
    samples = 20 * len(legal)
    agent = env.possible_agents[seat]
    draw = np.random.default_rng(2026)
    observed = Counter(tuple(sorted(env.sample_world(agent, draw).game.hands[other])) for _ in range(samples))
    assert chi_square(observed, {pair: 1 / len(legal) for pair in legal}, samples) > P_MIN


def test_llama_party_goal_and_own_goal_position_against_enumeration():
    """4 players after the goal step, one goal face up: the goal placement is a uniform order of the 4 slots given
    whether the face-up goal is player_0's; player_1's goal is the face-up one if it is at position 0, else any of
    the 23 cards player_0 has not seen; the joint law of (player_1's goal, player_0's goal position) is enumerated
    over the 24 orders."""
    env = tableenvs.make_raw("llama_party_v0", num_players=4)
    env.reset(seed=3)
    for _ in range(4):  # the four goal choices
        env.step(int(env.legal_actions()[0]))
    game = env.game
    assert game.step == 1
    own, up = game.goal_of_slot[0], game.display[0]
    unseen = [card for card in range(32) if card not in {*game.hands[0], own, up}]
    orders = [order for order in itertools.permutations(range(4)) if (order[0] == 0) == (up == own)]
    expected: dict = Counter()
    for order in orders:
        position = order.index(0)
        if order[0] == 1:
            expected[(up, position)] += 1 / len(orders)
        else:
            for card in unseen:
                expected[(card, position)] += 1 / len(orders) / len(unseen)
    samples = 40 * len(expected)
    draw = np.random.default_rng(2026)
    observed = Counter()
    for _ in range(samples):
        world = env.sample_world("player_0", draw).game
        observed[(world.goal_of_slot[1], world.display.index(world.goal_of_slot[0]))] += 1
    assert chi_square(observed, dict(expected), samples) > P_MIN


def test_rummikub_other_rack_against_enumeration():
    """2 players, scripted so that only 13 tiles are unseen by player_0: player_1's 3 tiles are every multiset of
    them with its multivariate hypergeometric probability (each assignment of the 13 tiles equally likely)."""
    tiles = np.repeat(np.arange(TILE_TYPES), FULL_SET)
    order = np.random.default_rng(11).permutation(tiles)
    other, pool, own = order[:3].tolist(), order[3:13].tolist(), order[13:].tolist()
    env = tableenvs.make_raw("rummikub_v0", num_players=2)
    env.reset(seed=1, options={"racks": [own, other], "pool": pool, "first_player": 0})
    unseen = Counter(other + pool)
    expected = {}
    types = sorted(unseen)
    for rack in itertools.combinations_with_replacement(types, 3):
        need = Counter(rack)
        if all(need[t] <= unseen[t] for t in need):
            expected[rack] = prod(comb(unseen[t], k) for t, k in need.items()) / comb(13, 3)
    assert abs(sum(expected.values()) - 1) < 1e-12
    samples = 15_000
    draw = np.random.default_rng(2026)
    observed = Counter()
    for _ in range(samples):
        rack = env.sample_world("player_0", draw).game.racks[1]
        observed[tuple(np.repeat(np.arange(TILE_TYPES), rack).tolist())] += 1
    assert chi_square(observed, expected, samples) > P_MIN


def test_llama_party_2p_dummy_draw_against_enumeration():
    """2 players after pass 1: player_0's 4 passed cards went into the dummy (7 cards), and player_1 drew 4 of those
    11 at random; nothing player_0 saw since depends on which, so the number of its passed cards in player_1's hand
    is hypergeometric (an earlier sampler kept the real number)."""
    env = tableenvs.make_raw("llama_party_v0", num_players=2)
    env.reset(seed=4)
    while not (env.game.step == 2 and env.game.to_act == 0):
        env.step(int(env.legal_actions()[0]))
    passed = set(env.game.passed[0])
    expected = {j: comb(4, j) * comb(7, 4 - j) / comb(11, 4) for j in range(5)}
    samples = 3000
    draw = np.random.default_rng(2026)
    observed = Counter(len(passed & set(env.sample_world("player_0", draw).game.hands[1])) for _ in range(samples))
    assert chi_square(observed, expected, samples) > P_MIN
