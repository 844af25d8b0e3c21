"""rummikub_v0 options and their errors, rendering, infos and spaces (PettingZoo's own tests and the shared checks:
tests/test_conformance.py)."""

import pytest

from tableenvs.core.actions import IllegalActionError
from tableenvs.rummikub.encoder import COMMIT, DRAW, NUM_ACTIONS, OBSERVATION_SIZE
from tableenvs.rummikub.env import raw_env


def test_ansi_render_shows_table_racks_and_staged():
    e = raw_env(num_players=2, render_mode="ansi")
    e.reset(
        seed=0,
        options={
            "racks": [["red 5", "red 6", "red 7", "red 8", "red 9", "black 1"], ["blue 1", "blue 2"]],
            "table": ["orange 1", "orange 2", "orange 3"],
            "first_player": 0,
            "opened": [True, False],
        },
    )
    e.step(4 * 0 + 13 + 4)  # stage red 5
    text = e.render()
    assert "game 1/1, turn 0: player_0 to act" in text
    assert "table (1 melds, 3 tiles):\n  run[orange 1, orange 2, orange 3]\n" in text
    assert "player_0: score +0, opened, 6 tiles: black 1, red 5, red 6, red 7, red 8, red 9" in text
    assert "staged by player_0: red 5" in text


def test_spaces():
    e = raw_env(num_players=4)
    space = e.observation_space("player_0")
    assert space["observation"].shape == (OBSERVATION_SIZE,) == (235,)
    assert e.action_space("player_0").n == NUM_ACTIONS == 55


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"num_players": 5}, r"num_players must be in 2\.\.4, got 5"),
        ({"min_initial": -1}, r"min_initial must be >= 0, got -1"),
        ({"draw_after_play": 1}, "draw_after_play must be True or False"),
        ({"strict_commit": "yes"}, "strict_commit must be True or False"),
        ({"pool_exhausted": "tie"}, r"pool_exhausted must be one of 'lowest_rack', 'draw'; got 'tie'"),
        ({"games_per_episode": 0}, r"games_per_episode must be >= 1, got 0"),
        ({"max_turns": 0}, r"max_turns must be >= 1, got 0"),
        ({"render_mode": "rgb"}, "render_mode must be one of"),
    ],
)
def test_bad_options(options, message):
    with pytest.raises(ValueError, match=message):
        raw_env(**options)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"racks": [["red 5"]]}, "racks must list 2 tile lists"),
        ({"racks": [["red 5"], []]}, r"racks\[1\] is empty"),
        ({"racks": [["purple 5"], []]}, "unknown tile name 'purple 5'"),
        ({"racks": [[53], []]}, r"racks\[0\] tile id must be in 0\.\.52, got 53"),
        ({"racks": [["joker", "joker"], ["joker"]]}, "racks and table hold 3 of joker; the game has 2"),
        ({"table": ["red 1", "red 2"]}, "table is not valid"),
        ({"pool": ["red 1"]}, "a scripted pool needs scripted racks"),
        ({"racks": [["red 1"], ["red 2"]], "pool": ["red 3"]}, "pool must hold exactly the 104 tiles"),
        ({"first_player": 2}, r"first_player must be in 0\.\.1, got 2"),
        ({"opened": [True]}, "opened must list 2 booleans"),
    ],
)
def test_bad_reset_options(options, message):
    e = raw_env(num_players=2)
    with pytest.raises(ValueError, match=message):
        e.reset(seed=0, options=options)


def test_illegal_action_error_names_the_move():  # raw and wrapped envs alike: tests/test_conformance.py
    e = raw_env(num_players=2)
    e.reset(seed=0, options={"racks": [["red 1"], ["red 2"]], "first_player": 0})
    with pytest.raises(IllegalActionError, match=r"illegal action 53 \(commit 0 tile\(s\)\)"):
        e.step(COMMIT)
    assert e.legal_actions() == [DRAW]  # red 1 alone is no play: staging it (13) is illegal too


def test_infos_arrangement_at_commit_only():
    e = raw_env(num_players=2)
    e.reset(
        seed=0,
        options={"racks": [["red 10", "red 11", "red 12", "blue 1"], ["blue 2"]], "first_player": 0},
    )
    for t in (13 + 9, 13 + 10, 13 + 11):
        e.step(t)
        assert e.infos["player_1"] == {}
    e.step(COMMIT)
    melds = e.infos["player_1"]["arrangement"]
    assert [str(m) for m in melds] == ["run[red 10, red 11, red 12]"]
    assert e.infos["player_0"]["arrangement"] == melds
    e.step(DRAW)
    assert e.infos == {"player_0": {}, "player_1": {}}
