"""``sample_world(agent, rng)`` in Pili Pili and Llama Party (hypothesis, random games; every Pili Pili information
rule in ``tests/pilipili/test_pilipili_sample_world.py``, which uses the checks here).

The defining property: ``observe(agent)`` of a sampled world (observation and mask) equals ``observe(agent)`` of the
real game, while what the agent cannot see varies across samples; what it knows is kept exactly (the cards it handed
over stay where they are; forehead-seen and revealed hands stay); the world is a valid game that plays on under the
rules; the real game is untouched. Rummikub's sampler is tested in ``test_state_api.py``.
"""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tableenvs
from tableenvs.core.table_env import TableEnv


def random_point(env: TableEnv, seed: int, steps: int) -> None:
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            return
        env.step(int(rng.choice(env.legal_actions())))


def pili_locations(game) -> dict[int, tuple]:
    where = {}
    for s, hand in enumerate(game.hands):
        where.update((card, ("hand", s)) for card in hand)
    where.update((card, ("stock",)) for card in game.stock)
    where.update((card, ("trick", s)) for s, card, _ in game.trick)
    where.update((card, ("played",)) for card in game.played_cards)
    return where


def check_worlds(env: TableEnv, rng: np.random.Generator, samples: int = 3) -> int:
    """Sample worlds for every agent; check the property; return how many agents saw their hidden part vary."""
    before = json.dumps(env.get_state())
    varied = 0
    for agent in env.possible_agents:
        truth = env.observe(agent)
        hidden = set()
        for _ in range(samples):
            world = env.sample_world(agent, rng)
            seen = world.observe(agent)
            assert np.array_equal(seen["observation"], truth["observation"]), agent
            assert np.array_equal(seen["action_mask"], truth["action_mask"]), agent
            hidden.add(json.dumps(world.get_state()["rules"]))
            check_world(env, world, agent)
        varied += len(hidden) > 1
    assert json.dumps(env.get_state()) == before  # the real game is untouched
    return varied


def check_world(env: TableEnv, world: TableEnv, agent: str) -> None:
    seat = env.agent_name_mapping[agent]
    TableEnv.from_state(json.loads(json.dumps(world.get_state())))  # a valid record (cards all accounted for)
    if env.metadata["name"] == "pilipili_v0":
        real, fake = pili_locations(env.game), pili_locations(world.game)
        for card in env.game.given[seat]:  # what the agent handed over stays where it is
            assert fake[card] == real[card]
    play_rng = np.random.default_rng(7)
    for _ in range(30):  # the world plays on under the rules
        name = world.agent_selection
        if world.terminations[name] or world.truncations[name]:
            break
        world.step(int(play_rng.choice(world.legal_actions())))


def test_pilipili_hidden_hands_vary_and_known_hands_do_not():
    env = tableenvs.make_raw("pilipili_v0", num_players=4, missions="none")
    random_point(env, 3, 6)  # bidding done, early tricks: the others hold several cards each
    seat = env.current_seat
    agent = env.possible_agents[seat]
    others = set()
    for i in range(5):
        world = env.sample_world(agent, np.random.default_rng(i))
        assert sorted(world.game.hands[seat]) == sorted(env.game.hands[seat])  # (worlds sort the hands)
        assert world.game.played_cards == env.game.played_cards
        others.add(json.dumps([sorted(h) for s, h in enumerate(world.game.hands) if s != seat]))
    assert len(others) == 5
    deck = [{"id": 1, "hand_size": 5, "expert": True, "effects": [{"type": "reveal_hands"}]}]
    env = tableenvs.make_raw("pilipili_v0", num_players=4, missions=deck)
    random_point(env, 3, 6)
    world = env.sample_world("player_1", np.random.default_rng(0))
    assert [sorted(h) for h in world.game.hands] == [sorted(h) for h in env.game.hands]  # revealed: all known
    assert sorted(world.game.stock) == sorted(env.game.stock)


@settings(max_examples=60, deadline=None)
@given(num_players=st.integers(2, 4), seed=st.integers(0, 2**32 - 1), steps=st.integers(0, 180))
def test_llama_party_sample_world_keeps_the_observation(num_players, seed, steps):
    env = tableenvs.make_raw("llama_party_v0", num_players=num_players)
    random_point(env, seed, steps)
    check_worlds(env, np.random.default_rng(seed))


def test_worlds_vary_over_random_games():
    """The hidden parts do vary: across random points, most agents get more than one distinct world."""
    total = varied = 0
    for name, options in (("pilipili_v0", {"num_players": 4}), ("llama_party_v0", {"num_players": 3})):
        for seed in range(6):
            env = tableenvs.make_raw(name, **options)
            random_point(env, seed, 5 + 7 * seed)
            varied += check_worlds(env, np.random.default_rng(seed))
            total += env.num_players
    assert varied >= 0.9 * total, (varied, total)
