"""What Rummikub's search over whole turns chooses: per player count, how often each proposal was on offer and was
chosen, and the decision times; the block "turn-choices" of docs/agents.md.

Where you are: a short benchmark (about a minute), never run in CI. Whole games with one ``search`` seat (the game's
default, ``search:mode=turns:sims=40``) and heuristics at the other seats, the search seat moving round the table
from game to game, deals ``seed`` + game. At each first decision of the search seat's turn where the heuristic
proposed more than one turn (``propose_turns``), the proposals' names and the one chosen (``SearchPolicy.last_turn``)
are counted, with the CPU time of the decision (``time.process_time``, this process only).

    python benchmarks/turn_choices.py [--games 30] [--players 2 4] [--seed 0] [--write-docs]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
from common import finished_on_this_machine, replace_block

import tableenvs
from tableenvs.policies import make_policy, play_game

DOCS = Path(__file__).resolve().parents[1] / "docs" / "agents.md"
BEGIN = "<!-- measured: turn-choices (python benchmarks/turn_choices.py; machine-dependent, not checked in CI) -->"
END = "<!-- end measured: turn-choices -->"
OPTIONS = {"max_turns": 200}  # as the search table's Rummikub rows


class Timed:
    """A policy that times another one's decisions and keeps the search's choice of turn at each."""

    def __init__(self, policy) -> None:
        self.policy = policy
        self.searched: list[tuple[tuple[str, ...], str, float]] = []  # (proposals, chosen, CPU s)
        self.decisions: list[float] = []

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        proposals = None
        heuristic = self.policy.heuristic
        if not heuristic.turn_under_way(observation):
            proposals = tuple(name for name, _ in heuristic.propose_turns(observation, action_mask))
        began = time.process_time()
        action = self.policy.act(observation, action_mask, rng)
        spent = time.process_time() - began
        if action_mask.sum() > 1:
            self.decisions.append(spent)
        if proposals is not None and len(proposals) > 1:
            self.searched.append((proposals, self.policy.last_turn, spent))
        return action


def tally(players: int, games: int, seed: int) -> dict:
    """Play ``games`` games of ``players`` seats and count the search's turns."""
    env = tableenvs.make_raw("rummikub_v0", num_players=players, **OPTIONS)
    search = Timed(make_policy("search", env))
    heuristic = make_policy("heuristic", env)
    for game in range(games):
        seats = [heuristic] * players
        seats[game % players] = search
        play_game(env, seats, seed=seed + game, rng=np.random.default_rng([seed, game]))
    offered = Counter(name for proposals, _, _ in search.searched for name in proposals)
    chosen = Counter(name for _, name, _ in search.searched)
    return {
        "players": players,
        "games": games,
        "searched": len(search.searched),
        "offered": offered,
        "chosen": chosen,
        "turn_ms": 1000 * float(np.mean([spent for _, _, spent in search.searched])) if search.searched else 0.0,
        "decision_ms": 1000 * float(np.mean(search.decisions)) if search.decisions else 0.0,
    }


def table(rows: list[dict]) -> list[str]:
    names = sorted({name for row in rows for name in row["offered"]}, key=lambda n: (n != "heuristic", n != "draw", n))
    lines = [
        "| players | games | searched turns | "
        + " | ".join(f"{name}: offered / chosen" for name in names)
        + " | ms a searched turn | ms a decision with a choice |",
        "|---|---|---|" + "---|" * len(names) + "---|---|",
    ]
    for row in rows:
        cells = " | ".join(f"{row['offered'][name]:,} / {row['chosen'][name]:,}" for name in names)
        lines.append(
            f"| {row['players']} | {row['games']} | {row['searched']:,} | {cells} | {row['turn_ms']:.0f} | "
            f"{row['decision_ms']:.0f} |"
        )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=30, help="games per player count")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--write-docs", action="store_true", help="rewrite the block of docs/agents.md")
    args = parser.parse_args()
    if args.games < 1:
        parser.error(f"--games must be >= 1, got {args.games}")
    load = os.getloadavg()[0]
    rows = [tally(players, args.games, args.seed) for players in args.players]
    text = "\n".join(
        [
            *table(rows),
            "",
            f"Run by `python benchmarks/turn_choices.py --games {args.games} --players "
            f"{' '.join(map(str, args.players))} --seed {args.seed}`, {finished_on_this_machine(load)} (the times "
            "are CPU time of this process and move with the machine's load).",
        ]
    )
    print(text)
    if args.write_docs:
        replace_block(DOCS, BEGIN, END, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
