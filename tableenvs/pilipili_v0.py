"""Pili Pili (``pilipili_v0``) as a PettingZoo classic module.

``from tableenvs import pilipili_v0; pilipili_v0.env(**options)`` is the wrapped env, the same as
``tableenvs.make("pilipili_v0", **options)``; ``pilipili_v0.raw_env`` is the unwrapped class.
The game itself lives in ``tableenvs/pilipili/``; why importing this module also
declares the env to PettingZoo's ``api_test``:
:mod:`tableenvs.classic`.
"""

from tableenvs.classic import classic_module

env, raw_env = classic_module("pilipili_v0")

__all__ = ["env", "raw_env"]
