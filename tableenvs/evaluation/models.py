"""Entrants' names and the training records saved beside models.

Where you are: the evaluation package's knowledge of what ``tableenvs train`` writes. A ``.zip`` does not name its
game; ``tableenvs train`` writes ``results.json`` (``config.env``, ``config.options``) beside ``model.zip`` (and
``--backend rllib`` beside ``policy.pt``), and when it is there it says which game and player count the model
was trained for. A numpy policy (``.npz``, and the ``trained`` policy) says so in its own header.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tableenvs.paths import is_model_path


def label(spec: Any) -> str:
    """A short name: ``random``; ``runs/quick/model.zip`` (or ``runs/quick/policy.pt``) -> ``quick`` (its run
    folder); ``ckpt.zip`` -> ``ckpt``."""
    if isinstance(spec, (str, Path)):
        text = str(spec)
        if not is_model_path(spec):
            return text
        path = Path(text)
        if path.name in ("model.zip", "model.npz", "policy.pt") and path.resolve().parent.name:
            return path.resolve().parent.name
        return path.stem
    return str(getattr(spec, "name", None) or getattr(spec, "__name__", None) or type(spec).__name__)


def labels(specs: Sequence[Any]) -> list[str]:
    """:func:`label` of each spec, repeated ones numbered (``random``, ``random#2``)."""
    result: list[str] = []
    seen: dict[str, int] = {}
    for spec in specs:
        base = label(spec)
        seen[base] = seen.get(base, 0) + 1
        result.append(base if seen[base] == 1 else f"{base}#{seen[base]}")
    return result


def training_config(
    spec: Any, game: str | None = None, options: dict[str, Any] | None = None
) -> tuple[Path, dict[str, Any]] | None:
    """``(path of results.json, its "config")`` for a model path with a readable training record beside it; for a
    numpy policy (a ``.npz`` path; ``"trained"`` when ``game`` is given: the shipped file made for ``options``, the
    env's model options, when given) ``(its file, its header's game and options)``."""
    numpy_file = _numpy_file(spec, game, options)
    if numpy_file is not None:
        from tableenvs.policies.numpy_policy import read_header

        try:
            header = read_header(numpy_file)
        except (OSError, ValueError):
            return None  # make_policy says what is wrong with it
        return numpy_file, {"env": header["game"], "options": header["options"]}
    if not is_model_path(spec):
        return None
    record = Path(spec).with_name("results.json")
    try:
        config = json.loads(record.read_text())["config"]
        if not isinstance(config.get("env"), str):
            return None
        return record, config
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def trained_players(
    spec: Any, env_class: type[Any] | None = None, game: str | None = None, options: dict[str, Any] | None = None
) -> int | None:
    """The player count a model was trained with, from its training record (the env's default if the record
    names none and ``env_class`` is given); None without a record. ``game`` resolves ``"trained"`` (to the shipped
    file made for ``options``, the env's model options, when given)."""
    found = training_config(spec, game, options)
    if found is None:
        return None
    players = dict(found[1].get("options") or {}).get("num_players")
    if players is None and env_class is not None:
        default = inspect.signature(env_class.__init__).parameters.get("num_players")
        players = None if default is None else default.default
    return players


def check_training_record(spec: Any, raw_env: Any) -> None:
    """Refuse a model whose training record names another game or player count than ``raw_env``'s.

    :class:`~tableenvs.policies.sb3_policy.SB3Policy` checks the observation and action sizes, but Llama Party's and
    Rummikub's sizes do not depend on the player count; the record catches what the sizes cannot.
    """
    from tableenvs.policies.model_env import model_options

    name = raw_env.metadata["name"]
    options = model_options(raw_env)  # "trained" is the shipped file made for this env's setting
    found = training_config(spec, name, options)
    if found is None:
        return
    record, config = found
    if config["env"] != name:
        raise ValueError(f"{record} says this model was trained on {config['env']}, not {name}")
    players = trained_players(spec, type(raw_env), name, options)
    if players is not None and players != raw_env.num_players:
        raise ValueError(
            f"{record} says this model was trained with {players} players; this tournament has {raw_env.num_players}"
        )


def _numpy_file(spec: Any, game: str | None, options: dict[str, Any] | None = None) -> Path | None:
    """The numpy policy file a spec names (a ``.npz`` path; ``"trained"``: the shipped model of ``game``, the one
    made for ``options`` when given), or None."""
    from tableenvs.policies.numpy_policy import is_trained_spec, resolve_trained

    if isinstance(spec, (str, Path)) and str(spec).endswith(".npz"):
        return Path(spec)
    if is_trained_spec(spec) and (game is not None or spec != "trained"):
        try:
            return resolve_trained(spec, game or "", options)
        except ValueError:
            return None
    return None
