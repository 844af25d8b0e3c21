"""Research probe: could plays onto the table be answered by witnesses instead of a sweep?

It measured the idea before it was built (``kernel.witness``, used by ``solver.TurnSweep`` on big tables); it stays
as the evidence for the figures in docs/benchmarks.md and as a Python statement of the search. Without the searches,
the engine answers a turn's first question with one forward sweep of every partial partition of table + rack (up to
460k states on big tables with both jokers) and a walk of it. This probe asks the same questions by depth-first
search on the sweep's own transition system (a Python copy of ``_solver_kernel.sweep``'s transitions, look-ahead
included), one search per rack tile type: the type's cell tries its rack tiles first, and states found to have no
accepted completion are remembered across the types. A *yes* needs one path (a witness); a *no* needs the search to
exhaust. Every answer is asserted equal to the engine's mask (``solver.playable``), so the probe cannot drift from
the kernel unnoticed.

Two measurements (docs/lab/benchmark-history.md, Rummikub step speed, sixth pass):

1. every turn-start position of a play onto the table in ``--games`` seeded random 4-player games: sweep states
   against search visits, for yes and no answers, and how many positions have every rack type playable;
2. whole random turns from the ``--turns`` biggest positions: each question's mask and, once tiles are staged, the
   commit check (a search with every cell fixed at table + staged), then the first partition in sweep order at a
   commit (the published arrangement), with a uniformly random legal action between questions.

Run: ``python benchmarks/studies/rummikub_witness_probe.py [--games 40] [--turns 34] [--seed 1]`` (a few minutes).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py, search_vs_heuristic.py

import numpy as np
from common import play_out

import tableenvs
from tableenvs.rummikub import _solver_kernel as kernel
from tableenvs.rummikub import solver, sweep, turn_sweep

RUN_NEXT, RUN_SHAPE, STILL_NEEDED = kernel.RUN_NEXT.tolist(), kernel.RUN_SHAPE.tolist(), kernel.STILL_NEEDED.tolist()
ACC_NEXT, GROUPS_OK, GROUP_NEEDS = kernel.ACC_NEXT.tolist(), kernel.GROUPS_OK.tolist(), kernel.GROUP_NEEDS.tolist()


class Transitions:
    """``kernel.sweep``'s transitions for bounds ``lo``/``hi`` (no points), in its loop order."""

    def __init__(self, lo: np.ndarray, hi: np.ndarray):
        self.lo, self.hi = lo.tolist(), hi.tolist()
        self.jokers = self.hi[52]
        self.run_needs = [[[0] * len(RUN_SHAPE) for _ in range(14)] for _ in range(4)]
        for c in range(4):
            for nx in range(14):
                first = self.hi[c * 13 + nx] if nx < 13 else 0
                second = self.hi[c * 13 + nx + 1] if nx < 12 else 0
                for rs, (k1, k2, _) in enumerate(RUN_SHAPE):
                    self.run_needs[c][nx][rs] = max(0, k1 + k2 - first) + max(0, k1 - second)

    def successors(self, layer: int, key: int):
        """``(child key, tile type or -1, tiles above lo)`` of the state ``key`` entering ``layer``."""
        number0, step = divmod(layer, 5)
        number = number0 + 1
        lo, hi, needs = self.lo, self.hi, self.run_needs
        used_jokers, acc = (key >> 24) & 3, (key >> 26) & 31
        free = self.jokers - used_jokers
        if step == 4:  # the number's groups
            runs_need = sum(needs[c][number][(key >> (6 * c)) & 63] for c in range(4))
            cleared = key & ~((3 << 24) | (31 << 26))
            for group_jokers in range(free + 1):
                if runs_need > free - group_jokers:
                    break
                if GROUPS_OK[acc][group_jokers]:
                    yield cleared | ((used_jokers + group_jokers) << 24), -1, 0
            return
        t, shift = step * 13 + number0, 6 * step
        later_caps = 0
        for later in range(3, step, -1):
            later_caps = later_caps * 3 + min(2, hi[later * 13 + number0])
        run_state = (key >> shift) & 63
        cleared = key & ~((63 << shift) | (3 << 24) | (31 << 26))
        others = sum(needs[c][number0 + (c < step)][(key >> (6 * c)) & 63] for c in range(4) if c != step)
        for used in range(lo[t], hi[t] + 1):
            for to_groups in range(used + 1):
                acc2 = ACC_NEXT[acc][to_groups]
                if acc2 < 0:
                    continue
                needed = others + GROUP_NEEDS[step][acc2][later_caps]
                for run_jokers in range(min(2, free) + 1):
                    if needed > free - run_jokers:
                        break
                    slots = used - to_groups + run_jokers
                    if slots > 4:
                        break
                    state2 = RUN_NEXT[run_state][slots]
                    if state2 < 0 or number + STILL_NEEDED[state2] > 13:
                        continue
                    if number < 8 and RUN_SHAPE[state2][0] > used - to_groups:
                        continue
                    if needs[step][number][state2] + needed > free - run_jokers:
                        continue
                    key2 = cleared | (state2 << shift) | ((used_jokers + run_jokers) << 24) | (acc2 << 26)
                    yield key2, t, used - lo[t]


class Search:
    """Depth-first searches on one position's transitions, sharing the states known to have no accepted end."""

    def __init__(self, lo: np.ndarray, hi: np.ndarray):
        self.moves = Transitions(lo, hi)
        self.lo_jokers = int(lo[52])
        self.dead: set[tuple[int, int]] = set()
        self.visits = 0

    def path(self, wanted: int | None) -> bool:
        """An accepted path using a tile of type ``wanted`` above its bound, the type's rack tiles tried first; with
        ``None`` any accepted path, in the sweep's loop order (so the first one found is the first in sweep order)."""
        dead_here: set[tuple[int, int]] = set()

        def go(layer: int, key: int, have: bool) -> bool:
            self.visits += 1
            if layer == 65:
                return have and (key >> 24) & 3 >= self.lo_jokers
            if (layer, key) in self.dead or (not have and (layer, key) in dead_here):
                return False
            moves = list(self.moves.successors(layer, key))
            if not have:
                moves.sort(key=lambda move: not (move[1] == wanted and move[2] > 0))  # the wanted tile first
            for key2, tile, extra in moves:
                if go(layer + 1, key2, have or (tile == wanted and extra > 0)):
                    return True
            (self.dead if have else dead_here).add((layer, key))
            return False

        return go(0, 0, wanted is None)


def table_positions(games: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``(table, rack, staged)`` of every new sweep of a play onto the table in seeded random 4-player games."""
    found = []
    recorded = turn_sweep.recorded_sweep

    def spy(table, rack, staged, opening, min_initial, *rest):
        if not opening and table.any():
            found.append((table.copy(), rack.copy(), staged.copy()))
        return recorded(table, rack, staged, opening, min_initial, *rest)

    turn_sweep.recorded_sweep = spy
    searching = turn_sweep._SEARCH_STATES
    turn_sweep._SEARCH_STATES = 1 << 62  # the engine sweeps every turn (its searches would skip the big positions)
    try:
        env = tableenvs.make("rummikub_v0", num_players=4)
        rng = np.random.default_rng(0)
        for seed in range(games):
            env.reset(seed=seed)
            play_out(env, rng)
    finally:
        turn_sweep.recorded_sweep = recorded
        turn_sweep._SEARCH_STATES = searching
    return found


def sweep_states(table, rack, staged) -> int:
    lo, _, result = sweep.recorded_sweep(table, rack, staged, False, 30)
    return int(result[0])


def first_questions(positions) -> None:
    states = visits_yes = visits_no = yes = no = all_yes = all_yes_states = 0
    for table, rack, staged in positions:
        n = sweep_states(table, rack, staged)
        mask = solver.playable(table, rack, staged)
        search = Search(table + staged, table + rack)
        answers = []
        for t in np.flatnonzero(rack[:52] > staged[:52]):
            before = search.visits
            found = search.path(int(t))
            assert found == bool(mask[t]), f"search and sweep disagree on type {t}"
            answers.append(found)
            if found:
                yes, visits_yes = yes + 1, visits_yes + search.visits - before
            else:
                no, visits_no = no + 1, visits_no + search.visits - before
        states += n
        if all(answers):
            all_yes, all_yes_states = all_yes + 1, all_yes_states + n
    print("| turn-start positions (plays onto the table) | sweep states | yes answers / visits | no answers / visits |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| {len(positions):,} | {states:,} | {yes:,} / {visits_yes:,} | {no:,} / {visits_no:,} |")
    print(f"every rack type playable: {all_yes:,} positions, {all_yes_states:,} of the {states:,} sweep states")


def random_turns(positions, count: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    sized = sorted(((sweep_states(*position), i) for i, position in enumerate(positions)), reverse=True)[:count]
    rows = []
    for n, i in sized:
        table, rack, staged = positions[i]
        questions = visits = worst = 0
        while True:
            search = Search(table + staged, table + rack)
            mask = solver.playable(table, rack, staged)
            playable = []
            for t in np.flatnonzero(rack[:52] > staged[:52]):
                found = search.path(int(t))
                assert found == bool(mask[t]), f"search and sweep disagree on type {t}"
                if found:
                    playable.append(int(t))
            question = search.visits
            can_commit = False
            if staged.any():  # the commit check: exactly table + staged (lo = hi, so exactly its jokers)
                after = table + staged
                check = Search(after, after)
                can_commit = check.path(None)
                assert can_commit == solver.is_valid_play(table, rack, staged)
                question += check.visits
            questions += 1
            visits += question
            worst = max(worst, question)
            actions = playable + (["commit"] if can_commit else []) + ([] if staged.any() else ["draw"])
            if not actions:
                break
            action = actions[rng.integers(len(actions))]
            if action == "draw":
                break
            if action == "commit":  # the published arrangement: the first partition in sweep order
                after = table + staged
                arrangement = Search(after, after)
                arrangement.path(None)
                visits += arrangement.visits
                break
            staged = staged.copy()
            staged[action] += 1
        rows.append((n, questions, worst, visits))
    print(f"\n| whole random turns from the {count} biggest positions | sweep states | questions | visits |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| all | {sum(r[0] for r in rows):,} | {sum(r[1] for r in rows):,} | {sum(r[3] for r in rows):,} |")
    print(f"| costliest question | | | {max(r[2] for r in rows):,} |")
    print(
        f"turns whose costliest question visits over 10k states: {sum(r[2] > 10_000 for r in rows)} of {len(rows)}; "
        f"over the turn's sweep states: {sum(r[2] > r[0] for r in rows)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=40, help="seeded random 4-player games (default 40)")
    parser.add_argument("--turns", type=int, default=34, help="biggest positions played as whole turns (default 34)")
    parser.add_argument("--seed", type=int, default=1, help="the random agent's seed in the turns (default 1)")
    args = parser.parse_args()
    if args.games < 1 or args.turns < 1:
        parser.error(f"--games and --turns must be >= 1, got --games {args.games} --turns {args.turns}")
    sys.setrecursionlimit(10_000)
    positions = table_positions(args.games)
    first_questions(positions)
    random_turns(positions, args.turns, args.seed)


if __name__ == "__main__":
    main()
