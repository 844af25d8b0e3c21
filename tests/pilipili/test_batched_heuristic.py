"""Pili Pili's batched heuristic (``BatchedHeuristic``, ``tableenvs.vector.batched_heuristic``) chooses exactly as
``HeuristicPolicy.act`` and draws exactly what it draws.

* Positions: thousands recorded from batched play (half heuristic, half random moves, so play reaches varied
  positions) at 2, 5 and 8 players under each option set of the game's spec; row ``i`` is given the generator
  ``default_rng(i)`` on both sides: the same action on every row, and the same generator state after it (the
  designate and memorise draws, which happen on enough rows to count).
* Whole games: a batched engine whose every seat plays the batched heuristic and AEC envs whose every seat plays
  ``HeuristicPolicy`` (``play_game``), the same deals and the same generators (one per game, or one per seat as in
  ``tableenvs eval``): the same final rewards and the same generator states at each game's end.
"""

from __future__ import annotations

import numpy as np
import pytest

import tableenvs
import tableenvs.vector
from tableenvs.pilipili.agents import HeuristicPolicy
from tableenvs.pilipili.batched_heuristic import BatchedHeuristic
from tableenvs.pilipili.encoder import NUM_ACTIONS, Encoder
from tableenvs.policies import play_game
from tests.batched_positions import recorded_positions

NAME = "pilipili_v0"
OPTION_SETS = [{}, {"missions": "none"}, {"expert": False, "reward": "win"}]


@pytest.mark.parametrize("options", OPTION_SETS, ids=["standard", "no-missions", "not-expert-win"])
@pytest.mark.parametrize("num_players", [2, 5, 8])
def test_the_batched_heuristic_chooses_and_draws_as_the_python_heuristic(num_players, options):
    options = {"num_players": num_players, **options}
    obs, mask, _ = recorded_positions(NAME, options, 48, 120, num_players, heuristic=True, every=2)  # 2,880 positions
    rows = len(obs)
    python = HeuristicPolicy(tableenvs.make_raw(NAME, **options))
    rngs = [np.random.default_rng(i) for i in range(rows)]
    expected = np.array([python.act(o, m, r) for o, m, r in zip(obs, mask, rngs, strict=True)])
    batched = BatchedHeuristic(num_players, rows)
    batched.seed(0)  # row i: default_rng(i), as rngs[i]
    chosen = batched.act(obs, mask)
    assert len(np.unique(expected)) > 30  # varied positions, not one choice repeated
    assert np.flatnonzero(chosen != expected).tolist() == []
    drew = [i for i in range(rows) if rngs[i].bit_generator.state != np.random.default_rng(i).bit_generator.state]
    same = [rngs[i].bit_generator.state == batched.generator(i).bit_generator.state for i in range(rows)]
    assert all(same)
    if len(options) > 1:
        assert drew == []  # no designate or memorise mission without missions or among the non-expert ones
    else:
        assert len(drew) >= 20  # the draws were exercised, and matched


def play_batched(options: dict, seeds: list[int], generators: list, one_by_one: bool) -> tuple[np.ndarray, list]:
    """Env ``i`` plays the first game of seed ``seeds[i]`` with the batched heuristic at every seat (generators
    copied from ``generators``, all at once or env by env); returns each env's summed rewards and its generator
    states at that game's end."""
    num_envs = len(seeds)
    games = tableenvs.vector.make(NAME, num_envs, **options)
    heuristic = tableenvs.vector.batched_heuristic(games)
    if one_by_one:
        for e, entry in enumerate(generators):
            heuristic.set_generators(e, entry)
    else:
        heuristic.use_generators(generators)
    envs = np.arange(num_envs, dtype=np.int64)
    totals = np.zeros((num_envs, games.num_players))
    ended: list = [None] * num_envs
    obs, mask = games.reset(seeds)
    while any(end is None for end in ended):
        obs, mask, rewards, terminated, truncated = games.step(heuristic.act(obs, mask, envs))
        for e in range(num_envs):
            if ended[e] is None:
                totals[e] += rewards[e]
                if terminated[e] or truncated[e]:
                    seats = [0] if isinstance(generators[e], np.random.Generator) else range(games.num_players)
                    ended[e] = [heuristic.generator(e, s).bit_generator.state for s in seats]
    return totals, ended


class SeatRng:
    """A seat's policy drawing from its own generator (as ``tableenvs eval`` seats do)."""

    def __init__(self, policy, rng):
        self.policy, self.rng = policy, rng

    def act(self, observation, action_mask, rng):
        return self.policy.act(observation, action_mask, self.rng)


@pytest.mark.parametrize(
    "num_players, options, mode",
    [(2, {}, "shared"), (5, {}, "shared"), (8, {}, "per-seat"), (5, {"expert": False, "reward": "win"}, "per-seat"),
     (4, {}, "mixed")],
)  # fmt: skip
def test_whole_games_end_with_the_same_rewards_as_the_python_heuristic(num_players, options, mode):
    """One generator per game (``play_game``'s ``rng``), one per seat, or (mixed) per seat in odd envs only."""
    options = {"num_players": num_players, **options}
    seeds = [100 * num_players + i for i in range(12)]
    per_seat = [mode == "per-seat" or (mode == "mixed" and e % 2 == 1) for e in range(len(seeds))]
    raw = tableenvs.make_raw(NAME, **options)
    python = HeuristicPolicy(raw)
    expected, expected_states = [], []
    for seed, own in zip(seeds, per_seat, strict=True):
        if own:
            rngs = [np.random.default_rng([seed, s]) for s in range(num_players)]
            totals, _ = play_game(raw, [SeatRng(python, r) for r in rngs], seed=seed, rng=rngs[0])
        else:
            rngs = [np.random.default_rng(seed + 1)]
            totals, _ = play_game(raw, [python] * num_players, seed=seed, rng=rngs[0])
        assert not raw.outcome().truncated
        expected.append(totals)
        expected_states.append([r.bit_generator.state for r in rngs])
    generators = [
        [np.random.default_rng([seed, s]) for s in range(num_players)] if own else np.random.default_rng(seed + 1)
        for seed, own in zip(seeds, per_seat, strict=True)
    ]
    totals, states = play_batched(options, seeds, generators, one_by_one=mode == "mixed")
    # the batched rewards are float32 (the contract), the AEC env's Python floats: equal to float32 precision
    np.testing.assert_allclose(totals, np.array(expected), rtol=0, atol=1e-6)
    assert states == expected_states


def test_front_door_and_malformed_input():
    games = tableenvs.vector.make(NAME, 4, num_players=3)
    player = tableenvs.vector.batched_heuristic(games)
    assert isinstance(player, tableenvs.vector.BatchedPolicy)
    obs, mask = games.reset(seed=3)
    size = Encoder(3).size
    envs = np.arange(4, dtype=np.int64)
    assert player.act(obs, mask, envs).tolist() == BatchedHeuristic(3, 4).act(obs, mask, envs).tolist()
    with pytest.raises(ValueError, match=rf"obs must be \(rows, {size}\) and mask \(rows, {NUM_ACTIONS}\)"):
        player.act(obs[:, :-1], mask, envs)
    with pytest.raises(ValueError, match="env index 4 out of range 0..3"):
        player.act(obs, mask, envs + 1)
    empty = mask.copy()
    empty[2] = 0
    with pytest.raises(ValueError, match="row 2 of the mask has no legal action"):
        player.act(obs, empty, envs)
    with pytest.raises(ValueError, match="seed: 3 seeds for 4 envs"):
        player.seed([1, 2, 3])
    before = [player.generator(e).bit_generator.state for e in range(4)]
    with pytest.raises(ValueError, match="env 1: give a numpy Generator or a sequence of 3, one per seat"):
        player.use_generators([[np.random.default_rng(9)] * 3, [np.random.default_rng()] * 2] + [[]] * 2)
    assert [player.generator(e).bit_generator.state for e in range(4)] == before  # nothing used
    with pytest.raises(ValueError, match="env 2: seat 1's generator is not a numpy Generator: 7"):
        player.set_generators(2, [np.random.default_rng(), 7, np.random.default_rng()])
    with pytest.raises(ValueError, match="env index 4 out of range 0..3"):
        player.set_generators(4, np.random.default_rng())
    with pytest.raises(ValueError, match="needs to_act"):
        BatchedHeuristic(3, 1).use_generators([[np.random.default_rng()] * 3])
    with pytest.raises(ValueError, match="num_players must be an int in 2..8"):
        BatchedHeuristic(9, 1)


def test_a_row_without_a_legal_action_changes_no_generator():
    obs, mask, _ = recorded_positions(NAME, {"num_players": 5}, 48, 120, 5, heuristic=True, every=2)
    python = HeuristicPolicy(tableenvs.make_raw(NAME, num_players=5))
    draws = [i for i in range(len(obs)) if _draws(python, obs[i], mask[i])]
    assert draws  # a designate or memorise position, where the heuristic draws
    heuristic = BatchedHeuristic(5, 2)
    rows = [draws[0], draws[0]]
    batch_mask = mask[rows].copy()
    batch_mask[1] = 0
    before = heuristic.generator(0).bit_generator.state
    with pytest.raises(ValueError, match="row 1 of the mask has no legal action"):
        heuristic.act(obs[rows], batch_mask, np.array([0, 0]))
    assert heuristic.generator(0).bit_generator.state == before
    heuristic.act(obs[rows[:1]], mask[rows[:1]], np.array([0]))
    assert heuristic.generator(0).bit_generator.state != before  # the row does draw when the batch is well formed


def _draws(python, observation, action_mask) -> bool:
    rng = np.random.default_rng(0)
    python.act(observation, action_mask, rng)
    return rng.bit_generator.state != np.random.default_rng(0).bit_generator.state
