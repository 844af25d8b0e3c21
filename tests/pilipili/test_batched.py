"""The batched Pili Pili engine plays exactly the AEC env's game (differential), and refuses bad input clearly.

64 batched envs seeded ``s .. s+63`` and 64 raw AEC envs reset with the same seeds are driven by the same random
legal actions; at every step they must agree on the seat to act, the observation, the mask, every seat's reward
and which games ended, through each env's game end and its automatic next game (the AEC env's ``reset()``
without a seed). The compiled kernels are built once per machine (numba's disk cache), then these run in seconds.
"""

from __future__ import annotations

import numpy as np
import pytest

import tableenvs
from tableenvs.core.state_api import StateAPI
from tableenvs.pilipili.batched import make_batched

NUM_ENVS = 64


def play_both(num_players: int, seed: int, games: int = 2, **options):
    """Drive the batched engine and the AEC envs side by side until every env has ended ``games`` games; assert
    equality at every step. Returns the batched engine, the AEC envs and the mission ids dealt."""
    batched = make_batched(NUM_ENVS, num_players=num_players, **options)
    obs, mask = batched.reset(seed)
    envs = []
    for i in range(NUM_ENVS):
        env = tableenvs.make_raw("pilipili_v0", num_players=num_players, **options)
        env.reset(seed=seed + i)
        envs.append(env)
    chooser = np.random.default_rng(seed)
    ended = np.zeros(NUM_ENVS, np.int64)
    missions: set[int] = set()
    steps = 0
    while ended.min() < games:
        actions = np.zeros(NUM_ENVS, np.int64)
        for i, env in enumerate(envs):
            seen = env.observe(env.agent_selection)
            assert batched.to_act[i] == env.current_seat, f"env {i} step {steps}: seat to act"
            assert np.array_equal(obs[i], seen["observation"]), f"env {i} step {steps}: observation"
            assert np.array_equal(mask[i], seen["action_mask"]), f"env {i} step {steps}: mask"
            missions.add(env.game.mission.id)
            actions[i] = chooser.choice(np.flatnonzero(mask[i]))
        obs, mask, rewards, terminated, truncated = batched.step(actions)
        assert obs.dtype == np.float32 and mask.dtype == np.int8 and rewards.dtype == np.float32
        for i, env in enumerate(envs):
            env.step(int(actions[i]))
            expected = np.array([env.rewards[agent] for agent in env.possible_agents], np.float32)
            assert np.array_equal(rewards[i], expected), f"env {i} step {steps}: rewards"
            assert terminated[i] == any(env.terminations.values()), f"env {i} step {steps}: terminated"
            assert truncated[i] == any(env.truncations.values()), f"env {i} step {steps}: truncated"
            if terminated[i] or truncated[i]:
                ended[i] += 1
                env.reset()
        steps += 1
    return batched, envs, missions


@pytest.mark.parametrize("num_players", [2, 5, 8])
def test_same_game_as_the_aec_env(num_players):
    batched, envs, missions = play_both(num_players, seed=1000 * num_players)
    assert len(missions) >= 20  # the standard deck: many mission effects were played, not only plain rounds
    for i in (0, 17, 63):  # the state record of a game under way: the AEC env's own, and it opens
        record = batched.get_state(i)
        assert record == envs[i].get_state()
        assert StateAPI.from_state(record).observe(envs[i].agent_selection)["observation"].tolist() == (
            envs[i].observe(envs[i].agent_selection)["observation"].tolist()
        )


def test_every_mission_of_the_standard_deck_is_played_the_same():
    """Long enough that each of the 36 cards is dealt (and played under random legal actions) several times."""
    _, _, missions = play_both(4, seed=77, games=6)
    assert missions == set(range(1, 37))


@pytest.mark.parametrize(
    "options",
    [{"missions": "none"}, {"expert": False, "reward": "win"}, {"max_rounds": 1}, {"reward": "win", "max_rounds": 2}],
)
def test_same_game_under_other_options(options):
    batched, envs, _ = play_both(5, seed=31, **options)
    assert batched.get_state(5) == envs[5].get_state()


def test_max_rounds_truncates():
    batched = make_batched(NUM_ENVS, num_players=3, max_rounds=1)
    _, mask = batched.reset(0)
    chooser = np.random.default_rng(0)
    truncated = False
    for _ in range(40):
        actions = np.array([chooser.choice(np.flatnonzero(row)) for row in mask])
        _, mask, _, terminated, cut = batched.step(actions)
        truncated |= bool(cut.any())
    assert truncated


def test_seeds_as_a_sequence_and_trusted_play_the_same_games():
    seeds = [5, 900, 3, 41]
    checked = make_batched(4, num_players=6)
    trusted = make_batched(4, num_players=6, trusted=True)
    obs, mask = checked.reset(seeds)
    other_obs, _ = trusted.reset(seeds)
    env = tableenvs.make_raw("pilipili_v0", num_players=6)
    env.reset(seed=900)
    assert np.array_equal(obs[1], env.observe(env.agent_selection)["observation"])
    assert np.array_equal(obs, other_obs)
    chooser = np.random.default_rng(1)
    for _ in range(100):
        actions = np.array([chooser.choice(np.flatnonzero(row)) for row in mask])
        obs, mask, rewards, *_ = checked.step(actions)
        other = trusted.step(actions)
        assert np.array_equal(obs, other[0]) and np.array_equal(rewards, other[2])


def test_generator_draws_are_numpys():
    import numba

    from tableenvs.pilipili import batched_rng

    @numba.njit
    def draws(rng, out, k, n):
        first = batched_rng.below(rng, 0, n)
        batched_rng.permutation(rng, 0, out, k)
        return first

    for seed in range(50):
        generator = np.random.default_rng(seed)
        rows = np.zeros((1, batched_rng.RNG_WORDS), np.uint64)
        batched_rng.load_state(rows, 0, generator)
        for n, k in ((2, 56), (3, 36), (8, 19), (5, 1)):
            out = np.zeros(56, np.int64)
            assert draws(rows, out, k, n) == generator.integers(n)
            assert out[:k].tolist() == generator.permutation(k).tolist()
        assert batched_rng.store_state(rows, 0) == generator.bit_generator.state


def test_an_illegal_action_names_env_action_and_legal_actions_and_changes_nothing():
    batched = make_batched(3, num_players=4, missions="none")
    obs, mask = batched.reset(12)
    before = (obs.copy(), mask.copy(), batched.to_act.copy(), batched.get_state(1))
    actions = np.array([np.flatnonzero(row)[0] for row in mask])
    illegal = int(np.flatnonzero(mask[1] == 0)[0])
    actions[1] = illegal
    legal = np.flatnonzero(mask[1]).tolist()
    with pytest.raises(ValueError, match=rf"illegal action {illegal} in env 1 .*legal actions: \[{legal[0]}, "):
        batched.step(actions)
    actions[1] = 234
    with pytest.raises(ValueError, match="illegal action 234 in env 1"):
        batched.step(actions)
    after = (obs, mask, batched.to_act, batched.get_state(1))
    assert all(np.array_equal(a, b) for a, b in zip(before[:3], after[:3], strict=True))
    assert before[3] == after[3]


def test_bad_input_is_refused_with_one_clear_line():
    with pytest.raises(TypeError, match="unsupported option.*'render_mode'"):
        make_batched(2, render_mode="ansi")
    with pytest.raises(ValueError, match="num_players"):
        make_batched(2, num_players=9)
    with pytest.raises(ValueError, match="num_envs"):
        make_batched(0)
    batched = make_batched(2, num_players=2)
    with pytest.raises(RuntimeError, match="before reset"):
        batched.step(np.zeros(2, np.int64))
    with pytest.raises(ValueError, match="3 seeds for 2 envs"):
        batched.reset([1, 2, 3])
    with pytest.raises(ValueError, match="seed"):
        batched.reset(-1)
    batched.reset(0)
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        batched.step(np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="env index"):
        batched.get_state(2)


def test_the_spec_names_the_batched_engine():
    from tableenvs.core.registry import spec

    module, factory = spec("pilipili_v0").batched.split(":")
    import importlib

    assert getattr(importlib.import_module(module), factory) is make_batched
