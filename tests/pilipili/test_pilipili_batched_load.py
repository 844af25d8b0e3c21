"""``PiliPiliBatched.load_state(i, record)`` and ``load_env(i, env)``: a batched env started from a Pili Pili game
under way (a position of random play, a world sampled for a search) plays on exactly as the raw env does: the same
seat to act, observation, mask and rewards at every step, through the end of that game and into the next (drawn from
the same generator), for the same random legal actions. Positions are taken in every phase (look, bidding,
designation, passing, tricks, a memorised wild being declared, swaps) and right after a round was scored."""

from __future__ import annotations

import numpy as np
import pytest

import tableenvs
import tableenvs.vector
from tableenvs.core.table_env import TableEnv
from tableenvs.pilipili.rules import Phase
from tests.vector_differential import loaded_rows_play_on, sampled_worlds_in_blocks

NAME = "pilipili_v0"


def _positions(options: dict, count: int, seed: int) -> list[TableEnv]:
    """``count`` raw envs mid-game: random legal play from seeds, stopped after a random number of steps, in every
    phase and some just after a round's score (the first decision of a round after the first)."""
    rng = np.random.default_rng(seed)
    envs: list[TableEnv] = []
    wanted = {phase: 0 for phase in Phase if phase != Phase.GAME_OVER}
    per_phase = max(1, count // 16)
    i = 0
    while len(envs) < count:
        env = tableenvs.make_raw(NAME, **options)
        env.reset(seed=seed + i)
        i += 1
        for _ in range(int(rng.integers(0, 400))):
            rounds = env.game.rounds_completed
            env.step(int(rng.choice(env.legal_actions())))
            if any(env.terminations.values()) or any(env.truncations.values()):
                env.reset()
            elif env.game.rounds_completed > rounds and rng.random() < 0.3:
                break  # right after a scored round
            phase = env.game.phase
            if phase != Phase.PLAY and wanted[phase] < per_phase and rng.random() < 0.5:
                break  # the rarer phases, on purpose
        wanted[env.game.phase] += 1
        envs.append(env)
    return envs


@pytest.mark.parametrize(
    ("options", "count"),
    [
        ({"num_players": 5}, 48),
        ({"num_players": 3}, 24),
        ({"num_players": 8, "reward": "win"}, 16),
        ({"num_players": 4, "missions": "none", "max_rounds": 3}, 12),
    ],
)
def test_a_loaded_aec_state_plays_on_as_the_aec_env(options, count):
    envs = _positions(options, count, seed=31 * options["num_players"])
    phases = {env.game.phase for env in envs}
    if options.get("missions") != "none":
        assert len(phases) >= 5, phases  # bidding, play and several mission phases among the positions
    assert any(env.game.last_scored is not None for env in envs)  # positions after a scored round
    batched = tableenvs.vector.make(NAME, count + 3, **options)
    batched.reset(seed=7)
    rows = [count + 2 - i for i in range(count)]  # rows in another order than the envs'
    for env, row in zip(envs, rows, strict=True):
        batched.load_state(row, env.get_state())
        assert batched.get_state(row) == env.get_state()
    opened = [TableEnv.from_state(env.get_state()) for env in envs]  # the record's own game, played by a fresh env
    assert loaded_rows_play_on(batched, opened, rows, np.random.default_rng(count), games=1) > 20
    for row, env in zip(rows[:4], opened, strict=False):  # on into the next game: its record replays from its start
        assert batched.get_state(row) == env.get_state()


@pytest.mark.parametrize("num_players", [5, 2])
def test_sampled_worlds_loaded_into_several_rows_play_on_as_the_worlds(num_players):
    """A search's use: each sampled world put in several rows at once (``load_env``, one row per root action), each
    row then played on by other random actions; ``get_state`` mid-way is the world's record after those actions."""
    options = {"num_players": num_players}
    envs = _positions(options, 12, seed=9 + num_players)
    batched = tableenvs.vector.make(NAME, 36, **options)
    batched.reset(seed=0)
    rng = np.random.default_rng(5)
    worlds, rows = sampled_worlds_in_blocks(batched, envs, rng)
    for world, row in zip(worlds[::3], rows[::3], strict=True):  # each block's first row
        assert np.array_equal(batched.mask[row], world.observe(world.agent_selection)["action_mask"])
    actions = np.array([rng.choice(np.flatnonzero(m)) for m in batched.mask], np.int64)
    batched.step(actions)
    for world, row in zip(worlds, rows, strict=True):
        world.step(int(actions[row]))
        if any(world.terminations.values()) or any(world.truncations.values()):
            world.reset()  # as the batched row did
        elif row % 5 == 0:
            assert batched.get_state(row) == world.get_state()  # replayed from the loaded world's copy
    assert loaded_rows_play_on(batched, worlds, rows, rng, games=1) > 10


def test_load_state_refuses_a_bad_record_and_changes_nothing():
    env = tableenvs.make_raw(NAME, num_players=5)
    env.reset(seed=1)
    batched = tableenvs.vector.make(NAME, 2, num_players=5)
    with pytest.raises(RuntimeError, match="before the first reset"):
        batched.load_state(0, env.get_state())
    batched.reset(seed=3)
    before = batched.get_state(0), batched.obs.copy()
    other = tableenvs.make_raw(NAME, num_players=5, missions="none")
    other.reset(seed=1)
    with pytest.raises(ValueError, match="other options.*missions"):
        batched.load_state(0, other.get_state())
    bad = env.get_state()
    bad["rules"]["hands"][0] = bad["rules"]["hands"][1]
    with pytest.raises(ValueError, match="card"):
        batched.load_state(0, bad)
    with pytest.raises(ValueError, match="state record of pilipili_v0"):
        batched.load_state(0, {**env.get_state(), "game": "llama_party_v0"})
    with pytest.raises(ValueError, match="env index"):
        batched.load_state(2, env.get_state())
    scripted = tableenvs.make_raw(NAME, num_players=5, missions="none")
    scripted.reset(seed=1)
    with pytest.raises(ValueError, match="mission 0 is not in this engine's mission deck"):
        batched.load_env(0, scripted)
    moving = tableenvs.make_raw(NAME, num_players=5)
    moving.reset(seed=2)
    batched.load_env(1, moving)  # load_env keeps the env itself: once it moves on, get_state(1) cannot answer
    assert batched.get_state(1) == moving.get_state()
    moving.step(moving.legal_actions()[0])
    with pytest.raises(ValueError, match=r"get_state\(1\): env 1 was loaded by load_env from an env that has moved on"):
        batched.get_state(1)
    while not any(env.terminations.values()):
        env.step(env.legal_actions()[0])
    with pytest.raises(ValueError, match="ended"):
        batched.load_state(0, env.get_state())
    assert batched.get_state(0) == before[0] and np.array_equal(batched.obs[0], before[1][0])
