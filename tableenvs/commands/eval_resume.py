"""``tableenvs eval --resume``: what a tournament saves to be continued (``tournament.json``), and whether a stopped
one may be continued with the flags given.

Where you are: a helper of :mod:`tableenvs.commands.eval`. :func:`tournament` is what ``tournament.json`` holds (the
arguments that decide the games, the tableenvs version, a digest of every saved model); :func:`saved_tournament` reads
it back for ``--resume`` and refuses, in one ``ValueError`` line, a directory with no stopped tournament, flags that
differ from the saved ones, another tableenvs version or a model changed since (the games would not be the same). It
reads files (the journal, :mod:`tableenvs.evaluation.journal`, and the models) and prints notes on stderr; it writes
nothing.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from tableenvs import __version__

#: The eval flags that decide the games and the files written (argparse dest: default): saved in tournament.json,
#: compared by --resume (``engine``: a resumed tournament plays where it started, so its notes are the same).
EVAL_DEFAULTS: dict[str, Any] = {
    "env": None,
    "policies": None,
    "players": None,
    "opponents": None,
    "games": 1000,
    "duplicate": True,
    "seed": 0,
    "option": {},
    "sample": False,
    "engine": "auto",
}


def tournament(arguments: dict) -> dict:
    """What tournament.json holds: the arguments, the tableenvs version and a digest of every saved model."""
    import hashlib

    from tableenvs.paths import is_model_path
    from tableenvs.policies.numpy_policy import is_trained_spec, resolve_trained

    models = {}
    setting = None
    for spec in list(arguments["policies"]) + list(arguments["opponents"] or []):
        file = spec
        if is_trained_spec(spec):  # the shipped model (or trained:path=FILE) is a file like any other
            if setting is None:
                setting = _model_options(arguments)
            try:  # the shipped file made for this tournament's setting (player count, options)
                file = str(resolve_trained(spec, arguments["env"], setting or None))
            except ValueError:
                continue
        if (is_model_path(file) or is_trained_spec(spec)) and os.path.isfile(file):
            with open(file, "rb") as handle:
                models[spec] = hashlib.sha256(handle.read()).hexdigest()
    return {"version": __version__, "arguments": arguments, "models": models}


def _model_options(arguments: dict) -> dict:
    """The model options (:func:`tableenvs.policies.model_env.model_options`) of the env the tournament plays (its
    game, ``--players`` and ``--option``s); empty when they make no env (the tournament itself then says why)."""
    from tableenvs.core.registry import make_raw
    from tableenvs.policies.model_env import model_options

    options = dict(arguments["option"] or {})
    if arguments["players"] is not None:
        options["num_players"] = arguments["players"]
    try:
        raw = make_raw(arguments["env"], **options)
    except (ValueError, TypeError):
        return {}
    try:
        return model_options(raw)
    finally:
        raw.close()


def _flag(dest: str, value) -> str:
    """One saved argument as the flag that gives it, e.g. ``--games 600``, ``--no-duplicate``."""
    if dest == "env":
        return f"ENV {value}"
    if dest == "duplicate":
        return "--duplicate" if value else "--no-duplicate"
    if dest == "sample":
        return "--sample" if value else "no --sample"
    if dest in ("policies", "opponents"):
        return f"--{dest} {'-' if value is None else ','.join(value)}"
    if dest == "option":
        return " ".join(f"--option {key}={value[key]}" for key in value) if value else "no --option"
    return f"--{dest} {'-' if value is None else value}"


def saved_tournament(out, given: dict) -> tuple[dict, list]:
    """``(arguments, finished games)`` of the tournament stopped in ``out``; ``ValueError`` if there is none, if
    ``given`` contradicts it, or if the code or a model changed since (the games would not be the same)."""
    import json

    from tableenvs.evaluation.journal import LOG_FILE, TOURNAMENT_FILE, read_log, read_tournament

    where = f"--resume {str(out)!r}"
    if not (out / TOURNAMENT_FILE).exists():
        results = out / "results.json"
        try:
            finished = results.exists() and "partial" not in json.loads(results.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            finished = False
        if finished:
            raise ValueError(f"{where}: nothing to resume, the tournament there finished (results.json)")
        raise ValueError(
            f"{where}: no stopped tournament there (no {TOURNAMENT_FILE}; a tournament writes it with its first "
            "finished game)"
        )
    saved = read_tournament(out)
    arguments = {**EVAL_DEFAULTS, **saved["arguments"]}
    texts = [arguments["env"], *(arguments["policies"] or []), *(arguments["opponents"] or [])]
    if (
        set(arguments) != set(EVAL_DEFAULTS)
        or not isinstance(arguments["policies"], list)
        or not all(isinstance(text, str) for text in texts)
        or not isinstance(arguments["option"], dict)
    ):
        raise ValueError(f"{where}: {TOURNAMENT_FILE} does not hold the arguments of a tournament")
    differ = [
        f"{_flag(dest, value)} (saved: {_flag(dest, arguments[dest])})"
        for dest, value in given.items()
        if value != arguments[dest]
    ]
    if differ:
        raise ValueError(
            f"{where}: the arguments differ from the stopped tournament's: {'; '.join(differ)}. Resume with the same "
            f"ones, or none (they are read from {TOURNAMENT_FILE}); to play another tournament use another --out"
        )
    if saved.get("version") != __version__:
        raise ValueError(
            f"{where}: the tournament was started by tableenvs {saved.get('version')} and this is {__version__}: "
            "its games could differ; play it anew"
        )
    now = tournament(arguments)["models"]
    for spec, digest in (saved.get("models") or {}).items():
        if now.get(spec) != digest:
            change = "is missing" if spec not in now else "has changed"
            raise ValueError(f"{where}: the model {spec!r} {change} since the tournament started: play it anew")
    try:
        finished = read_log(out)
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None
    if not finished:
        print(f"tableenvs: note: {out / LOG_FILE} holds no finished game; playing every game", file=sys.stderr)
    return arguments, finished


def note_unfinished(out) -> None:
    """Say so when a new tournament is about to replace a stopped one in ``out`` (``--resume`` would continue it)."""
    from tableenvs.evaluation.journal import TOURNAMENT_FILE

    if (out / TOURNAMENT_FILE).exists():
        print(
            f"tableenvs: note: {out} holds a stopped tournament; this new one replaces it with its first finished "
            f"game (tableenvs eval --resume {out} would continue it instead)",
            file=sys.stderr,
        )
