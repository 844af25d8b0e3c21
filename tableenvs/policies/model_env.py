"""A numpy policy file against the env it plays: the options it records, and whether it fits an env.

Where you are: ``tableenvs/policies/``, beside :mod:`tableenvs.policies.model_file` (the file format, whose
``save_for_env`` records :func:`model_options`) and under :mod:`tableenvs.policies.numpy_policy` (which refuses a
model that does not fit its env with :func:`check_model_fits`). Only numpy is needed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tableenvs.core.layout import layout_version
from tableenvs.policies.input_features import candidate_size, feature_size


def model_options(env: Any) -> dict[str, Any]:
    """``env``'s options as a model records them: the state API's ``options`` (constructor options but
    ``render_mode``, as plain JSON), or just the player count for a game without the state API."""
    raw = getattr(env, "unwrapped", env)
    try:
        options = dict(raw._state_options())
    except NotImplementedError:
        options = {}
    options.setdefault("num_players", raw.num_players)
    return json.loads(json.dumps(options, sort_keys=True))


def _show_options(options: Mapping[str, Any], limit: int = 300) -> str:
    text = repr(dict(sorted(options.items())))
    return text if len(text) <= limit else text[: limit - 4] + "...}"


def check_model_fits(model: Any, env: Any) -> None:
    """Refuse (one-line ``ValueError`` naming both) a model (a :class:`~tableenvs.policies.model_file.NumpyModel`; not
    imported here, which model_file imports) whose game, options, layout version, observation size or
    action count differ from ``env``'s."""
    raw = env.unwrapped
    game = raw.metadata["name"]
    options = model_options(raw)
    if model.game != game:
        raise ValueError(f"model {model.name!r}: wrong game: it was made for {model.game}, not {game}")
    if model.options != options:
        differ = sorted(
            key for key in set(options) | set(model.options) if options.get(key, ...) != model.options.get(key, ...)
        )
        raise ValueError(
            f"model {model.name!r} was trained on {model.game} options {_show_options(model.options)} but the env is "
            f"{game} options {_show_options(options)} (differ: {', '.join(differ)})"
        )
    version = layout_version(raw)
    if model.layout_version != version:
        raise ValueError(
            f"model {model.name!r} was saved for {game}'s observation layout version {model.layout_version} but this "
            f"tableenvs encodes version {version}: retrain the model (or export it again from a matching run)"
        )
    if model.candidates:  # the network scores one candidate play from its features, not the observation
        size = candidate_size(model.candidates)
        if model.observation_size != size:
            raise ValueError(
                f"model {model.name!r} scores candidates of {model.observation_size} features but its candidates "
                f"{model.candidates!r} give {size}"
            )
        return
    agent = raw.possible_agents[0]
    sizes = (int(raw.observation_space(agent)["observation"].shape[0]), int(raw.action_space(agent).n))
    if model.input_features:  # the network's input is the observation and the derived features after it
        sizes = (sizes[0] + feature_size(model.input_features), sizes[1])
    if (model.observation_size, model.num_actions) != sizes:
        raise ValueError(
            f"model {model.name!r} expects observations of size {model.observation_size} and {model.num_actions} "
            f"actions but the env {game} has {sizes[0]} and {sizes[1]}"
        )
