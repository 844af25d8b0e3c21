"""Property tests (hypothesis) tying ``solve``, ``playable``, ``is_valid_play`` and ``arrange`` together."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from rummikub_support import check_arrangement, random_rack, random_table

from tableenvs.rummikub import JOKER, arrange, is_valid_play, playable, solve


@st.composite
def positions(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    table = random_table(rng, draw(st.integers(0, 40)))
    rack = random_rack(rng, table, draw(st.integers(0, 20)), near=draw(st.sampled_from([0.0, 0.5, 0.9])))
    return table, rack, draw(st.booleans())


@settings(max_examples=60, deadline=None)
@given(positions())
def test_best_play_is_legal_and_agrees_with_mask(position):
    table, rack, opening = position
    best = solve(table, rack, opening=opening)
    mask = playable(table, rack, np.zeros(53, dtype=np.int64), opening=opening)
    if best is None:
        assert not mask.any()
        return
    assert np.all(best.played <= rack) and best.tiles >= 1
    assert is_valid_play(table, rack, best.played, opening=opening)
    assert arrange(table + best.played) is not None
    check_arrangement(best.melds, table + best.played)
    assert np.all(mask[best.played > 0])
    by_value = solve(table, rack, opening=opening, objective="value")
    assert by_value is not None and by_value.value >= best.value and by_value.tiles <= best.tiles


@settings(max_examples=40, deadline=None)
@given(positions(), st.integers(0, 52))
def test_more_rack_never_hurts(position, extra):
    table, rack, opening = position
    if table[extra] + rack[extra] >= 2:
        return
    bigger = rack.copy()
    bigger[extra] += 1
    before, after = solve(table, rack, opening=opening), solve(table, bigger, opening=opening)
    assert before is None or (after is not None and after.tiles >= before.tiles)


@settings(max_examples=40, deadline=None)
@given(positions(), st.data())
def test_staging_a_playable_tile_keeps_a_play_open(position, data):
    """Staging any tile the mask allows leaves a legal play that contains the staged tiles."""
    table, rack, opening = position
    staged = np.zeros(53, dtype=np.int64)
    for _ in range(3):
        mask = playable(table, rack, staged, opening=opening)
        if not mask.any():
            break
        staged[data.draw(st.sampled_from(np.flatnonzero(mask).tolist()))] += 1
        completion = solve(table, rack, opening=opening, forced=staged)
        assert completion is not None and np.all(completion.played >= staged)
        assert is_valid_play(table, rack, completion.played, opening=opening)
    if rack[JOKER] > staged[JOKER]:
        with_joker = staged.copy()
        with_joker[JOKER] += 1
        assert playable(table, rack, staged, opening=opening)[JOKER] == (
            solve(table, rack, opening=opening, forced=with_joker) is not None
        )
