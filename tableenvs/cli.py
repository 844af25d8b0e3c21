"""The ``tableenvs`` command line.

Where you are: the console script. Sub-commands:

* ``tableenvs list`` — the environment names.
* ``tableenvs play ENV [--players N] [--agents heuristic,random] [--seed S]`` — one whole game between
  built-in agents, shown in the terminal: the table at the start, each decision and outcome as it
  happens, the table and the result at the end.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from tableenvs.policies import BUILTIN_POLICIES, make_policy
from tableenvs.registry import make, names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tableenvs", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    commands.add_parser("list", help="list the environment names")

    play = commands.add_parser("play", help="play one game between built-in agents, shown in the terminal")
    play.add_argument("env", help=f"environment name ({', '.join(names())})")
    play.add_argument("--players", type=int, default=None, help="number of players (num_players option)")
    play.add_argument(
        "--agents",
        default="heuristic",
        help=f"comma-separated policies, one per seat or one for all ({', '.join(BUILTIN_POLICIES)})",
    )
    play.add_argument("--seed", type=int, default=None, help="seed for the deal and the agents")
    play.add_argument("--quiet", action="store_true", help="print only the final table and result")

    args = parser.parse_args(argv)
    try:
        if args.command == "list":
            print("\n".join(names()))
            return 0
        return _play(args)
    except (ValueError, TypeError) as error:
        print(f"tableenvs: error: {error}", file=sys.stderr)
        return 2


def _play(args: argparse.Namespace) -> int:
    options = {"render_mode": "ansi"}
    if args.players is not None:
        options["num_players"] = args.players
    env = make(args.env, **options)
    agent_names = env.unwrapped.possible_agents
    policy_names = [name.strip() for name in args.agents.split(",") if name.strip()]
    if len(policy_names) == 1:
        policy_names *= len(agent_names)
    if len(policy_names) != len(agent_names):
        raise ValueError(f"--agents names {len(policy_names)} policies for {len(agent_names)} players")
    policies = {agent: make_policy(name, env) for agent, name in zip(agent_names, policy_names, strict=True)}
    rng = np.random.default_rng(args.seed)

    env.reset(seed=args.seed)
    seating = ", ".join(f"{agent}={name}" for agent, name in zip(agent_names, policy_names, strict=True))
    print(f"{args.env}: {seating}\n")
    print(env.render())
    totals = dict.fromkeys(agent_names, 0.0)
    shown = 0
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, _ = env.last()
        totals[agent] += reward
        action = None
        if not (terminated or truncated):
            action = policies[agent].act(observation["observation"], observation["action_mask"], rng)
        env.step(action)
        log = env.unwrapped.event_log
        if not args.quiet:
            for line in log[shown:]:
                print(f"  {line}")
        shown = len(log)
    print()
    print(env.render())
    print("total reward: " + ", ".join(f"{agent} {value:+g}" for agent, value in totals.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
