"""Rummikub as an OpenSpiel title: its parameters and the facts OpenSpiel is told (docs/openspiel.md, "Game facts").

Where you are: the game's declaration for :mod:`tableenvs.openspiel`, named by its spec (``openspiel``).
"""

from __future__ import annotations

from typing import Any

from tableenvs.core.declarations import OpenSpielTitle


def facts(env: Any) -> dict[str, Any]:
    """Utility bounds, length bound and utility kind of a Rummikub env."""
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


TITLE = OpenSpielTitle(
    "tableenvs Rummikub",
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
    facts,
    zero_sum=True,
)
