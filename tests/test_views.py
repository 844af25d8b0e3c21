"""Per-player views (``env.unwrapped.render_view(agent)``).

Over random games of every game: a seat's view does not change when what it cannot see is permuted or dealt
anew (with the same helpers the observation hidden-information tests use, which define "cannot see" from the
rules), and it does change when something it can see changes (one of its own cards). A god view used as a
seat view fails the check (the check can catch a leak).
"""

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

HERE = Path(__file__).resolve().parent
for sub in ("pilipili", "llama_party", "rummikub"):
    if str(HERE / sub) not in sys.path:
        sys.path.insert(0, str(HERE / sub))

from test_llama_party_properties import permute_hidden  # noqa: E402
from test_llama_party_properties import play as play_llama  # noqa: E402
from test_pilipili_properties import INFO_RULES, relabel, visible_cards  # noqa: E402
from test_pilipili_properties import random_game as play_pilipili  # noqa: E402
from test_rummikub_env_properties import OPTIONS as RUMMIKUB_OPTIONS  # noqa: E402
from test_rummikub_env_properties import hidden_shuffle  # noqa: E402
from test_rummikub_env_properties import play as play_rummikub  # noqa: E402

import tableenvs  # noqa: E402
from tableenvs.llama_party.env import raw_env as llama_env  # noqa: E402
from tableenvs.pilipili.env import raw_env as pilipili_env  # noqa: E402
from tableenvs.pilipili.rules import WILD, card_name  # noqa: E402
from tableenvs.rummikub.encoder import COMMIT  # noqa: E402
from tableenvs.testing import games  # noqa: E402

NUM_CARDS = 56


def view_of(env, game, seat, method="render_view"):
    """``seat``'s view of ``game`` (a possibly altered copy of ``env.game``), through the public ``method``
    (``render_view``; ``test_pictures.py`` runs these checks with ``render_svg``)."""
    saved = env.game
    env.game = game
    try:
        return getattr(env, method)(f"player_{seat}")
    finally:
        env.game = saved


# ---------------------------------------------------------------- Pili Pili


def pilipili_hidden(game, seat):
    hidden = sorted(set(range(NUM_CARDS)) - visible_cards(game, seat))
    if any(card == WILD for _, card, _ in game.trick) or game.phase.name == "DECLARE":
        hidden = [c for c in hidden if c != WILD]
    return hidden


def check_pilipili_view(env, rng, counts):
    game = env.game
    for seat in range(game.n):
        view = view_of(env, game, seat)
        hidden = pilipili_hidden(game, seat)
        if len(hidden) >= 2:
            mapping = list(range(NUM_CARDS))
            for src, dst in zip(hidden, rng.permutation(hidden), strict=True):
                mapping[src] = int(dst)
            other = view_of(env, relabel(game, mapping), seat)
            assert other == view, (
                f"seat {seat}, phase {game.phase.name}, mission {game.mission.describe()}: the view shows hidden "
                f"cards\n--- before\n{view}\n--- after permuting hidden cards\n{other}"
            )
            counts["same"] += 1
        # a visible change: one of its own (visible) number cards swapped with a hidden number card
        own = [c for c in game.hands[seat] if c != WILD and c in visible_cards(game, seat)]
        hidden_numbers = [c for c in hidden if c != WILD]
        if own and hidden_numbers:
            a, b = own[int(rng.integers(len(own)))], hidden_numbers[int(rng.integers(len(hidden_numbers)))]
            mapping = list(range(NUM_CARDS))
            mapping[a], mapping[b] = b, a
            assert view_of(env, relabel(game, mapping), seat) != view, f"seat {seat}: own card change not shown"
            counts["changed"] += 1


@settings(max_examples=60, deadline=None)
@given(rule=st.sampled_from(sorted(INFO_RULES)), num_players=st.integers(2, 6), seed=st.integers(0, 2**32 - 1))
def test_pilipili_view_hides_what_the_seat_cannot_see(rule, num_players, seed):
    deck = [{"id": 1, "hand_size": 5, "expert": True, "effects": INFO_RULES[rule]}]
    env = pilipili_env(num_players=num_players, missions=deck, max_rounds=2)
    counts = {"same": 0, "changed": 0}
    play_pilipili(env, seed, lambda e, rng: check_pilipili_view(e, rng, counts))
    assert counts["same"] > 0


@pytest.mark.parametrize("seed", range(3))
def test_pilipili_view_standard_deck(seed):
    env = pilipili_env(num_players=4, max_rounds=3)
    counts = {"same": 0, "changed": 0}
    play_pilipili(env, seed, lambda e, rng: check_pilipili_view(e, rng, counts))
    assert counts["same"] > 0 and counts["changed"] > 0


def test_pilipili_forehead_view_shows_the_others_not_oneself():
    deck = [{"id": 1, "hand_size": 4, "expert": True, "effects": [{"type": "forehead"}]}]
    env = pilipili_env(num_players=3, missions=deck)
    env.reset(seed=3)
    game = env.game
    assert game.phase.name == "BID"
    view = env.render_view("player_0")
    lines = {line.split(":")[0].strip(" D>"): line for line in view.splitlines() if "player_" in line[:12]}
    assert "face down" in lines["player_0 (you)"]
    for s in (1, 2):
        assert "hand [" + " ".join(card_name(c) for c in sorted(game.hands[s])) + "]" in lines[f"player_{s}"]


def test_the_view_check_catches_a_leak():
    """The god view used as a seat view must fail the Pili Pili check (it shows every hand)."""
    env = pilipili_env(num_players=3, missions="none")
    env.reset(seed=0)
    env._render_view_text = lambda seat: env._render_text()
    with pytest.raises(AssertionError, match="hidden"):
        check_pilipili_view(env, np.random.default_rng(0), {"same": 0, "changed": 0})


# ---------------------------------------------------------------- Llama Party


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), num_players=st.sampled_from([2, 3, 4]))
def test_llama_party_view_hides_what_the_seat_cannot_see(seed, num_players):
    env = llama_env(num_players=num_players)
    rng = np.random.default_rng(seed)
    counts = [0, 0]

    def on_step(env):
        if rng.random() > 0.3:
            return
        game = env.game
        for seat in range(num_players):
            view = view_of(env, game, seat)
            permuted = permute_hidden(game, seat, rng)
            assert view_of(env, permuted, seat) == view, f"seat {seat} sees hidden cards"
            counts[0] += 1
            other = (seat + 1) % num_players
            if game.hands[seat] and game.hands[other] and not game.over:
                changed = permute_hidden(game, seat, rng)
                changed.hands[seat] = list(game.hands[seat])
                changed.hands[other] = list(changed.hands[other])
                changed.hands[seat][0], changed.hands[other][0] = changed.hands[other][0], changed.hands[seat][0]
                assert view_of(env, changed, seat) != view, f"seat {seat}: own hand change not shown"
                counts[1] += 1

    play_llama(env, seed, on_step)
    assert counts[0] > 0


# ---------------------------------------------------------------- Rummikub


@settings(max_examples=6, deadline=None)
@given(options=RUMMIKUB_OPTIONS, seed=st.integers(0, 2**31 - 1))
def test_rummikub_view_hides_other_racks_and_the_pool(options, seed):
    counts = [0, 0]

    def check(e, rng):
        game = e.game
        if rng.random() > 0.2:
            return
        for seat in range(game.num_players):
            view = view_of(e, game, seat)
            assert view_of(e, hidden_shuffle(game, seat, rng), seat) == view, f"seat {seat} sees hidden tiles"
            counts[0] += 1
            own = np.flatnonzero(game.racks[seat])
            other = (seat + 1) % game.num_players
            theirs = [t for t in np.flatnonzero(game.racks[other]) if t not in own]
            if len(own) and theirs and not game.staged.any():
                changed = hidden_shuffle(game, seat, rng)
                changed.racks = changed.racks.copy()
                changed.racks[seat] = game.racks[seat].copy()
                changed.racks[seat][own[0]] -= 1
                changed.racks[seat][theirs[0]] += 1
                assert view_of(e, changed, seat) != view, f"seat {seat}: own rack change not shown"
                counts[1] += 1

    play_rummikub(options, seed, check)


# ---------------------------------------------------------------- all games


@pytest.mark.parametrize("name", games("builtin", "views"))
def test_render_view_on_the_wrapped_env_names_the_seat_and_refuses_unknown_agents(name):
    env = tableenvs.make(name)
    with pytest.raises(RuntimeError, match="reset"):
        env.unwrapped.render_view("player_0")
    env.reset(seed=0)
    for agent in env.possible_agents:
        assert env.unwrapped.render_view(agent).startswith(f"{agent}'s view")
    with pytest.raises(ValueError, match="unknown agent"):
        env.unwrapped.render_view("player_9")


# ---------------------------------------------------------------- what the table learns of a move


@pytest.mark.parametrize("rule", sorted(INFO_RULES))
def test_pilipili_public_move_text_never_names_a_passed_given_or_face_down_card(rule):
    deck = [{"id": 1, "hand_size": 4, "expert": True, "effects": INFO_RULES[rule]}]
    env = pilipili_env(num_players=3, missions=deck, max_rounds=2)
    hidden_kinds = {"PASS", "SWAP_GIVE", "DECLARE"}
    seen = set()

    def check(e, rng):
        game = e.game
        for action in e.legal_actions():
            text = e.describe_action_public(action)
            secret = game.phase.name in hidden_kinds or (game.phase.name == "PLAY" and game.mission.simultaneous)
            if secret:
                assert not any(ch.isdigit() for ch in text), f"{game.phase.name}: {text!r}"
            else:
                assert text == e.describe_action(action)
            seen.add(game.phase.name)

    play_pilipili(env, 0, check)
    assert "BID" in seen


def test_llama_party_and_rummikub_public_move_texts_hide_the_cards():
    env = llama_env(num_players=3)
    ids = [card.id for card in env.deck]

    def on_step(e):
        if not e.game.over:
            for action in e.legal_actions():
                text = e.describe_action_public(action)
                assert not any(card in text for card in ids), text

    play_llama(env, 1, on_step)

    def check(e, rng):
        game = e.game
        if game.over or game.truncated:
            return
        for action in e.legal_actions():
            text = e.describe_action_public(action)
            assert text == ("stages a tile" if action < COMMIT else e.describe_action(action))

    play_rummikub({"num_players": 2}, 2, check)
