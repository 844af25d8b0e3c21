"""What a game declares for the layers above it, as plain data: its OpenSpiel title and its own training recipes.

Where you are: :mod:`tableenvs.core`, beside the registry. A :class:`~tableenvs.core.registry.GameSpec` names these
objects by ``"module:attr"`` strings (its ``openspiel`` and ``recipes`` fields), so the game's package defines them
and the upper layers (:mod:`tableenvs.openspiel`, :mod:`tableenvs.training.scorer_recipes`) read them through the
spec, never by the game's name. Nothing here imports OpenSpiel or a training library.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class OpenSpielTitle:
    """A game as an OpenSpiel title (the pyspiel game ``"tableenvs_<name>"``, docs/openspiel.md).

    ``params``: the env options it takes as parameters, with the defaults it registers; ``players``: the least and
    most players; ``facts(env)``: from a started env, the utility bounds ``"min"``/``"max"``, the longest game
    ``"length"`` and ``"zero_sum"``; ``zero_sum``: the utility kind registered with the title's default parameters;
    ``param_aliases``: parameter -> (the parameter's value, the option value it stands for), for an option whose
    value is no OpenSpiel parameter (a number, boolean or string), e.g. ``{"deck": ("standard", None)}``.
    """

    long_name: str
    params: Mapping[str, Any]
    players: tuple[int, int]
    facts: Callable[[Any], dict[str, Any]]
    zero_sum: bool = False
    param_aliases: Mapping[str, tuple[Any, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class ScorerRecipe:
    """A game's cross-entropy recipe for a candidate scorer (``tableenvs train GAME --recipe NAME``).

    ``candidates``: the name of the game's candidates the model scores (its spec's ``candidates``); ``start``: the
    start of the weights (one per candidate feature); ``games``: the games that score one weight vector;
    ``population``: the weight vectors of a generation; ``generations``: how many, by default; ``description``: a
    few words for ``tableenvs train --help``. ``tables``: the tables a weight vector's fitness is the mean of
    (``games`` games each; :data:`tableenvs.training.scorer_recipes.TABLES`): ``"heuristic"`` (its seats against
    heuristic seats), ``"company"`` (one heuristic seat among its own seats) and ``"elite"`` (one seat among the
    generation's mean weights); ``rank_points``: the points one place of mean finishing rank is worth in a table's
    fitness (0: the score alone).
    """

    candidates: str
    start: tuple[float, ...]
    games: int
    population: int
    generations: int
    description: str = ""
    tables: tuple[str, ...] = ("heuristic",)
    rank_points: float = 0.0
