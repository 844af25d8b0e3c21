"""The differential check of a batched engine against the AEC env it claims to be, for any game (no game named).

``play_both(name, options, num_envs, seed, ...)``: ``num_envs`` batched envs seeded ``seed .. seed + num_envs - 1``
and as many raw AEC envs (``tableenvs.make_raw``) reset with the same seeds, driven by the same random legal
actions, must agree on the seat to act, the observation, the mask and every seat's reward at every step; an AEC
env whose game ended is reset without a seed (its generator continues, as the batched env's does) and play goes on
until every env has finished ``games`` games and played ``extra`` steps of the next; an engine with
``last_results`` must give each ended game's ``outcome()`` (returns, scores, winners). Every ``state_every`` steps the
batched ``get_state(i)`` of a few envs must equal the AEC record (its event log aside, unless ``event_log``: an
engine that replays its games keeps one). ``watch(env)`` sees every AEC env before each step (to count what was
played) and ``finish(batched, envs)`` both sides at the end (for checks of the final positions).

``seeded_pair(name, options, num_envs, seed)``: the batched envs and the raw AEC envs ``play_both`` starts from.
``same_games_from_seeds(name, options, steps)``: a sequence of seeds (one repeated) and ``trusted=True`` play the same
games as the checked engine. ``state_plays_on(name, options, warmup, steps)``: ``get_state(1)`` after ``warmup`` random
steps opens in the AEC env, which then gives env 1's observation, mask and rewards through the game's end and into the
next. ``paired_rollout_values(env, legal, rng, worlds, flat, seeded)``: the Python side of the batched search's check,
``root=paired``'s rollouts of sampled worlds. ``sampled_worlds_in_blocks(batched, envs, rng, ...)``: a search's use of
``load_env``/``load_state``, one sampled world per env loaded into a block of rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import tableenvs
import tableenvs.vector
from tableenvs.core.table_env import TableEnv


def seeded_pair(name: str, options: dict[str, Any], num_envs: int, seed: int) -> tuple[Any, list[Any], Any, Any]:
    """``(batched, raws, obs, mask)``: ``num_envs`` batched envs reset with ``seed`` (env ``i`` gets ``seed + i``) and
    as many raw AEC envs reset with ``seed + i``, the batched reset's observations and masks."""
    batched = tableenvs.vector.make(name, num_envs, **options)
    raws = [tableenvs.make_raw(name, **options) for _ in range(num_envs)]
    for i, env in enumerate(raws):
        env.reset(seed=seed + i)
    obs, mask = batched.reset(seed)
    return batched, raws, obs, mask


def play_both(
    name: str,
    options: dict[str, Any],
    num_envs: int = 64,
    seed: int = 0,
    *,
    games: int = 1,
    extra: int = 10,
    state_every: int = 23,
    state_envs: int = 4,
    action_seed: int = 1,
    event_log: bool = False,
    watch: Callable[[Any], None] | None = None,
    finish: Callable[[Any, list[Any]], None] | None = None,
) -> dict[str, int]:
    """Play both sides in lockstep and assert they agree; returns counts (steps, games ended, states compared)."""
    batched, raws, obs, mask = seeded_pair(name, options, num_envs, seed)
    assert obs.dtype == np.float32 and obs.shape == (num_envs, batched.obs_size)
    assert mask.dtype == np.int8 and mask.shape == (num_envs, batched.num_actions)
    rng = np.random.default_rng(action_seed)
    results = getattr(batched, "last_results", None)
    ended = np.zeros(num_envs, np.int64)
    after = np.zeros(num_envs, np.int64)
    steps = states = 0
    while not ((ended >= games) & (after >= extra)).all():
        to_act = batched.to_act
        actions = np.empty(num_envs, np.int64)
        for i, env in enumerate(raws):
            same_position(env, int(to_act[i]), obs[i], mask[i], f"env {i} step {steps}")
            if watch is not None:
                watch(env)
            actions[i] = rng.choice(np.flatnonzero(mask[i]))
        obs, mask, rewards, terminated, truncated = batched.step(actions)
        assert rewards.dtype == np.float32 and rewards.shape == (num_envs, batched.num_players)
        steps += 1
        for i, env in enumerate(raws):
            where = f"env {i} step {steps}"
            done_here = same_step(env, int(actions[i]), rewards[i], terminated[i], truncated[i], where)
            if any(done_here):
                ended[i] += 1
                if results is not None:  # the engine's record of the ended game: the AEC env's outcome()
                    check_results(results, i, env.outcome(), f"env {i} step {steps}")
                env.reset()
            elif ended[i] >= games:
                after[i] += 1
            if i < state_envs and steps % state_every == 0:
                record = env.get_state()
                if not event_log:
                    record["event_log"] = []
                assert batched.get_state(i) == record, f"env {i} step {steps}: get_state"
                states += 1
    if finish is not None:
        finish(batched, raws)
    return {"steps": steps, "games": int(ended.sum()), "states": states}


def same_position(env: TableEnv, to_act: int, obs: np.ndarray, mask: np.ndarray, where: str) -> None:
    """The AEC ``env`` and one batched row agree before a step: the seat to act, its observation, its mask."""
    agent = env.agent_selection
    assert to_act == env.agent_name_mapping[agent], f"{where}: seat to act"
    seen = env.observe(agent)
    differs = np.flatnonzero(seen["observation"] != obs)
    assert differs.size == 0, f"{where}: observation entries {differs.tolist()} differ"
    assert np.array_equal(seen["action_mask"], mask), f"{where}: mask"


def same_step(
    env: TableEnv, action: int, rewards: np.ndarray, terminated: Any, truncated: Any, where: str
) -> tuple[bool, bool]:
    """Step the AEC ``env`` with the ``action`` its batched row took: every seat's reward and the game end
    (terminated, truncated) agree with the row's. Returns the env's (terminated, truncated)."""
    env.step(action)
    expected = np.array([env.rewards[agent] for agent in env.possible_agents], np.float32)
    assert np.array_equal(expected, rewards), f"{where}: rewards {expected} != {rewards}"
    done = all(env.terminations.values()), all(env.truncations.values())
    assert (bool(terminated), bool(truncated)) == done, f"{where}: game end"
    return done


def check_results(results: Callable[[Any], Any], env: int, outcome: Any, where: str) -> None:
    """The engine's ``last_results([env])`` equal ``outcome`` (the AEC env's ``outcome()`` of the same game): every
    seat's total reward and final score exactly, and the winners where the rules name them (a game not cut short)."""
    returns, scores, winners = results([env])
    assert tuple(float(x) for x in returns[0]) == outcome.returns, f"{where}: returns {returns[0]} {outcome.returns}"
    assert tuple(float(x) for x in scores[0]) == outcome.scores, f"{where}: scores {scores[0]} {outcome.scores}"
    if not outcome.truncated:
        assert tuple(np.flatnonzero(winners[0]).tolist()) == outcome.winners, f"{where}: winners {winners[0]}"


def same_games_from_seeds(name: str, options: dict[str, Any], steps: int) -> None:
    """Four envs seeded ``[5, 900, 17, 5]``, checked and trusted, driven alike for ``steps`` steps: both engines give
    the same arrays at every step, and envs 0 and 3 (the same seed, the same actions) the same game."""
    seeds = [5, 900, 17, 5]
    checked = tableenvs.vector.make(name, 4, **options)
    trusted = tableenvs.vector.make(name, 4, trusted=True, **options)
    a, b = checked.reset(seeds), trusted.reset(seeds)
    rng = np.random.default_rng(3)
    for _ in range(steps):
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
        assert np.array_equal(a[0][0], a[0][3])  # the same seed, the same game
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in a[1]])
        actions[3] = actions[0]
        a, b = checked.step(actions), trusted.step(actions)
        assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def state_plays_on(name: str, options: dict[str, Any], warmup: int, steps: int = 150) -> None:
    """Three envs seeded from 42 play ``warmup`` random steps; env 1's ``get_state`` opened in the AEC env then gives
    env 1's observation, mask and every seat's rewards for ``steps`` more steps (the AEC env reset where its game
    ended)."""
    games = tableenvs.vector.make(name, 3, **options)
    obs, mask = games.reset(42)
    rng = np.random.default_rng(0)
    for _ in range(warmup):
        obs, mask, *_ = games.step([rng.choice(np.flatnonzero(m)) for m in mask])
    env = TableEnv.from_state(games.get_state(1))
    for _ in range(steps):
        agent = env.agent_selection
        assert np.array_equal(env.observe(agent)["observation"], obs[1])
        assert np.array_equal(env.observe(agent)["action_mask"], mask[1])
        actions = [rng.choice(np.flatnonzero(m)) for m in mask]
        obs, mask, rewards, terminated, _ = games.step(actions)
        env.step(int(actions[1]))
        assert [env.rewards[a] for a in env.possible_agents] == rewards[1].tolist()
        if terminated[1]:
            env.reset()


def loaded_rows_play_on(
    batched, envs: list[TableEnv], rows: list[int], rng: np.random.Generator, games: int = 1
) -> int:
    """Step ``rows`` of ``batched`` (loaded from ``envs`` by ``load_state``/``load_env``) and the raw ``envs`` alike,
    random legal actions from ``rng`` in every row, until every env has ended ``games`` games: the same seat to act,
    observation, mask, rewards and game end (terminated and truncated) at every step. Returns the steps."""
    obs, mask = batched.obs, batched.mask
    ended = np.zeros(len(envs), np.int64)
    steps = 0
    while (ended < games).any():
        actions = np.zeros(batched.num_envs, np.int64)
        for env, row in zip(envs, rows, strict=True):
            same_position(env, int(batched.to_act[row]), obs[row], mask[row], f"row {row} step {steps}")
        for row in range(batched.num_envs):
            actions[row] = rng.choice(np.flatnonzero(mask[row]))
        obs, mask, rewards, terminated, truncated = batched.step(actions)
        steps += 1
        for i, (env, row) in enumerate(zip(envs, rows, strict=True)):
            where = f"row {row} step {steps}"
            done = same_step(env, int(actions[row]), rewards[row], terminated[row], truncated[row], where)
            if any(done):
                ended[i] += 1
                env.reset()  # no seed: the env's generator goes on, as the batched row's does
    return steps


def paired_rollout_values(env: Any, legal: Any, rng: np.random.Generator, worlds: int, flat: Any, seeded: bool) -> Any:
    """``search:root=paired``'s loop in Python, what the batched search's rollouts must equal: ``worlds`` worlds
    sampled for the agent to act from ``rng``, each legal action of ``legal`` simulated by ``flat`` (a flat
    ``SearchPolicy``) in a copy of each; with ``seeded`` (a rollout policy with random choices) a seed is drawn from
    ``rng`` after each world and every copy of it draws from ``default_rng(seed)``, else from ``default_rng(0)``.
    Returns the values, ``(worlds, len(legal))``."""
    agent = env.agent_selection
    rows = []
    for _ in range(worlds):
        world = env.sample_world(agent, rng)
        seed = int(rng.integers(2**63)) if seeded else 0
        rows.append([flat._simulate(world.clone(), agent, action, np.random.default_rng(seed)) for action in legal])
    return np.array(rows)


def sampled_worlds_in_blocks(
    batched: Any, envs: list[Any], rng: np.random.Generator, copies: int = 3, via: str = "env"
) -> tuple[list[Any], list[int]]:
    """A search's use of a batched engine: for each env of ``envs`` (in order) a world sampled for the agent to act
    from ``rng`` is loaded into the block of ``copies`` rows ``copies * e .. copies * e + copies - 1`` (``via``
    ``"env"``: ``load_env(rows, world)``; ``"state"``: ``load_state(rows, world.get_state())``). Returns a clone of
    the world for every row and the rows, in order (for :func:`loaded_rows_play_on`)."""
    worlds, rows = [], []
    for e, env in enumerate(envs):
        world = env.sample_world(env.agent_selection, rng)
        block = list(range(copies * e, copies * e + copies))
        if via == "env":
            batched.load_env(block, world)
        else:
            batched.load_state(block, world.get_state())
        worlds += [world.clone() for _ in block]
        rows += block
    return worlds, rows
