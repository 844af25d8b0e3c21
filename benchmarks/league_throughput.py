"""Samples per CPU-second of the league recipe (PPO on the batched engine) against today's batched trainer on Python
envs, and where each spends its CPU time; the measured block "league throughput" of docs/training.md.

Both start from the same random ReLU policy of the recipes' actor shape ((256, 256), what the clone has) and run PPO
for ``--samples`` learner decisions with no frozen phase (the steady state). Rows, per game and player count:

* ``batched trainer``: :class:`tableenvs.training.batched.BatchedTrainer` as the strong recipe runs it
  (:data:`tableenvs.training.recipe.FINE_TUNE`: 64 raw AEC envs stepped in a loop, the learner in every seat but one,
  the Python heuristic in that one);
* ``league``: :class:`tableenvs.training.league.LeagueTrainer` with the recipe's settings
  (:data:`tableenvs.training.league.LEAGUE_PPO`, 256 envs in the batched engine, the population drawn by PFSP);
* ``league, minibatch 16,384``: the same with a whole rollout per gradient step (fewer Python round trips in the
  update, 4x fewer optimizer steps: a faster but different update, shown to size the update's overhead).

Columns: CPU seconds of this process inside ``train()`` (``time.process_time``; torch one thread), samples per
CPU-second, then the share of that time in: the environment (the batched engine's ``step``/``reset``; for the batched
trainer the raw envs' stepping, observation and mask filling, and the Python heuristic's seat, i.e. all of collect but
the actor's forward pass), the opponents (the league's batched heuristic and frozen snapshots), the learner's acting
(its forward pass and sampling), bookkeeping (the league's buffer and reward indexing) and the PPO update.

Run: ``python benchmarks/league_throughput.py [--samples 200000] [--players 4 ...] [--write-docs]`` (under
``nice -n 19``: a minute or two of CPU per row at the default).
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
from common import markers, write_block

from tableenvs.core.registry import make_raw
from tableenvs.policies.numpy_policy import random_numpy_policy
from tableenvs.training.batched import BatchedTrainer
from tableenvs.training.batched_config import BatchedConfig
from tableenvs.training.league import LEAGUE_PPO, LeagueSettings, LeagueTrainer
from tableenvs.training.recipe import FINE_TUNE

BEGIN, END = markers("league throughput", "league_throughput.py")


def timed_act(trainer: BatchedTrainer) -> list[float]:
    """Wrap the trainer's ``_act`` (the actor's forward pass and sampling): its CPU seconds add up in the cell."""
    spent = [0.0]
    act = trainer._act

    def wrapped(obs, masks):  # type: ignore[no-untyped-def]
        began = time.process_time()
        try:
            return act(obs, masks)
        finally:
            spent[0] += time.process_time() - began

    trainer._act = wrapped  # type: ignore[method-assign]
    return spent


def measure(trainer: BatchedTrainer) -> dict[str, float]:
    """Train; the CPU seconds and the shares of the time spent (see the module docstring)."""
    if isinstance(trainer, LeagueTrainer):  # load the compiled engine and heuristic (cached on disk) before timing
        obs, mask = trainer.engine.reset(0)
        trainer.members[0].act(obs, mask, np.arange(len(obs)))
    acting = timed_act(trainer)
    history = trainer.train()
    total = history[-1]["cpu_seconds"]
    update = sum(row["update_seconds"] for row in history)
    collect = sum(row["collect_seconds"] for row in history)
    if isinstance(trainer, LeagueTrainer):
        times = trainer.times
        env, opponents, bookkeeping = times["engine"], times["opponents"], times["bookkeeping"]
    else:
        env, opponents, bookkeeping = collect - acting[0], 0.0, 0.0
    return {
        "samples": trainer.samples,
        "cpu": total,
        "rate": trainer.samples / total,
        "env": env / total,
        "opponents": opponents / total,
        "act": acting[0] / total,
        "bookkeeping": bookkeeping / total,
        "update": update / total,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="llama_party_v0")
    parser.add_argument("--players", type=int, nargs="+", default=[4])
    parser.add_argument("--samples", type=int, default=200_000, help="learner decisions per row (the budget)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    lines = [
        "| game, players | trainer | samples | CPU s | samples / CPU-s | environment | opponents | learner acting | "
        "bookkeeping | PPO update |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for players in args.players:
            options = {"num_players": players}
            start = str(random_numpy_policy(
                Path(tmp) / f"start-{players}.npz", make_raw(args.game, **options), hidden=(256, 256),
                activation="relu", seed=args.seed,
            ))  # fmt: skip
            common = {"samples": args.samples, "options": options, "start": start, "seed": args.seed}
            rows = {
                "batched trainer (64 Python envs, heuristic in one seat)": BatchedTrainer(
                    BatchedConfig(
                        args.game,
                        opponents="heuristic",
                        learner_seats=players - 1,
                        **{**FINE_TUNE, **common, "value_warmup": 0},
                    )  # fmt: skip
                ),
                "league (256 envs in the batched engine)": LeagueTrainer(
                    BatchedConfig(args.game, **{**LEAGUE_PPO, **common, "value_warmup": 0}), LeagueSettings()
                ),
                "league, minibatch 16,384": LeagueTrainer(
                    BatchedConfig(args.game, **{**LEAGUE_PPO, **common, "value_warmup": 0, "minibatch": 16384}),
                    LeagueSettings(),
                ),
            }
            for name, trainer in rows.items():
                found = measure(trainer)
                line = (
                    f"| {args.game}, {players} | {name} | {found['samples']:,} | {found['cpu']:.1f} | "
                    f"{found['rate']:,.0f} | {found['env']:.0%} | {found['opponents']:.0%} | {found['act']:.0%} | "
                    f"{found['bookkeeping']:.0%} | {found['update']:.0%} |"
                )
                print(line, flush=True)
                lines.append(line)
    load = os.getloadavg()[0]
    lines.append("")
    lines.append(
        f"Measured on {platform.machine()} ({os.cpu_count()} cores, load average {load:.1f} at the end) by "
        f"`python benchmarks/league_throughput.py --samples {args.samples} --players "
        f"{' '.join(map(str, args.players))} --write-docs`; CPU time of this process, torch one thread."
    )
    body = "\n".join(lines)
    print(body)
    if args.write_docs:
        print(f"wrote {write_block(BEGIN, END, body)}")


if __name__ == "__main__":
    main()
