"""Property tests over random Llama Party games: conservation, hand sizes, exact masks, bounded observations,
and observations that do not change when what the observer cannot see is permuted."""

import copy

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tableenvs.llama_party.cards import DECK_SIZE, STANDARD_DECK
from tableenvs.llama_party.encoder import Encoder
from tableenvs.llama_party.env import raw_env
from tableenvs.llama_party.rules import NUM_SLOTS, PASS_COUNTS, LlamaParty

SEEDS = st.integers(0, 2**32 - 1)
PLAYERS = st.sampled_from([2, 3, 4])


def check_invariants(env):
    game = env.game
    assert sorted(game.all_cards()) == list(range(DECK_SIZE))
    for slot in range(NUM_SLOTS):
        staged = len(game.staged[slot]) if slot < game.num_players else 0
        expected = 8 if game.step == 0 and slot < game.num_players and game.goal_of_slot[slot] < 0 else 7
        assert len(game.hands[slot]) + staged == expected
    # the env's encoder caches the table block; a fresh encoder must agree with it
    fresh = Encoder(env.deck, game.num_players)
    for seat in range(game.num_players):
        expected = np.zeros(env.observation_size, np.float32)
        fresh.fill(game, seat, expected)
        np.testing.assert_array_equal(env.observe(f"player_{seat}")["observation"], expected)
    if not game.over:
        mask = env.observe(env.agent_selection)["action_mask"]
        assert mask.any()
        assert set(np.flatnonzero(mask)) == set(game.hands[game.to_act])
        assert game.to_act == env.current_seat


def play(env, seed, on_step):
    rng = np.random.default_rng(seed ^ 0x5EED)
    env.reset(seed=seed)
    steps = 0
    while not env.game.over:
        on_step(env)
        env.step(int(rng.choice(env.legal_actions())))
        steps += 1
        assert steps < 4 * 4 * 12
    on_step(env)
    return steps


@settings(max_examples=120, deadline=None)
@given(seed=SEEDS, num_players=PLAYERS)
def test_random_games_conserve_cards_keep_hands_at_7_and_masks_exact(seed, num_players):
    env = raw_env(num_players=num_players)
    resolved = []

    def on_step(env):
        check_invariants(env)
        game = env.game
        if game.step >= 1 and game.to_act == 0 and not game.staged[0] and not game.over:
            # a pass just resolved (or the goals were just placed): every hand holds exactly 7
            assert [len(hand) for hand in game.hands] == [7] * NUM_SLOTS
            assert len(game.revealed) == game.step
            resolved.append(game.step)

    steps = play(env, seed, on_step)
    game = env.game
    rounds = len(game.round_scores)
    assert steps == rounds * num_players * (1 + sum(PASS_COUNTS))
    assert resolved.count(4) == rounds
    assert game.over and (game.round_number == 4 or max(game.totals) >= 100)
    assert game.totals == [sum(r[seat] for r in game.round_scores) for seat in range(num_players)]
    for seat in range(num_players):
        space = env.observation_space(f"player_{seat}")["observation"]
        assert space.contains(env.observe(f"player_{seat}")["observation"])


def test_a_thousand_engine_games_conserve_cards_and_end():
    """Engine-only random play (fast), many games: the deck is conserved at every pick, every hand holds 7
    after every pass, the mover always has a legal card, and every game ends within 4 rounds."""
    rng = np.random.default_rng(2024)
    for game_number in range(1000):
        game = LlamaParty(STANDARD_DECK, 2 + game_number % 3)
        game.start(np.random.default_rng(game_number))
        while not game.over:
            legal = game.legal_cards()
            assert legal
            step = game.step
            game.act(legal[int(rng.integers(len(legal)))])
            assert sorted(game.all_cards()) == list(range(DECK_SIZE))
            if game.step != step and not game.over:
                assert [len(hand) for hand in game.hands] == [8 if game.step == 0 else 7] * game.num_players + [7] * (
                    NUM_SLOTS - game.num_players
                )
        assert 1 <= len(game.round_scores) <= 4
        assert game.round_scores and (len(game.round_scores) == 4 or max(game.totals) >= 100)


def permute_hidden(game, seat, rng):
    """A copy of ``game`` where everything ``seat`` cannot see is reshuffled: the other real hands and their
    picks, the dummies' hands, the face-down goals of the others, and the positions of all face-down goals."""
    other = copy.deepcopy(game)
    n = game.num_players
    revealed = set(game.display[: game.step])
    containers = [("hand", slot) for slot in range(NUM_SLOTS) if slot != seat]
    containers += [("staged", s) for s in range(n) if s != seat]
    hidden_goal_slots = [s for s in range(NUM_SLOTS) if s != seat and game.goal_of_slot[s] >= 0]
    hidden_goal_slots = [s for s in hidden_goal_slots if game.goal_of_slot[s] not in revealed]
    pool = [c for kind, s in containers for c in (game.hands[s] if kind == "hand" else game.staged[s])]
    pool += [game.goal_of_slot[s] for s in hidden_goal_slots]
    pool = [int(c) for c in rng.permutation(pool)]
    for kind, s in containers:
        size = len(game.hands[s] if kind == "hand" else game.staged[s])
        chunk, pool = pool[:size], pool[size:]
        (other.hands if kind == "hand" else other.staged)[s] = chunk
    for s in hidden_goal_slots:
        other.goal_of_slot[s], pool = pool[0], pool[1:]
    assert not pool
    if game.display:
        face_down = [g for g in other.goal_of_slot if g not in revealed]
        positions = list(range(game.step, NUM_SLOTS))
        for position, goal in zip(positions, rng.permutation(face_down), strict=True):
            other.display[position] = int(goal)
    return other


@settings(max_examples=60, deadline=None)
@given(seed=SEEDS, num_players=PLAYERS)
def test_observations_ignore_what_the_player_cannot_see(seed, num_players):
    env = raw_env(num_players=num_players)
    rng = np.random.default_rng(seed)
    checked = [0]

    def on_step(env):
        if rng.random() > 0.15:
            return
        game = env.game
        for seat in range(num_players):
            before = np.zeros(env.observation_size, np.float32)
            after = np.zeros(env.observation_size, np.float32)
            env.encoder.fill(game, seat, before)
            permuted = permute_hidden(game, seat, rng)
            assert sorted(permuted.all_cards()) == list(range(DECK_SIZE))
            env.encoder.fill(permuted, seat, after)
            np.testing.assert_array_equal(before, after)
            checked[0] += 1

    play(env, seed, on_step)
    assert checked[0] > 0


def test_permutation_helper_really_changes_hidden_state():
    env = raw_env(num_players=2)
    env.reset(seed=3)
    for _ in range(5):
        env.step(env.legal_actions()[0])  # goals chosen and one pass pick made
    changed = 0
    rng = np.random.default_rng(0)
    for _ in range(10):
        permuted = permute_hidden(env.game, 0, rng)
        changed += permuted.hands[1] != env.game.hands[1] or permuted.display != env.game.display
        # the observer's own view of the state is untouched
        assert permuted.hands[0] == env.game.hands[0] and permuted.goal_of_slot[0] == env.game.goal_of_slot[0]
    assert changed >= 8


def test_same_seed_same_game_different_seeds_differ():
    def trajectory(seed):
        env = raw_env(num_players=3)
        cards = []
        play(env, seed, lambda e: cards.append(tuple(e.game.hands[e.game.to_act])))
        return cards, env.game.totals

    assert trajectory(7) == trajectory(7)
    assert trajectory(7) != trajectory(8)
