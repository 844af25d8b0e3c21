"""Advantage iteration: a model improved towards the actions that its own play, replayed from the true state, shows
to be worth more.

Where you are: a training recipe beside :mod:`tableenvs.training.expert_iteration` (a model fine-tuned towards a
search's choices) and :mod:`tableenvs.training.distill` (whose export this reuses). Both improve a model by one step
of lookahead over its own play; they differ in where the lookahead's value comes from:

1. :func:`label_advantages`: games of the model against itself (greedy, every seat, the AEC env). At every decision
   with more than one legal action, each legal action is played in its own copy of the **true** state (the acting
   seat's hidden cards and the others' alike, and the game's generator: the copies share their future draws, so
   they differ only by the action), the model playing every seat after it in the game's batched engine
   (``tableenvs.vector``: ``load_env`` and the model as a batched greedy player), until the end of the scoring
   period (the first step that pays any seat a nonzero reward, or the game's end), as the planning best response of
   :mod:`tableenvs.training.search_response` plays its rollouts. The acting seat's reward over that span is the
   action's value. The true state is training-time knowledge only: the network is fitted to the seat's observation
   and plays from it alone; over many games a value fitted to the observation is the value averaged over the
   states that observation arises in, as the model's own play makes them (a search samples them uniformly instead).
2. :func:`fit_advantages`: the model's network fine-tuned so that its outputs over the legal actions, less their
   mean, match the values less theirs (masked mean squared error, reward units), with ``bonus`` added to the value
   of the model's own choice: the network departs from the model only where the fitted advantage of another action
   exceeds ``bonus`` (the role ``z`` plays for the search).
3. :func:`advantage_step` writes the fitted network as a numpy policy file; :func:`advantage_iteration` repeats the
   step, each from the model of the step before.

docs/training.md, "Advantage iteration", has what it measured. Units: values and ``bonus`` are reward units (the
game's default reward); games count whole games; times are seconds.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tableenvs.core.registry import make_raw
from tableenvs.core.validation import check_at_least, check_choice
from tableenvs.paths import atomic_output

__all__ = ["advantage_iteration", "advantage_step", "fit_advantages", "label_advantages", "read_advantages"]

#: What one shard row holds, by array name: the acting seat's observation (float32) and mask, each legal action's
#: value (NaN where illegal), the mean of the other seats' rewards over the same span after each legal action
#: (``others``, NaN where illegal), the model's choice, the value of that choice in the game actually played (the
#: same span: a check that the copies replay the game), and the deal seed of the game.
FIELDS = ("observation", "mask", "value", "others", "action", "played", "game")

#: What :func:`fit_advantages` fits an action's worth to: ``"score"``, the acting seat's reward over the span (what
#: the game's reward pays and the planning best response maximises); ``"margin"``, that reward less the mean of the
#: other seats' (what the evaluation's "trained − heuristic" compares: an action that gives a point to an opponent
#: costs a point at two players, a third of one at four).
OBJECTIVES = ("score", "margin")


class TrueStateRollouts:
    """Each legal action of queued decisions played out in copies of the true state, a batch of ``rows`` copies at
    a time, the model choosing for every seat in one call a step."""

    def __init__(self, env: Any, options: dict[str, Any], model: str | Path, rows: int):
        import tableenvs.vector

        self.rows = rows
        self.games: Any = tableenvs.vector.make(env.metadata["name"], rows, **options, trusted=True)
        self.games.reset(seed=0)  # every row is replaced by a loaded state before it is stepped
        self.player = tableenvs.vector.batched_policy(str(model), self.games, env=env)
        self.num_actions = env.action_space(env.possible_agents[0]).n
        self.queued: list[tuple[Any, int, list[int]]] = []
        self.used = 0

    def fits(self, legal: list[int]) -> bool:
        return self.used + len(legal) <= self.rows

    def add(self, state: Any, seat: int, legal: list[int]) -> None:
        """Queue a decision: ``state`` an AEC env at it (kept, not copied: pass a clone), ``seat`` the acting seat."""
        if not self.fits(legal):
            raise ValueError(f"TrueStateRollouts: {self.used} + {len(legal)} rows exceed the batch's {self.rows}")
        self.queued.append((state, seat, legal))
        self.used += len(legal)

    def values(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """The queued decisions' values and the others' mean rewards (each ``(num_actions,)`` float32, NaN where
        illegal), in order; empties the queue."""
        rows, games = self.rows, self.games
        actions = np.zeros(rows, np.int64)
        seats = np.zeros(rows, np.int64)
        at = 0
        for state, seat, legal in self.queued:
            games.load_env(range(at, at + len(legal)), state)
            actions[at : at + len(legal)] = legal
            seats[at : at + len(legal)] = seat
            at += len(legal)
        if at < rows:  # the rest of the batch replays the first decision's first action; never read
            state, _, legal = self.queued[0]
            games.load_env(range(at, rows), state)
            actions[at:] = legal[0]
        value = np.zeros(rows, np.float64)
        others = np.zeros(rows, np.float64)
        done = np.zeros(rows, np.bool_)
        envs = np.arange(rows, dtype=np.int64)
        every = np.arange(rows)
        while True:
            obs, mask, rewards, terminated, truncated = games.step(actions)
            own = rewards[every, seats]
            value += np.where(done, 0.0, own)
            others += np.where(done, 0.0, (rewards.sum(axis=1) - own) / max(1, rewards.shape[1] - 1))
            done |= rewards.any(axis=1) | terminated | truncated
            if done[:at].all():
                break
            actions = self.player.act(obs, mask, envs)
        out = []
        at = 0
        for _, _, legal in self.queued:
            row = np.full(self.num_actions, np.nan, np.float32)
            row[legal] = value[at : at + len(legal)]
            rest = np.full(self.num_actions, np.nan, np.float32)
            rest[legal] = others[at : at + len(legal)]
            out.append((row, rest))
            at += len(legal)
        self.queued, self.used = [], 0
        return out


def _label_block(game: str, options: dict[str, Any], model: str, deals: list[int], rows: int) -> dict[str, np.ndarray]:
    """The labelled decisions of the games dealt by ``deals``, the model greedy in every seat."""
    from tableenvs.policies.numpy_policy import NumpyPolicy

    env = make_raw(game, **options)
    policy = NumpyPolicy(model, env)
    rollouts = TrueStateRollouts(env, options, model, rows)
    observations: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    actions: list[int] = []
    seats: list[int] = []
    deal_of: list[int] = []
    values: list[tuple[np.ndarray, np.ndarray]] = []
    played: list[float] = []
    rng = np.random.default_rng(0)  # a greedy policy draws nothing from it
    for deal in deals:
        env.reset(seed=deal)
        open_rows: list[int] = []  # decisions whose scoring period has not ended
        for agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            mask = observation["action_mask"]
            legal = np.flatnonzero(mask).tolist()
            action = policy.act(observation["observation"], mask, rng)
            if len(legal) > 1:
                if not rollouts.fits(legal):
                    values.extend(rollouts.values())
                seat = env.agent_name_mapping[agent]
                rollouts.add(env.clone(), seat, legal)
                observations.append(np.asarray(observation["observation"], np.float32))
                masks.append(np.asarray(mask, np.int8))
                actions.append(action)
                seats.append(seat)
                deal_of.append(deal)
                played.append(0.0)
                open_rows.append(len(played) - 1)
            env.step(action)
            rewards = [float(env.rewards.get(name, 0.0)) for name in env.possible_agents]
            for row in open_rows:
                played[row] += rewards[seats[row]]
            ended = any(env.terminations.values()) or any(env.truncations.values())
            if any(rewards) or ended:
                open_rows = []
    if rollouts.queued:
        values.extend(rollouts.values())
    count = len(actions)
    num_actions = rollouts.num_actions
    return {
        "observation": np.asarray(observations, np.float32).reshape(count, -1),
        "mask": np.asarray(masks, np.int8).reshape(count, num_actions),
        "value": np.asarray([own for own, _ in values], np.float32).reshape(count, num_actions),
        "others": np.asarray([rest for _, rest in values], np.float32).reshape(count, num_actions),
        "action": np.asarray(actions, np.int16),
        "played": np.asarray(played, np.float32),
        "game": np.asarray(deal_of, np.int64),
    }


@dataclass(frozen=True)
class _Block:
    """One worker's share: the games dealt by ``seed + first .. seed + first + count - 1``, one shard file."""

    game: str
    options: dict[str, Any]
    model: str
    first: int
    count: int
    seed: int
    rows: int
    out_dir: str


def _run_block(block: _Block) -> int:
    """Label ``block``'s games into one shard (written atomically); returns the labels made (0 if it was there)."""
    path = Path(block.out_dir) / f"games-{block.first:06d}.npz"
    if path.exists():  # done by an earlier, interrupted run
        return 0
    deals = [block.seed + index for index in range(block.first, block.first + block.count)]
    arrays: dict[str, Any] = _label_block(block.game, block.options, block.model, deals, block.rows)
    with atomic_output(path, "wb") as out:
        np.savez_compressed(out, **arrays)
    return len(arrays["action"])


def check_model(game: str, options: dict[str, Any], model: str | Path) -> None:
    """A one-line ``ValueError`` unless ``model`` is a numpy policy file of a network over the observation that fits
    ``game`` with ``options`` (its player count among them)."""
    from tableenvs.policies.numpy_policy import NumpyPolicy, load_numpy_policy

    env = make_raw(game, **options)
    try:
        if load_numpy_policy(model).candidates:
            raise ValueError(f"model {str(model)!r}: a candidate-scoring model; advantage labels need a network "
                             "over the observation")  # fmt: skip
        NumpyPolicy(model, env)
    finally:
        env.close()


def label_advantages(
    game: str,
    options: dict[str, Any],
    *,
    model: str | Path,
    games: int,
    out_dir: str | Path,
    seed: int = 0,
    workers: int = 2,
    block: int = 25,
    rows: int = 512,
    say: Any = print,
) -> int:
    """Label ``games`` games of ``model`` (a numpy policy file over the observation, its derived inputs computed as
    it plays) against itself into ``out_dir``, in shards of ``block`` games (resumable: shards already there are
    kept); game ``i`` is dealt by seed ``seed + i``. ``rows``: copies stepped together in the batched engine.
    Returns the labels made by this call."""
    check_at_least("games", games, 1)
    check_at_least("workers", workers, 1)
    check_at_least("block", block, 1)
    check_model(game, options, model)  # before any file
    from tableenvs.training.distill import in_workers

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "labels.json").write_text(json.dumps({"game": game, "options": options, "model": str(model),
                                                 "seed": seed, "games": games}, indent=2) + "\n")  # fmt: skip
    jobs = [
        _Block(game, options, str(model), first, min(block, games - first), seed, rows, str(out))
        for first in range(0, games, block)
    ]
    start = time.perf_counter()
    made = done = 0
    with in_workers(_run_block, jobs, workers) as results:
        for labels in results:
            made += labels
            done += 1
            if done % max(1, len(jobs) // 10) == 0 or done == len(jobs):
                say(f"labelled {min(done * block, games)}/{games} games, {made} new labels, "
                    f"{time.perf_counter() - start:.0f} s")  # fmt: skip
    return made


def read_advantages(directory: str | Path) -> dict[str, np.ndarray]:
    """Every shard under ``directory`` (:func:`label_advantages`), concatenated."""
    paths = sorted(Path(directory).glob("games-*[0-9].npz"))
    if not paths:
        raise FileNotFoundError(f"no advantage labels (games-*.npz) under {str(directory)!r}")
    parts = [np.load(path) for path in paths]
    return {name: np.concatenate([part[name] for part in parts]) for name in FIELDS}


def fit_advantages(
    data: dict[str, np.ndarray],
    start: Any,
    *,
    bonus: float = 3.0,
    objective: str = "score",
    epochs: int = 6,
    lr: float = 3e-4,
    batch: int = 1024,
    weight_decay: float = 1e-4,
    validation: float = 0.1,
    seed: int = 0,
    threads: int = 2,
    players: int = 1,
    say: Any = print,
) -> Any:
    """``start`` (a :class:`~tableenvs.policies.model_file.NumpyModel`, a ReLU network; ``data``'s observations with
    its derived inputs appended if it reads any) fine-tuned so that its outputs over each row's legal actions, less
    their mean, match the values less theirs, with ``bonus`` added to the value of the row's ``action`` (masked mean
    squared error; AdamW, cosine schedule). ``objective`` (:data:`OBJECTIVES`): the value is the seat's own reward
    (``"score"``) or that less the others' mean (``"margin"``). A ``validation`` share of the deals is held out;
    each epoch reports its loss, how often the network's choice is ``action``, and its **gain**: the held-out rows'
    value (in the objective's terms) of the network's choice less the value of ``action``, a decision, and summed
    per seat and game (``players`` seats a game): what playing the network at every decision of those games, one
    decision at a time, is worth against the model's play. The epoch of largest validation gain is kept (epoch 0,
    the start, gains 0). Returns a :class:`~tableenvs.training.distill.FitResult`."""
    import torch

    from tableenvs.training.distill import FitResult, layer_weights, relu_network
    from tableenvs.training.model_start import untrainable

    check_choice("objective", objective, OBJECTIVES)
    why = untrainable(start, derived_inputs=True)
    if why is not None:
        raise ValueError(f"{start.name}: the fit starts only from a ReLU network (this one: {why})")
    shapes = (data["observation"].shape[1], data["mask"].shape[1])
    if (start.observation_size, start.num_actions) != shapes:
        raise ValueError(f"{start.name}: {start.observation_size} inputs and {start.num_actions} actions, "
                         f"the labels' {shapes}")  # fmt: skip
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    legal = data["mask"] > 0
    count = legal.sum(axis=1, keepdims=True)
    worth = data["value"] if objective == "score" else data["value"] - data["others"]
    value = np.where(legal, worth, 0.0).astype(np.float32)
    action = data["action"].astype(np.int64)
    target = np.where(legal, value - value.sum(axis=1, keepdims=True) / count, 0.0).astype(np.float32)
    target[np.arange(len(action)), action] += bonus
    deals = np.unique(data["game"])
    held = rng.choice(deals, size=max(1, int(len(deals) * validation)), replace=False)
    is_val = np.isin(data["game"], held)
    scale = np.asarray(np.ones(start.observation_size) if start.input_scale is None else start.input_scale, np.float32)
    x = torch.from_numpy(data["observation"].astype(np.float32) * scale)
    mask = torch.from_numpy(legal)
    y = torch.from_numpy(target)
    net, linear = relu_network([start.observation_size, *start.hidden, start.num_actions], start.weights)
    optimiser = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=weight_decay)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, T_max=epochs)

    def loss_of(rows: Any) -> tuple[Any, Any]:
        out, legal_rows = net(x[rows]), mask[rows]
        zero = torch.zeros_like(out)
        size = legal_rows.sum(dim=1, keepdim=True)
        centred = torch.where(
            legal_rows, out - torch.where(legal_rows, out, zero).sum(dim=1, keepdim=True) / size, zero
        )
        return (((centred - y[rows]) ** 2).sum(dim=1) / size.squeeze(1)).mean(), out

    train_rows, val_rows = np.flatnonzero(~is_val), np.flatnonzero(is_val)
    seat_games = len(held) * players

    def validate() -> dict[str, float]:
        net.eval()
        with torch.no_grad():
            loss, out = loss_of(torch.from_numpy(val_rows))
            choice = out.masked_fill(~mask[val_rows], -np.inf).argmax(dim=1).numpy()
        values = worth[val_rows]
        gains = values[np.arange(len(val_rows)), choice] - values[np.arange(len(val_rows)), action[val_rows]]
        return {"val_loss": float(loss), "val_agree": float((choice == action[val_rows]).mean()),
                "val_gain": float(gains.mean()), "val_gain_error": float(gains.std() / np.sqrt(len(gains))),
                "val_gain_per_seat_game": float(gains.sum() / seat_games)}  # fmt: skip

    def report(row: dict[str, float]) -> None:
        say(f"epoch {row['epoch']}: validation loss {row['val_loss']:.3f}, chooses as the model "
            f"{row['val_agree']:.3f}, gain {row['val_gain']:+.4f} ± {row['val_gain_error']:.4f} a decision "
            f"({row['val_gain_per_seat_game']:+.2f} a seat and game)")  # fmt: skip

    history = [{"epoch": 0, "train_loss": float("nan"), **validate()}]
    report(history[0])
    best = (0.0, layer_weights(linear))
    for epoch in range(1, epochs + 1):
        net.train()
        order = rng.permutation(train_rows)
        total = 0.0
        for first in range(0, len(order), batch):
            rows = torch.from_numpy(order[first : first + batch])
            loss, _ = loss_of(rows)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            total += float(loss.detach()) * len(rows)
        schedule.step()
        row = {"epoch": epoch, "train_loss": total / max(1, len(order)), **validate()}
        history.append(row)
        report(row)
        if row["val_gain"] > best[0]:
            best = (row["val_gain"], layer_weights(linear))
    return FitResult(best[1], scale, history)


def advantage_step(
    game: str,
    out_dir: str | Path,
    *,
    start: str | Path,
    options: dict[str, Any] | None = None,
    label_games: int = 3000,
    bonus: float = 3.0,
    objective: str = "score",
    epochs: int = 6,
    lr: float = 3e-4,
    workers: int = 2,
    seed: int = 1_000_000,
    say: Any = print,
) -> Path:
    """One step under ``out_dir``: ``label_games`` games of ``start`` against itself labelled (``labels/``,
    resumable; deal seeds ``seed ..``, kept apart from the evaluation deals, which start at small seeds), then
    ``start`` fine-tuned on them (:func:`fit_advantages`) and written as ``model.npz`` (float16 weights, ``start``'s
    derived inputs kept) with ``fit.json`` (the fit's history). Returns the model's path; a rerun with the model
    there returns it."""
    from tableenvs.policies.numpy_policy import load_numpy_policy
    from tableenvs.training import distill

    options = dict(options or {})
    out = Path(out_dir)
    model = out / "model.npz"
    if model.exists():
        return model
    env = make_raw(game, **options)
    first = load_numpy_policy(start)
    check_at_least("label_games", label_games, 2)
    check_choice("objective", objective, OBJECTIVES)
    began = time.perf_counter()
    label_advantages(game, options, model=start, games=label_games, out_dir=out / "labels", seed=seed,
                     workers=workers, say=say)  # fmt: skip
    data = read_advantages(out / "labels")
    if first.input_features:
        from tableenvs.policies.input_features import input_features

        data = distill.with_features(data, input_features(first.input_features, env))
    say(f"fitting {Path(start).name} to the advantages ({objective}) of {len(data['action'])} decisions "
        f"(bonus {bonus})")  # fmt: skip
    result = fit_advantages(data, first, bonus=bonus, objective=objective, epochs=epochs, lr=lr, seed=0,
                            threads=workers, players=len(env.possible_agents), say=say)  # fmt: skip
    digest = hashlib.sha256(Path(start).read_bytes()).hexdigest()[:12]  # the start by content, wherever it lies
    meta = {"recipe": f"advantage step from {digest}", "labels": int(len(data["action"])),
            "label_games": label_games, "bonus": bonus, "epochs": epochs, "lr": lr, "seed": seed}  # fmt: skip
    if objective != "score":  # named only when not the default, so the default's files stay as they were
        meta["objective"] = objective
    distill.export(result, model, game, options, meta, input_features=first.input_features, dtype="float16")
    (out / "fit.json").write_text(json.dumps({"meta": meta, "history": result.history}, indent=2) + "\n")
    say(f"wrote {model} ({time.perf_counter() - began:.0f} s in all)")
    return model


def advantage_iteration(
    game: str,
    out_dir: str | Path,
    *,
    start: str | Path,
    options: dict[str, Any] | None = None,
    steps: int = 3,
    label_games: int = 3000,
    bonus: float = 3.0,
    objective: str = "score",
    epochs: int = 6,
    lr: float = 3e-4,
    workers: int = 2,
    seed: int = 1_000_000,
    say: Any = print,
) -> Path:
    """``steps`` :func:`advantage_step` runs under ``out_dir/step-K``, each from the model of the step before
    (the first from ``start``), step ``K`` dealt from seed ``seed + (K - 1) * label_games`` (no deal twice).
    Resumable step by step; returns the last step's model."""
    check_at_least("steps", steps, 1)
    check_model(game, dict(options or {}), start)  # before the first line is said
    model = Path(start)
    for step in range(1, steps + 1):
        say(f"advantage iteration: step {step} of {steps}, from {model}")
        model = advantage_step(game, Path(out_dir) / f"step-{step}", start=model, options=options,
                               label_games=label_games, bonus=bonus, objective=objective, epochs=epochs, lr=lr,
                               workers=workers, seed=seed + (step - 1) * label_games, say=say)  # fmt: skip
    return model
