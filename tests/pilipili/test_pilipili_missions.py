"""Every mission effect on a scripted deal, and the mission deck (standard file, schema, loader)."""

import json

import pytest
from helpers_pilipili import (
    DECLINE_SWAP,
    LOOK,
    bid,
    effect,
    legal,
    name,
    pick,
    play,
    position,
    run,
    scripted,
    seen_hand,
    seen_other_hand,
)

from tableenvs.decks import DeckError
from tableenvs.pilipili.encoder import POSITION, S_TPLAYED, S_TVALUE, S_TVISIBLE
from tableenvs.pilipili.env import raw_env
from tableenvs.pilipili.missions import EFFECT_TYPES, load_missions, standard_missions
from tableenvs.pilipili.rules import Phase

H3 = [[10, 20, 30], [11, 21, 31], [12, 22, 32]]


def finish_round(env):
    """Play the lowest legal action until the round is scored."""
    rounds = env.game.rounds_completed
    while env.game.rounds_completed == rounds:
        env.step(min(env.legal_actions()))


# ---------------------------------------------------------------- passing


@pytest.mark.parametrize(("kind", "direction"), [("pass_left", 1), ("pass_right", -1)])
def test_pass_k_cards_moves_them_after_everyone_picked(kind, direction):
    env = scripted(3, [[10, 20, 30, 40], [11, 21, 31, 41], [12, 22, 32, 42]], effect(kind, count=2))
    game = env.game
    run(env, bid(0), bid(0), bid(0))
    assert game.phase == Phase.PASS and env.agent_selection == "player_0"
    assert legal(env) == {pick(10), pick(20), pick(30), pick(40)}
    run(env, pick(40))
    assert env.agent_selection == "player_0" and legal(env) == {pick(10), pick(20), pick(30)}
    run(env, pick(30), pick(11), pick(21))
    assert game.hands[0] == [10, 20, 30, 40]  # nothing moves before everyone picked
    obs = env.observe("player_1")["observation"]
    staged = set(obs[env.encoder.o_staged : env.encoder.o_staged + 56].nonzero()[0])
    assert staged == {11, 21}  # player_1 sees its own picks only
    run(env, pick(12), pick(22))
    receiver = {s: (s + direction) % 3 for s in range(3)}
    picks = {0: {30, 40}, 1: {11, 21}, 2: {12, 22}}
    for s in range(3):
        assert picks[s] <= set(game.hands[receiver[s]])
        assert not picks[s] & set(game.hands[s])
        assert len(game.hands[s]) == 4
    assert game.phase == Phase.PLAY and env.agent_selection == "player_0"


@pytest.mark.parametrize(("direction", "shift"), [("left", 1), ("right", -1)])
def test_pass_whole_hand(direction, shift):
    env = scripted(3, H3, effect("pass_hand", direction=direction))
    run(env, bid(0), bid(0), bid(0))
    for s in range(3):
        assert sorted(env.game.hands[(s + shift) % 3]) == H3[s]
    assert env.game.phase == Phase.PLAY


# ---------------------------------------------------------------- bidding restrictions


def test_forbid_bid_zero_and_one():
    env = scripted(3, H3, effect("forbid_bid", bid=0))
    assert legal(env) == {bid(1), bid(2), bid(3)}
    env = scripted(3, H3, effect("forbid_bid", bid=1))
    assert legal(env) == {bid(0), bid(2), bid(3)}
    run(env, bid(0), bid(0))
    assert legal(env) == {bid(0), bid(2)}  # 1 forbidden and 3 hooked: both apply together


def test_forbidden_bid_and_hook_on_one_card_hands():
    env = scripted(2, [[10], [11]], effect("forbid_bid", bid=0))
    assert legal(env) == {bid(1)}
    run(env, bid(1))
    assert legal(env) == {bid(1)}  # the hook forbids 0 (1 + 0 == 1), which is forbidden anyway
    env = scripted(2, [[10], [11]], effect("forbid_bid", bid=1))
    assert legal(env) == {bid(0)}
    run(env, bid(0))
    assert legal(env) == {bid(0)}  # the hook forbids 1, which is forbidden anyway


def test_forbidden_bids_lifted_last_when_nothing_else_is_left():
    import numpy as np

    from tableenvs.pilipili.missions import Mission
    from tableenvs.pilipili.rules import PiliPiliGame

    # Not reachable with a loaded deck (one forbid_bid per card), but the engine stays total.
    game = PiliPiliGame(2, None, np.random.default_rng(0))
    game.start(dealer=0, mission=Mission(id=1, hand_size=1, forbidden_bids=frozenset({0, 1})), hands=[[1], [2]])
    assert game.legal_bids() == [0, 1]


def test_no_copy_bid_and_lifting_order():
    hands = [[1 + 5 * s + i for i in range(5)] for s in range(3)]
    env = scripted(3, hands, effect("no_copy_bid"))
    assert legal(env) == {bid(b) for b in range(6)}  # the dealer has no previous bid
    run(env, bid(2))
    assert legal(env) == {bid(b) for b in range(6)} - {bid(2)}
    run(env, bid(3))
    assert legal(env) == {bid(b) for b in range(6)} - {bid(3), bid(0)}  # no copy of 3, hook forbids 0
    env = scripted(2, [[10], [11]], effect("no_copy_bid"))
    run(env, bid(0))
    # hand 1: the copy rule forbids 0, the hook forbids 1 -> the hook is lifted first
    assert legal(env) == {bid(1)}


def test_no_copy_and_forbidden_lifted_last():
    env = scripted(2, [[10], [11]], effect("no_copy_bid"), effect("forbid_bid", bid=0))
    assert legal(env) == {bid(1)}
    run(env, bid(1))
    # 0 is forbidden (and hooked), 1 copies the previous bid: lifting the hook leaves nothing,
    # lifting no-copy too leaves 1
    assert legal(env) == {bid(1)}


# ---------------------------------------------------------------- hidden-hand bidding


def test_forehead_bidding_sees_others_not_own_until_bids_are_done():
    env = scripted(3, H3, effect("forehead"))
    for agent, seat in (("player_0", 0), ("player_1", 1)):
        assert seen_hand(env, agent) == set()
        assert seen_other_hand(env, agent, 1) == set(H3[(seat + 1) % 3])
        assert seen_other_hand(env, agent, 2) == set(H3[(seat + 2) % 3])
    run(env, bid(1), bid(1), bid(0))
    assert seen_hand(env, "player_0") == set(H3[0])
    assert seen_other_hand(env, "player_0", 1) == set()


def test_blind_bidding_sees_nothing_until_bids_are_done():
    env = scripted(3, H3, effect("blind"))
    for agent in env.agents:
        assert seen_hand(env, agent) == set()
        assert seen_other_hand(env, agent, 1) == set() and seen_other_hand(env, agent, 2) == set()
    run(env, bid(1), bid(1))
    assert seen_hand(env, "player_2") == set()
    run(env, bid(0))
    assert seen_hand(env, "player_2") == set(H3[2])


def test_timed_look_shows_the_hand_only_at_its_own_look_then_after_bidding():
    env = scripted(3, H3, effect("timed_look"), dealer=1)
    game = env.game
    assert game.phase == Phase.LOOK and legal(env) == {LOOK}
    assert seen_hand(env, "player_1") == set(H3[1]) and seen_hand(env, "player_2") == set()
    run(env, LOOK)
    assert seen_hand(env, "player_1") == set() and seen_hand(env, "player_2") == set(H3[2])
    run(env, LOOK, LOOK)
    assert game.phase == Phase.BID and env.agent_selection == "player_1"
    assert all(seen_hand(env, a) == set() for a in env.agents)
    run(env, bid(0), bid(0), bid(0))
    assert all(seen_hand(env, f"player_{s}") == set(H3[s]) for s in range(3))


# ---------------------------------------------------------------- after-bid effects


def test_extra_draw_after_bidding_hook_still_on_dealt_size():
    order = (
        [10, 20, 30, 11, 21, 31, 12, 22, 32]
        + [40, 41, 42]
        + [c for c in range(56) if c not in {10, 20, 30, 11, 21, 31, 12, 22, 32, 40, 41, 42}]
    )
    env = scripted(3, H3, effect("extra_draw", count=1), dealer=1, deck_order=order)
    game = env.game
    assert game.stock[:3] == [40, 41, 42]
    run(env, bid(1), bid(1))
    assert legal(env) == {bid(0), bid(2), bid(3)}  # hooked against the dealt 3, not 4 cards
    run(env, bid(0))
    assert 40 in game.hands[1] and 41 in game.hands[2] and 42 in game.hands[0]  # drawn from the dealer on
    assert game.total_tricks == 4 and all(len(h) == 4 for h in game.hands)
    finish_round(env)
    assert sum(game.round_history[0]["tricks_won"]) == 4


def test_reveal_hands_after_bidding_until_the_round_ends():
    env = scripted(3, H3, effect("reveal_hands"))
    assert seen_other_hand(env, "player_0", 1) == set()
    run(env, bid(0), bid(0), bid(0))
    assert seen_other_hand(env, "player_0", 1) == set(H3[1])
    assert seen_other_hand(env, "player_2", 1) == set(H3[0])
    run(env, play(10))
    assert seen_other_hand(env, "player_1", 2) == {20, 30}


def test_exact_bid_reward_after_penalties_capped_at_chilis_held():
    env = scripted(3, H3, effect("exact_bid_reward"), chilis=[1, 3, 0])
    run(env, bid(0), bid(2), bid(2))  # 4 != 3
    # player_1 takes 21 and 31? play so that: trick1 p0 10, p1 11, p2 12 -> p2; then p2 leads
    run(env, play(10), play(11), play(12))  # p2 wins
    run(env, play(22), play(20), play(31))  # p1 wins (31)
    run(env, play(21), play(32), play(30))  # p2 wins (32)
    history = env.game.round_history[0]
    assert history["tricks_won"] == [0, 1, 2]
    # p0 exact bid 0: discards 0 -> 1; p1 bid 2 won 1: +1 -> 4; p2 exact 2: 0 + 0 = 0, discards min(2, 0)
    assert history["chilis_after"] == [1, 4, 0]
    assert history["discarded"] == [0, 0, 0]
    env = scripted(3, H3, effect("exact_bid_reward"), chilis=[1, 3, 5])
    run(env, bid(0), bid(2), bid(2))
    run(env, play(10), play(11), play(12), play(22), play(20), play(31), play(21), play(32), play(30))
    assert env.game.round_history[0]["chilis_after"] == [1, 4, 3]
    assert env.rewards["player_2"] == 2.0 and env.rewards["player_1"] == -1.0


def test_exact_bid_reward_applies_after_mission_extras():
    env = scripted(2, [[10, 20], [11, 21]], effect("exact_bid_reward"), effect("first_last_trick"), chilis=[2, 0])
    run(env, bid(2), bid(2))  # 4 != 2
    run(env, play(10), play(11), play(21), play(20))
    # player_1 wins both: bid 2 exact, extras +2 -> 2, then discards min(2, 2) -> 0; player_0 +2 -> 4
    assert env.game.round_history[0]["chilis_after"] == [4, 0]


def test_designate_takes_the_named_players_own_round_penalty():
    env = scripted(3, H3, effect("designate"), effect("first_last_trick"))
    run(env, bid(0), bid(0), bid(1))
    assert env.game.phase == Phase.DESIGNATE and legal(env) == {name(1), name(2)}
    run(env, name(1), name(1), name(2))  # 0 -> 1, 1 -> 2, 2 -> 1
    assert env.game.designations == [1, 2, 1]
    run(env, play(10), play(11), play(12), play(22), play(20), play(21), play(32), play(30), play(31))
    # player_2 wins all 3: own 2 + first + last = 4; players 0 and 1: own 0
    history = env.game.round_history[0]
    assert history["chilis_after"] == [0 + 0, 0 + 4, 4 + 0]


# ---------------------------------------------------------------- play effects


def test_reversed_values_lowest_wins_and_wild_zero_is_strongest_tie_loses():
    env = scripted(3, [[0, 40], [1, 41], [2, 42]], effect("reversed_values"))
    run(env, bid(0), bid(0), bid(0))
    run(env, play(40), play(41), play(42))
    assert env.game.tricks_won == [1, 0, 0]
    env = scripted(3, [[0, 40], [1, 41], [2, 42]], effect("reversed_values"))
    run(env, bid(0), bid(0), bid(0))
    run(env, play(0, 1), play(1), play(42))  # wild declared 1 ties the 1 and loses the tie
    assert env.game.tricks_won == [0, 1, 0]
    env = scripted(3, [[0, 40], [1, 41], [2, 42]], effect("reversed_values"))
    run(env, bid(0), bid(0), bid(0))
    run(env, play(0, 0), play(1), play(2))
    assert env.game.tricks_won == [1, 0, 0]


def test_simultaneous_play_hides_this_tricks_choices_until_all_have_chosen():
    env = scripted(3, H3, effect("simultaneous_play"))
    run(env, bid(0), bid(0), bid(0))
    run(env, play(30))
    enc = env.encoder
    obs1 = env.observe("player_1")["observation"]
    base_p0_from_p1 = enc.o_seats + 2 * enc.seat_size
    assert obs1[base_p0_from_p1 + S_TPLAYED] == 1 and obs1[base_p0_from_p1 + S_TVISIBLE] == 0
    assert obs1[base_p0_from_p1 + S_TVALUE] == 0 and obs1[enc.o_played + 30] == 0
    obs0 = env.observe("player_0")["observation"]
    assert obs0[enc.o_seats + S_TVISIBLE] == 1 and obs0[enc.o_seats + S_TVALUE] == 30
    run(env, play(11), play(12))
    assert env.game.tricks_won == [1, 0, 0]
    obs1 = env.observe("player_1")["observation"]
    assert obs1[enc.o_played + 30] == 1 and obs1[enc.o_played + 12] == 1


def test_first_and_last_trick_penalties_stack_on_the_same_player():
    env = scripted(2, [[30, 40, 50], [1, 2, 3]], effect("first_last_trick"))
    run(env, bid(3), bid(1))  # 4 != 3
    run(env, play(30), play(1), play(40), play(2), play(50), play(3))
    assert env.game.round_history[0]["extras"] == [2, 0]
    assert env.game.chilis == [2, 1]


def test_memorise_plays_by_hand_position_blind_and_declares_a_wild():
    env = scripted(2, [[33, 0, 12], [5, 40, 20]], effect("memorise"))
    game = env.game
    assert game.phase == Phase.LOOK and seen_hand(env, "player_0") == {0, 12, 33}
    run(env, LOOK, LOOK)
    assert seen_hand(env, "player_0") == set() and seen_hand(env, "player_1") == set()
    assert game.position_cards == [[0, 12, 33], [5, 20, 40]]  # ascending, the wild first
    run(env, bid(0), bid(0))
    assert seen_hand(env, "player_0") == set()  # hidden for the whole round
    assert legal(env) == {position(0), position(1), position(2)}
    run(env, position(2))  # the 33
    assert game.trick == [(0, 33, 33)]
    run(env, position(0))  # player_1's 5
    assert game.tricks_won == [1, 0]
    assert legal(env) == {position(0), position(1)}
    run(env, position(0))  # the wild: declare it
    assert game.phase == Phase.DECLARE and env.agent_selection == "player_0"
    assert legal(env) == {play(0, v) for v in range(57)}
    run(env, play(0, 56))
    assert game.trick == [(0, 0, 56)]
    obs = env.observe("player_0")["observation"]
    positions = obs[env.encoder.o_positions : env.encoder.o_positions + 28].nonzero()[0].tolist()
    assert positions == [1]
    assert all(a >= POSITION for a in env.legal_actions())


def test_declaring_a_memorised_wild_is_seen_only_by_the_declarer():
    env = scripted(2, [[33, 0, 12], [5, 40, 20]], effect("memorise"), effect("simultaneous_play"))
    run(env, LOOK, LOOK, bid(0), bid(0), position(0))  # player_0's position 0 is the wild
    assert env.game.phase == Phase.DECLARE
    enc = env.encoder
    phase_of = {a: int(env.observe(a)["observation"][enc.o_phase : enc.o_phase + 8].argmax()) for a in env.agents}
    assert phase_of == {"player_0": Phase.DECLARE, "player_1": Phase.PLAY}


def test_highest_or_lowest_only_and_the_wild_is_always_playable():
    env = scripted(2, [[0, 10, 20, 30], [11, 21, 31, 41]], effect("highest_or_lowest"))
    run(env, bid(0), bid(0))
    allowed = legal(env)
    assert allowed == {play(10), play(30)} | {play(0, v) for v in range(57)}
    run(env, play(30))
    assert legal(env) == {play(11), play(41)}
    run(env, play(41))  # player_1 wins and leads
    assert legal(env) == {play(11), play(31)}
    run(env, play(11))
    assert legal(env) == {play(10), play(20)} | {play(0, v) for v in range(57)}
    run(env, play(20))  # player_0 wins and leads with the 10 and the wild left
    assert legal(env) == {play(10)} | {play(0, v) for v in range(57)}


@pytest.mark.parametrize(("each", "extra"), [(False, 1), (True, 2)])
def test_listed_numbers_once_per_trick_or_each(each, extra):
    env = scripted(3, H3, effect("listed_numbers", numbers=[10, 12, 55], each=each))
    run(env, bid(0), bid(0), bid(0))
    run(env, play(10), play(11), play(12))  # holds 10 and 12
    assert env.game.extras == [0, 0, extra]
    run(env, play(22), play(20), play(21))  # no listed number
    assert env.game.extras == [0, 0, extra]


def test_swap_after_trick_decline_or_exchange_without_seeing_the_other_pick():
    env = scripted(3, H3, effect("swap_after_trick"))
    game = env.game
    run(env, bid(0), bid(0), bid(0))
    run(env, play(10), play(11), play(12))
    assert game.phase == Phase.SWAP_NAME and env.agent_selection == "player_2"
    assert legal(env) == {name(1), name(2), DECLINE_SWAP}
    run(env, name(2))  # player_2 names player_1
    assert game.phase == Phase.SWAP_GIVE and legal(env) == {pick(22), pick(32)}
    run(env, pick(32))
    assert env.agent_selection == "player_1" and legal(env) == {pick(21), pick(31)}
    enc = env.encoder
    obs1 = env.observe("player_1")["observation"]
    assert not obs1[enc.o_staged : enc.o_staged + 56].any()  # player_1 cannot see player_2's pick
    run(env, pick(21))
    assert sorted(game.hands[2]) == [21, 22] and sorted(game.hands[1]) == [31, 32]
    assert game.phase == Phase.PLAY and env.agent_selection == "player_2"
    run(env, play(22), play(20), play(31))
    assert env.agent_selection == "player_1" and legal(env) == {name(1), name(2), DECLINE_SWAP}
    run(env, DECLINE_SWAP)
    assert game.phase == Phase.PLAY and env.agent_selection == "player_1"
    run(env, play(32), play(21), play(30))
    assert game.rounds_completed == 1  # no swap offered after the last trick


# ---------------------------------------------------------------- the deck


def test_standard_deck_has_36_cards_covering_every_effect():
    deck = standard_missions()
    assert len(deck) == 36 and len({m.id for m in deck}) == 36
    used = {e["type"] for m in deck for e in m.effects}
    assert used == set(EFFECT_TYPES)
    assert {m.id for m in deck if not m.effects}, "some cards have no effect"
    assert any(len(m.effects) >= 2 for m in deck), "some cards combine effects"
    assert {b for m in deck for b in m.forbidden_bids} == {0, 1}
    sizes = [m.hand_size for m in deck]
    assert min(sizes) == 1 and max(sizes) >= 10
    assert not any(m.expert for m in standard_missions(expert=False))
    assert 0 < len(standard_missions(expert=False)) < 36


def test_expert_false_env_never_draws_expert_cards():
    env = raw_env(num_players=3, expert=False)
    assert all(not m.expert for m in env.missions)


@pytest.mark.parametrize(
    ("card", "message"),
    [
        ({"id": 1, "hand_size": 5, "expert": False, "effects": [{"type": "fly"}]}, r"\[0\]\.effects\[0\]\.type"),
        ({"id": 1, "hand_size": 0, "expert": False, "effects": []}, r"hand_size: 0 is less than the minimum of 1"),
        ({"id": 1, "hand_size": 5, "effects": []}, r"'expert' is a required property"),
        (
            {"id": 1, "hand_size": 5, "expert": False, "effects": [{"type": "pass_left"}]},
            r"'count' is a required property",
        ),
        (
            {"id": 1, "hand_size": 5, "expert": False, "effects": [{"type": "blind", "seconds": 3}]},
            r"Additional properties",
        ),
        (
            {"id": 1, "hand_size": 5, "expert": False, "effects": [{"type": "pass_left", "count": 5}]},
            r"pass_left count 5 must be below the hand size 5",
        ),
        (
            {"id": 1, "hand_size": 5, "expert": True, "effects": [{"type": "memorise"}, {"type": "swap_after_trick"}]},
            r"memorise cannot be combined with swap_after_trick",
        ),
        (
            {"id": 1, "hand_size": 5, "expert": True, "effects": [{"type": "blind"}, {"type": "forehead"}]},
            r"at most one hand-viewing effect",
        ),
        (
            {"id": 1, "hand_size": 5, "expert": True, "effects": [{"type": "blind"}, {"type": "blind"}]},
            r"appear more than once",
        ),
    ],
)
def test_deck_schema_errors_are_specific(card, message):
    with pytest.raises(DeckError, match=message):
        load_missions([card])


def test_duplicate_ids_and_all_expert_with_expert_false():
    card = {"id": 3, "hand_size": 5, "expert": True, "effects": []}
    with pytest.raises(DeckError, match="duplicate mission id"):
        load_missions([card, card])
    with pytest.raises(DeckError, match="leaves no mission"):
        load_missions([card], expert=False)


def test_user_deck_file(tmp_path):
    path = tmp_path / "deck.json"
    path.write_text(json.dumps({"mission": [{"id": 7, "hand_size": 2, "expert": False, "effects": []}]}))
    env = raw_env(num_players=2, missions=str(path))
    env.reset(seed=0)
    assert env.game.mission.id == 7 and env.game.hand_size == 2
    bad = tmp_path / "bad.toml"
    bad.write_text("[[mission]]\nid = 1\n")
    with pytest.raises(ValueError, match=r"missions: deck file .*bad.toml.*'hand_size' is a required property"):
        raw_env(missions=str(bad))


def test_missions_drawn_without_replacement_then_reshuffled():
    env = raw_env(num_players=2)
    env.reset(seed=5)
    game = env.game
    seen = [game.mission.id]
    for _ in range(71):
        game.start_round()
        seen.append(game.mission.id)
    assert sorted(seen[:36]) == list(range(1, 37)) and sorted(seen[36:]) == list(range(1, 37))


def test_one_effect_list_drives_the_docstring_the_schema_and_the_observation():
    """``missions.EFFECTS`` is the one list of effect types: the module's table names each, the schema accepts
    exactly them, and every flag effect has its entry in the observation's mission section."""
    import re

    from tableenvs.pilipili import missions
    from tableenvs.pilipili.encoder import MISSION_FLAGS

    documented = re.findall(r"^``(\w+)``(?: \(expert\))? +(?:--|``)", missions.__doc__, flags=re.MULTILINE)
    assert sorted(documented) == sorted(missions.EFFECTS)
    schema_types = missions.DECK_SCHEMA["properties"]["mission"]["items"]["properties"]["effects"]["items"]
    assert schema_types["properties"]["type"]["enum"] == list(missions.EFFECTS)
    flags = [name for name, effect in missions.EFFECTS.items() if effect.flag]
    assert set(flags) <= set(MISSION_FLAGS)
