"""Train MaskablePPO on one seat of a game against chosen opponents, evaluate, save, plot, print the table.

    python -m pip install torch==2.13.0 -e ".[train]"
    python examples/train_maskable_ppo.py pilipili_v0 --timesteps 150000 --opponents random --out runs/pilipili

What it does (the same job as ``tableenvs train``, spelled out through the API in :mod:`tableenvs.training.job`):
MaskablePPO learns on 4 copies of the single-agent view (seat rotating every episode, opponents played inside
``step()``), with a progress bar; every ``--eval-every`` steps it plays ``--eval-games`` games against the training
opponents for the learning curve. At the end it saves ``model.zip``, ``model.npz``, ``curve.png`` and
``results.json`` under ``--out`` and prints the final table: the trained agent, a random agent and the heuristic in
the same seats on the same deals, against random and against heuristic opponents (win rate and mean reward with 95%
intervals, Welch's t-test against the trained agent).
"""

import argparse

import tableenvs
from tableenvs.training.job import TrainConfig, train


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("env", nargs="?", default="pilipili_v0", help=f"one of {', '.join(tableenvs.names())}")
    parser.add_argument("--timesteps", type=int, default=50_000)
    parser.add_argument("--opponents", default="random", help="random, heuristic, trained or a saved model (.npz)")
    parser.add_argument("--trust-models", action="store_true", help="let --opponents be an SB3 .zip (runs its pickles)")
    parser.add_argument("--players", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-every", type=int, default=10_000)
    parser.add_argument("--eval-games", type=int, default=100)
    parser.add_argument("--final-games", type=int, default=500)
    parser.add_argument("--out", default="runs/example")
    args = parser.parse_args()

    config = TrainConfig(
        args.env,
        out=args.out,
        timesteps=args.timesteps,
        opponents=args.opponents,
        options={} if args.players is None else {"num_players": args.players},
        seed=args.seed,
        eval_every=args.eval_every,
        eval_games=args.eval_games,
        final_games=args.final_games,
        trust_models=args.trust_models,
        # MaskablePPO settings; see tableenvs.training.job.DEFAULT_HYPERPARAMETERS for the rest
        hyperparameters={"learning_rate": 3e-4, "net_arch": [128, 128]},
    )
    result = train(config)  # progress bar, periodic evaluation, model, curve, final table
    print(f"model: {result.model_path}\ncurve: {result.curve_path}\nresults: {result.results_path}")
    if result.numpy_model_path is not None:  # model.npz: plays without torch, runs no code when loaded
        print(
            f"play it: tableenvs.policies.make_policy({str(result.numpy_model_path)!r}, tableenvs.make({args.env!r}))"
        )


if __name__ == "__main__":
    main()
