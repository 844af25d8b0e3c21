"""Benchmark: the state API against ``copy.deepcopy``, per game and player count.

For each game and player count, a raw env is played at random (seeded) to the middle of a game; then, in the
same run and on the same state, the CPU time (``time.process_time``) of ``copy.deepcopy(env)`` and of
``env.clone()`` is measured (median of ``--repeats`` timings of a batch each), and of the save/restore path:
``json.dumps(env.get_state())`` and ``env.set_state(json.loads(text))`` into a second env. The table lists
microseconds per call and the deepcopy / clone ratio.

Run: ``python benchmarks/bench_state.py [--repeats 7 --seconds 0.2]``
"""

from __future__ import annotations

import argparse
import copy
import json
import platform
import statistics

import numpy as np
from common import CLOCK

import tableenvs

CASES = [
    ("pilipili_v0", 3),
    ("pilipili_v0", 5),
    ("pilipili_v0", 8),
    ("llama_party_v0", 2),
    ("llama_party_v0", 3),
    ("llama_party_v0", 4),
    ("rummikub_v0", 2),
    ("rummikub_v0", 4),
]


def mid_game(name: str, players: int, seed: int = 0):
    """A raw env played at random to half the length of its (seeded) game."""

    def run(limit: int | None):
        env = tableenvs.make_raw(name, num_players=players)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        steps = 0
        while not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
            if limit is not None and steps >= limit:
                break
            env.step(int(rng.choice(env.legal_actions())))
            steps += 1
        env.observe(env.agent_selection)  # caches warm, as in play
        return env, steps

    _, length = run(None)
    return run(length // 2)[0]


def per_call_us(function, seconds: float, repeats: int) -> float:
    """Median over ``repeats`` batches of the CPU microseconds per call (batch size set to last ~``seconds``)."""
    start = CLOCK()
    calls = 0
    while CLOCK() - start < seconds / 4 or calls < 3:
        function()
        calls += 1
    batch = max(3, int(calls * 4))
    timings = []
    for _ in range(repeats):
        start = CLOCK()
        for _ in range(batch):
            function()
        timings.append((CLOCK() - start) / batch * 1e6)
    return statistics.median(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=0.2, help="CPU seconds per timing batch")
    parser.add_argument("--repeats", type=int, default=7, help="batches per figure (median reported)")
    args = parser.parse_args()
    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}")
    header = (
        f"{'game':<16} {'players':>7} {'deepcopy us':>12} {'clone us':>9} {'ratio':>6} "
        f"{'get_state+json us':>18} {'json+set_state us':>18} {'record bytes':>13}"
    )
    print(header)
    print("-" * len(header))
    for name, players in CASES:
        env = mid_game(name, players)
        target = tableenvs.make_raw(name, num_players=players)
        text = json.dumps(env.get_state())
        deep = per_call_us(lambda env=env: copy.deepcopy(env), args.seconds, args.repeats)
        clone = per_call_us(env.clone, args.seconds, args.repeats)
        save = per_call_us(lambda env=env: json.dumps(env.get_state()), args.seconds, args.repeats)
        load = per_call_us(lambda t=target, s=text: t.set_state(json.loads(s)), args.seconds, args.repeats)
        print(
            f"{name:<16} {players:>7} {deep:>12.1f} {clone:>9.1f} {deep / clone:>5.0f}x "
            f"{save:>18.1f} {load:>18.1f} {len(text):>13}"
        )


if __name__ == "__main__":
    main()
