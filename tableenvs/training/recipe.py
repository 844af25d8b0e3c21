"""The ``strong`` training recipe: clone the heuristic, then improve on it with MaskablePPO against it.

Where you are: a training recipe beside :mod:`tableenvs.training.job` (the plain SB3 job) and
:mod:`tableenvs.training.distill` (search distillation). PPO from scratch plateaus below the heuristic in every game
(docs/training.md); started from a copy of the heuristic it only has to find where the heuristic is wrong. Three steps,
each resumable:

1. **Labels**: ``label_games`` of :mod:`tableenvs.training.distill` with ``search_spec="heuristic"``: whole games with
   every seat the heuristic, the acting seat's observation and the heuristic's one-hot choice (~3,000 labels a
   CPU-second). The heuristics read only the observation and the mask, so a network can represent them.
2. **Clone**: :func:`tableenvs.training.distill.fit`, a masked ReLU MLP on those labels (inputs scaled to [-1, 1] by
   each feature's largest magnitude, the scale kept in the model file), saved as ``clone.npz``. Steps 1 and 2 are
   :func:`clone_heuristic_aec` (the clone alone, for experiments that fine-tune one clone several ways).
3. **Fine-tune** (:func:`fine_tune`): PPO in the batched trainer (:mod:`tableenvs.training.batched`), its actor
   initialised from the clone (same layers, same input scale), the learner in all seats of each table but one, which
   the heuristic plays (rotating), its critic fitted first with the actor frozen (``value_warmup``); undiscounted
   returns (``gamma=1``: the game's score is the objective), a small clip range and learning rate so the start is
   not forgotten (:data:`FINE_TUNE`). A numpy policy file is exported every ``chunk`` steps (``model-<steps>.npz``,
   zero-padded) and at the end (``model.npz``), and each update's mean returns (the learner's seats, the
   heuristic's seat at the same tables) are appended to ``progress.jsonl`` (the learning curve); a rerun continues
   from the last exported file. :func:`fine_tune_sb3` is the first recipe's step (MaskablePPO on one seat against
   four heuristics, ~6x slower per sample), kept for the experiments that used it.

The ``search-clone`` recipe (:func:`search_clone`) is the other one: label games of a policy stronger than the
heuristic (the game's default ``search``), append the game's derived inputs (its spec's ``clone_features``) to each
observation, fit a network to the choices made, export it; no PPO. It made the shipped Llama Party model.

The model files are played by :class:`tableenvs.policies.numpy_policy.NumpyPolicy` (numpy alone, no torch).
Units: steps are the learner's decisions; times are seconds.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from tableenvs.core.registry import make_raw
from tableenvs.core.validation import check_at_least
from tableenvs.policies.numpy_policy import convert_numpy_policy, load_numpy_policy, save_for_env
from tableenvs.training import distill
from tableenvs.training.single_agent import SingleAgentEnv

#: Settings of the fine-tuning step (:class:`tableenvs.training.batched.BatchedConfig` fields; the learner's seats
#: and the heuristic opponent are set by :func:`fine_tune`). Two epochs per rollout (the update is most of the cost) at
#: twice the first recipe's learning rate, the settings the shipped models were made with. Compared on 3M-sample Pili
#: Pili runs by ``benchmarks/fine_tune_settings.py`` (docs/lab/training.md): level with two epochs at 1e-4, a little
#: behind four at 1e-4, behind two at 4e-4; over a whole 10M run 4e-4 ends only a little ahead (intervals overlapping).
FINE_TUNE: dict[str, Any] = {
    "learning_rate": 2e-4,
    "clip_range": 0.1,
    "ent_coef": 0.0,
    "gamma": 1.0,
    "gae_lambda": 0.95,
    "epochs": 2,
    "n_envs": 64,
    "rollout": 8192,
    "minibatch": 2048,
    "hidden": (128, 128),  # the critic's (the actor is the clone's); (256, 256) cost Llama Party 20% of its rate
    "value_warmup": 200_000,
}

#: PPO settings of :func:`fine_tune_sb3` (MaskablePPO keyword arguments).
FINE_TUNE_SB3 = {
    "learning_rate": 1e-4,
    "n_steps": 512,  # per env: 4,096 decisions per update with 8 envs
    "batch_size": 1024,
    "n_epochs": 4,
    "gamma": 1.0,
    "gae_lambda": 0.95,
    "clip_range": 0.1,
    "ent_coef": 0.0,
}


class ScaledObservation(gymnasium.ObservationWrapper):
    """``SingleAgentEnv`` with its observation multiplied by a fixed per-feature scale (the clone's input scale).

    ``features`` (optional): a function ``(observation, action_mask) -> float32 vector`` whose values are appended to
    the observation before scaling (derived inputs, e.g. a heuristic's value of each action; ``scale`` then covers
    both parts)."""

    env: SingleAgentEnv

    def __init__(self, env: SingleAgentEnv, scale: np.ndarray, features: Any = None):
        super().__init__(env)
        self.scale = np.asarray(scale, np.float32)
        self.features = features
        self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, self.scale.shape, np.float32)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        if self.features is not None:
            observation = np.concatenate([observation, self.features(observation, self.env.action_masks())])
        return (observation * self.scale).astype(np.float32, copy=False)

    def action_masks(self) -> np.ndarray:
        return self.env.action_masks()


def _policy_layers(model: Any) -> list[Any]:
    import torch

    policy = model.policy
    return [m for m in policy.mlp_extractor.policy_net if isinstance(m, torch.nn.Linear)] + [policy.action_net]


def _weights(model: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    return [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy()) for m in _policy_layers(model)]


def _last_export(out: Path) -> tuple[Path, int] | None:
    found = [(int(m.group(1)), p) for p in out.glob("model-*.npz") if (m := re.fullmatch(r"model-(\d+)\.npz", p.name))]
    if not found:
        return None
    steps, path = max(found)
    return path, steps


def fine_tune(
    game: str,
    options: dict[str, Any],
    start: str | Path,
    out_dir: str | Path,
    *,
    steps: int,
    chunk: int = 1_000_000,
    seed: int = 0,
    opponents: str = "heuristic",
    learner_seats: int | None = None,
    settings: dict[str, Any] | None = None,
    say: Any = print,
) -> Path:
    """PPO in the batched trainer from the numpy policy ``start``, ``learner_seats`` seats of each table (default
    all but one) against ``opponents`` in the others, for ``steps`` learner decisions; returns the final model,
    ``out_dir/model.npz``: the newest ``model-<steps>.npz`` with its weight matrices stored as float16 (half the
    file, as shipped in ``tableenvs/models/``). Resumes from the newest export under
    ``out_dir`` (the critic starts afresh and is fitted again with the actor frozen). ``settings``: other
    :class:`~tableenvs.training.batched.BatchedConfig` fields, over :data:`FINE_TUNE`."""
    from tableenvs.training.batched import BatchedConfig, BatchedTrainer

    check_at_least("steps", steps, 1)
    check_at_least("chunk", chunk, 1)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    done = 0
    last = _last_export(out)
    if last is not None:
        start, done = last
        say(f"resuming from {start} ({done} steps done)")
    probe = make_raw(game, **options)  # the game and its options, checked before any training
    players = probe.num_players
    probe.close()
    seats = players - 1 if learner_seats is None else learner_seats
    path = Path(start)
    if done < steps:
        config = BatchedConfig(
            game,
            samples=steps - done,
            options=options,
            opponents=opponents,
            learner_seats=seats,
            start=str(start),
            seed=seed + done,
            **{**FINE_TUNE, **(settings or {})},
        )
        trainer = BatchedTrainer(config)
        exported = [done]

        def export(row: dict[str, float]) -> None:
            nonlocal path
            now = done + trainer.samples
            line = {
                "steps": now,
                "mean_return": row["mean_return"],
                "games": int(row["games"]),
                "opponent_return": row.get("opponent_return"),
            }
            with (out / "progress.jsonl").open("a") as log:  # the learning curve, one line per update
                log.write(json.dumps(line) + "\n")
            if now - exported[-1] >= chunk or trainer.samples >= config.samples:
                meta = {"recipe": "strong (clone the heuristic, then batched PPO)", "steps": now, "seed": seed}
                path = trainer.export(out / f"model-{now:09d}.npz", meta=meta)
                exported.append(now)
                say(f"exported {path}")

        def progress(text: str) -> None:
            row = trainer.history[-1]  # this update's, appended before its line is said
            warming = row["samples"] - row["decisions"] < config.value_warmup  # as BatchedTrainer.update decides
            resumed = f"{done:,} steps before this run + " if done else ""
            say(resumed + text + (" (actor frozen)" if warming else ""))

        trainer.train(say=progress, after_update=export)
    return convert_numpy_policy(path, out / "model.npz")


def fine_tune_sb3(
    game: str,
    options: dict[str, Any],
    start: str | Path,
    out_dir: str | Path,
    *,
    steps: int,
    envs: int = 8,
    freeze: int = 40_000,
    chunk: int = 100_000,
    seed: int = 0,
    opponents: str = "heuristic",
    settings: dict[str, Any] | None = None,
    features: Any = None,
    say: Any = print,
) -> Path:
    """The first recipe's fine-tuning (before :func:`fine_tune`): MaskablePPO (SB3) from the numpy policy ``start`` on
    one rotating seat against ``opponents`` for ``steps`` learner decisions; returns the last exported model.
    Resumes from the newest ``model-<steps>.npz`` under ``out_dir`` (the value network restarts). ``features``:
    derived inputs appended to each observation (see :class:`ScaledObservation`); ``start`` must have been fitted on
    the same (its input size says so), and the exported files expect them too."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    if steps < 1 or envs < 1 or chunk < 1 or freeze < 0:
        raise ValueError(f"steps, envs and chunk must be >= 1 and freeze >= 0; got {steps}, {envs}, {chunk}, {freeze}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    done = 0
    last = _last_export(out)
    if last is not None:
        start, done = last  # the value network starts afresh: it is fitted again with the policy frozen
        say(f"resuming from {start} ({done} steps done)")
    initial = load_numpy_policy(start)
    scale = initial.input_scale if initial.input_scale is not None else np.ones(initial.observation_size, np.float32)
    if initial.input_offset is not None or initial.activation != "relu":
        raise ValueError(f"{initial.name}: fine-tuning needs a ReLU model with no input offset")
    torch.set_num_threads(1)

    def make_env() -> Any:
        single = SingleAgentEnv(game, opponents=opponents, seat="rotate", **options)
        return Monitor(ScaledObservation(single, scale, features))

    vec_env = DummyVecEnv([make_env] * envs)
    vec_env.seed(seed + done)
    policy_kwargs = {
        "net_arch": {"pi": list(initial.hidden), "vf": [256, 256]},
        "activation_fn": torch.nn.ReLU,
        "ortho_init": False,
    }
    model = MaskablePPO(
        "MlpPolicy",
        vec_env,
        seed=seed + done,
        device="cpu",
        verbose=0,
        policy_kwargs=policy_kwargs,
        **{**FINE_TUNE_SB3, **(settings or {})},
    )
    layers = _policy_layers(model)
    if len(layers) != len(initial.weights):
        raise ValueError(f"{initial.name}: {len(initial.weights)} layers, the PPO policy has {len(layers)}")
    with torch.no_grad():
        for layer, (weight, bias) in zip(layers, initial.weights, strict=True):
            layer.weight.copy_(torch.from_numpy(weight.T))
            layer.bias.copy_(torch.from_numpy(bias))
    policy_parameters = [p for layer in layers for p in layer.parameters()]

    from stable_baselines3.common.callbacks import BaseCallback

    class Progress(BaseCallback):
        """Prints the mean episode return each update; unfreezes the policy once the value net had its steps."""

        def __init__(self) -> None:
            super().__init__()
            self.returns: list[float] = []
            self.began = time.perf_counter()

        def _on_step(self) -> bool:
            self.returns += [info["episode"]["r"] for info in self.locals["infos"] if "episode" in info]
            return True

        def _on_rollout_end(self) -> None:
            steps_now = done + self.num_timesteps
            if steps_now >= done + freeze:
                for p in policy_parameters:
                    p.requires_grad_(True)
            if self.returns:
                row = {"steps": steps_now, "mean_return": float(np.mean(self.returns)), "games": len(self.returns)}
                with (out / "progress.jsonl").open("a") as log:  # the learning curve, one line per update
                    log.write(json.dumps(row) + "\n")
                say(
                    f"{steps_now} steps, {time.perf_counter() - self.began:.0f} s: mean return "
                    f"{np.mean(self.returns):+.3f} over {len(self.returns)} games"
                    + (" (policy frozen)" if steps_now < done + freeze else "")
                )
            self.returns = []

    for p in policy_parameters:
        p.requires_grad_(freeze == 0)
    progress = Progress()
    path = Path(start)
    env = make_raw(game, **options)
    while done + model.num_timesteps < steps:
        model.learn(
            min(chunk, steps - done - model.num_timesteps),
            callback=progress,
            reset_num_timesteps=False,
            progress_bar=False,
        )
        now = done + model.num_timesteps
        meta = {"recipe": "strong (clone the heuristic, then MaskablePPO)", "steps": now, "seed": seed}
        path = save_for_env(
            out / f"model-{now:09d}.npz",
            env,
            weights=_weights(model),
            activation="relu",
            input_scale=scale,
            meta=meta,
        )
        say(f"exported {path}")
    vec_env.close()
    env.close()
    final = out / "model.npz"
    final.write_bytes(path.read_bytes())
    return final


def strong(
    game: str,
    out_dir: str | Path,
    *,
    options: dict[str, Any] | None = None,
    label_games: int = 1500,
    epochs: int = 15,
    hidden: Sequence[int] = (256, 256),
    steps: int = 10_000_000,
    workers: int = 2,
    seed: int = 0,
    fine_tune_options: dict[str, Any] | None = None,
    say: Any = print,
) -> Path:
    """The whole recipe under ``out_dir`` (``labels/``, ``clone.npz``, ``fine-tune/``); returns the final model.
    ``fine_tune_options``: more keyword arguments of :func:`fine_tune` (chunk, learner_seats, settings)."""
    options = dict(options or {})
    out = Path(out_dir)
    began = time.perf_counter()
    clone = clone_heuristic_aec(
        game, out, options=options, label_games=label_games, epochs=epochs, hidden=hidden, workers=workers, seed=seed,
        say=say,
    )  # fmt: skip
    final = fine_tune(
        game, options, clone, out / "fine-tune", steps=steps, seed=seed, say=say, **(fine_tune_options or {})
    )
    say(f"wrote {final} ({time.perf_counter() - began:.0f} s in all)")
    return final


def clone_heuristic_aec(
    game: str,
    out_dir: str | Path,
    *,
    options: dict[str, Any] | None = None,
    label_games: int = 1500,
    epochs: int = 15,
    hidden: Sequence[int] = (256, 256),
    workers: int = 2,
    seed: int = 0,
    say: Any = print,
) -> Path:
    """The strong recipe's first stage under ``out_dir``: ``label_games`` games of heuristic self-play labelled
    (``labels/``), a ReLU MLP fitted to the heuristic's choices, exported as ``clone.npz`` (its fit in
    ``clone.json``); returns ``clone.npz``, made once (a rerun returns the file there).

    The labels come from AEC games with the game's Python heuristic in every seat (``distill.label_games``: game
    ``i`` dealt with seed ``seed + i``, one shard per game, resumable, ``workers`` processes), so any game can be
    cloned. :func:`tableenvs.training.league.clone_heuristic_batched` (the league's) does the same
    job in a game's batched engine, with other deals: the two give different clones for the same seed. The fit and
    export are the same code (:func:`tableenvs.training.distill.fit_and_export`)."""
    options = dict(options or {})
    out = Path(out_dir)
    clone = out / "clone.npz"
    if clone.exists():
        return clone
    distill.label_games(
        game,
        options,
        games=label_games,
        out_dir=out / "labels",
        seed=seed,
        search_spec="heuristic",
        workers=workers,
        say=say,
    )
    data = distill.read_shards(out / "labels")
    say(f"cloning the heuristic from {len(data['action'])} labels")
    return distill.fit_and_export(
        data, clone, game, options, "strong: clone of the heuristic", hidden=hidden, epochs=epochs, seed=seed,
        threads=workers, say=say,
    )  # fmt: skip


def search_clone(
    game: str,
    out_dir: str | Path,
    *,
    options: dict[str, Any] | None = None,
    label_games: int = 300,
    labeller: str = "search",
    features: str | None = "game's",
    epochs: int = 8,
    hidden: Sequence[int] = (256, 256),
    workers: int = 2,
    seed: int = 0,
    say: Any = print,
) -> Path:
    """The ``search-clone`` recipe under ``out_dir``: ``label_games`` games with every seat playing ``labeller``
    (``labels/``, resumable), each decision with a choice kept; the game's derived inputs (``features``: a name of
    :mod:`tableenvs.policies.input_features`, by default the spec's ``clone_features``, ``None`` for the observation
    alone) appended; a ReLU MLP fitted to the choices made (one-hot targets, :func:`tableenvs.training.distill.fit`);
    written as ``model.npz`` (float16 weights, its header naming the features) with ``clone.json`` (the fit's
    history). Returns the model's path; a rerun with the model there returns it."""
    from tableenvs.policies.input_features import input_features

    options = dict(options or {})
    out = Path(out_dir)
    model = out / "model.npz"
    if model.exists():
        return model
    if features == "game's":
        from tableenvs.core.registry import spec

        features = spec(game).clone_features
    env = make_raw(game, **options)  # the game and its options, checked before labelling
    derive = input_features(features, env) if features else None
    began = time.perf_counter()
    data = distill.labelled_choices(
        game, options, games=label_games, out_dir=out / "labels", seed=seed, search_spec=labeller, workers=workers,
        say=say,
    )  # fmt: skip
    if derive is not None:
        data = distill.with_features(data, derive)
    say(f"cloning {labeller} from {len(data['action'])} labels, {data['observation'].shape[1]} inputs")
    distill.fit_and_export(
        data, model, game, options, f"search-clone: {labeller}", hidden=hidden, epochs=epochs, seed=seed,
        threads=workers, say=say, input_features=features, dtype="float16",
    )  # fmt: skip
    say(f"wrote {model} ({time.perf_counter() - began:.0f} s in all)")
    return model
