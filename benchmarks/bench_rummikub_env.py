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

``--compare [--baseline PATH]`` prints instead, all from one run: 2/3/4-player step rates of this checkout
and of the checkout at ``PATH`` (each in its own child process, rounds interleaved, best of ``--rounds``), OpenSpiel
``gin_rummy`` (2p, observation tensor every decision) and RLCard ``gin-rummy`` (each row says when the peer is not
installed), per-step CPU times of ``--tail-games`` random and greedy 4-player games by table size (p50/p90/p99/max),
CPU shares by timers, and with ``--train-steps N`` the MaskablePPO training rate on ``tableenvs/Rummikub-v0``.

Run: ``python benchmarks/bench_rummikub_env.py [--games 200 --eval-games 500]``, or
``git worktree add /tmp/base de69bda && python benchmarks/bench_rummikub_env.py --compare --baseline /tmp/base``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
from common import CLOCK, openspiel_random_play, random_play, timed

import tableenvs
import tableenvs.rummikub.agents as agents_module
import tableenvs.rummikub.rules as rules_module
import tableenvs.rummikub.solver as solver_module
from tableenvs.evaluation.ratings import wilson_interval
from tableenvs.policies import make_policy


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
            (rules_module, "_arranged"),  # newer engines: the arrangement at commits, without the input check
            (agents_module, "solve"),
        ):
            if module is None or not hasattr(module, name):
                continue
            original = getattr(module, name)
            self._saved.append((module, name, original))
            setattr(module, name, timed(original, self._add))
        return self

    def _add(self, seconds: float) -> None:
        self.total += seconds

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


# ---------------------------------------------------------------------------------------------- side by side
# ``--baseline PATH`` runs the same drivers on another checkout (e.g. ``git worktree add /tmp/base de69bda``) in a
# child process, and this checkout in another, interleaving rounds so both see the same machine load. Each child
# reads one JSON command per line and answers one JSON line.

TABLE_BANDS = ((0, 29), (30, 49), (50, 69), (70, 106))  # table tiles before the step


def _play_rate(players: int, seconds: float) -> float:
    """Agent-steps per CPU-second of uniformly random legal play through the full wrapped AEC API."""
    return random_play(tableenvs.make("rummikub_v0", num_players=players), seconds).steps_per_second


def _step_times(policy: str, games: int) -> list[list[float]]:
    """``[table tiles, CPU ms]`` of every agent-step (``last()``, the policy's choice, ``step()``) of 4-player
    games, all four seats playing ``policy``, seeds 0..games-1."""
    env = tableenvs.make("rummikub_v0", num_players=4)
    raw = env.unwrapped
    chooser = make_policy(policy, env)
    out = []
    for seed in range(games):
        rng = np.random.default_rng(seed + 10_000)
        env.reset(seed=seed)
        for _ in env.agent_iter():
            tiles = int(raw.game.table.sum())
            start = CLOCK()
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            env.step(chooser.act(observation["observation"], observation["action_mask"], rng))
            out.append([tiles, (CLOCK() - start) * 1e3])
    return out


def _shares(games: int) -> dict[str, float]:
    """CPU shares of random 4-player play (seeds 0..games-1), by timers around the solver's compiled kernels, the
    arrangement at commits (its own sweep or path kernel included) and the observation; the rest is the engine, the
    adapter, the wrappers and the driver."""
    from tableenvs.rummikub import _solver_kernel as kernel
    from tableenvs.rummikub import encoder

    totals: dict[str, float] = {}

    def timed_as(name, fn):
        return timed(fn, lambda seconds: totals.__setitem__(name, totals.get(name, 0.0) + seconds))

    compiled = kernel.kernels()
    names = (
        "kernel: sweep",
        "kernel: walk",
        "kernel: prune",
        "kernel: best path",
        "kernel: exact path",
        "kernel: reach",
        "kernel: meld records",
        "kernel: score edges",  # ``solve`` from the engine's recorded sweep: greedy agents only, not in random play
        "kernel: witness",  # searches instead of a sweep on big tables
    )
    if len(compiled) > len(names):  # a kernel left out would run untimed and leave the table
        raise RuntimeError(f"_shares names {len(names)} kernels but the solver has {len(compiled)}: name them all")
    kernel._COMPILED = tuple(
        timed_as(name, fn) for name, fn in zip(names, compiled, strict=False)
    )  # older code: fewer kernels

    def arrange_once(arrange):  # the arrangement's own kernel calls are counted in its share only
        arrange = timed_as("arrange at commits (its kernels included)", arrange)

        def call(*args):
            before = {name: totals[name] for name in names if name in totals}
            try:
                return arrange(*args)
            finally:
                for name in names:
                    if name in before:
                        totals[name] = before[name]
                    else:
                        totals.pop(name, None)

        return call

    for name in ("arrange", "_arranged"):  # newer engines call ``_arranged`` at commits
        if hasattr(rules_module, name):
            setattr(rules_module, name, arrange_once(getattr(rules_module, name)))
    turn_sweep = getattr(solver_module, "TurnSweep", None)
    if hasattr(turn_sweep, "played_arrangement"):  # read off the commit check's walk
        turn_sweep.played_arrangement = arrange_once(turn_sweep.played_arrangement)
    for name in ("fill", "fill_observation"):  # newer encoders: the adapter calls ``fill_observation`` (an alias)
        if hasattr(encoder.Encoder, name):
            setattr(encoder.Encoder, name, timed_as("observation", getattr(encoder.Encoder, name)))
    start = CLOCK()
    _step_times("random", games)
    total = CLOCK() - start
    return {name: value / total for name, value in totals.items()}


def _train_rate(steps: int) -> float:
    """Training agent-steps per CPU-second: MaskablePPO, ``tableenvs/Rummikub-v0`` (4 players, random opponents),
    DummyVecEnv of 4 envs, ``n_steps=256``, one thread."""
    import gymnasium
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(1)
    vec = DummyVecEnv(
        [lambda: gymnasium.make("tableenvs/Rummikub-v0", num_players=4, opponents="random") for _ in range(4)]
    )
    vec.seed(0)
    model = MaskablePPO("MlpPolicy", vec, n_steps=256, batch_size=256, seed=0, device="cpu", verbose=0)
    model.learn(256 * 4)  # warm-up: one rollout and update
    start = CLOCK()
    model.learn(steps, reset_num_timesteps=False)
    return steps / (CLOCK() - start)


def worker() -> None:
    """Answer JSON commands on stdin (this checkout's tableenvs, as found on PYTHONPATH) until EOF."""
    _play_rate(4, 0.5)  # warm-up: numba cache load, first calls
    _step_times("heuristic", 1)  # and the greedy agent's (a kernel compiled in a timed step would count there)
    print(json.dumps({"ready": tableenvs.__file__}), flush=True)
    for line in sys.stdin:
        command = json.loads(line)
        kind = command["cmd"]
        if kind == "rate":
            answer = _play_rate(command["players"], command["seconds"])
        elif kind == "tail":
            answer = _step_times(command["policy"], command["games"])
        elif kind == "shares":
            answer = _shares(command["games"])
        else:
            answer = _train_rate(command["steps"])
        print(json.dumps(answer), flush=True)


class Contender:
    """A child process running :func:`worker` on the tableenvs found at ``root``."""

    def __init__(self, label: str, root: Path):
        if not (root / "tableenvs" / "rummikub").is_dir():
            raise SystemExit(f"{root} holds no tableenvs/rummikub package (give the root of a checkout)")
        env = {**os.environ, "PYTHONPATH": str(root)}
        self.label = label
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True
        )
        ready = json.loads(self.process.stdout.readline())["ready"]
        if not ready.startswith(str(root)):
            raise SystemExit(f"{label}: the child imported {ready}, not the checkout at {root}")

    def ask(self, **command):
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def openspiel_gin_rate(seconds: float) -> float | None:
    """OpenSpiel ``gin_rummy`` (2 players): random legal play, the observation tensor built every decision."""
    try:
        import pyspiel
    except ImportError:
        return None
    return openspiel_random_play(pyspiel.load_game("gin_rummy"), seconds, "observation")


def rlcard_gin_rate(seconds: float) -> float | None:
    """RLCard ``gin-rummy`` (2 players): random legal play; every step returns the next player's encoded state."""
    try:
        import rlcard
    except ImportError:
        return None
    env = rlcard.make("gin-rummy", config={"seed": 0})
    rng = np.random.default_rng(0)
    steps = 0
    start = CLOCK()
    while CLOCK() - start < seconds:
        state, _ = env.reset()
        while not env.is_over():
            legal = list(state["legal_actions"])
            state, _ = env.step(legal[rng.integers(len(legal))])
            steps += 1
    return steps / (CLOCK() - start)


def _band_rows(label: str, times: list[list[float]]) -> list[tuple[str, str, int, np.ndarray]]:
    data = np.array(times)
    rows = []
    for low, high in TABLE_BANDS:
        ms = data[(data[:, 0] >= low) & (data[:, 0] <= high), 1]
        if ms.size:
            rows.append((label, f"{low}..{high}", ms.size, np.percentile(ms, [50, 90, 99, 100])))
    rows.append((label, "all", len(data), np.percentile(data[:, 1], [50, 90, 99, 100])))
    return rows


def compare(args) -> None:
    """The side-by-side tables: step rates (best of ``--rounds``), peers, tail, shares, training rate."""
    here = Path(__file__).resolve().parent.parent
    contenders = [Contender("this checkout", here)]
    if args.baseline:
        contenders.append(Contender(f"baseline ({args.baseline})", Path(args.baseline).resolve()))
    else:
        print("no --baseline given: this checkout only")
    peers = {
        "OpenSpiel gin_rummy 2p, observation tensor each step": openspiel_gin_rate,
        "RLCard gin-rummy 2p": rlcard_gin_rate,
    }
    best: dict[str, float] = {}
    for _ in range(args.rounds):
        for contender in contenders:
            for players in (2, 3, 4):
                key = f"{contender.label}: rummikub_v0 {players}p"
                rate = contender.ask(cmd="rate", players=players, seconds=args.seconds)
                best[key] = max(best.get(key, 0.0), rate)
        for name, measure in peers.items():
            rate = measure(args.seconds)
            if rate is not None:
                best[name] = max(best.get(name, 0.0), rate)
    print()
    print(
        f"Step rates: CPU time, random legal play through the full API, best of {args.rounds} rounds of "
        f"{args.seconds:g} s, interleaved"
    )
    print()
    print("| contender | agent-steps/s | µs/step |")
    print("| --- | ---: | ---: |")
    for key, rate in best.items():
        print(f"| {key} | {rate:,.0f} | {1e6 / rate:.0f} |")
    for name in peers:
        if name not in best:
            print(f"| {name} | not installed (pip install -e '.[bench]') | - |")
    mine = best[f"{contenders[0].label}: rummikub_v0 4p"]
    if len(contenders) > 1:
        print(f"\n4p speed-up over the baseline: {mine / best[f'{contenders[1].label}: rummikub_v0 4p']:.2f}x")
    gin = best.get("OpenSpiel gin_rummy 2p, observation tensor each step")
    if gin:
        print(f"4p rate / OpenSpiel gin_rummy rate: {mine / gin:.2f}")
    if args.tail_games:
        print()
        print(
            f"Step times (ms CPU: last() + policy + step()) of {args.tail_games} 4-player games per policy, "
            "seeds 0.., by table tiles before the step"
        )
        print()
        print("| code | policy | table tiles | steps | p50 | p90 | p99 | max |")
        print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |")
        worst = {}
        for policy in ("random", "heuristic"):
            for contender in contenders:
                times = contender.ask(cmd="tail", policy=policy, games=args.tail_games)
                for label, band, count, q in _band_rows(contender.label, times):
                    print(
                        f"| {label} | {policy} | {band} | {count} | {q[0]:.3f} | {q[1]:.3f} | {q[2]:.2f} | {q[3]:.1f} |"
                    )
                worst[(policy, contender.label)] = max(t[1] for t in times)
        if len(contenders) > 1:
            for policy in ("random", "heuristic"):
                ratio = worst[(policy, contenders[1].label)] / worst[(policy, contenders[0].label)]
                print(f"worst step, {policy}: baseline / this checkout = {ratio:.2f}x")
    if args.share_games:
        print()
        print(f"CPU shares, random 4-player play, {args.share_games} games (timers around each part)")
        for contender in contenders:
            shares = contender.ask(cmd="shares", games=args.share_games)
            rest = 1.0 - sum(shares.values())
            text = ", ".join(f"{k} {100 * v:.0f}%" for k, v in shares.items())
            print(f"- {contender.label}: {text}; the rest {100 * rest:.0f}%")
    if args.train_steps:
        print()
        print(
            f"MaskablePPO training rate, tableenvs/Rummikub-v0 (4 players, random opponents), DummyVecEnv x4, "
            f"{args.train_steps} steps after a warm-up rollout, CPU time, 1 torch thread"
        )
        for contender in contenders:
            print(f"- {contender.label}: {contender.ask(cmd='train', steps=args.train_steps):,.0f} steps/s")
    for contender in contenders:
        contender.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games per speed measurement")
    parser.add_argument("--eval-games", type=int, default=0, help="greedy-vs-random games per player count")
    parser.add_argument("--compare", action="store_true", help="the side-by-side tables instead")
    parser.add_argument("--baseline", help="root of another checkout to measure side by side (with --compare)")
    parser.add_argument("--rounds", type=int, default=5, help="rate rounds (best of), with --compare")
    parser.add_argument("--seconds", type=float, default=2.0, help="CPU seconds per rate round, with --compare")
    parser.add_argument("--tail-games", type=int, default=200, help="4p games per policy for step times (0: none)")
    parser.add_argument("--share-games", type=int, default=60, help="games for the CPU shares (0: none)")
    parser.add_argument("--train-steps", type=int, default=0, help="MaskablePPO steps to time (0: none)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker()
        return
    if args.compare:
        compare(args)
        return

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
