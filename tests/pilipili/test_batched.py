"""The batched Pili Pili engine (``tableenvs.vector.make("pilipili_v0", ...)``) plays exactly the AEC env's game
(differential, through the shared harness ``tests/vector_differential.py``), and refuses bad input clearly.

64 batched envs seeded ``s .. s+63`` and 64 raw AEC envs reset with the same seeds are driven by the same random
legal actions; at every step they must agree on the seat to act, the observation, the mask, every seat's reward
and which games ended, through each env's game end and its automatic next game (the AEC env's ``reset()``
without a seed). The compiled kernels are built once per machine (numba's disk cache), then these run in seconds.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import tableenvs
import tableenvs.vector
from tableenvs.core.registry import spec
from tableenvs.core.state_api import StateAPI
from tests.vector_differential import play_both

NAME = "pilipili_v0"
NUM_ENVS = 64


def play_and_collect(num_players: int, seed: int, games: int = 2, finish=None, **options) -> set[int]:
    """The differential run until every env has ended ``games`` games (get_state compared, event log included,
    every 23 steps); returns the mission ids dealt."""
    missions: set[int] = set()
    counts = play_both(
        NAME, {"num_players": num_players, **options}, NUM_ENVS, seed, games=games, extra=0, action_seed=seed,
        event_log=True, watch=lambda env: missions.add(env.game.mission.id), finish=finish,
    )  # fmt: skip
    assert counts["games"] >= games * NUM_ENVS and counts["states"] > 0
    return missions


@pytest.mark.parametrize("num_players", [2, 5, 8])
def test_same_game_as_the_aec_env(num_players):
    def finish(batched, envs):
        for i in (0, 17, 63):  # the state record of a game under way: the AEC env's own, and it opens
            record = batched.get_state(i)
            assert record == envs[i].get_state()
            assert StateAPI.from_state(record).observe(envs[i].agent_selection)["observation"].tolist() == (
                envs[i].observe(envs[i].agent_selection)["observation"].tolist()
            )

    missions = play_and_collect(num_players, seed=1000 * num_players, finish=finish)
    assert len(missions) >= 20  # the standard deck: many mission effects were played, not only plain rounds


def test_every_mission_of_the_standard_deck_is_played_the_same():
    """Long enough that each of the 36 cards is dealt (and played under random legal actions) several times."""
    missions = play_and_collect(4, seed=77, games=6)
    assert missions == set(range(1, 37))


@pytest.mark.parametrize(
    "options",
    [{"missions": "none"}, {"expert": False, "reward": "win"}, {"max_rounds": 1}, {"reward": "win", "max_rounds": 2}],
)
def test_same_game_under_other_options(options):
    def finish(batched, envs):
        assert batched.get_state(5) == envs[5].get_state()

    play_and_collect(5, seed=31, finish=finish, **options)


def test_max_rounds_truncates():
    batched = tableenvs.vector.make(NAME, NUM_ENVS, num_players=3, max_rounds=1)
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
    checked = tableenvs.vector.make(NAME, 4, num_players=6)
    trusted = tableenvs.vector.make(NAME, 4, num_players=6, trusted=True)
    obs, mask = checked.reset(seeds)
    other_obs, _ = trusted.reset(seeds)
    env = tableenvs.make_raw(NAME, num_players=6)
    env.reset(seed=900)
    assert np.array_equal(obs[1], env.observe(env.agent_selection)["observation"])
    assert np.array_equal(obs, other_obs)
    chooser = np.random.default_rng(1)
    for _ in range(100):
        actions = np.array([chooser.choice(np.flatnonzero(row)) for row in mask])
        obs, mask, rewards, *_ = checked.step(actions)
        other = trusted.step(actions)
        assert np.array_equal(obs, other[0]) and np.array_equal(rewards, other[2])


def test_an_illegal_action_names_env_action_and_legal_actions_and_changes_nothing():
    batched = tableenvs.vector.make(NAME, 3, num_players=4, missions="none")
    obs, mask = batched.reset(12)
    before = (obs.copy(), mask.copy(), batched.to_act.copy(), batched.get_state(1))
    actions = np.array([np.flatnonzero(row)[0] for row in mask])
    illegal = int(np.flatnonzero(mask[1] == 0)[0])
    actions[1] = illegal
    legal = np.flatnonzero(mask[1]).tolist()
    seat = int(batched.to_act[1])
    wording = rf"env 1: illegal action {illegal} for player_{seat}; legal actions: {legal[0]}, "
    with pytest.raises(ValueError, match=wording):
        batched.step(actions)
    actions[1] = 234
    with pytest.raises(ValueError, match=r"env 1: action 234 is not an action id \(0\.\."):
        batched.step(actions)
    after = (obs, mask, batched.to_act, batched.get_state(1))
    assert all(np.array_equal(a, b) for a, b in zip(before[:3], after[:3], strict=True))
    assert before[3] == after[3]


def test_bad_input_is_refused_with_one_clear_line():
    with pytest.raises(ValueError, match="does not render.*render_mode='ansi'"):
        tableenvs.vector.make(NAME, 2, render_mode="ansi")
    with pytest.raises(TypeError, match="unknown option.*'colour'"):
        tableenvs.vector.make(NAME, 2, colour="red")
    with pytest.raises(ValueError, match="num_players"):
        tableenvs.vector.make(NAME, 2, num_players=9)
    with pytest.raises(ValueError, match="num_envs"):
        tableenvs.vector.make(NAME, 0)
    batched = tableenvs.vector.make(NAME, 2, num_players=2)
    with pytest.raises(RuntimeError, match="before the first reset"):
        batched.step(np.zeros(2, np.int64))
    with pytest.raises(RuntimeError, match="before the first reset"):
        batched.get_state(0)
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
    module, factory = spec(NAME).batched.split(":")
    made = getattr(importlib.import_module(module), factory)(2)
    assert isinstance(made, tableenvs.vector.BatchedGame) and type(made) is type(tableenvs.vector.make(NAME, 2))


def test_reset_mid_batch_and_every_call_form_play_the_same_games():
    """An engine reset after many steps (games ended, auto-reset, rounds under way) plays from there exactly as a
    fresh engine reset with the same seed; the short path of ``step`` (an int64 array) and the shared one (a list,
    an int32 array) give the same buffers; a trusted engine still refuses an action outside the ids, changing
    nothing."""
    used = tableenvs.vector.make(NAME, 16, num_players=5)
    fresh = tableenvs.vector.make(NAME, 16, num_players=5, trusted=True)
    chooser = np.random.default_rng(3)
    _, mask = used.reset(0)
    ended = 0
    for _ in range(400):
        actions = np.array([chooser.choice(np.flatnonzero(row)) for row in mask], np.int64)
        _, mask, _, terminated, truncated = used.step(actions)
        ended += int(terminated.sum() + truncated.sum())
    assert ended > 0  # the reset below comes after automatic resets
    obs, mask = used.reset(100)
    other_obs, other_mask = fresh.reset(100)
    assert np.array_equal(obs, other_obs) and np.array_equal(mask, other_mask)
    for step in range(300):
        actions = np.array([chooser.choice(np.flatnonzero(row)) for row in mask], np.int64)
        given = [actions, actions.tolist(), actions.astype(np.int32)][step % 3]
        obs, mask, rewards, terminated, truncated = (x.copy() for x in used.step(given))
        other = fresh.step(actions)
        for mine, theirs in zip((obs, mask, rewards, terminated, truncated), other, strict=True):
            assert np.array_equal(mine, theirs), f"step {step}"
        assert np.array_equal(used.to_act, fresh.to_act)
    for i in (0, 9):
        assert used.get_state(i) == fresh.get_state(i)
    before = (fresh.obs.copy(), fresh.to_act.copy(), fresh.get_state(2))
    wrong = np.zeros(16, np.int64)
    wrong[2] = 234
    with pytest.raises(ValueError, match=r"env 2: action 234 is not an action id"):
        fresh.step(wrong)
    assert np.array_equal(before[0], fresh.obs) and np.array_equal(before[1], fresh.to_act)
    assert before[2] == fresh.get_state(2)


def test_step_rows_plays_only_the_envs_it_names():
    """``step_rows`` (the batched evaluation's step once some games are over): the envs named play on exactly as
    their AEC envs, with their results; the others stay as they are, no reward, not ended; bad rows are refused."""
    from tests.vector_differential import check_results

    num = 12
    batched = tableenvs.vector.make(NAME, num, num_players=4)
    raws = [tableenvs.make_raw(NAME, num_players=4) for _ in range(num)]
    for i, env in enumerate(raws):
        env.reset(seed=50 + i)
    obs, mask = batched.reset(50)
    rng = np.random.default_rng(3)
    ended = waited = 0
    for step in range(1500):
        rows = np.flatnonzero(rng.random(num) < 0.5)
        actions = np.array([rng.choice(np.flatnonzero(mask[r])) for r in rows], np.int64)
        obs, mask, rewards, terminated, truncated = batched.step_rows(rows, actions)
        played = dict(zip(rows.tolist(), actions.tolist(), strict=True))
        for i, env in enumerate(raws):
            if i in played:
                env.step(played[i])
                assert rewards[i].tolist() == [env.rewards[a] for a in env.possible_agents], f"step {step} env {i}"
                if terminated[i] or truncated[i]:
                    check_results(batched.last_results, i, env.outcome(), f"step {step} env {i}")
                    ended += 1
                    env.reset()
            else:
                assert not rewards[i].any() and not terminated[i] and not truncated[i]
                waited += 1
            agent = env.agent_selection
            assert batched.to_act[i] == env.agent_name_mapping[agent]
            assert np.array_equal(env.observe(agent)["observation"], obs[i]), f"step {step} env {i}"
            assert np.array_equal(env.observe(agent)["action_mask"], mask[i])
    assert ended >= num and waited > 1000
    before = obs.copy()
    legal = int(np.flatnonzero(mask[1])[0])
    illegal = int(np.flatnonzero(mask[1] == 0)[0])
    for rows, actions, match in (
        ([1, 1], [legal, legal], "distinct env indices"),
        ([1, num], [legal, 0], "distinct env indices"),
        ([1], [illegal], f"env 1: illegal action {illegal}"),
        ([1], [234], "not an action id"),
    ):
        with pytest.raises(ValueError, match=match) as error:
            batched.step_rows(np.array(rows), np.array(actions))
        assert "\n" not in str(error.value)
    assert np.array_equal(batched.obs, before)
    obs, mask, rewards, terminated, truncated = batched.step_rows([], [])  # no env named: nothing plays
    assert np.array_equal(obs, before) and not rewards.any() and not terminated.any() and not truncated.any()
