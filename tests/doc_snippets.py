"""Runs the Python code blocks of README.md and docs/*.md as scripts, with small budgets (used by test_docs.py).

Where you are: a test helper, run as ``python tests/doc_snippets.py OUT_JSON BLOCK.py ...`` in a scratch directory.
Each block was written to its own file; each is run as ``__main__`` with :func:`runpy.run_path`, as if pasted into a
script (so worker processes started by a block re-import that file, and a missing ``if __name__ == "__main__":``
guard fails here as it would for a user). Budgets are shrunk, not the code: every SB3 ``learn()`` runs at most
``LEARN_STEPS`` steps with one short rollout and one epoch, ``tableenvs.evaluation.evaluate`` plays at most
``EVAL_GAMES`` games, a ``SubprocVecEnv`` starts at most ``SUBPROC_ENVS`` workers (each imports torch), and torch
uses one thread. One process for all blocks: torch and SB3 are imported once.
"""

from __future__ import annotations

import json
import runpy
import sys
import time
import traceback

LEARN_STEPS = 128
EVAL_GAMES = 12
SUBPROC_ENVS = 2


def shrink_budgets() -> None:
    import tableenvs.evaluation as evaluation

    real_evaluate = evaluation.evaluate

    def evaluate(*args, **kwargs):
        if "games" in kwargs:
            kwargs["games"] = min(kwargs["games"], EVAL_GAMES)
        elif len(args) >= 3:
            args = (*args[:2], min(args[2], EVAL_GAMES), *args[3:])
        return real_evaluate(*args, **kwargs)

    evaluation.evaluate = evaluate
    try:
        import stable_baselines3.common.env_util as env_util
        import torch
        from sb3_contrib import MaskablePPO
        from stable_baselines3 import A2C, DQN, PPO
        from stable_baselines3.common.vec_env import SubprocVecEnv
    except ImportError:  # no train extra: blocks that need it fail on their own imports
        return
    torch.set_num_threads(1)
    real_make_vec_env = env_util.make_vec_env

    def make_vec_env(*args, **kwargs):
        if kwargs.get("vec_env_cls") is SubprocVecEnv and kwargs.get("n_envs", 1) > SUBPROC_ENVS:
            kwargs["n_envs"] = SUBPROC_ENVS
        return real_make_vec_env(*args, **kwargs)

    env_util.make_vec_env = make_vec_env

    def small(cls, **limits):
        real_init = cls.__init__

        def __init__(self, *args, **kwargs):
            for key, value in limits.items():
                kwargs[key] = min(kwargs.get(key, value), value)
            real_init(self, *args, **kwargs)

        cls.__init__ = __init__

    small(MaskablePPO, n_steps=32, batch_size=32, n_epochs=1)
    small(PPO, n_steps=32, batch_size=32, n_epochs=1)
    small(A2C, n_steps=8)
    small(DQN, learning_starts=32, buffer_size=1000)
    real_learn = {cls: cls.learn for cls in (MaskablePPO, PPO, A2C, DQN)}

    def capped(cls):
        def learn(self, total_timesteps, *args, **kwargs):
            return real_learn[cls](self, min(int(total_timesteps), LEARN_STEPS), *args, **kwargs)

        return learn

    for cls in real_learn:
        cls.learn = capped(cls)


def main() -> None:
    out, paths = sys.argv[1], sys.argv[2:]
    shrink_budgets()
    results = {}
    for path in paths:
        started = time.perf_counter()
        try:
            runpy.run_path(path, run_name="__main__")
            error = None
        except BaseException:  # noqa: BLE001 - reported to the test, which fails with it
            error = traceback.format_exc(limit=-8)
        results[path] = {"error": error, "seconds": time.perf_counter() - started}
    with open(out, "w") as handle:
        json.dump(results, handle)


if __name__ == "__main__":
    main()
