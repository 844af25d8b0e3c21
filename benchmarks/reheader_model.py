"""A numpy policy's weights in a model file made for another player count of its game (default options otherwise).

A candidate scorer (``candidates`` in the header, e.g. Rummikub's ``rummikub_holding_v1``) reads the same features at
every player count, so its weights can be played at another count; ``trained`` plays a file only at the options its
header names, so this writes them under a header for ``PLAYERS`` players (float16 weights, the header's ``meta`` kept
and ``made_from`` added). Whether they are any good there is for ``benchmarks/field.py`` to say.

Run: ``python benchmarks/reheader_model.py tableenvs/models/rummikub_v0.npz 2 tableenvs/models/rummikub_v0-2p.npz``
"""

from __future__ import annotations

import argparse

import numpy as np

import tableenvs
from tableenvs.policies.model_file import load_numpy_policy, save_for_env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="the numpy policy file whose weights are taken")
    parser.add_argument("players", type=int, help="the player count of the new header")
    parser.add_argument("out", help="the file to write")
    args = parser.parse_args()
    model = load_numpy_policy(args.model)
    env = tableenvs.make_raw(model.game, num_players=args.players)
    meta = {key: value for key, value in model.meta.items() if key != "options"}
    meta["made_from"] = f"{args.model.rsplit('/', 1)[-1]}: its weights, for {args.players} players"
    weights = [(w.astype(np.float32), b.astype(np.float32)) for w, b in model.weights]
    path = save_for_env(
        args.out,
        env,
        weights=weights,
        activation=model.activation,
        meta=meta,
        dtype="float16",
        candidates=model.candidates,
        input_features=model.input_features,
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
