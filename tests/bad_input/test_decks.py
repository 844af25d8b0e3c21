"""Bad card decks, by table: Pili Pili mission decks and Llama Party card decks.

Integers must be real integers (``5.0`` and booleans are refused where an integer is meant), and the error
names the card, the field and the value, whether the deck comes as data, a JSON file or a TOML file, or
through the env's options. A binary or non-UTF-8 deck file is a clear :class:`DeckError`.
"""

from __future__ import annotations

import copy
import json

import pytest

import tableenvs
from tableenvs.decks import DeckError, read_package_data
from tableenvs.llama_party.cards import load_cards
from tableenvs.pilipili.missions import load_missions
from tests.bad_input.helpers_bad_input import assert_clear_error

MISSIONS = read_package_data("tableenvs.pilipili", "missions.toml")["mission"]
CARDS = read_package_data("tableenvs.llama_party", "standard_deck.toml")["cards"]


def _mission(mission_id: int) -> int:
    return next(i for i, mission in enumerate(MISSIONS) if mission["id"] == mission_id)


def _effect(index: int, kind: str) -> int:
    return next(i for i, effect in enumerate(MISSIONS[index]["effects"]) if effect["type"] == kind)


# (mission id, where in the card: a key or (effects, effect type, key[, list index]), bad value, words to name)
MISSION_CASES = [
    (4, "hand_size", 5.0, ["card 4", "hand_size", "5.0", "integer"]),
    (4, "hand_size", True, ["card 4", "hand_size", "True", "integer"]),
    (4, "id", 4.0, ["card 4.0", "id", "4.0", "integer"]),
    (4, "expert", 1, ["card 4", "expert", "1", "boolean"]),
    (14, ("extra_draw", "count"), 1.0, ["card 14", "count", "1.0", "integer"]),
    (14, ("extra_draw", "count"), True, ["card 14", "count", "True", "integer"]),
    (11, ("forbid_bid", "bid"), 1.0, ["card 11", "bid", "1.0", "integer"]),
    (11, ("forbid_bid", "bid"), False, ["card 11", "bid", "False", "integer"]),
    (29, ("listed_numbers", "numbers", 0), 7.0, ["card 29", "numbers[0]", "7.0", "integer"]),
    (29, ("listed_numbers", "numbers", 1), True, ["card 29", "numbers[1]", "True", "integer"]),
]


def _bad_missions(mission_id, where, value):
    missions = copy.deepcopy(MISSIONS)
    index = _mission(mission_id)
    if isinstance(where, str):
        missions[index][where] = value
    else:
        effect = missions[index]["effects"][_effect(index, where[0])]
        if len(where) == 2:
            effect[where[1]] = value
        else:
            effect[where[1]][where[2]] = value
    return missions


@pytest.mark.parametrize(("mission_id", "where", "value", "names"), MISSION_CASES)
def test_mission_deck_with_non_integer(tmp_path, mission_id, where, value, names):
    missions = _bad_missions(mission_id, where, value)
    assert_clear_error(DeckError, names, lambda: load_missions(missions))
    assert_clear_error(DeckError, names, lambda: load_missions({"mission": missions}))
    path = tmp_path / "missions.json"
    path.write_text(json.dumps({"mission": missions}), encoding="utf-8")
    assert_clear_error(DeckError, [*names, "missions.json"], lambda: load_missions(path))
    assert_clear_error(ValueError, ["missions", *names], lambda: tableenvs.make("pilipili_v0", missions=missions))


def test_mission_deck_toml_float_names_the_card(tmp_path):
    path = tmp_path / "missions.toml"
    path.write_text("[[mission]]\nid = 3\nhand_size = 5.0\nexpert = false\neffects = []\n", encoding="utf-8")
    assert_clear_error(DeckError, ["missions.toml", "card 3", "hand_size", "5.0"], lambda: load_missions(path))


def test_scripted_mission_table_with_a_float_is_refused():
    env = tableenvs.make_raw("pilipili_v0", num_players=3)
    bad = {"id": 40, "hand_size": 3, "expert": False, "effects": [{"type": "forbid_bid", "bid": 1.0}]}
    assert_clear_error(ValueError, ["mission", "card 40", "bid", "1.0"], lambda: env.reset(options={"mission": bad}))


# (card index, path to the field, bad value, words to name)
CARD_CASES = [
    (0, ("top", "points"), 3.0, ["card 'A1'", "top.points", "3.0", "integer"]),
    (3, ("top", "points"), True, ["card 'A4'", "top.points", "True", "integer"]),
    (5, ("bottom", "points"), 12.5, ["card 'B2'", "bottom.points", "12.5", "integer"]),
    (7, ("bottom", "points"), False, ["card 'B4'", "bottom.points", "False", "integer"]),
    (2, ("id",), 3, ["cards[2]", "id", "3", "string"]),
]


@pytest.mark.parametrize(("index", "path", "value", "names"), CARD_CASES)
def test_llama_deck_with_non_integer(tmp_path, index, path, value, names):
    cards = copy.deepcopy(CARDS)
    node = cards[index]
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    assert_clear_error(DeckError, names, lambda: load_cards(cards))
    deck_file = tmp_path / "deck.json"
    deck_file.write_text(json.dumps({"cards": cards}), encoding="utf-8")
    assert_clear_error(DeckError, [*names, "deck.json"], lambda: load_cards(deck_file))
    assert_clear_error(DeckError, names, lambda: tableenvs.make("llama_party_v0", deck=cards))


@pytest.mark.parametrize("suffix", [".toml", ".json"])
@pytest.mark.parametrize(
    "content", [b"\xff\xfe\x00\x01binary", "id = 'caf\u00e9'".encode("latin-1")], ids=["binary", "latin-1"]
)
def test_binary_or_non_utf8_deck_file(tmp_path, suffix, content):
    path = tmp_path / f"deck{suffix}"
    path.write_bytes(content)
    names = [f"deck{suffix}", "UTF-8"]
    assert_clear_error(DeckError, names, lambda: load_missions(path))
    assert_clear_error(DeckError, names, lambda: load_cards(path))
    assert_clear_error(ValueError, ["missions", *names], lambda: tableenvs.make("pilipili_v0", missions=path))
    assert_clear_error(DeckError, names, lambda: tableenvs.make("llama_party_v0", deck=str(path)))


def test_standard_decks_still_load():
    assert len(load_missions(MISSIONS)) == 36
    assert len(load_cards(CARDS)) == 32
