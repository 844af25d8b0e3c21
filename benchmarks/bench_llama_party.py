"""Benchmark: random-play agent-steps per second of llama_party_v0 against PettingZoo's leduc_holdem_v4.

Both envs are driven the same way, through the full wrapped AEC API as a user would: ``agent_iter()``,
``last()`` (observation built every decision), the action mask read from it, a uniformly random legal action,
``step()``, the dead-agent steps at the end, ``reset(seed=...)`` between games. An agent-step is one decision
(dead steps are not counted but their time is); a second figure leaves out the time spent in ``reset``,
which dominates leduc's 2..3-decision games. Time is this process's CPU time (``time.process_time``), so
other jobs on the shared machine slow neither env down in the figures; rounds of the envs are interleaved and
the median of ``--repeats`` timings is reported.

Run: ``python benchmarks/bench_llama_party.py [--seconds 2 --repeats 5]``
(needs ``pip install rlcard pygame`` for PettingZoo's leduc_holdem_v4).
"""

from __future__ import annotations

import argparse
import platform
import statistics

from common import random_play


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per timing")
    parser.add_argument("--repeats", type=int, default=5, help="timings per env (median reported)")
    args = parser.parse_args()

    from pettingzoo.classic import leduc_holdem_v4

    import tableenvs

    candidates = {
        "leduc_holdem_v4 (PettingZoo)": leduc_holdem_v4.env,
        **{
            f"llama_party_v0, {n} players": (lambda n=n: tableenvs.make("llama_party_v0", num_players=n))
            for n in (2, 3, 4)
        },
    }
    rates: dict[str, list[float]] = {name: [] for name in candidates}
    play_rates: dict[str, list[float]] = {name: [] for name in candidates}
    games: dict[str, int] = dict.fromkeys(candidates, 0)
    decisions: dict[str, int] = dict.fromkeys(candidates, 0)
    for repeat in range(args.repeats):
        for name, make_env in candidates.items():
            result = random_play(make_env(), args.seconds, seed=1000 * repeat)
            rate, play_rate, played, steps = (
                result.steps_per_second,
                result.steps_per_second_excluding_reset,
                result.games,
                result.steps,
            )
            rates[name].append(rate)
            play_rates[name].append(play_rate)
            games[name] += played
            decisions[name] += steps

    peer = statistics.median(rates["leduc_holdem_v4 (PettingZoo)"])
    peer_play = statistics.median(play_rates["leduc_holdem_v4 (PettingZoo)"])
    print(f"python {platform.python_version()}, {args.repeats} x {args.seconds:g} CPU-s per env, interleaved, median")
    print("| env | agent-steps per CPU-s | min..max | vs leduc | excluding reset | vs leduc | games | steps/game |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, values in rates.items():
        median = statistics.median(values)
        play = statistics.median(play_rates[name])
        spread = f"{min(values):,.0f}..{max(values):,.0f}"
        per_game = decisions[name] / games[name]
        print(
            f"| {name} | {median:,.0f} | {spread} | {median / peer:.2f}x | {play:,.0f} | {play / peer_play:.2f}x "
            f"| {games[name]} | {per_game:.1f} |"
        )


if __name__ == "__main__":
    main()
