"""Pili Pili twin games that differ only in a card another seat has picked and not yet handed over (a pick to pass,
or the card a trick's winner gives in a swap, the Trade mission) give byte-identical sampled worlds.

The twins: the same deal and the same moves but one hidden pick, replaced by another card of the picker's hand; the
agent (any other seat) must have seen the same observation at every step of both. Its worlds (``get_state()``) must
then be equal for the same generator, and every world keeps the agent's observation and holds picks of the picker's
hand. Before the picks were drawn afresh, nearly every such pair differed (147 of 147 swap pairs, 134 of 136 pass
pairs in a scan of 150 seeds each).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import tableenvs
from tableenvs.pilipili.encoder import PICK
from tableenvs.pilipili.rules import PASS, SWAP_GIVE


def _deck(hand_size: int, *effects: dict) -> list[dict]:
    return [{"id": 1, "hand_size": hand_size, "expert": True, "effects": list(effects)}]


DECKS = {
    "standard": "standard",
    "trade": _deck(5, {"type": "swap_after_trick"}),
    "pass": _deck(6, {"type": "pass_left", "count": 2}),
    "pass-and-trade": _deck(5, {"type": "pass_left", "count": 1}, {"type": "swap_after_trick"}),
    "reveal": _deck(5, {"type": "pass_left", "count": 1}, {"type": "reveal_hands"}),
}
SEEDS = 40


def make(deck: str, n: int, seed: int):
    env = tableenvs.make_raw("pilipili_v0", num_players=n, missions=DECKS[deck], max_rounds=30)
    env.reset(seed=seed)
    return env


def hidden_pick_game(deck: str, seed: int):
    """``(moves, index, alternative, picker)``: random moves up to and including a hidden pick (after a random
    number of moves), ``moves[index]`` that pick and ``alternative`` another legal one; None if the game had none."""
    n = 3 + seed % 3
    env = make(deck, n, seed)
    rng = np.random.default_rng([seed, 54])
    start = int(rng.integers(0, 60))
    moves: list[int] = []
    while len(moves) < 3000:
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            return None
        game = env.game
        legal = env.legal_actions()
        action = int(rng.choice(legal))
        picks = [a for a in legal if PICK <= a < PICK + 56]
        hidden = game.phase == PASS or (game.phase == SWAP_GIVE and game.to_act == game.swap_winner)
        if hidden and len(moves) >= start and action in picks and len(picks) > 1:
            after = env.clone()
            after.step(action)
            if after.game.staged[game.to_act]:  # still staged (the last pick of a pass hands every pick over)
                alternative = int(rng.choice([a for a in picks if a != action]))
                moves.append(action)
                return n, moves, len(moves) - 1, alternative, game.to_act
        env.step(action)
        moves.append(action)
    return None


def observations(env, agent: str) -> tuple[bytes, bytes]:
    seen = env.observe(agent)
    return seen["observation"].tobytes(), seen["action_mask"].tobytes()


@pytest.mark.parametrize("deck", sorted(DECKS))
def test_twins_differing_in_a_hidden_pick_give_identical_worlds(deck):
    pairs = 0
    for seed in range(SEEDS):
        found = hidden_pick_game(deck, seed)
        if found is None:
            continue
        n, moves, index, alternative, picker = found
        seat = [s for s in range(n) if s != picker][seed % (n - 1)]
        real, twin = make(deck, n, seed), make(deck, n, seed)
        agent = real.possible_agents[seat]
        same = True
        for i, action in enumerate(moves):
            same &= observations(real, agent) == observations(twin, agent)
            real.step(action)
            twin.step(alternative if i == index else action)
        same &= observations(real, agent) == observations(twin, agent)
        assert same, (deck, seed)  # the pick is hidden from every other seat
        assert real.game.staged[picker] != twin.game.staged[picker] or real.game.hands != twin.game.hands
        pairs += 1
        for k in range(3):
            worlds = [env.sample_world(agent, np.random.default_rng([seed, k])) for env in (real, twin)]
            records = [json.dumps(world.get_state(), sort_keys=True) for world in worlds]
            assert records[0] == records[1], (deck, seed, k)
            world = worlds[0]
            assert observations(world, agent) == observations(real, agent)
            for s, picks in enumerate(world.game.staged):
                assert set(picks) <= set(world.game.hands[s]) and len(set(picks)) == len(picks)
                assert len(picks) == len(real.game.staged[s])
            assert world.game.staged[seat] == real.game.staged[seat]  # the agent's own picks are its own
    assert pairs >= SEEDS // 8, pairs
