"""Playing a tournament's games: seeds, one game, and batches of games for the backends.

Where you are: the evaluation package's game loop (see :mod:`tableenvs.evaluation` for the whole tournament).
A game depends only on ``(seed, game index, block size, duplicate)`` and the seating: results are identical for
any worker count, batch size or backend (policies must not carry state from one game to the next).

=================  =============================================================================================
Seeds              ``duplicate=False``: ``SeedSequence(seed, spawn_key=(g, 0))`` deals game ``g``
                   (``env.reset(seed=...)``) and ``SeedSequence(seed, spawn_key=(g, 1))`` seeds the policies.
                   ``duplicate=True``: every game of block ``b`` is dealt from ``SeedSequence(seed,
                   spawn_key=(b, 2))`` and its policies are seeded by ``SeedSequence(seed, spawn_key=(b, 3))``, so
                   the same policies in the same seats on the same deal play the same game, whatever else the
                   block holds. The policy seed is spawned into one generator per seat: the policy in seat ``s``
                   draws only from generator ``s``, so a seat's random choices stay aligned between the games of a
                   block until play diverges (common random numbers)
Result             the env's own :meth:`tableenvs.core.table_env.TableEnv.outcome`: final scores in the game's measure,
                   winners (by the rules, or the best score when the game was cut short), total rewards
=================  =============================================================================================
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tableenvs.core.registry import make_raw
from tableenvs.paths import is_model_path
from tableenvs.policies import make_policy, play_game

from .seating import SeatingPlan


@dataclass(frozen=True)
class PlayedGame:
    """One game a tournament played: its outcome, not its moves (those are :class:`tableenvs.play.records.GameRecord`).
    Tuples are by seat; ``entrants[seat]`` indexes the tournament's entrants."""

    index: int
    block: int
    entrants: tuple[int, ...]
    rewards: tuple[float, ...]  # total reward of each seat
    scores: tuple[float, ...]  # final score in the game's own measure (the total reward for games without one)
    winners: tuple[int, ...]  # seats; a win shared by w seats counts 1/w each
    ranks: tuple[int, ...]
    truncated: bool
    decisions: int

    @classmethod
    def from_outcome(cls, index: int, block_size: int, entrants: Any, outcome: Any, decisions: int) -> PlayedGame:
        """Game ``index`` (in blocks of ``block_size`` seatings; ``entrants`` by seat, any ints) as the env's
        ``outcome()`` tells it."""
        return cls(
            index=index,
            block=index // block_size,
            entrants=tuple(int(e) for e in entrants),
            rewards=outcome.returns,
            scores=outcome.scores,
            winners=outcome.winners,
            ranks=outcome.ranks(),
            truncated=outcome.truncated,
            decisions=decisions,
        )


#: The 0.1 name of :class:`PlayedGame`, kept until 0.2 (it was easy to confuse with
#: :class:`tableenvs.play.records.GameRecord`, the step-by-step record of one game).
GameRecord = PlayedGame


def game_seeds(seed: int, game_index: int, block_size: int, duplicate: bool) -> tuple[int, np.random.SeedSequence]:
    """``(deal seed, policy seed sequence)`` of game ``game_index``; a pure function of its arguments."""
    if duplicate:
        block = game_index // block_size
        deal_key, policy_key = (block, 2), (block, 3)
    else:
        deal_key, policy_key = (game_index, 0), (game_index, 1)
    deal = np.random.SeedSequence(seed, spawn_key=deal_key).generate_state(2, np.uint32)
    return int(deal[0]) << 32 | int(deal[1]), np.random.SeedSequence(seed, spawn_key=policy_key)


class SeatRng:
    """A policy that draws from its seat's own generator, whatever generator the game loop passes."""

    def __init__(self, policy: Any, rng: np.random.Generator):
        self.policy, self.rng = policy, rng

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        return self.policy.act(observation, action_mask, self.rng)


def play_planned_game(
    raw_env: Any, policies: Sequence[Any], plan: SeatingPlan, game_index: int, seed: int, duplicate: bool
) -> PlayedGame:
    """Play game ``game_index`` of the plan on the raw env, ``policies[entrant]`` in each entrant's seats."""
    entrants = plan.seating(game_index)
    deal_seed, policy_seed = game_seeds(seed, game_index, plan.size, duplicate)
    seat_rngs = [np.random.default_rng(child) for child in policy_seed.spawn(len(entrants))]
    seats = [SeatRng(policies[e], r) for e, r in zip(entrants, seat_rngs, strict=True)]
    _, decisions = play_game(raw_env, seats, seed=deal_seed, rng=seat_rngs[0])
    return PlayedGame.from_outcome(game_index, plan.size, entrants, raw_env.outcome(), decisions)


@dataclass(frozen=True)
class Batch:
    """Games for one worker call: everything needed to rebuild the env and the policies there."""

    env: str
    options: dict[str, Any]
    specs: tuple[Any, ...]
    deterministic: bool
    torch_threads: int
    seed: int
    duplicate: bool
    plan: SeatingPlan
    games: tuple[int, ...]
    trust_models: bool = False  # load SB3 .zip policies (pickles) in the worker too
    engine: str = "aec"  # "batched": played by evaluation.batched.play_batched, as rows of the game's batched engine


#: ``(key, raw env, policies)`` of the last batch this process played, reused by the next batch with the same key.
_LAST_SETUP: tuple[Any, Any, list[Any]] | None = None


def play_batch(batch: Batch) -> list[PlayedGame]:
    """Worker entry point: build the env and the policies (or reuse the last batch's), play the batch's games."""
    global _LAST_SETUP
    key = _setup_key(batch)
    if key is not None and _LAST_SETUP is not None and _LAST_SETUP[0] == key:
        _, raw_env, policies = _LAST_SETUP
    else:
        raw_env = make_raw(batch.env, **batch.options)
        policies = build_policies(
            batch.specs, raw_env, batch.deterministic, batch.torch_threads, trust_models=batch.trust_models
        )
        _LAST_SETUP = None if key is None else (key, raw_env, policies)
    limit_torch_threads(batch.torch_threads)
    return [play_planned_game(raw_env, policies, batch.plan, g, batch.seed, batch.duplicate) for g in batch.games]


def limit_torch_threads(threads: int) -> None:
    """Run torch (when a model has loaded it) on ``threads`` intra-op threads.

    Small policy networks evaluated one observation at a time gain nothing from more threads, and on a busy
    machine extra threads cost far more than they give (see ``docs/benchmarks.md``, Evaluation).
    """
    torch = sys.modules.get("torch")  # None: torch was never imported (or its import is blocked)
    if torch is not None and torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


def build_policies(
    specs: Sequence[Any], raw_env: Any, deterministic: bool, torch_threads: int, *, trust_models: bool = False
) -> list[Any]:
    """One policy per spec (specs equal by name or path, or the same object, share one policy); SB3 ``.zip`` files
    only with ``trust_models`` (:func:`tableenvs.policies.make_policy`)."""
    built: dict[Any, Any] = {}
    policies = []
    for spec in specs:
        key = str(spec) if isinstance(spec, (str, Path)) else id(spec)
        if key not in built:
            built[key] = make_policy(spec, raw_env, deterministic=deterministic, trust_models=trust_models)
            limit_torch_threads(torch_threads)
        policies.append(built[key])
    return policies


def _setup_key(batch: Batch) -> Any:
    """What identifies a batch's env and policies, or None when they must be built afresh.

    Only specs given by name or path qualify (an object arriving in a worker is a new copy each batch); a saved
    model's key includes its file's modification time and size, so a model saved again is loaded again.
    """
    files = []
    for spec in batch.specs:
        if not isinstance(spec, (str, Path)):
            return None
        if is_model_path(spec):
            try:
                stat = Path(spec).stat()
            except OSError:
                return None
            files.append((str(Path(spec).resolve()), stat.st_mtime_ns, stat.st_size))
    try:
        options = json.dumps(batch.options, sort_keys=True)
    except (TypeError, ValueError):
        return None
    return (batch.env, options, tuple(map(str, batch.specs)), tuple(files), batch.deterministic, batch.trust_models)
