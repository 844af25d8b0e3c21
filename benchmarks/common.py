"""Shared by the benchmark scripts: the random-play loop every AEC env (ours and the peers') is timed with, and the
parallel headroom of the machine (how much a second process could gain right now).

Where you are: ``benchmarks/``; the scripts run as ``python benchmarks/<script>.py`` and import this module
as ``common``. Intervals come from :mod:`tableenvs.evaluation.ratings` (Wilson, mean ± 1.96 s.e.).
"""

from __future__ import annotations

import datetime
import os
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import tableenvs
from tableenvs.policies import make_policy, play_game

#: Benchmarks time this process's CPU (other jobs on a shared machine slow no contender down in the figures).
CLOCK = time.process_time


class _TimedSeat:
    """A seat that plays ``search`` at each decision with a choice, timing it (CPU ms), and ``heuristic`` at the
    others; ``simulations`` sums a search policy's ``last_simulations``."""

    def __init__(self, search: Any, heuristic: Any):
        self.search, self.heuristic = search, heuristic
        self.times: list[float] = []
        self.searched: list[float] = []  # the times of the decisions that simulated
        self.simulations = 0

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        if action_mask.sum() <= 1:
            return self.heuristic.act(observation, action_mask, rng)
        start = CLOCK()
        action = self.search.act(observation, action_mask, rng)
        self.times.append(1000 * (CLOCK() - start))
        simulated = getattr(self.search, "last_simulations", 0)
        self.simulations += simulated
        if simulated:
            self.searched.append(self.times[-1])
        return action


def decision_times(name: str, spec: str, players: int, options: dict, games: int, seed: int) -> dict:
    """CPU ms of every decision with a choice of the ``spec`` policy over ``games`` games (one such seat, rotating
    with the game; heuristic elsewhere), used by ``ladder.py``, ``search_vs_heuristic.py`` and
    ``trained_vs_heuristic.py``; ``searched_*`` count the decisions that simulated (a search policy's)."""
    times, searched, simulations = [], [], 0
    for game in range(games):
        env = tableenvs.make_raw(name, num_players=players, **options)
        search = make_policy(spec, env)
        heuristic = make_policy("heuristic", env)
        timed = _TimedSeat(search, heuristic)
        seats = [timed if seat == game % players else heuristic for seat in range(players)]
        play_game(env, seats, seed=seed + game, rng=np.random.default_rng(seed + game))
        times += timed.times
        searched += timed.searched
        simulations += timed.simulations
    array = np.array(times) if times else np.zeros(1)
    return {
        "decisions": len(times),
        "mean_ms": float(array.mean()),
        "p90_ms": float(np.percentile(array, 90)),
        "simulations_per_second": simulations / max(array.sum() / 1000, 1e-9),
        "searched_decisions": len(searched),  # those that simulated (mode=turns: a turn's first decision)
        "searched_mean_ms": float(np.mean(searched)) if searched else 0.0,
        "searched_p90_ms": float(np.percentile(searched, 90)) if searched else 0.0,
    }


@dataclass(frozen=True)
class PlayRate:
    """Result of :func:`random_play`: decisions (agent-steps) per CPU-second, with and without ``reset``."""

    steps_per_second: float
    steps_per_second_excluding_reset: float
    games: int
    steps: int


def play_out(env: Any, rng: np.random.Generator) -> int:
    """Play the current game of a reset AEC ``env`` to its end with uniformly random legal actions, as a user would:
    ``agent_iter()``, ``last()`` (the observation built every decision), the mask read from it, ``step()``, and the
    dead-agent steps. Returns the decisions (agent-steps; dead steps not counted)."""
    steps = 0
    for _ in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        legal = np.flatnonzero(observation["action_mask"])
        env.step(int(legal[rng.integers(legal.size)]))
        steps += 1
    return steps


def random_play(env: Any, seconds: float, *, seed: int = 0) -> PlayRate:
    """Uniformly random legal play through the full AEC API for about ``seconds`` of CPU.

    As a user would: ``reset(seed=...)``, ``agent_iter()``, ``last()`` (the observation is built every
    decision), the action mask read from it, ``step()``, and the dead-agent steps at the end. Dead steps are
    not counted as decisions but their time is.
    """
    rng = np.random.default_rng(seed)
    steps = games = 0
    in_reset = 0.0
    start = CLOCK()
    while CLOCK() - start < seconds:
        before = CLOCK()
        env.reset(seed=seed + games)
        in_reset += CLOCK() - before
        steps += play_out(env, rng)
        games += 1
    elapsed = CLOCK() - start
    return PlayRate(steps / elapsed, steps / (elapsed - in_reset), games, steps)


def openspiel_random_play(game: Any, seconds: float, tensor: str | None, *, seed: int = 0) -> float:
    """Decisions per CPU-second of uniformly random play of an OpenSpiel ``game`` for about ``seconds``.

    Chance outcomes are drawn uniformly by index (deals); at every decision the state builds its ``tensor``
    (``"observation"`` or ``"information_state"``), as an agent's input would be, before the legal actions; with
    ``tensor=None`` it builds none (the engine alone).
    """
    observe = f"{tensor}_tensor" if tensor is not None else None
    rng = np.random.default_rng(seed)
    decisions = 0
    start = CLOCK()
    while CLOCK() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.integers(len(outcomes))][0])
                continue
            if observe is not None:
                getattr(state, observe)()
            legal = state.legal_actions()
            state.apply_action(legal[rng.integers(len(legal))])
            decisions += 1
    return decisions / (CLOCK() - start)


def timed(fn: Any, add: Any) -> Any:
    """``fn`` wrapped to pass the CPU seconds of each call to ``add`` (for timers around library functions)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        start = CLOCK()
        try:
            return fn(*args, **kwargs)
        finally:
            add(CLOCK() - start)

    return call


def burn(n: int) -> int:
    """A busy loop of ``n`` steps (:func:`parallel_headroom`'s work)."""
    total = 0
    for i in range(n):
        total += i * i
    return total


def parallel_headroom(n: int = 10_000_000) -> float:
    """Throughput of two busy-loop processes relative to one, right now: about 2 on two idle cores, about 1 when
    other jobs already use both cores. No workers setting can beat this figure."""
    import multiprocessing

    start = time.perf_counter()
    burn(n)
    one = time.perf_counter() - start
    context = multiprocessing.get_context("fork" if platform.system() == "Linux" else "spawn")
    with context.Pool(2) as pool:
        start = time.perf_counter()
        pool.map(burn, [n, n])
        two = time.perf_counter() - start
    return 2 * one / two


def replace_block(path: Path, begin: str, end: str, body: str) -> None:
    """Rewrite the text between the ``begin`` and ``end`` marker lines of ``path`` with ``body`` (exit naming the
    markers if the file lacks them): how a benchmark writes its measured block into the docs."""
    text = path.read_text()
    if begin not in text or end not in text:
        sys.exit(f"{path} has no {begin!r} ... {end!r} block")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    path.write_text(f"{head}{begin}\n{body}\n{end}{tail}")


DOCS_DIR = Path(__file__).resolve().parents[1] / "docs"


def docs_page(begin: str) -> Path:
    """The one page under docs/ (the lab record, docs/lab/, included) holding the marker line ``begin``: a block is
    found where it lives, so a section moved between pages keeps its script (exit naming the marker if no page, or
    more than one, holds it)."""
    pages = [page for page in sorted(DOCS_DIR.rglob("*.md")) if begin in page.read_text()]
    if len(pages) != 1:
        sys.exit(f"{len(pages)} pages under {DOCS_DIR} hold {begin!r}; a block lives in exactly one")
    return pages[0]


def markers(block: str, script: str) -> tuple[str, str]:
    """The marker lines of a measured block named ``block`` written by ``benchmarks/<script>`` (a path under
    benchmarks/, e.g. ``studies/feature_clone.py``)."""
    return (
        f"<!-- measured: {block} (python benchmarks/{script}; machine-dependent, not checked in CI) -->",
        f"<!-- end measured: {block} -->",
    )


def write_block(begin: str, end: str, body: str) -> Path:
    """:func:`replace_block` in the page of docs/ that holds the block (:func:`docs_page`); that page."""
    path = docs_page(begin)
    replace_block(path, begin, end, body)
    return path


def children_cpu() -> float:
    """CPU seconds (user + system) of this process's finished children so far: the difference across a subprocess
    run is that run's CPU time (``resource.getrusage(RUSAGE_CHILDREN)``)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def commit_label(*pathspec: str) -> str:
    """The checkout's short commit, with " with uncommitted changes" when tracked files under ``pathspec`` (git
    pathspecs; default the whole tree) differ from it: what a measured block says it ran."""
    import subprocess

    root = Path(__file__).resolve().parent

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True).stdout.strip()

    dirty = git("status", "--porcelain", "--untracked-files=no", "--", *(pathspec or (":/",)))
    return git("rev-parse", "--short", "HEAD") + (" with uncommitted changes" if dirty else "")


def finished_on_this_machine(load_at_start: float) -> str:
    """``"finished <UTC date and time>, <n> cores, Python <version>, load average <x> at the start and <y> at the
    end"``: the clause a script's docs block gives its run (``load_at_start``: ``os.getloadavg()[0]`` when it began)."""
    return (
        f"finished {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load average {load_at_start:.1f} at the start and {os.getloadavg()[0]:.1f} at "
        "the end"
    )
