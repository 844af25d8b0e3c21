"""Tournament statistics: per-entrant rows, the pairwise table and paired comparisons over blocks.

Where you are: the evaluation package's numbers (pure functions of :class:`~tableenvs.evaluation.playing.PlayedGame`
lists; the formulas live in :mod:`tableenvs.evaluation.ratings`).

* :func:`entrant_rows` — per entrant: appearances (seat-games), win rate (shared wins split) with a 95% Wilson
  interval, mean total reward and mean final score with 95% normal intervals, mean rank, OpenSkill
  Plackett-Luce ``mu``/``sigma`` (games rated in game order) and Bradley-Terry Elo with standard errors.
* :func:`head_to_head` — for every game and every two seats held by different entrants, a win for the one that
  finished ahead (a draw for equal ranks).
* :func:`paired_comparisons` — for two entrants ``a`` and ``b``, the difference of their mean final score and of
  their win rate within each block, averaged over blocks. Blocks are independent (their own seeds) and each
  block seats both entrants in a balanced way, so the block differences are i.i.d.: the mean difference gets a
  normal 95% interval (``1.96 sd / sqrt(blocks)``; for win rates clipped to [-1, 1]) and a two-sided p-value.
  With duplicate deals both entrants of a block play the same cards, so the deal's luck cancels; how much that
  narrows the interval depends on the game (``docs/evaluation.md`` measures it).

  When every block gives the same difference ``d`` (zero sample variance: a deterministic heuristic wins exactly
  ``1/n`` of every gauntlet block, two copies of one policy tie in every block), the normal interval would have
  zero width and p ~ 0, which no finite sample supports. Then (:func:`_constant_interval`) the block differences
  are only assumed i.i.d. within a range ``[L, H]`` (``[-1, 1]`` for win rates; for scores the range of final
  scores seen in the tournament, ``min - max`` to ``max - min``). If a block differs from ``d`` with probability
  ``q``, the mean lies within ``[d - q (d - L), d + q (H - d)]``; no block of ``B`` differing gives
  ``q <= 1 - 0.05 ** (1 / B)`` (about ``3 / B``, the rule of three: an exact 95% bound), and the interval uses that
  bound. Its p-value is ``(1 - q0) ** B``, ``q0`` the smallest ``q`` a mean of 0 needs: the largest chance, over
  every such distribution with mean 0, that all ``B`` blocks come out equal to ``d``. Results with any variation
  between blocks are unchanged.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from tableenvs.evaluation.ratings import Z95, elo_ratings, mean_interval, openskill_ratings, wilson_interval

from .playing import PlayedGame


def entrant_rows(
    records: Sequence[PlayedGame], labels: Sequence[str], pair_score: np.ndarray, pair_count: np.ndarray
) -> list[dict[str, Any]]:
    """One dict per entrant (the ``policies.csv`` rows); see the module docstring."""
    k = len(labels)
    win_share: list[list[float]] = [[] for _ in range(k)]
    rewards: list[list[float]] = [[] for _ in range(k)]
    scores: list[list[float]] = [[] for _ in range(k)]
    ranks: list[list[int]] = [[] for _ in range(k)]
    games: list[set[int]] = [set() for _ in range(k)]
    for record in records:
        share = 1.0 / len(record.winners)
        for seat, entrant in enumerate(record.entrants):
            win_share[entrant].append(share if seat in record.winners else 0.0)
            rewards[entrant].append(record.rewards[seat])
            scores[entrant].append(record.scores[seat])
            ranks[entrant].append(record.ranks[seat])
            games[entrant].add(record.index)
    skill = openskill_ratings(k, [(r.entrants, r.ranks) for r in records])
    elo, elo_se = elo_ratings(pair_score, pair_count)
    rows = []
    for e, label in enumerate(labels):
        appearances = len(win_share[e])
        wins = float(sum(win_share[e]))
        low, high = wilson_interval(wins, appearances)
        reward_mean, reward_low, reward_high = mean_interval(rewards[e])
        score_mean, score_low, score_high = mean_interval(scores[e])
        rows.append(
            {
                "policy": label,
                "appearances": appearances,
                "games": len(games[e]),
                "wins": wins,
                "win_rate": wins / appearances if appearances else math.nan,
                "win_rate_low": low,
                "win_rate_high": high,
                "reward_mean": reward_mean,
                "reward_low": reward_low,
                "reward_high": reward_high,
                "score_mean": score_mean,
                "score_low": score_low,
                "score_high": score_high,
                "mean_rank": float(np.mean(ranks[e])) if ranks[e] else math.nan,
                "openskill_mu": skill[e][0],
                "openskill_sigma": skill[e][1],
                "openskill_ordinal": skill[e][0] - 3.0 * skill[e][1],
                "elo": None if math.isnan(elo[e]) else float(elo[e]),
                "elo_se": None if math.isnan(elo_se[e]) else float(elo_se[e]),
            }
        )
    return rows


def head_to_head(records: Sequence[PlayedGame], num_entrants: int) -> tuple[np.ndarray, np.ndarray]:
    """``(score, meetings)`` matrices: ``score[a, b]`` = wins of ``a`` over ``b`` plus half the draws."""
    pair_score = np.zeros((num_entrants, num_entrants))
    pair_count = np.zeros((num_entrants, num_entrants), dtype=np.int64)
    for record in records:
        for a, b in itertools.combinations(range(len(record.entrants)), 2):
            ea, eb = record.entrants[a], record.entrants[b]
            if ea == eb:
                continue
            ra, rb = record.ranks[a], record.ranks[b]
            points = 1.0 if ra < rb else 0.5 if ra == rb else 0.0
            pair_score[ea, eb] += points
            pair_score[eb, ea] += 1.0 - points
            pair_count[ea, eb] += 1
            pair_count[eb, ea] += 1
    return pair_score, pair_count


def block_means(records: Sequence[PlayedGame], num_entrants: int) -> dict[str, np.ndarray]:
    """``{"score": [block, entrant], "win": [block, entrant]}``: each entrant's mean over its seats in each block
    (nan where it has none)."""
    blocks = 1 + max((r.block for r in records), default=-1)
    sums = {key: np.zeros((blocks, num_entrants)) for key in ("score", "win")}
    counts = np.zeros((blocks, num_entrants))
    for record in records:
        share = 1.0 / len(record.winners)
        for seat, entrant in enumerate(record.entrants):
            sums["score"][record.block, entrant] += record.scores[seat]
            sums["win"][record.block, entrant] += share if seat in record.winners else 0.0
            counts[record.block, entrant] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return {key: np.where(counts > 0, total / np.maximum(counts, 1), np.nan) for key, total in sums.items()}


def paired_comparisons(
    records: Sequence[PlayedGame], labels: Sequence[str], pairs: Sequence[tuple[int, int]]
) -> list[dict[str, Any]]:
    """For each ``(a, b)`` in ``pairs``: mean block difference ``a - b`` of final score and win rate with 95%
    normal intervals and two-sided p-values (see the module docstring). Blocks missing either entrant are left out.
    """
    means = block_means(records, len(labels))
    scores = [score for record in records for score in record.scores]
    spread = (max(scores) - min(scores)) if scores else 0.0
    ranges = {"score": (-spread, spread), "win": (-1.0, 1.0)}
    rows = []
    for a, b in pairs:
        row: dict[str, Any] = {"policy": labels[a], "opponent": labels[b]}
        for key in ("score", "win"):
            diff = means[key][:, a] - means[key][:, b]
            diff = diff[~np.isnan(diff)]
            mean, low, high = mean_interval(diff)
            if key == "win":  # a difference of two rates lies in [-1, 1]
                low, high = max(low, -1.0), min(high, 1.0)
            p = _two_sided_p(diff)
            if diff.size > 1 and _is_constant(diff):
                low, high, p = _constant_interval(mean, int(diff.size), *ranges[key])
            row["blocks"] = int(diff.size)
            row[f"{key}_diff"] = mean
            row[f"{key}_diff_low"] = low if diff.size > 1 else math.nan
            row[f"{key}_diff_high"] = high if diff.size > 1 else math.nan
            row[f"{key}_p"] = p
        rows.append(row)
    return rows


def _is_constant(diff: np.ndarray) -> bool:
    """Every block difference the same (to rounding)."""
    return float(np.ptp(diff)) <= 1e-12 * max(1.0, float(np.max(np.abs(diff))))


def _constant_interval(value: float, blocks: int, low_bound: float, high_bound: float) -> tuple[float, float, float]:
    """``(low, high, p)`` when all ``blocks`` differences equal ``value`` and lie in ``[low_bound, high_bound]``
    (module docstring): the rule-of-three bound ``q = 1 - 0.05 ** (1 / blocks)`` on the chance a block differs."""
    q = 1.0 - 0.05 ** (1.0 / blocks)
    low = value - q * max(0.0, value - low_bound)
    high = value + q * max(0.0, high_bound - value)
    if value == 0.0:
        return low, high, 1.0
    reach = high_bound - value if value < 0 else value - low_bound  # how far the other side of 0 goes
    q0 = abs(value) / reach if reach > 0 else 1.0
    return low, high, float((1.0 - min(1.0, q0)) ** blocks)


def _two_sided_p(diff: np.ndarray) -> float:
    """Normal-approximation p-value of ``mean(diff) == 0`` (nan with fewer than 2 values)."""
    if diff.size < 2:
        return math.nan
    se = float(diff.std(ddof=1)) / math.sqrt(diff.size)
    if se == 0.0:
        return 1.0 if float(diff.mean()) == 0.0 else 0.0
    return math.erfc(abs(float(diff.mean())) / se / math.sqrt(2.0))


__all__ = ["Z95", "block_means", "entrant_rows", "head_to_head", "paired_comparisons"]
