"""Test support: positions of real Rummikub games (observations and masks of seats of heuristic games).

You are in test code; unlike ``rummikub_support.py`` this plays the package's games (the heuristic uses the solver).
Also games under way, at chosen kinds of positions, for the batched engine's ``load_state`` tests.
"""

from __future__ import annotations

import numpy as np


def heuristic_decisions(count: int, players: int = 4, keep=None) -> list[tuple[np.ndarray, np.ndarray]]:
    """The first ``count`` (observation, mask) pairs of games of heuristics (deals 0, 1, ...): every decision, or
    those that ``keep(observation, mask)`` accepts."""
    import tableenvs
    from tableenvs.rummikub.agents import HeuristicPolicy

    raw = tableenvs.make_raw("rummikub_v0", num_players=players)
    heuristic = HeuristicPolicy(raw)
    found: list[tuple[np.ndarray, np.ndarray]] = []
    seed = 0
    while len(found) < count:
        raw.reset(seed=seed)
        seed += 1
        while not (raw.terminations[raw.agent_selection] or raw.truncations[raw.agent_selection]):
            view = raw.observe(raw.agent_selection)
            if keep is None or keep(view["observation"], view["action_mask"]):
                found.append((view["observation"].copy(), view["action_mask"].copy()))
            raw.step(heuristic.act(view["observation"], view["action_mask"], None))
    return found[:count]


DRAW = 54  # draw one tile (a pass once the pool is empty)
#: What each of :func:`positions_under_way` waits for once its random number of steps is played, in turn: the start
#: of a turn, the middle of one (tiles staged), a pool of at most 4 tiles (its end), an empty pool with passes in a row.
KINDS = ("start", "middle", "middle", "late", "start", "middle", "passes")


def _reached(kind: str, env) -> bool:
    game = env.game
    if kind == "start":
        return not game.staged.any()
    if kind == "middle":
        return bool(game.staged.any())
    if kind == "late":
        return 0 < game.pool_size <= 4
    return game.pool_size == 0 and game.passes > 0


def positions_under_way(options: dict, count: int, seed: int) -> list:
    """``count`` raw ``rummikub_v0`` envs mid-game (env ``i`` reset with ``seed + i``): random legal play for a random
    number of steps and then on until the position's kind (``KINDS``, in turn) is reached; a game that ends first is
    reset (its next game goes on); a seed that never reaches its kind is skipped. Uniform random play goes out with
    20-40 tiles left in the pool, so the players of the late kinds draw whenever they may (nine times in ten) to reach
    its end."""
    import tableenvs

    rng = np.random.default_rng(seed)
    envs: list = []
    i = 0
    while len(envs) < count:
        kind = KINDS[i % len(KINDS)]
        env = tableenvs.make_raw("rummikub_v0", **options)
        env.reset(seed=seed + i)
        i += 1
        least = int(rng.integers(0, 250))
        drawer = kind in ("late", "passes")
        for step in range(4000):
            if step >= least and _reached(kind, env):
                envs.append(env)
                break
            legal = env.legal_actions()
            draw = drawer and legal[-1] == DRAW and rng.random() < 0.9
            env.step(DRAW if draw else int(rng.choice(legal)))
            if any(env.terminations.values()) or any(env.truncations.values()):
                env.reset()
    return envs
