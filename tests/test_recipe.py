"""The ``strong`` recipe (tableenvs/training/recipe.py) on a seconds budget: the clone is the fine-tuning's start,
frozen steps leave the policy as cloned, learning moves it, a rerun resumes, and the result plays through
make_policy."""

import json

import numpy as np
import pytest

import tableenvs
from tableenvs.policies import make_policy
from tableenvs.policies.numpy_policy import load_numpy_policy
from tableenvs.training import recipe

pytest.importorskip("sb3_contrib")

OPTIONS = {"num_players": 3}
SMALL = {"n_envs": 2, "rollout": 128, "minibatch": 64, "epochs": 1}


def _run(out, steps, freeze, say=print):
    return recipe.strong(
        "pilipili_v0",
        out,
        options=OPTIONS,
        label_games=4,
        epochs=2,
        hidden=(16,),
        steps=steps,
        workers=1,
        fine_tune_options={"chunk": 512, "settings": {**SMALL, "value_warmup": freeze}},
        say=say,
    )


def test_frozen_steps_keep_the_clone_and_learning_moves_it(tmp_path):
    final = load_numpy_policy(_run(tmp_path / "frozen", steps=512, freeze=10_000))
    (export,) = sorted((tmp_path / "frozen" / "fine-tune").glob("model-*.npz"))
    frozen = load_numpy_policy(export)
    # the final model.npz is the newest export stored as float16 (what is shipped): the same weights, rounded
    assert final.meta["weight_dtype"] == "float16" and final.meta["steps"] == frozen.meta["steps"]
    for (w, b), (fw, fb) in zip(frozen.weights, final.weights, strict=True):
        assert np.array_equal(w.astype(np.float16).astype(np.float32), fw) and np.array_equal(b, fb)
    clone = load_numpy_policy(tmp_path / "frozen" / "clone.npz")
    assert frozen.hidden == clone.hidden == (16,)
    for (w, b), (cw, cb) in zip(frozen.weights, clone.weights, strict=True):
        assert np.array_equal(w, cw) and np.array_equal(b, cb)
    assert np.array_equal(frozen.input_scale, clone.input_scale)
    moved = load_numpy_policy(_run(tmp_path / "moved", steps=512, freeze=0))
    assert any(not np.array_equal(w, cw) for (w, _), (cw, _) in zip(moved.weights, clone.weights, strict=True))
    assert moved.meta["steps"] >= 512
    curve = [
        json.loads(line) for line in (tmp_path / "moved" / "fine-tune" / "progress.jsonl").read_text().splitlines()
    ]
    assert curve and curve[-1]["steps"] == moved.meta["steps"] and all(row["games"] > 0 for row in curve)
    # the learner holds two of the three seats, the heuristic the third: both sides' returns are on the curve
    assert all(isinstance(row["opponent_return"], float) for row in curve)


def test_a_rerun_resumes_from_the_last_export_and_the_model_plays(tmp_path):
    first = load_numpy_policy(_run(tmp_path, steps=512, freeze=0)).meta["steps"]
    lines: list[str] = []
    final = _run(tmp_path, steps=1024, freeze=0, say=lines.append)
    assert any(line.startswith("resuming from") and f"model-{first:09d}.npz" in line for line in lines), lines
    assert load_numpy_policy(final).meta["steps"] >= 1024
    env = tableenvs.make("pilipili_v0", **OPTIONS)
    policy = make_policy(str(final), env)
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    for _agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        action = (
            None if terminated or truncated else policy.act(observation["observation"], observation["action_mask"], rng)
        )
        if action is not None:
            assert observation["action_mask"][action]
        env.step(action)


def test_bad_budgets_are_named(tmp_path):
    with pytest.raises(ValueError, match="steps must be an integer >= 1"):
        recipe.fine_tune("pilipili_v0", OPTIONS, tmp_path / "x.npz", tmp_path, steps=0)
    with pytest.raises(ValueError, match="chunk must be an integer >= 1"):
        recipe.fine_tune("pilipili_v0", OPTIONS, tmp_path / "x.npz", tmp_path, steps=10, chunk=0)
