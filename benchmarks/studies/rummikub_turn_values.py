"""Rummikub: learn which whole turn to play from Monte-Carlo returns, then clone that choice into a numpy model.
Written into docs/lab/training.md; the shipped Rummikub model came from this script when it is shipped.

Where you are: a long benchmark, never run in CI. The search over whole turns beats the heuristic at 2 players but
not at 4 (docs/agents.md), so its labels are no teacher at the default 4 players. Here the candidate turns are the
same (:class:`tableenvs.rummikub.features.TurnPlans`: the heuristic's play, the other objective's, the one keeping
the jokers, and a draw), and their values are learned from whole games, Deep Monte-Carlo style:

1. **Returns.** ``--games`` games of 4 :class:`TurnChooser` seats: at the start of each turn with more than one
   distinct candidate, a seat picks a uniformly random candidate with probability ``--eps``, else the heuristic's
   (``round 1``) or the one of highest learned value (later rounds); then it plays that turn to its end. Each such
   decision is kept with the seat's observation, the plays' summaries, which candidates existed, the one chosen, and
   the seat's reward for the whole game (the target). Games are written in chunks (a rerun skips finished chunks).
2. **Values.** A ReLU MLP (observation + summaries -> 4 values) fitted by least squares on the chosen candidate's
   output (rewards / 100), validation on held-out games.
3. **Check.** The greedy chooser against the heuristic head to head (half the seats each, every seating, duplicate
   deals, :func:`tableenvs.evaluation.evaluate`).
4. **Clone.** Games of greedy choosers at every seat, each decision with a choice labelled; a ReLU MLP on the
   observation + ``rummikub_turn_plans_v1`` fitted to the choices and exported with its header naming the features
   (played by ``NumpyPolicy``, no torch); then the same head-to-head check.

    python benchmarks/studies/rummikub_turn_values.py --out runs/rk-values [--games 20000] [--eps 0.3]
        [--check-games 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py, search_vs_heuristic.py

import numpy as np
from common import finished_on_this_machine, markers, write_block
from search_vs_heuristic import cells, versus_heuristic

import tableenvs
from tableenvs.evaluation import evaluate
from tableenvs.paths import atomic_output
from tableenvs.policies import play_game
from tableenvs.policies.input_features import input_features
from tableenvs.rummikub.agents import HeuristicPolicy
from tableenvs.rummikub.encoder import DRAW, LAYOUT, NUM_ACTIONS, OBSERVATION_SIZE
from tableenvs.rummikub.features import PLAY_BLOCK, TurnPlans
from tableenvs.training import distill

GAME = "rummikub_v0"
PLAYERS = 4
CANDIDATES = ("heuristic's play", "other objective's play", "play keeping the jokers", "draw")
FEATURES = "rummikub_turn_plans_v1"  # the clone's derived inputs
CHUNK = 100  # games per file
FIELDS = ("x", "available", "choice", "target", "game")  # what a file of returns holds per decision


class TurnChooser:
    """Chooses a whole turn among the candidates at the start of each turn, then plays it; see the module docstring.
    ``weights``: the value network as (in x out, out) float32 pairs (``None``: the heuristic's turn); ``eps``: the
    probability of a uniformly random candidate. ``record`` collects ``(seat input, available, chosen)`` of each
    decision with a choice."""

    name = "turn chooser"

    def __init__(self, env: Any, weights: list | None = None, eps: float = 0.0, record: list | None = None) -> None:
        self.features = TurnPlans(env)
        self.weights = weights
        self.eps = eps
        self.record = record
        self.choice = 3

    @staticmethod
    def inputs(observation: np.ndarray, values: np.ndarray) -> np.ndarray:
        """The value network's input: the observation and each play's four summary values."""
        summaries = [values[slot * PLAY_BLOCK + NUM_ACTIONS : (slot + 1) * PLAY_BLOCK] for slot in range(3)]
        return np.concatenate([observation, *summaries]).astype(np.float32)

    def available(self, action_mask: np.ndarray) -> np.ndarray:
        """Which candidates are distinct turns here (a play repeating an earlier one is left out)."""
        plays = self.features.plays
        out = np.zeros(4, bool)
        for slot, played in enumerate(plays):
            out[slot] = played is not None and not any(
                earlier is not None and np.array_equal(played, earlier) for earlier in plays[:slot]
            )
        out[3] = bool(action_mask[DRAW])
        return out

    def values(self, x: np.ndarray) -> np.ndarray:
        assert self.weights is not None
        for i, (w, b) in enumerate(self.weights):
            x = x @ w + b
            if i < len(self.weights) - 1:
                x = np.maximum(x, 0.0)
        return x

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        values = self.features(observation, action_mask)
        if not HeuristicPolicy.turn_under_way(observation):  # the start of a turn: choose one
            available = self.available(action_mask)
            if available.sum() > 1:
                x = self.inputs(observation, values)
                options = np.flatnonzero(available)
                if rng.random() < self.eps:
                    choice = int(rng.choice(options))
                elif self.weights is None:
                    choice = int(options[0])
                else:
                    choice = int(options[np.argmax(self.values(x)[options])])
                if self.record is not None:
                    self.record.append((x, available, choice))
            else:
                choice = int(np.flatnonzero(available)[0]) if available.any() else 3
            self.choice = choice
        if self.choice == 3:
            return DRAW if action_mask[DRAW] else int(np.flatnonzero(action_mask)[-1])
        hot = np.flatnonzero(values[self.choice * PLAY_BLOCK : self.choice * PLAY_BLOCK + NUM_ACTIONS])
        if hot.size:
            return int(hot[0])
        return self.features.heuristic.act(observation, action_mask, rng)  # not reached by a legal plan


def _seat_keeper(record: list, seats: list[int]) -> Any:
    """A ``play_game`` step hook that gives each new entry of ``record`` (appended by the acting seat's chooser just
    before the hook runs) that seat's index."""

    def on_step(env: Any, agent: str, observation: Any, action: int) -> None:
        while len(seats) < len(record):
            seats.append(env.agent_name_mapping[agent])

    return on_step


def collect_chunk(job: tuple[str, int, int, float, list | None]) -> int:
    """Play games ``first .. first + CHUNK - 1`` (deal seed = index) and write their decisions to ``path``."""
    path, first, seed, eps, weights = job
    if Path(path).exists():
        return 0
    env = tableenvs.make_raw(GAME, num_players=PLAYERS)
    rows: dict[str, list] = {name: [] for name in FIELDS}
    for index in range(first, first + CHUNK):
        record: list = []
        seats = [TurnChooser(env, weights, eps, record) for _ in range(PLAYERS)]
        seat_of_record: list[int] = []  # the seat of each decision in record, filled as the game is played
        on_step = _seat_keeper(record, seat_of_record)
        totals, _ = play_game(env, seats, seed=seed + index, rng=np.random.default_rng([seed, index]), on_step=on_step)
        for (x, available, choice), seat in zip(record, seat_of_record, strict=True):
            rows["x"].append(x)
            rows["available"].append(available)
            rows["choice"].append(choice)
            rows["target"].append(totals[seat])
            rows["game"].append(index)
    arrays = {name: np.asarray(values) for name, values in rows.items()}
    arrays["x"] = arrays["x"].astype(np.float16)
    with atomic_output(path, "wb") as out:  # a fault never leaves half a file
        np.savez_compressed(out, **arrays)
    return len(rows["choice"])


def collect(out: Path, games: int, seed: int, eps: float, weights: list | None, workers: int) -> dict[str, np.ndarray]:
    out.mkdir(parents=True, exist_ok=True)
    jobs = [(str(out / f"chunk-{first:07d}.npz"), first, seed, eps, weights) for first in range(0, games, CHUNK)]
    began = time.perf_counter()
    with ProcessPoolExecutor(workers) as pool:
        for done, _ in enumerate(pool.map(collect_chunk, jobs), start=1):
            if done % max(1, len(jobs) // 10) == 0:
                print(f"  {done * CHUNK}/{games} games, {time.perf_counter() - began:.0f} s", flush=True)
    parts = [np.load(job[0]) for job in jobs]
    return {name: np.concatenate([part[name] for part in parts]) for name in FIELDS}


def fit_values(data: dict[str, np.ndarray], epochs: int, seed: int = 0) -> tuple[list, list[dict]]:
    """Least-squares fit of the chosen candidate's value (reward / 100); returns the weights of the epoch of least
    validation loss and the history."""
    import torch

    torch.set_num_threads(2)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    deals = np.unique(data["game"])
    held = rng.choice(deals, size=max(1, len(deals) // 10), replace=False)
    is_val = np.isin(data["game"], held)
    x = torch.from_numpy(data["x"].astype(np.float32))
    choice = torch.from_numpy(data["choice"].astype(np.int64))
    target = torch.from_numpy((data["target"] / 100.0).astype(np.float32))
    net = torch.nn.Sequential(
        torch.nn.Linear(x.shape[1], 256), torch.nn.ReLU(), torch.nn.Linear(256, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 4),
    )  # fmt: skip
    optimiser = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=1e-4)
    train_rows = np.flatnonzero(~is_val)
    val_rows = torch.from_numpy(np.flatnonzero(is_val))
    best: tuple[float, list] | None = None
    history = []
    for epoch in range(1, epochs + 1):
        net.train()
        for first in range(0, len(train_rows), 2048):
            rows = torch.from_numpy(train_rows[first : first + 2048])
            predicted = net(x[rows]).gather(1, choice[rows, None])[:, 0]
            loss = torch.mean((predicted - target[rows]) ** 2)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        rng.shuffle(train_rows)
        net.eval()
        with torch.no_grad():
            predicted = net(x[val_rows]).gather(1, choice[val_rows, None])[:, 0]
            val = float(torch.mean((predicted - target[val_rows]) ** 2))
            baseline = float(torch.var(target[val_rows]))
        history.append({"epoch": epoch, "val_mse": val, "val_var": baseline})
        print(f"  values epoch {epoch}/{epochs}: validation MSE {val:.4f} (variance {baseline:.4f})", flush=True)
        if best is None or val < best[0]:
            linear = [m for m in net if isinstance(m, torch.nn.Linear)]
            best = (val, [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy()) for m in linear])
    assert best is not None
    return best[1], history


def head_to_head(policy: Any, games: int) -> dict:
    result = evaluate(GAME, [policy, "heuristic"], games, num_players=PLAYERS, seed=0, progress=False)
    row = {**versus_heuristic(result.paired[0])[0], **versus_heuristic(result.paired[0])[1]}
    return {**row, "score_name": result.score_name, "higher_is_better": result.higher_is_better, "games": result.games}


def label_chunk(job: tuple[str, int, int, list]) -> int:
    """Games ``first .. first + CHUNK - 1`` of greedy choosers at every seat: each decision with a choice, as
    :func:`tableenvs.training.distill.read_shards` rows (one-hot targets of the action played)."""
    path, first, seed, weights = job
    if Path(path).exists():
        return 0
    env = tableenvs.make_raw(GAME, num_players=PLAYERS)
    rows: dict[str, list] = {name: [] for name in distill.FIELDS}

    def on_step(env: Any, agent: str, observation: Any, action: int) -> None:
        mask = observation["action_mask"]
        if mask.sum() > 1:
            rows["observation"].append(np.asarray(observation["observation"], np.float32))
            rows["mask"].append(np.asarray(mask, np.int8))
            rows["action"].append(action)
            rows["game"].append(index)

    for index in range(first, first + CHUNK):
        seats = [TurnChooser(env, weights) for _ in range(PLAYERS)]
        play_game(env, seats, seed=seed + index, rng=np.random.default_rng([seed, index]), on_step=on_step)
    arrays = {name: np.asarray(rows[name]) for name in ("observation", "mask", "action", "game")}
    arrays["target"] = np.eye(NUM_ACTIONS, dtype=np.float32)[arrays["action"]]
    arrays["value"] = np.zeros_like(arrays["target"])
    with atomic_output(path, "wb") as out:  # a fault never leaves half a file
        np.savez_compressed(out, **arrays)
    return len(rows["action"])


def clone(folder: Path, weights: list, games: int, seed: int, epochs: int, workers: int) -> tuple[Path, float, int]:
    """Step 4: label ``games`` games of greedy choosers, fit a numpy model on observation + turn plans, export it
    naming its features; returns its path, its held-out agreement and the number of labels."""
    path = folder / "clone.npz"
    labels = folder / "labels"
    labels.mkdir(parents=True, exist_ok=True)
    jobs = [(str(labels / f"game-{first:06d}.npz"), first, seed, weights) for first in range(0, games, CHUNK)]
    with ProcessPoolExecutor(workers) as pool:
        list(pool.map(label_chunk, jobs))
    data = distill.read_shards(labels)
    if not path.exists():
        features = input_features(FEATURES, tableenvs.make_raw(GAME, num_players=PLAYERS))
        data = distill.with_features(data, features)
        result = distill.fit(data, hidden=(256, 256), epochs=epochs, batch=1024, seed=0, threads=workers)
        meta = {"experiment": "rummikub_turn_values: clone of the greedy turn chooser", "labels": len(data["action"])}
        distill.export(result, path, GAME, {"num_players": PLAYERS}, meta, input_features=FEATURES)
        (folder / "clone.json").write_text(json.dumps({"meta": meta, "history": result.history}, indent=2) + "\n")
    history = json.loads((folder / "clone.json").read_text())["history"]
    return path, min(history, key=lambda row: row["val_loss"])["val_agree"], len(data["action"])


def collect_saved(folder: Path) -> dict[str, np.ndarray]:
    """The decisions of every file of returns under ``folder``."""
    parts = [np.load(path) for path in sorted(folder.glob("chunk-*[0-9].npz"))]
    return {name: np.concatenate([part[name] for part in parts]) for name in FIELDS}


def draw_against_play(data: dict[str, np.ndarray]) -> list[str]:
    """Markdown lines: how often each candidate was a distinct turn, and the mean game reward after a draw minus after
    the heuristic's play, at decisions where both were open and one of them was taken, by opened flag and play size
    (95% intervals by the normal approximation; bins with fewer than 100 draws left out)."""
    available, choice, target = data["available"], data["choice"], data["target"].astype(np.float64)
    x = data["x"].astype(np.float32)
    opened = x[:, LAYOUT.OPENED] > 0.5
    tiles = np.rint(x[:, OBSERVATION_SIZE + 1] * 14)  # the heuristic's play's tiles (its summary, see TurnChooser)
    both = available[:, 0] & available[:, 3] & np.isin(choice, [0, 3])
    counts = ", ".join(f"{name} {int(available[:, k].sum()):,}" for k, name in enumerate(CANDIDATES))
    lines = [
        f"Decisions with a choice: {len(choice):,}; a distinct candidate at them: {counts}.",
        "",
        "| opened | heuristic's play, tiles | draws / plays taken | game reward after a draw − after the play [95%] |",
        "|---|---|---|---|",
    ]
    for is_open in (False, True):
        for low, high in ((1, 3), (3, 4), (4, 6), (6, 99)):
            pick = both & (opened == is_open) & (tiles >= low) & (tiles < high)
            draws, plays = target[pick & (choice == 3)], target[pick & (choice == 0)]
            if len(draws) < 100:
                continue
            diff = draws.mean() - plays.mean()
            half = 1.96 * np.sqrt(draws.var() / len(draws) + plays.var() / len(plays))
            size = f"{low}+" if high == 99 else str(low) if high == low + 1 else f"{low}–{high - 1}"
            lines.append(
                f"| {'yes' if is_open else 'no'} | {size} | {len(draws):,} / {len(plays):,} | "
                f"{diff:+.2f} [{diff - half:+.2f}, {diff + half:+.2f}] |"
            )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="run directory (a rerun continues in it)")
    parser.add_argument("--games", type=int, default=20000, help="games of returns per round")
    parser.add_argument("--rounds", type=int, default=1, help="rounds of returns and values (later: greedy + eps)")
    parser.add_argument("--eps", type=float, default=0.3, help="probability of a random candidate turn")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--check-games", type=int, default=2000, help="head-to-head games against the heuristic")
    parser.add_argument("--clone-games", type=int, default=0, help="games of labels for the clone (0: no clone)")
    parser.add_argument("--clone-epochs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=2_000_000, help="first deal's seed (apart from the checks')")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--block", default="rummikub-turn-values", help="the docs/lab/training.md block to write")
    parser.add_argument("--no-write", action="store_true", help="print the block, leave docs/lab/training.md alone")
    args = parser.parse_args()
    began, load = time.perf_counter(), os.getloadavg()[0]
    weights: list | None = None
    rounds = []
    for round_index in range(1, args.rounds + 1):
        folder = args.out / f"round-{round_index}"
        values_path = folder / "values.npz"
        if values_path.exists():
            with np.load(values_path) as saved:
                weights = [(saved[f"w{i}"], saved[f"b{i}"]) for i in range(len(saved.files) // 2)]
            rounds.append(json.loads((folder / "round.json").read_text()))
            continue
        print(f"round {round_index}: returns of {args.games} games", flush=True)
        seed = args.seed + 1_000_000 * round_index
        data = collect(folder / "returns", args.games, seed, args.eps, weights, args.workers)
        chosen = np.bincount(data["choice"], minlength=4)
        print(f"  {len(data['choice'])} decisions; chosen {chosen.tolist()}", flush=True)
        weights, history = fit_values(data, args.epochs)
        arrays = {f"w{i}": w for i, (w, _) in enumerate(weights)} | {f"b{i}": b for i, (_, b) in enumerate(weights)}
        np.savez(values_path, **arrays)
        policy = TurnChooser(tableenvs.make_raw(GAME, num_players=PLAYERS), weights)
        row = head_to_head(policy, args.check_games)
        record = {"round": round_index, "decisions": int(len(data["choice"])), "chosen": chosen.tolist()}
        record |= {"history": history, "row": row}
        (folder / "round.json").write_text(json.dumps(record, indent=2) + "\n")
        rounds.append(record)
        print(f"  greedy chooser − heuristic: {cells({**row})}", flush=True)
    lines = [
        f"Run by `python benchmarks/studies/rummikub_turn_values.py --out {args.out} --games {args.games} --rounds "
        f"{args.rounds} --eps {args.eps:g} --epochs {args.epochs} --check-games {args.check_games} --seed "
        f"{args.seed} --clone-games {args.clone_games} --clone-epochs {args.clone_epochs}`, "
        f"{finished_on_this_machine(load)}, {(time.perf_counter() - began) / 60:.0f} min (a rerun in the same "
        "directory skips the finished steps).",
        "",
        "| round | decisions | chosen (heuristic's, other objective's, keep jokers, draw) | best validation MSE "
        "(variance) | greedy chooser − heuristic, points [95%] | win rate [95%] |",
        "|---|---|---|---|---|---|",
    ]
    for record in rounds:
        best = min(record["history"], key=lambda h: h["val_mse"])
        score, win = cells(record["row"])
        lines.append(
            f"| {record['round']} | {record['decisions']:,} | {', '.join(f'{c:,}' for c in record['chosen'])} | "
            f"{best['val_mse']:.4f} ({best['val_var']:.4f}) | {score} | {win} |"
        )
    lines += ["", *draw_against_play(collect_saved(args.out / f"round-{args.rounds}" / "returns"))]
    if args.clone_games > 0:
        assert weights is not None
        path, agree, labels = clone(
            args.out / "clone", weights, args.clone_games, args.seed, args.clone_epochs, args.workers
        )
        result_path = args.out / "clone" / "row.json"
        if not result_path.exists():
            result_path.write_text(json.dumps(head_to_head(str(path), args.check_games), indent=2) + "\n")
        score, win = cells(json.loads(result_path.read_text()))
        lines += [
            "",
            f"The clone of the last round's greedy chooser (`--clone-games {args.clone_games} --clone-epochs "
            f"{args.clone_epochs}`, observation + `{FEATURES}`) agrees with it on {agree:.1%} of held-out decisions "
            f"({labels:,} labels).",
            "",
            "| model − heuristic, 4 players, duplicate deals | games | points [95%] | win rate [95%] |",
            "|---|---|---|---|",
            f"| clone | {args.check_games:,} | {score} | {win} |",
        ]
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        write_block(*markers(args.block, "studies/rummikub_turn_values.py"), text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
