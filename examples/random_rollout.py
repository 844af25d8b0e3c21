"""The smallest use of the API: one game of random legal moves through the PettingZoo AEC loop.

python examples/random_rollout.py pilipili_v0 --seed 0
"""

import argparse

import numpy as np

import tableenvs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("env", nargs="?", default="pilipili_v0", help=f"one of {', '.join(tableenvs.names())}")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    env = tableenvs.make(args.env)
    env.reset(seed=args.seed)  # same seed, same game
    rng = np.random.default_rng(args.seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    decisions = 0
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, info = env.last()
        totals[agent] += reward
        if terminated or truncated:
            action = None  # every agent is stepped once with None after the game ends
        else:
            action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
            decisions += 1
        env.step(action)
    print(f"{args.env}: {decisions} decisions; total reward per agent:")
    for agent, total in totals.items():
        print(f"  {agent}: {total:+g}")


if __name__ == "__main__":
    main()
