"""Statistics for tournaments: confidence intervals, OpenSkill (Plackett-Luce) ratings, Elo-style ratings.

Where you are: shared plumbing used by :mod:`tableenvs.evaluation`; pure functions of numbers, no envs.

* :func:`wilson_interval` — 95% Wilson score interval of a rate (fractional successes allowed, for split wins).
* :func:`mean_interval` — mean and normal-approximation 95% interval (mean +- 1.96 standard errors).
* :func:`openskill_ratings` — sequential Plackett-Luce ratings (``openskill``'s model, compiled) from per-game ranks.
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
    openskill's, read from its ``PlackettLuce``. The games are rated by :func:`openskill_kernel`, compiled:
    ``PlackettLuce.rate`` for one-player teams operation for operation, the same floats (tests/test_evaluation.py
    compares them with openskill's own on many tournaments), without a rating object per seat.
    """
    try:
        from openskill.models import PlackettLuce
    except ImportError:
        raise ImportError(
            "OpenSkill ratings need the openskill package: pip install openskill (or the 'eval' extra)"
        ) from None
    from tableenvs.vector.compile import kernels_once

    model = PlackettLuce()
    mus = np.full(num_entrants, float(model.mu))
    sigmas = np.full(num_entrants, float(model.sigma))
    (kernel,) = kernels_once((openskill_kernel,), "the OpenSkill ratings", __file__, "about 2 s")
    seats = np.array([len(entrants) for entrants, _ in games], np.int64)
    width = int(seats.max()) if len(seats) else 0
    table = np.zeros((len(seats), 2, width), np.int64)
    for index, (entrants, ranks) in enumerate(games):
        table[index, 0, : len(entrants)] = entrants
        table[index, 1, : len(entrants)] = ranks
    kernel(table, seats, mus, sigmas, float(model.beta), float(model.kappa), float(model.tau))
    return [(float(mu), float(sigma)) for mu, sigma in zip(mus, sigmas, strict=True)]


def openskill_kernel(table, seats, mus, sigmas, beta, kappa, tau):
    """Rate game ``g`` (``seats[g]`` seats: entrants ``table[g, 0]``, ranks ``table[g, 1]``) after game ``g - 1``,
    updating ``mus`` and ``sigmas`` in place: openskill's ``PlackettLuce.rate(teams, ranks=...)`` for one-player
    teams (weights, scores, margin, balance and ``limit_sigma`` at their defaults) in its order of operations, then
    each entrant's copies averaged in seat order (Python's ``sum(values) / len(values)``)."""
    width = table.shape[2]
    corrected = np.empty(width)
    order = np.empty(width, np.int64)
    rank = np.empty(width, np.int64)
    mu = np.empty(width)
    sigma_squared = np.empty(width)
    sum_q = np.empty(width)
    seen = np.zeros(width, np.bool_)
    a = np.empty(width)
    new_mu = np.empty(width)
    new_sigma = np.empty(width)
    total_mu = np.zeros(mus.shape[0])
    total_sigma = np.zeros(mus.shape[0])
    copies = np.zeros(mus.shape[0], np.int64)
    tau_squared = tau * tau
    beta_squared = beta * beta
    for g in range(table.shape[0]):
        n = seats[g]
        entrants, ranks = table[g, 0], table[g, 1]
        for s in range(n):
            corrected[s] = math.sqrt(sigmas[entrants[s]] * sigmas[entrants[s]] + tau_squared)
            order[s] = s
        for i in range(1, n):  # the teams by rank, a stable sort
            j = i
            while j > 0 and ranks[order[j - 1]] > ranks[order[j]]:
                order[j - 1], order[j] = order[j], order[j - 1]
                j -= 1
        collective = 0.0
        for i in range(n):
            rank[i] = ranks[order[i]]
            mu[i] = 0.0 + mus[entrants[order[i]]] * 1.0  # the team's summed mu and sigma squared
            sigma_squared[i] = 0.0 + (corrected[order[i]] * 1.0) * (corrected[order[i]] * 1.0)
            collective += sigma_squared[i] + beta_squared
        c = math.sqrt(collective)
        seen[:n] = False
        for i in range(n):
            summed = math.exp(mu[i] / c)
            for q in range(n):
                if rank[i] >= rank[q]:
                    sum_q[q] = sum_q[q] + summed if seen[q] else summed
                    seen[q] = True
        for i in range(n):
            count = 0
            for q in range(n):
                count += rank[q] == rank[i]
            a[i] = count
        for i in range(n):
            omega = 0.0
            delta = 0.0
            i_mu_over_c = math.exp(mu[i] / c)
            for q in range(n):
                share = i_mu_over_c / sum_q[q]
                if rank[q] <= rank[i]:
                    delta += share * (1 - share) / a[q]
                    if q == i:
                        omega += (1 - share) / a[q]
                    else:
                        omega -= share / a[q]
            omega *= sigma_squared[i] / c
            delta *= sigma_squared[i] / (c * c)
            delta *= math.sqrt(sigma_squared[i]) / c  # gamma
            value, sigma = mus[entrants[order[i]]], corrected[order[i]]
            if omega >= 0:
                value += (sigma * sigma / sigma_squared[i]) * omega * 1.0
                sigma *= math.sqrt(max(1 - (sigma * sigma / sigma_squared[i]) * delta * 1.0, kappa))
            else:
                value += (sigma * sigma / sigma_squared[i]) * omega / 1.0
                sigma *= math.sqrt(max(1 - (sigma * sigma / sigma_squared[i]) * delta / 1.0, kappa))
            new_mu[order[i]] = value
            new_sigma[order[i]] = sigma
        for s in range(n):
            e = entrants[s]
            total_mu[e] = new_mu[s] if copies[e] == 0 else total_mu[e] + new_mu[s]
            total_sigma[e] = new_sigma[s] if copies[e] == 0 else total_sigma[e] + new_sigma[s]
            copies[e] += 1
        for s in range(n):
            e = entrants[s]
            if copies[e]:
                mus[e] = total_mu[e] / copies[e]
                sigmas[e] = total_sigma[e] / copies[e]
                copies[e] = 0


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
