"""The search's rollouts as one batch in the game's compiled engine (``search:batched=1``), beside the flat search of
:mod:`tableenvs.policies.search`.

Where you are: shared plumbing (no game named here), used by :class:`tableenvs.policies.search.SearchPolicy` when
its options say ``batched=1``. It reaches the game only through its spec: the batched engine
(``tableenvs.vector.make``, which must offer ``load_env``) and, for heuristic rollouts, the batched heuristic
(``tableenvs.vector.batched_heuristic``); trained rollouts (``rollout=trained``) play the model shipped for the game
and options as a batched greedy player (``tableenvs.vector.batched_policy("trained", ...)``: ``NumpyPolicy``'s
choices, one forward pass per step for every row).

The algorithm is the paired root of the flat search (``root=paired``): sampled worlds (``env.sample_world(agent,
rng)``, so nothing the agent cannot know is read), every legal root action played in its own copy of each world, the
rest played by the rollout policy in every seat until the end of the scoring period (the first step that pays any
seat a nonzero reward, or the end of the game) or ``depth`` decisions (a cut-off rollout counts what it earned: no
``estimate`` hook is called, as it would need the Python world). The difference is where the rollouts run: each
world's game is put in one row of the batched engine per root action (``load_env``: what its state record holds, read
from the world), and all those rows are stepped together, the rollout policy choosing for all of them in
one compiled call. A row plays on from its world's own generator (the world's future draws), and the rollout policy
is deterministic or, when it has random choices (a batched policy with ``share_generator(rows, generator)``), draws
them in every copy of a world from one generator, ``numpy.random.default_rng(seed)``, ``seed`` drawn from the
search's generator right after the world, as ``root=paired`` seeds each world's rollouts. So the copies of a world
differ only by their root action (common random numbers); with a ``sims`` budget and a policy with random choices
the batched search samples the very worlds of ``root=paired``, plays the very rollouts and chooses the same action
(with a deterministic policy no seed is drawn: the worlds after the first differ from ``root=paired``'s, each
rollout still the one the flat search plays in its world). With uniformly random rollouts (``rollout=random``) the
copies of a world do not share their random choices.

The worlds go through the engine in chunks (about :data:`CHUNK_ROWS` rows: worlds times root actions), so that a
budget in milliseconds (``ms=T``) can stop between chunks; under such a budget the first chunk is the two worlds every
decision plays, and each later one is shrunk to the worlds that the time left allows at the cost per world measured so
far (a power of two, so that few engine sizes are made and kept).
``sims=N`` plays ``ceil(N / legal actions)`` worlds (at least 2), as ``root=paired`` does; ``z=X`` keeps the
rollout policy's own root choice unless another action beats it by more than ``X`` standard errors of the paired
gain. The action played: the highest mean value (ties: the lower id).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from tableenvs.core.registry import spec as game_spec
from tableenvs.core.table_env import TableEnv

#: rows (worlds x legal root actions) stepped together per chunk
CHUNK_ROWS = 128


def check_batched(name: str, rollout: str) -> None:
    """``ValueError`` (one line) unless game ``name`` has what ``search:batched=1`` with ``rollout`` needs."""
    game = game_spec(name)
    if game.batched is None:
        raise ValueError(f"search batched=1: {name} has no batched engine (its GameSpec names none in 'batched')")
    if rollout == "heuristic" and game.batched_heuristic is None:
        raise ValueError(
            f"search batched=1: {name} has no batched heuristic (GameSpec.batched_heuristic); use rollout=random"
        )
    if rollout not in ("heuristic", "random", "trained"):
        raise ValueError(
            f"search batched=1: rollout={rollout} cannot run in the batched engine (heuristic, random or trained)"
        )


class BatchedRollouts:
    """Paired rollouts of sampled worlds of one env's game, many at once in the game's batched engine."""

    def __init__(self, env: TableEnv, rollout: str, depth: int):
        self.name = env.metadata["name"]
        check_batched(self.name, rollout)
        self.rollout = rollout
        self.depth = depth
        self._env = env  # a trained rollout policy is checked against it (the model must fit its game and options)
        self._options: dict[str, Any] | None = None  # the env's options, read from its first state record
        self._engines: dict[int, tuple[Any, Any]] = {}  # rows -> (batched engine, batched rollout policy)
        self.world_seconds = 0.0  # CPU time of the last decision spent sampling and loading worlds
        self.rollout_seconds = 0.0  # ... and stepping them

    def _engine(self, rows: int) -> tuple[Any, Any]:
        import tableenvs.vector

        found = self._engines.get(rows)
        if found is None:
            assert self._options is not None
            games = tableenvs.vector.make(self.name, rows, **self._options, trusted=True)
            games.reset(seed=0)  # every row is replaced by a loaded world before it is stepped
            if self.rollout == "heuristic":
                player = tableenvs.vector.batched_heuristic(games)
            elif self.rollout == "trained":  # the shipped model, greedy: NumpyPolicy's choices, a batch at a time
                player = tableenvs.vector.batched_policy("trained", games, env=self._env)
            else:
                player = None
            found = self._engines[rows] = (games, player)
        return found

    def values(
        self, env: TableEnv, agent: str, legal: list[int], rng: np.random.Generator, worlds: int | None, deadline: float
    ) -> np.ndarray:
        """``(worlds, len(legal))``: the agent's value of each legal action in each of the worlds sampled (``worlds``
        of them, or as many as fit before ``deadline``, a ``time.process_time()``, when ``worlds`` is None; at least
        2 either way)."""
        count = len(legal)
        seat = env.agent_name_mapping[agent]
        if self._options is None:
            self._options = dict(env.get_state()["options"])
        per_chunk = max(1, CHUNK_ROWS // count)
        chunks: list[np.ndarray] = []
        done = 0
        per_world = 0.0  # CPU seconds per world so far
        self.world_seconds = self.rollout_seconds = 0.0
        while True:
            if worlds is not None:
                size = min(per_chunk, max(2, worlds) - done)
            else:
                now = time.process_time()
                left = deadline - now
                if done >= 2 and left <= 0:
                    break
                # the first chunk: the two worlds every decision plays (a world's cost is not known yet, and sampling
                # one can take milliseconds where the game constrains what others hold)
                size = 2 if per_world == 0 else int(min(per_chunk, max(1, left // per_world)))
                size = max(1 << (size.bit_length() - 1), 2 - done)  # a power of two: few engine sizes to keep
            if size <= 0:
                break
            start = time.process_time()
            chunks.append(self._chunk(env, agent, seat, legal, rng, size))
            done += size
            per_world = (per_world * (done - size) + (time.process_time() - start)) / done
        return np.concatenate(chunks)

    def _chunk(
        self, env: TableEnv, agent: str, seat: int, legal: list[int], rng: np.random.Generator, size: int
    ) -> np.ndarray:
        count = len(legal)
        rows = size * count
        start = time.process_time()
        games, player = self._engine(rows)
        share = getattr(player, "share_generator", None)  # a rollout policy with random choices
        for w in range(size):
            block = range(w * count, (w + 1) * count)
            games.load_env(block, env.sample_world(agent, rng))
            if share is not None:  # the world's rollouts draw from one seed, as root=paired's do
                share(block, np.random.default_rng(int(rng.integers(2**63))))
        loaded = time.process_time()
        self.world_seconds += loaded - start
        actions = np.tile(np.asarray(legal, np.int64), size)
        value = np.zeros(rows, np.float64)
        done = np.zeros(rows, np.bool_)
        envs = np.arange(rows, dtype=np.int64)
        for _ in range(self.depth):
            obs, mask, rewards, terminated, truncated = games.step(actions)
            value += np.where(done, 0.0, rewards[:, seat])
            done |= rewards.any(axis=1) | terminated | truncated
            if done.all():
                break
            if player is not None:
                actions = player.act(obs, mask, envs)
            else:  # uniform among each row's legal actions
                actions = np.argmax(np.where(mask != 0, rng.random(mask.shape), -1.0), axis=1)
        self.rollout_seconds += time.process_time() - loaded
        return value.reshape(size, count)


def paired_choice(values: np.ndarray, default: int | None, z: float, means: np.ndarray | None = None) -> int:
    """The column of highest mean value (ties: the first); with a ``default`` column and ``z > 0``, ``default`` unless
    the best beats it by more than ``z`` standard errors of the gain, world by world (as ``root=paired``).
    ``means``: ``values.mean(axis=0)`` if the caller has it already."""
    best = int(np.argmax(values.mean(axis=0) if means is None else means))
    if default is not None and z > 0 and best != default:
        gains = values[:, best] - values[:, default]
        error = gains.std(ddof=1) / math.sqrt(len(gains)) if len(gains) > 1 else math.inf
        if not gains.mean() > z * error:
            best = default
    return best
