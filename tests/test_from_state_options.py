"""``TableEnv.from_state`` checks the record's options before it builds anything: every bad option is a
:class:`tableenvs.core.state.StateError` saying so, and no file named by a record is read."""

from __future__ import annotations

import json

import pytest

import tableenvs
from tableenvs.core.state import StateError
from tableenvs.core.table_env import TableEnv
from tableenvs.testing import games, per_game

# The package's own games with the state API (other test modules register toy games, which declare neither).
GAMES = games("builtin", "state")
#: The option of each game that may name a deck file (None: the game has none).
DECK_OPTIONS = per_game({"pilipili_v0": "missions", "llama_party_v0": "deck", "rummikub_v0": None}, "builtin", "state")


def record(name: str) -> dict:
    env = tableenvs.make_raw(name)
    env.reset(seed=3)
    env.step(env.legal_actions()[0])
    return json.loads(json.dumps(env.get_state()))


@pytest.mark.parametrize("name", GAMES)
def test_the_record_round_trips(name):
    state = record(name)
    assert TableEnv.from_state(state).get_state() == state


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"render_mode": "human"}, "hold render_mode; pass render_mode= to from_state"),
        ({"not_an_option": 1}, r"not valid for .*unknown option\(s\) 'not_an_option'"),
        ({"num_players": 10**30}, r"not valid for .*num_players must be in"),
        ({"num_players": "3"}, r"not valid for .*num_players must be an integer"),
    ],
)
def test_a_bad_option_is_a_state_error(name, change, message):
    state = record(name)
    state["options"] = {**state["options"], **change}
    with pytest.raises(StateError, match=message):
        TableEnv.from_state(state)


@pytest.mark.parametrize(("name", "option"), [(name, option) for name, option in DECK_OPTIONS.items() if option])
def test_a_record_never_names_a_deck_file(name, option, tmp_path):
    """The file is not TOML: had it been read, the error would be the deck loader's, not this one."""
    deck = tmp_path / "deck.toml"
    deck.write_text("this file must not be read [\n")
    state = record(name)
    state["options"][option] = str(deck)
    with pytest.raises(StateError, match=rf"'{option}' name a deck file; a state record embeds its decks"):
        TableEnv.from_state(state)
