"""Training, by job: the SB3 job (``job``: ``tableenvs train``), the single-agent view (``single_agent``), self-play
(``selfplay``), the strong recipe (``recipe``) and its clone step (``distill``), and RLlib (``rllib``).

Where you are: ``tableenvs/training/``. Nothing here is imported by ``import tableenvs``; the modules that need the
``train`` extra (Stable-Baselines3, torch) import it themselves, so this package's ``__init__`` imports nothing.
"""
