"""Llama Party's one visibility decision, ``LlamaParty.seen_by(seat)``.

Over random games with 2, 3 and 4 players, at every step and for every seat, the observation, the text view and a
sampled world show exactly the cards ``seen_by`` says the seat sees: its hand, picks, goal, what it passed and
received, and the face-up goals. A ``seen_by`` that leaks another seat's hand is caught, here (the observation
disagrees) and by the view's hidden-information check (the view changes when the hidden cards are reshuffled).
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from test_llama_party_properties import permute_hidden, play

from tableenvs.llama_party.cards import DECK_SIZE
from tableenvs.llama_party.encoder import LAYOUT
from tableenvs.llama_party.env import raw_env
from tableenvs.llama_party.rules import NUM_SLOTS, LlamaParty


def _cards(observation: np.ndarray, offset: int) -> list[int]:
    return np.flatnonzero(observation[offset : offset + DECK_SIZE]).tolist()


def _text(env, cards: list[int]) -> str:
    return " ".join(str(env.deck[card]) for card in sorted(cards)) or "-"


def check_seen_by(env, seat: int, rng: np.random.Generator | None = None) -> None:
    """``seat``'s observation, text view and (with ``rng``) a sampled world agree with ``env.game.seen_by(seat)``."""
    game = env.game
    view = game.seen_by(seat)
    observation = env.observe(f"player_{seat}")["observation"]
    assert _cards(observation, LAYOUT.HAND) == sorted(view.hand)
    assert _cards(observation, LAYOUT.STAGED) == sorted(view.picks)
    assert _cards(observation, LAYOUT.OWN_GOAL) == ([view.goal] if view.goal >= 0 else [])
    assert _cards(observation, LAYOUT.PASSED) == sorted(set(view.passed))  # a card may come back and go again
    assert _cards(observation, LAYOUT.RECEIVED) == sorted(set(view.received))
    face_up = [_cards(observation, LAYOUT.REVEALED + p * DECK_SIZE) for p in range(NUM_SLOTS)]
    assert face_up == [[goal] for goal in view.revealed] + [[]] * (NUM_SLOTS - len(view.revealed))

    lines = env.render_view(f"player_{seat}").splitlines()
    assert f"your hand: {_text(env, view.hand)}" in lines
    assert f"your goal: {env.deck[view.goal] if view.goal >= 0 else '-'}" in lines
    assert (f"your picks: {_text(env, view.picks)}" in lines) == bool(view.picks)
    exchanged = f"passed this round: {_text(env, view.passed)}; received: {_text(env, view.received)}"
    assert (exchanged in lines) == bool(view.passed or view.received)
    goals = next(line for line in lines if line.startswith("goals: "))
    assert all(f"[{p + 1}] {env.deck[goal]}" in goals for p, goal in enumerate(view.revealed))
    assert goals.count("(face down)") + goals.count("(not placed)") == NUM_SLOTS - len(view.revealed)

    if rng is not None:
        world = env.sample_world(f"player_{seat}", rng).game.seen_by(seat)
        assert (world.goal, world.revealed) == (view.goal, view.revealed)
        for part in ("hand", "picks", "passed", "received"):  # the world sorts what no one sees the order of
            assert sorted(getattr(world, part)) == sorted(getattr(view, part)), part


@pytest.mark.parametrize("seed", range(12))
def test_observation_view_and_world_follow_seen_by(seed):
    num_players = 2 + seed % 3
    env = raw_env(num_players=num_players)
    rng = np.random.default_rng(seed)
    steps = [0]

    def on_step(env):
        for seat in range(num_players):
            check_seen_by(env, seat, rng if steps[0] % 5 == seat else None)
        steps[0] += 1

    play(env, seed, on_step)


def test_a_leaking_seen_by_is_caught(monkeypatch):
    """Inject a leak: ``seen_by`` shows the next seat's hand as the seat's own."""
    env = raw_env(num_players=3)
    real = LlamaParty.seen_by

    def leaking(game, seat):
        return real(game, seat)._replace(hand=game.hands[(seat + 1) % game.num_players])

    monkeypatch.setattr(LlamaParty, "seen_by", leaking)
    with pytest.raises(AssertionError):
        play(env, 0, lambda env: check_seen_by(env, 0))

    rng = np.random.default_rng(1)

    def view_ignores_the_hidden_cards(env):  # the check of tests/test_views.py
        shuffled = copy.copy(env)  # the same env but for its game, whose hidden cards are reshuffled
        shuffled.game = permute_hidden(env.game, 0, rng)
        assert shuffled.render_view("player_0") == env.render_view("player_0"), "the view shows hidden cards"

    with pytest.raises(AssertionError, match="hidden cards"):
        play(env, 1, view_ignores_the_hidden_cards)
