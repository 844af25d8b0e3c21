"""Issue 15 follow-ups: the write-up's end of game (``end_on_empty_pool``) and the joker-retrieval decision."""

import numpy as np
import pytest
from test_rummikub_env_rules import counts, make, rest_of, stage_all, t

from tableenvs.rummikub.encoder import COMMIT, DRAW
from tableenvs.rummikub.env import raw_env
from tableenvs.rummikub.solver import is_valid_play
from tableenvs.rummikub.tiles import JOKER

# player_0 can go out with red 9, 10, 11 (an opening of exactly 30); player_1 draws the pool's last tile first
RACKS = [["red 9", "red 10", "red 11"], ["black 1", "orange 5"]]
LAST_TILE = "orange 13"


def all_but_the_last_tile(racks):
    """Every tile not on the racks, less one copy of ``LAST_TILE`` (the whole pool): a valid table."""
    rest = rest_of(racks)
    rest.remove(t(LAST_TILE))
    return rest


def one_tile_pool(**options):
    table = all_but_the_last_tile(RACKS)
    return make(RACKS, table=table, pool=[LAST_TILE], first_player=1, **options)


def test_default_play_goes_on_after_the_pool_is_drawn_out():
    e = one_tile_pool()
    assert not e.unwrapped.game.end_on_empty_pool
    e.step(DRAW)  # player_1 takes the last tile
    game = e.game
    assert game.pool_size == 0 and not game.over
    stage_all(e, RACKS[0])
    e.step(COMMIT)  # player_0 still goes out
    assert game.over and game.results[-1].end == "out" and game.results[-1].winners == (0,)


@pytest.mark.parametrize(
    ("mode", "end", "winners", "rewards"),
    [("lowest_rack", "lowest_rack", (1,), [-30.0, 30.0]), ("draw", "draw", (), [0.0, 0.0])],
)
def test_end_on_empty_pool_ends_the_game_when_the_last_tile_is_drawn(mode, end, winners, rewards):
    e = one_tile_pool(end_on_empty_pool=True, pool_exhausted=mode)
    e.step(DRAW)  # player_1 takes the last tile: the game ends at once
    game = e.game
    assert game.over and game.pool_size == 0
    result = game.results[-1]
    assert result.end == end and result.winners == winners and result.rack_totals == (30, 19)
    assert [e.rewards["player_0"], e.rewards["player_1"]] == rewards
    assert all(e.terminations.values())


def test_end_on_empty_pool_counts_the_draw_after_a_play_and_a_penalty_draw():
    racks = [["red 9", "red 10", "red 11", "blue 1"], ["black 1"]]
    table = all_but_the_last_tile(racks)
    e = make(racks, table=table, pool=[LAST_TILE], end_on_empty_pool=True, draw_after_play=True)
    stage_all(e, ["red 9", "red 10", "red 11"])
    e.step(COMMIT)  # the play, then the draw after it empties the pool: game over
    assert e.game.over and e.game.results[-1].end == "lowest_rack"
    assert np.array_equal(e.game.racks[0], counts("blue 1", LAST_TILE))
    # a failed play's penalty draw that empties the pool ends the game too
    table = ["black 2", "black 3", "black 4"]
    first = ["red 5", "red 6", "red 7", "blue 9"]
    second = rest_of([first], table)
    second.remove(t(LAST_TILE))  # player_1 holds every other tile; the pool is one tile
    e = make(
        [first, second], table=table, pool=[LAST_TILE], opened=[True, True], strict_commit=False, end_on_empty_pool=True
    )
    e.step(t("red 5"))
    e.step(COMMIT)  # red 5 alone is no play: taken back, the penalty draw takes the last tile
    result = e.game.results[-1]
    assert e.game.over and result.end == "lowest_rack" and result.winners == (0,)
    assert result.rack_totals[0] == 5 + 6 + 7 + 9 + 13


def test_end_on_empty_pool_is_checked_as_a_bool():
    with pytest.raises(ValueError, match="end_on_empty_pool"):
        raw_env(end_on_empty_pool="yes")


# ---------------------------------------------------------------- joker retrieval (decision, docs/rummikub.md)

JOKER_TABLE = ["red 5", "blue 5", "joker", "blue 9", "black 9", "orange 9"]


def test_a_freed_joker_may_end_in_a_meld_of_table_tiles_only():
    """The docs' example: black 5 and orange 5 complete the group of 5s; the freed joker can only join the 9s."""
    assert is_valid_play(counts(*JOKER_TABLE), counts("black 5", "orange 5", "blue 1"), counts("black 5", "orange 5"))
    e = make([["black 5", "orange 5", "blue 1"], ["black 1"]], table=JOKER_TABLE, opened=[True, True])
    stage_all(e, ["black 5", "orange 5"])
    assert e.action_masks()[COMMIT]
    e.step(COMMIT)
    melds = sorted(str(m) for m in e.game.arrangement)
    assert melds == [
        "group[black 5, red 5, blue 5, orange 5]",
        "group[black 9, joker=red 9, blue 9, orange 9]",
    ], melds
    (with_joker,) = [m for m in e.game.arrangement if JOKER in m.tiles]
    assert not set(with_joker.tiles) & {t("black 5"), t("orange 5")}  # no tile from the rack in the joker's meld
