"""llama_party_v0 options and their errors, rendering, rewards (PettingZoo's own tests and the shared checks:
tests/test_conformance.py)."""

import numpy as np
import pytest

from tableenvs.decks import DeckError
from tableenvs.llama_party.cards import STANDARD_DECK
from tableenvs.llama_party.encoder import LAYOUT, OBSERVATION_SIZE
from tableenvs.llama_party.env import env, raw_env


def play_random(e, seed, policy_seed=0):
    """Play a whole game with random legal actions; return the total reward per agent."""
    rng = np.random.default_rng(policy_seed)
    e.reset(seed=seed)
    totals = dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter():
        observation, reward, terminated, truncated, _ = e.last()
        totals[agent] += reward
        if terminated or truncated:
            e.step(None)
            continue
        e.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    return totals


def test_ansi_render_shows_goals_ring_and_hands():
    e = env(num_players=2, render_mode="ansi")
    e.reset(seed=0)
    text = e.render()
    assert "round 1/4" in text and "goal choice" in text
    assert "passing: player_0 -> D0 -> player_1 -> D1 -> player_0" in text
    assert "D1 (dummy)" in text


def test_spaces():
    e = raw_env(num_players=4)
    space = e.observation_space("player_0")
    assert space["observation"].shape == (OBSERVATION_SIZE,) == (469,)  # 341 before the shown hands were added
    assert e.action_space("player_0").n == 32


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"num_players": 5}, r"num_players must be in 2\.\.4, got 5"),
        ({"num_players": "4"}, "num_players must be an integer"),
        ({"reward": "points"}, r"reward must be one of 'score', 'win'; got 'points'"),
        ({"render_mode": "rgb"}, "render_mode must be one of"),
        ({"deck": 3}, "deck must be None"),
        ({"deck": "/nonexistent/deck.toml"}, "does not exist"),
    ],
)
def test_bad_options_get_clear_errors(options, message):
    with pytest.raises(ValueError, match=message):
        raw_env(**options)


def _deck_list():
    return [
        {
            "id": c.id,
            "letter": c.letter_name,
            "top": {"letter": "ABCDEFGH"[c.top_letter], "points": c.top_points},
            "bottom": {"combo": c.combo, "points": c.combo_points},
        }
        for c in STANDARD_DECK
    ]


def test_custom_deck_list_and_its_errors(tmp_path):
    cards = _deck_list()
    cards[0]["top"]["points"] = 7
    e = raw_env(deck=cards)
    assert e.deck[0].top_points == 7
    short = cards[:31]
    with pytest.raises(DeckError, match="should be non-empty|is too short|31"):
        raw_env(deck=short)
    bad_letter = _deck_list()
    bad_letter[3]["letter"] = "Z"
    with pytest.raises(DeckError, match=r"\.cards\[3\]\.letter"):
        raw_env(deck=bad_letter)
    repeated = _deck_list()
    repeated[5]["id"] = repeated[1]["id"]
    with pytest.raises(DeckError, match=r"cards\[5\]\.id 'A2' repeats cards\[1\]\.id"):
        raw_env(deck=repeated)
    import json

    path = tmp_path / "deck.json"
    path.write_text(json.dumps({"cards": cards}))
    assert raw_env(deck=str(path)).deck[0].top_points == 7


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"hands": [[0] * 8] * 4}, "every card exactly once; repeated: A1"),
        ({"hands": [[0, 1]] * 4}, r"hands\[0\] must list 8 cards"),
        ({"hands": [list(range(i * 8, i * 8 + 8)) for i in range(3)]}, "must be 4 lists of 8"),
        ({"hands": [["ZZ"] + list(range(1, 8))] + [list(range(i * 8, i * 8 + 8)) for i in (1, 2, 3)]}, "'ZZ'"),
        ({"totals": [1, 2]}, "totals must list 4 integers"),
        ({"round": 5}, r"round must be in 1\.\.4, got 5"),
        ({"dummy_feeds": 1}, "3 players only"),
    ],
)
def test_bad_reset_options_get_clear_errors(options, message):
    e = raw_env(num_players=4)
    with pytest.raises(ValueError, match=message):
        e.reset(seed=0, options=options)


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_score_rewards_sum_to_totals(num_players):
    e = raw_env(num_players=num_players)
    rewards = play_random(e, seed=num_players)
    assert [rewards[a] for a in e.possible_agents] == e.game.totals
    assert e.agents == []


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_win_rewards_match_winners(num_players):
    for seed in range(3):
        e = raw_env(num_players=num_players, reward="win")
        rewards = play_random(e, seed=seed)
        winners = e.game.winners
        expected = {f"player_{s}": (1.0 / len(winners) if s in winners else -1.0) for s in range(num_players)}
        assert rewards == expected


def test_observation_records_passed_and_received_cards():
    e = raw_env(num_players=4)
    e.reset(seed=5)
    for _ in range(4):  # goals
        e.step(e.legal_actions()[0])
    picks = {}
    for seat in range(4):
        picks[seat] = e.legal_actions()[:4]
        for card in picks[seat]:
            e.step(card)
    observation = e.observe("player_1")["observation"]
    passed = set(np.flatnonzero(observation[LAYOUT.PASSED : LAYOUT.PASSED + 32]))
    received = set(np.flatnonzero(observation[LAYOUT.RECEIVED : LAYOUT.RECEIVED + 32]))
    assert passed == set(picks[1]) and received == set(picks[0])
    hand = set(np.flatnonzero(observation[LAYOUT.HAND : LAYOUT.HAND + 32]))
    assert received <= hand and not passed & hand


def test_hands_option_accepts_card_ids():
    e = raw_env(num_players=4)
    ids = [card.id for card in e.deck]
    e.reset(seed=0, options={"hands": [ids[slot * 8 : slot * 8 + 8] for slot in range(4)]})
    assert e.game.hands[2] == list(range(16, 24))


def test_cli_plays_a_whole_game(capsys):
    from tableenvs.cli import main

    assert main(["play", "llama_party_v0", "--players", "3", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "round 1 scored" in out and "game over; winner(s)" in out
