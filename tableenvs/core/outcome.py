"""A finished game's result (:class:`Outcome`), why it ended (:class:`EndReason`), and the competition ranks.

Where you are: :mod:`tableenvs.core`. ``TableEnv.outcome()`` builds an :class:`Outcome` when a game ends;
:mod:`tableenvs.evaluation` and :mod:`tableenvs.evaluation.ratings` read it, ``tableenvs play`` prints it. Nothing
here knows a game: each game declares its own end reasons as data (its adapter's ``end_reasons``), as python-chess
declares ``Termination``; a game with one way to end and one way to be cut short keeps the two defaults below.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


def competition_ranks(keys: Sequence[tuple[Any, ...]]) -> list[int]:
    """Standard competition ranks ("1224") of ``keys``, smaller key = better; equal keys share a rank."""
    return [1 + sum(other < key for other in keys) for key in keys]


@dataclass(frozen=True)
class EndReason:
    """Why a game ended: ``key``, short and stable (``"went_out"``), ``text`` for people (``"a player emptied its
    rack"``; also ``str()``), and ``truncated``: True when the game was cut short (``max_turns``) rather than ended
    by its rules."""

    key: str
    text: str
    truncated: bool = False

    def __str__(self) -> str:
        return self.text


#: The end reasons of a game that declares none: its rules ended it, or it was cut short.
RULES_ENDED = EndReason("rules", "the game ended by its rules")
CUT_SHORT = EndReason("truncated", "the game was cut short", truncated=True)


@dataclass(frozen=True)
class Outcome:
    """A finished game's result, as :meth:`TableEnv.outcome` reports it. Tuples are by seat.

    ``scores`` is the game's own final measure (Pili Pili: chilis held; Llama Party and Rummikub: points) or, for
    a game without one, each seat's total reward (``score_name == "reward"``). ``winners``: the seats the rules
    name (tie-breaks included) when the game ended by its rules and they name any; otherwise (a truncated game,
    or rules that name none) the seats with the best score. ``returns``: each seat's total reward this game.
    ``reason``: why the game ended, one of the game's declared end reasons (``reason.truncated == truncated``).
    """

    scores: tuple[float, ...]
    score_name: str
    higher_is_better: bool
    winners: tuple[int, ...]
    returns: tuple[float, ...]
    truncated: bool
    reason: EndReason

    def __str__(self) -> str:
        """One line: who won, the scores, why the game ended (seats by number)."""
        winners = ", ".join(f"seat {s}" for s in self.winners)
        order = "higher" if self.higher_is_better else "lower"
        scores = ", ".join(f"{x:g}" for x in self.scores)
        return f"won by {winners}; {self.score_name} ({order} is better): {scores}; ended: {self.reason}"

    def ranks(self) -> tuple[int, ...]:
        """Competition ranks (1 = best): winners rank 1, the others by score, equal scores sharing a rank."""
        keys = [(0 if s in self.winners else 1, -x if self.higher_is_better else x) for s, x in enumerate(self.scores)]
        return tuple(competition_ranks(keys))
