"""Self-play: snapshot the learner into an opponent pool and train against samples from it.

Where you are: shared training plumbing (needs the ``train`` extra). Use with
:class:`~tableenvs.training.single_agent.SingleAgentEnv` whose ``opponents`` is an
:class:`~tableenvs.training.single_agent.OpponentPool` (e.g. ``OpponentPool(["random"])`` to start from random
opponents)::

    env = make_vec_env(lambda: SingleAgentEnv("pilipili_v0", opponents=OpponentPool(["random"])), n_envs=4)
    model = MaskablePPO("MlpPolicy", env)
    model.learn(200_000, callback=SelfPlayCallback("runs/pool", snapshot_every=20_000))

Every ``snapshot_every`` learner steps :class:`SelfPlayCallback` saves the model as
``pool_dir/snapshot_<steps>.zip`` and hands every env (through ``env_method``, so ``SubprocVecEnv`` works)
a new pool: the starting members (``keep``, default the envs' current members, e.g. ``"random"``) followed
by the ``pool_size`` most recent snapshots. From their next episode, each opponent seat plays the newest
snapshot with probability ``latest_prob`` and an older member (uniformly) otherwise. Snapshots play by
sampling from their masked policy unless ``deterministic=True``. See ``examples/self_play.py``. The pool marks the
snapshots as ``trusted`` (this callback wrote them), so the envs load them without ``trust_models``; a ``.zip`` in
``keep`` still needs the envs' ``trust_models=True``.
"""

from __future__ import annotations

from pathlib import Path

from stable_baselines3.common.callbacks import BaseCallback

from tableenvs.core.validation import check_at_least
from tableenvs.paths import atomic_output
from tableenvs.policies import PolicySpec
from tableenvs.training.single_agent import OpponentPool


class SelfPlayCallback(BaseCallback):
    """Snapshots the learner every ``snapshot_every`` steps into the envs' opponent pool; see the module docstring."""

    def __init__(
        self,
        pool_dir: str | Path,
        *,
        snapshot_every: int = 20_000,
        pool_size: int = 5,
        latest_prob: float = 0.5,
        keep: list[PolicySpec] | None = None,
        deterministic: bool = False,
        verbose: int = 0,
    ):
        super().__init__(verbose)
        snapshot_every = check_at_least("snapshot_every", snapshot_every, 1)
        pool_size = check_at_least("pool_size", pool_size, 1)
        self.pool_dir = Path(pool_dir)
        self.snapshot_every = snapshot_every
        self.pool_size = pool_size
        self.latest_prob = latest_prob
        self.keep = keep
        self.deterministic = deterministic
        self.snapshots: list[Path] = []
        self._next_snapshot = snapshot_every

    def _on_training_start(self) -> None:
        self.pool_dir.mkdir(parents=True, exist_ok=True)
        if self.keep is None:
            current = self.training_env.get_attr("opponents")[0]
            self.keep = list(current.members) if isinstance(current, OpponentPool) else [current]
        self._next_snapshot = self.num_timesteps + self.snapshot_every

    def _on_step(self) -> bool:
        if self.num_timesteps >= self._next_snapshot:
            self.snapshot()
            self._next_snapshot = self.num_timesteps + self.snapshot_every
        return True

    def snapshot(self) -> Path:
        """Save the learner now and give every env the updated pool; the snapshot's path."""
        path = self.pool_dir / f"snapshot_{self.num_timesteps:09d}.zip"
        with atomic_output(path, "wb") as handle:
            self.model.save(handle)
        self.snapshots.append(path)
        recent = [str(p) for p in self.snapshots[-self.pool_size :]]
        if self.keep is None:  # set when training starts
            raise RuntimeError("SelfPlayCallback.snapshot: training has not started (no starting members yet)")
        pool = OpponentPool(
            [*self.keep, *recent],
            latest_prob=self.latest_prob,
            deterministic=self.deterministic,
            trusted=recent,  # written by this callback: loaded without the envs' trust_models (SB3 .zip pickles)
        )
        self.training_env.env_method("set_opponents", pool)
        if self.verbose:
            print(f"self-play: snapshot {path.name}; pool of {len(pool.members)}")
        return path
