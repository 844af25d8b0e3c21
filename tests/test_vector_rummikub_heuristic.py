"""Rummikub's batched heuristic (``BatchedHeuristic``, ``tableenvs.vector.batched_heuristic``) chooses exactly as
``HeuristicPolicy``.

* Positions: thousands recorded from batched play (half heuristic, half random moves, so turns hold staged sets the
  heuristic did not choose and games reach big tables) at 2, 3 and 4 players and with a ``min_initial`` other than
  the default; each row is a fresh question on both sides (a fresh plan cache): the same action on every row.
* Whole games: a batched engine whose every seat plays the batched heuristic and AEC envs whose every seat plays
  ``HeuristicPolicy`` (``play_game``), the same deals: the same rewards at each episode's end (the plans kept within
  a turn on both sides).
* The sweep's buffers grown and resumed (started tiny) give the same plans; malformed input is refused in one line.
"""

from __future__ import annotations

import numpy as np
import pytest

import tableenvs
import tableenvs.vector
from tableenvs.policies import play_game
from tableenvs.rummikub.agents import HeuristicPolicy
from tableenvs.rummikub.batched_heuristic import BatchedHeuristic
from tableenvs.rummikub.encoder import COMMIT, DRAW, LAYOUT, NUM_ACTIONS, OBSERVATION_SIZE
from tableenvs.rummikub.tiles import TILE_TYPES
from tests.batched_positions import recorded_positions

NAME = "rummikub_v0"


def python_choices(options: dict, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``HeuristicPolicy.act`` on every row, each a fresh question (its plan cache emptied)."""
    python = HeuristicPolicy(tableenvs.make_raw(NAME, **options))
    rng = np.random.default_rng(0)
    chosen = []
    for o, m in zip(obs, mask, strict=True):
        python._key = python._plan = None
        chosen.append(python.act(o, m, rng))
    return np.array(chosen)


@pytest.mark.parametrize(
    "options",
    [{"num_players": 2}, {"num_players": 3}, {"num_players": 4}, {"num_players": 3, "min_initial": 12}],
    ids=["2p", "3p", "4p", "3p-min-initial-12"],
)
def test_the_batched_heuristic_chooses_as_the_python_heuristic(options):
    obs, mask, _ = recorded_positions(
        NAME, options, 40, 160, options["num_players"], heuristic=True, every=2
    )  # 3,200 positions
    expected = python_choices(options, obs, mask)
    heuristic = BatchedHeuristic(len(obs), options.get("min_initial", 30))
    chosen = heuristic.act(obs, mask)
    staged = obs[:, LAYOUT.STAGED : LAYOUT.STAGED + TILE_TYPES].any(axis=1)
    table = obs[:, LAYOUT.TABLE : LAYOUT.TABLE + TILE_TYPES].sum(axis=1)
    # varied positions: plays staged and committed, draws, turns under way, openings and big tables
    assert (expected < COMMIT).sum() > 200 and (expected == COMMIT).sum() > 50 and (expected == DRAW).sum() > 200
    assert staged.sum() > 300 and (obs[:, LAYOUT.OPENED] == 0).sum() > 300 and table.max() >= 30
    assert heuristic.solves > 300  # most rows asked the solver (the others: nothing stageable, nothing staged)
    assert np.flatnonzero(chosen != expected).tolist() == []


def test_kept_plans_choose_as_the_python_cache_through_mixed_play():
    """Step by step, each env's rows given to the batched heuristic and to its own ``HeuristicPolicy`` (whose plan
    cache follows the env, as the batched one's does), then half heuristic, half random moves: the kept plans are
    used, and dropped when a random move stages a tile they do not hold, alike on both sides at every step."""
    options = {"num_players": 3}
    num_envs = 32
    games = tableenvs.vector.make(NAME, num_envs, **options)
    heuristic = tableenvs.vector.batched_heuristic(games)
    raw = tableenvs.make_raw(NAME, **options)
    pythons = [HeuristicPolicy(raw) for _ in range(num_envs)]
    rng = np.random.default_rng(7)
    envs = np.arange(num_envs, dtype=np.int64)
    obs, mask = games.reset(70)
    mismatches = 0
    for _ in range(120):
        chosen = heuristic.act(obs, mask, envs)
        expected = np.array([p.act(o, m, rng) for p, o, m in zip(pythons, obs, mask, strict=True)])
        mismatches += int((chosen != expected).sum())
        random = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        obs, mask, *_ = games.step(np.where(rng.random(num_envs) < 0.5, chosen, random))
    assert heuristic.solves < 120 * num_envs / 2  # plans were kept across steps, not asked at every row
    assert mismatches == 0


def test_grown_and_resumed_sweeps_give_the_same_plans():
    """The kernel's buffers started tiny: every sweep fills them, grows them and resumes (as ``sweep.run``)."""
    options = {"num_players": 4}
    obs, mask, _ = recorded_positions(NAME, options, 16, 120, 11, heuristic=True, every=2)
    expected = python_choices(options, obs, mask)
    heuristic = BatchedHeuristic(len(obs))
    heuristic._buffers = tuple(np.empty(4, a.dtype) for a in heuristic._buffers[:5]) + (np.full(4, -1, np.int32),)
    assert np.flatnonzero(heuristic.act(obs, mask) != expected).tolist() == []
    assert len(heuristic._buffers[0]) >= 4**5 and len(heuristic._buffers[5]) > 4  # grown (entries, hash table)


def play_batched(options: dict, seeds: list[int]) -> np.ndarray:
    """Env ``i`` plays its first episode of seed ``seeds[i]`` with the batched heuristic at every seat; returns each
    env's summed rewards."""
    num_envs = len(seeds)
    games = tableenvs.vector.make(NAME, num_envs, **options)
    heuristic = tableenvs.vector.batched_heuristic(games)
    envs = np.arange(num_envs, dtype=np.int64)
    totals = np.zeros((num_envs, games.num_players))
    playing = np.ones(num_envs, bool)
    obs, mask = games.reset(seeds)
    while playing.any():
        obs, mask, rewards, terminated, truncated = games.step(heuristic.act(obs, mask, envs))
        totals[playing] += rewards[playing]
        playing &= ~(terminated | truncated)
    return totals


@pytest.mark.parametrize(
    "options",
    [{"num_players": 2}, {"num_players": 3}, {"num_players": 4},
     {"num_players": 4, "min_initial": 50, "strict_commit": False, "games_per_episode": 2}],
    ids=["2p", "3p", "4p", "4p-min-initial-50-loose-commit-2-games"],
)  # fmt: skip
def test_whole_games_end_with_the_same_rewards_as_the_python_heuristic(options):
    seeds = [100 * options["num_players"] + i for i in range(16)]
    raw = tableenvs.make_raw(NAME, **options)
    python = HeuristicPolicy(raw)
    expected = []
    for seed in seeds:
        totals, _ = play_game(raw, [python] * options["num_players"], seed=seed, rng=np.random.default_rng(seed))
        expected.append(totals)
    expected = np.array(expected)
    assert np.abs(expected).sum(axis=1).min() > 0  # every game scored
    # the batched rewards are float32 (the contract), the AEC env's Python floats: equal to float32 precision
    np.testing.assert_allclose(play_batched(options, seeds), expected, rtol=0, atol=1e-3)


def test_front_door_kept_plans_and_malformed_input():
    games = tableenvs.vector.make(NAME, 4, num_players=3, min_initial=20)
    player = tableenvs.vector.batched_heuristic(games)
    assert isinstance(player, tableenvs.vector.BatchedPolicy) and player.min_initial == 20
    obs, mask = games.reset(seed=3)
    envs = np.arange(4, dtype=np.int64)
    assert player.act(obs, mask, envs).tolist() == BatchedHeuristic(4, 20).act(obs, mask, envs).tolist()
    solves = player.solves
    player.act(obs, mask, envs)  # the same positions: the kept plans, no new question
    assert player.solves == solves
    player.forget([0, 1])
    player.act(obs, mask, envs)
    assert player.solves == solves + int((mask[:2, :TILE_TYPES].any(axis=1)).sum())
    with pytest.raises(ValueError, match=rf"obs must be \(rows, {OBSERVATION_SIZE}\) and mask \(rows, {NUM_ACTIONS}\)"):
        player.act(obs[:, :-1], mask, envs)
    with pytest.raises(ValueError, match="env index 4 out of range 0..3"):
        player.act(obs, mask, envs + 1)
    with pytest.raises(ValueError, match="env 2 has two rows in one call"):
        player.act(obs[:2], mask[:2], np.array([2, 2]))
    empty = mask.copy()
    empty[2] = 0
    with pytest.raises(ValueError, match="row 2 of the mask has no legal action"):
        player.act(obs, empty, envs)
    bad = obs.copy()
    bad[1, LAYOUT.STAGED] = bad[1, LAYOUT.RACK] + 1
    with pytest.raises(ValueError, match="row 1: its observation's counts are no Rummikub position"):
        player.act(bad, mask, envs)
    bad = obs.copy()
    bad[3, LAYOUT.TABLE] = 0.5
    with pytest.raises(ValueError, match="row 3: the rack, staged and table counts of its observation are not whole"):
        player.act(bad, mask, envs)
    with pytest.raises(ValueError, match="num_envs must be an int >= 1"):
        BatchedHeuristic(0)
    with pytest.raises(ValueError, match="min_initial must be an int >= 0"):
        BatchedHeuristic(2, min_initial=-1)
