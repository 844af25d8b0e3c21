"""Pili Pili: bid how many tricks you will win; 36 mission cards bend the rules each round.

Where you are: the Pili Pili game package. ``rules.py`` is the pure rules engine, ``missions.py`` /
``missions.toml`` the mission deck, ``encoder.py`` the action ids and observation vector, ``env.py`` the
PettingZoo adapter (``pilipili_v0``) and ``agents.py`` the built-in heuristic. Rules and decisions:
``docs/pilipili.md``.
"""
