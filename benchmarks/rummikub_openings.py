"""A Rummikub cross-entropy recipe's model against the heuristic: its learning curve and the standard test on several
sets of deals.

Where you are: a long benchmark, never run in CI; it writes a block of the docs per recipe. It runs (or
continues, or just reads) ``tableenvs train rummikub_v0 --recipe RECIPE --out RUN`` (``openings`` or ``holding``,
:mod:`tableenvs.training.scorer_recipes`: deterministic, so a rerun makes the same model), then plays the model's
standard evaluation against the heuristic (two seats against two, every seating, duplicate deals: what ``tableenvs eval
rummikub_v0 --policies MODEL,heuristic --games 2000 --seed S`` reports) for ``--repeats`` seeds from 0, and pools
them as ``rummikub_turn_rules.py --repeats`` does. ``--seed`` is the recipe's (default 0; its run in
``runs/RECIPE``, other seeds' in ``runs/RECIPE-s<seed>``).

    python benchmarks/rummikub_openings.py [--recipe openings] [--seed 0] [--run runs/openings] [--repeats 6]
        [--games 2000] [--workers 2] [--write-docs]

Each evaluation is kept in ``benchmarks/results/rummikub_openings/`` with the SHA-256 of the model it played (a
rerun with the same model reuses it), and each run's curve and tests as ``run__s<seed>.json`` (openings) or
``run__holding__s<seed>.json``: a recipe's block (``rummikub-openings``, ``rummikub-holding``) shows every run of it
measured.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from common import finished_on_this_machine, markers, write_block
from rummikub_turn_rules import cells, pooled

from tableenvs.evaluation import evaluate
from tableenvs.paths import write_text_atomic
from tableenvs.training.scorer_recipes import recipes, train_scorer

ROOT = Path(__file__).resolve().parents[1]
#: Games of the holding model's "when it holds" table.
HOLD_GAMES = 400
RESULTS = Path(__file__).resolve().parent / "results" / "rummikub_openings"


def block_name(recipe: str) -> str:
    """The docs block of ``recipe``'s runs."""
    return f"rummikub-{recipe}"


def record_name(recipe: str, seed: int | str) -> str:
    """The file (in RESULTS) of the record of ``recipe``'s run with ``seed`` (``"*"``: a pattern of every seed's; the
    openings recipe's names predate the recipe in the name)."""
    return f"run__s{seed}.json" if recipe == "openings" else f"run__{recipe}__s{seed}.json"


def test_row(model: Path, seed: int, games: int, workers: int) -> dict[str, Any]:
    """The standard evaluation of ``model`` against the heuristic on seed ``seed`` (kept in RESULTS)."""
    digest = hashlib.sha256(model.read_bytes()).hexdigest()[:12]
    path = RESULTS / f"{digest}__{games}__s{seed}.json"
    if path.exists():
        return json.loads(path.read_text())
    began = time.perf_counter()
    paired = evaluate("rummikub_v0", [str(model), "heuristic"], games, num_players=4, seed=seed, workers=workers)
    row = {"variant": digest, "games": games, "seed": seed, "seconds": round(time.perf_counter() - began, 1)}
    row.update({key: value for key, value in paired.paired[0].items() if key != "policy"})
    RESULTS.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(row, indent=1) + "\n")
    return row


def summary(recipe: str, run: Path, seed: int, rows: list[dict[str, Any]], model: Path) -> dict[str, Any]:
    """What the block shows of one recipe run (kept in RESULTS as :func:`record_name`, so that the block shows every
    run measured, each with the command that made it)."""
    shown = run.absolute().relative_to(ROOT) if run.absolute().is_relative_to(ROOT) else run
    curve = [json.loads(line) for line in (run / "progress.jsonl").read_text().splitlines()]
    named = "" if recipe == "openings" else f"--recipe {recipe} "
    command = f"python benchmarks/rummikub_openings.py {named}--seed {seed} --run {shown}"
    record: dict[str, Any] = {"run": str(shown), "seed": seed, "command": command, "curve": curve, "rows": rows}
    if recipe == "holding":
        record["held"] = hold_counts(model, HOLD_GAMES)
    RESULTS.mkdir(parents=True, exist_ok=True)
    write_text_atomic(RESULTS / record_name(recipe, seed), json.dumps(record, indent=1) + "\n")
    return record


def hold_counts(model: Path, games: int) -> dict[str, Any]:
    """How often a holding model draws when it may hold (:class:`tableenvs.rummikub.holding.HoldingChoices` offers the
    heuristic's play and a draw), by the bin of the fewest tiles on an opponent's rack and by the pool's bin, over
    ``games`` games of two model seats against two heuristics (deals 0, 1, ...; seats alternate); and its weights."""
    import numpy as np

    from tableenvs.core.registry import make_raw
    from tableenvs.policies import play_game
    from tableenvs.policies.input_features import candidate_choices
    from tableenvs.policies.model_file import load_numpy_policy
    from tableenvs.policies.numpy_policy import NumpyPolicy
    from tableenvs.rummikub.agents import HeuristicPolicy
    from tableenvs.rummikub.encoder import DRAW
    from tableenvs.rummikub.holding import FEATURES

    env = make_raw("rummikub_v0", num_players=4)
    policy = NumpyPolicy(load_numpy_policy(model), env)
    choices = candidate_choices(policy.model.candidates, env)  # what the policy chose among, seen again
    fewest = [name for name in FEATURES if name.startswith("hold_fewest_")]
    pools = [name for name in FEATURES if name.startswith("hold_pool_")]
    counts = {name: [0, 0] for name in fewest + pools}  # [decisions with the choice, draws chosen]

    def on_step(world: Any, agent: str, view: dict, action: int) -> None:
        if world.agent_name_mapping[agent] % 2:
            return  # a heuristic's seat
        features, actions = choices(view["observation"], view["action_mask"])
        if len(actions) == 2 and actions[1] == DRAW:
            for name in fewest + pools:
                if features[1, FEATURES.index(name)]:
                    counts[name][0] += 1
                    counts[name][1] += int(action == DRAW)

    rng = np.random.default_rng(0)
    for deal in range(games):
        seats = [policy, HeuristicPolicy(env)] * 2
        play_game(env, seats, seed=deal, rng=rng, on_step=on_step)
    weights = policy.model.weights[0][0][:, 0]
    return {"games": games, "counts": counts, "weights": dict(zip(FEATURES, map(float, weights), strict=True))}


def hold_table(held: dict[str, Any]) -> list[str]:
    """The lines of the block showing :func:`hold_counts`."""
    lines = [
        "",
        f"When it holds: over {held['games']:,} games of the model in seats 0 and 2 against two heuristics (deals from "
        "0), the decisions where it may hold (the heuristic has a play that does not go out, at the start of a turn) "
        "and how often it draws instead, by the fewest tiles on an opponent's rack and by the tiles in the pool:",
        "",
        "| the draw's context | decisions with the choice | draws | held |",
        "|---|---|---|---|",
    ]
    for name, (offered, drawn) in held["counts"].items():
        label = name.removeprefix("hold_").replace("fewest_", "fewest on a rack: ").replace("pool_", "pool: ")
        share = f"{drawn / offered:.0%}" if offered else "-"
        lines.append(f"| {label.replace('_', '-')} | {offered:,} | {drawn:,} | {share} |")
    weights = ", ".join(f"`{name}` {value:+.2f}" for name, value in held["weights"].items())
    lines += ["", f"Its weights (a candidate's score is their dot product with its features): {weights}."]
    return lines


def block(recipe: str, records: list[dict[str, Any]], finished: str) -> str:
    lines = [
        f"Each recipe run measured (`tableenvs train rummikub_v0 --recipe {recipe} --seed S`); the last command "
        f"{finished}."
    ]
    for record in records:
        rows = record["rows"]
        lines += [
            "",
            f"**Seed {record['seed']}** (`{record['command']}`). The curve (`progress.jsonl`): each generation's mean "
            f"weights, the start of that generation, against the heuristic on the generation's own "
            f"{record['curve'][0]['settings']['games']:,} games (fresh deals), and the best of its draws (an "
            "optimistic pick among noisy scores):",
            "",
            "| generation | mean weights − heuristic, points a game | best draw | wall time so far, min (2 workers) |",
            "|---|---|---|---|",
        ]
        for line in record["curve"]:
            lines.append(
                f"| {line['generation'] + 1} | {line['mu_score']:+.2f} | {line['best_score']:+.2f} | "
                f"{line['seconds'] / 60:.0f} |"
            )
        lines += [
            "",
            f"Its model (`{record['run']}/model.npz`, SHA-256 {rows[0]['variant']}...) against the heuristic, the "
            "standard test on each seed from 0 (two seats each, every seating, duplicate deals), and the seeds pooled:",
            "",
            "| test seed | games (blocks) | points a game: model − heuristic [95%] | win rate [95%] |",
            "|---|---|---|---|",
        ]
        for row in [*rows, pooled(rows)] if len(rows) > 1 else rows:
            first = str(row["seed"]) if "sets" not in row else f"pooled ({row['passed']} of {row['sets']} pass alone)"
            lines.append(f"| {first} | {row['games']:,} ({row['blocks']:,}) | {cells(row)} |")
        if "held" in record:
            lines += hold_table(record["held"])
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recipe", choices=list(recipes("rummikub_v0")), default="openings")
    parser.add_argument("--seed", type=int, default=0, help="the recipe's --seed")
    parser.add_argument("--run", type=Path, default=None, help="the recipe's --out (default runs/RECIPE[-sSEED])")
    parser.add_argument("--repeats", type=int, default=6, help="seeds of the standard test, from 0")
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--write-docs", action="store_true", help="write the recipe's block of the docs")
    args = parser.parse_args()
    for name in ("repeats", "games", "workers"):
        if getattr(args, name) < 1:
            sys.exit(f"--{name} must be at least 1, got {getattr(args, name)}")
    recipe = args.recipe
    run = args.run or ROOT / "runs" / (recipe if args.seed == 0 else f"{recipe}-s{args.seed}")
    load = os.getloadavg()[0]
    # the recipe's defaults; continues the run or reads it
    model = train_scorer("rummikub_v0", run, recipe=recipe, workers=args.workers, seed=args.seed)
    rows = []
    for seed in range(args.repeats):
        row = test_row(model, seed, args.games, args.workers)
        rows.append(row)
        print(f"test seed {seed}: {row['score_diff']:+.2f} [{row['score_diff_low']:+.2f}, "
              f"{row['score_diff_high']:+.2f}] points, win rate {row['win_diff']:+.3f}", flush=True)  # fmt: skip
    summary(recipe, run, args.seed, rows, model)
    if args.write_docs:
        records = [json.loads(path.read_text()) for path in sorted(RESULTS.glob(record_name(recipe, "*")))]
        name, finished = block_name(recipe), finished_on_this_machine(load)
        docs = write_block(*markers(name, "rummikub_openings.py"), block(recipe, records, finished))
        print(f"wrote the {name} block of {docs}")


if __name__ == "__main__":
    main()
