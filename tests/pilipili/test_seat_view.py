"""Pili Pili's one visibility decision, ``PiliPiliGame.seen_by(seat)``.

Over random games under every mission of the standard deck, at every step and for every seat, the observation, the
text view and a sampled world say exactly what ``seen_by`` says: the phase as the seat knows it, whether its own and
the others' hands are open to it.
"""

from __future__ import annotations

import numpy as np
import pytest

import tableenvs
from tableenvs.pilipili.rules import DECLARE, GAME_OVER, NUM_PHASES, PLAY


def _phase_of(observation: np.ndarray, offset: int) -> int | None:
    hot = np.flatnonzero(observation[offset : offset + NUM_PHASES])
    return int(hot[0]) if len(hot) else None


@pytest.mark.parametrize("seed", range(12))
def test_observation_view_and_world_follow_seen_by(seed):
    env = tableenvs.make_raw("pilipili_v0", num_players=4, missions="standard")
    env.reset(seed=seed)
    offset = env.encoder.observation_layout.offsets()["phase"]
    rng = np.random.default_rng(seed)
    while env.agents and not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
        game = env.game
        for agent in env.possible_agents:
            seat = env.agent_name_mapping[agent]
            view = game.seen_by(seat)
            observation = env.observe(agent)["observation"]
            assert _phase_of(observation, offset) == (None if game.phase == GAME_OVER else int(view.phase))
            assert observation[offset + NUM_PHASES] == float(view.own_hand)
            assert observation[offset + NUM_PHASES + 1] == float(view.other_hands)
            assert f"phase {view.phase.name.lower()}" in env.render_view(agent)
            if game.phase == DECLARE and seat != game.to_act:
                assert view.phase == PLAY  # to the others the wild is still being played
                world = env.sample_world(agent, rng)
                assert world.game.phase == PLAY  # the world is put back to the moment before the declaration
        env.step(int(rng.choice(env.legal_actions())))


def test_a_declaration_is_seen_as_a_play_by_the_others():
    """Search the seeds for a game that reaches DECLARE, so the check above is not vacuous for that phase."""
    for seed in range(200):
        env = tableenvs.make_raw("pilipili_v0", num_players=3, missions="standard")
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while env.agents and not env.terminations[env.agent_selection] and not env.truncations[env.agent_selection]:
            game = env.game
            if game.phase == DECLARE:
                declarer = game.to_act
                assert game.seen_by(declarer).phase == DECLARE
                assert all(game.seen_by(s).phase == PLAY for s in range(3) if s != declarer)
                return
            env.step(int(rng.choice(env.legal_actions())))
    pytest.fail("no game of 200 seeds reached the declare phase")
