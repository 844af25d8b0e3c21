"""The training job: an SB3 learner (MaskablePPO by default) on one seat of a tableenvs game, evaluated against
random and heuristic play, with checkpoints and resume.

Where you are: shared training plumbing (needs the ``train`` extra), used by ``tableenvs train`` and
``examples/train_maskable_ppo.py``. :func:`train` runs the whole job:

1. build ``num_envs`` :class:`~tableenvs.training.single_agent.SingleAgentEnv` copies (seat rotating per episode) and a
   learner, ``algo`` one of :data:`ALGORITHMS` (one torch thread: the machines are small and shared). Only
   ``maskable_ppo`` reads the action masks; the others get ``illegal_action="random"`` envs by default (an illegal
   action is replaced by a random legal one, see :mod:`tableenvs.training.single_agent`);
2. learn for ``timesteps`` learner decisions with a progress bar counting the steps actually run (on-policy
   algorithms collect whole rollouts, so the budget is rounded up to one; the header says to what); every
   ``eval_every`` steps play ``eval_games`` games against the training opponents, print one line (step, win rate
   and reward per game with 95% intervals) above the bar and record the learning curve (also to SB3's logger:
   ``tensorboard`` and ``log_formats``); every ``checkpoint_every`` steps, and on Ctrl-C (SIGINT) or SIGTERM,
   save a checkpoint under ``out/checkpoint`` (model with optimizer state, run configuration, step count, curve
   so far, the opponent pool when the envs have one, DQN's replay buffer) and print one line saying so. A
   signal stops training at the next step (a second Ctrl-C at once, even inside an update); :func:`train` then
   returns with ``interrupted`` set. :func:`resume` (``tableenvs train --resume DIR``) continues the run to its
   budget: steps already trained are not run again (a rollout cut short by the signal is discarded, not counted). With
   ``self_play_every``, the opponents are an :class:`~tableenvs.training.single_agent.OpponentPool` fed by
   :class:`~tableenvs.training.selfplay.SelfPlayCallback` snapshots (``out/pool``), and the pool is part of the
   checkpoint;
3. save ``model.zip``, ``model.npz`` (the actor as a numpy policy, :mod:`tableenvs.policies.numpy_policy`: plays without
   torch and runs no code when loaded), ``curve.png`` (the learning curve), ``results.json`` (strict JSON); play the
   final evaluation and print the table: the trained agent, a random agent and the heuristic each in every seat on the
   same deals (a duplicate-deal gauntlet of :func:`tableenvs.evaluation.evaluate`), against random and against
   heuristic opponents: win rate, mean reward and mean final score per game with 95% intervals, and a paired
   test of each other agent against the trained one over the same deals.

Every evaluation here goes through :func:`tableenvs.evaluation.evaluate` (:func:`evaluate_agent`): one
evaluator, one rule for winners (:meth:`tableenvs.core.table_env.TableEnv.outcome`).

Trust: opponents given as SB3 ``.zip`` files (pickles, which can run code) need ``trust_models=True``; the self-play
snapshots this run writes are loaded without it. ``resume`` loads the run's own checkpoint (a ``.zip`` with the
optimizer state): resume only runs you made.
"""

from __future__ import annotations

import json
import math
import shutil
import signal
import threading
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from tableenvs.core.registry import make_raw
from tableenvs.core.registry import spec as game_spec
from tableenvs.evaluation import EvaluationResult, evaluate, strict_json
from tableenvs.paths import atomic_output, write_text_atomic
from tableenvs.policies import PolicySpec, check_trusted
from tableenvs.training.single_agent import ILLEGAL_ACTION_MODES, OpponentPool, SingleAgentEnv

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
    timesteps: int = 50_000
    opponents: PolicySpec | list[PolicySpec] = "random"
    seat: int | str = "rotate"
    options: dict[str, Any] = field(default_factory=dict)  # game options, e.g. {"num_players": 4}
    num_envs: int = 4
    vec_env: str = "dummy"  # "dummy" (one process) or "subproc" (one process per env)
    seed: int = 0
    eval_every: int = 10_000
    eval_games: int = 100
    final_games: int = 500
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
        data["opponents"] = _json_safe(self.opponents)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], **changes: Any) -> TrainConfig:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in {**data, **changes}.items() if k in known})


# ---------------------------------------------------------------------------------------------- evaluation


def evaluate_agent(config: TrainConfig, agents: list[PolicySpec], games: int, seed: int) -> EvaluationResult:
    """A gauntlet of :func:`tableenvs.evaluation.evaluate`: each of ``agents`` in turn in every seat against the
    training opponents, on duplicate deals (every agent plays the same cards from the same seats)."""
    return evaluate(
        config.env,
        agents,
        games,
        opponents=config.opponents,
        options=config.options,
        seed=seed,
        duplicate=True,
        trust_models=config.trust_models,
    )


def summary(result: EvaluationResult, entrant: int = 0) -> dict[str, float]:
    """One entrant's figures from a tournament: games (seat-games), win rate (Wilson 95%), mean reward and mean
    final score per game (normal 95%)."""
    row = result.policies[entrant]
    return {
        "games": int(row["appearances"]),
        "win_rate": row["win_rate"],
        "win_rate_low": row["win_rate_low"],
        "win_rate_high": row["win_rate_high"],
        "mean_reward": row["reward_mean"],
        "mean_reward_low": row["reward_low"],
        "mean_reward_high": row["reward_high"],
        "mean_score": row["score_mean"],
        "mean_score_low": row["score_low"],
        "mean_score_high": row["score_high"],
    }


# ---------------------------------------------------------------------------------------------- training


def _env_factory(config: TrainConfig):
    def make() -> SingleAgentEnv:
        import multiprocessing

        import torch

        torch.set_num_threads(1)  # in subprocess workers too: opponent models must not oversubscribe the cores
        if multiprocessing.parent_process() is not None:
            # A SubprocVecEnv worker: Ctrl-C in a terminal reaches the whole process group; the main process
            # handles it (checkpoint, then closing the workers), so a worker must not die of it first.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        if config.illegal_action is None:  # never: TrainConfig.__post_init__ chooses one
            raise ValueError("TrainConfig.illegal_action is not set")
        return SingleAgentEnv(
            config.env,
            opponents=OpponentPool([config.opponents]) if config.self_play_every else config.opponents,
            seat=config.seat,
            illegal_action=config.illegal_action,
            trust_models=config.trust_models,
            **config.options,
        )

    return make


def make_training_env(config: TrainConfig, seed: int | None = None):
    """The vectorised, monitored single-agent envs of ``config`` (seeded ``seed``, ``seed + 1``, ...; ``seed``
    defaults to ``config.seed``)."""
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    return make_vec_env(
        _env_factory(config),
        n_envs=config.num_envs,
        seed=config.seed if seed is None else seed,
        vec_env_cls=SubprocVecEnv if config.vec_env == "subproc" else DummyVecEnv,
    )


def algorithm_class(algo: str):
    """The SB3 class of an ``algo`` name (imported on demand)."""
    import importlib

    name, package = ALGORITHMS[algo]
    return getattr(importlib.import_module(package), name)


def make_model(config: TrainConfig, vec_env):
    settings = config.settings
    net_arch = settings.pop("net_arch")
    return algorithm_class(config.algo)(
        "MlpPolicy",
        vec_env,
        policy_kwargs={"net_arch": list(net_arch)},
        seed=config.seed,
        device="cpu",
        verbose=0,
        **settings,
    )


def _format_eval_line(result: dict[str, Any], config: TrainConfig) -> str:
    def interval(key: str, signed: bool) -> str:
        f = "+.3f" if signed else ".3f"
        return f"{result[key]:{f}} [{result[key + '_low']:{f}}, {result[key + '_high']:{f}}]"

    line = (
        f"step {result['timesteps']:>9,}: win rate {interval('win_rate', False)}, "
        f"reward/game {interval('mean_reward', True)} ({result['games']} games vs {_describe(config.opponents)})"
    )
    if result.get("illegal_rate") is not None:
        line += f"; {result['illegal_rate']:.1%} of its actions so far were illegal"
    return line


def _describe(opponents: Any) -> str:
    if isinstance(opponents, (list, tuple)):
        return ",".join(_describe(o) for o in opponents)
    return str(opponents) if isinstance(opponents, (str, Path)) else type(opponents).__name__


class _Stop:
    """Ctrl-C / SIGTERM during training: the first sets ``signal`` (training stops at the next step, then a
    checkpoint is saved); a second Ctrl-C raises KeyboardInterrupt at once."""

    def __init__(self) -> None:
        self.signal: str | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> _Stop:
        if threading.current_thread() is threading.main_thread():  # signal handlers live in the main thread only
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        if self.signal is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.signal = signal.Signals(signum).name

    def __exit__(self, *exc: Any) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)


class _TrainingCallback:
    """Built lazily (the base class needs stable-baselines3): the progress bar, periodic evaluation (curve, printed
    line, logger), periodic checkpoints and the stop on a signal. Evaluations and checkpoints happen when a rollout
    starts, i.e. when every step collected so far has been trained on."""

    @staticmethod
    def create(config: TrainConfig, run: _Run, stop: _Stop):
        from stable_baselines3.common.callbacks import BaseCallback

        class TrainingCallback(BaseCallback):
            def __init__(self):
                super().__init__()
                self.bar = None

            def say(self, line: str) -> None:
                if self.bar is not None and config.verbose:  # above the bar, which is then drawn again
                    self.bar.write(line)
                else:
                    run.say(line)

            def _on_training_start(self) -> None:
                run.trained_steps = int(self.num_timesteps)
                if config.progress_bar:
                    from tqdm.auto import tqdm

                    self.bar = tqdm(
                        total=config.steps_to_run(),
                        initial=run.trained_steps,
                        unit="step",
                        desc=config.algo_name,
                        dynamic_ncols=True,
                    )

            def _on_rollout_start(self) -> None:
                run.trained_steps = int(self.num_timesteps)
                if run.trained_steps >= run.next_eval:
                    self._evaluate()
                    run.next_eval = run.trained_steps + config.eval_every
                if config.checkpoint_every and run.trained_steps >= run.next_checkpoint:
                    run.next_checkpoint = run.trained_steps + config.checkpoint_every
                    if run.trained_steps > 0:
                        self.say(run.save_checkpoint(self.model, "periodic"))

            def _on_step(self) -> bool:
                for info in self.locals.get("infos", []):
                    run.learner_steps += 1
                    if "illegal_action" in info:
                        run.illegal_steps += 1
                    if "episode" in info:
                        run.episode_rewards.append(float(info["episode"]["r"]))
                if len(run.episode_rewards) > 400:
                    del run.episode_rewards[:-200]
                if self.bar is not None:
                    self.bar.update(int(self.num_timesteps) - self.bar.n)
                return stop.signal is None

            def _on_training_end(self) -> None:
                if stop.signal is None:
                    run.trained_steps = int(self.num_timesteps)
                    if not run.history or run.history[-1]["timesteps"] != run.trained_steps:
                        self._evaluate()
                self.close_bar()

            def close_bar(self) -> None:
                if self.bar is not None:
                    if stop.signal is None:
                        self.bar.total = self.bar.n  # the steps actually run
                    self.bar.refresh()
                    self.bar.close()
                    self.bar = None

            def _evaluate(self) -> None:
                result: dict[str, Any] = summary(
                    evaluate_agent(config, [self.model], config.eval_games, 10_000_000 + config.seed)
                )
                recent = run.episode_rewards[-200:]
                result["timesteps"] = run.trained_steps
                result["train_episode_reward"] = float(np.mean(recent)) if recent else math.nan
                result["illegal_rate"] = (
                    run.illegal_steps / run.learner_steps
                    if config.illegal_action != "raise" and run.learner_steps
                    else None
                )
                run.history.append(result)
                self.say(_format_eval_line(result, config))
                for key in ("win_rate", "mean_reward", "mean_score"):
                    for suffix in ("", "_low", "_high"):
                        self.logger.record(f"eval/{key}{suffix}", result[key + suffix])
                self.logger.record("eval/train_episode_reward", result["train_episode_reward"])
                if result["illegal_rate"] is not None:
                    self.logger.record("eval/illegal_rate", result["illegal_rate"])
                self.logger.dump(run.trained_steps)

        return TrainingCallback()


class _Run:
    """The state of one run that checkpoints carry across interruptions."""

    def __init__(self, config: TrainConfig, say: Any):
        self.config = config
        self.say = say
        self.trained_steps = 0
        self.next_eval = 0
        self.next_checkpoint = config.checkpoint_every
        self.history: list[dict[str, Any]] = []
        self.baseline: dict[str, Any] | None = None
        self.episode_rewards: list[float] = []
        self.learner_steps = 0
        self.illegal_steps = 0
        self.train_seconds = 0.0
        self.segment_started = time.perf_counter()
        self.interruptions = 0
        self.resumes = 0

    @property
    def directory(self) -> Path:
        return Path(self.config.out) / CHECKPOINT_DIR

    def state(self, complete: bool) -> dict[str, Any]:
        return {
            "format": 1,
            "complete": complete,
            "algo": self.config.algo,
            "config": self.config.to_dict(),
            "timesteps": self.trained_steps,
            "budget": self.config.timesteps,
            "steps_to_run": self.config.steps_to_run(),
            "next_eval": self.next_eval,
            "next_checkpoint": self.next_checkpoint,
            "history": self.history,
            "curve_baseline": self.baseline,
            "episode_rewards": self.episode_rewards[-200:],
            "learner_steps": self.learner_steps,
            "illegal_steps": self.illegal_steps,
            "train_seconds": self.train_seconds + (time.perf_counter() - self.segment_started),
            "interruptions": self.interruptions,
            "resumes": self.resumes,
        }

    def load(self, state: dict[str, Any]) -> None:
        for key in ("next_eval", "next_checkpoint", "history", "episode_rewards", "learner_steps", "illegal_steps"):
            setattr(self, key, state[key])
        self.trained_steps = state["timesteps"]
        self.baseline = state["curve_baseline"]
        self.train_seconds = state["train_seconds"]
        self.interruptions = state["interruptions"]
        self.resumes = state["resumes"] + 1

    def save_checkpoint(self, model: Any, why: str, complete: bool = False) -> str:
        """Write the checkpoint atomically (a new folder renamed over the old one); the line to print."""
        model.num_timesteps = self.trained_steps  # a rollout cut short by a signal was never trained on
        directory = self.directory
        fresh = directory.with_name(directory.name + ".new")
        shutil.rmtree(fresh, ignore_errors=True)
        fresh.mkdir(parents=True)
        model.save(fresh / "model.zip")
        saved = ["model", "optimizer state"]
        if hasattr(model, "save_replay_buffer") and not complete:
            model.save_replay_buffer(fresh / "replay_buffer.pkl")
            saved.append("replay buffer")
        state = self.state(complete)
        try:
            opponents = model.get_env().get_attr("opponents")[0]
        except Exception:  # noqa: BLE001 - a closed env: no pool to record
            opponents = None
        if isinstance(opponents, OpponentPool):
            state["opponent_pool"] = {
                "members": _json_safe(opponents.members),
                "latest_prob": opponents.latest_prob,
                "deterministic": opponents.deterministic,
                "trusted": list(opponents.trusted),
            }
            saved.append(f"opponent pool ({len(opponents.members)})")
        write_text_atomic(fresh / STATE_FILE, strict_json(state))
        old = directory.with_name(directory.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        if directory.exists():
            directory.rename(old)
        fresh.rename(directory)
        shutil.rmtree(old, ignore_errors=True)
        what = ", ".join(saved) + ", run config and step count"
        line = (
            f"checkpoint ({why}) at step {self.trained_steps:,} of {self.config.steps_to_run():,}: {what} "
            f"saved to {directory}"
        )
        if not complete:
            line += f"; resume with: tableenvs train --resume {self.config.out}"
        return line


def read_checkpoint(run_dir: str | Path) -> dict[str, Any]:
    """The saved state of the run in ``run_dir`` (what :func:`resume` continues from)."""
    path = Path(run_dir) / CHECKPOINT_DIR / STATE_FILE
    if not path.is_file():
        raise ValueError(f"no checkpoint to resume in {str(run_dir)!r} (looked for {path})")
    return json.loads(path.read_text())


def resume(run_dir: str | Path, **changes: Any) -> TrainResult:
    """Continue the run saved in ``run_dir`` to its budget with its saved configuration. ``changes`` may set only
    what does not change the run: ``progress_bar``, ``verbose``, ``tensorboard``, ``log_formats``, ``trust_models``."""
    allowed = {"progress_bar", "verbose", "tensorboard", "log_formats", "trust_models"}
    if set(changes) - allowed:
        raise ValueError(
            f"a resumed run keeps its saved configuration; only {', '.join(sorted(allowed))} may change, "
            f"not {', '.join(sorted(set(changes) - allowed))}"
        )
    state = read_checkpoint(run_dir)
    if state["complete"]:
        raise ValueError(
            f"the run in {str(run_dir)!r} is complete ({state['timesteps']:,} steps for a budget of "
            f"{state['budget']:,}); nothing to resume"
        )
    config = TrainConfig.from_dict(state["config"], out=str(run_dir), **changes)
    if _json_safe(config.opponents) != config.opponents:
        raise ValueError("this run's opponents were Python objects; a checkpoint can resume only named or .zip ones")
    return train(config, _resume_state=state)


@dataclass
class TrainResult:
    """What :func:`train` produced: file paths, the learning curve and the final table (rows as dicts).
    ``interrupted`` names the signal that stopped training (then only the checkpoint was written)."""

    model_path: Path
    curve_path: Path
    results_path: Path
    history: list[dict[str, Any]]
    table: list[dict[str, Any]]
    train_seconds: float
    eval_seconds: float
    interrupted: str | None = None
    timesteps: int = 0
    checkpoint_path: Path | None = None
    numpy_model_path: Path | None = None  #: ``model.npz``, the actor as a numpy policy (None if not expressible)


def _configure_logger(model: Any, config: TrainConfig, resumes: int) -> None:
    outputs = []
    if config.log_formats:
        logs = Path(config.out) / ("logs" if not resumes else f"logs.resume{resumes}")
        outputs.append((str(logs), [f for f in config.log_formats if f != "tensorboard" or not config.tensorboard]))
    if config.tensorboard:
        outputs.append((str(config.tensorboard), ["tensorboard"]))
    from stable_baselines3.common.logger import Logger, make_output_format

    if not outputs:  # SB3's default logger would leave an empty /tmp/SB3-<time> folder behind on every run
        model.set_logger(Logger(folder=None, output_formats=[]))
        return

    formats = []
    for folder, names in outputs:
        Path(folder).mkdir(parents=True, exist_ok=True)
        for name in names:
            try:
                formats.append(make_output_format(name, folder))
            except ImportError as error:  # SummaryWriter without the tensorboard package
                raise ValueError(f"the {name} log format needs the tensorboard package ({error})") from None
    model.set_logger(Logger(folder=outputs[0][0], output_formats=formats))


def train(config: TrainConfig, *, _resume_state: dict[str, Any] | None = None) -> TrainResult:
    """Run the training job of ``config``; see the module docstring. (:func:`resume` continues a saved run.)"""
    import torch

    torch.set_num_threads(1)
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    say_print = print if config.verbose else (lambda *a, **k: None)
    run = _Run(config, say_print)
    num_players = make_raw(config.env, **config.options).num_players
    to_run = config.steps_to_run()
    options = {k: v for k, v in config.options.items() if k != "num_players"}
    header = (
        f"training {config.algo_name} on {config.env}, {num_players} players{f' {options}' if options else ''}, "
        f"against {_describe(config.opponents)}, seat {config.seat}, budget {config.timesteps:,} steps"
        + (f" (runs {to_run:,}: whole rollouts of {config.rollout_size():,})" if to_run != config.timesteps else "")
        + f", {config.num_envs} envs, seed {config.seed}"
        + (f", illegal actions: {config.illegal_action}" if config.algo != "maskable_ppo" else "")
        + (
            f", self-play: a snapshot joins the pool every {config.self_play_every:,} steps"
            if config.self_play_every
            else ""
        )
    )
    env_seed = config.seed
    if _resume_state is None and (run.directory / STATE_FILE).is_file():
        earlier = read_checkpoint(out)
        if not earlier["complete"]:  # a fresh start would overwrite a run that can still be resumed
            raise ValueError(
                f"{str(out)!r} holds an unfinished run (step {earlier['timesteps']:,} of {earlier['steps_to_run']:,}): "
                f"continue it with tableenvs train --resume {out}, or train into another --out"
            )
    if _resume_state is not None:
        run.load(_resume_state)
        # Fresh deals after a resume (not a replay of the first ones), still fixed by the seed and the step count.
        env_seed = int(np.random.SeedSequence([config.seed, run.trained_steps]).generate_state(1)[0] % 2**31)
        header = f"resuming at step {run.trained_steps:,}: " + header
    say_print(header)
    vec_env = make_training_env(config, seed=env_seed)
    if _resume_state is None:
        model = make_model(config, vec_env)
    else:
        model = algorithm_class(config.algo).load(str(run.directory / "model.zip"), env=vec_env, device="cpu")
        model._last_obs = None  # saved with the model, but the envs are new: learn() must reset them
        model.set_random_seed(env_seed)
        buffer = run.directory / "replay_buffer.pkl"
        if buffer.is_file() and hasattr(model, "load_replay_buffer"):
            model.load_replay_buffer(buffer)
        pool = _resume_state.get("opponent_pool")
        if pool is not None:
            # the run's own snapshots (all but the starting opponents; a checkpoint before "trusted" was kept says so)
            pool = {"trusted": [str(member) for member in pool["members"][1:]], **pool}
            vec_env.env_method("set_opponents", OpponentPool(**pool))
    _configure_logger(model, config, run.resumes)
    if run.baseline is None:
        # The curve's baseline: a random agent on the periodic evaluation's deals and seats.
        run.baseline = summary(evaluate_agent(config, ["random"], config.eval_games, 10_000_000 + config.seed))
    with _Stop() as stop:
        callback = _TrainingCallback.create(config, run, stop)
        if config.self_play_every:
            from stable_baselines3.common.callbacks import CallbackList

            from tableenvs.training.selfplay import SelfPlayCallback

            self_play = SelfPlayCallback(
                out.resolve() / "pool",
                snapshot_every=config.self_play_every,
                pool_size=config.self_play_pool,
                keep=[config.opponents],
            )
            pool = (_resume_state or {}).get("opponent_pool")
            if pool is not None:  # the snapshots taken before the interruption stay in the pool
                self_play.snapshots = [Path(member) for member in pool["members"][1:]]
            callback = CallbackList([callback, self_play])
        run.segment_started = time.perf_counter()
        try:
            remaining = config.timesteps - run.trained_steps
            if remaining > 0:
                model.learn(
                    total_timesteps=remaining if _resume_state is not None else config.timesteps,
                    callback=callback,
                    reset_num_timesteps=_resume_state is None,
                    progress_bar=False,
                )
        except KeyboardInterrupt:  # a second Ctrl-C, or one raised where no handler could be installed
            stop.signal = stop.signal or "SIGINT"
        finally:
            (callback.callbacks[0] if config.self_play_every else callback).close_bar()
        if stop.signal is not None:
            run.interruptions += 1
            line = run.save_checkpoint(model, f"{stop.signal} received")
            vec_env.close()
            say_print(line)
            return TrainResult(
                out / "model.zip",
                out / "curve.png",
                out / "results.json",
                run.history,
                [],
                run.state(False)["train_seconds"],
                0.0,
                interrupted=stop.signal,
                timesteps=run.trained_steps,
                checkpoint_path=run.directory,
            )
    train_seconds = run.state(True)["train_seconds"]
    run.trained_steps = int(model.num_timesteps)
    run.save_checkpoint(model, "end of training", complete=True)  # marks the run complete for --resume
    vec_env.close()
    model_path = out / "model.zip"
    with atomic_output(model_path, "wb") as handle:
        model.save(handle)
    numpy_path = export_numpy(model, config, out / "model.npz", run.trained_steps, say_print)
    curve_path = out / "curve.png"
    plot_curve(
        run.history,
        curve_path,
        title=f"{config.algo_name} on {config.env} vs {_describe(config.opponents)}",
        baseline=run.baseline,
        score_name=make_raw(config.env, **config.options).score_name,
    )
    also = f" and {numpy_path} (plays without torch, runs no code when loaded)" if numpy_path is not None else ""
    say_print(
        f"trained {run.trained_steps:,} steps in {train_seconds:.0f} s; model saved to {model_path}{also}, "
        f"learning curve to {curve_path}"
    )

    started = time.perf_counter()
    table = final_table(config, model) if config.final_games else []
    eval_seconds = time.perf_counter() - started
    if table:
        say_print(format_table(table))
        say_print(f"(evaluation: {eval_seconds:.0f} s)")
    results_path = out / "results.json"
    write_text_atomic(
        results_path,
        strict_json(
            {
                "config": config.to_dict(),
                "algo": config.algo_name,
                "hyperparameters": config.settings,
                "timesteps": run.trained_steps,
                "train_seconds": train_seconds,
                "eval_seconds": eval_seconds,
                "interruptions": run.interruptions,
                "resumes": run.resumes,
                "illegal_action_rate": run.illegal_steps / run.learner_steps if run.learner_steps else 0.0,
                "history": run.history,
                "curve_baseline": run.baseline,
                "final": table,
            }
        ),
    )
    return TrainResult(
        model_path,
        curve_path,
        results_path,
        run.history,
        table,
        train_seconds,
        eval_seconds,
        timesteps=run.trained_steps,
        checkpoint_path=run.directory,
        numpy_model_path=numpy_path,
    )


def export_numpy(model: Any, config: TrainConfig, path: Path, steps: int, say: Any) -> Path | None:
    """Write ``model``'s actor as a numpy policy file (``model.npz``) with the run's recipe in its ``meta``; None
    (and a printed note) if the network is one the format cannot express."""
    from tableenvs.policies.sb3_policy import export_sb3

    recipe = {
        "recipe": {
            "algo": config.algo,
            "opponents": _json_safe(config.opponents),
            "seat": config.seat,
            "seed": config.seed,
            "timesteps": steps,
            "hyperparameters": _json_safe_dict(config.settings),
        }
    }
    try:
        return export_sb3(model, path, make_raw(config.env, **config.options), meta=recipe)
    except ValueError as error:
        say(f"note: no model.npz written ({error})")
        return None


def _json_safe_dict(values: dict[str, Any]) -> dict[str, Any]:
    return {key: value if isinstance(value, (bool, type(None))) else _json_safe(value) for key, value in values.items()}


def _json_safe(value: Any) -> Any:
    """``value`` with lists and tuples as lists and anything but str, int and float as its ``repr``."""
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value if isinstance(value, (str, int, float)) else repr(value)


def final_table(config: TrainConfig, model: Any) -> list[dict[str, Any]]:
    """Trained agent, random and heuristic in the same seats on the same deals, vs random and vs heuristic
    opponents; each other agent compared with the trained one by a paired test over the deals."""
    has_heuristic = game_spec(config.env).heuristic is not None
    opponent_kinds = ["random", "heuristic"] if has_heuristic else ["random"]
    agents: list[tuple[str, Any]] = [("trained", model), ("random", "random")]
    if has_heuristic:
        agents.append(("heuristic", "heuristic"))
    rows = []
    for opponents in opponent_kinds:
        result = evaluate(
            config.env,
            [spec for _, spec in agents],
            config.final_games * len(agents),  # final_games for each agent
            opponents=opponents,
            options=config.options,
            seed=20_000_000 + config.seed,
            duplicate=True,
            trust_models=config.trust_models,
        )
        paired = {row["opponent"]: row for row in result.paired if row["policy"] == result.labels[0]}
        for index, (name, _) in enumerate(agents):
            row: dict[str, Any] = {"opponents": opponents, "agent": name, "score_name": result.score_name}
            row.update(higher_is_better=result.higher_is_better, **summary(result, index))
            if index:
                versus = paired[result.labels[index]]
                row.update(
                    {
                        f"trained_minus_this_{key}": versus[key]
                        for key in ("score_diff", "score_diff_low", "score_diff_high", "score_p", "win_diff", "win_p")
                    }
                )
            rows.append(row)
    return rows


def format_table(rows: list[dict[str, Any]]) -> str:
    """The final table as text."""

    def interval(row: dict[str, Any], key: str, signed: bool = True) -> str:
        f = "+.3f" if signed else ".3f"
        if row[key + "_low"] is None or math.isnan(row[key + "_low"]):
            return f"{row[key]:{f}}"
        return f"{row[key]:{f}} [{row[key + '_low']:{f}}, {row[key + '_high']:{f}}]"

    score = rows[0]["score_name"]
    own_score = score != "reward"  # a game with its own final measure (chilis, points) gets a column for it
    columns = [("opponents", 10), ("agent in seat", 14), ("win rate [95% CI]", 24), ("reward/game [95% CI]", 26)]
    columns += [(f"{score}/game [95% CI]", 26)] if own_score else []
    columns += [(f"trained - this, {score} [95% CI]", 32), ("p", 8), ("p win", 8)]
    header = " ".join(f"{name:<{width}}" for name, width in columns).rstrip()
    lines = [
        f"final evaluation: {rows[0]['games']} games per row on the same deals and seats (duplicate deals); "
        "p: paired test against the trained agent over the deals",
        header,
        "-" * len(header),
    ]
    for row in rows:
        cells = [row["opponents"], row["agent"], interval(row, "win_rate", False), interval(row, "mean_reward")]
        cells += [interval(row, "mean_score")] if own_score else []
        if "trained_minus_this_score_diff" in row:
            cells += [
                interval(row, "trained_minus_this_score_diff"),
                f"{row['trained_minus_this_score_p']:.2g}",
                f"{row['trained_minus_this_win_p']:.2g}",
            ]
        else:
            cells += ["", "", ""]
        lines.append(" ".join(f"{cell:<{width}}" for cell, (_, width) in zip(cells, columns, strict=True)).rstrip())
    if any("trained_minus_this_score_diff" in row for row in rows):
        better, sign = ("more", "positive") if rows[0].get("higher_is_better", True) else ("fewer", "negative")
        lines.append(
            f"(trained - this: {better} {score} is better, so a {sign} difference means the trained agent did better)"
        )
    return "\n".join(lines)


def plot_curve(
    history: list[dict[str, Any]],
    path: str | Path,
    *,
    title: str = "",
    baseline: dict[str, Any] | None = None,
    score_name: str = "reward",
) -> None:
    """Learning curve PNG against timesteps: evaluation reward per game, final score per game (when the game has
    its own, e.g. chilis) and win rate, each with its 95% band; ``baseline`` (a :func:`summary` of a random agent on
    the same deals and seats) is drawn as a dotted line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    steps = [h["timesteps"] for h in history]
    panels = [("mean_reward", "reward per game")]
    if score_name != "reward":
        panels.append(("mean_score", f"{score_name} per game"))
    panels.append(("win_rate", "win rate"))
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4))
    for index, (ax, (key, label)) in enumerate(zip(axes, panels, strict=True)):
        colour = f"C{index}"
        ax.plot(steps, [h[key] for h in history], marker="o", color=colour, label="trained agent (evaluation)")
        low, high = [h[key + "_low"] for h in history], [h[key + "_high"] for h in history]
        ax.fill_between(steps, low, high, alpha=0.25, color=colour)
        if key == "mean_reward":
            train_rewards = [h["train_episode_reward"] for h in history]
            ax.plot(steps, train_rewards, linestyle="--", color="C7", label="training episodes (mean of last 200)")
        if baseline is not None and key in baseline:
            ax.axhline(baseline[key], linestyle=":", color="k", label="random agent in the same seats")
        ax.set_xlabel("learner decisions (timesteps)")
        ax.set_ylabel(label)
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: f"{x / 1000:g}k"))
        ax.grid(alpha=0.3)
        if index == 0:
            ax.legend(fontsize=8)
    games = history[0]["games"] if history else 0
    fig.suptitle(f"{title} ({games} evaluation games per point)")
    fig.tight_layout()
    try:
        with atomic_output(path, "wb") as handle:
            fig.savefig(handle, format="png", dpi=110)
    finally:
        plt.close(fig)
