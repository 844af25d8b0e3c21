"""Statistics for tournaments: confidence intervals, OpenSkill (Plackett-Luce) ratings, Elo-style ratings.

Where you are: shared plumbing used by :mod:`tableenvs.evaluation`; pure functions of numbers, no envs.

* :func:`wilson_interval` — 95% Wilson score interval of a rate (fractional successes allowed, for split wins).
* :func:`mean_interval` — mean and normal-approximation 95% interval (mean +- 1.96 standard errors).
* :func:`openskill_ratings` — sequential Plackett-Luce ratings (``openskill`` package) from per-game finishing ranks.
* :func:`elo_ratings` — Bradley-Terry maximum-likelihood strengths on the Elo scale from pairwise results, with
  standard errors from the observed Fisher information. Unlike sequential Elo updates the fit does not depend on
  the order of the games.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from tableenvs.core.outcome import competition_ranks  # noqa: F401 (re-exported: the ratings' rank rule)

Z95 = 1.959963984540054  # two-sided 95% normal quantile
ELO_SCALE = 400.0 / math.log(10.0)  # Elo points per natural-log unit of strength
ELO_MEAN = 1500.0


def wilson_interval(successes: float, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for ``successes / trials`` (``successes`` may be fractional); (nan, nan) if no trials."""
    if trials <= 0:
        return (math.nan, math.nan)
    p = successes / trials
    denominator = 1.0 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1.0 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return (max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half)))  # exact at p = 0 or 1


def mean_interval(values: Sequence[float] | np.ndarray, z: float = Z95) -> tuple[float, float, float]:
    """``(mean, low, high)`` with ``low, high = mean -+ z * std / sqrt(n)`` (sample std, ddof=1).

    One value gives a zero-width interval; no values give nans.
    """
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        return (math.nan, math.nan, math.nan)
    mean = float(data.mean())
    if data.size == 1:
        return (mean, mean, mean)
    half = z * float(data.std(ddof=1)) / math.sqrt(data.size)
    return (mean, mean - half, mean + half)


def openskill_ratings(
    num_entrants: int, games: Sequence[tuple[Sequence[int], Sequence[int]]]
) -> list[tuple[float, float]]:
    """``(mu, sigma)`` per entrant after rating ``games`` in order with openskill's Plackett-Luce model.

    Each game is ``(entrant of each seat, rank of each seat)`` (rank 1 = best, ties share a rank). Every seat is
    its own one-player team. When one entrant holds several seats of a game (more seats than entrants), each
    seat is rated as a copy of the entrant's rating and the entrant's new ``mu`` and ``sigma`` are the means of
    its copies' updated values. Model defaults (mu 25, sigma 25/3, beta 25/6, kappa 0.0001, tau 25/300) are
    openskill's, read from its ``PlackettLuce``; each game's update is :func:`plackett_luce_update`, openskill's
    ``PlackettLuce.rate`` for one-player teams computed the same way (the same floats) without its rating objects.
    """
    try:
        from openskill.models import PlackettLuce
    except ImportError:
        raise ImportError(
            "OpenSkill ratings need the openskill package: pip install openskill (or the 'eval' extra)"
        ) from None
    model = PlackettLuce()
    constants = (float(model.beta), float(model.kappa), float(model.tau))
    mus = [model.mu] * num_entrants
    sigmas = [model.sigma] * num_entrants
    for entrants, ranks in games:
        rated = plackett_luce_update([mus[e] for e in entrants], [sigmas[e] for e in entrants], ranks, *constants)
        new_mu: dict[int, list[float]] = {}
        new_sigma: dict[int, list[float]] = {}
        for entrant, (mu, sigma) in zip(entrants, rated, strict=True):
            new_mu.setdefault(entrant, []).append(mu)
            new_sigma.setdefault(entrant, []).append(sigma)
        for entrant, values in new_mu.items():
            mus[entrant] = sum(values) / len(values)
            sigmas[entrant] = sum(new_sigma[entrant]) / len(values)
    return list(zip(mus, sigmas, strict=True))


def plackett_luce_update(
    mus: Sequence[float], sigmas: Sequence[float], ranks: Sequence[int], beta: float, kappa: float, tau: float
) -> list[tuple[float, float]]:
    """The ``(mu, sigma)`` of each seat after one game, every seat its own one-player team (rank 1 = best, ties
    share a rank): openskill's ``PlackettLuce.rate(teams, ranks=...)`` (weights, scores, margin, balance and
    ``limit_sigma`` at their defaults), operation for operation in the same order, so the very same floats
    (tests/test_evaluation.py compares them with openskill's on many games)."""
    tau_squared = tau * tau
    corrected = [math.sqrt(sigma * sigma + tau_squared) for sigma in sigmas]  # "correct sigma with tau"
    order = sorted(range(len(ranks)), key=lambda i: ranks[i])  # the teams by rank (a stable sort)
    rank = [int(ranks[i]) for i in order]
    mu = [0.0 + mus[i] * 1.0 for i in order]  # a team's summed mu and sigma squared
    sigma_squared = [0.0 + (corrected[i] * 1.0) ** 2 for i in order]
    beta_squared = beta**2
    collective = 0.0
    for value in sigma_squared:
        collective += value + beta_squared
    c = math.sqrt(collective)
    sum_q: list[float] = [0.0] * len(order)
    seen = [False] * len(order)
    for i in range(len(order)):
        summed = math.exp(mu[i] / c)
        for q in range(len(order)):
            if rank[i] >= rank[q]:
                if seen[q]:
                    sum_q[q] += summed
                else:
                    sum_q[q], seen[q] = summed, True
    a = [sum(1 for other in rank if other == mine) for mine in rank]
    rated: list[tuple[float, float]] = [(0.0, 0.0)] * len(order)
    for i in range(len(order)):
        omega = 0.0
        delta = 0.0
        i_mu_over_c = math.exp(mu[i] / c)
        for q in range(len(order)):
            share = i_mu_over_c / sum_q[q]
            if rank[q] <= rank[i]:
                delta += share * (1 - share) / a[q]
                if q == i:
                    omega += (1 - share) / a[q]
                else:
                    omega -= share / a[q]
        omega *= sigma_squared[i] / c
        delta *= sigma_squared[i] / c**2
        delta *= math.sqrt(sigma_squared[i]) / c  # gamma
        new_mu, sigma = mus[order[i]], corrected[order[i]]
        if omega >= 0:
            new_mu += (sigma**2 / sigma_squared[i]) * omega * 1.0
            sigma *= math.sqrt(max(1 - (sigma**2 / sigma_squared[i]) * delta * 1.0, kappa))
        else:
            new_mu += (sigma**2 / sigma_squared[i]) * omega / 1.0
            sigma *= math.sqrt(max(1 - (sigma**2 / sigma_squared[i]) * delta / 1.0, kappa))
        rated[order[i]] = (new_mu, sigma)
    return rated


def elo_ratings(
    scores: np.ndarray, counts: np.ndarray, prior_games: float = 1.0, iterations: int = 10_000, tol: float = 1e-10
) -> tuple[np.ndarray, np.ndarray]:
    """Bradley-Terry ratings on the Elo scale and their standard errors.

    ``scores[i, j]`` is what entrant ``i`` scored against ``j`` (1 per win, 0.5 per draw) over ``counts[i, j]``
    meetings (``counts`` symmetric). ``prior_games`` virtual meetings, drawn, are added to every pair that met,
    so an entrant that won or lost every meeting keeps a finite rating. Ratings are centred on 1500; the
    expected score of ``i`` against ``j`` is ``1 / (1 + 10 ** ((R_j - R_i) / 400))``. Entrants with no meeting get
    nan. Standard errors come from the inverse (pseudo-inverse, under the centring constraint) of the observed
    Fisher information of the fit.
    """
    scores = np.asarray(scores, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    k = scores.shape[0]
    met = counts > 0
    wins = scores + np.where(met, prior_games / 2.0, 0.0)
    games = counts + np.where(met, prior_games, 0.0)
    active = met.any(axis=1)
    ratings = np.full(k, np.nan)
    errors = np.full(k, np.nan)
    if active.sum() < 2:
        return ratings, errors
    idx = np.flatnonzero(active)
    w = wins[np.ix_(idx, idx)]
    n = games[np.ix_(idx, idx)]
    total_wins = w.sum(axis=1)
    strength = np.ones(idx.size)
    for _ in range(iterations):  # Hunter's MM algorithm
        denominator = (n / (strength[:, None] + strength[None, :])).sum(axis=1)
        updated = total_wins / denominator
        updated /= math.exp(np.log(updated).mean())
        if np.max(np.abs(np.log(updated) - np.log(strength))) < tol:
            strength = updated
            break
        strength = updated
    theta = np.log(strength)
    p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))  # p[i, j]: i beats j
    information = -n * p * (1.0 - p)
    np.fill_diagonal(information, 0.0)
    np.fill_diagonal(information, -information.sum(axis=1))
    covariance = np.linalg.pinv(information)
    ratings[idx] = ELO_MEAN + ELO_SCALE * (theta - theta.mean())
    errors[idx] = ELO_SCALE * np.sqrt(np.clip(np.diag(covariance), 0.0, None))
    return ratings, errors
