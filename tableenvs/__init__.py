"""tableenvs: PettingZoo AEC environments for Pili Pili, Llama Party and Rummikub.

Quick use::

    import tableenvs
    env = tableenvs.make("pilipili_v0", num_players=5)
    env.reset(seed=0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        action = None if terminated or truncated else int(obs["action_mask"].nonzero()[0][0])
        env.step(action)

Importing the package registers every env in PettingZoo's registry
(``pettingzoo.make("aec", "tableenvs/PiliPili-v0")``) and its single-agent view in Gymnasium's
(``gymnasium.make("tableenvs/PiliPili-v0", opponents="heuristic")``, see :mod:`tableenvs.training.single_agent`).
Training with Stable-Baselines3 (the ``train`` extra) lives in :mod:`tableenvs.training.job`; torch is never
imported by ``import tableenvs``.
"""

from tableenvs import games as _games  # noqa: F401 (registers the games tableenvs ships)
from tableenvs.core.registry import GameSpec, make, make_raw, names, register_game, spec

__version__ = "0.2.0"

__all__ = ["GameSpec", "make", "make_raw", "names", "register_game", "spec", "__version__"]
