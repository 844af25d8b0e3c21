"""Train RLlib's PPO on a tableenvs game through RLlib's PettingZoo wrapper (one policy shared by every seat).

Needs Ray RLlib (``pip install "ray[rllib]"``; it pins its own gymnasium, so a separate virtual environment is
wise) and torch. Run, e.g.::

    python examples/rllib_pettingzoo.py --env llama_party_v0 --num-players 2 --iterations 3

What it shows:

* ``ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv`` takes our AEC env as it is (``tableenvs.make(...)``);
* RLlib's example ``ActionMaskingTorchRLModule`` reads the legal actions from a Dict observation with the keys
  ``"action_mask"`` and ``"observations"``, so :class:`RLlibKeys` (a PettingZoo ``BaseWrapper``) renames our
  ``"observation"`` key and gives the mask as float32 (the module takes its log);
* after training, the learned module is turned into a tableenvs policy and evaluated against random play with
  :func:`tableenvs.evaluation.evaluate` (seats rotated, as everywhere else).

The rewards RLlib reports are per agent step summed over all seats of an episode (with the default
``reward="score"`` of Llama Party, the points of every player), so they are not a win rate.
"""

from __future__ import annotations

import argparse

import numpy as np
from gymnasium import spaces
from pettingzoo.utils import BaseWrapper

import tableenvs


class RLlibKeys(BaseWrapper):
    """Observations as ``{"action_mask": float32 mask, "observations": the game's vector}``."""

    def __init__(self, env):
        super().__init__(env)
        self._spaces = {}
        for agent in env.unwrapped.possible_agents:
            space = env.observation_space(agent)
            mask = space["action_mask"]
            self._spaces[agent] = spaces.Dict(
                {"action_mask": spaces.Box(0.0, 1.0, mask.shape, np.float32), "observations": space["observation"]}
            )

    def observation_space(self, agent):
        return self._spaces[agent]

    def observe(self, agent):
        observation = self.env.observe(agent)
        return {
            "action_mask": observation["action_mask"].astype(np.float32),
            "observations": observation["observation"],
        }


def make_env(config: dict):
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    return PettingZooEnv(RLlibKeys(tableenvs.make(config["env"], num_players=config["num_players"])))


class ModulePolicy:
    """A trained RLlib module as a tableenvs policy: the most likely legal action."""

    name = "rllib_ppo"

    def __init__(self, module):
        self.module = module

    def act(self, observation, action_mask, rng):
        import torch
        from ray.rllib.core.columns import Columns

        batch = {
            Columns.OBS: {
                "observations": torch.as_tensor(observation[None], dtype=torch.float32),
                "action_mask": torch.as_tensor(action_mask[None], dtype=torch.float32),
            }
        }
        with torch.no_grad():
            logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0].numpy()
        return int(np.argmax(np.where(action_mask > 0, logits, -np.inf)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="llama_party_v0", choices=tableenvs.names())
    parser.add_argument("--num-players", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--batch", type=int, default=2000, help="train batch size (agent steps per iteration)")
    parser.add_argument("--eval-games", type=int, default=100, help="games against random after training (0: none)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import ray
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    from ray.tune.registry import register_env

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    register_env("tableenvs", make_env)
    config = (
        PPOConfig()
        .environment("tableenvs", env_config={"env": args.env, "num_players": args.num_players})
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kwargs: "shared")
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    "shared": RLModuleSpec(
                        module_class=ActionMaskingTorchRLModule,
                        model_config={"head_fcnet_hiddens": [128, 128], "head_fcnet_activation": "relu"},
                    )
                }
            )
        )
        .env_runners(num_env_runners=1)
        .training(train_batch_size=args.batch, minibatch_size=256, num_epochs=4, lr=3e-4)
        .debugging(seed=args.seed)
    )
    algo = config.build_algo()
    for iteration in range(1, args.iterations + 1):
        result = algo.train()
        runners = result["env_runners"]
        print(
            f"iteration {iteration}: {runners['num_env_steps_sampled_lifetime']} agent steps, "
            f"{runners['num_episodes_lifetime']} episodes, mean episode return (all seats) "
            f"{runners['episode_return_mean']:.2f}, mean episode length {runners['episode_len_mean']:.1f}"
        )
    if args.eval_games:
        from tableenvs.evaluation import evaluate

        module = algo.get_module("shared")
        result = evaluate(
            args.env, [ModulePolicy(module), "random"], args.eval_games, num_players=args.num_players, seed=args.seed
        )
        print(result.format_table())
    algo.stop()
    ray.shutdown()


if __name__ == "__main__":
    main()
