"""The ``league`` training recipe: clone the heuristic, then PPO on the batched engine against a population.

Where you are: a training recipe beside :mod:`tableenvs.training.recipe` (``strong``, ``search-clone``); it reuses
:class:`tableenvs.training.batched.BatchedTrainer`'s networks, PPO update and export, and replaces its collection of
experience: instead of Python envs stepped one by one, one compiled batched engine (:func:`tableenvs.vector.make`)
plays ``num_envs`` games at once and every seat that is not the learner is played for the whole batch in one call.
No game is named here: the engine and the batched heuristic come from the game's spec.

1. **Clone** (:func:`clone_heuristic_batched`): ``label_games`` games of the batched heuristic against itself,
   played in the batched engine (every decision labelled with the heuristic's choice), a ReLU MLP fitted to them
   (:func:`tableenvs.training.distill.fit`), saved as ``clone.npz``.
   Or, with ``init`` (``--init FILE``), no clone: the league starts from that numpy policy file's weights (a model
   of the same game and player count, e.g. a shipped one), copied to ``init.npz`` so that a rerun continues it. A
   start that reads derived inputs after the observation (a search clone's card values) keeps reading them: the
   learner, its snapshots and the export all do (:mod:`tableenvs.training.trainer_inputs`).
2. **League** (:class:`LeagueTrainer`): PPO from the clone (or ``init``). At each new game an env draws who sits at
   its table: with probability ``self_play`` the learner in every seat (every decision is a sample); otherwise one
   member of the population in ``1 .. players - 1`` seats (chosen at random) and the learner in the rest. The
   population is the batched heuristic and frozen snapshots of the learner (the clone first, then a copy every
   ``snapshot_every`` samples, at most ``max_snapshots``, oldest dropped); each snapshot plays greedily, as a shipped
   model does, its rows of the batch in one forward pass. A member is drawn by **prioritized fictitious self-play**:
   weight ``(1 - p)^2 + floor`` where ``p`` is the learner's recent score against it (1 a game where the learner's
   seats averaged more than the member's, 0.5 a tie; an exponential average over its games), so the opponents that
   still beat it are met most.
3. **Rollouts**: at least ``rollout`` learner decisions, then every game in progress is finished (whole trajectories,
   undiscounted score: no bootstrapping); an env whose game ended after that plays its next game's moves as the
   mask's first legal action, unrecorded, until the rollout ends (the engine steps every env at once); each rollout
   deals every env afresh. A decision's reward is what its seat earned from it to its next decision (or the game's
   end), from the engine's per-seat rewards.

``tableenvs train GAME --players N --recipe league`` runs :func:`league` under ``--out``: ``clone.npz``, then
``league/model-<steps>.npz`` every ``chunk`` samples, ``league/progress.jsonl`` (one line per update: returns,
PFSP table, time split) and ``model.npz`` (float16 weights). A rerun continues from the newest export (the
population restarts from it and the heuristic). Throughput against the batched trainer on Python envs:
``benchmarks/league_throughput.py`` (docs/training.md).

Units: samples are the learner's decisions; times are CPU seconds of this process (``time.process_time``).
"""

from __future__ import annotations

import copy
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tableenvs.core.validation import check_at_least
from tableenvs.training.batched import BatchedTrainer
from tableenvs.training.batched_config import BatchedConfig
from tableenvs.training.league_start import (
    clone_heuristic_batched,
    engine_for,
    start_from_init,
)

__all__ = [
    "LEAGUE_PPO",
    "LeagueSettings",
    "LeagueTrainer",
    "check_league_game",
    "clone_heuristic_batched",
    "league",
]

#: PPO settings of the league (:class:`BatchedConfig` fields), the strong recipe's fine-tuning ones
#: (:data:`tableenvs.training.recipe.FINE_TUNE`) with a larger rollout: one engine of 256 envs at a time.
LEAGUE_PPO: dict[str, Any] = {
    "learning_rate": 2e-4,
    "clip_range": 0.1,
    "ent_coef": 0.0,
    "gamma": 1.0,
    "gae_lambda": 0.95,
    "epochs": 2,
    "rollout": 16384,
    "minibatch": 4096,
    "hidden": (128, 128),
    "value_warmup": 200_000,
}


@dataclass
class LeagueSettings:
    """The league's own settings (the PPO ones are a :class:`BatchedConfig`).

    ``num_envs``: games in the batched engine; ``self_play``: the share of games with the learner in every seat;
    ``snapshot_every``: samples between frozen copies of the learner joining the population; ``max_snapshots``:
    the most kept (the oldest leaves); ``priority_power``, ``priority_floor``: a member's weight is
    ``(1 - p)^power + floor``; ``score_memory``: the weight of a member's past games in ``p`` (an exponential
    average, per game)."""

    num_envs: int = 256
    self_play: float = 0.25
    snapshot_every: int = 1_000_000
    max_snapshots: int = 6
    priority_power: float = 2.0
    priority_floor: float = 0.05
    score_memory: float = 0.995
    heuristic: bool = True

    def __post_init__(self) -> None:
        check_at_least("num_envs", self.num_envs, 1)
        check_at_least("snapshot_every", self.snapshot_every, 1)
        check_at_least("max_snapshots", self.max_snapshots, 0)
        for name, low, high in (
            ("self_play", 0.0, 1.0),
            ("priority_power", 0.0, None),
            ("priority_floor", 0.0, None),
            ("score_memory", 0.0, 1.0),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
                raise ValueError(f"{name} must be a finite number, got {value!r}")
            if value < low or (high is not None and value > high):
                raise ValueError(f"{name} must be in [{low}, {high if high is not None else 'inf'}], got {value!r}")


def check_league_game(game: str) -> None:
    """A one-line ``ValueError`` if ``game`` lacks what the league needs: a batched engine and a batched heuristic
    (``GameSpec.batched``, ``GameSpec.batched_heuristic``)."""
    from tableenvs.core.registry import spec

    found = spec(game)
    missing = [name for name in ("batched", "batched_heuristic") if getattr(found, name) is None]
    if missing:
        raise ValueError(
            f"--recipe league needs a batched engine and a batched heuristic; {game}'s GameSpec names no "
            f"{' and no '.join(missing)} (try --recipe strong)"
        )


# ---------------------------------------------------------------------------------------------- the league


class _Snapshot:
    """A frozen copy of the learner's actor: greedy choices for a batch of rows (one forward pass)."""

    def __init__(self, actor: Any, scale: Any, name: str, derived: Any = None):
        self.actor = copy.deepcopy(actor).eval()
        self.derived = derived  # the derived inputs the actor reads after the observation, or None
        for parameter in self.actor.parameters():
            parameter.requires_grad_(False)
        self.scale = scale
        self.name = name

    def act(self, obs: np.ndarray, mask: np.ndarray, envs: np.ndarray) -> np.ndarray:
        import torch

        rows = obs if self.derived is None else self.derived.append(obs, mask)
        with torch.inference_mode():
            logits = self.actor(torch.from_numpy(rows) * self.scale).numpy()
        return np.where(mask != 0, logits, -np.inf).argmax(axis=1)


class LeagueTrainer(BatchedTrainer):
    """PPO (:class:`BatchedTrainer`'s networks and update) whose experience comes from one batched engine where the
    learner meets a population drawn by prioritized fictitious self-play; see the module docstring."""

    LEARNER = -1
    IDLE = -2

    def __init__(self, config: BatchedConfig, settings: LeagueSettings | None = None):
        check_league_game(config.game)
        if config.opponents is not None:
            raise ValueError("the league draws its own opponents: leave BatchedConfig.opponents None")
        self.settings = settings or LeagueSettings()
        super().__init__(config)
        import tableenvs.vector

        self.engine = engine_for(config.game, self.settings.num_envs, config.options)
        if (self.engine.obs_size, self.engine.num_actions) != (self.observation_size, self.num_actions):
            raise RuntimeError(f"{config.game}: the batched engine's sizes differ from the AEC env's (a bug)")
        players = self.num_players
        self.members: list[Any] = []
        self.member_names: list[str] = []
        if self.settings.heuristic:
            self._join(tableenvs.vector.batched_heuristic(self.engine), "heuristic")
        self._join(_Snapshot(self.actor, self._scale_t, "start", self.derived), "start")
        self.score = [0.5] * len(self.members)  # the learner's recent score against each member
        self.met = [0] * len(self.members)  # games against each member
        self.self_games = 0
        self._snapshots_made = 0
        self._next_snapshot = self.settings.snapshot_every
        self.role = np.full((self.settings.num_envs, players), self.IDLE, np.int64)
        self.times = {"engine": 0.0, "opponents": 0.0, "learner_act": 0.0, "bookkeeping": 0.0}

    def _make_envs(self) -> list[Any]:
        from tableenvs.core.registry import make_raw

        return [make_raw(self.config.game, **self.config.options)]  # sizes, input bounds, the export's header

    # ------------------------------------------------------------------ the population

    def _join(self, member: Any, name: str) -> None:
        self.members.append(member)
        self.member_names.append(name)

    def _snapshot(self) -> None:
        """A frozen copy of the learner joins the population (the oldest snapshot leaves past ``max_snapshots``)."""
        self._snapshots_made += 1
        name = f"snapshot@{self.samples}"
        snapshots = [i for i, m in enumerate(self.members) if isinstance(m, _Snapshot)]
        if len(snapshots) >= self.settings.max_snapshots and snapshots:
            drop = snapshots[0]
            for keep in (self.members, self.member_names, self.score, self.met):
                del keep[drop]
        if self.settings.max_snapshots > 0:
            self._join(_Snapshot(self.actor, self._scale_t, name, self.derived), name)
            self.score.append(0.5)
            self.met.append(0)

    def priorities(self) -> np.ndarray:
        """Each member's chance to be drawn for a table that is not self-play (PFSP weights, normalised)."""
        p = np.asarray(self.score, np.float64)
        weight = (1.0 - p) ** self.settings.priority_power + self.settings.priority_floor
        return weight / weight.sum()

    def _seat(self, envs: np.ndarray) -> None:
        """Draw the table of each env in ``envs`` (a new game there): self-play, or a member in 1..players-1 seats."""
        players = self.num_players
        if not self.members:
            self.role[envs] = self.LEARNER
            return
        probs = self.priorities()
        for env in envs:
            if self.rng.random() < self.settings.self_play:
                self.role[env] = self.LEARNER
                continue
            member = int(self.rng.choice(len(self.members), p=probs))
            count = int(self.rng.integers(1, players))
            seats = self.rng.permutation(players)[:count]
            self.role[env] = self.LEARNER
            self.role[env, seats] = member

    def _record(self, env: int, totals: np.ndarray) -> None:
        """A game of ``env`` ended with these per-seat totals: the returns and the member's score."""
        roles = self.role[env]
        learner = roles == self.LEARNER
        self.game_returns.extend(float(v) for v in totals[learner])
        if learner.all():
            self.self_games += 1
            return
        member = int(roles[~learner][0])
        self.opponent_returns.extend(float(v) for v in totals[~learner])
        mine, theirs = float(totals[learner].mean()), float(totals[~learner].mean())
        won = 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0
        memory = self.settings.score_memory
        self.score[member] = memory * self.score[member] + (1.0 - memory) * won
        self.met[member] += 1

    # ------------------------------------------------------------------ experience

    def collect(self, target: int | None = None) -> int:
        """At least ``config.rollout`` learner decisions from the batched engine, every game in progress then
        finished; the number of decisions in the buffer (as :meth:`BatchedTrainer.collect`). ``target`` is ignored
        (the last rollout of a run is whole too), so a run stops at the first update past its budget: the export a
        longer run made at ``S`` samples is what a run given the budget ``S`` ends with."""
        clock = time.process_time
        target = self.config.rollout
        engine, players, n = self.engine, self.num_players, self.settings.num_envs
        if self.samples >= self._next_snapshot:
            self._snapshot()
            self._next_snapshot += self.settings.snapshot_every
        began = clock()
        obs, mask = engine.reset([int(s) for s in self.rng.integers(2**62, size=n)])
        self.times["engine"] += clock() - began
        self._seat(np.arange(n))
        last = np.full((n, players), -1, np.int64)  # each seat's pending decision (buffer row)
        totals = np.zeros((n, players), np.float64)
        envs = np.arange(n)
        actions = np.zeros(n, np.int64)
        self._bounds = []
        self.game_returns = []
        self.opponent_returns = []
        count = 0
        times = self.times
        while True:
            t0 = clock()
            who = self.role[envs, engine.to_act]
            learner = np.flatnonzero(who == self.LEARNER)
            k = len(learner)
            if k:
                if count + k > self._capacity:
                    self._allocate(2 * self._capacity)
                rows = slice(count, count + k)
                self._obs[rows, : self.observation_size] = obs[learner]
                self._mask[rows] = mask[learner]
                if self.derived is not None:
                    self._obs[rows, self.observation_size :] = self.derived(obs[learner], mask[learner])
                seats = engine.to_act[learner]
                pending = last[learner, seats]
                linked = pending >= 0
                self._next[pending[linked]] = np.arange(count, count + k)[linked]
                last[learner, seats] = np.arange(count, count + k)
                self._reward[rows] = 0.0
                self._done[rows] = False
                self._next[rows] = -1
            t1 = clock()
            if k:
                chosen, logp = self._act(self._obs[rows], self._mask[rows])
                self._action[rows] = chosen
                self._logp[rows] = logp
                actions[learner] = chosen
                self._bounds.append((count, count + k))
                count += k
            t2 = clock()
            idle = who == self.IDLE
            if idle.any():
                actions[idle] = mask[idle].argmax(axis=1)  # the first legal action, unrecorded
            for member in np.unique(who[who >= 0]):
                rows_of = np.flatnonzero(who == member)
                actions[rows_of] = self.members[member].act(obs[rows_of], mask[rows_of], rows_of)
            t3 = clock()
            obs, mask, rewards, terminated, truncated = engine.step(actions)
            t4 = clock()
            waiting = last >= 0
            self._reward[last[waiting]] += rewards[waiting]
            totals += rewards
            ended = np.flatnonzero(terminated | truncated)
            for env in ended:
                if self.role[env, 0] == self.IDLE:
                    continue
                done_rows = last[env][last[env] >= 0]
                self._done[done_rows] = True
                last[env] = -1
                self.games += 1
                self._record(int(env), totals[env])
            totals[ended] = 0.0
            if len(ended):
                if count < target:
                    self._seat(ended)
                else:
                    self.role[ended] = self.IDLE
            t5 = clock()
            times["bookkeeping"] += (t1 - t0) + (t5 - t4)
            times["learner_act"] += t2 - t1
            times["opponents"] += t3 - t2
            times["engine"] += t4 - t3
            if count >= target and (self.role[:, 0] == self.IDLE).all():
                break
        self.samples += count
        return count

    def league_table(self) -> list[dict[str, Any]]:
        """The population now: each member's name, games met, the learner's score against it, its draw chance."""
        probs = self.priorities() if self.members else np.zeros(0)
        return [
            {"member": name, "games": met, "score": round(score, 4), "chance": round(float(p), 4)}
            for name, met, score, p in zip(self.member_names, self.met, self.score, probs, strict=True)
        ]


def _last_export(out: Path) -> tuple[Path, int] | None:
    found = [(int(m.group(1)), p) for p in out.glob("model-*.npz") if (m := re.fullmatch(r"model-(\d+)\.npz", p.name))]
    return (max(found)[1], max(found)[0]) if found else None


def league(
    game: str,
    out_dir: str | Path,
    *,
    options: dict[str, Any] | None = None,
    steps: int = 10_000_000,
    label_games: int = 3000,
    chunk: int = 1_000_000,
    seed: int = 0,
    settings: dict[str, Any] | None = None,
    league_settings: dict[str, Any] | None = None,
    init: str | Path | None = None,
    say: Callable[[str], None] = print,
) -> Path:
    """The whole recipe under ``out_dir`` (``clone.npz``, or ``init.npz`` with ``init``; ``league/``,
    ``model.npz``); returns ``model.npz``. ``settings``: :class:`BatchedConfig` fields over :data:`LEAGUE_PPO`;
    ``league_settings``: :class:`LeagueSettings` fields; ``init``: a numpy policy file to start from instead of the
    heuristic's clone (``label_games`` then unused). A rerun continues from the newest ``league/model-<steps>.npz``."""
    from tableenvs.policies.numpy_policy import convert_numpy_policy

    check_league_game(game)
    check_at_least("steps", steps, 1)
    check_at_least("chunk", chunk, 1)
    options = dict(options or {})
    began = time.process_time()
    out = Path(out_dir)
    if init is None:
        if (out / "init.npz").exists():
            raise ValueError(f"--out {str(out)!r} holds a league run started from --init: give the same --init again")
        start: Path = clone_heuristic_batched(game, out, options=options, label_games=label_games, seed=seed, say=say)
    else:
        start = start_from_init(game, out, options, init)
        say(f"starting from {init} (copied to {start}), no clone")
    work = out / "league"
    work.mkdir(parents=True, exist_ok=True)
    done = 0
    last = _last_export(work)
    if last is not None:
        start, done = last
        say(f"resuming from {start} ({done:,} steps done)")
    path = start
    if done < steps:
        config = BatchedConfig(
            game, samples=steps - done, options=options, start=str(start), seed=seed + done,
            **{**LEAGUE_PPO, **(settings or {})},
        )  # fmt: skip
        trainer = LeagueTrainer(config, LeagueSettings(**(league_settings or {})))
        exported = [done]

        def after(row: dict[str, float]) -> None:
            nonlocal path
            now = done + trainer.samples
            line: dict[str, Any] = {
                "steps": now,
                "mean_return": row["mean_return"],
                "opponent_return": row.get("opponent_return"),
                "self_play_games": trainer.self_games,
                "cpu_seconds": row["cpu_seconds"],
                "collect_seconds": row["collect_seconds"],
                "update_seconds": row["update_seconds"],
                "times": {key: round(value, 3) for key, value in trainer.times.items()},
                "league": trainer.league_table(),
            }
            with (work / "progress.jsonl").open("a") as log:
                log.write(json.dumps(line) + "\n")
            if now - exported[-1] >= chunk or trainer.samples >= config.samples:
                began_with = "clone the heuristic" if init is None else f"start from {Path(init).name}"
                meta = {"recipe": f"league ({began_with}, then PPO against a population)", "steps": now,
                        "seed": seed}  # fmt: skip
                path = trainer.export(work / f"model-{now:09d}.npz", meta=meta)
                exported.append(now)
                table = ", ".join(f"{m['member']} {m['score']:.2f}/{m['chance']:.2f}" for m in line["league"])
                say(f"exported {path}; league (score/chance): {table}")

        def progress(text: str) -> None:
            row = trainer.history[-1]
            warming = row["samples"] - row["decisions"] < config.value_warmup
            resumed = f"{done:,} steps before this run + " if done else ""
            say(resumed + text + (" (actor frozen)" if warming else ""))

        trainer.train(say=progress, after_update=after)
    final = convert_numpy_policy(path, out / "model.npz")
    say(f"wrote {final} ({time.process_time() - began:.0f} CPU s in all)")
    return final
