"""Derived inputs that a numpy model file may ask for (its header's ``input_features``): a name, never code.

Where you are: beside :mod:`tableenvs.policies.model_file`. A model fitted on the observation plus derived values
(e.g. what a game's heuristic computes from it) names them in its header; :class:`NumpyPolicy` builds the named
function for the env it plays and appends its output to each observation before the forward pass. Every function
here reads only the seat's observation and action mask, so it adds nothing the seat cannot see. Add one: write its
class in the game's package (``cls(env)``, a ``size`` attribute, ``(observation, mask) -> float32[size]``) and name
it in the game's spec (``GameSpec.input_features``: name -> ``"module:Class"``, imported on use: no import edge from
here into a game).

A candidate-scoring model (its header's ``candidates``) reads, instead of the observation, a row of features per
candidate play and scores each with its network: the candidates are named the same way (a
class ``cls(env)`` with a ``size``, ``(observation, mask) -> (float32[K, size], int64[K] actions)``), and the model
plays the action of its best-scoring candidate. Candidates are named in the spec's ``candidates``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from tableenvs.core.registry import names, spec


class _DeclaredBySpecs(Mapping[str, tuple[str, str]]):
    """name -> (the game it reads, "module:class" of its factory), over every registered game's spec field ``field``
    (read on each use, so a game registered later is in it)."""

    def __init__(self, field: str):
        self._field = field

    def _table(self) -> dict[str, tuple[str, str]]:
        return {key: (game, target) for game in names() for key, target in getattr(spec(game), self._field).items()}

    def __getitem__(self, key: str) -> tuple[str, str]:
        return self._table()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())


#: name -> (the game it reads, "module:class" of its factory): the derived inputs the games' specs declare.
FEATURES: Mapping[str, tuple[str, str]] = _DeclaredBySpecs("input_features")

#: name -> (the game it reads, "module:class" of its factory): candidate plays and their features.
CANDIDATES: Mapping[str, tuple[str, str]] = _DeclaredBySpecs("candidates")


def _factory(name: str, table: Mapping[str, tuple[str, str]] = FEATURES, kind: str = "input_features") -> Any:
    if name not in table:
        raise ValueError(f"unknown {kind} {name!r}; known: {', '.join(table)}")
    return spec(table[name][0]).load(kind, name)


def feature_size(name: str) -> int:
    """How many values the named features append."""
    return int(_factory(name).size)


def input_features(name: str, env: Any) -> Any:
    """The named features for ``env`` (raw or wrapped): ``(observation, mask) -> float32[feature_size(name)]``."""
    return _built(name, env, FEATURES, "input_features")


def features_of_rows(features: Any, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """float32 ``(rows, size)``: ``features`` (built by :func:`input_features`) of every row of ``observations`` and
    ``masks``, in one call of its ``batch`` where it has one (the same floats as row by row), else row by row."""
    batch = getattr(features, "batch", None)
    if batch is not None and len(observations):
        return np.asarray(batch(observations, masks), np.float32)
    rows = [features(o, m) for o, m in zip(observations, masks, strict=True)]
    return np.asarray(rows, np.float32) if rows else np.zeros((0, int(features.size)), np.float32)


def candidate_size(name: str) -> int:
    """How many features the named candidates give each candidate."""
    return int(_factory(name, CANDIDATES, "candidates").size)


def candidate_choices(name: str, env: Any) -> Any:
    """The named candidates for ``env`` (raw or wrapped): ``(observation, mask) -> (float32[K, size], int64[K])``."""
    return _built(name, env, CANDIDATES, "candidates")


def _built(name: str, env: Any, table: Mapping[str, tuple[str, str]], kind: str) -> Any:
    """The factory named ``name`` in ``table`` built for ``env``; refused when unknown or made for another game."""
    factory = _factory(name, table, kind)  # refuses an unknown name
    game = table[name][0]
    raw = getattr(env, "unwrapped", env)
    if raw.metadata["name"] != game:
        raise ValueError(f"{kind} {name!r} read {game}, not {raw.metadata['name']}")
    return factory(raw)
