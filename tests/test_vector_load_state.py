"""``BatchedEngine.load_state(i, record)``: a batched env started from an AEC state record (a game under way, a
sampled world) plays on exactly as the AEC env opened from that record: the same seat to act, observation, mask and
rewards at every step through the end of the game and on into the next one (drawn from the record's generator), for
the same random legal actions; and its refusals."""

from __future__ import annotations

import numpy as np
import pytest
from vector_differential import loaded_rows_play_on, sampled_worlds_in_blocks

import tableenvs
import tableenvs.vector
from tableenvs.core.table_env import TableEnv

NAME = "llama_party_v0"


def _positions(options: dict, count: int, seed: int) -> list[TableEnv]:
    """``count`` AEC envs at positions mid-game (random play from seeds, stopped after a random number of steps)."""
    rng = np.random.default_rng(seed)
    envs = []
    for i in range(count):
        env = tableenvs.make_raw(NAME, **options)
        env.reset(seed=seed + i)
        for _ in range(int(rng.integers(0, 150))):
            env.step(int(rng.choice(env.legal_actions())))
            if any(env.terminations.values()):
                env.reset()
        envs.append(env)
    return envs


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_a_loaded_aec_state_plays_on_as_the_aec_env(num_players):
    options = {"num_players": num_players}
    envs = _positions(options, 12, seed=100 * num_players)
    batched = tableenvs.vector.make(NAME, 16, **options)
    batched.reset(seed=7)
    rows = [15 - i for i in range(len(envs))]  # rows in another order than the envs'
    for env, row in zip(envs, rows, strict=True):
        batched.load_state(row, env.get_state())
        assert batched.get_state(row)["rules"] == env.get_state()["rules"]
    opened = [TableEnv.from_state(env.get_state()) for env in envs]  # the record's own game, played by a fresh env
    assert loaded_rows_play_on(batched, opened, rows, np.random.default_rng(num_players), games=2) > 50


@pytest.mark.parametrize("num_players", [3, 4])
def test_sampled_worlds_loaded_into_several_rows_play_on_as_the_worlds(num_players):
    """A search's use: each sampled world put in several rows at once (one per root action), each row played on."""
    options = {"num_players": num_players, "reward": "win"}
    envs = _positions(options, 4, seed=9)
    batched = tableenvs.vector.make(NAME, 12, **options)
    batched.reset(seed=0)
    rng = np.random.default_rng(5)
    worlds, rows = sampled_worlds_in_blocks(batched, envs, rng, via="state")
    assert loaded_rows_play_on(batched, worlds, rows, rng, games=1) > 10


def test_load_state_refuses_a_bad_record_and_changes_nothing():
    env = tableenvs.make_raw(NAME, num_players=4)
    env.reset(seed=1)
    batched = tableenvs.vector.make(NAME, 2, num_players=4)
    with pytest.raises(RuntimeError, match="before the first reset"):
        batched.load_state(0, env.get_state())
    batched.reset(seed=3)
    before = batched.get_state(0), batched.obs.copy()
    other = tableenvs.make_raw(NAME, num_players=3)
    other.reset(seed=1)
    with pytest.raises(ValueError, match="other options"):
        batched.load_state(0, other.get_state())
    bad = env.get_state()
    bad["rules"]["hands"][0] = bad["rules"]["hands"][1]
    with pytest.raises(ValueError, match="hands|card"):
        batched.load_state(0, bad)
    with pytest.raises(ValueError, match="state record of llama_party_v0"):
        batched.load_state(0, {**env.get_state(), "game": "pilipili_v0"})
    with pytest.raises(ValueError, match="env index"):
        batched.load_state(2, env.get_state())
    while not any(env.terminations.values()):
        env.step(env.legal_actions()[0])
    with pytest.raises(ValueError, match="ended"):
        batched.load_state(0, env.get_state())
    assert batched.get_state(0) == before[0] and np.array_equal(batched.obs, before[1])


def test_load_env_puts_the_same_game_as_load_state_of_its_record():
    envs = _positions({"num_players": 3}, 6, seed=4)
    batched = tableenvs.vector.make(NAME, 12, num_players=3)
    batched.reset(seed=2)
    rng = np.random.default_rng(0)
    for e, env in enumerate(envs):
        world = env.sample_world(env.agent_selection, rng)
        batched.load_env(range(2 * e, 2 * e + 1), world)
        batched.load_state(2 * e + 1, world.get_state(), check=False)
        assert batched.get_state(2 * e) == batched.get_state(2 * e + 1) == {**world.get_state(), "event_log": []}
        assert np.array_equal(batched.obs[2 * e], batched.obs[2 * e + 1])
        assert np.array_equal(batched.mask[2 * e], world.observe(world.agent_selection)["action_mask"])
