"""Rummikub's holding candidates (tableenvs.rummikub.holding): before the opening meld the opening candidates, once
opened the heuristic's play or a draw, with what the draw's features say of the position.

The candidates are legal actions read from the observation alone; the draw is offered exactly when the heuristic
has a play that does not empty the rack, at the start of a turn, with the draw legal; its bins match the rack sizes
and the pool the observation shows; a model that holds draws where the heuristic plays, plays whole games legally, and
is built by the holding recipe.
"""

import numpy as np
import pytest
from game_positions import heuristic_decisions

import tableenvs
from tableenvs.policies import play_game
from tableenvs.rummikub import holding
from tableenvs.rummikub.agents import HeuristicPolicy
from tableenvs.rummikub.encoder import DRAW, LAYOUT
from tableenvs.rummikub.holding import FEATURES, HoldingChoices, fewest_other_tiles
from tableenvs.rummikub.openings import OpeningChoices
from tableenvs.rummikub.tiles import NUM_TILES, TILE_TYPES, TILE_VALUES
from tableenvs.training.scorer_recipes import recipes, scorer, train_scorer

COLUMN = {name: index for index, name in enumerate(FEATURES)}


POSITIONS = heuristic_decisions(1500)


def hold_weights(release_at=2, low_pool=9):
    """Weights that open as the openings recipe starts and hold (draw) until an opponent has ``release_at`` tiles or
    fewer or the pool holds ``low_pool`` or fewer."""
    weights = np.array(recipes("rummikub_v0")["holding"].start)
    fewest = ("hold_fewest_1", "hold_fewest_2", "hold_fewest_3", "hold_fewest_4", "hold_fewest_5_6")
    for name, upper in zip(fewest, holding.FEWEST_BINS, strict=True):
        weights[COLUMN[name]] = -10.0 if upper <= release_at else 1.0
    weights[COLUMN["hold_fewest_7_up"]] = 1.0
    for name, upper in zip(("hold_pool_0_4", "hold_pool_5_9", "hold_pool_10_19"), holding.POOL_BINS, strict=True):
        weights[COLUMN[name]] = -10.0 if upper <= low_pool else 0.0
    return weights


def test_the_candidates_are_legal_read_from_the_observation_and_the_draw_is_offered_exactly_when_holding_is_a_choice():
    raw = tableenvs.make_raw("rummikub_v0")
    choices, again = HoldingChoices(raw), HoldingChoices(raw)
    heuristic = HeuristicPolicy(raw)
    offered = 0
    for observation, mask in POSITIONS:
        features, actions = choices(observation, mask)
        assert features.shape == (len(actions), len(FEATURES)) and features.dtype == np.float32
        assert np.all(mask[actions] == 1)
        same_features, same_actions = again(observation.copy(), mask.copy())
        assert np.array_equal(features, same_features) and np.array_equal(actions, same_actions)
        rack, staged, table, opened = HeuristicPolicy.read(observation)
        if not opened:
            opening_features, opening_actions = OpeningChoices(raw)(observation, mask)
            assert np.array_equal(actions, opening_actions)
            assert np.array_equal(features[:, : len(opening_features[0])], opening_features)
            assert not features[:, len(opening_features[0]) :].any()
            continue
        play = heuristic.plan(rack, table, staged, opened)
        choice = bool(mask[DRAW]) and not staged.any() and play is not None and play.sum() < rack.sum()
        if not choice:
            assert len(actions) == 1 and actions[0] == heuristic.act(observation, mask, None)
            continue
        offered += 1
        assert actions[1] == DRAW and actions[0] == heuristic.act(observation, mask, None)
        assert features[0, COLUMN["play_tiles"]] == np.float32(play.sum() / 14)
        assert np.count_nonzero(features[0]) == 1  # the play reads its size only
        assert features[1, COLUMN["play_tiles"]] == 0
    assert offered > 100


def test_the_draws_features_bin_the_fewest_opponent_tiles_and_the_pool_and_measure_the_rack():
    observation, _ = next((o, m) for o, m in POSITIONS if HeuristicPolicy.read(o)[3])
    observation = observation.copy()
    rack = HeuristicPolicy.read(observation)[0]
    for fewest, pool, fewest_name, pool_name in (
        (1, 0, "hold_fewest_1", "hold_pool_0_4"),
        (3, 4, "hold_fewest_3", "hold_pool_0_4"),
        (5, 5, "hold_fewest_5_6", "hold_pool_5_9"),
        (6, 19, "hold_fewest_5_6", "hold_pool_10_19"),
        (7, 20, "hold_fewest_7_up", "hold_pool_20_up"),
        (12, 40, "hold_fewest_7_up", "hold_pool_20_up"),
    ):
        observation[LAYOUT.RACK_SIZES + 1 : LAYOUT.RACK_SIZES + 4] = np.array([fewest + 2, fewest, fewest + 1]) / 14
        observation[LAYOUT.POOL] = pool / NUM_TILES
        assert fewest_other_tiles(observation) == fewest
        row = np.zeros(len(FEATURES), np.float32)
        holding.hold_features(observation, rack, row)
        on = {FEATURES[i] for i in np.flatnonzero(row)} - {"hold_rack_tiles", "hold_rack_points"}
        assert on == {fewest_name, pool_name}
        assert row[COLUMN["hold_rack_tiles"]] == np.float32(rack.sum() / 14)
        assert row[COLUMN["hold_rack_points"]] == np.float32(rack[:TILE_TYPES] @ TILE_VALUES / 100)


def test_a_model_that_holds_draws_where_the_heuristic_plays_and_plays_after_the_release():
    raw = tableenvs.make_raw("rummikub_v0")
    holder = scorer(raw, hold_weights(), recipe="holding")
    held = released = 0
    for observation, mask in POSITIONS:
        features, actions = HoldingChoices(raw)(observation, mask)
        if len(actions) != 2 or actions[1] != DRAW:
            continue
        pool = round(float(observation[LAYOUT.POOL]) * NUM_TILES)
        release = fewest_other_tiles(observation) <= 2 or pool <= 9
        action = holder.act(observation, mask, None)
        assert action == (actions[0] if release else DRAW)
        held += not release
        released += release
    assert held > 0 and released > 0


@pytest.mark.parametrize("players", [2, 4])
def test_a_holding_model_plays_whole_games_legally(players):
    raw = tableenvs.make_raw("rummikub_v0", num_players=players)
    rng = np.random.default_rng(0)
    for seed in range(4):
        policies = [scorer(raw, hold_weights(), recipe="holding"), HeuristicPolicy(raw)] * (players // 2)
        scores, _ = play_game(raw, policies, seed=seed, rng=rng)  # raises on an illegal action
        assert len(scores) == players


def test_the_holding_recipe_writes_a_model_that_names_its_candidates(tmp_path):
    lines = []
    path = train_scorer(
        "rummikub_v0", tmp_path / "run", recipe="holding", generations=1, population=2, elite=1, games=4, workers=1,
        say=lines.append,
    )
    from tableenvs.policies.model_file import load_numpy_policy

    model = load_numpy_policy(path)
    assert model.candidates == "rummikub_holding_v1" and model.observation_size == len(FEATURES)
    assert model.meta["recipe"] == "holding" and "generation 1/1" in lines[0]
    with pytest.raises(ValueError, match="declares no recipes named 'nope'; it declares: openings, holding"):
        train_scorer("rummikub_v0", tmp_path / "other", recipe="nope")


def test_the_shipped_models_large_plays_are_legal_by_an_independent_integer_programme():
    """The shipped model holds its tiles and goes out in large plays: every commit of 10 games (both policies') leaves
    a table that the ILP of the solver tests (``ilp_oracle.py``, sharing nothing with the solver) can arrange."""
    from ilp_oracle import Oracle

    from tableenvs.policies import make_policy
    from tableenvs.rummikub.encoder import COMMIT

    raw = tableenvs.make_raw("rummikub_v0")
    model, oracle = make_policy("trained", raw), Oracle()
    commits, model_plays = [], []

    def on_step(world, agent, view, action):
        game = world.game
        if action == COMMIT and game.staged.any():
            commits.append(oracle.arrangeable(game.table + game.staged))
            if world.agent_name_mapping[agent] % 2 == 0:
                model_plays.append(int(game.staged.sum()))

    for deal in range(10):
        play_game(raw, [model, HeuristicPolicy(raw)] * 2, seed=deal, rng=np.random.default_rng(0), on_step=on_step)
    assert len(commits) > 50 and all(commits)
    assert max(model_plays) >= 15  # the test reaches the plays that holding makes
