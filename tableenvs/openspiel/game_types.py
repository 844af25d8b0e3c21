"""The games as OpenSpiel titles: their names, parameters, game facts and ``pyspiel.GameType``.

Where you are: the data half of the OpenSpiel bridge (:mod:`tableenvs.openspiel`). One :class:`Title` per bridged
game (each game whose spec names an :class:`~tableenvs.core.declarations.OpenSpielTitle`) says which env it is, its
parameters with their defaults and its player range; its ``facts`` function derives
from a started env the utility bounds, the longest game and whether it is zero-sum, which OpenSpiel is told in
``pyspiel.GameInfo`` and :func:`game_type`. Guide: ``docs/openspiel.md`` ("Game facts").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyspiel

from tableenvs.core.declarations import OpenSpielTitle
from tableenvs.core.registry import names, spec
from tableenvs.core.table_env import TableEnv

DEFAULT_DEAL_SEEDS = 2**16
MAX_DEAL_SEEDS = 2**31 - 1  # OpenSpiel actions and parameters are C++ ints
REWARD_MODELS = ("terminal", "rewards")
#: The parameters every game has beside its env's options, with their defaults.
COMMON_PARAMS = {"deal_seeds": DEFAULT_DEAL_SEEDS, "reward_model": "terminal"}


@dataclass(frozen=True)
class Title:
    """One bridged game: its OpenSpiel names, its env, the env options it takes as parameters (with the defaults
    it registers), its player range and the function giving its facts from a started env."""

    short_name: str
    long_name: str
    env: str
    params: dict[str, Any]
    players: tuple[int, int]
    facts: Callable[[TableEnv], dict[str, Any]]
    zero_sum: bool = False  # the utility kind registered with the default parameters
    param_aliases: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # parameter -> (its value, the option's)


def _titles() -> dict[str, Title]:
    """The title of every registered game whose spec names one (``openspiel``), by OpenSpiel name."""
    titles = {}
    for name in names():
        game = spec(name)
        if game.openspiel:
            declared: OpenSpielTitle = game.load("openspiel")
            titles[f"tableenvs_{name}"] = Title(
                f"tableenvs_{name}",
                declared.long_name,
                name,
                dict(declared.params),
                declared.players,
                declared.facts,
                declared.zero_sum,
                dict(declared.param_aliases),
            )
    return titles


#: The bridged games by OpenSpiel name: every game whose spec names an OpenSpiel title (read on import).
TITLES = _titles()
ENV_TO_OPENSPIEL = {title.env: name for name, title in TITLES.items()}


def game_type(title: Title, reward_model: str, zero_sum: bool) -> pyspiel.GameType:
    """The ``pyspiel.GameType`` of ``title`` with this reward model and utility kind."""
    return pyspiel.GameType(
        short_name=title.short_name,
        long_name=title.long_name,
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM if zero_sum else pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=(
            pyspiel.GameType.RewardModel.TERMINAL
            if reward_model == "terminal"
            else pyspiel.GameType.RewardModel.REWARDS
        ),
        max_num_players=title.players[1],
        min_num_players=title.players[0],
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification={**title.params, **COMMON_PARAMS},
    )
