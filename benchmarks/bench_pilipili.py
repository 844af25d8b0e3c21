"""Pili Pili speed against OpenSpiel's ``oh_hell`` (5 players), and the heuristic against random play.

Speed (default): random play through the full wrapped AEC API of ``pilipili_v0`` (``env.last()``, the
action mask from the observation, ``env.step``), with the standard missions and with ``missions="none"``;
the same loop on the unwrapped env (``tableenvs.make_raw``) to show what PettingZoo's wrapper stack
(``TerminateIllegalWrapper``, ``AssertOutOfBoundsWrapper``, ``OrderEnforcingWrapper``) costs; and
OpenSpiel's ``oh_hell`` with 5 players (``information_state_tensor()`` and ``legal_actions()`` built at
each decision, chance nodes sampled), all in the same run. Each contender runs ``--repeats`` times for
``--seconds`` CPU-seconds (``benchmarks/common.py``), interleaved; the table shows the median agent-steps
(decisions) per CPU-second and the ratio to OpenSpiel. Needs ``pip install open-spiel`` (the ``bench`` extra).

Heuristic (``--heuristic-games N``): N games of 5 players, one heuristic seat (rotating) against four
random seats, standard missions and ``missions="none"``; win share and chilis per round with 95% intervals.

    python benchmarks/bench_pilipili.py [--seconds 3] [--repeats 3] [--heuristic-games 1000]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import numpy as np
from common import openspiel_random_play, random_play

import tableenvs
from tableenvs.evaluation.ratings import mean_interval
from tableenvs.pilipili.agents import HeuristicPolicy
from tableenvs.pilipili.env import raw_env
from tableenvs.policies import RandomPolicy, play_game


def pilipili_steps_per_second(seconds: float, missions: str, seed: int = 0, wrapped: bool = True) -> float:
    make = tableenvs.make if wrapped else tableenvs.make_raw
    return random_play(make("pilipili_v0", num_players=5, missions=missions), seconds, seed=seed).steps_per_second


def oh_hell_steps_per_second(seconds: float, seed: int = 0) -> float:
    import pyspiel

    return openspiel_random_play(pyspiel.load_game("oh_hell", {"players": 5}), seconds, "information_state", seed=seed)


def speed(seconds: float, repeats: int) -> None:
    contenders = {
        "pilipili_v0, 5 players, standard missions": lambda: pilipili_steps_per_second(seconds, "standard"),
        'pilipili_v0, 5 players, missions="none"': lambda: pilipili_steps_per_second(seconds, "none"),
        "pilipili_v0 unwrapped (make_raw), standard missions": lambda: pilipili_steps_per_second(
            seconds, "standard", wrapped=False
        ),
        "OpenSpiel oh_hell, 5 players": lambda: oh_hell_steps_per_second(seconds),
    }
    results: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(repeats):
        for name, run in contenders.items():
            results[name].append(run())
    medians = {name: statistics.median(values) for name, values in results.items()}
    peer = medians["OpenSpiel oh_hell, 5 players"]
    print(f"# {time.strftime('%Y-%m-%d')}, Python {platform.python_version()}, {repeats} x {seconds:g} s, median")
    print("| contender | agent-steps/s | ratio to oh_hell |")
    print("|---|---:|---:|")
    for name, value in medians.items():
        print(f"| {name} | {value:,.0f} | {value / peer:.2f} |")


def interval_text(values: list[float]) -> str:
    mean, low, _ = mean_interval(values)
    return f"{mean:.3f} ± {mean - low:.3f}"


def heuristic_vs_random(games: int, missions: str, num_players: int = 5, seed: int = 0) -> None:
    env = raw_env(num_players=num_players, missions=missions)
    heuristic, random_policy = HeuristicPolicy(env), RandomPolicy(env)
    rng = np.random.default_rng(seed)
    win_share, heuristic_chilis, random_chilis = [], [], []
    for g in range(games):
        seat = g % num_players
        seats = [heuristic if s == seat else random_policy for s in range(num_players)]
        play_game(env, seats, seed=seed * 1_000_003 + g, rng=rng)
        game = env.game
        win_share.append(1 / len(game.winners) if seat in game.winners else 0.0)
        heuristic_chilis.append(game.chilis[seat] / game.rounds_completed)
        random_chilis.extend(game.chilis[s] / game.rounds_completed for s in range(num_players) if s != seat)
    print(
        f"| {missions} | {games} | {interval_text(win_share)} (fair share {1 / num_players:.3f}) | "
        f"{interval_text(heuristic_chilis)} | {interval_text(random_chilis)} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--heuristic-games", type=int, default=0, help="also evaluate the heuristic (N games)")
    parser.add_argument("--no-speed", action="store_true", help="skip the speed comparison")
    args = parser.parse_args()
    if not args.no_speed:
        speed(args.seconds, args.repeats)
    if args.heuristic_games:
        print()
        print("| missions | games | heuristic win share | heuristic chilis/round | random chilis/round |")
        print("|---|---:|---|---|---|")
        for missions in ("standard", "none"):
            heuristic_vs_random(args.heuristic_games, missions)


if __name__ == "__main__":
    main()
