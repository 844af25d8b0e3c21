"""Pictures of the table: ``render_mode="rgb_array"`` and ``render_svg(agent)``.

PettingZoo's ``render_test`` over every game, player count and option set is in ``test_conformance.py`` (it runs
every mode in ``metadata["render_modes"]``). Here: the picture is the rasterised ``render_svg()``, it draws text
(a missing font would silently drop it), it changes as the game moves, it is valid SVG whatever the card texts
hold; a seat's picture never shows what the seat may not see (the same checks as its text view in
``test_views.py``, with the picture as the view); a missing ``render`` extra is an error naming it.
"""

import contextlib
import functools
import sys
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest
import test_views

import tableenvs
from tableenvs.core.svg import Svg, rasterise
from tableenvs.llama_party.env import raw_env as llama_env
from tableenvs.pilipili.env import raw_env as pilipili_env
from tableenvs.testing import games

GAMES = games("builtin", "picture")


def play(env, steps, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if env.outcome() is not None:
            break
        env.step(int(rng.choice(env.legal_actions())))


@pytest.mark.parametrize("name", GAMES)
def test_rgb_array_is_the_rasterised_god_view_picture_and_draws_text(name):
    env = tableenvs.make_raw(name, render_mode="rgb_array")
    env.reset(seed=1)
    play(env, 20)
    image = env.render()
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    assert np.array_equal(image, rasterise(env.render_svg()))
    svg = env.render_svg()
    ElementTree.fromstring(svg)  # well-formed XML
    assert 'fill="#1e5a3c"' in svg and "god view" in svg
    textless = rasterise(svg.replace("<text", "<desc").replace("</text>", "</desc>"))
    assert (image != textless).any(axis=2).sum() > 2000, "the text was not drawn (no sans-serif font?)"
    before = image
    play(env, 5, seed=2)
    assert not np.array_equal(env.render(), before) or env.outcome() is not None


@pytest.mark.parametrize("name", GAMES)
def test_seat_pictures_name_the_seat_and_differ_from_the_god_view(name):
    env = tableenvs.make(name)
    env.reset(seed=0)
    raw = env.unwrapped
    god = raw.render_svg()
    for agent in raw.possible_agents:
        view = raw.render_svg(agent)
        assert f"{agent}&apos;s view" in view or f"{agent}'s view" in view
        assert view != god
    with pytest.raises(ValueError, match="unknown agent"):
        raw.render_svg("player_9")
    with pytest.raises(RuntimeError, match="reset"):
        tableenvs.make_raw(name).render_svg()


def test_svg_text_is_escaped():
    picture = Svg(100)
    picture.text(0, 10, "a < b & 'c' \"d\"")
    picture.card(0, 20, "<W>", note="&")
    root = ElementTree.fromstring(picture.text_of())
    texts = [element.text for element in root.iter("{http://www.w3.org/2000/svg}text")]
    assert texts == ["a < b & 'c' \"d\"", "<W>", "&"]


@contextlib.contextmanager
def picture_as_view():
    """Make ``test_views``' checks read a seat's SVG picture instead of its text view."""
    original = test_views.view_of
    test_views.view_of = functools.partial(original, method="render_svg")
    try:
        yield
    finally:
        test_views.view_of = original


@pytest.mark.parametrize("rule", sorted(test_views.INFO_RULES))
def test_pilipili_seat_picture_hides_what_the_seat_cannot_see(rule):
    deck = [{"id": 1, "hand_size": 5, "expert": True, "effects": test_views.INFO_RULES[rule]}]
    counts = {"same": 0, "changed": 0}
    with picture_as_view():
        for seed in range(2):
            env = pilipili_env(num_players=3 + seed, missions=deck, max_rounds=2)
            test_views.play_pilipili(env, seed, lambda e, rng: test_views.check_pilipili_view(e, rng, counts))
    assert counts["same"] > 0


def test_pilipili_picture_check_catches_a_leak():
    env = pilipili_env(num_players=3, missions="none")
    env.reset(seed=0)
    god_view = env._picture_svg
    env._picture_svg = lambda seat: god_view(None)
    with picture_as_view(), pytest.raises(AssertionError, match="hidden"):
        test_views.check_pilipili_view(env, np.random.default_rng(0), {"same": 0, "changed": 0})


@pytest.mark.parametrize("seed", range(3))
def test_llama_party_seat_picture_hides_what_the_seat_cannot_see(seed):
    with picture_as_view():
        test_views.test_llama_party_view_hides_what_the_seat_cannot_see.hypothesis.inner_test(seed=seed, num_players=3)


@pytest.mark.parametrize("seed", range(2))
def test_rummikub_seat_picture_hides_other_racks_and_the_pool(seed):
    with picture_as_view():
        test_views.test_rummikub_view_hides_other_racks_and_the_pool.hypothesis.inner_test(
            options={"num_players": 3}, seed=seed
        )


def test_llama_party_seat_picture_shows_own_hand_not_others():
    env = llama_env(num_players=3)
    env.reset(seed=5)
    view = env.render_svg("player_0")
    own = {env.deck[card].id for card in env.game.hands[0]}
    others = {env.deck[card].id for card in env.game.hands[1] + env.game.hands[2]}
    shown = set(ElementTree.fromstring(view).itertext())
    assert own <= shown and not (others & shown)


def test_missing_render_extra_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "resvg_py", None)  # import resvg_py now raises ModuleNotFoundError
    env = tableenvs.make("rummikub_v0", render_mode="rgb_array")
    env.reset(seed=0)
    with pytest.raises(ModuleNotFoundError, match=r'render extra: pip install "tableenvs\[render\]"'):
        env.render()
    assert env.unwrapped.render_svg().startswith("<svg")  # the SVG itself needs no extra
