"""The solver's cost does not grow with ``min_initial``, and stays exact there.

Before: the opening points were part of every state of the sweep, so an 80-tile opening rack at
``min_initial=300`` tried to allocate 2 GiB (a random self-play step took 4.6 s and 1.55 GB). Now the mask
(``playable`` and the engine's reused sweep) keeps points out of the states and adds them in the backward
walk, and ``solve`` keeps only the Pareto front of points and score per position. Checked here: the buffers
the sweep allocates on 80-tile opening racks with both jokers, at ``min_initial`` up to past the most any
rack can score; and the answers on such positions against the integer programme of ``ilp_oracle.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from ilp_oracle import Oracle

import tableenvs.rummikub.solver as solver_module
import tableenvs.rummikub.sweep as sweep_module
from tableenvs.rummikub import JOKER, TILE_TYPES, TILE_VALUES, is_valid_play, playable, solve

EMPTY = np.zeros(TILE_TYPES, dtype=np.int64)
BY_VALUE = 128 * TILE_VALUES + 1  # the "value" objective's lexicographic weights (as the differential test)
BY_TILES = 4096 + TILE_VALUES
BUFFER_LIMIT = 128 * 2**20  # bytes of sweep buffers for one 80-tile opening call (about 60 MB measured)


def big_rack(seed: int, size: int = 80) -> np.ndarray:
    """``size`` tiles of the 106, both jokers among them."""
    rng = np.random.default_rng(seed)
    numbered = np.repeat(np.arange(JOKER), 2)
    rack = np.bincount(rng.choice(numbered, size - 2, replace=False), minlength=TILE_TYPES)
    rack[JOKER] = 2
    return rack


class SweepMeter:
    """Records, per sweep the solver runs, the states kept and the bytes of the buffers it returned."""

    def __init__(self, monkeypatch):
        self.sweeps: list[tuple[int, int]] = []
        original = sweep_module.run

        def metered(*args):
            result = original(*args)
            buffers = [part for part in result if isinstance(part, np.ndarray)]
            self.sweeps.append((int(result[0]), sum(b.nbytes for b in buffers)))
            return result

        monkeypatch.setattr(sweep_module, "run", metered)

    def take(self) -> tuple[int, int]:
        """(states, bytes) of the biggest sweep since the last call."""
        states = max(s for s, _ in self.sweeps)
        size = max(b for _, b in self.sweeps)
        self.sweeps.clear()
        return states, size


@pytest.fixture(scope="module")
def oracle() -> Oracle:
    return Oracle()


@pytest.mark.parametrize("seed", [0, 1])
def test_80_tile_opening_rack_buffers_do_not_grow_with_min_initial(monkeypatch, seed):
    meter = SweepMeter(monkeypatch)
    rack = big_rack(seed)
    solver_module._arrangement.cache_clear()  # the empty table's arrangement is a sweep of its own
    staged = EMPTY.copy()
    staged[int(np.flatnonzero(rack[:JOKER])[0])] = 1
    mask_states = {}
    solve_states = {}
    for min_initial in (0, 30, 300, 754, 755, 10**9):
        playable(EMPTY, rack, staged, opening=True, min_initial=min_initial)
        mask_states[min_initial], size = meter.take()
        assert size < BUFFER_LIMIT, (min_initial, size)
        solve(EMPTY, rack, objective="value", opening=True, min_initial=min_initial)
        solve_states[min_initial], size = meter.take()
        assert size < BUFFER_LIMIT, (min_initial, size)
    # the mask's sweep does not depend on min_initial at all; solve's Pareto fronts stay close to it
    assert len(set(mask_states.values())) == 1, mask_states
    assert max(solve_states.values()) <= 2 * solve_states[0], solve_states


def test_engine_step_at_high_min_initial_is_cheap(monkeypatch):
    """The environment's path: a random 2-player game at ``min_initial=300`` with penalty draws (big racks)."""
    import tableenvs

    meter = SweepMeter(monkeypatch)
    env = tableenvs.make_raw("rummikub_v0", num_players=2, min_initial=300, strict_commit=False)
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    biggest_rack = 0
    for _ in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        biggest_rack = max(biggest_rack, int(env.game.racks.sum(axis=1).max()))
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    assert biggest_rack >= 30
    assert meter.sweeps and max(b for _, b in meter.sweeps) < BUFFER_LIMIT


def most_opening_points(oracle, rack) -> int:
    """The most points an opening from ``rack`` can make, by bisection on the ILP's feasibility."""
    low, high = 0, int(rack[:JOKER] @ np.array([t % 13 + 1 for t in range(JOKER)])) + 13 * int(rack[JOKER])
    if oracle.best(EMPTY, rack, BY_TILES, opening=True, min_initial=0)[0] is None:
        return -1
    while low < high:  # invariant: low is reachable, high + 1 is not
        middle = (low + high + 1) // 2
        if oracle.best(EMPTY, rack, BY_TILES, opening=True, min_initial=middle)[0] is None:
            high = middle - 1
        else:
            low = middle
    return low


@pytest.mark.parametrize(("seed", "size"), [(10, 80), (11, 80), (12, 40), (13, 30)])
def test_big_openings_at_high_min_initial_match_ilp(oracle, seed, size):
    rack = big_rack(seed, size)
    most = most_opening_points(oracle, rack)
    assert most > 100
    rng = np.random.default_rng(seed)
    staged = EMPTY.copy()
    staged[rng.choice(np.flatnonzero(rack[:JOKER]), 2, replace=False)] = 1
    for min_initial in (300, most - 12, most, most + 1):
        where = f"rack={rack.tolist()} min_initial={min_initial} (most {most})"
        for objective, weights in (("value", BY_VALUE), ("tiles", BY_TILES)):
            solution = solve(EMPTY, rack, objective=objective, opening=True, min_initial=min_initial)
            expected, _ = oracle.best(EMPTY, rack, weights, opening=True, min_initial=min_initial)
            if solution is None:
                assert expected is None, where
                continue
            assert int(solution.played @ weights) == expected, (objective, where)
            assert sum(m.value for m in solution.opening_melds) >= min_initial, where
            assert is_valid_play(EMPTY, rack, solution.played, opening=True, min_initial=min_initial)
        assert (solve(EMPTY, rack, opening=True, min_initial=min_initial) is None) == (min_initial > most), where
        mask = playable(EMPTY, rack, staged, opening=True, min_initial=min_initial)
        expected_mask = oracle.playable(EMPTY, rack, staged, opening=True, min_initial=min_initial)
        assert np.array_equal(mask, expected_mask), where
        # the engine's reused sweep, asked for a grown staged set, agrees with a fresh public call
        turn = solver_module._TurnSweep()
        turn.legal(EMPTY, rack, EMPTY.copy(), True, min_initial)
        reused, staged_is_play = turn.legal(EMPTY, rack, staged, True, min_initial)
        assert np.array_equal(reused, mask), where
        assert staged_is_play == is_valid_play(EMPTY, rack, staged, opening=True, min_initial=min_initial)
