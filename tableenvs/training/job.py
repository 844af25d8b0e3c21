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

import math
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tableenvs.core.registry import make_raw
from tableenvs.evaluation import strict_json
from tableenvs.paths import atomic_output, write_text_atomic
from tableenvs.training.builders import algorithm_class, make_model, make_training_env
from tableenvs.training.checkpoints import Run, read_checkpoint
from tableenvs.training.config import (
    ALGORITHM_HYPERPARAMETERS,
    ALGORITHMS,
    CHECKPOINT_DIR,
    DEFAULT_HYPERPARAMETERS,
    LOG_FORMATS,
    STATE_FILE,
    TrainConfig,
    json_safe,
    json_safe_dict,
)
from tableenvs.training.reports import (
    describe_opponents,
    evaluate_agent,
    final_table,
    format_eval_line,
    format_table,
    next_commands,
    plot_curve,
    standings,
    summary,
)
from tableenvs.training.single_agent import OpponentPool

#: The job's names, with those of its configuration, checkpoints and reports that it has always offered (the job
#: calls ``evaluate_agent`` through this module, so a test can stand in for it here).
__all__ = [
    "ALGORITHMS",
    "ALGORITHM_HYPERPARAMETERS",
    "CHECKPOINT_DIR",
    "DEFAULT_HYPERPARAMETERS",
    "LOG_FORMATS",
    "STATE_FILE",
    "TrainConfig",
    "TrainResult",
    "algorithm_class",
    "evaluate_agent",
    "export_numpy",
    "final_table",
    "format_table",
    "make_model",
    "make_training_env",
    "plot_curve",
    "read_checkpoint",
    "resume",
    "summary",
    "train",
]


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
    def create(config: TrainConfig, run: Run, stop: _Stop):
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
                self.say(format_eval_line(result, config))
                for key in ("win_rate", "mean_reward", "mean_score"):
                    for suffix in ("", "_low", "_high"):
                        self.logger.record(f"eval/{key}{suffix}", result[key + suffix])
                self.logger.record("eval/train_episode_reward", result["train_episode_reward"])
                if result["illegal_rate"] is not None:
                    self.logger.record("eval/illegal_rate", result["illegal_rate"])
                self.logger.dump(run.trained_steps)

        return TrainingCallback()


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
    if json_safe(config.opponents) != config.opponents:
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
    run = Run(config, say_print)
    num_players = make_raw(config.env, **config.options).num_players
    to_run = config.steps_to_run()
    options = {k: v for k, v in config.options.items() if k != "num_players"}
    header = (
        f"training {config.algo_name} on {config.env}, {num_players} players{f' {options}' if options else ''}, "
        f"against {describe_opponents(config.opponents)}, seat {config.seat}, budget {config.timesteps:,} steps"
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
        title=f"{config.algo_name} on {config.env} vs {describe_opponents(config.opponents)}",
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
        say_print(standings(table))
    say_print(
        "next:\n"
        + "\n".join(
            "  " + line for line in next_commands(config, numpy_path or model_path, num_players, numpy_path is None)
        )
    )
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
            "opponents": json_safe(config.opponents),
            "seat": config.seat,
            "seed": config.seed,
            "timesteps": steps,
            "hyperparameters": json_safe_dict(config.settings),
        }
    }
    try:
        return export_sb3(model, path, make_raw(config.env, **config.options), meta=recipe)
    except ValueError as error:
        say(f"note: no model.npz written ({error})")
        return None
