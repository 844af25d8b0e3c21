"""Built-in Rummikub agents: the greedy ``HeuristicPolicy`` (``make_policy("heuristic", env)``).

Where you are: agents of ``tableenvs/rummikub``. A policy reads only the observation vector and the action mask
(decoded through ``encoder.LAYOUT``); the env is used only for its configuration (``min_initial``). The random
agent over the masks is the shared ``tableenvs.policies.RandomPolicy`` (``make_policy("random", env)``).

Greedy rule, once per turn: ask the solver for the best play from the own rack onto the table it sees, the most
tiles (``objective="tiles"``) once opened, the most points (``objective="value"``, ``opening=True``) for the
opening meld; stage its tiles one by one (lowest type id first, every prefix is legal because the play is), then
commit. Draw (or pass) when there is no play. Deterministic given the observation; the plan is cached between the
steps of one turn.

``HeuristicPolicy.estimate`` values a position for the search policy's cut-off rollouts (``tableenvs.policies.search``):
the expected rest-of-game reward from the racks' points and tile counts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .encoder import COMMIT, DRAW, LAYOUT
from .solver import solve
from .tiles import JOKER, TILE_TYPES


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
        self._key, self._plan = key, self.make_plan(rack, table, staged, opened)
        return self._plan

    def make_plan(self, rack: np.ndarray, table: np.ndarray, staged: np.ndarray, opened: bool) -> np.ndarray | None:
        """:meth:`plan` worked out anew (its cache missed): the solver's play holding ``staged``, or ``None``. A
        variant of the heuristic that chooses its play otherwise overrides this and keeps :meth:`plan`'s cache."""
        solution = solve(
            table,
            rack,
            objective="tiles" if opened else "value",
            opening=not opened,
            min_initial=self.min_initial,
            forced=staged if staged.any() else None,
        )
        return None if solution is None else np.asarray(solution.played)

    @staticmethod
    def read(observation: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
        """What the heuristic uses from a seat's observation: its rack (staged tiles included), its staged tiles and
        the table as of the last commit (int64 count vectors), and whether it has opened."""
        rack = observation[LAYOUT.RACK : LAYOUT.RACK + TILE_TYPES].astype(np.int64)
        staged = observation[LAYOUT.STAGED : LAYOUT.STAGED + TILE_TYPES].astype(np.int64)
        table = observation[LAYOUT.TABLE : LAYOUT.TABLE + TILE_TYPES].astype(np.int64)
        return rack, staged, table, bool(observation[LAYOUT.OPENED])

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        del rng  # deterministic
        rack, staged, table, opened = self.read(observation)
        return self._choose(rack, table, staged, opened, action_mask)

    def act_in_world(self, world: Any, rng: np.random.Generator) -> int:
        """:meth:`act` for the seat to act in ``world`` (a raw env, e.g. a sampled world), read from its rules
        state instead of its observation: the same choice, without encoding and decoding the observation."""
        del rng  # deterministic
        game = world.game
        seat = game.to_act
        return self._choose(game.racks[seat], game.table, game.staged, game.opened[seat], world._current_mask())

    def _choose(
        self, rack: np.ndarray, table: np.ndarray, staged: np.ndarray, opened: bool, action_mask: np.ndarray
    ) -> int:
        plan = self.plan(rack, table, staged, opened)
        if plan is not None:
            action = next_action(plan, staged, action_mask)
            if action is not None:
                return action
        if action_mask[DRAW]:
            return DRAW
        if action_mask[COMMIT]:
            return COMMIT
        return int(np.flatnonzero(action_mask)[0])

    def propose_turns(self, observation: np.ndarray, action_mask: np.ndarray) -> list[tuple[str, list[int]]]:
        """Whole turns for the search over turns (``search:mode=turns``, :mod:`tableenvs.policies.search`), at the start
        of a turn (nothing staged), read from the observation: ``(name, action ids)`` pairs, each a complete legal turn
        (its tiles staged lowest type first, then commit; or draw). The heuristic's own turn comes first; then the
        play of the most points, the most tiles keeping the jokers on the rack, and a draw (also a pass when the
        pool is empty), without repeats. Before the opening meld: the opening of the most points (the heuristic's),
        the one of the most tiles, one without jokers, and a draw."""
        rack, staged, table, opened = self.read(observation)
        if staged.any():
            raise ValueError("propose_turns: a turn is under way (tiles are staged)")
        if not opened and not action_mask[:TILE_TYPES].any():
            plays = []  # no opening meld exists (the mask says so without a solve)
        else:
            plays = self.candidate_plays(rack, table, opened)
        turns: list[tuple[str, list[int]]] = []
        seen: set[bytes] = set()
        for name, played in plays:
            if played is None or played.tobytes() in seen:
                continue
            seen.add(played.tobytes())
            turns.append((name, [int(t) for t in np.flatnonzero(played) for _ in range(played[t])] + [COMMIT]))
        if action_mask[DRAW]:
            turns.append(("draw", [DRAW]))
        return turns

    def candidate_plays(self, rack: np.ndarray, table: np.ndarray, opened: bool) -> list[tuple[str, np.ndarray | None]]:
        """The three plays of :meth:`propose_turns`, in its order, as ``(name, count vector or None)``: the
        heuristic's (the most tiles once opened, the opening of the most points before), the other objective's, and
        the heuristic's objective with the jokers kept on the rack; ``None`` where no such play exists. ``rack``
        counts every tile of the seat's rack (staged ones included, as the observation does)."""
        no_jokers = rack.copy()
        no_jokers[JOKER] = 0
        asks = [
            ("heuristic", rack, "tiles" if opened else "value"),
            ("most points" if opened else "most tiles", rack, "value" if opened else "tiles"),
            ("keep jokers", no_jokers, "tiles" if opened else "value"),
        ]
        plays: list[tuple[str, np.ndarray | None]] = []
        for name, tiles, objective in asks:
            solution = None
            if tiles.any():
                solution = solve(table, tiles, objective=objective, opening=not opened, min_initial=self.min_initial)
            plays.append((name, None if solution is None else np.asarray(solution.played)))
        return plays

    @staticmethod
    def turn_under_way(observation: np.ndarray) -> bool:
        """Whether the observation shows tiles staged (a turn under way): the search over turns then continues it."""
        return bool(observation[LAYOUT.STAGED : LAYOUT.STAGED + TILE_TYPES].any())

    @staticmethod
    def fitted_estimate(world: Any, agent: str) -> float:
        """``agent``'s expected reward for the rest of the game in ``world``: :data:`FITTED_WEIGHTS` times
        :func:`estimate_features` (a least-squares fit to heuristic self-play, :func:`fit_estimate`; its numbers in
        docs/agents.md). The search over turns (``search:mode=turns``) values its cut-off rollouts with it."""
        game = world.unwrapped.game
        return float(estimate_features(game, world.agent_name_mapping[agent]) @ FITTED_WEIGHTS)

    @staticmethod
    def estimate(world: Any, agent: str) -> float:
        """``agent``'s expected reward, in points, for the rest of the game in ``world`` (a raw env, e.g. a sampled
        world that a search rollout stopped in before the game ended; :mod:`tableenvs.policies.search`).

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


def next_action(play: np.ndarray, staged: np.ndarray, action_mask: np.ndarray) -> int | None:
    """The next action towards ``play`` (a count vector holding every ``staged`` tile) from where the turn stands: the
    lowest tile type the play holds more of than is staged and the mask allows, else commit once exactly the play is
    staged and the mask allows it; ``None`` when neither."""
    missing = np.flatnonzero((play > staged) & (action_mask[:TILE_TYPES] > 0))
    if missing.size:
        return int(missing[0])
    if action_mask[COMMIT] and np.array_equal(play, staged):
        return COMMIT
    return None


#: The features of :func:`estimate_features`, in order (the names of :data:`FITTED_WEIGHTS`' entries).
FEATURES = (
    "rough",  # HeuristicPolicy.estimate: p_s * others' points - (1 - p_s) * own points, p_s ~ 1 / tiles
    "own_points",
    "others_points",
    "own_tiles",
    "fewest_other_tiles",
    "pool",
    "constant",
)


def estimate_features(game: Any, seat: int) -> np.ndarray:
    """The features (:data:`FEATURES`) of ``seat``'s position in the rules state ``game`` (a :class:`Rummikub`)."""
    points = np.asarray(game.rack_totals(), np.float64)
    tiles = game.racks.sum(axis=1).astype(np.float64)
    inverse = 1.0 / np.maximum(tiles, 1)
    chance = inverse[seat] / inverse.sum()
    others = [s for s in range(game.num_players) if s != seat]
    return np.array(
        [
            chance * (points.sum() - points[seat]) - (1.0 - chance) * points[seat],
            points[seat],
            points[others].sum(),
            tiles[seat],
            tiles[others].min(),
            float(game.pool_size),
            1.0,
        ]
    )


def fit_estimate(games: int = 400, num_players: int = 2, seed: int = 0, max_turns: int = 200) -> dict:
    """Least-squares weights of :data:`FEATURES` for a seat's final reward, from heuristic self-play: ``games``
    games, every seat at the start of every turn (nothing staged) is one sample, its target the reward the seat
    gets from there to the end of the game (0 for a game cut off by ``max_turns``). Returns the weights, the number
    of samples, R^2 and the R^2 of the rough estimate alone (its weight fitted, no others), for the docs."""
    from tableenvs.rummikub.env import raw_env

    env = raw_env(num_players=num_players, max_turns=max_turns)
    heuristic = HeuristicPolicy(env)
    rows, targets = [], []
    rng = np.random.default_rng(seed)
    for game_index in range(games):
        env.reset(seed=seed * 100_003 + game_index)
        samples: list[tuple[int, np.ndarray]] = []
        totals = np.zeros(num_players)
        while not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
            game = env.game
            if not game.staged.any():
                samples.extend((s, estimate_features(game, s)) for s in range(num_players))
            env.step(heuristic.act_in_world(env, rng))
            totals += [env.rewards[a] for a in env.possible_agents]
        for seat, features in samples:
            rows.append(features)
            targets.append(totals[seat])
    x, y = np.array(rows), np.array(targets)
    weights = np.linalg.lstsq(x, y, rcond=None)[0]
    rough = x[:, :1]
    rough_weight = np.linalg.lstsq(rough, y, rcond=None)[0]

    def r2(prediction: np.ndarray) -> float:
        return float(1.0 - np.sum((y - prediction) ** 2) / np.sum((y - y.mean()) ** 2))

    return {
        "weights": dict(zip(FEATURES, weights.round(4).tolist(), strict=True)),
        "samples": len(y),
        "games": games,
        "r2": r2(x @ weights),
        "r2_rough": r2(rough @ rough_weight),
    }


#: Weights of :data:`FEATURES` for :meth:`HeuristicPolicy.fitted_estimate`: ``fit_estimate(games=400, seed=1)``
#: (2 players, ``max_turns=200``); the fit's numbers are in docs/agents.md.
FITTED_WEIGHTS = np.array([-0.0599, -0.1157, 0.1157, -0.7531, 0.7531, 0.0, 0.0])
