"""Search distillation: label positions with the ``search`` policy, fit a masked MLP to its choices, export it.

Where you are: a training recipe in progress, beside :mod:`tableenvs.training.job` (the SB3 job). The
``search`` policy beats the heuristic (docs/agents.md) but costs ~100 ms a decision; a network that imitates it
costs microseconds. The recipe is one step of expert iteration:

1. :func:`label_games` — play whole games with every seat searching (``make_policy(search_spec, env)``) and keep
   each decision that had more than one legal action: the acting seat's observation (float32), its action mask,
   the search's root visit counts as a soft target (the flat UCB root, :attr:`SearchPolicy.last_root`), the root's
   mean value of each visited action (``value``, the seat's reward until the rollout's end; 0 where unvisited: a
   Q-target for a later fit) and the action played. Games run in worker processes; each finished game is written
   to its own file, so a fault loses at most the games under way (:func:`read_shards` reads them all back).
2. :func:`fit` — a ReLU MLP trained with AdamW on the cross-entropy between the masked softmax and the soft targets
   (torch, the ``train`` extra), inputs scaled by each feature's largest magnitude in the data.
3. The fitted weights are exported with :func:`tableenvs.policies.numpy_policy.save_numpy_policy`, so the shipped model
   is played by numpy alone (``make_policy("trained", env)``).

``prior`` rows (the heuristic's own choices, labelled by :func:`label_games` with ``search_spec="heuristic"`` at
~3,000 labels a CPU-second) can be mixed into the fit at a lower weight.

Where it stands: on the observation alone (about 13,000 search labels of Pili Pili 5p, with or without
270,000 heuristic labels) the fitted network loses to the heuristic head to head. With a game's derived inputs
appended (:func:`with_features`) it is the ``search-clone`` recipe of :mod:`tableenvs.training.recipe`, which made the
shipped Llama Party model; the shipped Pili Pili model comes from that module's ``strong`` recipe (a clone of the
heuristic, then PPO). Both use :func:`label_games` and :func:`fit` from here.

Units: a label is one decision; ``games`` counts whole games; times are seconds.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import tableenvs
from tableenvs.paths import atomic_output
from tableenvs.policies import make_policy, play_game
from tableenvs.policies.input_features import features_of_rows

#: What one shard row holds, by array name.
FIELDS = ("observation", "mask", "target", "value", "action", "game")


@dataclass(frozen=True)
class LabelJob:
    """One worker's share: games ``first .. first + count - 1`` (each game's deal seed is ``seed + index``)."""

    game: str
    options: dict[str, Any]
    search_spec: str
    first: int
    count: int
    seed: int
    out_dir: str


def _label_one_game(env: Any, search: Any, deal_seed: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Every multi-choice decision of one game played by ``search`` at every seat, as shard arrays."""
    num_actions = env.action_space(env.possible_agents[0]).n
    observations, masks, targets, values, actions = [], [], [], [], []

    def label(env: Any, agent: str, observation: dict[str, np.ndarray], action: int) -> None:
        mask = observation["action_mask"]
        root = getattr(search, "last_root", None)
        if root is None and mask.sum() <= 1:
            return
        target = np.zeros(num_actions, dtype=np.float32)
        value = np.zeros(num_actions, dtype=np.float32)
        if root is not None:  # a search policy's root visits and mean values
            legal, visits, means = root
            target[legal] = visits / visits.sum()
            value[legal] = np.where(visits > 0, means, 0.0)
        else:  # any other policy: its choice (a batched paired root: with each legal action's mean value)
            target[action] = 1.0
            paired = getattr(search, "last_values", None)
            if paired is not None:
                value[paired[0]] = paired[1]
        observations.append(np.asarray(observation["observation"], dtype=np.float32))
        masks.append(np.asarray(mask, dtype=np.int8))
        targets.append(target)
        values.append(value)
        actions.append(action)

    play_game(env, [search] * len(env.possible_agents), seed=deal_seed, rng=rng, on_step=label)
    count = len(actions)
    return {
        "observation": np.asarray(observations, dtype=np.float32).reshape(count, -1),
        "mask": np.asarray(masks, dtype=np.int8).reshape(count, num_actions),
        "target": np.asarray(targets, dtype=np.float32).reshape(count, num_actions),
        "value": np.asarray(values, dtype=np.float32).reshape(count, num_actions),
        "action": np.asarray(actions, dtype=np.int16),
        "game": np.full(count, deal_seed, dtype=np.int64),
    }


def _run_job(job: LabelJob) -> int:
    """Label ``job``'s games, one shard file per game (written atomically: never half a file); returns the labels
    made."""
    env = tableenvs.make_raw(job.game, **job.options)
    search = make_policy(job.search_spec, env)
    made = 0
    for index in range(job.first, job.first + job.count):
        path = Path(job.out_dir) / f"game-{index:06d}.npz"
        if path.exists():  # done by an earlier, interrupted run
            continue
        rng = np.random.default_rng([job.seed, index])
        arrays: dict[str, Any] = _label_one_game(env, search, job.seed + index, rng)  # Any: for savez_compressed
        with atomic_output(path, "wb") as out:
            np.savez_compressed(out, **arrays)
        made += len(arrays["action"])
    return made


def label_games(
    game: str,
    options: dict[str, Any],
    *,
    games: int,
    out_dir: str | Path,
    seed: int = 0,
    search_spec: str = "search",
    workers: int = 1,
    say: Any = print,
) -> int:
    """Label ``games`` games into ``out_dir`` (resumable: games already there are skipped); returns new labels."""
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "labels.json").write_text(
        json.dumps({"game": game, "options": options, "search": search_spec, "seed": seed}, indent=2) + "\n"
    )
    # Small jobs, handed out in order, so progress is steady and a fault loses little.
    jobs = [LabelJob(game, options, search_spec, first, 1, seed, str(out)) for first in range(games)]
    start = time.perf_counter()
    made = done = 0
    with in_workers(_run_job, jobs, workers) as results:
        for labels in results:
            made += labels
            done += 1
            if done % max(1, games // 20) == 0 or done == games:
                elapsed = time.perf_counter() - start
                say(f"labelled {done}/{games} games, {made} new labels, {elapsed:.0f} s")
    return made


@contextmanager
def in_workers(run: Callable[[Any], Any], jobs: Sequence[Any], workers: int) -> Iterator[Iterator[Any]]:
    """``run(job)`` for each of ``jobs``, results in order: in this process with one worker, else in a pool of
    ``workers`` processes, shut down when the block ends (by an error too; jobs not started are cancelled)."""
    if workers == 1:
        yield map(run, jobs)
        return
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(workers)
    try:
        yield pool.map(run, jobs)
    finally:
        pool.shutdown(cancel_futures=True)


def labelled_choices(game: str, options: dict[str, Any], *, games: int, out_dir: str | Path, seed: int,
                     search_spec: str, workers: int, say: Any = print) -> dict[str, np.ndarray]:  # fmt: skip
    """:func:`label_games` into ``out_dir``, then every labelled game read back (:func:`read_shards`) with each row's
    ``target`` the one-hot choice the labeller made: what the recipes that fit a search's choices train on."""
    label_games(game, options, games=games, out_dir=out_dir, seed=seed, search_spec=search_spec, workers=workers,
                say=say)  # fmt: skip
    data = read_shards(out_dir)
    data["target"] = choice_targets(data)
    return data


def choice_targets(data: dict[str, np.ndarray]) -> np.ndarray:
    """Each labelled row's choice (``action``) as a one-hot target over the actions, float32 ``(rows, actions)``."""
    return np.eye(data["mask"].shape[1], dtype=np.float32)[np.asarray(data["action"], np.int64)]


def check_value_targets(temperature: float, share: float, prefix: str = "") -> None:
    """The one-line ``ValueError`` :func:`value_targets` gives for a ``temperature`` or ``share`` that is not a number,
    a ``temperature`` not above 0 or a ``share`` outside (0, 1], each named as ``prefix`` + its name (a caller checking
    them before labelling names its own parameters)."""
    for name, value in (("temperature", temperature), ("share", share)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ValueError(f"{prefix}{name} must be a number, got {value!r}")
    if not temperature > 0:
        raise ValueError(f"{prefix}temperature must be > 0 (reward units), got {temperature!r}")
    if not 0 < share <= 1:
        raise ValueError(f"{prefix}share must be in (0, 1], got {share!r}")


def value_targets(data: dict[str, np.ndarray], temperature: float, share: float = 1.0) -> dict[str, np.ndarray]:
    """``data`` with each row's ``target`` made from the labeller's values of its legal actions: ``share`` of it the
    softmax of the values over ``temperature`` (reward units: the value gap at which one action gets e times the
    other's weight), the rest the choice made (one-hot ``action``). The values must come from a labeller that keeps
    them (the batched paired root, ``search:batched=1``; other labellers leave zeros, which would make that share
    uniform). ``ValueError`` unless ``temperature > 0`` and ``0 < share <= 1`` (:func:`check_value_targets`)."""
    check_value_targets(temperature, share)
    legal = data["mask"] > 0
    value = data["value"].astype(np.float64)
    scaled = np.where(legal, value / temperature, -np.inf)
    scaled -= scaled.max(axis=1, keepdims=True)
    weights = np.where(legal, np.exp(scaled), 0.0)
    soft = weights / weights.sum(axis=1, keepdims=True)
    return {**data, "target": ((1 - share) * choice_targets(data) + share * soft).astype(np.float32)}


def with_features(data: dict[str, np.ndarray], features: Any) -> dict[str, np.ndarray]:
    """``data`` (labelled rows) with ``features(observation, mask)`` (derived inputs, e.g. a name of
    :mod:`tableenvs.policies.input_features` built for the game) appended to every observation: in one call of the
    features' ``batch`` where they have one (the same floats as row by row), else row by row."""
    extra = features_of_rows(features, data["observation"], data["mask"])
    return {**data, "observation": np.concatenate([data["observation"], extra], axis=1)}


def read_shards(directory: str | Path) -> dict[str, np.ndarray]:
    """Every finished game's labels under ``directory``, concatenated (``game`` says which deal each came from)."""
    paths = sorted(Path(directory).glob("game-*[0-9].npz"))
    if not paths:
        raise FileNotFoundError(f"no labelled games (game-*.npz) under {str(directory)!r}")
    parts: dict[str, list[np.ndarray]] = {name: [] for name in FIELDS}
    for path in paths:
        with np.load(path, allow_pickle=False) as data:
            missing = [name for name in FIELDS if name not in data.files]
            if missing:
                raise ValueError(f"labels {str(path)!r} have no {', '.join(missing)} (made by an older version?)")
            for name in FIELDS:
                parts[name].append(data[name])
    return {name: np.concatenate(arrays) for name, arrays in parts.items()}


@dataclass(frozen=True)
class FitResult:
    """A fitted network: ``weights`` as (in x out, out) float32 pairs, the input scale, and the fit's record."""

    weights: list[tuple[np.ndarray, np.ndarray]]
    input_scale: np.ndarray
    history: list[dict[str, float]]


def input_scale(observations: np.ndarray) -> np.ndarray:
    """Per-feature scale 1 / (largest magnitude seen), 1 where a feature is always 0: inputs land in [-1, 1]."""
    largest = np.abs(observations).max(axis=0)
    return np.where(largest > 0, 1.0 / np.maximum(largest, 1e-12), 1.0).astype(np.float32)


def fit(
    data: dict[str, np.ndarray],
    *,
    hidden: Sequence[int] = (256, 256),
    epochs: int = 40,
    batch: int = 512,
    lr: float = 1e-3,
    weight_decay: float = 1e-4,
    validation: float = 0.1,
    seed: int = 0,
    threads: int = 2,
    prior: dict[str, np.ndarray] | None = None,
    prior_weight: float = 0.25,
    start: Any = None,
    say: Any = print,
) -> FitResult:
    """Fit a ReLU MLP to the soft targets (masked softmax cross-entropy); keeps the epoch of least validation loss.

    The validation games (a ``validation`` share of the deals, chosen by ``seed``) are never trained on; each
    epoch reports the validation loss and how often the network's most likely action is the one the labeller played.
    ``prior``: more labelled rows (e.g. the heuristic's own choices, cheap to make) trained on with weight
    ``prior_weight`` each against 1 for a row of ``data``; never validated on. ``start``: a numpy policy
    (:class:`~tableenvs.policies.model_file.NumpyModel`: a ReLU network, no input offset; a model with derived inputs
    needs them appended to ``data``'s observations, :func:`with_features`) whose weights and input scale the fit
    starts from, its layers replacing ``hidden``: a fine-tuning of that model towards the labels (epoch 0, the start
    itself, is reported and may be the one kept).
    """
    import torch

    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    deals = np.unique(data["game"])
    held = set(rng.choice(deals, size=max(1, int(len(deals) * validation)), replace=False).tolist())
    is_val = np.isin(data["game"], list(held))
    train_rows = {name: array[~is_val] for name, array in data.items()}
    weight = np.ones(int((~is_val).sum()), dtype=np.float32)
    if prior is not None:
        train_rows = {name: np.concatenate([train_rows[name], prior[name]]) for name in FIELDS}
        weight = np.concatenate([weight, np.full(len(prior["action"]), prior_weight, dtype=np.float32)])
    if start is not None:
        from tableenvs.training.model_start import untrainable

        why = untrainable(start, derived_inputs=True)
        if why is not None:
            raise ValueError(f"{start.name}: fit starts only from a ReLU network over the observation and its "
                             f"derived inputs (this one: {why})")  # fmt: skip
        shapes = (data["observation"].shape[1], data["target"].shape[1])
        if (start.observation_size, start.num_actions) != shapes:
            raise ValueError(
                f"{start.name}: {start.observation_size} inputs and {start.num_actions} actions, the labels' {shapes}"
            )
        hidden = start.hidden
        scale = np.ones(start.observation_size, np.float32) if start.input_scale is None else start.input_scale
        scale = np.asarray(scale, np.float32)
    else:
        scale = input_scale(train_rows["observation"])

    def tensors(rows: dict[str, np.ndarray]) -> tuple[Any, Any, Any, Any]:
        x = torch.from_numpy(rows["observation"] * scale)
        legal = torch.from_numpy(rows["mask"] > 0)
        return x, legal, torch.from_numpy(rows["target"]), torch.from_numpy(rows["action"].astype(np.int64))

    train_x, train_legal, train_target, _ = tensors(train_rows)
    train_weight = torch.from_numpy(weight)
    val_x, val_legal, val_target, val_action = tensors({name: array[is_val] for name, array in data.items()})
    net, linear = relu_network([train_x.shape[1], *hidden, train_target.shape[1]], getattr(start, "weights", None))
    optimiser = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=weight_decay)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, T_max=epochs)

    def loss_of(x: Any, legal: Any, target: Any, weight: Any = None) -> tuple[Any, Any]:
        logits = net(x).masked_fill(~legal, -1e9)
        loss = -(target * torch.log_softmax(logits, dim=1)).sum(dim=1)
        if weight is None:
            return loss.mean(), logits
        return (loss * weight).sum() / weight.sum(), logits

    best: tuple[float, list[tuple[np.ndarray, np.ndarray]]] | None = None
    history = []
    count = train_x.shape[0]

    def validate() -> tuple[float, float]:
        """The validation loss and how often the network's most likely action is the labeller's."""
        net.eval()
        with torch.no_grad():
            val_loss, logits = loss_of(val_x, val_legal, val_target)
            return float(val_loss), float((logits.argmax(dim=1) == val_action).float().mean())

    if start is not None:  # epoch 0: the start itself, kept if no epoch does better on the validation games
        val_loss, agree = validate()
        history.append({"epoch": 0, "train_loss": float("nan"), "val_loss": val_loss, "val_agree": agree,
                        "seconds": 0.0})  # fmt: skip
        say(f"epoch 0 (the start): validation {val_loss:.4f}, agrees with the labels {agree:.3f}")
        best = (val_loss, [(np.asarray(w, np.float32).copy(), np.asarray(b, np.float32).copy())
                                  for w, b in start.weights])  # fmt: skip
    for epoch in range(1, epochs + 1):
        start = time.perf_counter()
        net.train()
        order = torch.from_numpy(rng.permutation(count))
        total = 0.0
        for first in range(0, count, batch):
            rows = order[first : first + batch]
            loss, _ = loss_of(train_x[rows], train_legal[rows], train_target[rows], train_weight[rows])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            total += float(loss.detach()) * len(rows)
        schedule.step()
        val_loss, agree = validate()
        row = {
            "epoch": epoch,
            "train_loss": total / count,
            "val_loss": val_loss,
            "val_agree": agree,
            "seconds": time.perf_counter() - start,
        }
        history.append(row)
        say(
            f"epoch {epoch}/{epochs}: train {row['train_loss']:.4f}, validation {row['val_loss']:.4f}, "
            f"agrees with the labels {agree:.3f}, {row['seconds']:.1f} s"
        )
        if best is None or row["val_loss"] < best[0]:
            best = (row["val_loss"], layer_weights(linear))
    assert best is not None
    return FitResult(best[1], scale, history)


def relu_network(sizes: Sequence[int], weights: Any = None) -> tuple[Any, list[Any]]:
    """A torch ReLU MLP with layer ``sizes`` (inputs, hidden..., outputs) and its linear layers; ``weights``: (in x
    out, out) pairs, a numpy model's, copied in (else torch's initialisation)."""
    import torch

    layers: list[Any] = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(torch.nn.ReLU())
    net = torch.nn.Sequential(*layers)
    linear = [m for m in net if isinstance(m, torch.nn.Linear)]
    if weights is not None:
        with torch.no_grad():
            for module, (weight_in_out, bias) in zip(linear, weights, strict=True):
                module.weight.copy_(torch.from_numpy(np.asarray(weight_in_out, np.float32).T.copy()))
                module.bias.copy_(torch.from_numpy(np.asarray(bias, np.float32)))
    return net, linear


def layer_weights(linear: list[Any]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The weights of torch linear layers as (in x out, out) float32 pairs, the numpy model's layout."""
    return [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy()) for m in linear]


def export(
    result: FitResult,
    path: str | Path,
    game: str,
    options: dict[str, Any],
    meta: dict[str, Any],
    input_features: str | None = None,
    dtype: str = "float32",
) -> Path:
    """Write ``result`` as a numpy policy file for ``game`` with ``options`` (the env's full option set);
    ``input_features``: the name of the derived inputs it was fitted on after the observation, if any; ``dtype``: the
    weight matrices' storage (``"float16"`` halves the file)."""
    from tableenvs.policies.numpy_policy import save_for_env

    env = tableenvs.make_raw(game, **options)
    return save_for_env(
        path, env, weights=result.weights, activation="relu", input_scale=result.input_scale, meta=meta,
        input_features=input_features, dtype=dtype,
    )  # fmt: skip


def fit_and_export(
    data: dict[str, np.ndarray],
    path: Path,
    game: str,
    options: dict[str, Any],
    recipe: str,
    *,
    hidden: Sequence[int],
    epochs: int,
    seed: int,
    threads: int,
    say: Any = print,
    input_features: str | None = None,
    dtype: str = "float32",
) -> Path:
    """A recipe's clone: :func:`fit` ``data`` (batches of 1,024), :func:`export` it to ``path`` (its meta naming
    ``recipe``, the labels and epochs) and write the fit's history beside it as ``clone.json``; returns ``path``."""
    result = fit(data, hidden=hidden, epochs=epochs, batch=1024, seed=seed, threads=threads, say=say)
    meta = {"recipe": recipe, "labels": int(len(data["action"])), "epochs": epochs}
    export(result, path, game, options, meta, input_features=input_features, dtype=dtype)
    (path.parent / "clone.json").write_text(json.dumps({"meta": meta, "history": result.history}, indent=2) + "\n")
    return path


def distill_search(
    game: str,
    out_dir: str | Path,
    *,
    options: dict[str, Any] | None = None,
    games: int,
    workers: int = 2,
    seed: int = 0,
    search_spec: str = "search",
    epochs: int = 40,
    hidden: Sequence[int] = (256, 256),
    start_model: str | Path | None = None,
    lr: float = 1e-3,
    say: Any = print,
) -> Path:
    """Search distillation, whole: label ``games`` games under ``out_dir/labels``, fit, write ``out_dir/model.npz`` and
    ``out_dir/fit.json`` (the fit's history); returns the model's path. Resumable: labelled games are kept.
    ``start_model``: a numpy policy file the fit starts from (:func:`fit`'s ``start``: the model tuned towards the
    search's choices, one step of expert iteration), checked before any game is labelled."""
    options = dict(options or {})
    out = Path(out_dir)
    tuned = None
    if start_model is not None:
        from tableenvs.training.model_start import check_init

        tuned = check_init(game, options, start_model, flag="--start")
    start = time.perf_counter()
    label_games(
        game, options, games=games, out_dir=out / "labels", seed=seed, search_spec=search_spec, workers=workers, say=say
    )
    data = read_shards(out / "labels")
    say(f"fitting on {len(data['action'])} labels from {len(np.unique(data['game']))} games")
    result = fit(data, hidden=hidden, epochs=epochs, lr=lr, seed=seed, threads=workers, start=tuned, say=say)
    meta = {
        "recipe": "strong (search distillation)",  # the name its models were written with
        **({} if tuned is None else {"start": tuned.name, "lr": lr}),
        "search": search_spec,
        "games": games,
        "seed": seed,
        "labels": int(len(data["action"])),
        "epochs": epochs,
        "hidden": list(hidden if tuned is None else tuned.hidden),
        "seconds": round(time.perf_counter() - start, 1),
    }
    path = export(result, out / "model.npz", game, options, meta)
    (out / "fit.json").write_text(json.dumps({"meta": meta, "history": result.history}, indent=2) + "\n")
    say(f"wrote {path} ({meta['seconds']:.0f} s in all)")
    return path
