"""Benchmark: are the worlds of ``sample_world`` consistent with what the agent saw, and free of what it did not?

For each game, random positions of random games (several configurations: Pili Pili's standard deck and missions
that pass, swap, play face down, memorise or constrain plays; Llama Party with 2, 3 and 4 players; Rummikub with
openings, failed plays and two games an episode) and, at each, ``--per-position`` worlds for one seat. A world is
counted **inconsistent** if any of these fails:

* ``observe(agent)`` of the world (observation and mask) equals the real game's;
* ``get_state()`` of the world is a valid record (``set_state`` of it, read back from JSON, on an env of the same
  options: every check of the state API), for every ``--record-every``-th world (a check costs 2-3 ms, ten times a
  world);
* the world's event log is exactly what the agent saw: its own moves in full, the others' as
  ``describe_action_public`` said them when they were made, the rules' lines (a world that puts the player to
  act back before its private moves this turn may drop those lines); a world keeping the real log counts here;
* ``--twins``: for every ``--twin-every``-th position a twin game is built (the scripted deal and the moves relabelled
  by a permutation of a few cards, kept only if the agent saw the same at every step, see
  ``tests/test_worlds_exact.py``) and the world sampled from it with the same generator must be byte-identical
  (``get_state()`` as JSON); a differing pair counts as one inconsistent world.

Prints one table row per game (worlds, inconsistent, rate, leaking event logs, twins compared, twins differing,
seconds); ``python benchmarks/record.py worlds`` runs it and writes the table into ``docs/benchmarks.md``.

Run: ``python benchmarks/world_consistency.py --worlds 100000 [--per-position 100] [--twin-every 5]
[--record-every 10]``
(``--worlds``: worlds per game; ``--budget``: seconds per game, whichever comes first).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_worlds_exact import CASES, check_log, play, state_json, twin_of  # noqa: E402

MAX_STEPS = {"pilipili_v0": 120, "llama_party_v0": 200, "rummikub_v0": 150}


def run_game(name: str, worlds: int, per_position: int, twin_every: int, record_every: int, budget: float) -> dict:
    cases = [game for game, _ in CASES if game.name == name]
    row = {"game": name, "worlds": 0, "inconsistent": 0, "leaking": 0, "twins": 0, "twins_differing": 0, "records": 0}
    checkers = {id(game): game.make() for game in cases}
    start = time.perf_counter()
    position = 0
    while row["worlds"] < worlds and time.perf_counter() - start < budget:
        game = cases[position % len(cases)]
        seed = 1_000_003 * position + 17
        rng = np.random.default_rng([seed, 5])
        deal = game.deal(np.random.default_rng(seed))
        # every other position early in the game (Llama Party: in the first round), where most have a twin
        early = {"pilipili_v0": 30, "llama_party_v0": 11 * game.options["num_players"], "rummikub_v0": 60}[name]
        steps = int(rng.integers(0, early if position % 2 == 0 else MAX_STEPS[name]))
        env, played, _, _ = play(game, seed, deal, None, steps, "player_0")
        agent = env.possible_agents[int(rng.integers(env.num_players))]
        env, played, seen, expected = play(game, seed, deal, played, 0, agent)
        truth = env.observe(agent)
        for k in range(per_position):
            world = env.sample_world(agent, np.random.default_rng([seed, k]))
            row["worlds"] += 1
            seen_now = world.observe(agent)
            ok = np.array_equal(seen_now["observation"], truth["observation"]) and np.array_equal(
                seen_now["action_mask"], truth["action_mask"]
            )
            if row["worlds"] % record_every == 0:
                row["records"] += 1
                try:
                    checkers[id(game)].set_state(json.loads(json.dumps(world.get_state())))
                except ValueError:
                    ok = False
            if not check_log(game, env, agent, world.event_log, expected):
                ok = False
                row["leaking"] += 1
            row["inconsistent"] += not ok
        if twin_every and position % twin_every == 0:
            twin = twin_of(game, seed, env, deal, played, seen, agent, np.random.default_rng(seed + 2))
            if twin is not None:
                row["twins"] += 1
                a = state_json(env.sample_world(agent, np.random.default_rng([seed, 0])))
                b = state_json(twin.sample_world(agent, np.random.default_rng([seed, 0])))
                if a != b:
                    row["twins_differing"] += 1
                    row["inconsistent"] += 1
        position += 1
    row["positions"] = position
    row["seconds"] = time.perf_counter() - start
    return row


def table(rows: list[dict]) -> str:
    lines = [
        "| game | positions | worlds | inconsistent | rate | leaking logs | records checked | twins compared "
        "| twins differing | s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        rate = r["inconsistent"] / max(r["worlds"], 1)
        lines.append(
            f"| {r['game']} | {r['positions']:,} | {r['worlds']:,} | {r['inconsistent']:,} | {rate:.2e} | "
            f"{r['leaking']:,} | {r['records']:,} | {r['twins']:,} | {r['twins_differing']:,} | {r['seconds']:.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worlds", type=int, default=100_000, help="worlds per game (default 100,000)")
    parser.add_argument("--budget", type=float, default=float("inf"), help="seconds per game at most")
    parser.add_argument("--per-position", type=int, default=100, help="worlds sampled at each position")
    parser.add_argument("--twin-every", type=int, default=5, help="build a twin at every k-th position (0: none)")
    parser.add_argument("--record-every", type=int, default=10, help="check the record of every k-th world")
    parser.add_argument("--games", default="pilipili_v0,llama_party_v0,rummikub_v0")
    args = parser.parse_args()
    rows = []
    for name in args.games.split(","):
        rows.append(run_game(name, args.worlds, args.per_position, args.twin_every, args.record_every, args.budget))
        print(table(rows[-1:]).splitlines()[-1], flush=True)
    text = table(rows)
    print(text)


if __name__ == "__main__":
    main()
