"""Pili Pili as an OpenSpiel title: its parameters and the facts OpenSpiel is told (docs/openspiel.md, "Game facts").

Where you are: the game's declaration for :mod:`tableenvs.openspiel`, named by its spec (``openspiel``).
"""

from __future__ import annotations

from typing import Any

from tableenvs.core.declarations import OpenSpielTitle


def facts(env: Any) -> dict[str, Any]:
    """Utility bounds, length bound and utility kind of a Pili Pili env."""
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


TITLE = OpenSpielTitle(
    "tableenvs Pili Pili",
    {"num_players": 5, "missions": "standard", "expert": True, "reward": "penalty", "max_rounds": 100},
    (2, 8),
    facts,
)
