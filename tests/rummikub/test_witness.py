"""Plays onto big tables answered by searches instead of a sweep (``kernel.witness``).

Once a sweep of a play onto the table was big (``_SEARCH_STATES``; 0 in these tests: every table), the engine's
``TurnSweep`` answers a question by depth-first searches on the sweep's own transitions: per rack type (the joker
too) a path using one more tile of it, and the commit check as the first path in sweep order with every cell at
table + staged (which is also the arrangement to publish), falling back to the sweep when a question's searches run
out of their budget. Every answer must equal a fresh sweep's (``_playable_and_exact``, which the ILP differential
tests tie to the oracle), the arrangement must be the table's own (``_arranged``), whether the searches answer or
the fallback does, over growing staged sets on the tail positions (both jokers on big tables) and random ones.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_rewalk import tail_and_random_positions

from tableenvs.rummikub import sweep, turn_sweep
from tableenvs.rummikub.solver import TurnSweep, _arranged, _playable_and_exact


def play_turns(rng, positions, turn: TurnSweep) -> tuple[int, int]:
    """Growing staged sets (now and then one the mask refuses) on each position; returns (questions searched,
    questions swept)."""
    searched = swept = 0
    for table, rack in positions:
        staged = np.zeros(53, np.int64)
        while True:
            mask, exact = turn.legal(table, rack, staged, False, 30)
            fresh_mask, fresh_exact = _playable_and_exact(table, rack, staged, False, 30)
            assert np.array_equal(mask, fresh_mask)
            if staged.any():
                assert exact == fresh_exact
                if exact:
                    assert turn.played_arrangement(table, rack, staged, False, 30) == _arranged(table + staged)
            if turn._searching:
                searched += 1
            else:
                swept += 1
            choices = np.flatnonzero(mask) if rng.random() < 0.85 else np.flatnonzero(rack > staged)
            if choices.size == 0:
                break
            staged[rng.choice(choices)] += 1
    return searched, swept


@pytest.mark.parametrize("seed", range(6))
def test_searched_answers_equal_a_fresh_sweep(seed, monkeypatch):
    monkeypatch.setattr(turn_sweep, "_SEARCH_STATES", 0)
    rng = np.random.default_rng(2500 + seed)
    searched, swept = play_turns(rng, tail_and_random_positions(rng, seed), TurnSweep())
    assert searched > 40  # most questions answered by the searches


@pytest.mark.parametrize("budget", [3, 60])
def test_a_search_over_budget_falls_back_to_the_sweep(budget, monkeypatch):
    """Small budgets: some questions (or all) run out and the rest of the turn is swept; the answers stay exact."""
    monkeypatch.setattr(turn_sweep, "_SEARCH_STATES", 0)
    monkeypatch.setattr(turn_sweep, "_SEARCH_BUDGET", budget)
    rng = np.random.default_rng(2600 + budget)
    searched, swept = play_turns(rng, tail_and_random_positions(rng, 1), TurnSweep())
    assert swept > 20
    if budget == 3:  # fewer visits than the 65 layers of one path: nothing can be answered by a search
        assert searched == 0


def test_the_dead_states_of_a_turn_are_not_those_of_the_last(monkeypatch):
    """A new turn starts with no dead states: a TurnSweep used across positions (states dead on one table are alive
    on another) keeps answering exactly."""
    monkeypatch.setattr(turn_sweep, "_SEARCH_STATES", 0)
    rng = np.random.default_rng(2700)
    positions = tail_and_random_positions(rng, 2)
    turn = TurnSweep()
    for _ in range(2):
        play_turns(rng, positions, turn)


def test_a_rack_joker_is_searched_like_any_tile(monkeypatch):
    """The joker's entry: some play uses one more joker than staged. Positions where it cannot (a lone joker and a
    tile that makes no meld with it, on an empty or a small table) and where it can, against fresh sweeps."""
    monkeypatch.setattr(turn_sweep, "_SEARCH_STATES", 0)
    tile = lambda colour, number: colour * 13 + number - 1  # noqa: E731
    cases = []
    for table_tiles, rack_tiles in [
        ([], [52, tile(1, 5)]),  # nothing on the table: joker + one tile is no meld
        ([], [52, tile(0, 1), tile(2, 9)]),
        ([tile(0, 3), tile(1, 3), tile(2, 3)], [52, tile(3, 11)]),  # the joker can join the group of 3s
        ([tile(0, 1), tile(0, 2), tile(0, 3)], [52]),  # or extend the run
        ([], [52, tile(1, 5), tile(1, 6)]),  # joker, red 5, red 6: a run
    ]:
        table = np.bincount(np.array(table_tiles, np.int64), minlength=53).astype(np.int64)
        rack = np.bincount(np.array(rack_tiles, np.int64), minlength=53).astype(np.int64)
        mask, _ = TurnSweep().legal(table, rack, np.zeros(53, np.int64), False, 30)
        fresh, _ = _playable_and_exact(table, rack, np.zeros(53, np.int64), False, 30)
        assert np.array_equal(mask, fresh)
        cases.append(bool(mask[52]))
    assert cases == [False, False, True, True, True]


def test_a_question_that_drops_staged_tiles_is_answered_anew(monkeypatch):
    """States a search proved dead for more staged tiles may be alive for fewer: after a turn's staged set grew, a
    question about a set that is not a superset of the last one (any order of questions, as ``legal`` allows) must
    not reuse them."""
    monkeypatch.setattr(turn_sweep, "_SEARCH_STATES", 0)
    rng = np.random.default_rng(2800)
    compared = 0
    for table, rack in tail_and_random_positions(rng, 3):
        turn = TurnSweep()
        staged = np.zeros(53, np.int64)
        for _ in range(4):  # a growing staged set first
            mask, _ = turn.legal(table, rack, staged, False, 30)
            if not mask.any():
                break
            staged[rng.choice(np.flatnonzero(mask))] += 1
        for t in np.flatnonzero(rack)[:6]:  # then single tiles: supersets of the turn's first set, not of the last
            other = np.zeros(53, np.int64)
            other[t] = 1
            mask, exact = turn.legal(table, rack, other, False, 30)
            fresh_mask, fresh_exact = _playable_and_exact(table, rack, other, False, 30)
            assert np.array_equal(mask, fresh_mask)
            assert exact == fresh_exact
            compared += 1
    assert compared > 100


def test_a_sweep_gives_up_at_the_threshold_and_only_there():
    """``_sweep(max_states=m)`` returns ``None`` exactly when the whole sweep holds more than ``m`` states, and
    otherwise the whole sweep's result (same states, same edges), with and without spare buffers."""
    rng = np.random.default_rng(2900)
    gave_up = kept = 0
    spare: dict = {}
    for table, rack in tail_and_random_positions(rng, 4):
        whole = sweep.recorded_sweep(table, rack, np.zeros(53, np.int64), False, 30)
        states, edges = whole[2][0], whole[2][6]
        for max_states in (states - 1, states, max(states // 3, 1)):
            if max_states < 1:
                continue
            capped = sweep.recorded_sweep(table, rack, np.zeros(53, np.int64), False, 30, spare, max_states)
            if states > max_states:
                assert capped is None
                gave_up += 1
            else:
                assert capped is not None and capped[2][0] == states and capped[2][6] == edges
                assert np.array_equal(capped[2][2][:states], whole[2][2][:states])  # the keys
                kept += 1
    assert gave_up > 20 and kept > 20


def test_a_turn_whose_sweep_gives_up_is_searched(monkeypatch):
    """A play onto the table's sweep stops once it holds ``_SEARCH_STATES`` states; that turn's questions are then
    searched (falling back to a whole sweep only over budget), with every answer still a fresh sweep's."""
    monkeypatch.setattr(turn_sweep, "_SEARCH_STATES", 3000)
    gave_up = []
    recorded_sweep = turn_sweep.recorded_sweep

    def counting(*args):
        result = recorded_sweep(*args)
        if result is None:
            gave_up.append(args[-1])
        return result

    monkeypatch.setattr(turn_sweep, "recorded_sweep", counting)
    rng = np.random.default_rng(3000)
    searched = swept = 0
    for seed in range(3):
        positions = tail_and_random_positions(rng, seed)
        positions.sort(key=lambda position: int(position[0].sum()))  # growing tables, as in a game
        s, w = play_turns(rng, positions, TurnSweep())
        searched, swept = searched + s, swept + w
    assert gave_up and set(gave_up) == {2999}  # gave up at the threshold: a sweep of 3000 states is big
    assert searched > 20 and swept > 20
