"""The cost of one decision by a numpy policy (tableenvs.policies.numpy_policy), against a bare numpy forward pass of
the same network and against SB3Policy (torch) on the same weights.

For each game: an untrained MaskablePPO with ``--hidden`` (default 128,128, ``tableenvs train``'s; Tanh, SB3's
default) is exported with :func:`tableenvs.policies.sb3_policy.export_sb3`, and ``--observations`` observations with
their masks are collected from random play. Timed per decision, in wall-clock microseconds (the best of ``--repeats``
passes over the observations; one torch thread):

* ``bare forward``: ``np.tanh(x @ W + b)`` layer by layer, the logits only, no mask (the floor);
* ``NumpyPolicy.act``: the deterministic masked argmax (what ``make_policy("trained", env)`` plays);
* ``sampled act``: ``deterministic=False`` (softmax over the legal actions, one draw from the caller's rng);
* ``SB3Policy.act``: the same weights through torch (needs the train extra; ``n/a`` without it).

``ratio`` is ``NumpyPolicy.act`` over the bare forward; the budget for one decision is at most 2x.

A second table times the **shipped models** (``make_policy("trained", env)``, at the options they were trained
for) the same way: the bare forward of their network on the observation with its derived inputs already appended
(and the model's input scale applied), the derived inputs alone (``input_features``, e.g. Llama Party's card values,
which run the heuristic's valuation of every legal card), and ``NumpyPolicy.act`` with both. Its ratios are reported
but not held to the budget: the derived inputs are part of what such a model reads, not overhead of the forward pass.

Run: ``python benchmarks/numpy_policy_speed.py [--game pilipili_v0 ...] [--observations 200] [--repeats 20]
[--hidden 128,128] [--budget 2.0] [--write-docs]``; ``--tiny`` is a quick check (40 observations, 3 repeats). The exit
code is 1 when a ratio exceeds ``--budget``. ``--write-docs`` rewrites the block of docs/benchmarks.md "Numpy policy
decisions" with the table.
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from common import replace_block

import tableenvs
from tableenvs.policies.input_features import input_features
from tableenvs.policies.numpy_policy import (
    NumpyPolicy,
    load_numpy_policy,
    random_numpy_policy,
    shipped_models,
    trained_model_path,
)

GAMES = {"pilipili_v0": 4, "llama_party_v0": 4, "rummikub_v0": 2}
DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
BEGIN = "<!-- numpy_policy_speed: begin (written by benchmarks/numpy_policy_speed.py --write-docs) -->"
END = "<!-- numpy_policy_speed: end -->"


def observations(name: str, players: int, count: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``count`` (observation, mask) pairs of random play."""
    env = tableenvs.make_raw(name, num_players=players)
    rng = np.random.default_rng(seed)
    seen: list[tuple[np.ndarray, np.ndarray]] = []
    game = 0
    while len(seen) < count:
        env.reset(seed=seed + game)
        game += 1
        while len(seen) < count and not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
            view = env.observe(env.agent_selection)
            seen.append((view["observation"].copy(), view["action_mask"].copy()))
            legal = np.flatnonzero(view["action_mask"])
            env.step(int(legal[rng.integers(legal.size)]))
    return seen


def per_call(fn, items, repeats: int) -> float:
    """Best mean wall time of ``fn(item)`` over ``repeats`` passes, in microseconds."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for item in items:
            fn(item)
        best = min(best, (time.perf_counter() - start) / len(items))
    return best * 1e6


def models(name: str, players: int, hidden: list[int], directory: Path):
    """``(numpy model path, SB3 model or None)`` with the same weights."""
    raw = tableenvs.make_raw(name, num_players=players)
    try:
        import torch
        from sb3_contrib import MaskablePPO

        from tableenvs.policies.sb3_policy import export_sb3
        from tableenvs.training.single_agent import SingleAgentEnv
    except ImportError:  # no train extra: random weights, numpy only
        return random_numpy_policy(directory / f"{name}.npz", raw, hidden=hidden), None
    torch.set_num_threads(1)
    env = SingleAgentEnv(name, num_players=players)
    model = MaskablePPO("MlpPolicy", env, policy_kwargs={"net_arch": hidden}, seed=0, device="cpu")
    return export_sb3(model, directory / f"{name}.npz", raw), model


def run(name: str, players: int, args: argparse.Namespace, directory: Path) -> dict:
    path, sb3_model = models(name, players, args.hidden, directory)
    model = load_numpy_policy(path)
    raw = tableenvs.make_raw(name, num_players=players)
    policy = NumpyPolicy(model, raw)
    sampled = NumpyPolicy(model, raw, deterministic=False)
    weights = [(np.ascontiguousarray(w), np.ascontiguousarray(b)) for w, b in model.weights]
    activate = np.tanh if model.activation == "tanh" else (lambda x: np.maximum(x, 0))
    last = len(weights) - 1

    def bare(item):
        x = item[0]
        for index, (weight, bias) in enumerate(weights):
            x = x @ weight + bias
            if index < last:
                x = activate(x)
        return x

    items = observations(name, players, args.observations, args.seed)
    rng = np.random.default_rng(args.seed)
    row = {
        "game": name,
        "players": players,
        "layers": "-".join(map(str, [model.observation_size, *model.hidden, model.num_actions])),
        "bare": per_call(bare, items, args.repeats),
        "act": per_call(lambda item: policy.act(item[0], item[1], rng), items, args.repeats),
        "sampled": per_call(lambda item: sampled.act(item[0], item[1], rng), items, args.repeats),
        "sb3": None,
    }
    if sb3_model is not None:
        from tableenvs.policies.sb3_policy import SB3Policy

        sb3 = SB3Policy(sb3_model, raw)
        row["sb3"] = per_call(lambda item: sb3.act(item[0], item[1], rng), items, args.repeats)
        same = sum(policy.act(o, m, rng) == sb3.act(o, m, rng) for o, m in items)
        row["same_actions"] = f"{same}/{len(items)}"
    row["ratio"] = row["act"] / row["bare"]
    return row


def run_shipped(name: str, args: argparse.Namespace) -> dict:
    """The row of ``name``'s shipped model: bare forward on the joined input, derived inputs, act."""
    model = load_numpy_policy(trained_model_path(name))
    raw = tableenvs.make_raw(name, **model.options)
    policy = NumpyPolicy(model, raw)
    features = input_features(model.input_features, raw) if model.input_features else None
    items = observations(name, raw.num_players, args.observations, args.seed)
    joined = [np.concatenate([o, features(o, m)]) if features else o for o, m in items]
    offset = 0.0 if model.input_offset is None else model.input_offset
    scale = 1.0 if model.input_scale is None else model.input_scale
    weights = [(np.asarray(w, np.float32), np.asarray(b, np.float32)) for w, b in model.weights]

    def bare(x):
        x = (x - offset) * scale
        for index, (weight, bias) in enumerate(weights):
            x = x @ weight + bias
            if index < len(weights) - 1:
                x = np.maximum(x, 0) if model.activation == "relu" else np.tanh(x)
        return x

    rng = np.random.default_rng(args.seed)
    row = {
        "game": name,
        "players": raw.num_players,
        "layers": "-".join(map(str, [model.observation_size, *model.hidden, model.num_actions])),
        "features_name": model.input_features or "none",
        "bare": per_call(bare, joined, args.repeats),
        "features": per_call(lambda item: features(item[0], item[1]), items, args.repeats) if features else 0.0,
        "act": per_call(lambda item: policy.act(item[0], item[1], rng), items, args.repeats),
    }
    row["ratio"] = row["act"] / row["bare"]
    row["net_ratio"] = (row["act"] - row["features"]) / row["bare"]
    return row


def shipped_table(rows: list[dict]) -> str:
    lines = [
        "| shipped model | players | layers | derived inputs | bare forward µs | derived inputs µs | "
        "NumpyPolicy.act µs | act ÷ forward | (act − derived inputs) ÷ forward |",
        "|---|---:|---|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['game']} | {row['players']} | {row['layers']} | `{row['features_name']}` | {row['bare']:.1f} | "
            f"{row['features']:.1f} | {row['act']:.1f} | {row['ratio']:.2f} | {row['net_ratio']:.2f} |"
        )
    return "\n".join(lines)


def table(rows: list[dict]) -> str:
    lines = [
        "| game | players | layers | bare forward µs | NumpyPolicy.act µs | sampled µs | SB3Policy.act µs | ratio |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        sb3 = "n/a" if row["sb3"] is None else f"{row['sb3']:.1f}"
        lines.append(
            f"| {row['game']} | {row['players']} | {row['layers']} | {row['bare']:.1f} | {row['act']:.1f} | "
            f"{row['sampled']:.1f} | {sb3} | {row['ratio']:.2f} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", action="append", choices=sorted(GAMES), help="a game (repeat; default all)")
    parser.add_argument("--observations", type=int, default=200, help="observations timed (default 200)")
    parser.add_argument("--repeats", type=int, default=20, help="passes over them; the best counts (default 20)")
    parser.add_argument("--hidden", default="128,128", help="hidden layer sizes (default 128,128)")
    parser.add_argument("--budget", type=float, default=2.0, help="largest allowed ratio (default 2.0)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tiny", action="store_true", help="a quick check: 40 observations, 3 repeats")
    parser.add_argument("--write-docs", action="store_true", help="rewrite docs/benchmarks.md's block")
    args = parser.parse_args()
    args.hidden = [int(size) for size in args.hidden.split(",") if size.strip()]
    if args.tiny:
        args.observations, args.repeats = min(args.observations, 40), min(args.repeats, 3)
    print(f"# Python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}; wall-clock µs")
    with tempfile.TemporaryDirectory() as directory:
        rows = [run(name, GAMES[name], args, Path(directory)) for name in args.game or GAMES]
    shipped = [run_shipped(name, args) for name in shipped_models() if name in (args.game or GAMES)]
    print(table(rows))
    print(shipped_table(shipped))
    for row in rows:
        if "same_actions" in row:
            print(
                f"{row['game']}: NumpyPolicy and SB3Policy chose the same action on {row['same_actions']} observations"
            )
    if args.write_docs:
        command = "python benchmarks/numpy_policy_speed.py" + (f" --hidden {','.join(map(str, args.hidden))}")
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        same = "; ".join(
            f"{row['game']}: same action as SB3Policy on {row['same_actions']}" for row in rows if "same_actions" in row
        )
        measured = (
            f"Measured {when} on this project's 2-core machine (Python {platform.python_version()}, numpy "
            f"{np.__version__}), wall-clock µs, best of {args.repeats} passes over {args.observations} observations: "
            f"`{command}`. {same}."
        )
        body = "\n\n".join([table(rows), shipped_table(shipped), measured])
        replace_block(DOCS, BEGIN, END, body)
        print(f"wrote {DOCS}")
    over = [row["game"] for row in rows if row["ratio"] > args.budget]
    if over:
        print(f"over the budget of {args.budget:g}x: {', '.join(over)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
