"""Issue 15 follow-ups: the previous-round summary in the observation, the bidding-order effect, and tests of
the choices recorded as decisions (dealer rotation, a simultaneous wild's value, a wild declared as a listed
number, the automatic exact-bid discard)."""

import numpy as np
import pytest
from helpers_pilipili import LOOK, bid, effect, legal, mission, play, run, scripted
from hypothesis import given, settings
from hypothesis import strategies as st
from test_pilipili_properties import INFO_RULES, check_invisible_permutation, random_game

from tableenvs.decks import DeckError
from tableenvs.pilipili.encoder import (
    MISSION_FLAGS,
    P_BID,
    P_DISCARDED,
    P_LVALUE,
    P_LWILD,
    P_LWON,
    P_TAKEN,
    P_WON,
    PREVIOUS_FIELDS,
    Encoder,
    mission_vector,
)
from tableenvs.pilipili.env import raw_env
from tableenvs.pilipili.missions import load_missions
from tableenvs.pilipili.rules import Phase

H3 = [[10, 20, 30], [11, 21, 31], [12, 22, 32]]


def previous_section(env, agent):
    enc = env.encoder
    start, size = next((start, size) for name, start, size in enc.layout() if name == "previous_round")
    obs = env.observe(agent)["observation"]
    return obs[start], obs[start + 1 : start + size].reshape(env.num_players, len(PREVIOUS_FIELDS))


# ---------------------------------------------------------------- item 1: the previous round


def test_previous_round_summary_shows_how_the_last_round_ended():
    env = scripted(3, [[10, 0], [20, 55], [30, 40]], effect("exact_bid_reward"), chilis=[0, 2, 0])
    available, rows = previous_section(env, "player_0")
    assert available == 0 and not rows.any()  # nothing scored yet
    run(env, bid(1), bid(1), bid(1))  # 3 != 2
    run(env, play(10), play(20), play(30))  # player_2 wins and leads
    run(env, play(40), play(0, 3), play(55))  # player_1 wins the last trick; player_0's wild was declared 3
    game = env.game
    assert game.rounds_completed == 1 and game.tricks_played == 0  # the next round is already dealt
    assert game.last_trick == []  # the current-round fields were reset: the summary is the only trace
    available, rows = previous_section(env, "player_1")  # relative seats: 0 = player_1, 1 = player_2, 2 = player_0
    assert available == 1
    assert rows[:, P_BID].tolist() == [1, 1, 1]
    assert rows[:, P_WON].tolist() == [1, 1, 0]
    assert rows[:, P_TAKEN].tolist() == [0, 0, 1]  # bid errors
    assert rows[:, P_DISCARDED].tolist() == [1, 0, 0]  # exact bids discard their bid, capped (player_2 held 0)
    assert rows[:, P_LVALUE].tolist() == [55, 40, 3]
    assert rows[:, P_LWILD].tolist() == [0, 0, 1]
    assert rows[:, P_LWON].tolist() == [1, 0, 0]
    text = env.render()
    assert "previous round: player_0 bid 1 won 0 took 1; player_1 bid 1 won 1 took 0 discarded 1" in text
    assert "previous round's last trick: player_2 40, player_0 W=3, player_1 55 (won by player_1)" in text


def test_previous_round_sizes_and_bounds():
    for n in (2, 5, 8):
        enc = Encoder(n)
        name, start, size = enc.layout()[-1]
        assert name == "previous_round" and size == 1 + 7 * n and start + size == enc.size
    assert Encoder(5).size == 689


def expected_previous(game, seat):
    """The previous-round section computed from the public round record, independently of the encoder."""
    n = game.n
    rows = np.zeros((n, len(PREVIOUS_FIELDS)), np.float32)
    if not game.round_history:
        return 0.0, rows
    record = game.round_history[-1]
    plays, winner = record["tricks"][-1]
    for s in range(n):
        r = (s - seat) % n
        taken = record["chilis_after"][s] - record["chilis_before"][s] + record["discarded"][s]
        rows[r, :4] = record["bids"][s], record["tricks_won"][s], taken, record["discarded"][s]
    for s, card, value in plays:
        rows[(s - seat) % n, P_LVALUE] = value
        rows[(s - seat) % n, P_LWILD] = card == 0
    rows[(winner - seat) % n, P_LWON] = 1
    return 1.0, rows


def check_previous_is_public(env, rng):
    """The summary holds exactly the public record of the last scored round (and the usual hidden-card check)."""
    check_invisible_permutation(env, rng)
    game = env.game
    for seat in range(game.n):
        available, rows = previous_section(env, f"player_{seat}")
        want_available, want_rows = expected_previous(game, seat)
        assert available == want_available and np.array_equal(rows, want_rows)


@settings(max_examples=60, deadline=None)
@given(rule=st.sampled_from(sorted(INFO_RULES)), num_players=st.integers(2, 8), seed=st.integers(0, 2**32 - 1))
def test_previous_round_summary_is_the_public_record_under_every_information_rule(rule, num_players, seed):
    deck = [{"id": 1, "hand_size": 3, "expert": True, "effects": INFO_RULES[rule]}]
    env = raw_env(num_players=num_players, missions=deck, max_rounds=3)
    random_game(env, seed, check_previous_is_public)


# ---------------------------------------------------------------- item 2: bidding order and decisions


@pytest.mark.parametrize(
    ("start", "direction", "order"),
    [
        ("left_of_dealer", "clockwise", [2, 3, 0, 1]),
        ("dealer", "counterclockwise", [1, 0, 3, 2]),
        ("right_of_dealer", "counterclockwise", [0, 3, 2, 1]),
        ("right_of_dealer", "clockwise", [0, 1, 2, 3]),
    ],
)
def test_bidding_order_effect(start, direction, order):
    hands = [[10], [20], [30], [40]]
    env = scripted(4, hands, effect("bidding_order", start=start, direction=direction), dealer=1)
    seen = []
    for _ in range(3):
        seen.append(env.game.to_act)
        run(env, bid(0))
    seen.append(env.game.to_act)
    assert seen == order
    assert legal(env) == {bid(0)}  # the hook binds the last bidder of this order (total 1 is forbidden)
    run(env, bid(0))
    assert env.game.phase == Phase.PLAY and env.game.to_act == 1  # the dealer still leads


def test_bidding_order_after_a_timed_look_and_no_copy():
    env = scripted(
        3,
        H3,
        effect("bidding_order", direction="counterclockwise"),
        effect("timed_look"),
        effect("no_copy_bid"),
        dealer=0,
    )
    assert env.game.phase == Phase.LOOK and env.game.to_act == 0  # the look still goes from the dealer
    run(env, LOOK, LOOK, LOOK)
    assert env.game.to_act == 0
    run(env, bid(2))
    assert env.game.to_act == 2 and bid(2) not in legal(env)  # previous bidder = player_0


def test_bidding_order_in_the_deck_schema_and_the_observation():
    card = mission(3, effect("bidding_order", start="left_of_dealer", direction="counterclockwise"))
    (m,) = load_missions([card])
    assert (m.bid_start, m.bid_direction) == (1, -1)
    assert m.describe() == "bidding starts at the dealer's left and goes counterclockwise"
    vector = mission_vector(m)
    flags = dict(zip(MISSION_FLAGS, vector[: len(MISSION_FLAGS)], strict=True))
    assert flags["bid_start_left_of_dealer"] == 1 and flags["bid_counterclockwise"] == 1
    assert flags["bid_start_right_of_dealer"] == 0
    with pytest.raises(DeckError, match="must change the order"):
        load_missions([mission(3, effect("bidding_order"))])
    with pytest.raises(DeckError):
        load_missions([mission(3, effect("bidding_order", start="middle"))])


def test_decision_wild_declared_as_a_listed_number_takes_no_listed_penalty():
    env = scripted(3, [[0, 20, 30], [11, 21, 31], [12, 22, 32]], effect("listed_numbers", numbers=[50]))
    run(env, bid(0), bid(0), bid(0))
    run(env, play(0, 50), play(11), play(12))  # the wild, declared 50, wins the trick
    assert env.game.tricks_won == [1, 0, 0] and env.game.extras == [0, 0, 0]


def test_decision_simultaneous_wild_value_is_fixed_when_chosen():
    env = scripted(3, [[0, 20, 30], [11, 21, 31], [12, 22, 32]], effect("simultaneous_play"))
    run(env, bid(0), bid(0), bid(0))
    run(env, play(0, 5))  # chosen face down as 5; nobody can change it after seeing the others
    assert env.game.trick == [(0, 0, 5)]
    run(env, play(11), play(12))
    assert env.game.last_trick[0] == (0, 0, 5) and env.game.tricks_won == [0, 0, 1]


def test_decision_dealer_rotates_clockwise_every_round():
    env = raw_env(num_players=4, missions="none")
    env.reset(seed=0, options={"dealer": 3})
    dealers = [env.game.dealer]
    while len(dealers) < 5 and not env.game.over:
        rounds = env.game.rounds_completed
        while env.game.rounds_completed == rounds:
            env.step(min(env.legal_actions()))
        if not env.game.over:
            dealers.append(env.game.dealer)
    assert len(dealers) >= 2 and dealers == [(3 + i) % 4 for i in range(len(dealers))]


def test_decision_exact_bid_discard_is_automatic():
    env = scripted(2, [[10, 55], [20, 30]], effect("exact_bid_reward"), chilis=[3, 0])
    run(env, bid(1), bid(0))  # 1 != 2
    run(env, play(55), play(20), play(10), play(30))  # player_0 wins 1 (its bid), player_1 wins 1
    assert env.game.chilis == [2, 1]  # discarded without any decision: no action asks for it


def test_a_model_saved_with_the_old_observation_size_is_refused_clearly():
    from types import SimpleNamespace

    import gymnasium

    from tableenvs.policies.sb3_policy import SB3Policy

    old = SimpleNamespace(
        observation_space=gymnasium.spaces.Box(0, 1, (650,)),  # pilipili_v0, 5 players, an older observation size
        action_space=gymnasium.spaces.Discrete(234),
    )
    with pytest.raises(ValueError, match=r"expects observations of shape \(650,\).*has \(689,\).*observation changed"):
        SB3Policy(old, raw_env(num_players=5))
