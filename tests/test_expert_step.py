"""One step of expert iteration (:func:`tableenvs.training.expert_iteration.expert_step`): a search whose rollouts
the start model plays labels whole games, and the start is fine-tuned towards its choices. Tiny budgets (two games, a
search of a few simulations): the mechanics, not the strength (docs/training.md, "Expert iteration")."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from tableenvs.core.registry import make_raw
from tableenvs.policies.model_env import model_options
from tableenvs.policies.numpy_policy import load_numpy_policy, trained_model_path
from tableenvs.training.expert_iteration import expert_step

NAME = "llama_party_v0"
ROOT = Path(__file__).resolve().parent.parent
SHIPPED = trained_model_path(NAME, {"num_players": 4})


def test_the_start_is_fine_tuned_towards_the_search_over_its_own_rollouts(tmp_path, monkeypatch):
    monkeypatch.delenv("TABLEENVS_MODELS", raising=False)  # rollout=trained: the shipped model, the start here
    said: list[str] = []
    path = expert_step(NAME, tmp_path / "x", start=SHIPPED, options={"num_players": 4}, label_games=2,
                       labeller="search:batched=1:sims=4:z=2:rollout=trained", epochs=1, workers=1,
                       say=said.append)  # fmt: skip
    start, model = load_numpy_policy(SHIPPED), load_numpy_policy(path)
    assert [w.shape for w, _ in model.weights] == [w.shape for w, _ in start.weights]
    assert np.array_equal(model.input_scale, start.input_scale)
    history = json.loads((tmp_path / "x" / "fit.json").read_text())["history"]
    moved = not all(np.array_equal(a, b) for (a, _), (b, _) in zip(model.weights, start.weights, strict=True))
    kept = min(history, key=lambda row: row["val_loss"])["epoch"]  # the epoch of least validation loss is kept
    assert [row["epoch"] for row in history] == [0, 1] and moved == (kept == 1)
    assert model.meta["labels"] > 20 and "rollout=trained" in model.meta["recipe"]
    assert len(list((tmp_path / "x" / "labels").glob("game-*.npz"))) == 2
    assert expert_step(NAME, tmp_path / "x", start=SHIPPED, say=said.append) == path  # a rerun returns it


def test_a_start_with_derived_inputs_is_fine_tuned_on_rows_carrying_them(tmp_path, monkeypatch):
    """The 3-player model reads the heuristic's card values beside the observation: the labelled rows get them
    appended as the model computes them, and the fine-tuned file reads them too."""
    monkeypatch.delenv("TABLEENVS_MODELS", raising=False)
    start_path = trained_model_path(NAME, model_options(make_raw(NAME, num_players=3)))
    start = load_numpy_policy(start_path)
    assert start.input_features  # what this test is about
    path = expert_step(NAME, tmp_path / "x", start=start_path, options={"num_players": 3}, label_games=2,
                       labeller="search:batched=1:sims=4:z=2:rollout=trained", epochs=1, workers=1,
                       say=print)  # fmt: skip
    model = load_numpy_policy(path)
    assert model.input_features == start.input_features and model.observation_size == start.observation_size
    history = json.loads((tmp_path / "x" / "fit.json").read_text())["history"]
    assert history[0]["epoch"] == 0 and history[0]["val_agree"] > 0.5  # the start, on rows with its own inputs


def test_a_search_whose_rollouts_play_another_model_is_refused_before_labelling(tmp_path, monkeypatch):
    monkeypatch.delenv("TABLEENVS_MODELS", raising=False)
    other = ROOT / "benchmarks" / "results" / "replaced-models" / "llama_party_v0.npz"
    with pytest.raises(ValueError, match="set TABLEENVS_MODELS to a directory holding the start") as caught:
        expert_step(NAME, tmp_path / "y", start=other, options={"num_players": 4}, label_games=2, say=print)
    assert "\n" not in str(caught.value) and not (tmp_path / "y" / "labels").exists()


def test_value_targets_need_a_labeller_that_keeps_values_and_are_recorded(tmp_path, monkeypatch):
    """``value_temperature``: a share of the fit's targets is the softmax of the batched labeller's values (both
    recorded in the model's header); a labeller that keeps no values, or a temperature not above 0, is refused
    before labelling."""
    monkeypatch.delenv("TABLEENVS_MODELS", raising=False)
    for labeller, temperature, match in (("search:sims=4:root=paired", 1.0, "keeps no values"),
                                         ("search:batched=1:sims=4:rollout=trained", 0.0, "must be > 0")):  # fmt: skip
        with pytest.raises(ValueError, match=match) as caught:
            expert_step(NAME, tmp_path / "z", start=SHIPPED, options={"num_players": 4}, label_games=2,
                        labeller=labeller, value_temperature=temperature, say=print)  # fmt: skip
        assert "\n" not in str(caught.value) and not (tmp_path / "z" / "labels").exists()
    path = expert_step(NAME, tmp_path / "v", start=SHIPPED, options={"num_players": 4}, label_games=2,
                       labeller="search:batched=1:sims=4:z=2:rollout=trained", epochs=1, workers=1,
                       value_temperature=0.5, value_share=0.2, say=print)  # fmt: skip
    meta = load_numpy_policy(path).meta
    assert (meta["value_temperature"], meta["value_share"]) == (0.5, 0.2)


def test_the_expert_step_model_starts_from_a_committed_file():
    """The 4-player Llama Party model made by one expert step (shipped until the advantage iteration that starts from
    it; kept in replaced-models) names that recipe, and the model it was tuned from is committed (its labelling search
    plays it through TABLEENVS_MODELS, the fine-tuning starts from it), so the command of tableenvs/models/README.md
    runs from a fresh clone."""
    stepped = ROOT / "benchmarks" / "results" / "replaced-models" / "llama_party_v0-a9f34ef7ace4.npz"
    assert hashlib.sha256(stepped.read_bytes()).hexdigest().startswith("a9f34ef7ace4")
    meta = load_numpy_policy(stepped).meta
    assert meta["recipe"].startswith("expert step: llama_party_v0.npz towards search:")
    start = ROOT / "benchmarks" / "results" / "replaced-models" / "llama_party_v0.npz"
    assert hashlib.sha256(start.read_bytes()).hexdigest().startswith("fde7c70cc582")
    assert load_numpy_policy(start).options == load_numpy_policy(SHIPPED).options
