"""The opening melds a Rummikub seat may choose among, and what a network reads of each.

Where you are: a helper of ``tableenvs/rummikub`` for models that choose their opening meld (a candidate-scoring
model file naming ``rummikub_openings_v1``, :mod:`tableenvs.policies.input_features`) and for the benchmark of
hand-made turn rules (``benchmarks/rummikub_turn_rules.py``). It reads only a seat's observation and action mask, so
it adds no hidden information.

Why the opening: at 4 players the heuristic's play once opened (the most tiles) is hard to improve on, but opening
with a smaller meld than the heuristic's (the most points) gains, mostly late in the game (docs/lab/training.md,
"The openings recipe").

**Candidates** (:func:`smaller_openings`): the solver's two openings (the most points, the heuristic's; the most
tiles) and every opening inside either: per meld, leave it out, keep it whole, or keep a smaller meld inside it (a
run's shorter runs of 3 tiles or more, a group of four's groups of three), whenever the melds kept make
``min_initial`` points (a joker counts the number it stands for). Each is a legal opening (its melds are melds of own
tiles worth enough). Duplicates are dropped, the first kept; the order is fixed (the solver's most-points opening's
choices first), so a model's first best candidate is always the same.

**What a network reads of a candidate** (:data:`FEATURES`, float32): the tiles it plays / 14 and its points / 100; of
the rack it leaves, the same-colour neighbour pairs (n, n+1), the same-colour pairs (n, n+2) and the pairs of colours
holding one number (each counted once whatever the copies), and the jokers kept; and, times ``late`` = max(0, 42 -
pool) / 42 (0 until fewer than 42 tiles are in the pool), the tiles / 14, the points / 100 and the rack's shape score
/ 10 (2 per neighbour pair, 1 per (n, n+2) pair, 1.5 per colour pair, 3 per joker).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from .agents import HeuristicPolicy, next_action
from .encoder import LAYOUT
from .melds import Meld
from .solver import solve
from .tiles import JOKER, NUM_TILES, NUMBERS, TILE_TYPES, number_of

#: The features of one candidate, in order (the module docstring).
FEATURES = (
    "tiles",
    "points",
    "neighbour_pairs",
    "gap_pairs",
    "colour_pairs",
    "jokers_kept",
    "late_tiles",
    "late_points",
    "late_shape",
)
#: Pool size (tiles) below which an opening counts as late (``late`` > 0).
LATE_POOL = 42


def meld_options(meld: Meld) -> list[tuple[np.ndarray, int]]:
    """``(count vector, opening points)`` of each meld inside ``meld``: itself first, then a run's shorter runs (3
    tiles or more), a group of four's groups of three."""

    def option(positions: Any) -> tuple[np.ndarray, int]:
        counts = np.zeros(TILE_TYPES, np.int64)
        for i in positions:
            counts[meld.tiles[i]] += 1
        return counts, sum(number_of(meld.stands_for[i]) for i in positions)

    size = len(meld.tiles)
    options = [option(range(size))]
    if meld.kind == "run":
        options += [option(range(a, b)) for a in range(size) for b in range(a + 3, size + 1) if b - a < size]
    elif size == 4:
        options += [option([i for i in range(4) if i != left_out]) for left_out in range(4)]
    return options


def smaller_openings(table: np.ndarray, rack: np.ndarray, min_initial: int) -> list[tuple[np.ndarray, int]]:
    """``(play, points)`` of every candidate opening (module docstring), duplicates dropped; empty when the rack has
    no opening. ``table`` and ``rack`` are int64 count vectors (a seat's rack, staged tiles included)."""
    openings: list[tuple[np.ndarray, int]] = []
    seen: set[bytes] = set()
    for objective in ("value", "tiles"):
        solution = solve(table, rack, objective=objective, opening=True, min_initial=min_initial)
        if solution is None:
            continue
        per_meld = [[(np.zeros(TILE_TYPES, np.int64), 0), *meld_options(m)] for m in solution.opening_melds]
        for choice in itertools.product(*per_meld):
            points = sum(part[1] for part in choice)
            if points < min_initial:
                continue
            play = sum((part[0] for part in choice), np.zeros(TILE_TYPES, np.int64))
            if play.tobytes() not in seen:
                seen.add(play.tobytes())
                openings.append((play, points))
    return openings


def shape_parts(rack: np.ndarray) -> tuple[float, float, float, float]:
    """A rack's neighbour pairs, (n, n+2) pairs, colour pairs and jokers (module docstring)."""
    held = np.minimum(rack[:JOKER], 1).reshape(-1, NUMBERS).astype(np.float64)
    colours = held.sum(axis=0)
    return (
        float((held[:, 1:] * held[:, :-1]).sum()),
        float((held[:, 2:] * held[:, :-2]).sum()),
        float((colours * (colours - 1) / 2).sum()),
        float(rack[JOKER]),
    )


def shape_score(rack: np.ndarray) -> float:
    """The rack's shape score: 2 per neighbour pair, 1 per (n, n+2) pair, 1.5 per colour pair, 3 per joker."""
    neighbours, gaps, colours, jokers = shape_parts(rack)
    return 2.0 * neighbours + gaps + 1.5 * colours + 3.0 * jokers


def opening_features(observation: np.ndarray, rack: np.ndarray, play: np.ndarray, points: int) -> np.ndarray:
    """:data:`FEATURES` of opening with ``play`` (worth ``points``) from ``rack``, seen in ``observation``."""
    pool = float(observation[LAYOUT.POOL]) * NUM_TILES
    late = max(0.0, LATE_POOL - pool) / LATE_POOL
    left = rack - play
    neighbours, gaps, colours, jokers = shape_parts(left)
    tiles, value = play.sum() / 14.0, points / 100.0
    shape = (2.0 * neighbours + gaps + 1.5 * colours + 3.0 * jokers) / 10.0
    return np.array(
        [tiles, value, neighbours, gaps, colours, jokers, late * tiles, late * value, late * shape], np.float32
    )


class OpeningChoices:
    """The candidates a candidate-scoring model chooses among at a decision (``rummikub_openings_v1``):
    ``(observation, action_mask) -> (features float32 (K, size), actions int64 (K,))``, one row per candidate and
    the action that plays towards it from where the turn stands.

    Before the opening meld: the candidate openings of :func:`smaller_openings` that hold the tiles staged so far
    (worked out once per turn: the rack and the table do not change within it). Otherwise (opened, no opening, or a
    turn under way that no candidate holds) one candidate, the heuristic's action (:class:`HeuristicPolicy`, the
    most tiles once opened), with features all 0: the model chooses only the opening meld.
    """

    size = len(FEATURES)

    def __init__(self, env: Any) -> None:
        self.heuristic = HeuristicPolicy(env)
        self._key: bytes | None = None
        self._plays: list[np.ndarray] = []
        self._features = np.zeros((0, self.size), np.float32)
        self._only = np.zeros((1, self.size), np.float32)

    def __call__(self, observation: np.ndarray, action_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        found = self.opening_candidates(observation, action_mask)
        if found is not None:
            return found
        action = self.heuristic.act(observation, action_mask, None)  # type: ignore[arg-type]  # deterministic
        return self._only, np.array([action], np.int64)

    def opening_candidates(
        self, observation: np.ndarray, action_mask: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """The opening candidates of :meth:`__call__` (features, actions), or None where it plays the heuristic's
        action (opened, no opening, or no candidate holds the staged tiles). Keeps the per-turn cache; never asks the
        heuristic (the batched candidate player, :mod:`tableenvs.rummikub.batched_holding`, relies on it)."""
        rack, staged, table, opened = HeuristicPolicy.read(observation)
        if not opened and action_mask[:TILE_TYPES].any():
            key = rack.tobytes() + table.tobytes()
            if key != self._key:
                self._key = key
                openings = smaller_openings(table, rack, self.heuristic.min_initial)
                self._plays = [play for play, _ in openings]
                rows = [opening_features(observation, rack, play, points) for play, points in openings]
                self._features = np.stack(rows) if rows else np.zeros((0, self.size), np.float32)
            kept, actions = [], []
            for index, play in enumerate(self._plays):
                action = next_action(play, staged, action_mask) if np.all(staged <= play) else None
                if action is not None:
                    kept.append(index)
                    actions.append(action)
            if kept:
                return self._features[kept], np.asarray(actions, np.int64)
        return None
