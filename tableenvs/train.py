"""The training job: MaskablePPO on one seat of a tableenvs game, evaluated against random and heuristic play.

Where you are: shared training plumbing (needs the ``train`` extra), used by ``tableenvs train`` and
``examples/train_maskable_ppo.py``. :func:`train` runs the whole job:

1. build ``num_envs`` :class:`~tableenvs.single_agent.SingleAgentEnv` copies (seat rotating per episode) and a
   ``MaskablePPO`` learner (one torch thread: the machines are small and shared);
2. learn for ``timesteps`` learner decisions with a progress bar; every ``eval_every`` steps play
   ``eval_games`` games against the training opponents and record the learning curve;
3. save ``model.zip``, ``curve.png`` (the learning curve), ``results.json``; play the final evaluation
   (``final_games`` games per row, seats rotating, the same seeded deals for every row) and print the table:
   the trained agent, a random agent and the heuristic in the same seats, against random and against
   heuristic opponents: win rate and mean reward per game with 95% intervals, and Welch's t-test of the
   trained agent's reward against each other occupant of the seat.

:func:`evaluate` plays games between a policy in one seat and opponents in the others, for any game.
A game's winners are those its rules engine names (``env.game.winners``, tie-breaks included) or else the seats
with the highest total reward; ties share the win. Games whose engine counts ``rounds_completed`` (Pili Pili)
also get the reward per round (minus chilis per round with Pili Pili's default reward).
"""

from __future__ import annotations

import json
import math
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tableenvs.policies import Policy, PolicySpec, make_policy, play_game
from tableenvs.ratings import wilson_interval
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


# ---------------------------------------------------------------------------------------------- statistics


def mean_interval(values: np.ndarray) -> tuple[float, float, float]:
    """Mean and its 95% interval (Student t) of ``values``."""
    from scipy import stats

    values = np.asarray(values, dtype=float)
    mean = float(values.mean())
    if values.size < 2:
        return mean, math.nan, math.nan
    half = float(stats.t.ppf(0.975, values.size - 1) * values.std(ddof=1) / math.sqrt(values.size))
    return mean, mean - half, mean + half


def welch_p_value(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided p-value of Welch's t-test that ``a`` and ``b`` have the same mean."""
    from scipy import stats

    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.std() == 0 and b.std() == 0:
        return 1.0 if a.mean() == b.mean() else 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy's precision note when one sample is constant
        return float(stats.ttest_ind(a, b, equal_var=False).pvalue)


# ---------------------------------------------------------------------------------------------- evaluation


@dataclass
class EvalResult:
    """Per-game outcomes of the evaluated seat: total reward and win share (1, 1/k for a k-way tie, or 0).

    :meth:`summary` gives the mean reward with a Student-t 95% interval and the win rate with a Wilson 95% interval.
    """

    rewards: np.ndarray
    wins: np.ndarray
    rounds: np.ndarray | None = None  # rounds played per game, for games that count rounds (Pili Pili)

    def summary(self) -> dict[str, float]:
        reward, reward_low, reward_high = mean_interval(self.rewards)
        win = float(self.wins.mean())
        win_low, win_high = wilson_interval(self.wins.sum(), self.wins.size)
        extra = {}
        if self.rounds is not None and (self.rounds > 0).all():
            per_round, low, high = mean_interval(self.rewards / self.rounds)
            extra = {"reward_per_round": per_round, "reward_per_round_low": low, "reward_per_round_high": high}
        return {
            "games": int(self.rewards.size),
            "win_rate": win,
            "win_rate_low": win_low,
            "win_rate_high": win_high,
            "mean_reward": reward,
            "mean_reward_low": reward_low,
            "mean_reward_high": reward_high,
            **extra,
        }


def evaluate(
    env: str,
    agent: PolicySpec,
    opponents: PolicySpec | list[PolicySpec],
    games: int,
    *,
    seed: int = 0,
    options: dict[str, Any] | None = None,
) -> EvalResult:
    """Play ``games`` games of ``env`` with ``agent`` in seat ``i % num_players`` of game ``i``.

    ``opponents`` is one spec for every other seat or a list starting at the agent's left, as in
    :class:`~tableenvs.single_agent.SingleAgentEnv`. Game ``i`` is dealt from seed ``seed + i`` and the policies
    draw from their own generator seeded the same way, so two calls that differ only in ``agent`` play the same
    deals in the same seats.
    """
    game = make_raw(env, **(options or {}))
    n = game.num_players
    agent_policy = make_policy(agent, game)
    specs = opponents if isinstance(opponents, (list, tuple)) else [opponents] * (n - 1)
    if len(specs) != n - 1:
        raise ValueError(f"opponents lists one policy per other seat: {n - 1} for {n} players, got {len(specs)}")
    cache: dict[Any, Policy] = {}
    for spec in specs:
        if _key(spec) not in cache:
            cache[_key(spec)] = make_policy(spec, game)
    opponent_policies = [cache[_key(spec)] for spec in specs]
    rewards = np.zeros(games)
    wins = np.zeros(games)
    rounds = np.zeros(games)
    for i in range(games):
        seat = i % n
        seats: dict[int, Policy] = {seat: agent_policy}
        for k, policy in enumerate(opponent_policies, start=1):
            seats[(seat + k) % n] = policy
        rng = np.random.default_rng([seed, i, 1])
        totals, _ = play_game(game, seats, seed=seed + i, rng=rng)
        rewards[i] = totals[seat]
        winners = _winners(game, totals)
        if seat in winners:
            wins[i] = 1.0 / len(winners)
        rounds[i] = getattr(getattr(game, "game", None), "rounds_completed", -1)
    return EvalResult(rewards, wins, rounds if (rounds >= 0).all() else None)


def _winners(game, totals: np.ndarray) -> list[int]:
    """The game's own winners when its engine names them (tie-breaks included), else the highest totals."""
    named = getattr(getattr(game, "game", None), "winners", None)
    if named and not any(game.truncations.values()):
        return [int(s) for s in named]
    return np.flatnonzero(totals == totals.max()).tolist()


def _key(spec: PolicySpec) -> Any:
    return spec if isinstance(spec, (str, Path)) else id(spec)


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
                result = evaluate(
                    config.env,
                    self.model,
                    config.opponents,
                    config.eval_games,
                    seed=10_000_000 + config.seed,
                    options=config.options,
                ).summary()
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
    baseline = evaluate(
        config.env, "random", config.opponents, config.eval_games, seed=10_000_000 + config.seed, options=config.options
    ).summary()
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
    plot_curve(history, curve_path, title=f"MaskablePPO on {config.env} vs {config.opponents}", baseline=baseline)
    say(f"trained in {train_seconds:.0f} s; model saved to {model_path}, learning curve to {curve_path}")

    started = time.perf_counter()
    table = final_table(config, model) if config.final_games else []
    eval_seconds = time.perf_counter() - started
    if table:
        say(format_table(table, config.final_games))
        say(f"(evaluation: {eval_seconds:.0f} s)")
    results_path = out / "results.json"
    config_dict = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(config).items()}
    config_dict["opponents"] = _jsonable(config.opponents)
    results_path.write_text(
        json.dumps(
            {
                "config": config_dict,
                "hyperparameters": {**DEFAULT_HYPERPARAMETERS, **config.hyperparameters},
                "train_seconds": train_seconds,
                "eval_seconds": eval_seconds,
                "history": history,
                "curve_baseline": baseline,
                "final": table,
            },
            indent=2,
        )
    )
    return TrainResult(model_path, curve_path, results_path, history, table, train_seconds, eval_seconds)


def _jsonable(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value if isinstance(value, (str, int, float)) else repr(value)


def final_table(config: TrainConfig, model: Any) -> list[dict[str, Any]]:
    """Trained agent, random and heuristic in the same seats, vs random and vs heuristic opponents."""
    has_heuristic = game_spec(config.env).heuristic is not None
    opponent_kinds = ["random", "heuristic"] if has_heuristic else ["random"]
    seat_kinds: list[tuple[str, Any]] = [("trained", model), ("random", "random")]
    if has_heuristic:
        seat_kinds.append(("heuristic", "heuristic"))
    rows = []
    for opponents in opponent_kinds:
        results = {
            label: evaluate(
                config.env, agent, opponents, config.final_games, seed=20_000_000 + config.seed, options=config.options
            )
            for label, agent in seat_kinds
        }
        for label, result in results.items():
            row = {"opponents": opponents, "agent": label, **result.summary()}
            if label != "trained":
                trained = results["trained"]
                row["p_reward_vs_trained"] = welch_p_value(trained.rewards, result.rewards)
                row["p_win_vs_trained"] = welch_p_value(trained.wins, result.wins)
                if trained.rounds is not None and result.rounds is not None:
                    row["p_reward_per_round_vs_trained"] = welch_p_value(
                        trained.rewards / trained.rounds, result.rewards / result.rounds
                    )
            rows.append(row)
    return rows


def format_table(rows: list[dict[str, Any]], games: int) -> str:
    """The final table as text (with a reward-per-round column for games that count rounds)."""
    per_round = all("reward_per_round" in row for row in rows)

    def interval(row: dict[str, Any], key: str, signed: bool = True) -> str:
        f = "+.3f" if signed else ".3f"
        return f"{row[key]:{f}} [{row[key + '_low']:{f}}, {row[key + '_high']:{f}}]"

    columns = [("opponents", 10), ("agent in seat", 14), ("win rate [95% CI]", 24), ("reward/game [95% CI]", 26)]
    if per_round:
        columns.append(("reward/round [95% CI]", 26))
    columns += [("p win", 8), ("p reward", 9)]
    header = " ".join(f"{name:<{width}}" for name, width in columns)
    lines = [
        f"final evaluation: {games} games per row, seats rotating, same deals in every row; "
        "p: Welch's t-test against the trained agent",
        header,
        "-" * len(header),
    ]
    for row in rows:
        cells = [row["opponents"], row["agent"], interval(row, "win_rate", False), interval(row, "mean_reward")]
        if per_round:
            cells.append(interval(row, "reward_per_round"))
        p_reward = row.get("p_reward_per_round_vs_trained" if per_round else "p_reward_vs_trained")
        cells += [
            f"{row['p_win_vs_trained']:.2g}" if "p_win_vs_trained" in row else "",
            f"{p_reward:.2g}" if p_reward is not None else "",
        ]
        lines.append(" ".join(f"{cell:<{width}}" for cell, (_, width) in zip(cells, columns, strict=True)))
    if per_round:
        lines.append("(p reward: on reward per round)")
    return "\n".join(lines)


def plot_curve(
    history: list[dict[str, Any]],
    path: str | Path,
    *,
    title: str = "",
    baseline: dict[str, Any] | None = None,
) -> None:
    """Learning curve PNG against timesteps: evaluation reward per game (and per round, for games that count
    rounds) and win rate, each with its 95% band; ``baseline`` (an :meth:`EvalResult.summary` of a random agent
    in the same seats) is drawn as a dotted line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    steps = [h["timesteps"] for h in history]
    panels = [("mean_reward", "reward per game")]
    if history and all("reward_per_round" in h for h in history):
        panels.append(("reward_per_round", "reward per round"))
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
