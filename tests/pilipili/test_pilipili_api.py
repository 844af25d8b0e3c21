"""Pili Pili options, errors, rendering and seeds (PettingZoo's own tests and the shared checks:
tests/test_conformance.py)."""

import numpy as np
import pytest

import tableenvs
from tableenvs.core.actions import IllegalActionError
from tableenvs.pilipili.encoder import NUM_ACTIONS, Encoder
from tableenvs.pilipili.env import raw_env


def test_ansi_render_shows_the_table():
    e = raw_env(num_players=3, render_mode="ansi")
    e.reset(seed=0, options={"dealer": 1, "mission": 2})
    text = e.render()
    assert "mission 2" in text and "player_2" in text and "phase bid" in text and "to act: player_1" in text


def test_spaces_and_sizes():
    for n in (2, 5, 8):
        e = raw_env(num_players=n)
        space = e.observation_space("player_0")
        assert space["observation"].shape == (Encoder(n).size,)
        assert e.action_space("player_0").n == NUM_ACTIONS == 234
    assert Encoder(5).size == 689  # 650 before the previous-round summary and bidding order were added


def test_missions_none_plays_without_a_deck():
    assert tableenvs.make("pilipili_v0", missions="none").unwrapped.missions is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"num_players": 9}, r"num_players must be in 2\.\.8, got 9"),
        ({"num_players": 1}, r"num_players must be in 2\.\.8"),
        ({"reward": "score"}, r"reward must be one of 'penalty', 'win'; got 'score'"),
        ({"expert": "yes"}, r"expert must be True or False"),
        ({"max_rounds": 0}, r"max_rounds must be >= 1, got 0"),
        ({"missions": 7}, r"missions must be 'standard', 'none', a deck file path"),
        ({"missions": "no/such/deck.toml"}, r"does not exist"),
        ({"render_mode": "rgb"}, r"render_mode must be one of"),
    ],
)
def test_bad_options_have_clear_errors(options, message):
    with pytest.raises(ValueError, match=message):
        raw_env(**options)


def test_bad_reset_options_have_clear_errors():
    e = raw_env(num_players=3)
    with pytest.raises(ValueError, match=r"dealer must be in 0\.\.2, got 5"):
        e.reset(options={"dealer": 5})
    with pytest.raises(ValueError, match=r"mission must be a mission id"):
        e.reset(options={"mission": 99})
    with pytest.raises(ValueError, match=r"hands must be 3 lists of 5 cards"):
        e.reset(options={"mission": 2, "hands": [[1, 2, 3]] * 3})
    with pytest.raises(ValueError, match=r"each exactly once"):
        e.reset(options={"mission": 2, "hands": [[1, 2, 3, 4, 5]] * 3})
    with pytest.raises(ValueError, match=r"chilis must be a list of 3"):
        e.reset(options={"chilis": [1]})
    with pytest.warns(UserWarning, match="ignoring unknown reset option"):
        e.reset(options={"bogus": 1})


def test_illegal_action_error_names_the_move():  # raw and wrapped envs alike: tests/test_conformance.py
    e = raw_env(num_players=3)
    e.reset(seed=0, options={"mission": 2, "dealer": 0})
    with pytest.raises(IllegalActionError, match=r"illegal action 30 \(play 2\)"):
        e.step(30)


def test_win_reward_mode_pays_winners_at_the_end():
    e = raw_env(num_players=4, reward="win", missions="none")
    e.reset(seed=3)
    rng = np.random.default_rng(0)
    totals = dict.fromkeys(e.agents, 0.0)
    for agent in e.agent_iter():
        _, reward, terminated, truncated, _ = e.last()
        totals[agent] += reward
        e.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(e.action_masks()))))
    game = e.game
    winners = {f"player_{s}" for s in game.winners}
    for agent, total in totals.items():
        assert total == pytest.approx(1 / len(winners) if agent in winners else -1.0)


def test_max_rounds_truncates():
    e = raw_env(num_players=3, missions="none", max_rounds=1)
    e.reset(seed=0, options={"chilis": [0, 0, 0]})
    rng = np.random.default_rng(0)
    while not any(e.truncations.values()) and not any(e.terminations.values()):
        e.step(int(rng.choice(np.flatnonzero(e.action_masks()))))
    assert e.game.rounds_completed == 1
    assert all(e.truncations.values()) != all(e.terminations.values())


def test_cli_plays_a_whole_game_between_heuristics(capsys):
    from tableenvs.cli import main

    assert main(["play", "pilipili_v0", "--players", "5", "--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert "round 1: dealer" in out and "trick 1:" in out and "round scored:" in out
    assert "game over:" in out and "winner(s): player_" in out


def test_same_seed_same_game_and_different_seeds_differ():
    deals = []
    for seed in (1, 1, 2):
        e = raw_env(num_players=4)
        e.reset(seed=seed)
        deals.append((e.game.dealer, e.game.mission.id, [sorted(h) for h in e.game.hands]))
    assert deals[0] == deals[1] and deals[0] != deals[2]
