"""Which numpy policy files training can start from: one check shared by the league's ``--init``, the best
response's ``--start`` and the distillation's fine-tuning.

Where you are: ``tableenvs/training/``, below :mod:`tableenvs.training.league_start`,
:mod:`tableenvs.training.best_response` and :mod:`tableenvs.training.distill` (it imports none of them). No game is
named here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def untrainable(model: Any, derived_inputs: bool = False) -> str | None:
    """Why training cannot start from the numpy policy ``model`` (its activation, input offset, derived inputs and
    candidates, as one phrase), or None for a ReLU network over the observation alone: the only kind the batched
    trainer builds. ``derived_inputs``: a network over the observation and its derived inputs
    (``input_features``) is accepted too (the distillation's fit, whose labelled rows carry them)."""
    features_ok = derived_inputs or not model.input_features
    if model.activation == "relu" and model.input_offset is None and features_ok and not model.candidates:
        return None
    return (
        f"{model.activation}, input offset {model.input_offset is not None}, derived inputs "
        f"{model.input_features or 'none'}, candidates {model.candidates or 'none'}"
    )


def check_init(
    game: str, options: dict[str, Any], init: str | Path, flag: str = "--init", derived_inputs: bool = False
) -> Any:
    """The numpy policy file ``init`` loaded, or a one-line ``ValueError`` (naming ``flag``) unless the league (or a
    best response) can start from it: a model of ``game`` at these options, a ReLU MLP without input offset or
    candidates, and without derived inputs unless ``derived_inputs`` (the league keeps them)."""
    from tableenvs.core.registry import make_raw
    from tableenvs.policies.model_env import check_model_fits
    from tableenvs.policies.model_file import load_numpy_policy

    try:
        model = load_numpy_policy(init)
        env = make_raw(game, **options)
        try:
            check_model_fits(model, env)
        finally:
            env.close()
    except (OSError, ValueError) as error:
        raise ValueError(f"{flag} {str(init)!r}: {error}") from None
    why = untrainable(model, derived_inputs)
    if why is not None:
        raise ValueError(f"{flag} {str(init)!r}: training starts only from a ReLU network over the observation "
                         f"(this one: {why})")  # fmt: skip
    return model
