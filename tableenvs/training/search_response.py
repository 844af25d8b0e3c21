"""A planning best response: the game's default search, its rollouts played by a frozen target, in one seat of a
table of that target.

Where you are: ``tableenvs/training/``, beside :mod:`tableenvs.training.best_response` (a PPO learner) and
:mod:`tableenvs.training.scorer_response` (a cross-entropy learner). A learner that must find, by trial, play that
beats a target can fail to pass even a weak one at the budgets tried (the measure is then undefined: it shows no gain
against either target). A planner needs no training: at each of its decisions it samples worlds consistent with what
its seat has seen, plays every legal action in each, and lets the **target's own policy** play every seat of the
rollout, itself included, to the end of the scoring period; it plays the action of the best mean. It knows how the
target plays (the frozen policy is given to it), as a best response may, and it improves on that play by one step of
lookahead, so its gain over the target's seats is a lower bound of what the target concedes to a best response: the
local best response of poker research (Lisy and Bowling, *Equilibrium Approximation Quality of Current No-Limit Poker
Bots*, 2017), here with the game's own world sampler (which draws hidden cards uniformly among those consistent with
the seat's view, not weighted by the target's play).

* **The planner**: the game's default search (its spec's ``search_default``: simulations, root rule, ``z``, ...) with
  the target (``heuristic`` or ``trained``, the model shipped for the game and options) as the rollout policy
  (:func:`planner_spec`: ``rollout=trained``; a flat paired root runs batched, ``batched=1``, the same search with
  its rollouts in the game's compiled engine). For the target ``heuristic`` this is the game's default search.
  Budget: the search's simulations a decision, the same for every target.
* **The measure**: the same quantity as the other learners' (:func:`tableenvs.training.best_response.evaluate_gain`):
  on ``deals`` duplicate deals from ``numpy.random.default_rng(seed)`` (the same deal seeds as ``evaluate_gain``
  with that seed, so the same deals), each played once per seat of the planner with the target in every other seat,
  the planner seat's total reward minus the mean of the target seats' totals, per game, with a paired 95% interval
  over deals. The games run in the AEC env (:func:`tableenvs.policies.play_game`); each game's policies draw from
  its own generator (``numpy.random.SeedSequence((seed, deal, planner's seat)).spawn(players)``, one per seat).

Units: games; rewards in the game's default reward units; CPU seconds of this process and its workers.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from tableenvs.core.validation import check_at_least
from tableenvs.evaluation.ratings import mean_interval

__all__ = ["TARGETS", "SearchResponseResult", "planner", "planner_spec", "search_best_response"]

#: Deals a worker plays before it reports (progress and the parent's tally).
CHUNK = 8


@dataclass
class SearchResponseResult:
    """What :func:`search_best_response` measured: the planner's ``gain`` over the target's seats per game with its
    paired 95% interval ``low, high`` over ``deals`` duplicate deals (``games`` = deals x players), both sides' mean
    totals, the planner's decisions with a choice and their mean CPU milliseconds, ``cpu_seconds`` (this process
    and its workers), and ``per_deal``: each deal's gain in deal order (their mean is ``gain``), so that two targets
    measured on the same deals can be compared deal by deal (:func:`paired_difference`)."""

    game: str
    options: dict[str, Any]
    target: str
    spec: str
    deals: int
    games: int
    gain: float
    low: float
    high: float
    learner_mean: float
    target_mean: float
    decisions: int
    decision_ms: float
    cpu_seconds: float
    per_deal: tuple[float, ...] = ()

    def line(self) -> str:
        return (
            f"{self.game} {self.options}: planning best response ({self.spec}) to {self.target}: gain "
            f"{self.gain:+.3f} [{self.low:+.3f}, {self.high:+.3f}] per game over {self.deals} deals x "
            f"{self.games // max(self.deals, 1)} seatings; {self.decisions:,} decisions, {self.decision_ms:.1f} ms "
            f"each ({self.cpu_seconds:.0f} CPU s)"
        )


#: The targets the planner answers: the policies its rollouts can play by name (``rollout=``).
TARGETS = ("heuristic", "trained")


def planner_spec(game: str, target: str) -> str:
    """The search spec of the planner against ``target`` (``heuristic`` or ``trained``): the game's default search
    (its spec's ``search_default``) with ``rollout=target``. A default of the flat paired root (``root=paired``) runs
    as ``batched=1``, the same root rule, budget and ``z`` with its rollouts in the game's batched engine (each
    rollout the one the flat search plays in its world; several times faster), where the game has a batched engine.
    ``ValueError`` (one line) for another target."""
    from tableenvs.core.registry import spec as game_spec
    from tableenvs.policies.search import default_spec, parse_search_spec

    if target not in TARGETS:
        raise ValueError(f"target {target!r}: the planning best response answers {' or '.join(TARGETS)} (its "
                         "rollouts play the target by name)")  # fmt: skip
    text = default_spec(game)
    options = parse_search_spec(text)
    parts = [part for part in text.split(":")[1:] if not part.startswith("rollout=")]
    flat_paired = options.root == "paired" and options.mode == "flat" and options.turns is None
    if flat_paired and not options.batched and game_spec(game).batched is not None:
        parts = [part for part in parts if part != "root=paired"] + ["batched=1"]
    if target != "heuristic":
        parts.append(f"rollout={target}")
    spec_text = ":".join(["search", *parts])
    parse_search_spec(spec_text)  # a spec the search takes
    return spec_text


def planner(raw: Any, target: str) -> tuple[Any, Any]:
    """``(planner, target_policy)`` for the raw env ``raw``: :func:`planner_spec`'s search made for ``raw`` (its
    rollouts ``target``'s policy) and ``target``'s policy. ``ValueError`` (one line) for a target it cannot take
    (:func:`planner_spec`; ``trained`` where the game has no model for these options)."""
    from tableenvs.policies import make_policy

    search = make_policy(planner_spec(raw.metadata["name"], target), raw)
    return search, make_policy(target, raw)


def _play_deals(job: tuple) -> tuple[list[tuple[int, float, float, float]], int, float, float]:
    """Worker: the deals ``job`` names, each once per seat of the planner. Returns per deal ``(index, gain, planner
    total, target seats' mean total)`` (averaged over seatings), the planner's decisions with a choice, their CPU
    seconds and the worker's CPU seconds."""
    from tableenvs import make_raw
    from tableenvs.evaluation.playing import SeatRng
    from tableenvs.policies import make_policy, play_game

    began = time.process_time()
    game, options, target, learner, seed, items = job
    raw = make_raw(game, **options)
    search, policy = planner(raw, target) if learner is None else (make_policy(learner, raw), make_policy(target, raw))
    players = raw.num_players
    timed: dict[str, Any] = {"decisions": 0, "seconds": 0.0}

    class Timed:
        """The planner, its decisions with a choice counted and timed (CPU)."""

        def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
            if int(np.count_nonzero(action_mask)) > 1:
                start = time.process_time()
                action = search.act(observation, action_mask, rng)
                timed["seconds"] += time.process_time() - start
                timed["decisions"] += 1
                return action
            return search.act(observation, action_mask, rng)

    out = []
    for index, deal_seed in items:
        gains = np.zeros(players)
        own = np.zeros(players)
        others = np.zeros(players)
        for seat in range(players):
            children = np.random.SeedSequence((seed, index, seat)).spawn(players)
            rngs = [np.random.default_rng(child) for child in children]
            seats = [SeatRng(Timed() if s == seat else policy, rngs[s]) for s in range(players)]
            totals, _ = play_game(raw, seats, seed=int(deal_seed), rng=rngs[0])
            own[seat] = totals[seat]
            others[seat] = (totals.sum() - totals[seat]) / (players - 1)
            gains[seat] = own[seat] - others[seat]
        out.append((index, float(gains.mean()), float(own.mean()), float(others.mean())))
    return out, int(timed["decisions"]), float(timed["seconds"]), time.process_time() - began


def search_best_response(
    game: str,
    target: str,
    *,
    options: dict[str, Any] | None = None,
    deals: int,
    seed: int = 0,
    workers: int = 1,
    say: Callable[[str], Any] = print,
    learner: str | None = None,
) -> SearchResponseResult:
    """The planner (module docstring) against a table of ``target`` on ``deals`` duplicate deals from ``seed``,
    ``workers`` processes playing chunks of deals; ``say`` gets a progress line about every tenth of the deals.
    Bad settings (a target or game the planner cannot take, ``deals`` < 2, ``workers`` < 1) are refused in one
    line before any game is played. ``learner``: another policy spec in the planner's seat (checks: the measure
    itself, on the same deals)."""
    from tableenvs import make_raw

    options = dict(options or {})
    check_at_least("deals", deals, 2)
    check_at_least("workers", workers, 1)
    raw = make_raw(game, **options)
    players = raw.num_players
    planner(raw, target)  # refuses a target or game it cannot take, before any game
    if learner is not None:
        from tableenvs.policies import make_policy

        make_policy(learner, raw)
    rng = np.random.default_rng(seed)
    deal_seeds = rng.integers(2**62, size=deals)  # as evaluate_gain draws them: the same deals
    items = list(enumerate(deal_seeds.tolist()))
    jobs = [(game, options, target, learner, seed, items[i : i + CHUNK]) for i in range(0, deals, CHUNK)]
    per_deal = np.zeros(deals)
    own = np.zeros(deals)
    others = np.zeros(deals)
    decisions, search_seconds, worker_seconds = 0, 0.0, 0.0
    began, wall = time.process_time(), time.perf_counter()
    done, reported = 0, 0

    def take(result: tuple) -> None:
        nonlocal decisions, search_seconds, worker_seconds, done, reported
        rows, count, seconds, cpu = result
        for index, gain, mine, theirs in rows:
            per_deal[index], own[index], others[index] = gain, mine, theirs
        decisions += count
        search_seconds += seconds
        worker_seconds += cpu
        done += len(rows)
        if done * 10 // deals > reported or done == deals:
            reported = done * 10 // deals
            say(f"planning best response to {target}: {done} of {deals} deals, {time.perf_counter() - wall:.0f} s")

    if workers == 1:
        for job in jobs:
            take(_play_deals(job))
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for result in pool.map(_play_deals, jobs):
                take(result)
    mean, low, high = mean_interval(per_deal, z=1.96)
    cpu = time.process_time() - began + (worker_seconds if workers > 1 else 0.0)
    return SearchResponseResult(
        game=game, options=options, target=target, spec=learner or planner_spec(game, target), deals=deals,
        games=deals * players,
        gain=mean, low=low, high=high, learner_mean=float(own.mean()),
        target_mean=float(others.mean()), decisions=decisions,
        decision_ms=1000.0 * search_seconds / max(decisions, 1), cpu_seconds=cpu, per_deal=tuple(per_deal.tolist()),
    )  # fmt: skip


def paired_difference(first: Sequence[float], second: Sequence[float]) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean of ``first - second`` deal by deal with its 95% normal interval, for two
    runs' ``per_deal`` gains on the same deals (same game, options, seed and number of deals); ``ValueError`` when
    they differ in length or hold fewer than 2 deals."""
    a, b = np.asarray(first, np.float64), np.asarray(second, np.float64)
    if a.shape != b.shape or a.ndim != 1 or len(a) < 2:
        raise ValueError(f"paired_difference needs two equal runs of at least 2 deals, got {len(a)} and {len(b)}")
    return mean_interval(a - b, z=1.96)
