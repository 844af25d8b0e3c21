"""Rummikub's own training recipes: cross-entropy candidate scorers (``tableenvs train rummikub_v0 --recipe NAME``).

Where you are: the game's declaration for :mod:`tableenvs.training.scorer_recipes` (the method, game-independent),
named by its spec (``recipes``). Each start is "the most tiles and points" (1 for both, 0 for the rest: about the
heuristic's own opening); ``holding``'s is ``openings``' with 0 on the columns of the choice to hold
(:data:`tableenvs.rummikub.holding.FEATURES`): the play and the draw both score 0 and the first, the play, is taken
(the heuristic's play).
"""

from __future__ import annotations

from tableenvs.core.declarations import ScorerRecipe
from tableenvs.rummikub import holding, openings

#: Points one place of mean finishing rank is worth in the population recipe's fitness (docs/training.md, "The
#: population recipe").
RANK_POINTS = 30.0
#: Weights of the start, in :data:`tableenvs.rummikub.openings.FEATURES` order: the most tiles and points.
START = (1.0, 1.0) + (0.0,) * (len(openings.FEATURES) - 2)

OPENINGS = ScorerRecipe(
    "rummikub_openings_v1",
    START,
    games=2000,
    population=12,
    generations=10,
    description="a scorer of the candidate opening melds",
)
HOLDING = ScorerRecipe(
    "rummikub_holding_v1",
    START + (0.0,) * (len(holding.FEATURES) - len(START)),
    games=1000,
    population=12,
    generations=12,
    description="the opening scorer that also scores whether to play or hold (draw) once opened",
)
POPULATION = ScorerRecipe(
    "rummikub_holding_v1",
    HOLDING.start,
    games=120,
    population=8,
    generations=8,
    description="the holding scorer judged at a mix of tables: against heuristic seats, with one heuristic seat "
    "among its own, and in the company of the generation's mean weights",
    tables=("heuristic", "company", "elite"),  # tableenvs.training.scorer_recipes.TABLES
    rank_points=RANK_POINTS,
)
