"""The tables of Rummikub's population recipe, measured on fixed weight vectors: why its fitness mixes them.

For each player count and each weight vector (``start``: the recipe's start, which plays as the heuristic;
``holder``: the shipped 4-player model's weights, trained against heuristic seats alone by the ``holding`` recipe;
``hold-until-2``: draw instead of any play that does not go out until an opponent is at 2 tiles or fewer or the pool at
9 or fewer), the paired score difference and the mean-rank gain at each table of
:data:`tableenvs.training.scorer_recipes.TABLES` (``elite``: against a field of the ``holder`` weights), as the recipe
measures them (:func:`tableenvs.training.scorer_recipes.table_scores`), on deals no evaluation default uses.

Run: ``nice -n 19 python benchmarks/population_tables.py [--players 2 3 4] [--games 400] [--seed 0]``; writes
``benchmarks/results/population_tables/<players>p.json`` and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from tableenvs.policies.numpy_policy import MODELS_DIR, load_numpy_policy
from tableenvs.rummikub import holding
from tableenvs.training.scorer_recipes import TABLES, TRAIN_SEED, recipes, table_scores

RESULTS = Path(__file__).resolve().parent / "results" / "population_tables"
GAME = "rummikub_v0"


def weight_vectors() -> dict[str, np.ndarray]:
    """The measured weight vectors, by name (the module docstring)."""
    start = np.array(recipes(GAME)["holding"].start)
    holder = load_numpy_policy(MODELS_DIR / f"{GAME}.npz").weights[0][0].astype(np.float64).ravel()
    column = {name: i for i, name in enumerate(holding.FEATURES)}
    until = start.copy()
    for name, upper in zip(holding.FEATURES[column["hold_fewest_1"] :], (*holding.FEWEST_BINS, 99), strict=False):
        until[column[name]] = -10.0 if upper <= 2 else 1.0
    for name, upper in zip(("hold_pool_0_4", "hold_pool_5_9"), holding.POOL_BINS, strict=False):
        until[column[name]] = -10.0 if upper <= 9 else 0.0
    return {"start": start, "holder": holder, "hold-until-2": until}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--games", type=int, default=400, help="games per table and weight vector")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    vectors = weight_vectors()
    RESULTS.mkdir(parents=True, exist_ok=True)
    for players in args.players:
        began = time.process_time()
        rows = {}
        for name, weights in vectors.items():
            options = {"num_players": players}
            deals = TRAIN_SEED - 1000 * (args.seed + 1)  # below every training deal
            rows[name] = table_scores(GAME, "holding", options, weights, vectors["holder"], deals, args.games, TABLES)
            print(f"{players}p {name}: {rows[name]}", flush=True)
        seconds = time.process_time() - began
        (RESULTS / f"{players}p.json").write_text(
            json.dumps({"players": players, "games": args.games, "seed": args.seed, "rows": rows, "cpu_s": seconds})
        )
        print(f"| {players}p | " + " | ".join(TABLES) + " |")
        for name, row in rows.items():
            print(f"| {name} | " + " | ".join(f"{row[t][0]:+.1f} pts, {row[t][1]:+.2f} places" for t in TABLES) + " |")
        print(f"({seconds:.0f} CPU s)", flush=True)


if __name__ == "__main__":
    main()
