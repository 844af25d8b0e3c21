"""A plain trick-taking game for tableenvs, written from docs/adding-a-game.md as a package of its own.

Where you are: an example outside the ``tableenvs`` package (``examples/trick_taking/``); put ``examples/`` on the
path (or copy the folder into your project) and register it::

    import tableenvs
    from trick_taking import SPEC

    tableenvs.register_game(SPEC)
    env = tableenvs.make("trick_taking_v0", num_players=4)

The layers: :mod:`trick_taking.rules` (the engine), :mod:`trick_taking.state` (its record reader),
:mod:`trick_taking.encoder`, :mod:`trick_taking.env` (the adapter and its world sampler) and
:mod:`trick_taking.heuristic`. The rules and both tables are on the page ``trick_taking.md`` beside this file
(:data:`DOCS`).
"""

from __future__ import annotations

from pathlib import Path

from tableenvs.core.registry import GameSpec

#: The game's docs page, for ``tableenvs.testing.check_game(SPEC.name, docs=DOCS)``.
DOCS = Path(__file__).with_name("trick_taking.md")

SPEC = GameSpec(
    "trick_taking_v0",
    "trick_taking.env",
    "trick_taking/TrickTaking-v0",
    heuristic="trick_taking.heuristic:FollowLow",
    player_counts=(3, 4, 5),
    option_sets=({}, {"hand_size": 3}),
    state=True,
    worlds=True,
    views=True,
    picture=True,
)
