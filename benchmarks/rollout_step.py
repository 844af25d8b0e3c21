"""Search rollouts with the trusted step against the checked one, in the same run.

A rollout plays actions it knows are legal (the root's, the tree's, the heuristic's ``act_in_world``, a uniform
choice among the legal actions), so it steps the sampled world with ``step_trusted``: no mask is built to check
the action and no text is written to the event log (:mod:`tableenvs.policies.rollouts`). This script plays, per
game, the same search decisions at positions of seeded heuristic games twice, once as before (``step_trusted``
replaced by the checked ``step``) and once as now, alternating position by position so that the machine's load
falls on both alike; it asserts that both choose the same action with the same simulations, and prints CPU time per
decision of each and their ratio. ``--write-docs`` puts the table, with the date and the machine, in
docs/benchmarks.md.

Run: ``python benchmarks/rollout_step.py [--game llama_party_v0 ...] [--positions 12] [--write-docs]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np
from common import CLOCK, replace_block

import tableenvs
from tableenvs.core.table_env import TableEnv
from tableenvs.policies import make_policy

#: Per game: players and options (those of the search rows of docs/agents.md) and the search specs timed.
GAMES = {
    "pilipili_v0": (4, {}, ("search", "search:mode=ismcts:sims=100")),
    "llama_party_v0": (4, {}, ("search", "search:mode=ismcts:sims=100")),
    "rummikub_v0": (2, {"max_turns": 200}, ("search",)),
}
DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
BEGIN = "<!-- rollout_step: begin (written by benchmarks/rollout_step.py --write-docs) -->"
END = "<!-- rollout_step: end -->"
TRUSTED = TableEnv.step_trusted


def checked_step(self: TableEnv, action: int) -> None:
    self.step(action)


def positions(name: str, players: int, options: dict, count: int) -> list[TableEnv]:
    """``count`` positions with a choice for the seat to act, from heuristic games of seeds 0, 1, ..."""
    found: list[TableEnv] = []
    seed = 0
    while len(found) < count:
        env = tableenvs.make_raw(name, num_players=players, **options)
        heuristic = make_policy("heuristic", env)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        step = 0
        while not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
            seen = env.observe(env.agent_selection)
            if step % 11 == 5 and seen["action_mask"].sum() > 1 and len(found) < count:
                found.append(env.clone())
            env.step(heuristic.act(seen["observation"], seen["action_mask"], rng))
            step += 1
        seed += 1
    return found


def decide(spec: str, position: TableEnv, trusted: bool) -> tuple[int, int, float]:
    """(action, simulations, CPU seconds) of one decision of ``spec`` at ``position``, with the trusted step or not."""
    TableEnv.step_trusted = TRUSTED if trusted else checked_step  # type: ignore[method-assign]
    try:
        env = position.clone()
        policy = make_policy(spec, env)
        seen = env.observe(env.agent_selection)
        start = CLOCK()
        action = policy.act(seen["observation"], seen["action_mask"], np.random.default_rng(7))
        return action, getattr(policy, "last_simulations", 0), CLOCK() - start
    finally:
        TableEnv.step_trusted = TRUSTED  # type: ignore[method-assign]


def measure(name: str, spec: str, found: list[TableEnv]) -> dict:
    times = {True: 0.0, False: 0.0}
    simulations = 0
    for index, position in enumerate(found):
        order = (True, False) if index % 2 else (False, True)
        results = {trusted: decide(spec, position, trusted) for trusted in order}
        (a, sims, _), (b, sims_b, _) = results[False], results[True]
        assert (a, sims) == (b, sims_b), f"{name} {spec} position {index}: checked {a, sims}, trusted {b, sims_b}"
        simulations += sims
        for trusted, (_, _, seconds) in results.items():
            times[trusted] += seconds
    n = len(found)
    return {
        "game": name,
        "spec": spec,
        "decisions": n,
        "checked_ms": 1000 * times[False] / n,
        "trusted_ms": 1000 * times[True] / n,
        "ratio": times[False] / times[True],
        "sims_per_s_checked": simulations / times[False],
        "sims_per_s_trusted": simulations / times[True],
    }


def table(rows: list[dict]) -> str:
    lines = [
        "| game | search | decisions | checked step: ms / decision (sims / CPU s) | trusted step: ms / decision "
        "(sims / CPU s) | speed-up |",
        "|---|---|---:|---|---|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['game']} | `{r['spec']}` | {r['decisions']} | {r['checked_ms']:.0f} ({r['sims_per_s_checked']:.0f}) "
            f"| {r['trusted_ms']:.0f} ({r['sims_per_s_trusted']:.0f}) | {r['ratio']:.2f}x |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", action="append", choices=sorted(GAMES), help="a game (repeat; default all)")
    parser.add_argument("--positions", type=int, default=12, help="decisions per game and search")
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/benchmarks.md")
    args = parser.parse_args()
    rows = []
    for name in args.game or GAMES:
        players, options, specs = GAMES[name]
        found = positions(name, players, options, args.positions)
        for spec in specs:
            rows.append(measure(name, spec, found))
            print(table(rows[-1:]).splitlines()[-1], flush=True)
    text = table(rows)
    print(text)
    if args.write_docs:
        load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
        stamp = (
            f"Run on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()}, {os.cpu_count()} "
            f"cores, load average {load} at the end (CPU time of this process; both variants alternate position by "
            f"position, so the load falls on both): `python benchmarks/rollout_step.py --positions {args.positions}`. "
            "Every decision chose the same action with the same number of simulations both ways."
        )
        replace_block(DOCS, BEGIN, END, f"{stamp}\n\n{text}")


if __name__ == "__main__":
    main()
