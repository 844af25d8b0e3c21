"""Each base rule of Pili Pili on a scripted deal (missions with no effect unless the rule needs one)."""

import pytest
from helpers_pilipili import bid, legal, play, run, scripted

from tableenvs.pilipili.encoder import PLAY_WILD
from tableenvs.pilipili.rules import Phase, PiliPiliGame, RulesError, effective_hand_size

H3 = [[10, 20, 30], [11, 21, 31], [12, 22, 32]]


def test_dealer_bids_first_and_leads_first_trick_winner_leads_next():
    env = scripted(3, H3, dealer=1)
    game = env.game
    assert env.agent_selection == "player_1" and game.phase == Phase.BID
    run(env, bid(0), bid(1), bid(1))  # players 1, 2, 0
    assert game.phase == Phase.PLAY and env.agent_selection == "player_1"
    run(env, play(11), play(12), play(10))  # 12 wins
    assert game.tricks_won == [0, 0, 1]
    assert env.agent_selection == "player_2" and game.leader == 2


def test_highest_card_wins_no_follow_rule_any_card_playable():
    env = scripted(3, H3)
    run(env, bid(0), bid(0), bid(0))
    assert legal(env) == {play(10), play(20), play(30)}
    run(env, play(30), play(11), play(12))
    assert env.game.tricks_won == [1, 0, 0]


def test_hook_rule_example_from_the_write_up():
    hands = [[1 + 5 * s + i for i in range(5)] for s in range(5)]
    env = scripted(5, hands)
    run(env, bid(1), bid(1), bid(1), bid(1))  # total 4 of 5: the last bidder may not bid 1
    assert legal(env) == {bid(0), bid(2), bid(3), bid(4), bid(5)}


def test_bids_range_over_the_hand_size_and_only_the_last_bidder_is_hooked():
    env = scripted(3, H3)
    assert legal(env) == {bid(b) for b in range(4)}
    run(env, bid(3))
    assert legal(env) == {bid(b) for b in range(4)}
    run(env, bid(0))
    assert legal(env) == {bid(1), bid(2), bid(3)}  # 3 + 0 + 0 == 3 forbidden


def test_penalty_is_absolute_bid_error():
    env = scripted(3, H3)
    run(env, bid(3), bid(1), bid(0))
    run(env, play(10), play(11), play(12), play(22), play(20), play(21), play(32), play(30), play(31))
    history = env.game.round_history[0]
    assert history["tricks_won"] == [0, 0, 3]
    assert history["chilis_after"] == [3, 1, 3]
    assert env.rewards == {"player_0": -3.0, "player_1": -1.0, "player_2": -3.0}


def test_wild_declared_value_and_tie_with_number_loses():
    hands = [[0, 20], [30, 21], [5, 22]]
    env = scripted(3, hands)
    run(env, bid(0), bid(0), bid(0))
    assert {a for a in legal(env) if a >= PLAY_WILD} == {PLAY_WILD + v for v in range(57)}
    run(env, play(0, 30), play(30), play(5))  # wild as 30 ties the 30 and loses the tie
    assert env.game.tricks_won == [0, 1, 0]


def test_wild_as_56_beats_every_number():
    env = scripted(2, [[0, 1], [55, 2]])
    run(env, bid(0), bid(0))
    run(env, play(0, 56), play(55))
    assert env.game.tricks_won == [1, 0]


def test_game_ends_after_the_round_someone_reaches_six():
    env = scripted(3, H3, chilis=[5, 2, 2], reward="win")
    run(env, bid(0), bid(0), bid(0))
    run(env, play(10), play(11), play(12), play(22), play(20), play(21), play(32), play(30), play(31))
    game = env.game
    assert game.chilis == [5, 2, 5] and not game.over and game.rounds_completed == 1  # nobody at 6: go on
    env = scripted(3, H3, chilis=[5, 2, 3], reward="win")
    run(env, bid(0), bid(0), bid(0))
    run(env, play(10), play(11), play(12), play(22), play(20), play(21), play(32), play(30), play(31))
    game = env.game
    assert game.chilis == [5, 2, 6] and game.over and not game.truncated and game.winners == [1]
    assert all(env.terminations.values())
    assert env.rewards == {"player_0": -1.0, "player_1": 1.0, "player_2": -1.0}


def test_tied_fewest_chilis_share_the_win():
    env = scripted(3, [[10], [11], [12]], chilis=[4, 5, 4], reward="win")
    run(env, bid(0), bid(1), bid(1))  # player_2 wins the trick: player_1 misses by one and reaches 6
    run(env, play(10), play(11), play(12))
    assert env.game.chilis == [4, 6, 4] and env.game.winners == [0, 2]
    assert env.rewards == {"player_0": 0.5, "player_1": -1.0, "player_2": 0.5}


def test_next_round_passes_the_deal_clockwise_and_reshuffles_56_cards():
    env = scripted(3, H3, dealer=2)
    run(env, bid(0), bid(0), bid(0))
    for _ in range(3):
        while env.game.phase == Phase.PLAY and env.game.rounds_completed == 0:
            run(env, min(env.legal_actions()))
    game = env.game
    assert game.rounds_completed == 1 and game.dealer == 0 and game.phase in (Phase.BID, Phase.LOOK)
    assert game.card_count() == 56 and game.tricks_played == 0


def test_hand_size_cap_per_player_count():
    from tableenvs.pilipili.missions import load_missions

    big, drawing = load_missions(
        [
            {"id": 1, "hand_size": 10, "expert": False, "effects": []},
            {"id": 2, "hand_size": 7, "expert": False, "effects": [{"type": "extra_draw", "count": 1}]},
        ]
    )
    assert [effective_hand_size(big, n) for n in range(2, 9)] == [10, 10, 10, 10, 9, 8, 7]
    assert [effective_hand_size(drawing, n) for n in range(2, 9)] == [7, 7, 7, 7, 7, 7, 6]


def test_engine_refuses_illegal_moves_with_clear_errors():
    import numpy as np

    game = PiliPiliGame(3, None, np.random.default_rng(0))
    game.start(dealer=0, hands=[[10, 20, 30, 40, 50], [11, 21, 31, 41, 51], [12, 22, 32, 42, 52]])
    with pytest.raises(RulesError, match="not the PLAY phase"):
        game.play(10)
    game.bid(2)
    game.bid(2)
    with pytest.raises(RulesError, match=r"bid 1 is not legal; legal bids: \[0, 2, 3, 4, 5\]"):
        game.bid(1)
