"""Expert iteration: a model fine-tuned towards the choices of a search whose rollouts it plays itself.

Where you are: a training recipe beside :mod:`tableenvs.training.recipe` (whose ``search-clone`` fits a fresh network
to a search's choices) and :mod:`tableenvs.training.distill` (labelling and fitting, which this reuses). A search over
the model's own rollouts is the model improved by one step of lookahead; the planning best response of
:mod:`tableenvs.training.search_response` is that search, so what it gains over a model is what this step teaches
the model. docs/training.md, "Expert iteration", has the measured step.
Units: games and labelled decisions; times are seconds.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from tableenvs.core.registry import make_raw
from tableenvs.core.validation import check_at_least
from tableenvs.policies.numpy_policy import load_numpy_policy
from tableenvs.training import distill

__all__ = ["expert_step"]


def expert_step(
    game: str,
    out_dir: str | Path,
    *,
    start: str | Path,
    options: dict[str, Any] | None = None,
    label_games: int = 500,
    labeller: str = "search:batched=1:sims=100:z=2:rollout=trained",
    lr: float = 3e-4,
    epochs: int = 6,
    workers: int = 2,
    seed: int = 0,
    value_temperature: float | None = None,
    value_share: float = 0.1,
    say: Any = print,
) -> Path:
    """One step of **expert iteration** under ``out_dir``: ``label_games`` games with every seat playing ``labeller``
    (a search whose rollouts the ``start`` model plays: ``rollout=trained`` must resolve to ``start``'s very file, so
    the search improves on that model by one step of lookahead), each decision with a choice kept (``labels/``,
    resumable); then ``start`` (a numpy policy over the observation, and its derived inputs if it reads any: they are
    appended to the labelled rows as the model computes them) fine-tuned towards those choices
    (:func:`tableenvs.training.distill.fit` from its weights and input scale, one-hot targets, learning rate ``lr``,
    ``epochs`` epochs, the epoch of least validation loss kept; with ``value_temperature``, ``value_share`` of each
    target is the softmax of the labeller's values of the legal actions at that temperature, in reward units, the
    rest its choice: :func:`distill.value_targets`, a batched labeller only) and written as ``model.npz`` (float16
    weights) with ``fit.json`` (the fit's history). The search agrees with its rollout model at most decisions; what
    the model learns is where one step of lookahead departs from it, which is what a planning best response against
    it would exploit (:mod:`tableenvs.training.search_response`). A rollout model other than the shipped one is named
    with the ``TABLEENVS_MODELS`` directory. Returns the model's path; a rerun with the model there returns it."""
    import hashlib

    from tableenvs.policies.numpy_policy import trained_model_path
    from tableenvs.policies.search import parse_search_spec

    options = dict(options or {})
    out = Path(out_dir)
    model = out / "model.npz"
    if model.exists():
        return model
    env = make_raw(game, **options)  # the game and its options, checked before labelling
    first = load_numpy_policy(start)
    if first.candidates:
        raise ValueError(f"start {str(start)!r}: a candidate-scoring model; expert_step fine-tunes a network over "
                         f"the observation (and its derived inputs)")  # fmt: skip
    if parse_search_spec(labeller).rollout == "trained":
        from tableenvs.policies.model_env import model_options

        rollout = trained_model_path(game, model_options(env))
        if hashlib.sha256(rollout.read_bytes()).digest() != hashlib.sha256(Path(start).read_bytes()).digest():
            raise ValueError(f"labeller {labeller!r}: its rollouts play {str(rollout)!r}, not the start "
                             f"{str(start)!r} (set TABLEENVS_MODELS to a directory holding the start)")  # fmt: skip
    check_at_least("label_games", label_games, 2)
    if value_temperature is not None:
        if not parse_search_spec(labeller).batched:
            raise ValueError(f"value_temperature: labeller {labeller!r} keeps no values of the legal actions "
                             "(a batched search does: search:batched=1)")  # fmt: skip
        distill.check_value_targets(value_temperature, value_share, prefix="value_")
    began = time.perf_counter()
    data = distill.labelled_choices(
        game, options, games=label_games, out_dir=out / "labels", seed=seed, search_spec=labeller, workers=workers,
        say=say,
    )  # fmt: skip
    if first.input_features:
        from tableenvs.policies.input_features import input_features

        data = distill.with_features(data, input_features(first.input_features, env))
    if value_temperature is not None:
        data = distill.value_targets(data, value_temperature, value_share)
    say(f"fine-tuning {Path(start).name} towards {labeller} on {len(data['action'])} labels")
    result = distill.fit(data, epochs=epochs, batch=1024, lr=lr, seed=seed, threads=workers, start=first, say=say)
    meta = {"recipe": f"expert step: {Path(start).name} towards {labeller}", "labels": int(len(data["action"])),
            "epochs": epochs, "lr": lr}  # fmt: skip
    if value_temperature is not None:
        meta.update(value_temperature=value_temperature, value_share=value_share)
    distill.export(result, model, game, options, meta, input_features=first.input_features, dtype="float16")
    (out / "fit.json").write_text(json.dumps({"meta": meta, "history": result.history}, indent=2) + "\n")
    say(f"wrote {model} ({time.perf_counter() - began:.0f} s in all)")
    return model
