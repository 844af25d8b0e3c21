"""Scripted Rummikub positions through the env: opening meld, jokers, draw, pass, penalty, scoring, options."""

import numpy as np
import pytest

from tableenvs.rummikub.encoder import COMMIT, DRAW, LAYOUT
from tableenvs.rummikub.env import raw_env
from tableenvs.rummikub.rules import FULL_SET, parse_tiles, tile_ids
from tableenvs.rummikub.tiles import JOKER, TILE_TYPES


def t(name: str) -> int:
    return tile_ids("tile", [name])[0]


def counts(*names: str) -> np.ndarray:
    return parse_tiles("tiles", list(names))


def make(racks, table=(), pool=None, first_player=0, opened=None, **options):
    e = raw_env(num_players=len(racks), **options)
    reset = {"racks": [list(r) for r in racks], "table": list(table), "first_player": first_player}
    if pool is not None:
        reset["pool"] = list(pool)
    if opened is not None:
        reset["opened"] = list(opened)
    e.reset(seed=0, options=reset)
    return e


def rest_of(racks, table=()):
    """All tiles not on the racks or the table, in type order (a deterministic pool)."""
    used = counts(*table) + sum(counts(*r) for r in racks)
    return np.repeat(np.arange(TILE_TYPES), FULL_SET - used).tolist()


def stage_all(e, names):
    for name in names:
        assert e.action_masks()[t(name)], f"{name} should be stageable"
        e.step(t(name))


def mask_of(e):
    return e.action_masks()


# ---------------------------------------------------------------- opening meld


def test_opening_29_points_refused_30_accepted():
    e = make([["red 4", "red 5", "red 6", "blue 2", "blue 3", "blue 4", "blue 5"], ["black 1"]])
    mask = mask_of(e)
    assert not mask[:TILE_TYPES].any() and not mask[COMMIT] and mask[DRAW]  # 15 + 14 = 29 < 30
    e = make([["red 9", "red 10", "red 11", "black 1"], ["black 2"]])
    stage_all(e, ["red 9", "red 10"])
    assert not mask_of(e)[COMMIT]  # 19 points, two tiles: no meld yet
    assert not mask_of(e)[t("black 1")]
    stage_all(e, ["red 11"])
    assert mask_of(e)[COMMIT] and not mask_of(e)[DRAW]
    e.step(COMMIT)
    assert e.game.opened == [True, False]
    assert e.game.table.sum() == 3 and e.game.racks[0].sum() == 1


def test_min_initial_option_accepts_29():
    e = make([["red 4", "red 5", "red 6", "blue 2", "blue 3", "blue 4", "blue 5"], ["black 1"]], min_initial=29)
    stage_all(e, ["red 4", "red 5", "red 6", "blue 2", "blue 3", "blue 4", "blue 5"])
    assert mask_of(e)[COMMIT]


def test_opening_counts_joker_at_stood_for_number():
    # red 9, red 10 and a joker standing for red 11: 30 points (not 9 + 10 + 30)
    e = make([["red 9", "red 10", "joker"], ["black 1"]])
    stage_all(e, ["joker", "red 9", "red 10"])
    assert mask_of(e)[COMMIT]
    # red 8, red 9 and a joker: at most 8 + 9 + 10 = 27, refused although a joker costs 30 on a rack
    e = make([["red 8", "red 9", "joker"], ["black 1"]])
    assert not mask_of(e)[:TILE_TYPES].any() and mask_of(e)[DRAW]


def test_opening_may_not_touch_the_table():
    table = ["red 1", "red 2", "red 3"]
    rack = ["red 4", "black 10", "blue 10", "orange 10"]
    e = make([rack, ["black 1"]], table=table)
    mask = mask_of(e)
    assert not mask[t("red 4")] and mask[t("black 10")]
    stage_all(e, ["black 10", "blue 10", "orange 10"])
    assert not mask_of(e)[t("red 4")]
    e.step(COMMIT)
    e.step(DRAW)  # player_1
    assert mask_of(e)[t("red 4")]  # opened: may now extend the table's run
    e.step(t("red 4"))
    e.step(COMMIT)
    assert e.game.over and all(e.terminations.values())  # player_0 emptied its rack


# ---------------------------------------------------------------- jokers


def test_joker_on_table_can_be_moved_but_never_returns():
    # table run red 5, red 6, joker(red 7); player_0 opened holds red 7 and red 8: the joker moves along
    e = make([["red 7", "red 8", "blue 1"], ["black 1"]], table=["red 5", "red 6", "joker"], opened=[True, False])
    stage_all(e, ["red 7", "red 8"])
    e.step(COMMIT)
    game = e.game
    assert game.table[JOKER] == 1 and game.racks[0][JOKER] == 0
    assert [str(m) for m in game.arrangement] == ["run[red 5, red 6, red 7, red 8, joker=red 9]"]
    assert e.infos["player_1"]["arrangement"] == game.arrangement


def test_two_jokers_and_one_tile_are_a_meld_after_opening():
    table = ["black 13", "red 13", "blue 13"]
    e = make([["joker", "joker", "black 7", "blue 1"], ["black 1"]], table=table, opened=[True, True])
    stage_all(e, ["joker", "joker"])
    assert not mask_of(e)[COMMIT]  # the group of 13s takes only one of them: two jokers alone are no play
    stage_all(e, ["black 7"])
    assert mask_of(e)[COMMIT]


def test_joker_left_on_rack_costs_30():
    e = make([["red 9", "red 10", "red 11"], ["joker", "black 5"], ["orange 13"]])
    stage_all(e, ["red 9", "red 10", "red 11"])
    e.step(COMMIT)
    assert e.game.over
    assert e.rewards == {"player_0": 48.0, "player_1": -35.0, "player_2": -13.0}
    assert e.game.results[-1].end == "out" and e.game.results[-1].rack_totals == (0, 35, 13)


# ---------------------------------------------------------------- draw, pass, penalty


def test_draw_takes_the_first_pool_tile_and_ends_the_turn():
    racks = [["red 1"], ["red 2"]]
    pool = rest_of(racks)
    pool.insert(0, pool.pop(pool.index(t("orange 13"))))
    e = make(racks, pool=pool)
    obs_before = e.observe("player_0")["observation"]
    e.step(DRAW)
    assert e.game.racks[0][t("orange 13")] == 1 and e.game.pool_size == 103
    assert e.agent_selection == "player_1" and e.game.turn == 1
    assert obs_before[LAYOUT.POOL] * 106 == pytest.approx(104)
    assert not e.game.last_placed.any()


def all_tiles_split():
    """Two racks holding all 106 tiles but black 11..13 (one copy), which lie on the table: pool empty."""
    table = ["black 11", "black 12", "black 13"]
    one_each = [int(x) for x in range(TILE_TYPES)]
    rack0 = [x for x in one_each if x not in tile_ids("t", table)]
    return [rack0, one_each], table


@pytest.mark.parametrize(("mode", "expected"), [("lowest_rack", [394.0, -394.0]), ("draw", [0.0, 0.0])])
def test_pool_exhausted_every_player_passes(mode, expected):
    racks, table = all_tiles_split()
    e = make(racks, table=table, pool=[], pool_exhausted=mode)
    assert e.game.pool_size == 0 and e.describe_action(DRAW) == "pass (pool empty)"
    e.step(DRAW)
    assert e.game.passes == 1 and not e.game.over and e.game.racks[0].sum() == 50
    e.step(DRAW)
    assert e.game.over
    assert [e.rewards["player_0"], e.rewards["player_1"]] == expected
    result = e.game.results[-1]
    assert result.end == mode and result.rack_totals == (394 - 36, 394)
    assert result.winners == ((0,) if mode == "lowest_rack" else ())


def test_lowest_rack_tie_shares_the_payment():
    racks = [["red 5", "orange 2"], ["blue 5", "black 2"], ["joker"]]
    e = make(racks, table=rest_of(racks), pool=[])  # every other tile lies on the table (a valid one)
    for _ in range(3):
        e.step(DRAW)
    assert e.game.over
    assert e.game.results[-1].winners == (0, 1)
    assert [e.rewards[a] for a in e.possible_agents] == [15.0, 15.0, -30.0]


def test_commit_resets_the_passes():
    racks, table = all_tiles_split()
    e = make(racks, table=table, pool=[], opened=[True, True])
    e.step(DRAW)  # pass
    stage_all(e, ["black 11"])  # player_1 builds a play around it
    while not mask_of(e)[COMMIT]:
        e.step(int(np.flatnonzero(mask_of(e)[:TILE_TYPES])[0]))
    e.step(COMMIT)
    assert e.game.passes == 0
    e.step(DRAW)
    assert e.game.passes == 1 and not e.game.over


def test_penalty_draw_with_strict_commit_false():
    racks = [["red 5", "red 6", "red 7", "blue 9"], ["black 1"]]
    table = ["black 2", "black 3", "black 4"]
    pool = rest_of(racks, table)
    e = make(racks, table=table, pool=pool, opened=[True, True], strict_commit=False)
    e.step(t("red 5"))
    assert mask_of(e)[COMMIT]  # always offered once something is staged
    e.step(COMMIT)  # red 5 alone: invalid, taken back, 3 penalty tiles
    game = e.game
    assert np.array_equal(game.table, counts(*table))
    assert np.array_equal(game.racks[0], counts(*racks[0]) + counts(*[pool[i] for i in range(3)]))
    assert game.pool_size == len(pool) - 3 and e.agent_selection == "player_1"
    assert not game.staged.any() and not game.last_placed.any()
    assert any("penalty: draws 3" in line for line in e.event_log)


def test_strict_commit_hides_an_invalid_commit():
    racks = [["red 5", "red 6", "red 7", "blue 9"], ["black 1"]]
    e = make(racks, table=["black 2", "black 3", "black 4"], opened=[True, True])
    e.step(t("red 5"))
    assert not mask_of(e)[COMMIT] and not mask_of(e)[DRAW] and mask_of(e)[t("red 6")]


def test_penalty_with_empty_pool_is_a_pass():
    racks, table = all_tiles_split()
    e = make(racks, table=table, pool=[], opened=[True, True], strict_commit=False)
    e.step(t("red 5"))
    e.step(COMMIT)  # red 5 alone is no play
    assert e.game.passes == 1 and e.game.racks[0].sum() == 50
    e.step(DRAW)
    assert e.game.over


def test_draw_after_play_draws_one_tile_after_a_commit():
    racks = [["red 9", "red 10", "red 11", "blue 1"], ["black 1"]]
    pool = rest_of(racks)
    e = make(racks, pool=pool, draw_after_play=True)
    stage_all(e, ["red 9", "red 10", "red 11"])
    e.step(COMMIT)
    assert np.array_equal(e.game.racks[0], counts("blue 1") + counts(*[pool[0]]))
    assert e.game.pool_size == len(pool) - 1
    # going out ends the game at once: no draw
    e = make([["red 9", "red 10", "red 11"], ["black 1"]], draw_after_play=True)
    stage_all(e, ["red 9", "red 10", "red 11"])
    e.step(COMMIT)
    assert e.game.over and e.game.racks[0].sum() == 0


def test_without_draw_after_play_a_commit_draws_nothing():
    racks = [["red 9", "red 10", "red 11", "blue 1"], ["black 1"]]
    e = make(racks)
    stage_all(e, ["red 9", "red 10", "red 11"])
    e.step(COMMIT)
    assert np.array_equal(e.game.racks[0], counts("blue 1")) and e.game.pool_size == 106 - 5


# ---------------------------------------------------------------- episodes, truncation, privacy


def test_games_per_episode_sums_scores_and_deals_again():
    e = make([["red 9", "red 10", "red 11"], ["black 5"]], games_per_episode=2)
    stage_all(e, ["red 9", "red 10", "red 11"])
    e.step(COMMIT)
    assert not any(e.terminations.values())
    assert e.rewards == {"player_0": 5.0, "player_1": -5.0}
    assert e.infos["player_0"]["game_result"].number == 1
    assert [str(m) for m in e.infos["player_1"]["arrangement"]] == ["run[red 9, red 10, red 11]"]
    assert e.infos["player_1"]["game_result"].arrangement == e.infos["player_1"]["arrangement"]
    game = e.game
    assert game.game_number == 2 and not game.table.any() and game.racks.sum(axis=1).tolist() == [14, 14]
    assert game.opened == [False, False] and game.pool_size == 78
    obs = e.observe(e.agent_selection)["observation"]
    assert obs[LAYOUT.GAME] == 0.5
    totals = {a: 5.0 * (1 if a == "player_0" else -1) for a in e.possible_agents}
    while not any(e.terminations.values()) and not any(e.truncations.values()):
        e.step(int(np.flatnonzero(mask_of(e))[0]))
        for a in e.possible_agents:
            totals[a] += e.rewards[a]
    assert e.game.over and len(e.game.results) == 2
    assert [totals[a] for a in e.possible_agents] == pytest.approx(e.game.scores.tolist())
    assert sum(e.game.scores) == pytest.approx(0)


def test_max_turns_truncates():
    e = raw_env(num_players=3, max_turns=4)
    e.reset(seed=3)
    for _ in range(4):
        assert not any(e.truncations.values())
        e.step(DRAW)
    assert all(e.truncations.values()) and not any(e.terminations.values())
    assert e.game.turn == 4 and not e.action_masks().any()


def test_staging_is_private_until_commit():
    racks = [["red 9", "red 10", "red 11", "blue 1"], ["black 1", "black 2"]]
    e = make(racks)
    before = e.observe("player_1")["observation"].copy()
    stage_all(e, ["red 9", "red 10"])
    assert np.array_equal(e.observe("player_1")["observation"], before)
    own = e.observe("player_0")["observation"]
    assert own[LAYOUT.STAGED + t("red 9")] == 1 and own[LAYOUT.STAGED + t("red 10")] == 1
    stage_all(e, ["red 11"])
    e.step(COMMIT)
    after = e.observe("player_1")["observation"]
    assert after[LAYOUT.TABLE + t("red 9")] == 1 and after[LAYOUT.LAST_PLACED + t("red 11")] == 1
    assert not after[LAYOUT.STAGED : LAYOUT.TABLE].any()


def test_observation_is_seen_from_the_own_seat():
    e = make(
        [["red 9", "red 10", "red 11"], ["black 1", "black 2"], ["blue 1"]], first_player=1, opened=[False, True, False]
    )
    obs = e.observe("player_2")["observation"]
    # relative seats of player_2: 0 = self, 1 = player_0, 2 = player_1
    assert obs[LAYOUT.RACK_SIZES : LAYOUT.RACK_SIZES + 4].tolist() == pytest.approx([1 / 14, 3 / 14, 2 / 14, 0])
    assert obs[LAYOUT.OPENED : LAYOUT.OPENED + 4].tolist() == [0, 0, 1, 0]
    assert obs[LAYOUT.TO_ACT : LAYOUT.TO_ACT + 4].tolist() == [0, 0, 1, 0]
    assert obs[LAYOUT.RACK + t("blue 1")] == 1 and obs[LAYOUT.RACK : LAYOUT.STAGED].sum() == 1
    assert obs[LAYOUT.NUM_PLAYERS + 1] == 1


def test_min_initial_zero_still_needs_a_meld_of_own_tiles():
    e = make([["red 1", "blue 1"], ["black 5"]], min_initial=0)
    assert not mask_of(e)[:TILE_TYPES].any() and mask_of(e)[DRAW]
    e = make([["red 1", "blue 1", "black 1"], ["black 5"]], min_initial=0)
    stage_all(e, ["red 1", "blue 1"])
    assert not mask_of(e)[COMMIT]
    stage_all(e, ["black 1"])
    assert mask_of(e)[COMMIT]


def test_engine_refuses_illegal_transitions_with_clear_errors():
    from tableenvs.rummikub.rules import Rummikub

    game = Rummikub(2)
    game.start(np.random.default_rng(0), racks=[["red 9", "red 10", "red 11", "blue 1"], ["black 1"]], first_player=0)
    with pytest.raises(ValueError, match="cannot stage black 1: the rack holds no more of it"):
        game.stage(t("black 1"))
    with pytest.raises(ValueError, match="cannot stage blue 1: no legal play contains it"):
        game.stage(t("blue 1"))
    with pytest.raises(ValueError, match="cannot commit: nothing staged"):
        game.commit()
    game.stage(t("red 9"))
    with pytest.raises(ValueError, match="cannot draw with tiles staged"):
        game.draw()
    with pytest.raises(ValueError, match="staged tiles are no legal play"):
        game.commit()
    game.stage(t("red 10"))
    game.stage(t("red 11"))
    assert game.commit() is None and game.to_act == 1 and game.opened == [True, False]


def test_engine_game_over_refuses_moves():
    from tableenvs.rummikub.rules import Rummikub

    game = Rummikub(2)
    game.start(np.random.default_rng(0), racks=[["red 9", "red 10", "red 11"], ["black 1"]], first_player=0)
    for name in ("red 9", "red 10", "red 11"):
        game.stage(t(name))
    assert game.commit() == [1.0, -1.0]
    assert game.over and game.results[-1].end == "out"
    with pytest.raises(ValueError, match="the episode is over"):
        game.draw()


def test_engine_seeded_deals_are_reproducible_and_complete():
    from tableenvs.rummikub.rules import Rummikub

    a, b = Rummikub(3), Rummikub(3)
    a.start(np.random.default_rng(7))
    b.start(np.random.default_rng(7))
    assert np.array_equal(a.racks, b.racks) and np.array_equal(a.pool, b.pool) and a.to_act == b.to_act
    assert a.racks.sum(axis=1).tolist() == [14, 14, 14] and a.pool_size == 106 - 42
    total = a.racks.sum(axis=0) + np.bincount(a.pool, minlength=TILE_TYPES)
    assert np.array_equal(total, FULL_SET)
