"""Self-play: train MaskablePPO against a pool of its own snapshots (plus random play), then evaluate.

    python -m pip install torch==2.13.0 -e ".[train]"
    python examples/self_play.py pilipili_v0 --timesteps 100000 --out runs/selfplay

Every opponent seat starts as a random player. Every ``--snapshot-every`` steps the learner is saved into
``OUT/pool/`` and the pool becomes ``["random", last --pool-size snapshots]``; each episode, each opponent seat
plays the newest snapshot with probability ``--latest-prob`` and an older member otherwise (snapshots sample
from their masked policy). At the end the final model is evaluated against random and heuristic opponents and
against its own first snapshot, with the random agent on the same deals and seats as the baseline (a duplicate-deal
gauntlet of :func:`tableenvs.evaluation.evaluate`, compared by a paired test over the deals).
"""

import argparse
from pathlib import Path

import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.env_util import make_vec_env

import tableenvs
from tableenvs.evaluation import evaluate
from tableenvs.training.selfplay import SelfPlayCallback
from tableenvs.training.single_agent import OpponentPool, SingleAgentEnv


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("env", nargs="?", default="pilipili_v0", help=f"one of {', '.join(tableenvs.names())}")
    parser.add_argument("--timesteps", type=int, default=100_000)
    parser.add_argument("--snapshot-every", type=int, default=20_000)
    parser.add_argument("--pool-size", type=int, default=5)
    parser.add_argument("--latest-prob", type=float, default=0.5)
    parser.add_argument("--games", type=int, default=500, help="evaluation games per row")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="runs/selfplay")
    args = parser.parse_args()
    torch.set_num_threads(1)
    out = Path(args.out)

    def make_env() -> SingleAgentEnv:
        return SingleAgentEnv(args.env, opponents=OpponentPool(["random"]), seat="rotate")

    env = make_vec_env(make_env, n_envs=4, seed=args.seed)
    model = MaskablePPO("MlpPolicy", env, n_steps=512, batch_size=256, ent_coef=0.01, seed=args.seed, device="cpu")
    callback = SelfPlayCallback(
        out / "pool", snapshot_every=args.snapshot_every, pool_size=args.pool_size, latest_prob=args.latest_prob
    )
    model.learn(args.timesteps, callback=callback, progress_bar=True)
    model.save(out / "model.zip")
    print(f"saved {out / 'model.zip'}; {len(callback.snapshots)} snapshots in {out / 'pool'}")

    rows = [("random", "random"), ("heuristic", "heuristic")]
    if callback.snapshots:
        rows.append(("first snapshot", str(callback.snapshots[0])))
    print(f"\n{args.games} games per agent and row, every agent in every seat on the same deals")
    print(f"{'opponents':<16} {'self-play agent':<42} {'random agent in seat':<42} {'p (paired)':>10}")
    for label, opponents in rows:
        # trust_models: the first snapshot is this run's own .zip (SB3 files hold pickles; tableenvs refuses others')
        result = evaluate(
            args.env,
            [model, "random"],
            2 * args.games,
            opponents=opponents,
            seed=args.seed + 1_000_000,
            trust_models=True,
        )
        cells = [
            "win {win_rate:.3f}, reward {reward_mean:+.2f} [{reward_low:+.2f}, {reward_high:+.2f}]".format(**row)
            for row in result.policies[:2]
        ]
        print(f"{label:<16} {cells[0]:<42} {cells[1]:<42} {result.paired[0]['score_p']:>10.2g}")


if __name__ == "__main__":
    main()
