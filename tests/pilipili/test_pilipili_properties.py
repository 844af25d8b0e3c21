"""Property tests over thousands of random Pili Pili games (hypothesis).

* the 56 cards are conserved at every step; the mask of the agent to act is never empty;
* every round's penalties match the formula, recomputed here from the tricks independently of the engine;
* the game ends iff someone holds >= 6 chilis after a round (or ``max_rounds`` truncates it);
* a player's observation (and its mask, when it acts) is unchanged when the cards it cannot see are
  permuted, under every information rule. "Cannot see" is defined here from the rules, not from the
  encoder, so a leak in the encoder fails the test.
"""

import copy

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tableenvs.pilipili.env import raw_env
from tableenvs.pilipili.rules import MAX_WILD_VALUE, WILD, Phase

NUM_CARDS = 56


def random_game(env, seed, check_step=None):
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    steps = 0
    while not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
        mask = env.action_masks()
        legal = np.flatnonzero(mask)
        assert legal.size > 0, f"empty mask for {env.agent_selection} in phase {env.game.phase.name}"
        if check_step is not None:
            check_step(env, rng)
        env.step(int(legal[rng.integers(legal.size)]))
        steps += 1
        assert steps < 20_000
    return env


def all_cards(game):
    cards = [c for hand in game.hands for c in hand] + game.stock + [c for _, c, _ in game.trick] + game.played_cards
    return cards


def check_conservation(env, rng):
    game = env.game
    cards = all_cards(game)
    assert len(cards) == NUM_CARDS and set(cards) == set(range(NUM_CARDS))
    for seat in range(game.n):
        assert set(game.staged[seat]) <= set(game.hands[seat])


def strength(mission, card, value):
    v = MAX_WILD_VALUE - value if mission.reversed else value
    return (v, card != WILD)


def check_round_formula(game, missions_by_id, record):
    mission = missions_by_id[record["mission"]]
    n = len(record["bids"])
    won = [0] * n
    extras = [0] * n
    tricks = record["tricks"]
    for index, (plays, winner) in enumerate(tricks):
        assert len(plays) == n and len({seat for seat, _, _ in plays}) == n
        best = max(plays, key=lambda p: strength(mission, p[1], p[2]))
        assert best[0] == winner
        won[winner] += 1
        if mission.first_last_trick:
            extras[winner] += (index == 0) + (index == len(tricks) - 1)
        hits = sum(card in mission.listed_numbers for _, card, _ in plays)
        extras[winner] += hits if mission.listed_each else min(hits, 1)
    assert won == record["tricks_won"] and extras == record["extras"]
    assert len(tricks) == record["hand_size"] + mission.extra_draw
    own = [abs(record["bids"][s] - won[s]) + extras[s] for s in range(n)]
    after = []
    for s in range(n):
        total = record["chilis_before"][s] + own[s]
        if mission.designate:
            target = record["designations"][s]
            assert target != s and 0 <= target < n
            total += own[target]
        if mission.exact_bid_reward and record["bids"][s] == won[s]:
            total -= min(record["bids"][s], total)
        after.append(total)
    assert after == record["chilis_after"]
    h = record["hand_size"]
    assert all(0 <= b <= h for b in record["bids"])


@settings(max_examples=1500, deadline=None)
@given(
    num_players=st.integers(2, 8),
    missions=st.sampled_from(["standard", "none", "standard-basic"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_games_conserve_cards_score_by_the_formula_and_end_at_six(num_players, missions, seed):
    expert = missions != "standard-basic"
    env = raw_env(num_players=num_players, missions=missions.split("-")[0], expert=expert, max_rounds=30)
    random_game(env, seed, check_conservation)
    game = env.game
    deck = {m.id: m for m in (env.missions or [])}
    from tableenvs.pilipili.missions import BASIC_MISSION

    deck[BASIC_MISSION.id] = BASIC_MISSION
    for i, record in enumerate(game.round_history):
        check_round_formula(game, deck, record)
        assert record["chilis_before"] == (game.round_history[i - 1]["chilis_after"] if i else [0] * num_players)
        last = i == len(game.round_history) - 1
        assert (max(record["chilis_after"]) >= 6) == (last and not game.truncated)
    assert game.over
    assert game.truncated == (game.rounds_completed == 30 and max(game.chilis) < 6)
    assert all(env.terminations.values()) != game.truncated


# ---------------------------------------------------------------- information rules


def visible_cards(game, seat):
    """Cards ``seat`` may see now, by the rules (docs/pilipili.md), independently of the encoder."""
    m = game.mission
    phase = game.phase
    bidding = phase in (Phase.LOOK, Phase.BID)
    if m.memorise:
        own = phase == Phase.LOOK and game.to_act == seat
    elif m.timed_look:
        own = game.to_act == seat if phase == Phase.LOOK else not bidding
    elif m.forehead or m.blind:
        own = phase != Phase.BID
    else:
        own = True
    others = (m.forehead and phase == Phase.BID) or (
        m.reveal and phase in (Phase.PLAY, Phase.DECLARE, Phase.SWAP_NAME, Phase.SWAP_GIVE)
    )
    seen = set(game.played_cards)
    seen.update(card for play_seat, card, _ in game.trick if not m.simultaneous or play_seat == seat)
    for s in range(game.n):
        if (s == seat and own) or (s != seat and others):
            seen.update(game.hands[s])
    return seen


def relabel(game, mapping):
    """A copy of ``game`` with every card renamed through ``mapping`` (hidden cards only move)."""
    clone = copy.copy(game)
    clone.hands = [[mapping[c] for c in hand] for hand in game.hands]
    clone.stock = [mapping[c] for c in game.stock]
    clone.staged = [[mapping[c] for c in staged] for staged in game.staged]
    clone.position_cards = [[mapping[c] for c in cards] for cards in game.position_cards]
    clone.trick = [(s, mapping[c], v if c == WILD else mapping[c]) for s, c, v in game.trick]
    return clone


def check_invisible_permutation(env, rng):
    game = env.game
    enc = env.encoder
    for seat in range(game.n):
        hidden = sorted(set(range(NUM_CARDS)) - visible_cards(game, seat))
        if any(card == WILD for _, card, _ in game.trick) or game.phase == Phase.DECLARE:
            hidden = [c for c in hidden if c != WILD]
        if len(hidden) < 2:
            continue
        mapping = list(range(NUM_CARDS))
        for src, dst in zip(hidden, rng.permutation(hidden), strict=True):
            mapping[src] = int(dst)
        clone = relabel(game, mapping)
        a = np.zeros(enc.size, np.float32)
        b = np.zeros(enc.size, np.float32)
        enc.fill_observation(game, seat, a)
        enc.fill_observation(clone, seat, b)
        diff = np.flatnonzero(a != b)
        assert diff.size == 0, (
            f"seat {seat} phase {game.phase.name} mission {game.mission.describe()}: observation changed at "
            f"{[(i, name) for i in diff[:5] for name, start, size in enc.layout() if start <= i < start + size]}"
        )
        if seat == game.to_act:
            ma = np.zeros(env.num_actions, np.int8)
            mb = np.zeros(env.num_actions, np.int8)
            enc.fill_mask(game, ma)
            enc.fill_mask(clone, mb)
            assert (ma == mb).all(), f"seat {seat}: mask depends on hidden cards in phase {game.phase.name}"


INFO_RULES = {
    "forehead": [{"type": "forehead"}],
    "blind": [{"type": "blind"}],
    "timed_look": [{"type": "timed_look"}],
    "memorise": [{"type": "memorise"}],
    "simultaneous": [{"type": "simultaneous_play"}],
    "pass_left": [{"type": "pass_left", "count": 2}],
    "pass_right": [{"type": "pass_right", "count": 1}],
    "pass_hand": [{"type": "pass_hand", "direction": "left"}],
    "swap": [{"type": "swap_after_trick"}],
    "reveal": [{"type": "reveal_hands"}],
    "reveal+pass": [{"type": "reveal_hands"}, {"type": "pass_left", "count": 1}],
    "simultaneous+memorise": [{"type": "simultaneous_play"}, {"type": "memorise"}],
    "forehead+draw": [{"type": "forehead"}, {"type": "extra_draw", "count": 1}],
    "designate+swap": [{"type": "designate"}, {"type": "swap_after_trick"}, {"type": "reveal_hands"}],
    "none": [],
}


@settings(max_examples=300, deadline=None)
@given(
    rule=st.sampled_from(sorted(INFO_RULES)),
    num_players=st.integers(2, 8),
    hand_size=st.integers(3, 7),
    seed=st.integers(0, 2**32 - 1),
)
def test_observation_unchanged_when_unseen_cards_are_permuted(rule, num_players, hand_size, seed):
    deck = [{"id": 1, "hand_size": hand_size, "expert": True, "effects": INFO_RULES[rule]}]
    env = raw_env(num_players=num_players, missions=deck, max_rounds=2)
    random_game(env, seed, check_invisible_permutation)


@settings(max_examples=100, deadline=None)
@given(num_players=st.integers(2, 8), seed=st.integers(0, 2**32 - 1))
def test_observation_unchanged_when_unseen_cards_are_permuted_standard_deck(num_players, seed):
    env = raw_env(num_players=num_players, max_rounds=4)
    random_game(env, seed, check_invisible_permutation)


def test_the_permutation_check_catches_a_leak():
    """Sanity check of the checker: an encoder that shows a hidden hand must fail it."""
    deck = [{"id": 1, "hand_size": 4, "expert": True, "effects": [{"type": "blind"}]}]
    env = raw_env(num_players=3, missions=deck)
    env.reset(seed=1)
    game = env.game
    assert game.phase == Phase.BID
    enc = env.encoder
    original = enc.fill_observation

    def leaky(g, seat, out):
        original(g, seat, out)
        for card in g.hands[seat]:
            out[enc.o_hand + card] = 1

    enc.fill_observation = leaky
    try:
        check_invisible_permutation(env, np.random.default_rng(0))
    except AssertionError:
        return
    raise AssertionError("the leak was not detected")
