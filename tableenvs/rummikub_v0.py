"""Rummikub (``rummikub_v0``) as a PettingZoo classic module.

``from tableenvs import rummikub_v0; rummikub_v0.env(**options)`` is the wrapped env, the same as
``tableenvs.make("rummikub_v0", **options)``; ``rummikub_v0.raw_env`` is the unwrapped class.
The game itself lives in ``tableenvs/rummikub/``; why importing this module also
declares the env to PettingZoo's ``api_test``:
:mod:`tableenvs.classic`.
"""

from tableenvs.classic import classic_module

env, raw_env = classic_module("rummikub_v0")

__all__ = ["env", "raw_env"]
