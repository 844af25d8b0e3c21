"""Built-in Rummikub agents: the greedy ``HeuristicPolicy`` (``make_policy("heuristic", env)``).

Where you are: agents of ``tableenvs/rummikub``. A policy reads only the observation vector and the action mask
(decoded through ``encoder.LAYOUT``); the env is used only for its configuration (``min_initial``). The random
agent over the masks is the shared ``tableenvs.policies.RandomPolicy`` (``make_policy("random", env)``).

Greedy rule, once per turn: ask the solver for the best play from the own rack onto the table it sees, the most
tiles (``objective="tiles"``) once opened, the most points (``objective="value"``, ``opening=True``) for the
opening meld; stage its tiles one by one (lowest type id first, every prefix is legal because the play is), then
commit. Draw (or pass) when there is no play. Deterministic given the observation; the plan is cached between the
steps of one turn.

``HeuristicPolicy.estimate`` values a position for the search policy's cut-off rollouts (``tableenvs.search``): the
expected rest-of-game reward from the racks' points and tile counts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .encoder import COMMIT, DRAW, LAYOUT
from .solver import solve
from .tiles import TILE_TYPES


class HeuristicPolicy:
    """Greedy solver player; see the module docstring."""

    name = "heuristic"

    def __init__(self, env: Any):
        self.min_initial = env.unwrapped.game.min_initial
        self._key: bytes | None = None
        self._plan: np.ndarray | None = None

    def plan(self, rack: np.ndarray, table: np.ndarray, staged: np.ndarray, opened: bool) -> np.ndarray | None:
        """Count vector of the play to make this turn (containing ``staged``), or ``None`` to draw."""
        key = rack.tobytes() + table.tobytes() + bytes([opened])
        if key == self._key and (self._plan is None or np.all(self._plan >= staged)):
            if self._plan is not None or not staged.any():
                return self._plan  # same position, still on the cached plan (or still no play)
        solution = solve(
            table,
            rack,
            objective="tiles" if opened else "value",
            opening=not opened,
            min_initial=self.min_initial,
            forced=staged if staged.any() else None,
        )
        self._key = key
        self._plan = None if solution is None else np.asarray(solution.played)
        return self._plan

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        del rng  # deterministic
        rack = observation[LAYOUT.RACK : LAYOUT.RACK + TILE_TYPES].astype(np.int64)
        staged = observation[LAYOUT.STAGED : LAYOUT.STAGED + TILE_TYPES].astype(np.int64)
        table = observation[LAYOUT.TABLE : LAYOUT.TABLE + TILE_TYPES].astype(np.int64)
        opened = bool(observation[LAYOUT.OPENED])
        plan = self.plan(rack, table, staged, opened)
        if plan is not None:
            missing = np.flatnonzero((plan > staged) & (action_mask[:TILE_TYPES] > 0))
            if missing.size:
                return int(missing[0])
            if action_mask[COMMIT] and np.array_equal(plan, staged):
                return COMMIT
        if action_mask[DRAW]:
            return DRAW
        if action_mask[COMMIT]:
            return COMMIT
        return int(np.flatnonzero(action_mask)[0])

    @staticmethod
    def estimate(world: Any, agent: str) -> float:
        """``agent``'s expected reward, in points, for the rest of the game in ``world`` (a raw env, e.g. a sampled
        world that a search rollout stopped in before the game ended; :mod:`tableenvs.search`).

        A rough model of the scoring: the player who empties its rack gets every other rack's points (a joker 30)
        and each other player loses its own; each seat is taken to go out first with a probability proportional
        to 1 / (tiles on its rack). So seat ``s`` expects ``p_s * (sum of the other racks' points) - (1 - p_s) *
        (its own rack's points)``; with 2 players the two estimates sum to 0, as the rewards do. Later games of a
        multi-game episode count 0 (the seats are symmetric there)."""
        game = world.unwrapped.game
        seat = world.agent_name_mapping[agent]
        points = np.asarray(game.rack_totals(), np.float64)
        inverse = 1.0 / np.maximum(game.racks.sum(axis=1), 1)
        chance = inverse[seat] / inverse.sum()
        return float(chance * (points.sum() - points[seat]) - (1.0 - chance) * points[seat])
