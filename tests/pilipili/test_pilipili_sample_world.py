"""``sample_world`` under every Pili Pili information rule and the standard deck (hypothesis, random games).

The rules of the observation property tests (``test_pilipili_properties.INFO_RULES``) plus highest-or-lowest, which
makes past plays constrain the hidden hands, alone and with face-down tricks; the checks are in
``tests/test_sample_world.py``.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_pilipili_properties import INFO_RULES
from test_sample_world import check_worlds, random_point

import tableenvs

PILI_RULES = {
    **INFO_RULES,
    "extremes": [{"type": "highest_or_lowest"}],
    "extremes+simultaneous": [{"type": "highest_or_lowest"}, {"type": "simultaneous_play"}],
    "draw+pass": [{"type": "extra_draw", "count": 1}, {"type": "pass_right", "count": 2}],
}


#: (rule, players, hand size, seed, random steps before sampling)
CASES = st.tuples(
    st.sampled_from(sorted(PILI_RULES)), st.integers(2, 6), st.integers(3, 7), st.integers(0, 2**32 - 1),
    st.integers(0, 60),
)  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(case=CASES)
def test_pilipili_sample_world_keeps_the_observation(case):
    rule, num_players, hand_size, seed, steps = case
    deck = [{"id": 1, "hand_size": hand_size, "expert": True, "effects": PILI_RULES[rule]}]
    env = tableenvs.make_raw("pilipili_v0", num_players=num_players, missions=deck, max_rounds=3)
    random_point(env, seed, steps)
    check_worlds(env, np.random.default_rng(seed))


@settings(max_examples=30, deadline=None)
@given(num_players=st.integers(2, 8), seed=st.integers(0, 2**32 - 1), steps=st.integers(0, 200))
def test_pilipili_sample_world_standard_deck(num_players, seed, steps):
    env = tableenvs.make_raw("pilipili_v0", num_players=num_players, max_rounds=4)
    random_point(env, seed, steps)
    check_worlds(env, np.random.default_rng(seed))
