"""The search-distillation recipe (tableenvs.training.distill) on a budget of seconds: labels are what search chose,
labelling is reproducible and resumable, the fit learns the labels, and the export plays legally by numpy."""

from __future__ import annotations

import numpy as np
import pytest

import tableenvs
from tableenvs.policies import make_policy
from tableenvs.training import distill

pytest.importorskip("torch")

GAME = "pilipili_v0"
OPTIONS = {"num_players": 3}
SPEC = "search:sims=6"


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    out = tmp_path_factory.mktemp("labels")
    distill.label_games(GAME, OPTIONS, games=3, out_dir=out, seed=7, search_spec=SPEC, say=lambda line: None)
    return out


def test_labels_are_the_search_root_of_each_multi_choice_decision(labelled):
    data = distill.read_shards(labelled)
    assert len(data["action"]) > 20
    legal = data["mask"] > 0
    assert (legal.sum(axis=1) > 1).all()  # single-choice decisions are not labelled
    assert np.allclose(data["target"].sum(axis=1), 1.0)
    assert (data["target"][~legal] == 0).all()  # no weight on an illegal action
    assert (data["value"][~legal] == 0).all()
    assert (data["value"][data["target"] > 0] != 0).any()  # visited actions carry their mean rollout value
    # The action played is the one visited most (the flat root's rule).
    played = data["target"][np.arange(len(data["action"])), data["action"]]
    assert (played >= data["target"].max(axis=1) - 1e-6).all()
    # The observation is the acting seat's: replaying game 0 with the recorded actions reproduces it.
    env = tableenvs.make_raw(GAME, **OPTIONS)
    env.reset(seed=7)
    first = data["observation"][data["game"] == 7][0]
    for agent in env.agent_iter():
        observation = env.observe(agent)
        if observation["action_mask"].sum() > 1:
            assert np.array_equal(observation["observation"].astype(np.float32), first)
            break
        env.step(int(np.flatnonzero(observation["action_mask"])[0]))


def test_labelling_is_reproducible_and_resumes(labelled, tmp_path):
    distill.label_games(GAME, OPTIONS, games=2, out_dir=tmp_path, seed=7, search_spec=SPEC, say=lambda line: None)
    again = distill.read_shards(tmp_path)
    first = distill.read_shards(labelled)
    rows = np.isin(first["game"], [7, 8])
    for name in distill.FIELDS:
        assert np.array_equal(again[name], first[name][rows]), name
    # A second call finds both games done and labels nothing new.
    assert (
        distill.label_games(GAME, OPTIONS, games=2, out_dir=tmp_path, seed=7, search_spec=SPEC, say=lambda line: None)
        == 0
    )


def test_labels_of_an_older_version_are_refused_by_name(tmp_path):
    np.savez(tmp_path / "game-000000.npz", observation=np.zeros((1, 2)), mask=np.zeros((1, 2)))
    with pytest.raises(ValueError, match="have no target, value, action, game"):
        distill.read_shards(tmp_path)


def test_bad_arguments_are_named(tmp_path):
    with pytest.raises(ValueError, match="games must be >= 1, got 0"):
        distill.label_games(GAME, OPTIONS, games=0, out_dir=tmp_path)
    with pytest.raises(FileNotFoundError, match="no labelled games"):
        distill.read_shards(tmp_path)


def test_fit_learns_the_labels_and_the_export_plays_by_numpy(labelled, tmp_path):
    data = distill.read_shards(labelled)
    result = distill.fit(
        data, hidden=(32,), epochs=60, lr=3e-3, validation=0.34, seed=0, threads=1, say=lambda line: None
    )
    assert result.history[-1]["train_loss"] < result.history[0]["train_loss"] * 0.8
    # Inputs are scaled by the largest magnitude in the training rows: finite, positive, some feature at 1.
    assert np.isfinite(result.input_scale).all() and (result.input_scale > 0).all()
    assert np.isclose(np.abs(data["observation"] * result.input_scale).max(), 1.0) or (
        np.abs(data["observation"] * result.input_scale).max() > 1.0
    )
    path = distill.export(result, tmp_path / "model.npz", GAME, OPTIONS, {"test": True})
    env = tableenvs.make_raw(GAME, **OPTIONS)
    policy = make_policy(str(path), env)
    rng = np.random.default_rng(0)
    env.reset(seed=3)
    steps = 0
    for _agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        action = policy.act(observation["observation"], observation["action_mask"], rng)
        assert observation["action_mask"][action] == 1
        env.step(action)
        steps += 1
    assert steps > 20


def test_fit_from_a_model_starts_at_its_weights_and_moves_towards_the_labels(labelled, tmp_path):
    """``start``: the fit begins as the model (epoch 0 is the model itself, with its own input scale), trains towards
    the labels from there, and a model it cannot start from is refused in one line."""
    from tableenvs.policies.model_env import model_options
    from tableenvs.policies.model_file import load_numpy_policy
    from tableenvs.policies.numpy_policy import NumpyPolicy, trained_model_path

    data = distill.read_shards(labelled)
    model = load_numpy_policy(trained_model_path(GAME, model_options(tableenvs.make_raw(GAME, **OPTIONS))))
    quiet = {"validation": 0.34, "seed": 0, "threads": 1, "say": lambda line: None}
    kept = distill.fit(data, epochs=0, start=model, **quiet)
    assert [row["epoch"] for row in kept.history] == [0]
    pairs = zip(kept.weights, model.weights, strict=True)
    assert all(np.array_equal(w, mw) and np.array_equal(b, mb) for (w, b), (mw, mb) in pairs)
    assert np.array_equal(kept.input_scale, model.input_scale)
    env = tableenvs.make_raw(GAME, **OPTIONS)
    start_agrees = NumpyPolicy(model, env).act
    moved = distill.fit(data, epochs=30, lr=3e-3, start=model, **quiet)
    assert moved.history[0]["epoch"] == 0 and len(moved.history) == 31
    assert moved.history[-1]["train_loss"] < moved.history[1]["train_loss"]  # it learns the labels from there
    assert [w.shape for w, _ in moved.weights] == [w.shape for w, _ in model.weights]
    path = distill.export(moved, tmp_path / "tuned.npz", GAME, OPTIONS, {"test": True})
    tuned = NumpyPolicy(path, env).act
    rng = np.random.default_rng(0)
    rows = list(zip(data["observation"], data["mask"], data["action"], strict=True))
    hits_start = sum(start_agrees(o, m, rng) == a for o, m, a in rows)
    hits_tuned = sum(tuned(o, m, rng) == a for o, m, a in rows)
    assert hits_tuned > hits_start  # closer to the labeller's choices than the model it started from
    candidate = load_numpy_policy(trained_model_path("rummikub_v0"))
    with pytest.raises(ValueError, match="fit starts only from a ReLU network over the observation"):
        distill.fit(data, epochs=1, start=candidate, **quiet)


def test_value_targets_are_the_softmax_of_the_labellers_values_over_the_legal_actions(tmp_path):
    """A batched paired root keeps each legal action's mean value beside its choice; ``value_targets`` turns them into
    soft targets (softmax over the legal actions at a temperature in reward units), and refuses a bad temperature."""
    data = {
        "mask": np.array([[1, 1, 0, 1], [0, 1, 1, 0]], np.int8),
        "value": np.array([[2.0, 1.0, 0.0, 2.0], [0.0, 5.0, 3.0, 0.0]], np.float32),
        "target": np.zeros((2, 4), np.float32),
        "action": np.array([0, 1], np.int16),
    }
    soft = distill.value_targets(data, 1.0)["target"]
    first = np.exp([2.0, 1.0, 2.0]) / np.exp([2.0, 1.0, 2.0]).sum()
    assert np.allclose(soft[0], [first[0], first[1], 0.0, first[2]])
    assert np.allclose(soft[1], [0.0, 1 / (1 + np.exp(-2.0)), np.exp(-2.0) / (1 + np.exp(-2.0)), 0.0])
    sharper = distill.value_targets(data, 0.1)["target"]
    assert sharper[1, 1] > 0.999 and np.allclose(sharper[0, [0, 3]], 0.5, atol=1e-4)  # ties stay ties
    mixed = distill.value_targets(data, 1.0, share=0.25)["target"]  # a quarter from the values, the rest the choice
    assert np.allclose(mixed, 0.25 * soft + 0.75 * np.eye(4)[[0, 1]]) and np.allclose(mixed.sum(axis=1), 1.0)
    assert data["target"].sum() == 0  # the input is not changed
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="temperature must be > 0"):
            distill.value_targets(data, bad)
    for bad in (0.0, 1.5, float("nan")):
        with pytest.raises(ValueError, match="share must be in"):
            distill.value_targets(data, 1.0, share=bad)
    for temperature, share in (("1", 0.5), (1.0, None), (True, 0.5)):
        with pytest.raises(ValueError, match="must be a number"):
            distill.value_targets(data, temperature, share=share)
    # labelled by a batched search: every row carries its legal actions' values, the choice one-hot
    out = tmp_path / "batched"
    distill.label_games("llama_party_v0", {"num_players": 3}, games=1, out_dir=out, seed=3,
                        search_spec="search:batched=1:sims=16:z=1", say=lambda line: None)  # fmt: skip
    labels = distill.read_shards(out)
    legal = labels["mask"] > 0
    assert len(labels["action"]) > 10 and (labels["value"][~legal] == 0).all()
    assert ((labels["value"] != 0) & legal).any(axis=1).mean() > 0.9  # rollout values are rarely exactly 0
    assert np.array_equal(labels["target"].argmax(axis=1), labels["action"])
    assert (labels["target"].max(axis=1) == 1).all()  # the choice, one-hot


def test_with_features_appends_the_batched_derived_inputs_as_row_by_row():
    """Llama Party's card values, appended in one batched call, are the floats the features give row by row; a
    feature without ``batch`` is called row by row."""
    from tableenvs.llama_party.features import CardValues

    env = tableenvs.make_raw("llama_party_v0", num_players=3)
    rng = np.random.default_rng(2)
    observations, masks = [], []
    env.reset(seed=5)
    for agent in env.agent_iter():
        seen = env.observe(agent)
        if env.terminations[agent] or env.truncations[agent] or len(observations) >= 60:
            break
        observations.append(seen["observation"].copy())
        masks.append(seen["action_mask"].astype(np.int8))
        env.step(int(rng.choice(np.flatnonzero(seen["action_mask"]))))
    data = {"observation": np.asarray(observations, np.float32), "mask": np.asarray(masks, np.int8)}
    features = CardValues(env)
    batched = distill.with_features(data, features)["observation"]
    one_by_one = distill.with_features(data, lambda o, m: features(o, m))["observation"]
    assert batched.shape == (len(observations), 469 + 64)
    assert np.array_equal(batched, one_by_one)
    assert np.array_equal(batched[:, :469], data["observation"])
