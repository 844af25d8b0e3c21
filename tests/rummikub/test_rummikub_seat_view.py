"""Rummikub's one visibility decision, ``Rummikub.seen_by(seat)``.

Over random episodes (2 to 4 players, with and without an opening threshold, with failed plays), after every step
and for every seat, the observation, the text view, the public move text and a sampled world show exactly the tiles
``seen_by`` says the seat sees: its own rack, and the tiles staged this turn only while it stages them. A
``seen_by`` that leaks another seat's rack is caught, here (the observation disagrees) and by the view's
hidden-information check (the view changes when the hidden tiles are dealt anew).
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from test_rummikub_env_properties import hidden_shuffle, play

from tableenvs.rummikub.encoder import COMMIT, LAYOUT
from tableenvs.rummikub.env import _tiles_text
from tableenvs.rummikub.rules import Rummikub
from tableenvs.rummikub.tiles import TILE_TYPES


def _counts(observation: np.ndarray, offset: int) -> list[int]:
    return observation[offset : offset + TILE_TYPES].astype(int).tolist()


def check_seen_by(env, seat: int, rng: np.random.Generator | None = None) -> None:
    """``seat``'s observation, text view and (with ``rng``) a sampled world agree with ``env.game.seen_by(seat)``."""
    game = env.game
    view = game.seen_by(seat)
    assert (view.staged is not None) == game.sees_staged(seat)
    observation = env.observe(f"player_{seat}")["observation"]
    assert _counts(observation, LAYOUT.RACK) == view.rack.tolist()
    staged = [0] * TILE_TYPES if view.staged is None else view.staged.tolist()
    assert _counts(observation, LAYOUT.STAGED) == staged

    lines = env.render_view(f"player_{seat}").splitlines()
    own = next(line for line in lines if line.startswith(f"player_{seat} (you): "))
    assert own.endswith(f" tiles: {_tiles_text(view.rack)}")
    staged_lines = [line for line in lines if line.startswith("your staged tiles: ")]
    shown = view.staged is not None and view.staged.any()
    assert staged_lines == ([f"your staged tiles: {_tiles_text(view.staged)}"] if shown else [])

    if rng is not None:
        world = env.sample_world(f"player_{seat}", rng).game.seen_by(seat)
        assert np.array_equal(world.rack, view.rack)
        assert (world.staged is None) == (view.staged is None)
        assert view.staged is None or np.array_equal(world.staged, view.staged)


@pytest.mark.parametrize("seed", range(12))
def test_observation_view_and_world_follow_seen_by(seed):
    options = {"num_players": 2 + seed % 3, "min_initial": (0, 30)[seed % 2], "strict_commit": seed % 4 != 3}
    steps = [0]

    def check(env, rng):
        game = env.game
        for seat in range(game.num_players):
            check_seen_by(env, seat, rng if steps[0] % 7 == seat else None)
        if not (game.over or game.truncated):
            others_see = game.sees_staged((game.to_act + 1) % game.num_players)
            for action in env.legal_actions():
                public = env.describe_action_public(action)
                assert (public == "stages a tile") == (action < COMMIT and not others_see)
        steps[0] += 1

    play(options, seed, check)


def test_a_leaking_seen_by_is_caught(monkeypatch):
    """Inject a leak: ``seen_by`` shows the next seat's rack as the seat's own."""
    real = Rummikub.seen_by

    def leaking(game, seat):
        return real(game, seat)._replace(rack=game.racks[(seat + 1) % game.num_players])

    monkeypatch.setattr(Rummikub, "seen_by", leaking)
    with pytest.raises(AssertionError):
        play({"num_players": 2}, 0, lambda env, rng: check_seen_by(env, 0))

    def view_ignores_the_hidden_tiles(env, rng):  # the check of tests/test_views.py
        shuffled = copy.copy(env)  # the same env but for its game, whose hidden tiles are dealt anew
        shuffled.game = hidden_shuffle(env.game, 0, rng)
        assert shuffled.render_view("player_0") == env.render_view("player_0"), "the view shows hidden tiles"

    with pytest.raises(AssertionError, match="hidden tiles"):
        play({"num_players": 2}, 0, view_ignores_the_hidden_tiles)
