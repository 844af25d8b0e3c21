"""Llama Party's worlds come with a hidden history of the round that replays legally and shows the agent exactly
what it saw at every step of the round, not only at the current one.

``tableenvs.llama_party.worlds.sample_round`` samples the round's deal, the engine's draws and every pick so far;
here that history is replayed through a fresh env (the engine's draws scripted), the agent's observation and mask
are compared with the real game's at every step of the round, and the state it ends in is the world's. Also: the
agents' passed cards do move (the other drew them from the dummy, or passed them on), where an earlier
sampler kept them where they really were. Seeded loops over random positions with 2, 3 and 4 players.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_worlds_exact import Llama, play

import tableenvs
from tableenvs.llama_party.rules import LlamaParty
from tableenvs.llama_party.worlds import ScriptedDraws, sample_round


def replay_env(real, history):
    """A fresh env at the start of ``real``'s round, the history's deal dealt and its draws scripted."""
    env = tableenvs.make_raw("llama_party_v0", num_players=real.num_players)
    env.reset(seed=0)
    game, new = real.game, LlamaParty(real.deck, real.num_players)
    script = ScriptedDraws(history.draws)
    new.start(
        script, hands=history.deal, totals=game.totals, first_round=game.round_number, dummy_feeds=game.dummy_feeds
    )
    new.round_scores = [list(scores) for scores in game.round_scores]
    new.shown_hands = [list(hand) for hand in game.shown_hands]
    new.shown_display = list(game.shown_display)
    env.game, env._mask = new, None
    return env, script


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_sampled_round_replays_with_the_same_observations(num_players):
    game_spec = Llama({"num_players": num_players})
    moved = checked = 0
    for seed in range(12):
        deal = game_spec.deal(np.random.default_rng(seed))
        steps = int(np.random.default_rng([seed, 1]).integers(1, 44 * num_players))
        real, played, _, _ = play(game_spec, seed, deal, None, steps, "player_0")
        if real.game.over:
            continue
        agent = real.possible_agents[seed % num_players]
        seat = real.agent_name_mapping[agent]
        real, played, seen, _ = play(game_spec, seed, deal, played, 0, agent)
        for k in range(3):
            rng = np.random.default_rng([seed, k])
            rng.integers(2**63)  # as sample_world does first (the world's own generator)
            history = sample_round(real.game, seat, rng)
            assert history is not None
            start = len(seen) - 1 - len(history.actions)
            env, script = replay_env(real, history)
            for i, action in enumerate(history.actions):
                obs = env.observe(agent)
                assert (obs["observation"].tobytes(), obs["action_mask"].tobytes()) == seen[start + i], (seed, k, i)
                env.step(action)  # legal, or the env raises
            obs = env.observe(agent)
            assert (obs["observation"].tobytes(), obs["action_mask"].tobytes()) == seen[-1]
            assert script.used == len(history.draws)
            for key, value in history.state.items():
                assert getattr(env.game, key) == value, key
            checked += 1
            # the world is that state, in canonical order
            world = real.sample_world(agent, np.random.default_rng([seed, k])).game
            assert [sorted(hand) for hand in history.state["hands"]] == world.hands
            assert history.state["goal_of_slot"] == world.goal_of_slot
            passed = set(real.game.passed[seat])
            where_real = {card: slot for slot, hand in enumerate(real.game.hands) for card in hand if card in passed}
            where_world = {card: slot for slot, hand in enumerate(world.hands) for card in hand if card in passed}
            moved += where_real != where_world
    assert checked >= 15
    if num_players < 4:  # the other drew some of the agent's passed cards from the dummy, or not: both happen
        assert moved > 0
