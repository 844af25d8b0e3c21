"""OpenSpiel's IS-MCTS on each game through the bridge: against uniform random and against the tableenvs heuristic.

Where you are: a benchmark script beside ``tableenvs/openspiel.py``; its output is pasted in docs/openspiel.md.
Each game is played with 2 players: OpenSpiel's Python IS-MCTS (``open_spiel.python.algorithms.ismcts``, random
rollouts to the end of the game, ``--sims`` simulations per decision) against an opponent, on ``--deals`` deals
(chance outcomes 0, 1, ...), each deal twice with the seats swapped. Reported per opponent: IS-MCTS's mean total
reward (the game's own score: minus chilis in Pili Pili, points in Llama Party and Rummikub; higher is better) and
the opponent's, their paired difference over the deals with a 95% interval (t distribution), IS-MCTS's win rate
(the higher total wins; a tie counts a half), and CPU milliseconds per IS-MCTS decision (``time.process_time``;
decisions with one legal action are not searched and not counted).

    python benchmarks/openspiel_demo.py                 # all three games, 6 deals x 2 seatings, sims=20
    python benchmarks/openspiel_demo.py --game tableenvs_llama_party_v0 --deals 10 --sims 50
"""

from __future__ import annotations

import argparse
import math
import platform
import time
from datetime import datetime, timezone

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts
from open_spiel.python.bots.uniform_random import UniformRandomBot
from scipy import stats

import tableenvs.openspiel as tos

GAMES = {
    "tableenvs_pilipili_v0": {"num_players": 2},
    "tableenvs_llama_party_v0": {"num_players": 2},
    # the write-up's rule (the game ends when the pool is drawn out) keeps random rollouts short
    "tableenvs_rummikub_v0": {"num_players": 2, "end_on_empty_pool": True},
}


def opponent(kind: str, player: int, seed: int) -> pyspiel.Bot:
    if kind == "random":
        return UniformRandomBot(player, np.random.RandomState(seed))
    return tos.PolicyBot(player, "heuristic", seed=seed)


def play(game: pyspiel.Game, deal: int, bots: list[pyspiel.Bot], searcher: int, timings: list[float]) -> list[float]:
    """One game from chance outcome ``deal``; the CPU seconds of ``searcher``'s searched decisions go to timings."""
    state = game.new_initial_state()
    state.apply_action(deal)
    while not state.is_terminal():
        player = state.current_player()
        searched = player == searcher and len(state.legal_actions()) > 1
        started = time.process_time()
        action = bots[player].step(state)
        if searched:
            timings.append(time.process_time() - started)
        state.apply_action(int(action))
    return state.returns()


def interval(values: list[float]) -> tuple[float, float]:
    mean = float(np.mean(values))
    if len(values) < 2:
        return mean, math.nan
    half = stats.t.ppf(0.975, len(values) - 1) * float(np.std(values, ddof=1)) / math.sqrt(len(values))
    return mean, half


def run(name: str, deals: int, sims: int, seed: int) -> list[str]:
    game = pyspiel.load_game(name, GAMES[name])
    lines = []
    for kind in ("random", "heuristic"):
        ours, theirs, diffs, wins, timings = [], [], [], [], []
        started = time.perf_counter()
        for deal in range(deals):
            per_deal = []
            for searcher in (0, 1):
                bot_seed = seed + 1000 * deal + searcher
                rs = np.random.RandomState(bot_seed)
                search = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rs), 2.0, sims, random_state=rs)
                bots = [search, opponent(kind, 1, bot_seed)] if searcher == 0 else [opponent(kind, 0, bot_seed), search]
                returns = play(game, deal, bots, searcher, timings)
                mine, other = returns[searcher], returns[1 - searcher]
                ours.append(mine)
                theirs.append(other)
                wins.append(1.0 if mine > other else 0.5 if mine == other else 0.0)
                per_deal.append(mine - other)
            diffs.append(float(np.mean(per_deal)))
        wall = time.perf_counter() - started
        mean, half = interval(diffs)
        lines.append(
            f"  IS-MCTS(sims={sims}) vs {kind:9s}: {len(ours)} games, IS-MCTS {np.mean(ours):+7.2f}, {kind} "
            f"{np.mean(theirs):+7.2f}, paired difference {mean:+7.2f} [{mean - half:+.2f}, {mean + half:+.2f}], "
            f"win rate {np.mean(wins):.3f}, {1000 * np.mean(timings):.0f} ms/decision (p90 "
            f"{1000 * np.percentile(timings, 90):.0f}, {len(timings)} searched), {wall:.0f} s wall"
        )
        print(lines[-1], flush=True)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=sorted(GAMES), action="append", help="game(s) to run (default: all)")
    parser.add_argument("--deals", type=int, default=6, help="deals per opponent, each played twice (default 6)")
    parser.add_argument("--sims", type=int, default=20, help="IS-MCTS simulations per decision (default 20)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bots (default 0)")
    args = parser.parse_args()
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"# {when}, Python {platform.python_version()}, open_spiel {_version()}, {platform.machine()}")
    print(f"# deals 0..{args.deals - 1}, each with the seats swapped; IS-MCTS sims={args.sims}; seed {args.seed}")
    for name in args.game or sorted(GAMES):
        print(pyspiel.load_game(name, GAMES[name]), flush=True)
        run(name, args.deals, args.sims, args.seed)


def _version() -> str:
    from importlib.metadata import version

    return version("open_spiel")


if __name__ == "__main__":
    main()
