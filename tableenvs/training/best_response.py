"""An approximate best response: how much a fresh learner, given a fixed budget, gains against a frozen table.

Where you are: ``tableenvs/training/``, beside :mod:`tableenvs.training.league` (whose trainer this reuses). Exact
best responses are out of reach at these game sizes, so exploitability is measured the practical way: train a learner
for a fixed budget against a table where every other seat is the frozen target, then report what it gains over the
target's own seats. Comparing two targets under the same budget and recipe says which is harder to exploit. No game is
named here: the engine, the heuristic and the shipped model come from the game's spec and
:func:`tableenvs.policies.numpy_policy.trained_file`.

* **The table** (:class:`BestResponseTrainer`): one batched engine (:func:`tableenvs.vector.make`), the learner in
  ONE seat of every game (each env's seat moves on by one at each new game, starting from a random seat), every other
  seat played by the target for the whole batch in one call. Targets (:func:`batched_target`): ``heuristic`` (the
  game's batched heuristic), ``trained`` (the model shipped for the game and options), ``trained:path=FILE.npz`` or a
  ``.npz`` path (a plain ReLU/tanh numpy policy, played greedily as ``make_policy`` plays it, one matrix product for
  all its rows: :class:`BatchedModel`; a candidate-scoring model, through the game's batched candidates:
  :class:`tableenvs.vector.candidates.BatchedCandidatePolicy`, and a model that reads derived inputs (worked out row
  by row): :class:`tableenvs.vector.players.BatchedNumpyPolicy`, both choosing exactly as ``NumpyPolicy``).
* **The learner**: PPO with the league's settings (:data:`tableenvs.training.league.LEAGUE_PPO`), started from the
  same clone of the batched heuristic for every target (:func:`tableenvs.training.league.clone_heuristic_batched`; its
  network size, 256x256 by default, is the shipped models'), or from a given numpy policy file (``start``: the
  shipped model, so that the learner does not begin behind the target it is to exploit), for a budget of learner
  samples and/or CPU seconds of this process (whichever ends first; checked between updates).
* **The measure** (:func:`evaluate_gain`): the learner, greedy, in one seat and the target in the others, on fresh
  duplicate deals: each deal is played ``players`` times, the learner in each seat once. A deal's gain is the mean,
  over its seatings, of the learner seat's total reward minus the mean total of the target's seats; the report is
  the mean over deals with a paired 95% interval (normal, deals independent). The same quantity for the target
  against itself is 0 by symmetry (every seat is the same player on the same deals), so the gain is the learner's
  gain over the agent's own seats. Units: the game's rewards (per game, more is better for the learner).

:func:`best_response` runs the whole thing; ``benchmarks/exploitability.py`` compares targets under one budget and
writes docs/agents.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tableenvs.core.validation import check_at_least
from tableenvs.evaluation.ratings import mean_interval
from tableenvs.training.batched_config import BatchedConfig
from tableenvs.training.league import LEAGUE_PPO, LeagueSettings, LeagueTrainer, clone_heuristic_batched

__all__ = [
    "BatchedModel",
    "BestResponseResult",
    "BestResponseTrainer",
    "batched_target",
    "best_response",
    "check_best_response_game",
    "evaluate_gain",
]

#: The targets :func:`batched_target` plays, besides ``trained:path=FILE.npz`` and ``.npz`` paths.
TARGETS = ("heuristic", "trained")


def check_best_response_game(game: str) -> None:
    """A one-line ``ValueError`` if ``game`` (a registered name) has no batched engine or no batched heuristic (the
    learner starts from the heuristic's clone, whatever the target)."""
    from tableenvs.core.registry import spec

    found = spec(game)  # an unknown name: ValueError listing the registered ones
    missing = [name for name in ("batched", "batched_heuristic") if getattr(found, name) is None]
    if missing:
        raise ValueError(
            f"a best response needs a batched engine and a batched heuristic; {game}'s GameSpec names no "
            f"{' and no '.join(missing)}"
        )


class BatchedModel:
    """A numpy policy file played greedily for a batch of rows: the most likely legal action of each row, as
    :class:`tableenvs.policies.numpy_policy.NumpyPolicy` with ``deterministic=True`` plays it one row at a time
    (the batch's matrix products may round differently in the last bits, so an exact tie of two logits could break
    the other way).

    The matrix products run in torch on the trainer's one thread: numpy's multi-threaded BLAS, on a loaded machine,
    spent about 50 times more CPU on the same products (its threads wait for each other by spinning)."""

    def __init__(self, model: Any, name: str):
        import torch

        self.model = model
        self.name = name
        self._weights = [
            (torch.from_numpy(np.asarray(w, np.float32)), torch.from_numpy(np.asarray(b, np.float32)))
            for w, b in model.weights
        ]
        self._offset = None if model.input_offset is None else torch.from_numpy(model.input_offset)
        self._scale = None if model.input_scale is None else torch.from_numpy(model.input_scale)
        self._relu = model.activation == "relu"

    def act(self, obs: np.ndarray, mask: np.ndarray, envs: np.ndarray | None = None) -> np.ndarray:
        import torch

        with torch.inference_mode():
            x = torch.from_numpy(np.asarray(obs, np.float32))
            if self._offset is not None:
                x = x - self._offset
            if self._scale is not None:
                x = x * self._scale
            last = len(self._weights) - 1
            for index, (weight, bias) in enumerate(self._weights):
                x = torch.addmm(bias, x, weight)
                if index < last:
                    x = torch.relu(x) if self._relu else torch.tanh(x)
            logits = x.numpy()
        legal = mask != 0
        masked = np.where(legal, logits, -np.inf)
        chosen = masked.argmax(axis=1)
        stuck = ~legal[np.arange(len(chosen)), chosen]  # every legal logit -inf: the first legal action
        if stuck.any():
            chosen[stuck] = legal[stuck].argmax(axis=1)
        return chosen.astype(np.int64)


def batched_target(target: str, engine: Any, options: dict[str, Any] | None = None) -> Any:
    """The player of ``target`` for a whole batch of ``engine`` (a :func:`tableenvs.vector.make` batch made with
    ``options``): ``"heuristic"``, ``"trained"``, ``"trained:path=FILE.npz"`` or a ``.npz`` path (a
    candidate-scoring model: :class:`tableenvs.vector.candidates.BatchedCandidatePolicy`; a model that reads derived
    inputs: :class:`tableenvs.vector.players.BatchedNumpyPolicy`, which works them out row by row from each row's
    observation and mask and chooses exactly as ``NumpyPolicy``). Anything else, or a model that does not fit the game
    and options, or scores candidates its game has no batched ones for, is a one-line ``ValueError``."""
    import tableenvs.vector
    from tableenvs.core.registry import make_raw
    from tableenvs.policies.model_env import check_model_fits
    from tableenvs.policies.numpy_policy import is_trained_spec, load_numpy_policy, trained_file

    if not isinstance(target, str):
        raise ValueError(f"target must be a string ({', '.join(TARGETS)}, trained:path=FILE.npz or a .npz path), "
                         f"got {target!r}")  # fmt: skip
    if target == "heuristic":
        return tableenvs.vector.batched_heuristic(engine)
    game = engine.name
    raw = make_raw(game, **dict(options or {}))
    if is_trained_spec(target):
        path = trained_file(target, raw)
    elif target.endswith(".npz"):
        path = Path(target).expanduser()
    else:
        raise ValueError(
            f"unknown best-response target {target!r}: use {', '.join(TARGETS)}, trained:path=FILE.npz or a .npz path"
        )
    model = load_numpy_policy(path)
    check_model_fits(model, raw)
    if model.candidates:  # a candidate-scoring model: the game's batched candidates (one-line refusal if none)
        from tableenvs.vector.candidates import BatchedCandidatePolicy

        return BatchedCandidatePolicy(model, engine, raw)
    if model.input_features:  # its derived inputs worked out row by row, as NumpyPolicy works them out
        from tableenvs.vector.players import BatchedNumpyPolicy

        return BatchedNumpyPolicy(model, raw, deterministic=True)
    return BatchedModel(model, target)


@dataclass
class BestResponseResult:
    """What :func:`best_response` measured: the ``gain`` of the greedy learner over the target's seats per game
    (reward units, more is better for the learner) with its paired 95% interval ``low, high`` over ``deals``
    duplicate deals (``games`` = deals x players), the learner's and the target seats' mean totals, the budget
    spent (``samples``, ``cpu_seconds`` of training) and one row per PPO update in ``history``."""

    game: str
    options: dict[str, Any]
    target: str
    samples: int
    cpu_seconds: float
    deals: int
    games: int
    gain: float
    low: float
    high: float
    learner_mean: float
    target_mean: float
    history: list[dict[str, float]] = field(default_factory=list)

    def line(self) -> str:
        return (
            f"{self.game} {self.options}: best response to {self.target} after {self.samples:,} samples "
            f"({self.cpu_seconds:.0f} CPU s): gain {self.gain:+.3f} [{self.low:+.3f}, {self.high:+.3f}] per game "
            f"over {self.deals} deals x {self.games // max(self.deals, 1)} seatings"
        )


class BestResponseTrainer(LeagueTrainer):
    """PPO (the league's networks, update and batched collection) with the learner in one seat of every game and the
    frozen target in the others; see the module docstring."""

    def __init__(self, config: BatchedConfig, target: str, num_envs: int = 256):
        check_best_response_game(config.game)
        settings = LeagueSettings(num_envs=num_envs, self_play=0.0, heuristic=False, max_snapshots=0,
                                  snapshot_every=2**62)  # fmt: skip
        super().__init__(config, settings)
        player = batched_target(target, self.engine, config.options)
        # The population is the target alone (the league put the learner's starting snapshot there).
        self.members, self.member_names, self.score, self.met = [player], [target], [0.5], [0]
        self.target = target
        self._learner_seat = self.rng.integers(self.num_players, size=num_envs)

    def _seat(self, envs: np.ndarray) -> None:
        """Each env in ``envs`` starts a game: the learner in the seat after its last one, the target elsewhere."""
        self._learner_seat[envs] = (self._learner_seat[envs] + 1) % self.num_players
        self.role[envs] = 0
        self.role[envs, self._learner_seat[envs]] = self.LEARNER


def _greedy_actor(trainer: BestResponseTrainer) -> BatchedModel:
    """The learner's actor now, as a greedy batched player (what its exported file would play)."""
    from tableenvs.policies.model_file import NumpyModel

    model = NumpyModel(
        name="learner", game=trainer.config.game, options={}, layout_version=0,
        observation_size=trainer.observation_size, num_actions=trainer.num_actions, hidden=(), activation="relu",
        weights=tuple(trainer.weights()), input_scale=trainer.input_scale,
    )  # fmt: skip
    return BatchedModel(model, "learner")


def evaluate_gain(
    game: str,
    options: dict[str, Any],
    learner: Any,
    target: str,
    *,
    deals: int,
    seed: int,
    batch: int = 1024,
) -> tuple[float, float, float, float, float]:
    """``learner`` (a batched player, or a target name: the target against itself) in one seat, ``target`` (a
    name for :func:`batched_target`, made for each batch's engine) in the others, ``deals`` duplicate
    deals each played once per seating of the learner. Returns ``(gain, low, high, learner_mean, target_mean)``:
    the mean per deal of (learner seat's total - mean of the target seats' totals), averaged over seatings, its
    paired 95% interval, and the two sides' mean totals per game."""
    import tableenvs.vector

    check_at_least("deals", deals, 2)
    rng = np.random.default_rng(seed)
    deal_seeds = rng.integers(2**62, size=deals)
    players = tableenvs.vector.make(game, 1, trusted=True, **options).num_players
    per_deal = np.zeros(deals)
    learner_total = target_total = 0.0
    per_batch = max(1, batch // players)
    for start in range(0, deals, per_batch):
        chunk = deal_seeds[start : start + per_batch]
        n = len(chunk) * players
        engine = tableenvs.vector.make(game, n, trusted=True, **options)
        them = batched_target(target, engine, options)
        me = batched_target(learner, engine, options) if isinstance(learner, str) else learner
        # env i: deal i // players with the learner in seat i % players
        seat = np.tile(np.arange(players), len(chunk))
        obs, mask = engine.reset([int(s) for s in np.repeat(chunk, players)])
        totals = np.zeros((n, players), np.float64)
        done = np.zeros(n, bool)
        actions = np.zeros(n, np.int64)
        while not done.all():
            mine = engine.to_act == seat
            for rows, player in ((np.flatnonzero(mine & ~done), me), (np.flatnonzero(~mine & ~done), them)):
                if len(rows):
                    actions[rows] = player.act(obs[rows], mask[rows], rows)
            if done.any():
                actions[done] = mask[done].argmax(axis=1)  # a finished env's next game, not counted
            obs, mask, rewards, terminated, truncated = engine.step(actions)
            totals[~done] += rewards[~done]
            done |= terminated | truncated
        own = totals[np.arange(n), seat]
        others = (totals.sum(axis=1) - own) / (players - 1)
        gain = (own - others).reshape(len(chunk), players).mean(axis=1)
        per_deal[start : start + len(chunk)] = gain
        learner_total += float(own.sum())
        target_total += float(others.sum())
    mean, low, high = mean_interval(per_deal, z=1.96)
    games = deals * players
    return mean, low, high, learner_total / games, target_total / games


def target_stem(target: str) -> str:
    """A target's part of a file name: a ``.npz`` path's stem, else the spec with ``:``, ``=`` and ``/`` made ``_``."""
    name = Path(target).stem if target.endswith(".npz") else target.replace(":", "_").replace("=", "_")
    return name.replace("/", "_")


def learner_start(game: str, options: dict[str, Any], start: str | Path) -> Path:
    """The numpy policy file a best-response learner starts from instead of the heuristic's clone: ``"trained"``
    (the model shipped for ``game`` at ``options``), ``"trained:path=FILE.npz"`` or a path; a one-line
    ``ValueError`` (naming ``--start``) unless it is a ReLU network over this game's observation at these options
    (a candidate scorer, derived inputs or an input offset cannot be trained on)."""
    from tableenvs.core.registry import make_raw
    from tableenvs.policies.numpy_policy import is_trained_spec, trained_file
    from tableenvs.training.model_start import check_init

    if is_trained_spec(str(start)):
        raw = make_raw(game, **options)
        try:
            path = trained_file(str(start), raw)
        except ValueError as error:
            raise ValueError(f"--start {str(start)!r}: {error}") from None
        finally:
            raw.close()
        check_init(game, options, path, flag=f"--start {str(start)!r} is")
        return path
    path = Path(start).expanduser()
    check_init(game, options, path, flag="--start")
    return path


def best_response(
    game: str,
    target: str,
    out_dir: str | Path,
    *,
    options: dict[str, Any] | None = None,
    samples: int | None = 2_000_000,
    cpu_seconds: float | None = None,
    eval_games: int = 2000,
    label_games: int = 3000,
    num_envs: int = 256,
    seed: int = 0,
    settings: dict[str, Any] | None = None,
    start: str | Path | None = None,
    say: Callable[[str], None] = print,
) -> BestResponseResult:
    """Train a best response to ``target`` for ``samples`` learner decisions and/or ``cpu_seconds`` (whichever ends
    first; at least one update), starting from ``out_dir/clone.npz`` (made once and reused by every target run
    under the same ``out_dir``) or from ``start``, then measure its gain on ``eval_games`` fresh games (duplicate
    deals; the deals come from ``seed + 1``, not the training deals). ``start``: ``"trained"`` (the model shipped
    for the game and options), ``"trained:path=FILE.npz"`` or a ``.npz`` path, a ReLU network over the observation
    (:func:`learner_start`); no clone is made then. ``settings``: :class:`BatchedConfig` fields over
    :data:`LEAGUE_PPO`. The learner is written to ``out_dir/<target's file name>.npz``."""
    check_best_response_game(game)
    if samples is None and cpu_seconds is None:
        raise ValueError("give a budget: samples and/or cpu_seconds")
    if samples is not None:
        check_at_least("samples", samples, 1)
    if cpu_seconds is not None and not (isinstance(cpu_seconds, (int, float)) and cpu_seconds > 0):
        raise ValueError(f"cpu_seconds must be a positive number, got {cpu_seconds!r}")
    options = dict(options or {})
    import tableenvs.vector

    players = tableenvs.vector.make(game, 1, trusted=True, **options).num_players
    check_at_least("eval_games", eval_games, 2 * players)
    batched_target(target, tableenvs.vector.make(game, 1, trusted=True, **options), options)  # refuse before work
    first = None if start is None else learner_start(game, options, start)  # refused before any work
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if first is None:
        first = clone_heuristic_batched(game, out, options=options, label_games=label_games, seed=seed, say=say)
    config = BatchedConfig(
        game, samples=samples or 2**62, options=options, start=str(first), seed=seed,
        **{**LEAGUE_PPO, **(settings or {})},
    )  # fmt: skip
    trainer = BestResponseTrainer(config, target, num_envs=num_envs)
    began = time.process_time()
    while True:
        spent = time.process_time() - began
        if (samples is not None and trainer.samples >= samples) or (cpu_seconds is not None and spent >= cpu_seconds):
            if trainer.updates:
                break
        count = trainer.collect()
        row = {"samples": float(trainer.samples), "decisions": float(count), **trainer.update(count)}
        row["mean_return"] = float(np.mean(trainer.game_returns))
        row["opponent_return"] = float(np.mean(trainer.opponent_returns))
        row["cpu_seconds"] = time.process_time() - began
        trainer.history.append(row)
        say(
            f"best response to {target}: {trainer.samples:,} samples, {row['cpu_seconds']:.0f} CPU s: learner "
            f"{row['mean_return']:+.3f}, target seats {row['opponent_return']:+.3f} a game (sampled actions)"
        )
    trained_for = time.process_time() - began
    trainer.export(out / f"best-response-{target_stem(target)}.npz", meta={"best_response_to": target})
    deals = eval_games // players
    gain, low, high, learner_mean, target_mean = evaluate_gain(
        game, options, _greedy_actor(trainer), target, deals=deals, seed=seed + 1
    )
    result = BestResponseResult(
        game, options, target, trainer.samples, trained_for, deals, deals * players, gain, low, high, learner_mean,
        target_mean, trainer.history,
    )  # fmt: skip
    say(result.line())
    return result
