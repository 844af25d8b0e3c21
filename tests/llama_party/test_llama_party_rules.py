"""Scripted Llama Party rules: scoring, passing (with dummies), goal placement, game end and tie-break."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tableenvs.llama_party.cards import LETTERS, load_cards
from tableenvs.llama_party.env import raw_env
from tableenvs.llama_party.rules import (
    LlamaParty,
    combo_copies,
    goal_points,
    hand_score,
    letter_counts,
    passing_ring,
    place_goals,
    winners,
)


def make_deck(letters="ABCDEFGH" * 4, top=("A", 1), combo=("AB", 0), rules=None):
    """A 32-card deck list: card i has letter ``letters[i]`` and, unless ``rules[i]`` = (top, combo) says
    otherwise, the same rules ``top`` = (letter, points) and ``combo`` = (combo, points)."""
    rules = rules or {}
    cards = []
    for i, letter in enumerate(letters):
        (top_letter, top_points), (combo_text, combo_points) = rules.get(i, (top, combo))
        cards.append(
            {
                "id": f"c{i}",
                "letter": letter,
                "top": {"letter": top_letter, "points": top_points},
                "bottom": {"combo": combo_text, "points": combo_points},
            }
        )
    return cards


def cards_of(deck, letters):
    """Card indices whose letters spell ``letters`` (first unused card of each letter)."""
    used, result = set(), []
    for letter in letters:
        card = next(c.index for c in deck if c.letter_name == letter and c.index not in used)
        used.add(card)
        result.append(card)
    return result


FLAT_DECK = make_deck(letters="A" * 32, top=("A", 1), combo=("AB", 5))  # every hand scores 4 x 7 = 28

# ------------------------------------------------------------------------------------------ scoring

DECK = load_cards(
    make_deck(
        rules={
            0: (("D", 2), ("DF", 5)),
            1: (("A", 3), ("AABB", 10)),
            2: (("H", -2), ("GH", -4)),
            3: (("D", 2), ("DF", 5)),  # same rules as card 0: a repeated goal
            4: (("B", 1), ("ABC", 7)),
        }
    )
)


def counts(letters):
    return [letters.count(letter) for letter in LETTERS]


@pytest.mark.parametrize(
    ("hand", "copies"),
    [("DDFF", 2), ("DFF", 1), ("DF", 1), ("DDDFFFA", 3), ("DDD", 0), ("", 0), ("FFFFD", 1)],
)
def test_df_copies_use_each_card_once(hand, copies):
    need = DECK[0].combo_need
    assert combo_copies(need, counts(hand)) == copies
    assert goal_points(DECK[0], counts(hand)) == 2 * hand.count("D") + 5 * copies


@pytest.mark.parametrize(("hand", "copies"), [("AABB", 1), ("AAABBBB", 1), ("AAAABBB", 1), ("AABBAAB", 1), ("AB", 0)])
def test_aabb_needs_two_of_each_per_copy(hand, copies):
    assert combo_copies(DECK[1].combo_need, counts(hand)) == copies


def test_aabb_twice_with_four_of_each():
    assert combo_copies(DECK[1].combo_need, counts("AAAABBBB")) == 2


def test_top_rule_counts_each_matching_card_including_negative_points():
    assert goal_points(DECK[1], counts("AAACDEF")) == 3 * 3
    assert goal_points(DECK[2], counts("HHHABCD")) == -2 * 3
    assert goal_points(DECK[2], counts("GGHHACD")) == -2 * 2 - 4 * 2  # GH twice, negative


def test_hand_score_sums_goals_independently_same_card_across_goals():
    hand = cards_of(DECK, "DDFFABC")
    # card 0: 2/D x2 + DF x2 = 4 + 10; card 1: 3/A x1 + AABB 0 = 3; card 4: 1/B x1 + ABC x1 = 8
    assert hand_score(hand, [0, 1, 4, 2], DECK) == 14 + 3 + 8 + 0
    assert letter_counts(hand, DECK) == counts("DDFFABC")


def test_repeated_goals_score_again():
    hand = cards_of(DECK, "DDFFABC")
    single = hand_score(hand, [0], DECK)
    assert hand_score(hand, [0, 3], DECK) == 2 * single  # two cards with the same rules
    assert hand_score(hand, [0, 3, 0, 3], DECK) == 4 * single


def test_round_scoring_through_the_engine_uses_all_four_displayed_goals():
    game = LlamaParty(DECK, 2)
    game.start(np.random.default_rng(0))
    game.hands[0] = cards_of(DECK, "DDFFABC")
    game.hands[1] = cards_of(DECK, "GGHHEEE")
    game.display = [0, 3, 2, 4]
    game.round_number = 1
    scores = game.end_round()
    assert scores == [14 + 14 + 0 + 8, 0 + 0 + (-4 - 8) + 0]
    assert game.totals == scores and game.round_scores == [scores]


# ------------------------------------------------------------------------------------------ passing

STANDARD_HANDS = [list(range(slot * 8, slot * 8 + 8)) for slot in range(4)]


def play_goal_step(env, goals):
    for seat, goal in enumerate(goals):
        assert env.game.to_act == seat and env.game.step == 0
        env.step(goal)


def pass_cards(env, picks_by_seat):
    for seat, picks in enumerate(picks_by_seat):
        for card in picks:
            assert env.game.to_act == seat
            env.step(card)


def test_four_players_pass_to_the_left_after_everyone_picked():
    env = raw_env(num_players=4)
    env.reset(seed=0, options={"hands": STANDARD_HANDS})
    play_goal_step(env, [0, 8, 16, 24])
    game = env.game
    assert game.step == 1 and len(game.revealed) == 1
    picks = [[1, 2, 3, 4], [9, 10, 11, 12], [17, 18, 19, 20], [25, 26, 27, 28]]
    pass_cards(env, picks[:3])
    assert game.step == 1 and game.staged[2] == picks[2]  # nothing moved yet
    pass_cards(env, [[]] * 3 + [picks[3]])
    assert game.step == 2 and len(game.revealed) == 2
    for seat in range(4):
        right = (seat - 1) % 4
        assert sorted(game.hands[seat]) == sorted(set(STANDARD_HANDS[seat][1:]) - set(picks[seat]) | set(picks[right]))
        assert game.passed[seat] == picks[seat] and game.received[seat] == picks[right]
        assert len(game.hands[seat]) == 7


def test_two_players_pass_through_dummies():
    assert passing_ring(2) == (0, 2, 1, 3)  # P0 -> D0 -> P1 -> D1 -> P0
    sources = set()
    for seed in range(30):
        env = raw_env(num_players=2)
        env.reset(seed=seed, options={"hands": STANDARD_HANDS})
        game = env.game
        dummy0_before = list(game.hands[2])
        dummy1_before = list(game.hands[3])
        assert len(dummy0_before) == 7 and game.goal_of_slot[2] in STANDARD_HANDS[2]
        play_goal_step(env, [0, 8])
        picks = [[1, 2, 3, 4], [9, 10, 11, 12]]
        pass_cards(env, picks)
        # P1 drew 4 cards at random from D0 after P0's 4 were shuffled in; P0 drew from D1 likewise
        assert len(game.received[1]) == 4 and set(game.received[1]) <= set(dummy0_before) | set(picks[0])
        assert len(game.received[0]) == 4 and set(game.received[0]) <= set(dummy1_before) | set(picks[1])
        assert sorted(game.hands[2] + game.received[1]) == sorted(dummy0_before + picks[0])
        assert sorted(game.hands[3] + game.received[0]) == sorted(dummy1_before + picks[1])
        assert [len(hand) for hand in game.hands] == [7, 7, 7, 7]
        sources.update("passed" if card in picks[0] else "dummy" for card in game.received[1])
    assert sources == {"passed", "dummy"}


def test_three_players_dummy_sits_right_of_the_fed_player():
    assert passing_ring(3, 1) == (3, 1, 2, 0)  # 0 -> D -> 1 -> 2 -> 0
    env = raw_env(num_players=3)
    env.reset(seed=4, options={"hands": STANDARD_HANDS, "dummy_feeds": 1})
    game = env.game
    dummy_before = list(game.hands[3])
    play_goal_step(env, [0, 8, 16])
    picks = [[1, 2, 3, 4], [9, 10, 11, 12], [17, 18, 19, 20]]
    pass_cards(env, picks)
    assert game.received[2] == picks[1] and game.received[0] == picks[2]
    assert len(game.received[1]) == 4 and set(game.received[1]) <= set(dummy_before) | set(picks[0])
    assert len(game.hands[3]) == 7


def test_three_players_dummy_random_in_round_one_then_feeds_lowest_total():
    fed_round_one = set()
    for seed in range(30):
        env = raw_env(num_players=3)
        env.reset(seed=seed)
        fed_round_one.add(env.game.dummy_feeds)
    assert fed_round_one == {0, 1, 2}
    env = raw_env(num_players=3)
    env.reset(seed=0, options={"round": 2, "totals": [10, 5, 20]})
    assert env.game.dummy_feeds == 1
    tied = set()
    for seed in range(30):
        env.reset(seed=seed, options={"round": 3, "totals": [5, 20, 5]})
        tied.add(env.game.dummy_feeds)
    assert tied == {0, 2}


def test_three_players_dummy_moves_between_rounds_by_totals():
    env = raw_env(num_players=3, deck=FLAT_DECK)  # every hand scores 28 a round
    env.reset(seed=1, options={"totals": [1, 3, 0], "dummy_feeds": 0})
    game = env.game
    assert game.ring == (3, 0, 1, 2)
    while game.round_number == 1:
        env.step(env.legal_actions()[0])
    assert game.totals == [29, 31, 28]
    assert game.dummy_feeds == 2 and game.ring == (3, 2, 0, 1)  # right of the lowest total, seat 2


# ------------------------------------------------------------------------------------------ goal placement


def test_goals_by_totals_highest_leftmost_from_round_two():
    env = raw_env(num_players=4)
    env.reset(seed=0, options={"hands": STANDARD_HANDS, "round": 2, "totals": [30, 10, 20, 0]})
    play_goal_step(env, [0, 8, 16, 24])
    assert env.game.display == [0, 16, 8, 24]
    assert env.game.revealed == [0]


def test_goals_with_equal_totals_are_shuffled_among_themselves():
    orders = set()
    for seed in range(30):
        env = raw_env(num_players=4)
        env.reset(seed=seed, options={"hands": STANDARD_HANDS, "round": 2, "totals": [10, 10, 0, 20]})
        play_goal_step(env, [0, 8, 16, 24])
        display = env.game.display
        assert display[0] == 24 and display[3] == 16
        orders.add(tuple(display[1:3]))
    assert orders == {(0, 8), (8, 0)}


@pytest.mark.parametrize("num_players", [2, 3])
def test_dummy_goals_take_the_rightmost_positions(num_players):
    seen = set()
    for seed in range(20):
        env = raw_env(num_players=num_players)
        totals = [5, 0, 9][:num_players]
        env.reset(seed=seed, options={"hands": STANDARD_HANDS, "round": 2, "totals": totals})
        game = env.game
        play_goal_step(env, [0, 8, 16][:num_players])
        by_total = sorted(range(num_players), key=lambda s: -totals[s])
        assert game.display[:num_players] == [game.goal_of_slot[s] for s in by_total]
        assert set(game.display[num_players:]) == set(game.goal_of_slot[num_players:])
        seen.add(tuple(game.display[num_players:]))
    if num_players == 2:
        assert len(seen) > 2  # the two dummy goals come in either order (and are random cards)


def test_round_one_goals_in_random_order():
    first = set()
    for seed in range(40):
        env = raw_env(num_players=4)
        env.reset(seed=seed, options={"hands": STANDARD_HANDS})
        play_goal_step(env, [0, 8, 16, 24])
        assert sorted(env.game.display) == [0, 8, 16, 24]
        first.add(env.game.display[0])
    assert first == {0, 8, 16, 24}


def test_place_goals_function_directly():
    rng = np.random.default_rng(0)
    assert place_goals(2, [10, 11, 12, 13], 4, [1, 4, 3, 2], rng) == [11, 12, 13, 10]


# ------------------------------------------------------------------------------------------ end and winner


def play_to_end(env, seed=0, options=None):
    env.reset(seed=seed, options=options)
    rewards = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        _, reward, terminated, truncated, _ = env.last()
        rewards[agent] += reward
        env.step(None if terminated or truncated else env.legal_actions()[0])
    return rewards


@pytest.mark.parametrize(("start", "rounds"), [(72, 1), (80, 1), (71, 2), (0, 4)])
def test_game_ends_early_when_a_total_reaches_100(start, rounds):
    env = raw_env(num_players=4, deck=FLAT_DECK)
    rewards = play_to_end(env, options={"totals": [start, 0, 0, 0]})
    game = env.game
    assert len(game.round_scores) == rounds and game.round_number == rounds
    assert game.round_scores == [[28, 28, 28, 28]] * rounds
    assert rewards["player_1"] == 28 * rounds
    assert game.totals[0] == start + 28 * rounds


def test_game_lasts_four_rounds_without_100():
    env = raw_env(num_players=3, deck=make_deck(top=("A", 0), combo=("AB", 0)))
    rewards = play_to_end(env)
    assert env.game.round_number == 4 and len(env.game.round_scores) == 4
    assert rewards == dict.fromkeys(env.possible_agents, 0.0)


def test_starting_in_round_four_plays_one_round():
    env = raw_env(num_players=2, deck=FLAT_DECK)
    play_to_end(env, options={"round": 4})
    assert len(env.game.round_scores) == 1


def test_winners_function_tie_break_by_last_round_then_shared():
    assert winners([50, 70, 60], [10, 0, 30]) == [1]
    assert winners([70, 70, 60], [10, 20, 30]) == [1]
    assert winners([70, 70, 60], [20, 20, 30]) == [0, 1]
    assert winners([5, 5], [-3, -3]) == [0, 1]


def test_tie_on_total_goes_to_the_higher_last_round_score():
    deck = load_cards(make_deck(letters="AB" * 16, top=("A", 1), combo=("AB", 0)))
    game = LlamaParty(deck, 2)
    game.start(np.random.default_rng(0), totals=[22, 18], first_round=4)
    a_cards = [c.index for c in deck if c.letter_name == "A"]
    b_cards = [c.index for c in deck if c.letter_name == "B"]
    game.hands[0] = a_cards[:2] + b_cards[:5]  # 4 goals x 1/A x 2 A = 8
    game.hands[1] = a_cards[2:5] + b_cards[5:9]  # 4 goals x 1/A x 3 A = 12
    game.display = [a_cards[10], a_cards[11], a_cards[12], a_cards[13]]
    # 22 + 8 = 30 = 18 + 12: equal totals, player_1 scored more in the last round
    assert game.end_round() == [8, 12]
    assert game.over and game.totals == [30, 30] and game.winners == [1]


@pytest.mark.parametrize(
    ("totals", "expected"),
    [
        ([10, 10, 0, 0], [0.5, 0.5, -1.0, -1.0]),  # shared win (equal last round too): +1 shared, as in Pili Pili
        ([0, 5, 0, 0], [-1.0, 1.0, -1.0, -1.0]),
        ([3, 3, 3, 3], [0.25, 0.25, 0.25, 0.25]),  # everyone shares the win
    ],
)
def test_win_rewards_with_ties(totals, expected):
    env = raw_env(num_players=4, deck=FLAT_DECK, reward="win")
    rewards = play_to_end(env, options={"totals": totals, "round": 4})
    assert [rewards[a] for a in env.possible_agents] == expected


def _max_disjoint_copies(cards, combo):
    """Independent reference: search over actual cards for the most disjoint copies of ``combo``."""
    best = 0
    for first in itertools.combinations(range(len(cards)), len(combo)):
        if sorted(cards[i] for i in first) == sorted(combo):
            rest = [card for i, card in enumerate(cards) if i not in first]
            best = max(best, 1 + _max_disjoint_copies(rest, combo))
            break  # every copy is interchangeable: one choice suffices
    return best


@settings(max_examples=300, deadline=None)
@given(
    hand=st.lists(st.sampled_from("ABCDEF"), min_size=0, max_size=7),
    combo=st.lists(st.sampled_from("ABCDEF"), min_size=2, max_size=4),
)
def test_combo_copies_matches_a_search_over_cards(hand, combo):
    need = [combo.count(letter) for letter in LETTERS]
    assert combo_copies(need, counts("".join(hand))) == _max_disjoint_copies(hand, combo)
