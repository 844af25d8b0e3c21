"""Benchmark: the search whose rollouts run as one batch in the compiled engine (``search:batched=1``) against today's
default search (the bare ``search``, the game's ``search_default``) and the heuristic: speed and strength, the
"Batched search" block of docs/vector.md.

Speed (``--positions N``): positions reached by seeded heuristic play (``bench_search.positions``: every 5th
decision of a game with at least two legal actions; at ``--players`` seats). At each, in the same run, one decision
of the default search is timed (CPU time of this process, after one untimed decision at the same position), then one
decision of ``search:batched=1:ms=T:z=2`` with ``T`` that decision's own time: the simulations each does in the same
CPU time (the ratio of their totals, and the median of the ratios per position). Then the decision times of
``--spec`` (mean, p99, max) over every decision with a choice of one ``--spec`` seat in ``--timing-games`` games
among heuristic seats.

Strength (``--games N``): :func:`tableenvs.evaluation.evaluate` of ``--spec`` against each of ``--against``
(default: the default search, then the heuristic): half the seats each, every seating, duplicate deals (one deal per
block of seatings), so the paired 95% interval of the score difference compares the two on the same cards. Each
finished game is journaled beside its row (``search_vs_heuristic.journaled_evaluate``): the same command resumes.

Each part is saved as JSON under ``--out`` (``benchmarks/results/batched_search``); ``--write-docs`` rewrites the
marked block of docs/vector.md from every saved row, each with its command. Long runs: run under ``nice -n 19``.

Run: ``python benchmarks/batched_search.py --game llama_party_v0 --players 4 --spec search:batched=1:sims=400:z=2
[--positions 40] [--timing-games 2] [--games 240] [--against search,heuristic] [--seed 0] [--write-docs]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
from bench_search import positions
from common import CLOCK, replace_block
from search_vs_heuristic import journaled_evaluate, run_script, versus_heuristic

import tableenvs
from tableenvs.evaluation import evaluate
from tableenvs.evaluation.journal import read_log
from tableenvs.policies import make_policy, play_game

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "vector.md"
OUT = ROOT / "benchmarks" / "results" / "batched_search"
BEGIN = "<!-- batched_search: begin (written by benchmarks/batched_search.py --write-docs) -->"
END = "<!-- batched_search: end -->"


def timed_decision(policy, env, rng) -> tuple[float, int]:
    """(CPU seconds, simulations) of one decision of ``policy`` at ``env``'s position, after one untimed one."""
    seen = env.observe(env.agent_selection)
    policy.act(seen["observation"], seen["action_mask"], rng)
    start = CLOCK()
    policy.act(seen["observation"], seen["action_mask"], rng)
    return CLOCK() - start, policy.last_simulations


def speed(name: str, players: int, count: int, seed: int) -> dict:
    """Simulations of the default search and of the batched search in the same CPU time, per position."""
    envs = positions(name, count, players)
    rng = np.random.default_rng(seed)
    rows = []
    for i, env in enumerate(envs):
        default_seconds, default_sims = timed_decision(make_policy("search", env), env, rng)
        ms = max(default_seconds * 1000, 1.0)
        batched = make_policy(f"search:batched=1:ms={ms:.3f}:z=2", env)
        batched_seconds, batched_sims = timed_decision(batched, env, rng)
        worlds = batched._batched.world_seconds  # sampling the worlds and loading them into the engine
        rows.append((default_seconds, default_sims, batched_seconds, batched_sims, worlds))
        print(
            f"# position {i + 1}/{len(envs)}: default {default_sims} sims in {default_seconds * 1000:.1f} ms, "
            f"batched {batched_sims} sims in {batched_seconds * 1000:.1f} ms",
            flush=True,
        )
    table = np.array(rows)
    ratios = (table[:, 3] / table[:, 2]) / (table[:, 1] / table[:, 0])
    return {
        "positions": len(rows),
        "default_ms_mean": float(table[:, 0].mean() * 1000),
        "default_sims_mean": float(table[:, 1].mean()),
        "default_sims_per_second": float(table[:, 1].sum() / table[:, 0].sum()),
        "batched_ms_mean": float(table[:, 2].mean() * 1000),
        "batched_sims_mean": float(table[:, 3].mean()),
        "batched_sims_per_second": float(table[:, 3].sum() / table[:, 2].sum()),
        "ratio_of_rates": float((table[:, 3].sum() / table[:, 2].sum()) / (table[:, 1].sum() / table[:, 0].sum())),
        "ratio_median": float(np.median(ratios)),
        "ratio_min": float(ratios.min()),
        "worlds_share": float(table[:, 4].sum() / table[:, 2].sum()),
    }


class _Timed:
    """A seat playing ``policy`` whose decisions with a choice are timed (CPU ms)."""

    def __init__(self, policy):
        self.policy = policy
        self.times: list[float] = []
        self.simulations = 0

    def act(self, observation, action_mask, rng):
        start = CLOCK()
        action = self.policy.act(observation, action_mask, rng)
        if action_mask.sum() > 1:
            self.times.append((CLOCK() - start) * 1000)
            self.simulations += self.policy.last_simulations
        return action


def decision_times(name: str, spec: str, players: int, games: int, seed: int) -> dict:
    """Mean, p99 and max CPU ms of every decision with a choice of one ``spec`` seat among heuristics."""
    times: list[float] = []
    simulations = 0
    for game in range(games):
        env = tableenvs.make_raw(name, num_players=players)
        timed = _Timed(make_policy(spec, env))
        heuristic = make_policy("heuristic", env)
        seats = [timed if seat == game % players else heuristic for seat in range(players)]
        play_game(env, seats, seed=seed + game, rng=np.random.default_rng(seed + game))
        times += timed.times[1:] if game == 0 else timed.times  # the first decision compiles/loads the kernels
        simulations += timed.simulations
    array = np.array(times)
    return {
        "decisions": len(times),
        "mean_ms": float(array.mean()),
        "p99_ms": float(np.percentile(array, 99)),
        "max_ms": float(array.max()),
        "simulations_per_decision": simulations / max(len(times), 1),
    }


def strength(
    name: str, players: int, spec: str, baseline: str, games: int, seed: int, out: Path, from_journal: bool = False
) -> dict:
    """``spec`` − ``baseline`` over ``games`` duplicate-deal games (journaled under ``out``). ``from_journal``: the
    whole blocks a stopped run's journal holds instead (no game played; the row is the one ``--games`` of that many
    gives, every game depending only on the seed and its index)."""
    arguments = {
        "env": name,
        "policies": [baseline, spec],
        "games": games,
        "num_players": players,
        "options": {},
        "seed": seed,
    }
    journal = out / f"{slug(name, players, spec, baseline, games, seed)}.partial"
    if from_journal:
        finished = sorted(read_log(journal), key=lambda game: game.index)
        size = sum(1 for game in finished if game.block == 0)
        whole = len(finished) // max(size, 1) * size
        if whole < 2 * size:
            raise ValueError(f"{journal} holds {len(finished)} games: fewer than two whole blocks")
        result = evaluate(**{**arguments, "games": whole}, finished=finished[:whole])
    else:
        result = journaled_evaluate(journal, arguments, 1)
    print(result.format_table(), flush=True)
    diff, win = versus_heuristic(result.paired[0], baseline)
    baseline_resolved = baseline  # a search: the setting it stood for (the bare "search" is the game's default)
    if baseline.startswith("search"):
        baseline_resolved = repr(make_policy(baseline, tableenvs.make_raw(name, num_players=players)))
    return {"games": result.games, "blocks": result.blocks, "score_name": result.score_name, "baseline_resolved":
            baseline_resolved, **diff, "score_p": result.paired[0]["score_p"], **win}  # fmt: skip


def slug(*parts) -> str:
    return "__".join(str(p).replace(":", "_").replace("=", "") for p in parts)


def save(out: Path, kind: str, name: str, players: int, spec: str, command: str, body: dict, key: str = "") -> None:
    out.mkdir(parents=True, exist_ok=True)
    row = {
        "kind": kind,
        "game": name,
        "players": players,
        "spec": spec,
        **body,
        "command": command,
        "load": os.getloadavg()[0],
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "python": platform.python_version(),
    }
    path = out / f"{kind}__{slug(name, players, spec, key, body.get('games', ''))}.json"
    path.write_text(json.dumps(row, indent=1))
    print(json.dumps(row), flush=True)


def table(rows: list[dict]) -> str:
    lines = []
    speeds = [row for row in rows if row["kind"] == "speed"]
    if speeds:
        lines += [
            "Simulations in the same CPU time (at each position the batched search gets the default search's own "
            "decision time as its `ms` budget):",
            "",
            "| game | positions | default: ms / decision, sims / decision | batched: sims / decision | sims per "
            "CPU-second, default → batched | ratio (of rates; median, min per position) | batched CPU spent sampling "
            "and loading worlds |",
            "|---|---|---|---|---|---|---|",
        ]
        for row in speeds:
            lines.append(
                f"| {row['game']} {row['players']}p | {row['positions']} | {row['default_ms_mean']:.0f} ms, "
                f"{row['default_sims_mean']:.0f} | {row['batched_sims_mean']:.0f} | "
                f"{row['default_sims_per_second']:,.0f} → {row['batched_sims_per_second']:,.0f} | "
                f"**{row['ratio_of_rates']:.1f}x** ({row['ratio_median']:.1f}x, {row['ratio_min']:.1f}x) | "
                + (f"{row['worlds_share']:.0%} |" if "worlds_share" in row else "- |")
            )
        lines.append("")
    timings = [row for row in rows if row["kind"] == "timing"]
    if timings:
        lines += [
            "Decision times (CPU, one seat among heuristics, every decision with a choice):",
            "",
            "| game | setting | decisions | mean ms | p99 ms | max ms | sims / decision |",
            "|---|---|---|---|---|---|---|",
        ]
        for row in timings:
            lines.append(
                f"| {row['game']} {row['players']}p | `{row['spec']}` | {row['decisions']} | {row['mean_ms']:.0f} | "
                f"{row['p99_ms']:.0f} | {row['max_ms']:.0f} | {row['simulations_per_decision']:.0f} |"
            )
        lines.append("")
    strengths = [row for row in rows if row["kind"] == "strength"]
    if strengths:
        lines += [
            "Strength (duplicate deals, half the seats each, every seating; paired 95% intervals):",
            "",
            "| game | setting | against | games (blocks) | score difference [95%] | win rate difference [95%] |",
            "|---|---|---|---|---|---|",
        ]
        for row in strengths:
            against = f"`{row['baseline']}`" + (
                f" (`{row['baseline_resolved']}`)" if row["baseline"] == "search" else ""
            )
            lines.append(
                f"| {row['game']} {row['players']}p | `{row['spec']}` | {against} | {row['games']} ({row['blocks']}) "
                f"| {row['score_diff']:+.2f} [{row['score_diff_low']:+.2f}, {row['score_diff_high']:+.2f}] "
                f"{row['score_name']} | {row['win_diff']:+.3f} [{row['win_diff_low']:+.3f}, "
                f"{row['win_diff_high']:+.3f}] |"
            )
        for (game, players, spec, baseline), group in grouped(strengths).items():
            if len(group) > 1:
                score, win = pooled(group, "score"), pooled(group, "win")
                lines.append(
                    f"| {game} {players}p | `{spec}` | `{baseline}`: the {len(group)} rows above pooled "
                    f"(inverse-variance) | {sum(r['games'] for r in group)} ({sum(r['blocks'] for r in group)}) | "
                    f"{score[0]:+.2f} [{score[1]:+.2f}, {score[2]:+.2f}] {group[0]['score_name']} | "
                    f"{win[0]:+.3f} [{win[1]:+.3f}, {win[2]:+.3f}] |"
                )
        lines.append("")
    lines.append("Commands, with the date each finished and the machine's load average then:")
    lines.append("")
    for row in rows:
        lines.append(f"* {row['kind']}: `{row['command']}` ({row['date']}, load {row['load']:.1f})")
    return "\n".join(lines)


def grouped(rows: list[dict]) -> dict[tuple, list[dict]]:
    """Strength rows by (game, players, setting, baseline): runs of other seeds (other deals) of one comparison."""
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault((row["game"], row["players"], row["spec"], row["baseline"]), []).append(row)
    return groups


def pooled(rows: list[dict], what: str) -> tuple[float, float, float]:
    """The inverse-variance pooled ``what`` difference (``score`` or ``win``) of independent runs, with its normal 95%
    interval (each run's standard error read off its interval)."""
    errors = np.array([(row[f"{what}_diff_high"] - row[f"{what}_diff_low"]) / (2 * 1.96) for row in rows])
    values = np.array([row[f"{what}_diff"] for row in rows])
    weights = 1 / errors**2
    mean = float((weights * values).sum() / weights.sum())
    error = float(1 / np.sqrt(weights.sum()))
    return mean, mean - 1.96 * error, mean + 1.96 * error


def write_docs(out: Path) -> None:
    rows = [json.loads(path.read_text()) for path in sorted(out.glob("*.json"))]
    if not rows:
        sys.exit(f"no saved rows under {out}: the docs block is left as it is (run the benchmark first)")
    order = {"speed": 0, "timing": 1, "strength": 2}
    rows.sort(key=lambda row: (order[row["kind"]], row["game"], row.get("baseline", "")))
    replace_block(DOCS, BEGIN, END, table(rows))
    print(f"wrote {len(rows)} rows into {DOCS}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="llama_party_v0")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--spec", default="search:batched=1:sims=400:z=2", help="the batched search setting")
    parser.add_argument("--positions", type=int, default=0, help="positions of the speed part (0: skip it)")
    parser.add_argument("--timing-games", type=int, default=0, help="games of the decision-time part (0: skip it)")
    parser.add_argument("--games", type=int, default=0, help="games per strength table (0: skip it)")
    parser.add_argument("--against", default="search,heuristic", help="comma-separated baselines of --games")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--from-journal", action="store_true", help="--games: the row of a stopped run's whole blocks")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--write-docs", action="store_true", help="rewrite docs/vector.md's block from saved rows")
    args = parser.parse_args()
    name, players, spec = args.game, args.players, args.spec
    base = f"python benchmarks/batched_search.py --game {name} --players {players} --spec {spec} --seed {args.seed}"
    print(f"# {platform.python_version()} on {platform.machine()}, load {os.getloadavg()[0]:.1f}", flush=True)
    if args.positions:
        body = speed(name, players, args.positions, args.seed)
        save(args.out, "speed", name, players, "", f"{base} --positions {args.positions}", body)
    if args.timing_games:
        body = decision_times(name, spec, players, args.timing_games, args.seed)
        save(args.out, "timing", name, players, spec, f"{base} --timing-games {args.timing_games}", body)
    if args.games:
        for baseline in args.against.split(","):
            body = strength(name, players, spec, baseline, args.games, args.seed, args.out, args.from_journal)
            command = f"{base} --games {body['games']} --against {baseline}"
            save(args.out, "strength", name, players, spec, command, {"baseline": baseline, **body}, baseline)
    if args.write_docs:
        write_docs(args.out)


if __name__ == "__main__":
    run_script(main, __file__)
