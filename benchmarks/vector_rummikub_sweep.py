"""A larger differential sweep of Rummikub's batched engine against the AEC env, within a CPU budget.

The tests (``tests/test_vector_rummikub.py``) check a few hundred games; this plays batches of 64 envs against 64 AEC
envs with ``tests/vector_differential.py``'s ``play_both`` (seat to act, observation, mask and every seat's rewards
at every step, ``get_state`` against the AEC record) round after round, at 2, 3 and 4 players under the default
options and the non-default ones, each batch with new seeds and actions, until ``--seconds`` of CPU are spent. Any
disagreement stops it with the assertion naming the env and step.

Run: ``python benchmarks/vector_rummikub_sweep.py [--seconds 600] [--envs 64]`` (use ``nice -n 19``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the shared differential harness

from vector_differential import play_both  # noqa: E402

#: (player count, options) played in turn
SETTINGS = (
    (4, {}),
    (2, {}),
    (3, {}),
    (4, {"strict_commit": False, "draw_after_play": True, "games_per_episode": 2}),
    (3, {"pool_exhausted": "draw", "end_on_empty_pool": True, "min_initial": 0}),
    (2, {"max_turns": 60, "games_per_episode": 3, "min_initial": 40}),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=600.0, help="CPU seconds to spend (checked between batches)")
    parser.add_argument("--envs", type=int, default=64, help="envs per batch")
    args = parser.parse_args()
    start = time.process_time()
    totals = {"batches": 0, "games": 0, "steps": 0, "env_steps": 0, "states": 0}
    round_number = 0
    while time.process_time() - start < args.seconds:
        players, options = SETTINGS[round_number % len(SETTINGS)]
        seed = 10_000 * round_number
        counts = play_both(
            "rummikub_v0", {"num_players": players, **options}, args.envs, seed=seed, action_seed=round_number,
            event_log=True, extra=5,
        )  # fmt: skip
        totals["batches"] += 1
        totals["games"] += counts["games"]
        totals["steps"] += counts["steps"]
        totals["env_steps"] += counts["steps"] * args.envs
        totals["states"] += counts["states"]
        print(f"batch {round_number}: {players}p {options or 'default'}, seeds {seed}..{seed + args.envs - 1}: "
              f"{counts}", file=sys.stderr, flush=True)  # fmt: skip
        round_number += 1
    print(
        f"{totals['batches']} batches of {args.envs} envs agreed with the AEC env: {totals['games']:,} games, "
        f"{totals['env_steps']:,} env-steps ({totals['steps']:,} batched steps), {totals['states']:,} state records "
        f"compared, in {time.process_time() - start:.0f} CPU-s"
    )


if __name__ == "__main__":
    main()
