"""Benchmark: what a search simulation costs, per game (``tableenvs/policies/search.py``, docs/benchmarks.md "Search").

For each game (4 players; Rummikub with ``max_turns=200``), ``--positions`` positions are reached by seeded heuristic
play (every 5th decision of a game until the count is met); at each, in the same run, the CPU time
(``time.process_time``) of ``env.clone()`` and ``env.sample_world(agent, rng)`` is measured, and of one search
decision of ``--sims`` simulations with heuristic rollouts and with random rollouts (after one untimed decision at
the same position, so that caches kept across decisions, such as the Llama Party heuristic's goal memo, are warm as
they are in a tournament). The table lists microseconds per clone / sample_world, the sample_world / clone ratio,
and simulations per CPU second for each rollout policy: heuristic rollouts through the observation (``act``, the
heuristic's ``act_in_world`` hook hidden: the rate before the hook existed), through ``act_in_world`` (the rules
state, as the search runs them), random rollouts, and IS-MCTS iterations (``mode=ismcts``, heuristic rollouts).

Run: ``python benchmarks/bench_search.py [--positions 20 --sims 40] [--game llama_party_v0 ...]``;
``python benchmarks/record.py search`` runs it and writes the table into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import platform

import numpy as np
from common import CLOCK

import tableenvs
from tableenvs.policies import make_policy

GAMES = {"pilipili_v0": {}, "llama_party_v0": {}, "rummikub_v0": {"max_turns": 200}}


class ThroughObservation:
    """A heuristic with its ``act_in_world`` hook hidden: rollouts then encode and decode each observation."""

    def __init__(self, policy):
        self.policy = policy

    def act(self, observation, action_mask, rng):
        return self.policy.act(observation, action_mask, rng)


def positions(name: str, count: int, players: int = 4):
    """Raw envs at ``count`` positions with a choice (>= 2 legal actions), every 5th decision of seeded heuristic play
    at ``players`` seats."""
    found, seed = [], 0
    while len(found) < count:
        env = tableenvs.make_raw(name, num_players=players, **GAMES[name])
        heuristic = make_policy("heuristic", env)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        step = 0
        while len(found) < count:
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                break
            seen = env.observe(agent)
            if step % 5 == 0 and seen["action_mask"].sum() > 1:
                found.append(env.clone())
            env.step(heuristic.act(seen["observation"], seen["action_mask"], rng))
            step += 1
        seed += 1
    return found


def per_call(fn, repeats: int) -> float:
    start = CLOCK()
    for _ in range(repeats):
        fn()
    return (CLOCK() - start) / repeats


def rate(envs, spec: str, rng, hide_hook: bool = False) -> float:
    """Simulations per CPU second of one decision of ``spec`` at each position (after one untimed decision)."""
    spent, simulations = 0.0, 0
    for env in envs:
        policy = make_policy(spec, env)
        if hide_hook:
            policy.rollout_policy = ThroughObservation(policy.rollout_policy)
        seen = env.observe(env.agent_selection)
        policy.act(seen["observation"], seen["action_mask"], rng)  # untimed: warms caches, as in a tournament
        start = CLOCK()
        policy.act(seen["observation"], seen["action_mask"], rng)
        spent += CLOCK() - start
        simulations += policy.last_simulations
    return simulations / spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=20)
    parser.add_argument("--sims", type=int, default=40)
    parser.add_argument("--game", action="append", choices=sorted(GAMES), help="a game (repeat; default all)")
    args = parser.parse_args()
    lines = [
        f"# {platform.python_version()} on {platform.machine()}; {args.positions} positions, {args.sims} sims each",
        "| game | clone us | sample_world us | ratio | sims/s heuristic rollouts, observation (before) | sims/s "
        "heuristic rollouts, act_in_world (after) | after / before | sims/s random rollouts | IS-MCTS iterations/s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    print("\n".join(lines), flush=True)
    for name in args.game or GAMES:
        envs = positions(name, args.positions)
        rng = np.random.default_rng(0)
        clone = np.mean([per_call(env.clone, 50) for env in envs])
        world = np.mean([per_call(lambda e=env, r=rng: e.sample_world(e.agent_selection, r), 50) for env in envs])
        depth = ":depth=30" if name == "rummikub_v0" else ""
        before = rate(envs, f"search:sims={args.sims}{depth}", rng, hide_hook=True)
        after = rate(envs, f"search:sims={args.sims}{depth}", rng)
        random = rate(envs, f"search:sims={args.sims}:rollout=random{depth}", rng)
        tree = rate(envs, f"search:mode=ismcts:sims={args.sims}{depth}", rng)
        costs = f"{clone * 1e6:.0f} | {world * 1e6:.0f} | {world / clone:.1f}"
        line = f"| {name} | {costs} | {before:.0f} | {after:.0f} | {after / before:.2f}x | {random:.0f} | {tree:.0f} |"
        lines.append(line)
        print(line, flush=True)


if __name__ == "__main__":
    main()
