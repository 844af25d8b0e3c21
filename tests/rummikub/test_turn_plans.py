"""The Rummikub derived inputs ``rummikub_turn_plans_v1`` (``tableenvs.rummikub.features.TurnPlans``): computed from
the seat's observation and mask alone, each play's next action is legal and leads through a whole legal turn, and
the first play's next action is the heuristic's own choice (a network that copies it plays the heuristic)."""

from __future__ import annotations

import numpy as np
import pytest
from test_turn_search import turn_starts

import tableenvs
from tableenvs.policies import make_policy
from tableenvs.policies.input_features import feature_size, input_features
from tableenvs.rummikub.encoder import COMMIT, DRAW, NUM_ACTIONS
from tableenvs.rummikub.features import PLAY_BLOCK, TurnPlans


def next_actions(values):
    """The next action of each of the three plays (``None`` where a play gives none)."""
    hot = [np.flatnonzero(values[slot * PLAY_BLOCK : slot * PLAY_BLOCK + NUM_ACTIONS]) for slot in range(3)]
    assert all(len(h) <= 1 for h in hot)
    return [int(h[0]) if len(h) else None for h in hot]


@pytest.mark.parametrize("players", [2, 4])
def test_the_first_play_is_the_heuristic_choice_at_every_decision(players):
    env = tableenvs.make_raw("rummikub_v0", num_players=players, max_turns=80)
    features = input_features("rummikub_turn_plans_v1", env)
    assert features.size == feature_size("rummikub_turn_plans_v1") == 3 * PLAY_BLOCK
    heuristic = make_policy("heuristic", env)
    rng = np.random.default_rng(0)
    checked = plays = 0
    for seed in range(3):
        env.reset(seed=seed)
        while env.outcome() is None:
            seen = env.observe(env.agent_selection)
            observation, mask = seen["observation"], seen["action_mask"]
            values = features(observation, mask)
            action = heuristic.act(observation, mask, rng)
            first = next_actions(values)[0]
            assert first == action or (first is None and action in (DRAW, COMMIT)), (first, action)
            assert all(mask[a] for a in next_actions(values) if a is not None)
            plays += values[NUM_ACTIONS] == 1.0
            env.step(action)
            checked += 1
    assert checked > 200 and plays > 20


def test_following_any_play_is_a_whole_legal_turn_that_places_exactly_its_tiles():
    env = tableenvs.make_raw("rummikub_v0", num_players=3, max_turns=60)
    followed = 0
    for position in turn_starts(env, 6):
        features = TurnPlans(position)
        seen = position.observe(position.agent_selection)
        start = features(seen["observation"], seen["action_mask"])
        for slot in (1, 2):
            if start[slot * PLAY_BLOCK + NUM_ACTIONS] != 1.0 or start[slot * PLAY_BLOCK + NUM_ACTIONS + 3] == 1.0:
                continue  # no such play, or the heuristic's own
            world, seat = position.clone(), position.agent_selection
            table = world.game.table.copy()
            for _ in range(40):
                seen = world.observe(seat)
                action = next_actions(features(seen["observation"], seen["action_mask"]))[slot]
                assert action is not None and seen["action_mask"][action]
                world.step(action)
                if action == COMMIT:
                    break
            placed = world.game.table - table
            assert action == COMMIT and placed.sum() == round(start[slot * PLAY_BLOCK + NUM_ACTIONS + 1] * 14)
            followed += 1
    assert followed >= 3
