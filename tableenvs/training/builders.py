"""What the training job builds: the vectorised training envs and the SB3 learner.

Where you are: ``tableenvs/training/``, called by the job (:mod:`tableenvs.training.job`). Needs the ``train``
extra (Stable-Baselines3, sb3-contrib for MaskablePPO), imported when a learner is made.
"""

from __future__ import annotations

import signal

from tableenvs.training.config import ALGORITHMS, TrainConfig
from tableenvs.training.single_agent import OpponentPool, SingleAgentEnv


def _env_factory(config: TrainConfig):
    def make() -> SingleAgentEnv:
        import multiprocessing

        import torch

        torch.set_num_threads(1)  # in subprocess workers too: opponent models must not oversubscribe the cores
        if multiprocessing.parent_process() is not None:
            # A SubprocVecEnv worker: Ctrl-C in a terminal reaches the whole process group; the main process
            # handles it (checkpoint, then closing the workers), so a worker must not die of it first.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        if config.illegal_action is None:  # never: TrainConfig.__post_init__ chooses one
            raise ValueError("TrainConfig.illegal_action is not set")
        return SingleAgentEnv(
            config.env,
            opponents=OpponentPool([config.opponents]) if config.self_play_every else config.opponents,
            seat=config.seat,
            illegal_action=config.illegal_action,
            trust_models=config.trust_models,
            **config.options,
        )

    return make


def make_training_env(config: TrainConfig, seed: int | None = None):
    """The vectorised, monitored single-agent envs of ``config`` (seeded ``seed``, ``seed + 1``, ...; ``seed``
    defaults to ``config.seed``)."""
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    return make_vec_env(
        _env_factory(config),
        n_envs=config.num_envs,
        seed=config.seed if seed is None else seed,
        vec_env_cls=SubprocVecEnv if config.vec_env == "subproc" else DummyVecEnv,
    )


def algorithm_class(algo: str):
    """The SB3 class of an ``algo`` name (imported on demand)."""
    import importlib

    name, package = ALGORITHMS[algo]
    return getattr(importlib.import_module(package), name)


def make_model(config: TrainConfig, vec_env):
    settings = config.settings
    net_arch = settings.pop("net_arch")
    return algorithm_class(config.algo)(
        "MlpPolicy",
        vec_env,
        policy_kwargs={"net_arch": list(net_arch)},
        seed=config.seed,
        device="cpu",
        verbose=0,
        **settings,
    )
