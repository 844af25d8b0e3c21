"""The differential check of a batched engine against the AEC env it claims to be, for any game (no game named).

``play_both(name, options, num_envs, seed, ...)``: ``num_envs`` batched envs seeded ``seed .. seed + num_envs - 1``
and as many raw AEC envs (``tableenvs.make_raw``) reset with the same seeds, driven by the same random legal
actions, must agree on the seat to act, the observation, the mask and every seat's reward at every step; an AEC
env whose game ended is reset without a seed (its generator continues, as the batched env's does) and play goes on
until every env has finished ``games`` games and played ``extra`` steps of the next. Every ``state_every`` steps the
batched ``get_state(i)`` of a few envs must equal the AEC record (its event log aside, unless ``event_log``: an
engine that replays its games keeps one). ``watch(env)`` sees every AEC env before each step (to count what was
played) and ``finish(batched, envs)`` both sides at the end (for checks of the final positions).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import tableenvs
import tableenvs.vector


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
    batched = tableenvs.vector.make(name, num_envs, **options)
    raws = [tableenvs.make_raw(name, **options) for _ in range(num_envs)]
    for i, env in enumerate(raws):
        env.reset(seed=seed + i)
    obs, mask = batched.reset(seed)
    assert obs.dtype == np.float32 and obs.shape == (num_envs, batched.obs_size)
    assert mask.dtype == np.int8 and mask.shape == (num_envs, batched.num_actions)
    rng = np.random.default_rng(action_seed)
    ended = np.zeros(num_envs, np.int64)
    after = np.zeros(num_envs, np.int64)
    steps = states = 0
    while not ((ended >= games) & (after >= extra)).all():
        to_act = batched.to_act
        actions = np.empty(num_envs, np.int64)
        for i, env in enumerate(raws):
            agent = env.agent_selection
            assert to_act[i] == env.agent_name_mapping[agent], f"env {i} step {steps}: seat to act"
            seen = env.observe(agent)
            differs = np.flatnonzero(seen["observation"] != obs[i])
            assert differs.size == 0, f"env {i} step {steps}: observation entries {differs.tolist()} differ"
            assert np.array_equal(seen["action_mask"], mask[i]), f"env {i} step {steps}: mask"
            if watch is not None:
                watch(env)
            actions[i] = rng.choice(np.flatnonzero(mask[i]))
        obs, mask, rewards, terminated, truncated = batched.step(actions)
        assert rewards.dtype == np.float32 and rewards.shape == (num_envs, batched.num_players)
        steps += 1
        for i, env in enumerate(raws):
            env.step(int(actions[i]))
            expected = np.array([env.rewards[agent] for agent in env.possible_agents], np.float32)
            assert np.array_equal(expected, rewards[i]), f"env {i} step {steps}: rewards {expected} != {rewards[i]}"
            done_here = all(env.terminations.values()), all(env.truncations.values())
            assert (bool(terminated[i]), bool(truncated[i])) == done_here, f"env {i} step {steps}: game end"
            if any(done_here):
                ended[i] += 1
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
