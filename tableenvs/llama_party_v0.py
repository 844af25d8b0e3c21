"""Llama Party (``llama_party_v0``) as a PettingZoo classic module.

``from tableenvs import llama_party_v0; llama_party_v0.env(**options)`` is the wrapped env, the same as
``tableenvs.make("llama_party_v0", **options)``; ``llama_party_v0.raw_env`` is the unwrapped class.
The game itself lives in ``tableenvs/llama_party/``; why importing this module also
declares the env to PettingZoo's ``api_test``:
:mod:`tableenvs.classic`.
"""

from tableenvs.classic import classic_module

env, raw_env = classic_module("llama_party_v0")

__all__ = ["env", "raw_env"]
