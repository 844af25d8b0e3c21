"""Tournament results: :class:`EvaluationResult`, its text tables, files (JSON, CSV) and the ratings PNG.

Where you are: the evaluation package's output. ``results.json`` is strict JSON (a missing number is ``null``,
never ``NaN``): :func:`strict_json` is the one writer, used by ``tableenvs train`` too.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tableenvs.evaluation.output_folder import result_folder
from tableenvs.evaluation.ratings import Z95
from tableenvs.paths import atomic_output, write_text_atomic

from .playing import PlayedGame
from .seating import SeatingPlan
from .statistics import entrant_rows, head_to_head, paired_comparisons


def strict_json(data: Any) -> str:
    """``data`` as indented JSON with every non-finite float written as ``null``."""

    def clean(value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if isinstance(value, dict):
            return {key: clean(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [clean(item) for item in value]
        if isinstance(value, np.generic):
            return clean(value.item())
        return value

    return json.dumps(clean(data), indent=2, allow_nan=False) + "\n"


@dataclass
class EvaluationResult:
    """Every game's record and the statistics computed from them (see :mod:`tableenvs.evaluation`).

    ``candidates`` are the entrants compared in :attr:`paired`: all entrants of a round robin, the listed
    policies (not the field of opponents) of a gauntlet. ``partial`` marks the results of a tournament stopped part
    way (``reason``, ``games_finished``, ``games_planned``, ``games_reported``, ``note``; in ``results.json`` as
    ``"partial"``); ``resumed`` counts the games taken from an earlier run's log, not played in this one (nor
    timed in ``seconds``).
    """

    env: str
    options: dict[str, Any]
    num_players: int
    labels: list[str]
    candidates: int
    seed: int
    plan: SeatingPlan
    duplicate: bool
    records: list[PlayedGame]
    score_name: str
    higher_is_better: bool
    workers: int = 1
    backend: str = "local"
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    partial: dict[str, Any] | None = None
    resumed: int = 0
    policies: list[dict[str, Any]] = field(init=False)
    head_to_head: dict[str, Any] = field(init=False)
    paired: list[dict[str, Any]] = field(init=False)

    def __post_init__(self):
        k = len(self.labels)
        score, meetings = head_to_head(self.records, k)
        self.policies = entrant_rows(self.records, self.labels, score, meetings)
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = np.where(meetings > 0, score / np.maximum(meetings, 1), np.nan)
        self.head_to_head = {
            "kind": "head_to_head" if self.num_players == 2 else "pairwise_finishing_order",
            "entrants": self.labels,
            "meetings": meetings.tolist(),
            "score": score.tolist(),
            "score_rate": [[None if math.isnan(x) else float(x) for x in row] for row in rate],
        }
        self.paired = paired_comparisons(
            self.records, self.labels, list(itertools.combinations(range(self.candidates), 2))
        )

    @property
    def games(self) -> int:
        return len(self.records)

    @property
    def blocks(self) -> int:
        return len({r.block for r in self.records})

    @property
    def games_per_second(self) -> float:
        return (self.games - self.resumed) / self.seconds if self.seconds > 0 else math.nan

    def seat_counts(self) -> np.ndarray:
        """``[entrant, seat]`` number of games the entrant sat in the seat."""
        counts = np.zeros((len(self.labels), self.num_players), dtype=np.int64)
        for record in self.records:
            for seat, entrant in enumerate(record.entrants):
                counts[entrant, seat] += 1
        return counts

    def header(self) -> str:
        """The line that says what was played: players, games, seating design, deals, seed."""
        deals = "duplicate deals (one deal per block)" if self.duplicate else "a new deal every game"
        truncated = sum(r.truncated for r in self.records)
        return (
            f"{self.env}: {self.num_players} players, {len(self.labels)} entrants, {self.games} games = "
            f"{self.blocks} blocks x {self.plan.size} ({self.plan.describe()}), {deals}, seed {self.seed}"
            + (f"; {truncated} games truncated" if truncated else "")
        )

    def to_dict(self) -> dict[str, Any]:
        """Everything as plain data (what ``results.json`` holds), without timing; ``"partial"`` only if partial."""
        partial = {} if self.partial is None else {"partial": {k: v for k, v in self.partial.items() if k != "note"}}
        return {
            **partial,
            "env": self.env,
            "options": self.options,
            "num_players": self.num_players,
            "entrants": self.labels,
            "candidates": self.labels[: self.candidates],
            "games": self.games,
            "seed": self.seed,
            "seating": {"design": self.plan.design, "block_size": self.plan.size, "blocks": self.blocks},
            "duplicate": self.duplicate,
            "final_score": {"name": self.score_name, "higher_is_better": self.higher_is_better},
            "truncated_games": sum(r.truncated for r in self.records),
            "mean_decisions": float(np.mean([r.decisions for r in self.records])),
            "notes": self.notes,
            "policies": self.policies,
            "head_to_head": self.head_to_head,
            "paired": self.paired,
            "seat_counts": self.seat_counts().tolist(),
        }

    def format_table(self) -> str:
        """The header, one row per entrant, then the pairwise table and the paired comparisons."""
        header = ["policy", "seat-games", "win rate [95%]", "reward [95%]", f"{self.score_name} [95%]"]
        header += ["rank", "openskill mu±1.96σ", "elo ±1.96se"]
        rows = [header]
        for row in self.policies:
            rows.append(
                [
                    row["policy"],
                    str(row["appearances"]),
                    f"{row['win_rate']:.3f} [{row['win_rate_low']:.3f}, {row['win_rate_high']:.3f}]",
                    f"{row['reward_mean']:+.2f} [{row['reward_low']:+.2f}, {row['reward_high']:+.2f}]",
                    f"{row['score_mean']:.2f} [{row['score_low']:.2f}, {row['score_high']:.2f}]",
                    f"{row['mean_rank']:.2f}",
                    f"{row['openskill_mu']:.2f} ± {Z95 * row['openskill_sigma']:.2f}",
                    "-" if row["elo"] is None else f"{row['elo']:.0f} ± {Z95 * row['elo_se']:.0f}",
                ]
            )
        lines = [self.header(), *self.notes, ""] + _columns(rows)
        if len(self.labels) > 1:
            lines += ["", self.format_head_to_head()]
        if self.paired:
            lines += ["", self.format_paired()]
        return "\n".join(lines)

    def format_head_to_head(self) -> str:
        """Row's score against column (wins + draws/2 over meetings) as a text matrix."""
        table = self.head_to_head
        what = "head-to-head" if self.num_players == 2 else "pairwise finishing order"
        rows = [[f"{what}: row's score vs column", *self.labels]]
        for i, label in enumerate(self.labels):
            cells = [label]
            for j in range(len(self.labels)):
                count = table["meetings"][i][j]
                cells.append("-" if i == j or count == 0 else f"{table['score_rate'][i][j]:.3f}")
            rows.append(cells)
        return "\n".join(_columns(rows, rule=False))

    def format_paired(self) -> str:
        """The paired comparisons: mean per-block difference of final score and win rate, 95% interval, p."""
        same = "the same deals" if self.duplicate else "the same seatings"
        rows = [["paired, a - b", f"{self.score_name} diff [95%]", "p", "win rate diff [95%]", "p", "blocks"]]
        for row in self.paired:
            rows.append(
                [
                    f"{row['policy']} - {row['opponent']}",
                    _interval(row, "score_diff"),
                    _p(row["score_p"]),
                    _interval(row, "win_diff"),
                    _p(row["win_p"]),
                    str(row["blocks"]),
                ]
            )
        lines = _columns(rows)
        lines.append(f"(per-block differences over {same}; normal 95% intervals and two-sided p-values)")
        return "\n".join(lines)

    def save(self, out: str | Path, plot: bool = True) -> dict[str, Path]:
        """Write ``results.json``, ``policies.csv``, ``games.csv``, ``head_to_head.csv``, ``paired.csv`` and
        (``plot``) ``ratings.png`` under ``out``, all together or not at all
        (:func:`~tableenvs.evaluation.output_folder.result_folder`: a sibling folder renamed into place; an earlier
        run's result files are replaced, any other file in ``out`` stays); return their paths by kind. A failed
        write raises :class:`~tableenvs.paths.OutputError` and leaves ``out`` as it was."""
        out = Path(out)
        with result_folder(out) as folder:
            written = self._write(folder, plot)
        return {kind: out / path.name for kind, path in written.items()}

    def _write(self, out: Path, plot: bool) -> dict[str, Path]:
        """Write every result file into the folder ``out``; their paths by kind."""
        paths = {
            "json": out / "results.json",
            "policies_csv": out / "policies.csv",
            "games_csv": out / "games.csv",
            "head_to_head_csv": out / "head_to_head.csv",
            "paired_csv": out / "paired.csv",
        }
        write_text_atomic(paths["json"], strict_json(self.to_dict()))
        _write_csv(paths["policies_csv"], list(self.policies[0]), [list(row.values()) for row in self.policies])
        n = self.num_players
        _write_csv(
            paths["games_csv"],
            [
                "game",
                "block",
                *(f"policy_{s}" for s in range(n)),
                *(f"reward_{s}" for s in range(n)),
                *(f"{self.score_name}_{s}" for s in range(n)),
                *(f"rank_{s}" for s in range(n)),
                "winners",
                "truncated",
                "decisions",
            ],
            [
                [
                    r.index,
                    r.block,
                    *(self.labels[e] for e in r.entrants),
                    *(f"{x:g}" for x in r.rewards),
                    *(f"{x:g}" for x in r.scores),
                    *r.ranks,
                    " ".join(map(str, r.winners)),
                    int(r.truncated),
                    r.decisions,
                ]
                for r in self.records
            ],
        )
        h2h = self.head_to_head
        _write_csv(
            paths["head_to_head_csv"],
            ["policy", "opponent", "meetings", "score", "score_rate"],
            [
                [a, b, h2h["meetings"][i][j], h2h["score"][i][j], f"{h2h['score_rate'][i][j]:.6f}"]
                for i, a in enumerate(self.labels)
                for j, b in enumerate(self.labels)
                if i != j and h2h["meetings"][i][j]
            ],
        )
        columns = ["policy", "opponent", "blocks", "score_diff", "score_diff_low", "score_diff_high", "score_p"]
        columns += ["win_diff", "win_diff_low", "win_diff_high", "win_p"]
        _write_csv(paths["paired_csv"], columns, [[row[c] for c in columns] for row in self.paired])
        if plot:
            paths["png"] = out / "ratings.png"
            plot_ratings(self, paths["png"])
        return paths


def _write_csv(path: Path, header: list[str], rows: list[list[Any]]) -> None:
    with atomic_output(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(["" if isinstance(x, float) and math.isnan(x) else x for x in row] for row in rows)


def _columns(rows: list[list[str]], rule: bool = True) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    if rule:
        lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def _interval(row: dict[str, Any], key: str) -> str:
    low, high = row[f"{key}_low"], row[f"{key}_high"]
    if math.isnan(low):
        return f"{row[key]:+.3f}"
    return f"{row[key]:+.3f} [{low:+.3f}, {high:+.3f}]"


def _p(value: float) -> str:
    if math.isnan(value):
        return "-"
    return "<1e-300" if value == 0.0 else f"{value:.2g}"


def plot_ratings(result: EvaluationResult, path: str | Path) -> Path:
    """A PNG with three panels: win rate (Wilson 95%), OpenSkill mu +- 1.96 sigma, Elo +- 1.96 se."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result.policies
    y = np.arange(len(rows))[::-1]
    labels = [row["policy"] for row in rows]
    figure, axes = plt.subplots(1, 3, figsize=(13, 1.2 + 0.55 * len(rows)), sharey=True)
    panels = [
        (
            "win rate (95% Wilson)",
            [r["win_rate"] for r in rows],
            [(r["win_rate"] - r["win_rate_low"], r["win_rate_high"] - r["win_rate"]) for r in rows],
        ),
        (
            "OpenSkill Plackett-Luce mu ± 1.96σ",
            [r["openskill_mu"] for r in rows],
            [(Z95 * r["openskill_sigma"],) * 2 for r in rows],
        ),
        (
            "Elo (Bradley-Terry) ± 1.96 se",
            [math.nan if r["elo"] is None else r["elo"] for r in rows],
            [(0.0, 0.0) if r["elo_se"] is None else (Z95 * r["elo_se"],) * 2 for r in rows],
        ),
    ]
    for axis, (title, values, errors) in zip(axes, panels, strict=True):
        xerr = np.clip(np.nan_to_num(np.array(errors, dtype=float).T), 0.0, None)
        axis.errorbar(values, y, xerr=xerr, fmt="o", capsize=4, color="tab:blue")
        axis.set_title(title, fontsize=10)
        axis.grid(axis="x", alpha=0.3)
    axes[0].axvline(1.0 / result.num_players, color="grey", linestyle=":", linewidth=1)
    axes[0].set_yticks(y, labels)
    axes[0].set_ylim(-0.7, len(rows) - 0.3)
    figure.suptitle(
        f"{result.env}: {result.num_players} players, {result.games} games, {result.plan.design} seating"
        + (", duplicate deals" if result.duplicate else "")
        + f" (seed {result.seed})"
    )
    figure.tight_layout()
    path = Path(path)
    try:
        with atomic_output(path, "wb") as handle:
            figure.savefig(handle, format="png", dpi=110)
    finally:
        plt.close(figure)
    return path
