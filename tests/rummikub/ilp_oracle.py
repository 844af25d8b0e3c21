"""Independent Rummikub oracle for the solver tests: a set-partition integer programme (scipy ``milp``).

You are in test support code; it shares nothing with the solver but the tile numbering (type
``colour * 13 + number - 1``, joker 52). Model (den Hertog & Hulshof 2006): the catalogue lists every run
of 3..5 tiles and every group of 3..4 tiles, each with every placement of up to two jokers (longer runs
split into these, so the catalogue is complete); a variable per catalogue meld says how often it is laid
(0..2), a variable per tile type how many tiles of it leave the rack; tiles in melds = table + played.
A catalogue entry is a (tile count vector, stood-for points) pair, so "joker, joker, 5" appears once per
distinct value it can be worth (as a group, or as each run it can complete).

HiGHS runs with presolve off and a zero MIP gap (the notes record presolve bugs in some HiGHS versions
giving wrong "Optimal" answers; a gap would allow near-optimal answers).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp

TYPES = 53
JOKER = 52
FACE = np.array([t % 13 + 1 for t in range(52)] + [30], dtype=np.int64)


def meld_catalogue() -> list[tuple[tuple[int, ...], int]]:
    """Every distinct (count vector, stood-for value) of a run of 3..5 or group of 3..4, jokers included."""
    shapes: list[list[tuple[int, int]]] = []  # each: list of (tile type, stood-for number)
    for colour in range(4):
        for length in (3, 4, 5):
            for start in range(1, 14 - length + 1):
                shapes.append([(colour * 13 + n - 1, n) for n in range(start, start + length)])
    for number in range(1, 14):
        for size in (3, 4):
            for colours in combinations(range(4), size):
                shapes.append([(c * 13 + number - 1, number) for c in colours])
    catalogue = set()
    for shape in shapes:
        for jokers in range(3):
            for spots in combinations(range(len(shape)), jokers):
                if len(spots) == len(shape):
                    continue
                counts = [0] * TYPES
                for i, (t, _) in enumerate(shape):
                    counts[JOKER if i in spots else t] += 1
                catalogue.add((tuple(counts), sum(n for _, n in shape)))
    return sorted(catalogue)


class Oracle:
    """The integer programme; the catalogue matrix is built once, each query selects the melds that fit."""

    def __init__(self) -> None:
        catalogue = meld_catalogue()
        self.size = len(catalogue)
        self.melds = np.array([counts for counts, _ in catalogue], dtype=np.int64).T  # (53, melds)
        self.values = np.array([value for _, value in catalogue], dtype=np.float64)
        # Outside the opening, melds differing only in value are the same column: keep the first.
        first_of_tile_set = {}
        for i, (counts, _) in enumerate(catalogue):
            first_of_tile_set.setdefault(counts, i)
        self.distinct = np.zeros(self.size, dtype=bool)
        self.distinct[list(first_of_tile_set.values())] = True

    def _run(self, table, lo, hi, weights, opening, min_initial):
        """Optimum of ``weights . played`` with ``lo <= played <= hi``; ``(None, None)`` if infeasible.

        Only catalogue melds whose tiles fit in table + ``hi`` enter the programme (the others could
        never be laid), and outside the opening one meld per tile set, which keeps each programme small.
        """
        table = np.zeros(TYPES) if opening else np.asarray(table, dtype=np.float64)
        fits = np.all(self.melds <= (table + hi)[:, None], axis=0) & (opening | self.distinct)
        melds = self.melds[:, fits]
        size = melds.shape[1]
        matrix = np.hstack([melds, -np.eye(TYPES)])
        cost = np.concatenate([np.zeros(size), -np.asarray(weights, dtype=np.float64)])
        bounds = Bounds(np.concatenate([np.zeros(size), lo]), np.concatenate([np.full(size, 2), hi]))
        constraints = [LinearConstraint(matrix, table, table)]
        if opening:
            constraints.append(
                LinearConstraint(np.concatenate([self.values[fits], np.zeros(TYPES)]), min_initial, np.inf)
            )
        result = milp(
            cost,
            integrality=np.ones(size + TYPES),
            bounds=bounds,
            constraints=constraints,
            options={"presolve": False, "mip_rel_gap": 0},
        )
        if result.status == 2:
            return None, None
        assert result.status == 0, result.message
        played = np.rint(result.x[size:]).astype(np.int64)
        return int(round(-result.fun)), played

    def best(self, table, rack, weights, *, opening=False, min_initial=30, forced=None):
        """``(best score, played)`` of a non-empty play, or ``(None, None)`` when there is none."""
        lo = np.zeros(TYPES) if forced is None else np.asarray(forced, dtype=np.float64)
        score, played = self._run(table, lo, rack, weights, opening, min_initial)
        if played is None or not played.any():
            return None, None
        return score, played

    def arrangeable(self, table) -> bool:
        score, _ = self._run(table, np.zeros(TYPES), np.zeros(TYPES), np.zeros(TYPES), False, 0)
        return score is not None

    def playable(self, table, rack, staged, *, opening=False, min_initial=30) -> np.ndarray:
        """Per tile type: is a play with ``staged + e_t <= played <= rack`` feasible?

        Each solve maximises, over plays ``staged <= played <= rack``, the tiles of still-undecided types
        beyond ``staged``: the types its answer exceeds are feasible, and an optimum of 0 (or no play at
        all) proves every undecided type infeasible.
        """
        rack = np.asarray(rack)
        staged = np.asarray(staged)
        mask = np.zeros(TYPES, dtype=bool)
        undecided = rack > staged
        while undecided.any():
            score, played = self._run(table, staged, rack, undecided.astype(np.float64), opening, min_initial)
            if played is None or score == int(staged[undecided].sum()):
                break
            newly = undecided & (played > staged)
            mask |= newly
            undecided &= ~newly
        return mask
