"""Search distillation from the shell: label games with the ``search`` policy, or label and fit a network to them.

Where you are: a tool for the search-distillation experiments of docs/training.md ("Search distillation"), never run
in CI; the library half is :mod:`tableenvs.training.distill`. The one training entry point for users is
``tableenvs train``.

    python benchmarks/distill_search.py label GAME OUT --games N [--workers W] [--players P] [--search SPEC]
    python benchmarks/distill_search.py fit GAME OUT --games N [--workers W] [--players P] [--epochs E]
        [--start MODEL.npz --lr LR]   (fine-tune that model towards the search's choices instead of a fresh net)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from tableenvs.training.distill import distill_search, label_games


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/distill_search.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["label", "fit"], help="label games only, or label and fit")
    parser.add_argument("game")
    parser.add_argument("out")
    parser.add_argument("--games", type=int, required=True)
    parser.add_argument("--players", type=int, default=None)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--search", default="search")
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--start", default=None, help="a numpy policy file the fit starts from (fine-tuning it)")
    parser.add_argument("--lr", type=float, default=1e-3, help="the fit's learning rate")
    args = parser.parse_args(argv)
    options = {} if args.players is None else {"num_players": args.players}
    try:
        if args.command == "label":
            label_games(
                args.game, options, games=args.games, out_dir=args.out, seed=args.seed, search_spec=args.search,
                workers=args.workers,
            )  # fmt: skip
        else:
            distill_search(
                args.game, args.out, options=options, games=args.games, workers=args.workers, seed=args.seed,
                search_spec=args.search, epochs=args.epochs, start_model=args.start, lr=args.lr,
            )  # fmt: skip
    except ValueError as error:  # a bad argument (games, workers, --start, the game's options): one line
        print(f"distill_search: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
