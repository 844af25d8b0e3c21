"""The games tableenvs ships: one :class:`~tableenvs.core.registry.GameSpec` each, registered on ``import tableenvs``.

Where you are: the list a new built-in game is added to (a game from outside the package calls
:func:`tableenvs.register_game` instead). Each spec names its module as a string, so no game is imported until it
is made; the capabilities after ``option_sets`` are what ``tableenvs.testing.check_game`` checks.
"""

from __future__ import annotations

from tableenvs.core.registry import GameSpec, register_game

for _game in (
    # name, module, PettingZoo/Gymnasium id, heuristic policy, player counts, option sets for the conformance suite,
    # then the capabilities the game declares (GameSpec's fields after option_sets), then what the layers above read:
    # the search's default setting (docs/agents.md "Search against the heuristic": the setting that beat the
    # heuristic), the derived model inputs and candidates, the search clone's inputs and the game's own recipes
    GameSpec(
        "pilipili_v0",
        "tableenvs.pilipili.env",
        "tableenvs/PiliPili-v0",
        "tableenvs.pilipili.agents:HeuristicPolicy",
        player_counts=tuple(range(2, 9)),
        option_sets=({}, {"missions": "none"}, {"expert": False, "reward": "win"}),
        builtin=True,
        state=True,
        worlds=True,
        views=True,
        picture=True,
        openspiel="tableenvs.pilipili.openspiel_title:TITLE",
        search_default="search:sims=60",
        batched="tableenvs.pilipili.batched:make_batched",
        batched_heuristic="tableenvs.pilipili.batched_heuristic:batched_heuristic",
    ),
    GameSpec(
        "llama_party_v0",
        "tableenvs.llama_party.env",
        "tableenvs/LlamaParty-v0",
        "tableenvs.llama_party.agents:HeuristicPolicy",
        player_counts=(2, 3, 4),
        option_sets=({}, {"reward": "win"}),
        builtin=True,
        state=True,
        worlds=True,
        views=True,
        picture=True,
        openspiel="tableenvs.llama_party.openspiel_title:TITLE",
        search_default="search:sims=50:root=paired:z=2",
        input_features={"llama_party_card_values_v1": "tableenvs.llama_party.features:CardValues"},
        clone_features="llama_party_card_values_v1",
        batched="tableenvs.llama_party.batched:batched_game",
        batched_heuristic="tableenvs.llama_party.batched_heuristic:batched_heuristic",
    ),
    GameSpec(
        "rummikub_v0",
        "tableenvs.rummikub.env",
        "tableenvs/Rummikub-v0",
        "tableenvs.rummikub.agents:HeuristicPolicy",
        player_counts=(2, 3, 4),
        option_sets=({}, {"strict_commit": False, "draw_after_play": True, "games_per_episode": 2}),
        builtin=True,
        state=True,
        worlds=True,
        views=True,
        picture=True,
        openspiel="tableenvs.rummikub.openspiel_title:TITLE",
        search_default="search:mode=turns:sims=40",
        input_features={"rummikub_turn_plans_v1": "tableenvs.rummikub.features:TurnPlans"},
        candidates={
            "rummikub_openings_v1": "tableenvs.rummikub.openings:OpeningChoices",
            "rummikub_holding_v1": "tableenvs.rummikub.holding:HoldingChoices",
        },
        clone_features="rummikub_turn_plans_v1",
        recipes={
            "openings": "tableenvs.rummikub.recipes:OPENINGS",
            "holding": "tableenvs.rummikub.recipes:HOLDING",
            "population": "tableenvs.rummikub.recipes:POPULATION",
        },
        batched="tableenvs.rummikub.batched:batched_game",
        batched_heuristic="tableenvs.rummikub.batched_heuristic:batched_heuristic",
        batched_candidates={
            "rummikub_openings_v1": "tableenvs.rummikub.batched_holding:batched_openings",
            "rummikub_holding_v1": "tableenvs.rummikub.batched_holding:batched_holding",
        },
    ),
):
    register_game(_game)
