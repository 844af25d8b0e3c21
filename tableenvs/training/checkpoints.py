"""The training job's checkpoints: the state of a run that survives an interruption (:class:`Run`), written under
``out/checkpoint`` and read back by :func:`read_checkpoint` for ``tableenvs train --resume``.

Where you are: ``tableenvs/training/``, used by the job (:mod:`tableenvs.training.job`). A checkpoint holds the
model with its optimizer state, the run configuration, the step count, the curve so far, the opponent pool when
the envs have one and DQN's replay buffer; it is written atomically, so a fault never leaves half a checkpoint.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

from tableenvs.evaluation import strict_json
from tableenvs.paths import write_text_atomic
from tableenvs.training.config import CHECKPOINT_DIR, STATE_FILE, TrainConfig, json_safe
from tableenvs.training.single_agent import OpponentPool


class Run:
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
                "members": json_safe(opponents.members),
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
