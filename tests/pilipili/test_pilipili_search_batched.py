"""``search:batched=1`` in Pili Pili: the rollouts of sampled worlds run as one batch in the batched engine, the
batched heuristic playing every seat. Pili Pili's heuristic has random choices (naming a partner under the designate
missions, a hand position under memorise); the batched search draws one seed per world from its generator, as
``root=paired`` does, and every copy of the world draws from ``default_rng(seed)``: so its values are the flat
search's rollouts world by world, action by action, draw by draw, and with a ``sims`` budget it chooses exactly as
``search:root=paired`` does. Budgets are tiny: behaviour, not strength (strength: benchmarks/batched_search.py)."""

from __future__ import annotations

import numpy as np
import pytest

import tableenvs
from tableenvs.policies import make_policy
from tableenvs.policies.batched_search import BatchedRollouts
from tests.vector_differential import paired_rollout_values

NAME = "pilipili_v0"


def _position(num_players: int, seed: int, mission: int | None, steps: int):
    """A raw env at a decision with a choice: the round of ``mission`` (None: the deal's own), after ``steps``
    random legal moves (or the first with a choice after them)."""
    env = tableenvs.make_raw(NAME, num_players=num_players)
    env.reset(seed=seed, options=None if mission is None else {"mission": mission})
    rng = np.random.default_rng(seed)
    done = 0
    while done < steps or len(env.legal_actions()) < 2:
        env.step(int(rng.choice(env.legal_actions())))
        done += 1
    return env


@pytest.mark.parametrize(
    ("num_players", "mission", "steps"),
    [(5, None, 0), (5, None, 23), (5, 27, 0), (5, 35, 2), (5, 25, 3), (3, 25, 0), (8, None, 9), (2, None, 5)]
    + [(4, 25, 3)],
)
def test_batched_rollouts_are_the_paired_search_rollouts_draw_for_draw(num_players, mission, steps):
    env = _position(num_players, 11 * num_players + steps, mission, steps)
    agent, legal = env.agent_selection, env.legal_actions()
    flat = make_policy("search:sims=8:root=paired", env)
    worlds = 40 if mission is None else 12  # with 2..8 legal actions: more than one chunk of the engine
    values = BatchedRollouts(env, "heuristic", depth=400).values(
        env, agent, legal, rng := np.random.default_rng(3), worlds, np.inf
    )
    expected_rng = np.random.default_rng(3)
    expected = paired_rollout_values(env, legal, expected_rng, worlds, flat, seeded=True)
    assert values.shape == (worlds, len(legal))
    assert np.array_equal(values, expected)
    assert rng.bit_generator.state == expected_rng.bit_generator.state  # the same draws from the search's generator
    assert values.std() > 0  # the worlds and actions differ: not a constant
    if mission in (27, 35, 25):  # the heuristic's random choices matter: other seeds, other rollouts
        other = paired_rollout_values(env, legal, np.random.default_rng(3), worlds, flat, seeded=False)
        assert not np.array_equal(other, expected)


@pytest.mark.parametrize("mission", [None, 27, 25])
def test_the_batched_search_chooses_as_the_paired_search_with_a_sims_budget(mission):
    env = _position(5, 2, mission, 1)
    batched = make_policy("search:batched=1:sims=60:z=2", env)
    paired = make_policy("search:root=paired:sims=60:z=2", env)
    before = env.get_state()
    for seed in range(3):
        seen = env.observe(env.agent_selection)
        rngs = np.random.default_rng(seed), np.random.default_rng(seed)
        action = batched.act(seen["observation"], seen["action_mask"], rngs[0])
        assert action == paired.act(seen["observation"], seen["action_mask"], rngs[1])
        assert seen["action_mask"][action] == 1
        assert batched.last_simulations == paired.last_simulations > 0
        assert rngs[0].bit_generator.state == rngs[1].bit_generator.state
    assert env.get_state() == before  # the searched env is left as it was


def test_a_millisecond_budget_and_random_rollouts_play_legal_moves():
    env = _position(5, 4, None, 7)
    seen = env.observe(env.agent_selection)
    count = int(seen["action_mask"].sum())
    for spec in ("search:batched=1:ms=0.001", "search:batched=1:ms=20:rollout=random"):
        policy = make_policy(spec, env)
        action = policy.act(seen["observation"], seen["action_mask"], np.random.default_rng(0))
        assert seen["action_mask"][action] == 1
        assert policy.last_simulations >= 2 * count and policy.last_simulations % count == 0


def test_share_generator_gives_each_row_a_copy_of_one_generator_and_refuses_bad_input():
    from tableenvs.pilipili.batched_heuristic import BatchedHeuristic

    heuristic = BatchedHeuristic(5, 6)
    source = np.random.default_rng(42)
    heuristic.share_generator(range(1, 4), source)
    expected = np.random.default_rng(42).bit_generator.state
    assert source.bit_generator.state == expected  # not advanced
    for env in (1, 2, 3):
        assert heuristic.generator(env).bit_generator.state == expected
    assert heuristic.generator(0).bit_generator.state == np.random.default_rng(0).bit_generator.state  # untouched
    with pytest.raises(ValueError, match="env indices must be a sequence in 0..5"):
        heuristic.share_generator([6], source)
    with pytest.raises(ValueError, match="give a numpy Generator"):
        heuristic.share_generator([0], 42)  # type: ignore[arg-type]
