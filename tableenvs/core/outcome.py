"""A finished game's result (:class:`Outcome`) and the competition ranks it and the ratings share.

Where you are: :mod:`tableenvs.core`. ``TableEnv.outcome()`` builds an :class:`Outcome` when a game ends;
:mod:`tableenvs.evaluation` and :mod:`tableenvs.evaluation.ratings` read it. Nothing here knows a game.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


def competition_ranks(keys: Sequence[tuple[Any, ...]]) -> list[int]:
    """Standard competition ranks ("1224") of ``keys``, smaller key = better; equal keys share a rank."""
    return [1 + sum(other < key for other in keys) for key in keys]


@dataclass(frozen=True)
class Outcome:
    """A finished game's result, as :meth:`TableEnv.outcome` reports it. Tuples are by seat.

    ``scores`` is the game's own final measure (Pili Pili: chilis held; Llama Party and Rummikub: points) or, for
    a game without one, each seat's total reward (``score_name == "reward"``). ``winners``: the seats the rules
    name (tie-breaks included) when the game ended by its rules and they name any; otherwise (a truncated game,
    or rules that name none) the seats with the best score. ``returns``: each seat's total reward this game.
    """

    scores: tuple[float, ...]
    score_name: str
    higher_is_better: bool
    winners: tuple[int, ...]
    returns: tuple[float, ...]
    truncated: bool

    def ranks(self) -> tuple[int, ...]:
        """Competition ranks (1 = best): winners rank 1, the others by score, equal scores sharing a rank."""
        keys = [(0 if s in self.winners else 1, -x if self.higher_is_better else x) for s, x in enumerate(self.scores)]
        return tuple(competition_ranks(keys))
