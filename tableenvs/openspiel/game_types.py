"""The three games as OpenSpiel titles: their names, parameters, game facts and ``pyspiel.GameType``.

Where you are: the data half of the OpenSpiel bridge (:mod:`tableenvs.openspiel`). One :class:`Title` per bridged
game says which env it is, its parameters with their defaults and its player range; its ``facts`` function derives
from a started env the utility bounds, the longest game and whether it is zero-sum, which OpenSpiel is told in
``pyspiel.GameInfo`` and :func:`game_type`. Guide: ``docs/openspiel.md`` ("Game facts").
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import pyspiel

from tableenvs.core.table_env import TableEnv

DEFAULT_DEAL_SEEDS = 2**16
MAX_DEAL_SEEDS = 2**31 - 1  # OpenSpiel actions and parameters are C++ ints
REWARD_MODELS = ("terminal", "rewards")
#: The parameters every game has beside its env's options, with their defaults.
COMMON_PARAMS = {"deal_seeds": DEFAULT_DEAL_SEEDS, "reward_model": "terminal"}


def _pilipili_facts(env: TableEnv) -> dict[str, Any]:
    """Utility bounds, length bound and utility kind of a Pili Pili env (see docs/openspiel.md, "Game facts")."""
    from tableenvs.pilipili.missions import BASIC_MISSION
    from tableenvs.pilipili.rules import CHILI_LIMIT, effective_hand_size

    n = env.num_players
    missions = env.missions or [BASIC_MISSION]
    most_taken = 0  # chilis one seat can take in one round
    most_decisions = 0  # decisions in one round
    for m in missions:
        hand = effective_hand_size(m, n)
        tricks = hand + m.extra_draw
        listed = len(set(m.listed_numbers))
        extras = 2 * m.first_last_trick + (listed if m.listed_each else min(tricks, listed))
        own = tricks + extras  # |bid - tricks won| <= tricks, plus the mission's extra chilis
        most_taken = max(most_taken, own * (2 if m.designate else 1))
        per_seat = m.has_look + 1 + m.designate + min(m.pass_count, hand) + tricks
        decisions = n * per_seat + m.memorise + (3 * (tricks - 1) if m.swap else 0)
        most_decisions = max(most_decisions, decisions)
    if env.reward_mode == "penalty":
        # a seat's total reward is minus the chilis it holds at the end: at most CHILI_LIMIT - 1 before the last round
        low, high = -float(CHILI_LIMIT - 1 + most_taken), 0.0
    else:
        low, high = -1.0, 1.0
    return {"min": low, "max": high, "length": env.max_rounds * most_decisions, "zero_sum": False}


@lru_cache(maxsize=8)
def _llama_round_bounds(deck: tuple) -> tuple[int, int]:
    """Lowest and highest round score of one seat: over every letter count of a 7-card hand the deck allows, the
    4 lowest and the 4 highest goal cards' points (the 4 display goals are 4 distinct cards)."""
    from tableenvs.llama_party.cards import NUM_LETTERS
    from tableenvs.llama_party.rules import HAND_SIZE, NUM_SLOTS, goal_points

    available = [0] * NUM_LETTERS
    for card in deck:
        available[card.letter] += 1
    low = high = None
    for cut in itertools.combinations(range(HAND_SIZE + NUM_LETTERS - 1), NUM_LETTERS - 1):
        counts = [b - a - 1 for a, b in zip((-1, *cut), (*cut, HAND_SIZE + NUM_LETTERS - 1), strict=True)]
        if any(c > a for c, a in zip(counts, available, strict=True)):
            continue
        points = sorted(goal_points(card, counts) for card in deck)
        lo, hi = sum(points[:NUM_SLOTS]), sum(points[-NUM_SLOTS:])
        low = lo if low is None else min(low, lo)
        high = hi if high is None else max(high, hi)
    if low is None or high is None:
        raise ValueError("llama_party: the deck allows no 7-card hand's letter counts")
    return int(low), int(high)


def _llama_facts(env: TableEnv) -> dict[str, Any]:
    from tableenvs.llama_party.rules import NUM_ROUNDS, PASS_COUNTS

    if env.reward_mode == "score":
        low, high = _llama_round_bounds(tuple(env.deck))
        low, high = min(low, NUM_ROUNDS * low), max(high, NUM_ROUNDS * high)
    else:
        low, high = -1, 1
    length = NUM_ROUNDS * env.num_players * (1 + sum(PASS_COUNTS))
    return {"min": float(low), "max": float(high), "length": length, "zero_sum": False}


def _rummikub_facts(env: TableEnv) -> dict[str, Any]:
    from tableenvs.rummikub.rules import FULL_SET, rack_total

    game = env.game
    points = rack_total(FULL_SET)  # every rack total of one game, together, is at most this
    tiles = int(FULL_SET.sum())
    if game.strict_commit:
        # every turn ends with one commit or draw; a staged tile always reaches the table, which keeps it all game
        length = game.max_turns + tiles * game.games_per_episode
    else:
        # a failed commit takes the tiles back: a turn stages at most the rack (the others hold >= 1 tile each)
        length = game.max_turns * (1 + tiles - (env.num_players - 1))
    bound = float(points * game.games_per_episode)
    return {"min": -bound, "max": bound, "length": length, "zero_sum": True}


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


TITLES = {
    title.short_name: title
    for title in (
        Title(
            "tableenvs_pilipili_v0",
            "tableenvs Pili Pili",
            "pilipili_v0",
            {"num_players": 5, "missions": "standard", "expert": True, "reward": "penalty", "max_rounds": 100},
            (2, 8),
            _pilipili_facts,
        ),
        Title(
            "tableenvs_llama_party_v0",
            "tableenvs Llama Party",
            "llama_party_v0",
            {"num_players": 4, "deck": "standard", "reward": "score"},
            (2, 4),
            _llama_facts,
        ),
        Title(
            "tableenvs_rummikub_v0",
            "tableenvs Rummikub",
            "rummikub_v0",
            {
                "num_players": 4,
                "min_initial": 30,
                "draw_after_play": False,
                "strict_commit": True,
                "pool_exhausted": "lowest_rack",
                "games_per_episode": 1,
                "max_turns": 1000,
                "end_on_empty_pool": False,
            },
            (2, 4),
            _rummikub_facts,
        ),
    )
}
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
