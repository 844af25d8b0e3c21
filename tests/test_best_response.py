"""The best-response learner (:mod:`tableenvs.training.best_response`): trained for seconds, it returns a measured
gain with its interval and a model that fits; the target against itself gains exactly nothing; the batched model
player plays what the one-row player plays (a model reading derived inputs too); unknown targets and games without a
batched engine are refused in one line before any work.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pytest.importorskip("torch")

import tableenvs.vector
from tableenvs.core import registry
from tableenvs.core.registry import make_raw
from tableenvs.policies.model_env import check_model_fits, model_options
from tableenvs.policies.numpy_policy import NumpyPolicy, load_numpy_policy, trained_model_path
from tableenvs.training.batched_config import BatchedConfig
from tableenvs.training.best_response import (
    BatchedModel,
    BestResponseTrainer,
    batched_target,
    best_response,
    evaluate_gain,
)

GAME = "llama_party_v0"
TINY = {"rollout": 1024, "minibatch": 512, "hidden": (16,), "value_warmup": 0}


def assert_plays_as(player, engine, ones, seed, steps):
    """For ``steps`` steps of ``engine`` reset with ``seed``, ``player`` chooses in every env what ``ones[env]`` (a
    one-row ``NumpyPolicy``) chooses there; the games go on with those choices."""
    obs, mask = engine.reset(seed=seed)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        actions = player.act(obs, mask, np.arange(engine.num_envs))
        assert np.array_equal(actions, [one.act(o, m, rng) for one, o, m in zip(ones, obs, mask, strict=True)])
        obs, mask, *_ = engine.step(actions)


def test_a_short_best_response_reports_a_gain_with_its_interval(tmp_path):
    lines: list[str] = []
    result = best_response(
        GAME, "heuristic", tmp_path, options={"num_players": 3}, samples=2000, eval_games=48, label_games=8,
        num_envs=8, settings=TINY, say=lines.append,
    )  # fmt: skip
    assert result.samples >= 2000 and len(result.history) >= 1 and result.cpu_seconds > 0
    assert result.deals == 16 and result.games == 48
    assert result.low <= result.gain <= result.high and result.low < result.high
    # the gain is the learner's mean total minus the target seats' mean total (each a mean over the same games)
    assert np.isclose(result.gain, result.learner_mean - result.target_mean)
    assert lines[-1] == result.line() and "best response to heuristic" in lines[-1]
    model = load_numpy_policy(tmp_path / "best-response-heuristic.npz")
    check_model_fits(model, make_raw(GAME, num_players=3))
    assert (tmp_path / "clone.npz").is_file()


def test_a_best_response_can_start_from_the_shipped_model(tmp_path):
    """``start="trained"``: the learner begins as the shipped model (no clone is made), so against a table of that
    model it starts level with it; models it cannot be trained from are refused in one line before any work."""
    out = tmp_path / "new" / "folder"  # made as the clone's folder is made
    result = best_response(
        GAME, "trained", out, options={"num_players": 4}, samples=500, eval_games=48, num_envs=8,
        settings={"rollout": 256, "minibatch": 256, "value_warmup": 10**9}, start="trained",
    )  # fmt: skip
    assert not (out / "clone.npz").exists() and (out / "best-response-trained.npz").is_file()
    # the actor never learnt (value_warmup freezes it): the learner is the shipped model, level with its seats
    assert result.gain == pytest.approx(0.0, abs=1e-9) and result.low == pytest.approx(0.0, abs=1e-9)
    for start, match in (
        ("trained", "--start 'trained' is '.*llama_party_v0-2p.npz': training starts only from a ReLU network"),
        ("nowhere.npz", "--start 'nowhere.npz'"),
    ):
        with pytest.raises(ValueError, match=match) as error:
            best_response(GAME, "heuristic", tmp_path / "refused", options={"num_players": 2}, samples=10, start=start)
        assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match="--start 'trained' is .*: training starts only from a ReLU network") as error:
        best_response("rummikub_v0", "heuristic", tmp_path / "refused", options={"num_players": 4}, samples=10,
                      start="trained")  # fmt: skip
    assert not (tmp_path / "refused").exists()


def test_the_learner_sits_in_one_rotating_seat():
    config = BatchedConfig(GAME, options={"num_players": 4}, seed=0, **TINY)
    trainer = BestResponseTrainer(config, "heuristic", num_envs=8)
    assert trainer.member_names == ["heuristic"]
    before = trainer._learner_seat.copy()
    trainer._seat(np.arange(8))
    assert np.array_equal(trainer._learner_seat, (before + 1) % 4)
    assert np.array_equal((trainer.role == trainer.LEARNER).sum(axis=1), np.ones(8))
    assert np.array_equal(np.flatnonzero(trainer.role[3] == trainer.LEARNER), [trainer._learner_seat[3]])
    trainer.collect()
    assert trainer.games > 0 and len(trainer.opponent_returns) == 3 * len(trainer.game_returns)


def test_the_target_against_itself_gains_nothing():
    gain, low, high, mine, theirs = evaluate_gain(GAME, {"num_players": 3}, "heuristic", "heuristic", deals=8, seed=3)
    assert gain == pytest.approx(0.0, abs=1e-9) and mine == pytest.approx(theirs)
    assert low == pytest.approx(0.0, abs=1e-9) and high == pytest.approx(0.0, abs=1e-9)


def test_the_batched_model_plays_the_one_row_choice():
    path = trained_model_path(GAME, None)
    model = load_numpy_policy(path)
    options = {"num_players": model.options["num_players"]}
    engine = tableenvs.vector.make(GAME, 32, trusted=True, **options)
    player = batched_target("trained", engine, options)
    assert isinstance(player, BatchedModel)
    one = NumpyPolicy(model, make_raw(GAME, **options))
    assert_plays_as(player, engine, [one] * 32, seed=5, steps=20)


def test_refusals_are_one_line_and_come_before_any_work(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="unknown best-response target 'bogus'") as error:
        best_response(GAME, "bogus", tmp_path, options={"num_players": 3}, samples=10, eval_games=48)
    assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match="give a budget"):
        best_response(GAME, "heuristic", tmp_path, samples=None, cpu_seconds=None)
    assert not any(tmp_path.iterdir())  # nothing was made
    real = registry.spec(GAME)
    monkeypatch.setattr(registry, "spec", lambda name: dataclasses.replace(real, batched=None))
    with pytest.raises(ValueError, match="needs a batched engine.*names no batched$") as error:
        best_response(GAME, "heuristic", tmp_path, samples=10)
    assert "\n" not in str(error.value) and not any(tmp_path.iterdir())


def test_a_candidate_scoring_target_plays_as_numpy_policy():
    """Rummikub's shipped 4-player model scores candidate plays: its target is the batched candidate player, which
    chooses what one ``NumpyPolicy`` per env chooses (each keeps its env's turn), and gains nothing against itself."""
    from tableenvs.vector.candidates import BatchedCandidatePolicy

    game, options = "rummikub_v0", {"num_players": 4}
    engine = tableenvs.vector.make(game, 16, trusted=True, **options)
    player = batched_target("trained", engine, options)
    assert isinstance(player, BatchedCandidatePolicy)
    raw = make_raw(game, **options)
    ones = [NumpyPolicy(trained_model_path(game, player.model.options), raw) for _ in range(16)]
    assert_plays_as(player, engine, ones, seed=8, steps=60)
    assert player.scored > 0
    gain, low, high, mine, theirs = evaluate_gain(game, options, "trained", "trained", deals=2, seed=1)
    assert gain == pytest.approx(0.0, abs=1e-9) and mine == pytest.approx(theirs)


def test_a_target_that_reads_derived_inputs_plays_as_numpy_policy():
    """Llama Party's shipped 2-player model reads the heuristic's card values beside the observation: its target is
    the batched numpy player, which works them out row by row and chooses what ``NumpyPolicy`` chooses."""
    from tableenvs.vector.players import BatchedNumpyPolicy

    options = {"num_players": 2}
    engine = tableenvs.vector.make(GAME, 16, trusted=True, **options)
    player = batched_target("trained", engine, options)
    assert isinstance(player, BatchedNumpyPolicy) and player.reference.model.input_features
    raw = make_raw(GAME, **options)
    one = NumpyPolicy(trained_model_path(GAME, model_options(raw)), raw)
    assert_plays_as(player, engine, [one] * 16, seed=4, steps=40)
