"""Llama Party (《羊驼派对》): secret goals, four reveals with 4-3-2-1 passing, dummy hands, letter scoring.

Where you are: the game package. ``cards.py`` (card model, deck schema, standard deck ``standard_deck.toml``),
``rules.py`` (pure rules engine), ``encoder.py`` (action ids, observation layout), ``env.py`` (the AEC adapter,
``llama_party_v0``), ``agents.py`` (the greedy ``HeuristicPolicy``). Rules and decisions: ``docs/llama_party.md``.
"""
