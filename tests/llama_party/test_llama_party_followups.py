"""Issue 15 follow-ups: hands shown at scoring (observation, text view) and cards with several rules."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_llama_party_properties import play
from test_llama_party_rules import make_deck

from tableenvs.decks import DeckError
from tableenvs.llama_party.agents import GoalTable
from tableenvs.llama_party.cards import LETTERS, STANDARD_DECK, load_cards
from tableenvs.llama_party.encoder import LAYOUT, OBSERVATION_SIZE, describe_card, max_round_score
from tableenvs.llama_party.env import raw_env
from tableenvs.llama_party.rules import NUM_SLOTS, goal_points, hand_score, letter_counts

# ------------------------------------------------------------------------------ hands shown at scoring


def shown_block(env, seat):
    obs = env.observe(f"player_{seat}")["observation"]
    return obs[LAYOUT.SHOWN_HANDS : LAYOUT.SHOWN_HANDS + NUM_SLOTS * 32].reshape(NUM_SLOTS, 32)


def check_shown(env):
    """The block shows, by relative seat, exactly the hands shown at the last scoring, and those hands are the
    scored ones: they score the recorded round scores under that round's goals, 7 cards each, all different."""
    game = env.game
    n = game.num_players
    if not game.round_scores:
        assert game.shown_hands == []
        for seat in range(n):
            assert not shown_block(env, seat).any()
        return
    shown = game.shown_hands
    assert [len(hand) for hand in shown] == [7] * n and len({c for hand in shown for c in hand}) == 7 * n
    assert [hand_score(hand, game.shown_display, env.deck) for hand in shown] == game.round_scores[-1]
    for seat in range(n):
        block = shown_block(env, seat)
        for other in range(n):
            assert set(np.flatnonzero(block[(other - seat) % n])) == set(shown[other])
        assert not block[n:].any()


def test_hands_shown_at_scoring_stay_in_every_observation_until_the_next_scoring():
    env = raw_env(num_players=3, render_mode="ansi")
    env.reset(seed=5)
    check_shown(env)
    while len(env.game.round_scores) < 1:
        env.step(env.legal_actions()[0])
    game = env.game
    assert game.round_number == 2 and game.step == 0  # the next round is already dealt
    check_shown(env)
    for seat, hand in enumerate(game.shown_hands):  # the same cards the scoring log line names
        letters = "".join(sorted(LETTERS[env.deck[c].letter] for c in hand))
        assert any(line.startswith(f"player_{seat} shows {letters}:") for line in env.event_log), env.event_log
    text = env.render()
    assert "shown at the last scoring (goals " in text and "  player_2: " in text
    before = [shown_block(env, seat).copy() for seat in range(3)]
    for _ in range(5):  # play in round 2: the shown hands stay
        env.step(env.legal_actions()[-1])
    assert all(np.array_equal(shown_block(env, seat), before[seat]) for seat in range(3))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), num_players=st.sampled_from([2, 3, 4]))
def test_shown_hands_are_the_public_scored_hands(seed, num_players):
    play(raw_env(num_players=num_players), seed, check_shown)


def test_observation_size_and_bounds():
    assert OBSERVATION_SIZE == 341 + 4 * 32 == 469
    env = raw_env(num_players=2)
    space = env.observation_space("player_0")["observation"]
    assert (space.low[LAYOUT.SHOWN_HANDS :] == 0).all() and (space.high[LAYOUT.SHOWN_HANDS :] == 1).all()


# ------------------------------------------------------------------------------ cards with several rules


def multi_rule_deck():
    cards = make_deck()
    cards[0]["top"] = [{"letter": "A", "points": 1}, {"letter": "B", "points": 2}]
    cards[0]["bottom"] = [{"combo": "AABB", "points": 10}, {"combo": "AA", "points": 3}]
    cards[1]["bottom"] = [{"combo": "CD", "points": -4}]  # a one-item list is one rule
    return cards


def counts_of(letters):
    return [letters.count(letter) for letter in LETTERS]


def test_a_card_with_several_rules_scores_every_one():
    deck = load_cards(multi_rule_deck())
    card = deck[0]
    assert card.rules_text() == "+1/A +2/B, AABB +10, AA +3"
    assert (card.top_letter, card.top_points, card.combo, card.combo_points) == (0, 1, "AABB", 10)
    # the write-up: a hand holding AABB scores AABB, and also AA when the goal lists it
    assert goal_points(card, counts_of("AABBCDE")) == 1 * 2 + 2 * 2 + 10 + 3
    assert goal_points(card, counts_of("AAAABBC")) == 4 + 4 + 10 * 1 + 3 * 2
    assert goal_points(card, counts_of("ACDEFGH")) == 1
    assert goal_points(deck[1], counts_of("CCDDA")) == 1 * 1 - 4 * 2
    assert max_round_score(deck) == NUM_SLOTS * ((1 + 2) * 7 + 10 * 1 + 3 * 3)


def test_the_greedy_agent_scores_several_rules_like_the_engine():
    deck = load_cards(multi_rule_deck())
    table = GoalTable(deck)
    rng = np.random.default_rng(0)
    for _ in range(200):
        hand = rng.choice(32, 7, replace=False)
        counts = letter_counts(hand.tolist(), deck)
        expected = [goal_points(card, counts) for card in deck]
        assert table.points(np.array(counts)).tolist() == expected


def test_rule_lists_in_the_schema():
    cards = multi_rule_deck()
    cards[2]["top"] = []
    with pytest.raises(DeckError, match=r"cards\[2\]\.top"):
        load_cards(cards)
    cards = multi_rule_deck()
    cards[2]["bottom"] = [{"combo": "AB", "points": 1}] * 5
    with pytest.raises(DeckError, match=r"cards\[2\]\.bottom"):
        load_cards(cards)
    cards = multi_rule_deck()
    cards[0]["top"][1]["points"] = 2.0
    with pytest.raises(DeckError, match=r"top\[1\]\.points.*2\.0.*integer"):
        load_cards(cards)
    cards = multi_rule_deck()
    cards[0]["bottom"][1]["combo"] = "A"
    with pytest.raises(DeckError, match=r"bottom\[1\]\.combo"):
        load_cards(cards)


def test_a_multi_rule_deck_file_plays(tmp_path):
    import json

    path = tmp_path / "deck.json"
    path.write_text(json.dumps({"cards": multi_rule_deck()}), encoding="utf-8")
    env = raw_env(num_players=2, deck=str(path))
    play(env, 1, lambda e: None)
    assert env.game.over
    assert env.game.totals == [sum(r[s] for r in env.game.round_scores) for s in range(2)]


def test_encoder_docstring_example_matches_the_standard_deck():
    assert describe_card(STANDARD_DECK, 12) == "D1(D: +3/D, DDD +13)"
    assert "D1(D: +3/D, DDD +13)" in describe_card.__doc__
