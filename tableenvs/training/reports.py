"""What the training job reports: its evaluations (:func:`evaluate_agent`, :func:`summary`), the progress line, the
final table of the trained agent against random and heuristic play, and the learning-curve plot.

Where you are: ``tableenvs/training/``, called by the job (:mod:`tableenvs.training.job`). Every evaluation goes
through :func:`tableenvs.evaluation.evaluate`: one evaluator, one rule for winners.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from tableenvs.core.registry import spec as game_spec
from tableenvs.evaluation import EvaluationResult, evaluate
from tableenvs.paths import atomic_output
from tableenvs.policies import PolicySpec
from tableenvs.training.config import TrainConfig


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


def format_eval_line(result: dict[str, Any], config: TrainConfig) -> str:
    def interval(key: str, signed: bool) -> str:
        f = "+.3f" if signed else ".3f"
        return f"{result[key]:{f}} [{result[key + '_low']:{f}}, {result[key + '_high']:{f}}]"

    line = (
        f"step {result['timesteps']:>9,}: win rate {interval('win_rate', False)}, "
        f"reward/game {interval('mean_reward', True)} "
        f"({result['games']} games vs {describe_opponents(config.opponents)})"
    )
    if result.get("illegal_rate") is not None:
        line += f"; {result['illegal_rate']:.1%} of its actions so far were illegal"
    return line


def describe_opponents(opponents: Any) -> str:
    if isinstance(opponents, (list, tuple)):
        return ",".join(describe_opponents(o) for o in opponents)
    return str(opponents) if isinstance(opponents, (str, Path)) else type(opponents).__name__


#: The final table's name for the model shipped with the package (``--policies trained``), where one fits the run.
SHIPPED_AGENT = "shipped 'trained'"


def shipped_model_fits(config: TrainConfig) -> bool:
    """Whether the package ships a model (``"trained"``) for this run's game and options."""
    from tableenvs.core.registry import make_raw
    from tableenvs.policies import make_policy

    try:
        make_policy("trained", make_raw(config.env, **config.options))
    except ValueError:  # none for this game, or made for other options
        return False
    return True


def final_table(config: TrainConfig, model: Any) -> list[dict[str, Any]]:
    """Trained agent, random, heuristic and the shipped model (where one fits the run's game and options) in the
    same seats on the same deals, vs random and vs heuristic opponents; each other agent compared with the trained
    one by a paired test over the deals."""
    has_heuristic = game_spec(config.env).heuristic is not None
    opponent_kinds = ["random", "heuristic"] if has_heuristic else ["random"]
    agents: list[tuple[str, Any]] = [("trained", model), ("random", "random")]
    if has_heuristic:
        agents.append(("heuristic", "heuristic"))
    if shipped_model_fits(config):
        agents.append((SHIPPED_AGENT, "trained"))
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
    columns = [("opponents", 10), ("agent in seat", 18), ("win rate [95% CI]", 24), ("reward/game [95% CI]", 26)]
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
        agent = "trained (this run)" if row["agent"] == "trained" else row["agent"]
        cells = [row["opponents"], agent, interval(row, "win_rate", False), interval(row, "mean_reward")]
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


def standings(rows: list[dict[str, Any]]) -> str:
    """One line placing the trained agent among the others: the agents ordered best first by their final score per
    game against the strongest opponents of the table (heuristic ones where the game has a heuristic)."""
    field = rows[-1]["opponents"]
    block = [row for row in rows if row["opponents"] == field]
    key = "mean_score"
    ordered = sorted(block, key=lambda row: row[key], reverse=bool(block[0].get("higher_is_better", True)))
    names = ", ".join(f"{'this run' if row['agent'] == 'trained' else row['agent']} {row[key]:.2f}" for row in ordered)
    return f"where it stands against {field} opponents, best first ({block[0]['score_name']}/game): {names}"


def next_commands(config: TrainConfig, model_file: Path, num_players: int, trusted: bool) -> list[str]:
    """What to try after a run, as commands: play a game against the new agent, train longer against a stronger
    field, and a longer tournament. ``trusted``: the model is a ``.zip`` (the commands then need ``--trust-models``)."""
    trust = " --trust-models" if trusted else ""
    seats = ",".join(["human", str(model_file), *["heuristic"] * (num_players - 2)])
    players = f" --players {num_players}" if "num_players" in config.options else ""
    longer = max(100_000, 5 * config.timesteps)
    return [
        f"play against it: tableenvs play {config.env}{players} --policies {seats}{trust}",
        f"a longer tournament: tableenvs eval {config.env}{players} --policies {model_file},heuristic,trained "
        f"--games 2000{trust}",
        f"train longer, against the heuristic: tableenvs train {config.env}{players} --opponents heuristic "
        f"--timesteps {longer} --out {Path(config.out).parent / 'next'}",
    ]


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
