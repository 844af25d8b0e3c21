"""Pili Pili as a PettingZoo classic module: ``env(**options)``, ``raw_env`` (how: :mod:`tableenvs.classic`)."""

from tableenvs.classic import classic_module

env, raw_env = classic_module("pilipili_v0")
