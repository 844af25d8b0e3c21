"""Llama Party as a PettingZoo classic module: ``env(**options)``, ``raw_env`` (how: :mod:`tableenvs.classic`)."""

from tableenvs.classic import classic_module

env, raw_env = classic_module("llama_party_v0")
