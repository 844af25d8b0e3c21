"""Llama Party deck calibration and greedy-vs-random figures: per-round score distributions and win rates.

Plays whole games of ``llama_party_v0`` (standard deck unless ``--deck``) through the raw AEC env with the
built-in policies and prints, for every player count:

* per-round score distribution of a seat in all-random tables and in all-greedy tables;
* one greedy seat against random opponents: its win rate (ties count as shared: 1/k for k winners) and its mean
  per-game score margin over the opponents' mean, with 95% confidence intervals;
* with ``--ablation N``: whether the goal choice and the passing each matter. In N games per variant one seat
  (rotating) plays a variant among greedy opponents: greedy (control), random goal + greedy passing, greedy goal +
  random passing, all random; printed: that seat's mean per-round score and its mean per-round gap to the greedy
  seats of the same games (95% CIs over games). A gap well below 0 for a variant means the part it randomises matters.

Run: ``python benchmarks/llama_party_scores.py --games 400`` (add ``--ablation 400`` for the ablation)
"""

from __future__ import annotations

import argparse

import numpy as np

from tableenvs.evaluation.ratings import mean_interval, wilson_interval
from tableenvs.llama_party.encoder import LAYOUT
from tableenvs.llama_party.env import raw_env
from tableenvs.policies import make_policy, play_game


def play(env, policies, seed):
    """One game; returns (per-round scores by seat list, winners, totals)."""
    play_game(env, policies, seed=seed, rng=np.random.default_rng(seed + 10_000))
    return env.game.round_scores, env.game.winners, env.game.totals


class Split:
    """``goal`` acts in the goal step, ``passing`` in the pass steps (both read the same observation)."""

    def __init__(self, goal, passing):
        self.goal, self.passing = goal, passing

    def act(self, observation, action_mask, rng):
        policy = self.goal if observation[LAYOUT.STEP] == 1.0 else self.passing
        return policy.act(observation, action_mask, rng)


def ablation(env, games: int, random_policy, greedy_policy) -> None:
    n = env.num_players
    variants = {
        "greedy (control)": greedy_policy,
        "random goal, greedy passing": Split(random_policy, greedy_policy),
        "greedy goal, random passing": Split(greedy_policy, random_policy),
        "random goal, random passing": random_policy,
    }
    for label, variant in variants.items():
        own, gaps = [], []
        for game in range(games):
            seat = game % n
            policies = [greedy_policy] * n
            policies[seat] = variant
            rounds, _, _ = play(env, policies, seed=200_000 + game)
            # per game (rounds of one game are not independent): mean per-round score and gap
            own.append(np.mean([r[seat] for r in rounds]))
            gaps.append(np.mean([r[seat] - (sum(r) - r[seat]) / (n - 1) for r in rounds]))
        m, lo, hi = mean_interval(own)
        g, glo, ghi = mean_interval(gaps)
        print(
            f"  ablation, one seat among greedy: {label:28s} per-round score {m:5.1f} ({lo:5.1f}..{hi:5.1f}); "
            f"gap to the greedy seats {g:+5.1f} ({glo:+5.1f}..{ghi:+5.1f})"
        )


def describe(values):
    v = np.asarray(values, float)
    q = np.percentile(v, [5, 25, 50, 75, 95])
    return (
        f"mean {v.mean():5.1f}  sd {v.std(ddof=1):4.1f}  p5 {q[0]:5.1f}  p25 {q[1]:5.1f}  median {q[2]:5.1f}  "
        f"p75 {q[3]:5.1f}  p95 {q[4]:5.1f}  min {v.min():4.0f}  max {v.max():4.0f}  (n={v.size})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=400, help="games per table kind and player count")
    parser.add_argument("--deck", default=None, help="deck file (default: the standard deck)")
    parser.add_argument("--players", default="2,3,4")
    parser.add_argument("--ablation", type=int, default=0, help="also run the goal/passing ablation (N games)")
    args = parser.parse_args()

    for n in (int(p) for p in args.players.split(",")):
        env = raw_env(num_players=n, deck=args.deck)
        random_policy, greedy_policy = make_policy("random", env), make_policy("heuristic", env)
        print(f"== {n} players, {args.games} games per table kind")
        for label, policies in (("random", [random_policy] * n), ("greedy", [greedy_policy] * n)):
            scores = []
            for game in range(args.games):
                rounds, _, _ = play(env, policies, seed=game)
                scores += [s for r in rounds for s in r]
            print(f"  per-round score, all-{label:6s} table: {describe(scores)}")
        wins, margins, greedy_rounds = [], [], []
        for game in range(args.games):
            seat = game % n
            policies = [random_policy] * n
            policies[seat] = greedy_policy
            rounds, winners, totals = play(env, policies, seed=100_000 + game)
            wins.append(1.0 / len(winners) if seat in winners else 0.0)
            others = [t for s, t in enumerate(totals) if s != seat]
            margins.append(totals[seat] - sum(others) / len(others))
            greedy_rounds += [r[seat] for r in rounds]
        w = sum(wins) / len(wins)
        lo, hi = wilson_interval(sum(wins), len(wins))
        m, mlo, mhi = mean_interval(margins)
        print(
            f"  1 greedy vs {n - 1} random: greedy win share {w:.3f} (Wilson 95% CI {lo:.3f}..{hi:.3f}; "
            f"chance {1 / n:.3f}); game-score margin over opponents' mean {m:+.1f} (95% CI {mlo:+.1f}..{mhi:+.1f})"
        )
        print(f"  per-round score, greedy seat among random: {describe(greedy_rounds)}")
        if args.ablation:
            ablation(env, args.ablation, random_policy, greedy_policy)


if __name__ == "__main__":
    main()
