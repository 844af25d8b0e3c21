"""Every way to make an environment by name: tableenvs, PettingZoo's registry and Gymnasium's.

python examples/make_by_name.py
"""

import gymnasium
import numpy as np
import pettingzoo

import tableenvs  # registers every game in PettingZoo's and Gymnasium's registries


def main() -> None:
    print("tableenvs names:", ", ".join(tableenvs.names()))

    # The PettingZoo AEC env, wrapped as PettingZoo classic envs are (illegal move: game over, -1 to the mover) ...
    aec = tableenvs.make("pilipili_v0", num_players=4, missions="none")
    # ... the raw env (an illegal move raises an error naming the legal ones) ...
    raw = tableenvs.make_raw("pilipili_v0", num_players=4)
    # ... and the same env through PettingZoo's registry.
    same = pettingzoo.make("aec", "tableenvs/PiliPili-v0", num_players=4)
    for env in (aec, raw, same):
        env.reset(seed=0)
        print(f"{type(env).__name__:>24}: agents {env.agents}, {env.action_space(env.agents[0]).n} actions")

    # The single-agent Gymnasium view: one learner seat, the other seats played by opponents inside step().
    env = gymnasium.make("tableenvs/PiliPili-v0", num_players=4, opponents="heuristic", seat="rotate")
    observation, info = env.reset(seed=0)
    mask = env.get_wrapper_attr("action_masks")()
    print(f"gymnasium: observation {observation.shape}, {int(mask.sum())} legal actions, learner seat {info['seat']}")
    rng = np.random.default_rng(0)
    total, done = 0.0, False
    while not done:
        action = int(rng.choice(np.flatnonzero(env.get_wrapper_attr("action_masks")())))
        observation, reward, terminated, truncated, info = env.step(action)
        total += reward
        done = terminated or truncated
    print(f"gymnasium: a random learner finished the game with total reward {total:+g}")


if __name__ == "__main__":
    main()
