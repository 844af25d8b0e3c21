"""Rummikub at 4 players: what hand-made changes to the heuristic's turn are worth against it.

Where you are: a long benchmark, never run in CI; it writes a block of docs/lab/training.md. The whole-turn search and
the turn values learned from returns chose among the heuristic's own three plays and a draw and did not beat the
heuristic at 4 players (docs/lab/training.md). This script measures, with no learning, how much a different choice of
play could gain at all, so that the next attempt knows the size of what it looks for; its holding variants are what
the holding recipe (the Rummikub model shipped as ``trained``) learnt to do better.

Each variant is the heuristic with one change (the classes below; all deterministic):

* ``value``: once opened, the play of the most points (then the most tiles) instead of the most tiles (then points);
* ``open-tiles``: the opening meld of the most tiles instead of the most points;
* ``hold-1``, ``hold-3``: the heuristic's play less up to 1 (3) of its lowest-valued tiles, each removal keeping a
  legal play of at least one tile, unless the play empties the rack (the tiles held can be laid off later);
* ``shape-1``, ``shape-2``: among the heuristic's play and the plays found by solving again (same objective) without
  each one (each two) of its tile types, the one leaving the rack of the best shape: 2 per pair of same-colour
  neighbours (n, n+1), 1 per same-colour pair n, n+2, 1.5 per pair of colours holding one number (each counted once
  whatever the copies), 3 per joker; ties go to the earlier play (the heuristic's first). Once opened only plays of
  as many tiles as the heuristic's are considered; for the opening meld every one found (each is worth at least
  ``min_initial`` points);
* ``shape-opening``: ``shape-2`` for the opening meld, the heuristic's play after it;
* ``min-open``: the opening meld of the fewest tiles (then the fewest points) among the smaller openings inside the
  solver's two (of the most points, the heuristic's, and of the most tiles): every choice, per meld of either, of
  leaving it out, keeping it whole or keeping a smaller meld inside it (a run's shorter runs, a group of four's
  groups of three) whose points reach ``min_initial``; the heuristic's play after it;
* ``late-min-open``: ``min-open`` only when the pool holds fewer than 38 tiles (a late opening), the heuristic's
  opening otherwise;
* ``min-open-shape``: ``min-open`` with ties broken by the shape score (then the fewest points);
* ``hold-until-3``: once opened, draw instead of any play that does not empty the rack (hold the tiles back), until
  an opponent has 3 tiles or fewer; then the heuristic's play. The opening meld is the heuristic's;
* ``hold-until-2-pool``: ``hold-until-3`` released already at 2 tiles, and also once the pool holds fewer than 10
  tiles (a player holding a full rack when the pool runs out is caught with it).

**Design: one deviating seat, paired with the same deal.** For each deal (env seed ``seed + d``; the default first
deal, 100000, is past the deals 0-1999 the variants were explored on; the holding variants were explored on deals
0-3999 and from 1,000,000 on), one game of four heuristics; then, for each
seat ``s``, the same deal with the variant in seat ``s`` and the heuristic elsewhere. The variant's gain on a deal is
the mean over seats of its score minus the heuristic's score in that seat of the all-heuristic game. Every policy
is deterministic and the pool's order is fixed by the seed, so the baseline is exact and the 95% interval (normal) is
over deals alone. With ``--head-to-head VARIANT`` the variant also plays the standard evaluation (two seats of the
variant against two heuristics, every seating, duplicate deals: ``tableenvs.evaluation.evaluate``, what ``tableenvs
eval GAME --policies trained,heuristic --games 2000`` reports for a model); ``--repeats K`` plays it on K disjoint
sets of deals (first deals ``seed``, ``seed + 100000``, ...) and pools them, to show how often one 2,000-game test
passes.

    python benchmarks/rummikub_turn_rules.py [--deals 2000] [--seed 100000] [--workers 2] [--head-to-head VARIANT ...]
        [--repeats K] [--write-docs]

Results are kept per variant in ``benchmarks/results/rummikub_turn_rules/`` (a rerun skips those made).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from common import finished_on_this_machine, markers, write_block

import tableenvs
from tableenvs.core.registry import make_raw
from tableenvs.evaluation import evaluate
from tableenvs.paths import write_text_atomic
from tableenvs.policies import play_game
from tableenvs.rummikub.agents import HeuristicPolicy
from tableenvs.rummikub.holding import fewest_other_tiles, pool_tiles
from tableenvs.rummikub.openings import shape_score as shape
from tableenvs.rummikub.openings import smaller_openings
from tableenvs.rummikub.solver import is_valid_play, solve
from tableenvs.rummikub.tiles import TILE_VALUES

GAME = "rummikub_v0"
PLAYERS = 4
RESULTS = Path(__file__).resolve().parent / "results" / "rummikub_turn_rules"
REPEAT_STRIDE = 100_000  # first deals of the head-to-head's repeated sets: seed, seed + this, ...
BLOCK = "rummikub-turn-rules"


class TurnRule(HeuristicPolicy):
    """The heuristic with its play of each turn replaced by :meth:`choose` (made once per turn, at its start); a turn
    under way keeps the chosen play, so its tiles are staged lowest type first and committed as the heuristic's."""

    def make_plan(self, rack: np.ndarray, table: np.ndarray, staged: np.ndarray, opened: bool) -> np.ndarray | None:
        if staged.any():  # not this rule's own turn under way: finish it as the heuristic would
            return super().make_plan(rack, table, staged, opened)
        return self.choose(rack, table, opened)

    def solved(self, table: np.ndarray, rack: np.ndarray, opened: bool, objective: str | None = None) -> Any:
        """The solver's play (count vector) from ``rack`` with the heuristic's objective (or ``objective``)."""
        objective = objective or ("tiles" if opened else "value")
        solution = solve(table, rack, objective=objective, opening=not opened, min_initial=self.min_initial)
        return None if solution is None else np.asarray(solution.played)

    def choose(self, rack: np.ndarray, table: np.ndarray, opened: bool) -> np.ndarray | None:
        return self.solved(table, rack, opened)


class Value(TurnRule):
    def choose(self, rack, table, opened):
        return self.solved(table, rack, opened, "value")


class OpenTiles(TurnRule):
    def choose(self, rack, table, opened):
        return self.solved(table, rack, opened, "tiles" if not opened else None)


class Hold(TurnRule):
    keep = 1

    def choose(self, rack, table, opened):
        play = self.solved(table, rack, opened)
        if play is None or not opened or play.sum() == rack.sum():
            return play
        play = play.copy()
        held = 0
        for tile in np.argsort(TILE_VALUES, kind="stable"):
            while play[tile] and held < self.keep and play.sum() > 1:
                fewer = play.copy()
                fewer[tile] -= 1
                if not is_valid_play(table, rack, fewer):
                    break
                play, held = fewer, held + 1
        return play


class Hold3(Hold):
    keep = 3


class Shape(TurnRule):
    removed = 1  # tile types left out of the re-solves, at most
    opening_only = False  # choose by shape only for the opening meld (the heuristic's play after it)

    def choose(self, rack, table, opened):
        best = self.solved(table, rack, opened)
        if best is None or (opened and self.opening_only):
            return best
        plays, seen = [best], {best.tobytes()}
        types = np.flatnonzero(best)
        for size in range(1, self.removed + 1):
            for left_out in itertools.combinations(types, size):
                fewer = rack.copy()
                fewer[list(left_out)] = 0
                play = self.solved(table, fewer, opened)
                enough = play is not None and (play.sum() >= best.sum() or not opened)
                if enough and play.tobytes() not in seen:
                    seen.add(play.tobytes())
                    plays.append(play)
        return max(plays, key=lambda play: shape(rack - play))  # max keeps the first of equal scores


class Shape2(Shape):
    removed = 2


class ShapeOpening(Shape):
    removed = 2
    opening_only = True


class MinOpen(TurnRule):
    late = None  # the pool size (tiles) below which the rule applies; None: always

    def act(self, observation, action_mask, rng):
        self._pool = pool_tiles(observation)
        return super().act(observation, action_mask, rng)

    def choose(self, rack, table, opened):
        play = self.solved(table, rack, opened)
        if opened or play is None or (self.late is not None and self._pool >= self.late):
            return play
        return min(smaller_openings(table, rack, self.min_initial), key=lambda option: self.order(rack, *option))[0]

    def order(self, rack: np.ndarray, play: np.ndarray, points: int) -> tuple:
        return (int(play.sum()), points)


class LateMinOpen(MinOpen):
    late = 38


class MinOpenShape(MinOpen):
    def order(self, rack, play, points):
        return (int(play.sum()), -shape(rack - play), points)


class Holding(TurnRule):
    release_at = 3  # play once an opponent has this many tiles or fewer
    low_pool = 0  # play once the pool holds fewer tiles than this

    def act(self, observation, action_mask, rng):
        self._pool = pool_tiles(observation)
        self._fewest = fewest_other_tiles(observation)
        return super().act(observation, action_mask, rng)

    def choose(self, rack, table, opened):
        play = self.solved(table, rack, opened)
        if not opened or play is None or play.sum() == rack.sum():
            return play
        return play if self._fewest <= self.release_at or self._pool < self.low_pool else None  # None: draw


class HoldingPool(Holding):
    release_at = 2
    low_pool = 10


VARIANTS: dict[str, type[TurnRule]] = {
    "value": Value,
    "open-tiles": OpenTiles,
    "hold-1": Hold,
    "hold-3": Hold3,
    "shape-1": Shape,
    "shape-2": Shape2,
    "shape-opening": ShapeOpening,
    "min-open": MinOpen,
    "late-min-open": LateMinOpen,
    "min-open-shape": MinOpenShape,
    "hold-until-3": Holding,
    "hold-until-2-pool": HoldingPool,
}


def gains(variant: str, deals: range) -> list[float]:
    """The variant's gain on each deal (module docstring), in points."""
    env = make_raw(GAME, num_players=PLAYERS)
    rng = np.random.default_rng(0)  # unused: every policy here is deterministic
    out = []
    for deal in deals:
        base, _ = play_game(env, [HeuristicPolicy(env) for _ in range(PLAYERS)], seed=deal, rng=rng)
        total = 0.0
        for seat in range(PLAYERS):
            seats: list[Any] = [HeuristicPolicy(env) for _ in range(PLAYERS)]
            seats[seat] = VARIANTS[variant](env)
            scores, _ = play_game(env, seats, seed=deal, rng=rng)
            total += float(scores[seat] - base[seat])
        out.append(total / PLAYERS)
    return out


def measure(variant: str, deals: int, seed: int, workers: int) -> dict[str, Any]:
    """The variant's row (kept in RESULTS; read back when there)."""
    path = RESULTS / f"{variant}__{deals}__s{seed}.json"
    if path.exists():
        return json.loads(path.read_text())
    began = time.perf_counter()
    chunks = [range(start, min(start + 50, seed + deals)) for start in range(seed, seed + deals, 50)]
    with ProcessPoolExecutor(workers) as pool:
        per_deal = [gain for part in pool.map(gains, [variant] * len(chunks), chunks) for gain in part]
    values = np.asarray(per_deal)
    half = 1.96 * values.std(ddof=1) / np.sqrt(len(values))
    row = {
        "variant": variant,
        "deals": deals,
        "seed": seed,
        "gain": float(values.mean()),
        "low": float(values.mean() - half),
        "high": float(values.mean() + half),
        "same": int((values == 0).sum()),
        "seconds": time.perf_counter() - began,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(row, indent=1) + "\n")  # a fault never leaves half a file
    return row


def head_to_head(variant: str, games: int, seed: int, workers: int) -> dict[str, Any]:
    """The standard evaluation of the variant against the heuristic (kept in RESULTS)."""
    path = RESULTS / f"{variant}__head-to-head__{games}__s{seed}.json"
    if path.exists():
        return json.loads(path.read_text())
    policy = VARIANTS[variant](make_raw(GAME, num_players=PLAYERS))
    policy.name = variant
    result = evaluate(GAME, [policy, "heuristic"], games, num_players=PLAYERS, seed=seed, workers=workers)
    paired = result.paired[0]
    row = {"variant": variant, "games": games, "seed": seed, **{k: paired[k] for k in paired if k != "policy"}}
    RESULTS.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(row, indent=1) + "\n")  # a fault never leaves half a file
    return row


def pooled(sets: list[dict[str, Any]]) -> dict[str, Any]:
    """The head-to-heads of one variant on disjoint deals as one: the mean of their differences, its interval from
    their standard errors (normal; each set's from its 95% interval), and ``seed`` naming every set's first deal."""
    row: dict[str, Any] = {
        "variant": sets[0]["variant"],
        "games": sum(s["games"] for s in sets),
        "blocks": sum(s["blocks"] for s in sets),
        "seed": ", ".join(str(s["seed"]) for s in sets),
        "passed": sum(s["score_diff_low"] > 0 for s in sets),
        "sets": len(sets),
    }
    for key in ("score_diff", "win_diff"):
        means = np.array([s[key] for s in sets])
        errors = np.array([(s[f"{key}_high"] - s[f"{key}_low"]) / (2 * 1.96) for s in sets])
        half = 1.96 * np.sqrt((errors**2).sum()) / len(sets)
        row[key], row[f"{key}_low"], row[f"{key}_high"] = means.mean(), means.mean() - half, means.mean() + half
    return row


def cells(duel: dict[str, Any]) -> str:
    """A test's score and win-rate differences with their intervals, as two table cells."""
    return (
        f"{duel['score_diff']:+.2f} [{duel['score_diff_low']:+.2f}, {duel['score_diff_high']:+.2f}] | "
        f"{duel['win_diff']:+.3f} [{duel['win_diff_low']:+.3f}, {duel['win_diff_high']:+.3f}]"
    )


def block(rows: list[dict[str, Any]], duels: list[dict[str, Any]], command: str, finished: str) -> str:
    lines = [
        f"Run by `{command}`, {finished}.",
        "",
        "| variant | deals | gain of one variant seat over the heuristic in that seat, points a game [95%] |",
        "|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| `{row['variant']}` | {row['deals']:,} | {row['gain']:+.2f} [{row['low']:+.2f}, {row['high']:+.2f}] |"
        )
    if duels:
        lines += [
            "",
            "The test a shipped model must pass: two seats of the variant against two heuristics, every seating, "
            "duplicate deals (`tableenvs.evaluation.evaluate`, as `tableenvs eval`):",
            "",
            "| variant − heuristic | games (blocks), first deal | points a game [95%] | win rate [95%] |",
            "|---|---|---|---|",
        ]
        for duel in duels:
            first = f"seed {duel['seed']}" if "sets" not in duel else (
                f"pooled: seeds {duel['seed']} ({duel['passed']} of {duel['sets']} sets pass alone)"
            )  # fmt: skip
            lines.append(f"| `{duel['variant']}` | {duel['games']:,} ({duel['blocks']:,}), {first} | {cells(duel)} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", action="append", choices=list(VARIANTS), help="a variant (repeat; default all)")
    parser.add_argument("--deals", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=100000, help="first deal (variants were explored on 0-1999)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--head-to-head", action="append", choices=list(VARIANTS), help="also play this variant's standard evaluation"
    )
    parser.add_argument("--games", type=int, default=2000, help="games of the standard evaluation")
    parser.add_argument(
        "--repeats", type=int, default=1, help="play each head-to-head on this many disjoint sets of deals, and pool"
    )
    parser.add_argument("--write-docs", action="store_true", help=f"write the {BLOCK} block of docs/lab/training.md")
    args = parser.parse_args()
    counts = {"deals": args.deals, "workers": args.workers, "games": args.games, "repeats": args.repeats}
    for name, value in counts.items():
        if value < 1:
            sys.exit(f"--{name} must be at least 1, got {value}")
    load = os.getloadavg()[0]
    print(f"# {tableenvs.__name__} rummikub_turn_rules, {PLAYERS} players, seed {args.seed}", flush=True)
    rows = []
    for variant in args.variant or list(VARIANTS):
        row = measure(variant, args.deals, args.seed, args.workers)
        rows.append(row)
        shown = f"{row['gain']:+6.2f} [{row['low']:+.2f}, {row['high']:+.2f}]"
        print(f"{variant:17s} {shown}  ({row['seconds']:.0f} s)", flush=True)
    duels = []
    for variant in args.head_to_head or []:
        sets = []
        for repeat in range(args.repeats):
            duel = head_to_head(variant, args.games, args.seed + REPEAT_STRIDE * repeat, args.workers)
            sets.append(duel)
            print(f"head to head {duel['variant']}, seed {duel['seed']}: {duel['score_diff']:+.2f} "
                  f"[{duel['score_diff_low']:+.2f}, {duel['score_diff_high']:+.2f}] points, win rate "
                  f"{duel['win_diff']:+.3f}", flush=True)  # fmt: skip
        duels += sets + ([pooled(sets)] if len(sets) > 1 else [])
    if args.write_docs:
        command = "python benchmarks/rummikub_turn_rules.py " + " ".join(sys.argv[1:])
        docs = write_block(*markers(BLOCK, "rummikub_turn_rules.py"), block(rows, duels, command,
                      finished_on_this_machine(load)))  # fmt: skip
        print(f"wrote the {BLOCK} block of {docs}")


if __name__ == "__main__":
    main()
