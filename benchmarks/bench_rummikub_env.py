"""Benchmark: rummikub_v0 random-play and greedy-play speed (4 players), solver share, mask time; greedy vs random.

Games are driven through the full wrapped AEC API as a user would: ``agent_iter()``, ``last()`` (observation
built every decision), the mask read from it, the policy's action, ``step()``, the dead-agent steps, ``reset``.
An agent-step is one decision (staging a tile, committing or drawing). Time is this process's CPU time
(``time.process_time``), so other jobs on the shared machine do not slow the figures down.

Two passes over the same seeded games: a clean pass for games/s and agent-steps/s, and an instrumented pass
(timers around every solver call made by the engine and the greedy agent, and around each mask computation)
for the share of time in the solver and the median / p90 mask time per step. A peer row (PettingZoo's
leduc_holdem_v4 random play, same driver) is printed for scale when rlcard is installed; there is no Rummikub
in PettingZoo or OpenSpiel to compare with.

``--eval-games N`` also plays N 4-player games of one greedy seat (rotating) against three random seats and N
2-player games greedy against random, and prints win rates with Wilson 95% intervals.

Run: ``python benchmarks/bench_rummikub_env.py [--games 200 --eval-games 500]``
"""

from __future__ import annotations

import argparse
import platform
import statistics
from collections import Counter

import numpy as np
from common import CLOCK, random_play

import tableenvs
import tableenvs.rummikub.agents as agents_module
import tableenvs.rummikub.rules as rules_module
import tableenvs.rummikub.solver as solver_module
from tableenvs.policies import make_policy
from tableenvs.ratings import wilson_interval


class SolverTimer:
    """Wraps the solver functions the engine and the greedy agent call, summing their CPU time."""

    def __init__(self):
        self.total = 0.0
        self._saved = []

    def __enter__(self):
        for module, name in (
            (getattr(solver_module, "_TurnSweep", None), "legal"),  # the engine's mask + commit check, per turn
            (rules_module, "_playable_and_exact"),  # older engines: the unchecked entry point without reuse
            (rules_module, "playable"),  # older engines: the public call
            (rules_module, "is_valid_play"),
            (rules_module, "arrange"),
            (agents_module, "solve"),
        ):
            if module is None or not hasattr(module, name):
                continue
            original = getattr(module, name)
            self._saved.append((module, name, original))
            setattr(module, name, self._timed(original))
        return self

    def _timed(self, fn):
        def timed(*args, **kwargs):
            start = CLOCK()
            try:
                return fn(*args, **kwargs)
            finally:
                self.total += CLOCK() - start

        return timed

    def __exit__(self, *exc):
        for module, name, original in self._saved:
            setattr(module, name, original)


def play(num_players: int, policy_names: list[str], seeds, *, mask_times: list[float] | None = None):
    """Play one game per seed; seat ``s`` uses ``policy_names[s]``. Returns per-game records and totals."""
    env = tableenvs.make("rummikub_v0", num_players=num_players)
    raw = env.unwrapped
    if mask_times is not None:
        fill = raw._fill_mask

        def timed_fill(mask):
            start = CLOCK()
            fill(mask)
            mask_times.append(CLOCK() - start)

        raw._fill_mask = timed_fill
    policies = [make_policy(name, env) for name in policy_names]
    records = []
    steps = 0
    for seed in seeds:
        rng = np.random.default_rng(seed + 10_000)
        start = CLOCK()
        env.reset(seed=seed)
        game_steps = 0
        for agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            seat = raw.agent_name_mapping[agent]
            env.step(policies[seat].act(observation["observation"], observation["action_mask"], rng))
            game_steps += 1
        game = raw.game
        result = game.results[-1] if game.results else None
        records.append(
            {
                "cpu": CLOCK() - start,
                "steps": game_steps,
                "turns": game.turn,
                "end": result.end if result else "truncated",
                "winners": result.winners if result else (),
                "scores": game.scores.copy(),
            }
        )
        steps += game_steps
    return records, steps


def speed_rows(label: str, policy: str, games: int) -> list[str]:
    seeds = range(games)
    names = [policy] * 4
    play(4, names, range(1000, 1003))  # warm-up (numba cache load, first-call costs)
    start = CLOCK()
    records, steps = play(4, names, seeds)
    elapsed = CLOCK() - start
    mask_times: list[float] = []
    with SolverTimer() as timer:
        start = CLOCK()
        play(4, names, seeds, mask_times=mask_times)
        instrumented = CLOCK() - start
    cpu = np.array([r["cpu"] for r in records])
    turns = np.array([r["turns"] for r in records])
    ends = Counter(r["end"] for r in records)
    masks = np.array(mask_times) * 1e3
    print(
        f"{label}: {games} games, {steps} agent-steps, turns/game median {np.median(turns):.0f} "
        f"(max {turns.max()}), ends {dict(ends)}; game CPU median {np.median(cpu) * 1e3:.0f} ms, "
        f"p90 {np.percentile(cpu, 90) * 1e3:.0f} ms, max {cpu.max() * 1e3:.0f} ms; "
        f"mask worst {masks.max():.1f} ms"
    )
    return [
        f"| {label} | {games / elapsed:.2f} | {steps / elapsed:,.0f} | {np.median(cpu) * 1e3:.0f} / "
        f"{np.percentile(cpu, 90) * 1e3:.0f} | {100 * timer.total / instrumented:.0f}% | "
        f"{np.median(masks):.3f} / {np.percentile(masks, 90):.3f} |"
    ]


def leduc_row(seconds: float = 2.0) -> str | None:
    try:
        from pettingzoo.classic import leduc_holdem_v4
    except Exception:  # noqa: BLE001 - optional peer (needs rlcard)
        return None
    rate = random_play(leduc_holdem_v4.env(), seconds)
    games_per_second = rate.games * rate.steps_per_second / rate.steps
    label = "peer: PettingZoo leduc_holdem_v4, random"
    return f"| {label} | {games_per_second:,.0f} | {rate.steps_per_second:,.0f} | - | - | - |"


def heuristic_vs_random(num_players: int, games: int) -> str:
    wins = 0.0
    points = []
    ends = Counter()
    start = CLOCK()
    for game in range(games):
        seat = game % num_players
        names = ["random"] * num_players
        names[seat] = "heuristic"
        (record,), _ = play(num_players, names, [50_000 + game])
        ends[record["end"]] += 1
        if seat in record["winners"]:
            wins += 1 / len(record["winners"])  # a shared lowest-rack win counts as a fraction
        points.append(record["scores"][seat])
    low, high = wilson_interval(wins, games)
    return (
        f"| {num_players} players: 1 greedy vs {num_players - 1} random | {games} | {wins / games:.3f} "
        f"[{low:.3f}, {high:.3f}] | {1 / num_players:.3f} | {statistics.mean(points):+.1f} | {dict(ends)} | "
        f"{CLOCK() - start:.0f} s |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games per speed measurement")
    parser.add_argument("--eval-games", type=int, default=0, help="greedy-vs-random games per player count")
    args = parser.parse_args()

    import numba

    print(f"Python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}")
    print()
    rows = speed_rows("rummikub_v0 4p, random", "random", args.games)
    rows += speed_rows("rummikub_v0 4p, greedy", "heuristic", args.games)
    peer = leduc_row()
    print()
    print("| play | games/s | agent-steps/s | game CPU ms median / p90 | time in solver | mask ms median / p90 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for row in rows + ([peer] if peer else []):
        print(row)
    if args.eval_games:
        print()
        print("| match | games | greedy win rate [95% CI] | even share | greedy points/game | ends | CPU |")
        print("| --- | ---: | ---: | ---: | ---: | --- | ---: |")
        for n in (4, 2):
            print(heuristic_vs_random(n, args.eval_games))


if __name__ == "__main__":
    main()
