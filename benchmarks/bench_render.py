"""What a picture costs: ``render_svg()`` and ``render_mode="rgb_array"`` against the text view and a step.

python benchmarks/bench_render.py [--states 40] [--repeats 3]

For each game (default options), ``--states`` positions are taken from random games; on each, CPU time
(``time.process_time``) of: one random decision through the raw env (``step`` on a clone), ``render()`` as ``ansi``
text, ``render_svg()`` (the god view), ``render()`` as ``rgb_array`` (SVG plus rasterising with resvg-py), and the
HTML viewer's share of one step (``render_svg`` of the god view and every seat). Milliseconds per call, and each as
a multiple of the step, in the same run. Then the replay page of one game between heuristic agents (seed 1): its
steps, size and CPU seconds to write. Needs the ``render`` extra. Results: ``docs/benchmarks.md`` (Pictures).
"""

from __future__ import annotations

import argparse

import numpy as np
from common import CLOCK

import tableenvs
from tableenvs.core.table_env import TableEnv
from tableenvs.play.records import record_game
from tableenvs.play.viewer import viewer_html

GAMES = ("pilipili_v0", "llama_party_v0", "rummikub_v0")


def positions(name: str, count: int, seed: int) -> list[TableEnv]:
    """``count`` positions of random games (each a clone, with the game still running)."""
    rng = np.random.default_rng(seed)
    env = tableenvs.make_raw(name, render_mode="rgb_array")
    found: list[TableEnv] = []
    games = 0
    while len(found) < count:
        env.reset(seed=seed + games)
        games += 1
        while env.outcome() is None and len(found) < count:
            if rng.random() < 0.05:
                found.append(env.clone())
            env.step(int(rng.choice(env.legal_actions())))
    return found


def per_call(states: list[TableEnv], call, repeats: int) -> float:
    """CPU milliseconds per ``call(state)``, the best of ``repeats`` passes over ``states``."""
    best = float("inf")
    for _ in range(repeats):
        start = CLOCK()
        for state in states:
            call(state)
        best = min(best, (CLOCK() - start) / len(states))
    return best * 1000


def step_once(state: TableEnv) -> None:
    state.clone().step(state.legal_actions()[0])


def clone_only(state: TableEnv) -> None:
    state.clone()


def ansi(state: TableEnv) -> None:
    state._render_text()


def viewer_step(state: TableEnv) -> None:
    for agent in (None, *state.possible_agents):
        state.render_svg(agent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print("CPU ms per call (in brackets: as a multiple of one step)")
    print(f"{'game':<16}{'step':>8}" + "".join(f"{title:>20}" for title in ("ansi", "svg", "rgb_array", "viewer/step")))
    for name in GAMES:
        states = positions(name, args.states, seed=0)
        clone = per_call(states, clone_only, args.repeats)
        step = per_call(states, step_once, args.repeats) - clone  # the clone is not part of a step
        figures = [
            per_call(states, ansi, args.repeats),
            per_call(states, lambda s: s.render_svg(), args.repeats),
            per_call(states, lambda s: s.render(), args.repeats),
            per_call(states, viewer_step, args.repeats),
        ]
        cells = "".join(f"{f'{f:.2f} ({f / step:.0f}x)':>20}" for f in figures)
        print(f"{name:<16}{step:>8.3f}{cells}")
    print("\nreplay page (tableenvs replay --html) of one heuristic game, seed 1, default options")
    for name in GAMES:
        record = record_game(name, "heuristic", seed=1)
        start = CLOCK()
        page = viewer_html(record)
        seconds = CLOCK() - start
        print(f"{name:<16}{len(record.steps):>5} steps {len(page.encode()) / 1024:>8.0f} KB {seconds:>6.2f} CPU s")


if __name__ == "__main__":
    main()
