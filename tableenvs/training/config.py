"""The training job's configuration: :class:`TrainConfig`, the algorithms and their default settings.

Where you are: ``tableenvs/training/``, read by the job (:mod:`tableenvs.training.job`), its checkpoints
(:mod:`tableenvs.training.checkpoints`) and reports (:mod:`tableenvs.training.reports`). Nothing here needs the
``train`` extra: a config is checked (every value named in its error) before anything is built.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from tableenvs.core.registry import spec as game_spec
from tableenvs.policies import PolicySpec, check_trusted
from tableenvs.training.single_agent import ILLEGAL_ACTION_MODES

CHECKPOINT_DIR = "checkpoint"
STATE_FILE = "state.json"

#: MaskablePPO settings used unless overridden (small nets, whole-game episodes).
DEFAULT_HYPERPARAMETERS: dict[str, Any] = {
    "learning_rate": 3e-4,
    "n_steps": 512,  # per env; with 4 envs, 2048 decisions per update
    "batch_size": 256,
    "n_epochs": 10,
    "gamma": 0.99,
    "gae_lambda": 0.95,
    "ent_coef": 0.01,
    "net_arch": [128, 128],
}

#: ``algo`` names: (SB3 class, its package).
ALGORITHMS: dict[str, tuple[str, str]] = {
    "maskable_ppo": ("MaskablePPO", "sb3_contrib"),
    "ppo": ("PPO", "stable_baselines3"),
    "a2c": ("A2C", "stable_baselines3"),
    "dqn": ("DQN", "stable_baselines3"),
}

#: Default settings per ``algo`` (PPO shares MaskablePPO's, so the two compare like for like).
ALGORITHM_HYPERPARAMETERS: dict[str, dict[str, Any]] = {
    "maskable_ppo": DEFAULT_HYPERPARAMETERS,
    "ppo": DEFAULT_HYPERPARAMETERS,
    "a2c": {
        "learning_rate": 7e-4,
        "n_steps": 8,  # per env: 32 decisions per update with 4 envs
        "gamma": 0.99,
        "gae_lambda": 1.0,
        "ent_coef": 0.01,
        "net_arch": [128, 128],
    },
    "dqn": {
        "learning_rate": 1e-4,
        "buffer_size": 20_000,  # the replay buffer goes into every checkpoint: kept small (Pili Pili: ~100 MB)
        "learning_starts": 1_000,
        "batch_size": 64,
        "gamma": 0.99,
        "train_freq": 4,
        "target_update_interval": 2_000,
        "exploration_fraction": 0.2,
        "exploration_final_eps": 0.05,
        "net_arch": [128, 128],
    },
}

#: SB3 logger output formats accepted in ``log_formats`` (``tensorboard`` needs the ``tensorboard`` package).
LOG_FORMATS = ("stdout", "csv", "json", "log", "tensorboard")


@dataclass
class TrainConfig:
    """Everything :func:`train` needs; the defaults fit a few minutes on 2 CPU cores."""

    env: str
    out: str | Path = "runs/train"
    timesteps: int = 20_000  # the quick start's budget: its curve is flat after about 10k steps
    opponents: PolicySpec | list[PolicySpec] = "random"
    seat: int | str = "rotate"
    options: dict[str, Any] = field(default_factory=dict)  # game options, e.g. {"num_players": 4}
    num_envs: int = 4
    vec_env: str = "dummy"  # "dummy" (one process) or "subproc" (one process per env)
    seed: int = 0
    eval_every: int = 4_000
    eval_games: int = 100
    final_games: int = 200
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    algo: str = "maskable_ppo"  # one of ALGORITHMS
    illegal_action: str | None = None  # SingleAgentEnv's mode; None: "raise" for maskable_ppo, else "random"
    checkpoint_every: int = 10_000  # steps between checkpoints (0: only on a signal)
    self_play_every: int = 0  # > 0: self-play, a snapshot of the learner joins the opponent pool every so many steps
    self_play_pool: int = 5  # snapshots kept in the pool (with the starting opponents)
    tensorboard: str | None = None  # a TensorBoard log directory (SB3's "tensorboard" logger format)
    log_formats: list[str] = field(default_factory=list)  # more SB3 logger formats, written to out/logs
    progress_bar: bool = True
    verbose: bool = True
    trust_models: bool = False  # load SB3 .zip opponents (pickles, which can run code)

    def __post_init__(self):
        game_spec(self.env)  # unknown name -> ValueError listing the valid ones
        for spec in self.opponents if isinstance(self.opponents, (list, tuple)) else [self.opponents]:
            check_trusted(spec, self.trust_models)
        for name in ("timesteps", "num_envs", "eval_every", "eval_games"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        for name in ("final_games", "checkpoint_every", "self_play_every", "self_play_pool"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
        if self.vec_env not in ("dummy", "subproc"):
            raise ValueError(f"vec_env must be 'dummy' or 'subproc', got {self.vec_env!r}")
        if self.self_play_every and isinstance(self.opponents, (list, tuple)):
            raise ValueError("self-play starts from one opponent spec for every seat, not a per-seat list")
        if self.algo not in ALGORITHMS:
            raise ValueError(f"algo must be one of {', '.join(ALGORITHMS)}; got {self.algo!r}")
        if self.illegal_action is None:
            self.illegal_action = "raise" if self.algo == "maskable_ppo" else "random"
        if self.illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(
                f"illegal_action must be one of {', '.join(ILLEGAL_ACTION_MODES)}; got {self.illegal_action!r}"
            )
        if self.algo != "maskable_ppo" and self.illegal_action == "raise":
            raise ValueError(
                f"{self.algo} does not read action masks, so its first illegal action would raise: use "
                "illegal_action 'random' (play a random legal action instead) or 'lose' (end the game with a penalty)"
            )
        defaults = ALGORITHM_HYPERPARAMETERS[self.algo]
        unknown = sorted(set(self.hyperparameters) - set(defaults))
        if unknown:
            raise ValueError(
                f"unknown hyperparameter(s) {', '.join(unknown)} for {self.algo}; known: {', '.join(defaults)}"
            )
        if self.timesteps < self.rollout_size():  # the learner would silently run one whole rollout anyway
            raise ValueError(
                f"--timesteps must be >= {self.rollout_size()} with --envs {self.num_envs} ({self.algo} updates "
                f"after {self.rollout_size() // self.num_envs} steps per env), got {self.timesteps}; use fewer "
                "--envs for a shorter run"
            )
        self.log_formats = list(self.log_formats)
        bad = [f for f in self.log_formats if f not in LOG_FORMATS]
        if bad:
            raise ValueError(f"unknown log format(s) {', '.join(bad)}; known: {', '.join(LOG_FORMATS)}")

    @property
    def settings(self) -> dict[str, Any]:
        """The algorithm's hyperparameters: its defaults overridden by ``hyperparameters``."""
        return {**ALGORITHM_HYPERPARAMETERS[self.algo], **self.hyperparameters}

    @property
    def algo_name(self) -> str:
        return ALGORITHMS[self.algo][0]

    def rollout_size(self) -> int:
        """Steps collected between updates: the budget is run in whole multiples of this."""
        settings = self.settings
        if "n_steps" in settings:  # on-policy: whole rollouts of n_steps per env
            return int(settings["n_steps"]) * self.num_envs
        frequency = settings.get("train_freq", 1)  # DQN: train_freq steps of every env between updates
        if isinstance(frequency, (tuple, list)):
            frequency = frequency[0] if len(frequency) == 2 and frequency[1] == "step" else 1
        return int(frequency) * self.num_envs

    def steps_to_run(self) -> int:
        """The steps the learner actually runs for a budget of ``timesteps``."""
        chunk = self.rollout_size()
        return -(-self.timesteps // chunk) * chunk

    def to_dict(self) -> dict[str, Any]:
        """The configuration as JSON-able data (what checkpoints and ``results.json`` store)."""
        data = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(self).items()}
        data["opponents"] = json_safe(self.opponents)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], **changes: Any) -> TrainConfig:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in {**data, **changes}.items() if k in known})


# ---------------------------------------------------------------------------------------------- evaluation


def json_safe_dict(values: dict[str, Any]) -> dict[str, Any]:
    return {key: value if isinstance(value, (bool, type(None))) else json_safe(value) for key, value in values.items()}


def json_safe(value: Any) -> Any:
    """``value`` with lists and tuples as lists and anything but str, int and float as its ``repr``."""
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value if isinstance(value, (str, int, float)) else repr(value)
