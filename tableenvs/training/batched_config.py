"""The settings of the batched masked-PPO trainer (:mod:`tableenvs.training.batched`), checked before anything is built.

Where you are: ``tableenvs/training/``, beside :mod:`tableenvs.training.batched` (the trainer) as
:mod:`tableenvs.training.config` is beside :mod:`tableenvs.training.job`. Nothing here needs torch. Units: samples,
rollouts and minibatches count learner decisions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tableenvs.core.registry import spec as game_spec
from tableenvs.core.validation import check_at_least


@dataclass
class BatchedConfig:
    """Settings of :class:`BatchedTrainer`; every value is checked here (a one-line ``ValueError`` naming it).

    ``samples``: learner decisions to train for (the last rollout is whole, so a run may go a little over);
    ``rollout``: decisions collected before each update (at least: games in progress are finished);
    ``minibatch``: decisions per gradient step; ``epochs``: passes over each rollout; ``hidden``: the actor's and the
    critic's hidden layer sizes; ``opponents``: None for self-play (every seat learns), else a policy name for the
    other seats; ``learner_seats``: with opponents, how many seats of each table the learner plays (below the number
    of players); ``value_warmup``: first samples during which only the critic learns; ``reward_scale``: multiplies
    rewards for the critic (None: from the first rollout); ``start``: a numpy policy file (ReLU, no input offset or
    candidates, made for this game and options; derived inputs it reads are kept) the actor starts from, its layers
    and input scale included (``hidden`` then sizes the critic only), e.g. the strong recipe's clone."""

    game: str
    samples: int = 200_000
    options: dict[str, Any] = field(default_factory=dict)
    n_envs: int = 64
    rollout: int = 8192
    minibatch: int = 2048
    epochs: int = 4
    hidden: tuple[int, ...] = (128, 128)
    learning_rate: float = 2e-3
    gamma: float = 1.0
    gae_lambda: float = 0.9
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    reward_scale: float | None = None
    opponents: str | None = None
    learner_seats: int = 1
    value_warmup: int = 0
    start: str | None = None
    warmup_games: int = 8
    seed: int = 0

    def __post_init__(self) -> None:
        game_spec(self.game)  # unknown name: ValueError listing the valid ones
        if not isinstance(self.options, dict):
            raise ValueError(f"options must be a dict of game options, got {self.options!r}")
        for name in ("samples", "n_envs", "rollout", "minibatch", "epochs"):
            check_at_least(name, getattr(self, name), 1)
        check_at_least("warmup_games", self.warmup_games, 0)
        check_at_least("value_warmup", self.value_warmup, 0)
        check_at_least("learner_seats", self.learner_seats, 1)
        if self.learner_seats != 1 and self.opponents is None:
            raise ValueError(f"learner_seats={self.learner_seats} needs opponents (without them every seat learns)")
        check_at_least("seed", self.seed, 0)
        self.hidden = tuple(check_at_least("hidden[]", size, 1) for size in self.hidden)
        for name, low, high in (
            ("learning_rate", 0.0, None),
            ("gamma", 0.0, 1.0),
            ("gae_lambda", 0.0, 1.0),
            ("clip_range", 0.0, None),
            ("ent_coef", None, None),
            ("vf_coef", 0.0, None),
            ("max_grad_norm", 0.0, None),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
                raise ValueError(f"{name} must be a finite number, got {value!r}")
            if (low is not None and value < low) or (high is not None and value > high):
                raise ValueError(f"{name} must be in [{low}, {high if high is not None else 'inf'}], got {value!r}")
        if self.learning_rate <= 0 or self.clip_range <= 0 or self.max_grad_norm <= 0:
            raise ValueError("learning_rate, clip_range and max_grad_norm must be > 0")
        if self.reward_scale is not None and not (
            isinstance(self.reward_scale, (int, float)) and np.isfinite(self.reward_scale) and self.reward_scale > 0
        ):
            raise ValueError(f"reward_scale must be a positive number or None, got {self.reward_scale!r}")
        if self.opponents is not None and not isinstance(self.opponents, str):
            raise ValueError(f"opponents must be None (self-play) or a policy name, got {self.opponents!r}")
        if self.start is not None:
            if not isinstance(self.start, (str, Path)):
                raise ValueError(f"start must be the path of a numpy policy file or None, got {self.start!r}")
            self.start = str(self.start)
