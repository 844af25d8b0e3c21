"""Candidate-scoring model files on the batched engine (``tableenvs.vector.candidates.BatchedCandidatePolicy``, the
game's ``GameSpec.batched_candidates``) choose exactly as ``NumpyPolicy`` plays them in the AEC env.

Games are found through their specs (every game whose spec names batched candidates), and the models are the shipped
candidate-scoring ones (each made for its player count) and random-weight files of every candidates name the game
declares (so both kinds of candidates and rows near a tie are exercised):

* Positions: thousands recorded from batched play (half heuristic, half random moves: turns under way, openings,
  big tables) at every shipped model's player count; each row a fresh question on both sides (nothing kept).
* Mixed play, step by step: each env's rows given to the batched player and to the env's own ``NumpyPolicy`` (whose
  kept openings and plans follow the env, as the batched player's do), then half the model's move, half random:
  the same action at every step (a model that chose a smaller opening follows it; a random move that leaves every
  candidate hands the row to the heuristic on both sides).
* Whole games: the model in some seats and the heuristic in the others, on the batched engine and in the AEC env
  (``play_game``), the same deals: the same rewards.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import tableenvs
import tableenvs.vector
from tableenvs.core.layout import layout_version
from tableenvs.core.registry import spec
from tableenvs.policies import make_policy, play_game
from tableenvs.policies.input_features import candidate_size
from tableenvs.policies.model_env import model_options
from tableenvs.policies.model_file import load_numpy_policy, save_numpy_policy
from tableenvs.policies.numpy_policy import NumpyPolicy, model_files
from tableenvs.vector.candidates import BatchedCandidatePolicy, batched_candidates
from tests.batched_positions import recorded_positions
from tests.candidate_differential import mixed_play, random_candidate_model

GAMES = [name for name in tableenvs.names() if spec(name).batched_candidates]


def shipped_candidate_models(name: str) -> list[tuple[int, str]]:
    """``(players, path)`` of the game's shipped candidate-scoring models."""
    out = []
    for path in model_files(name):
        model = load_numpy_policy(path)
        if model.candidates:
            out.append((int(model.options["num_players"]), str(path)))
    return out


SHIPPED = [(name, players, path) for name in GAMES for players, path in shipped_candidate_models(name)]


def fresh_choices(path: str, raw: object, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``NumpyPolicy.act`` on every row, each by a fresh policy of the model (nothing kept between rows)."""
    model = load_numpy_policy(path)
    rng = np.random.default_rng(0)
    return np.array([NumpyPolicy(model, raw).act(o, m, rng) for o, m in zip(obs, mask, strict=True)])


@pytest.mark.parametrize("name, players, path", SHIPPED, ids=[f"{n}-{p}p" for n, p, _ in SHIPPED])
def test_the_batched_player_chooses_as_numpy_policy_on_recorded_positions(name, players, path):
    options = {"num_players": players}
    obs, mask, _ = recorded_positions(name, options, 40, 120, players, heuristic=True, every=2)  # 2,400 rows
    raw = tableenvs.make_raw(name, **options)
    expected = fresh_choices(path, raw, obs, mask)
    rows = tableenvs.vector.make(name, len(obs), **options)
    player = tableenvs.vector.batched_policy(f"trained:path={path}", rows, env=raw)
    assert isinstance(player, BatchedCandidatePolicy)
    chosen = player.act(obs, mask, np.arange(len(obs)))
    assert player.scored > 150  # rows with a real choice (openings, play or hold) were scored
    assert np.flatnonzero(chosen != expected).tolist() == []


MIXED = [(name, players, candidates) for name in GAMES for players in (3, 4) for candidates in spec(name).candidates]


@pytest.mark.parametrize("name, players, candidates", MIXED, ids=[f"{n}-{p}p-{c}" for n, p, c in MIXED])
def test_kept_candidates_choose_as_numpy_policy_through_mixed_play(name, players, candidates, tmp_path):
    path = random_candidate_model(tmp_path / "m.npz", name, players, candidates, seed=players)
    counts = mixed_play(name, players, path)
    assert counts["scored"] > 50 and counts["mismatches"] == 0


def test_rows_near_a_tie_are_scored_again_as_numpy_policy_scores_them(tmp_path):
    """A model of zero weights scores every candidate alike: every row with a choice is a tie, scored again on its
    own, and plays its first candidate, as ``NumpyPolicy`` does."""
    name, players = GAMES[0], 4
    candidates = next(iter(spec(name).candidates))
    raw = tableenvs.make_raw(name, num_players=players)
    size = candidate_size(candidates)
    path = save_numpy_policy(
        tmp_path / "zero.npz", game=name, options=model_options(raw), layout_version=layout_version(raw),
        weights=[(np.zeros((size, 1)), np.zeros(1))], activation="relu", candidates=candidates,
    )  # fmt: skip
    obs, mask, _ = recorded_positions(name, {"num_players": players}, 16, 80, 1, heuristic=True, every=2)
    player = tableenvs.vector.batched_policy(str(path), tableenvs.vector.make(name, len(obs), num_players=players),
                                             env=raw)  # fmt: skip
    chosen = player.act(obs, mask, np.arange(len(obs)))
    assert player.scored > 20 and player.rescored == player.scored
    assert np.flatnonzero(chosen != fresh_choices(str(path), raw, obs, mask)).tolist() == []


def play_batched(name: str, options: dict, path: str, seeds: list[int], model_seats: list[int]) -> np.ndarray:
    """Env ``i`` plays its first game of seed ``seeds[i]``: the model (batched) in ``model_seats``, the batched
    heuristic elsewhere; each env's summed rewards."""
    n = len(seeds)
    games = tableenvs.vector.make(name, n, **options)
    obs, mask = games.reset(seeds)
    model = tableenvs.vector.batched_policy(path, games)
    heuristic = tableenvs.vector.batched_heuristic(games)
    envs = np.arange(n, dtype=np.int64)
    totals = np.zeros((n, games.num_players))
    playing = np.ones(n, bool)
    while playing.any():
        mine = np.isin(games.to_act, model_seats)
        actions = np.zeros(n, np.int64)
        for rows, player in ((np.flatnonzero(mine), model), (np.flatnonzero(~mine), heuristic)):
            if rows.size:
                actions[rows] = player.act(obs[rows], mask[rows], envs[rows])
        obs, mask, rewards, terminated, truncated = games.step(actions)
        totals[playing] += rewards[playing]
        playing &= ~(terminated | truncated)
    return totals


@pytest.mark.parametrize("name, players, path", SHIPPED, ids=[f"{n}-{p}p" for n, p, _ in SHIPPED])
def test_whole_games_against_the_heuristic_end_with_the_same_rewards_as_the_aec_env(name, players, path):
    options = {"num_players": players}
    seeds = [1000 * players + i for i in range(12)]
    model_seats = list(range(0, players, 2))  # the model in seats 0 (and 2), the heuristic in the others
    raw = tableenvs.make_raw(name, **options)
    heuristic_policy = make_policy("heuristic", raw)
    expected = []
    for seed in seeds:
        model = NumpyPolicy(path, raw)  # one player for its seats, as an evaluation's entrant
        seats = [model if seat in model_seats else heuristic_policy for seat in range(players)]
        expected.append(play_game(raw, seats, seed=seed, rng=np.random.default_rng(seed))[0])
    expected = np.array(expected)
    assert np.abs(expected).sum(axis=1).min() > 0  # every game scored
    np.testing.assert_allclose(play_batched(name, options, path, seeds, model_seats), expected, rtol=0, atol=1e-3)


def test_a_game_without_batched_candidates_for_the_model_is_refused_in_one_line():
    name = GAMES[0]
    games = tableenvs.vector.make(name, 2, num_players=4)
    raw = tableenvs.make_raw(name, num_players=4)
    with pytest.raises(ValueError, match="names no batched candidates for it .* no batched player") as error:
        batched_candidates(SimpleNamespace(name="m.npz", candidates="unknown_v1"), games, raw)
    assert "\n" not in str(error.value)


def test_a_sampled_model_plays_legal_actions_reproducibly():
    name, (players, path) = GAMES[0], shipped_candidate_models(GAMES[0])[-1]
    actions = []
    for _ in range(2):
        games = tableenvs.vector.make(name, 8, num_players=players)
        obs, mask = games.reset(3)
        player = tableenvs.vector.batched_policy(path, games, deterministic=False, seed=4)
        played = []
        for _ in range(60):
            chosen = player.act(obs, mask, np.arange(8))
            assert mask[np.arange(8), chosen].all()
            played.append(chosen)
            obs, mask, *_ = games.step(chosen)
        actions.append(np.array(played))
        assert player.scored > 0
    assert np.array_equal(actions[0], actions[1])
