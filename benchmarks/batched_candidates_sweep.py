"""A longer differential sweep of the batched candidate-scoring player against ``NumpyPolicy``, within a CPU budget.

The tests (``tests/test_vector_candidates.py``) compare a few thousand positions and decisions. Choices that depend
on what a player keeps through a turn (a heuristic plan re-asked with tiles staged, an opening no longer matching
the heuristic's) are rare: a few in tens of thousands of decisions. This sweep plays rounds of
``tests/candidate_differential.py``'s ``mixed_play`` (the batched player and one ``NumpyPolicy`` per env, step by
step, half the model's moves and half random ones) for every game whose spec names batched candidates, at 2, 3
and 4 players, with the shipped candidate-scoring models and random-weight files of every candidates name, each
round with new seeds, until ``--seconds`` of CPU are spent. Any mismatch stops it, naming the round.

Run: ``nice -n 19 python benchmarks/batched_candidates_sweep.py [--seconds 600] [--envs 64] [--steps 300]``
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the shared differential harness (tests/candidate_differential.py)

import tableenvs  # noqa: E402
from tableenvs.core.registry import spec  # noqa: E402
from tableenvs.policies.numpy_policy import load_numpy_policy, model_files  # noqa: E402
from tests.candidate_differential import mixed_play, random_candidate_model  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=600.0, help="CPU seconds to spend (checked between rounds)")
    parser.add_argument("--envs", type=int, default=64, help="envs per round")
    parser.add_argument("--steps", type=int, default=300, help="steps per round")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    folder = Path(tempfile.mkdtemp(prefix="candidates-sweep-"))
    settings = []
    for name in tableenvs.names():
        if not spec(name).batched_candidates:
            continue
        for path in model_files(name):
            model = load_numpy_policy(path)
            if model.candidates in spec(name).batched_candidates:
                settings.append((name, int(model.options["num_players"]), str(path), path.name))
        for players in (2, 3, 4):
            for candidates in spec(name).batched_candidates:
                file = folder / f"{name}-{players}p-{candidates}.npz"
                made = random_candidate_model(file, name, players, candidates, players)
                settings.append((name, players, made, file.name))
    start = time.process_time()
    rounds = rows = scored = rescored = 0
    while time.process_time() - start < args.seconds:
        name, players, path, label = settings[rounds % len(settings)]
        seed = 1000 + rounds
        counts = mixed_play(name, players, path, num_envs=args.envs, steps=args.steps, seed=seed)
        rounds += 1
        rows += counts["rows"]
        scored += counts["scored"]
        rescored += counts["rescored"]
        print(f"round {rounds}: {label} seed {seed}: {counts}", file=sys.stderr, flush=True)
        if counts["mismatches"]:
            raise SystemExit(f"round {rounds} ({label}, seed {seed}): {counts['mismatches']} mismatches")
    spent = time.process_time() - start
    print(
        f"{rounds} rounds, {rows:,} decisions compared ({scored:,} with a choice scored, {rescored:,} of them near a "
        f"tie), no mismatch; {spent:.0f} CPU s, load average {load:.1f} at the start and {os.getloadavg()[0]:.1f} "
        "at the end"
    )


if __name__ == "__main__":
    main()
