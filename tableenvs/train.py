"""The training job: MaskablePPO on one seat of a tableenvs game, evaluated against random and heuristic play.

Where you are: shared training plumbing (needs the ``train`` extra), used by ``tableenvs train`` and
``examples/train_maskable_ppo.py``. :func:`train` runs the whole job:

1. build ``num_envs`` :class:`~tableenvs.single_agent.SingleAgentEnv` copies (seat rotating per episode) and a
   ``MaskablePPO`` learner (one torch thread: the machines are small and shared);
2. learn for ``timesteps`` learner decisions with a progress bar; every ``eval_every`` steps play
   ``eval_games`` games against the training opponents and record the learning curve;
3. save ``model.zip``, ``curve.png`` (the learning curve), ``results.json`` (strict JSON); play the final
   evaluation and print the table: the trained agent, a random agent and the heuristic each in every seat on the
   same deals (a duplicate-deal gauntlet of :func:`tableenvs.evaluation.evaluate`), against random and against
   heuristic opponents: win rate, mean reward and mean final score per game with 95% intervals, and a paired
   test of each other agent against the trained one over the same deals.

Every evaluation here goes through :func:`tableenvs.evaluation.evaluate` (:func:`evaluate_agent`): one
evaluator, one rule for winners (:meth:`tableenvs.aec.TableEnv.outcome`).
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tableenvs.evaluation import EvaluationResult, evaluate, strict_json
from tableenvs.policies import PolicySpec
from tableenvs.registry import make_raw
from tableenvs.registry import spec as game_spec
from tableenvs.single_agent import SingleAgentEnv

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
    progress_bar: bool = True
    verbose: bool = True

    def __post_init__(self):
        game_spec(self.env)  # unknown name -> ValueError listing the valid ones
        for name in ("timesteps", "num_envs", "eval_every", "eval_games"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if isinstance(self.final_games, bool) or not isinstance(self.final_games, int) or self.final_games < 0:
            raise ValueError(f"final_games must be an integer >= 0, got {self.final_games!r}")
        if self.vec_env not in ("dummy", "subproc"):
            raise ValueError(f"vec_env must be 'dummy' or 'subproc', got {self.vec_env!r}")
        unknown = sorted(set(self.hyperparameters) - set(DEFAULT_HYPERPARAMETERS))
        if unknown:
            raise ValueError(
                f"unknown hyperparameter(s) {', '.join(unknown)}; known: {', '.join(DEFAULT_HYPERPARAMETERS)}"
            )
        if self.timesteps < self.rollout:  # PPO would silently train one whole rollout anyway
            raise ValueError(
                f"timesteps must be >= {self.rollout} (one PPO rollout: n_steps {self.rollout // self.num_envs} "
                f"x {self.num_envs} envs), got {self.timesteps}"
            )

    @property
    def rollout(self) -> int:
        """Decisions per PPO update (``n_steps`` x ``num_envs``); training runs whole rollouts."""
        return int(self.hyperparameters.get("n_steps", DEFAULT_HYPERPARAMETERS["n_steps"])) * self.num_envs

    @property
    def trained_timesteps(self) -> int:
        """The decisions training really takes: ``timesteps`` rounded up to whole rollouts."""
        return -(-self.timesteps // self.rollout) * self.rollout


# ---------------------------------------------------------------------------------------------- evaluation


def evaluate_agent(config: TrainConfig, agents: list[PolicySpec], games: int, seed: int) -> EvaluationResult:
    """A gauntlet of :func:`tableenvs.evaluation.evaluate`: each of ``agents`` in turn in every seat against the
    training opponents, on duplicate deals (every agent plays the same cards from the same seats)."""
    return evaluate(
        config.env, agents, games, opponents=config.opponents, options=config.options, seed=seed, duplicate=True
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


def _env_factory(config: TrainConfig, rank: int):
    def make() -> SingleAgentEnv:
        import torch

        torch.set_num_threads(1)  # in subprocess workers too: opponent models must not oversubscribe the cores
        return SingleAgentEnv(config.env, opponents=config.opponents, seat=config.seat, **config.options)

    return make


def make_training_env(config: TrainConfig):
    """The vectorised, monitored single-agent envs of ``config`` (seeded ``seed``, ``seed + 1``, ...)."""
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    return make_vec_env(
        _env_factory(config, 0),
        n_envs=config.num_envs,
        seed=config.seed,
        vec_env_cls=SubprocVecEnv if config.vec_env == "subproc" else DummyVecEnv,
    )


def make_model(config: TrainConfig, vec_env):
    from sb3_contrib import MaskablePPO

    settings = {**DEFAULT_HYPERPARAMETERS, **config.hyperparameters}
    net_arch = settings.pop("net_arch")
    return MaskablePPO(
        "MlpPolicy",
        vec_env,
        policy_kwargs={"net_arch": list(net_arch)},
        seed=config.seed,
        device="cpu",
        verbose=0,
        **settings,
    )


class _EvalCallback:
    """Built lazily (the base class needs stable-baselines3): periodic evaluation for the learning curve."""

    @staticmethod
    def create(config: TrainConfig, history: list[dict[str, Any]]):
        from stable_baselines3.common.callbacks import BaseCallback

        class EvalCallback(BaseCallback):
            def __init__(self):
                super().__init__()
                self.next_eval = 0
                self.episode_rewards: list[float] = []

            def _on_step(self) -> bool:
                for info in self.locals.get("infos", []):
                    if "episode" in info:
                        self.episode_rewards.append(float(info["episode"]["r"]))
                if self.num_timesteps >= self.next_eval:
                    self._evaluate()
                    self.next_eval = self.num_timesteps + config.eval_every
                return True

            def _on_training_end(self) -> None:
                if not history or history[-1]["timesteps"] != self.num_timesteps:
                    self._evaluate()

            def _evaluate(self) -> None:
                result = summary(evaluate_agent(config, [self.model], config.eval_games, 10_000_000 + config.seed))
                recent = self.episode_rewards[-200:]
                result["timesteps"] = int(self.num_timesteps)
                result["train_episode_reward"] = float(np.mean(recent)) if recent else math.nan
                history.append(result)

        return EvalCallback()


@dataclass
class TrainResult:
    """What :func:`train` produced: file paths, the learning curve and the final table (rows as dicts)."""

    model_path: Path
    curve_path: Path
    results_path: Path
    history: list[dict[str, Any]]
    table: list[dict[str, Any]]
    train_seconds: float
    eval_seconds: float


def train(config: TrainConfig) -> TrainResult:
    """Run the training job of ``config``; see the module docstring."""
    import torch

    torch.set_num_threads(1)
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    say = print if config.verbose else (lambda *a, **k: None)
    say(
        f"training MaskablePPO on {config.env}{f' {config.options}' if config.options else ''} "
        f"against {config.opponents!r}, "
        f"seat {config.seat}, {config.timesteps} steps"
        + (
            f" ({config.trained_timesteps} trained: whole rollouts of {config.rollout})"
            if config.trained_timesteps != config.timesteps
            else ""
        )
        + f", {config.num_envs} envs, seed {config.seed}"
    )
    vec_env = make_training_env(config)
    model = make_model(config, vec_env)
    history: list[dict[str, Any]] = []
    # The curve's baseline: a random agent on the periodic evaluation's deals and seats.
    baseline = summary(evaluate_agent(config, ["random"], config.eval_games, 10_000_000 + config.seed))
    started = time.perf_counter()
    model.learn(
        total_timesteps=config.timesteps,
        callback=_EvalCallback.create(config, history),
        progress_bar=config.progress_bar,
    )
    train_seconds = time.perf_counter() - started
    vec_env.close()
    model_path = out / "model.zip"
    model.save(model_path)
    curve_path = out / "curve.png"
    plot_curve(
        history,
        curve_path,
        title=f"MaskablePPO on {config.env} vs {config.opponents}",
        baseline=baseline,
        score_name=make_raw(config.env, **config.options).score_name,
    )
    say(f"trained in {train_seconds:.0f} s; model saved to {model_path}, learning curve to {curve_path}")

    started = time.perf_counter()
    table = final_table(config, model) if config.final_games else []
    eval_seconds = time.perf_counter() - started
    if table:
        say(format_table(table))
        say(f"(evaluation: {eval_seconds:.0f} s)")
    results_path = out / "results.json"
    config_dict = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(config).items()}
    config_dict["opponents"] = _jsonable(config.opponents)
    results_path.write_text(
        strict_json(
            {
                "config": config_dict,
                "hyperparameters": {**DEFAULT_HYPERPARAMETERS, **config.hyperparameters},
                "train_seconds": train_seconds,
                "eval_seconds": eval_seconds,
                "history": history,
                "curve_baseline": baseline,
                "final": table,
            }
        )
    )
    return TrainResult(model_path, curve_path, results_path, history, table, train_seconds, eval_seconds)


def _jsonable(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
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
        )
        paired = {row["opponent"]: row for row in result.paired if row["policy"] == result.labels[0]}
        for index, (name, _) in enumerate(agents):
            row = {"opponents": opponents, "agent": name, "score_name": result.score_name, **summary(result, index)}
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
    fig.savefig(path, dpi=110)
    plt.close(fig)
