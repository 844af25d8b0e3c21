"""Saved states of the OpenSpiel bridge are data: ``state.serialize()`` writes the JSON state record, and
``game.deserialize_state`` / ``tableenvs.openspiel.deserialize_state`` read it back checked in full, running
nothing. OpenSpiel's own format (a ``__dict__`` pickle) is refused unless ``trust_pickle=True``; a record whose
returns, over, recall, parameters or history disagree with its env or its game is refused in one line.

Each crafted pickle here would create a marker file if it ran; the tests check that it never does (and, once, in a
subprocess, that it would with trust, so the payload is real).
"""

from __future__ import annotations

import base64
import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from load_bounds import HANG

pyspiel = pytest.importorskip("pyspiel", reason="OpenSpiel is not installed (pip install open-spiel)")

import tableenvs.openspiel as tos  # noqa: E402  (after the skip)
from tableenvs.openspiel import UntrustedStateError, deserialize_state, serialize_state  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SMALL = {
    "tableenvs_pilipili_v0": {"num_players": 2, "max_rounds": 2, "deal_seeds": 64},
    "tableenvs_llama_party_v0": {"num_players": 2, "deal_seeds": 64},
    "tableenvs_rummikub_v0": {"num_players": 2, "max_turns": 30, "deal_seeds": 64},
}


class Payload:
    """Unpickling this creates ``marker``."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def step_random(state, rng: np.random.Generator) -> None:
    if state.is_chance_node():
        state.apply_action(int(rng.integers(len(state.chance_outcomes()))))
    else:
        state.apply_action(int(rng.choice(state.legal_actions())))


def same(a, b, players: int) -> bool:
    return (
        str(a) == str(b)
        and a.history() == b.history()
        and a.returns() == b.returns()
        and a.rewards() == b.rewards()
        and a.is_terminal() == b.is_terminal()
        and all(a.information_state_string(p) == b.information_state_string(p) for p in range(players))
        and all(a.observation_tensor(p) == b.observation_tensor(p) for p in range(players))
    )


@pytest.mark.parametrize("name", sorted(SMALL))
@pytest.mark.parametrize("reward_model", ["terminal", "rewards"])
def test_every_state_of_a_game_round_trips_and_continues_identically(name, reward_model):
    game = pyspiel.load_game(name, {**SMALL[name], "reward_model": reward_model})
    state, rng, steps = game.new_initial_state(), np.random.default_rng(7), 0
    while True:
        text = state.serialize()
        assert "\n" not in text and json.loads(text)["format"] == "tableenvs-openspiel-state"
        copy = game.deserialize_state(text)
        assert same(copy, state, game.num_players()), steps
        assert same(deserialize_state(serialize_state(state)), state, game.num_players())
        if steps % 7 == 3:  # the copy continues as the original does
            a, b = state.clone(), copy
            for _ in range(5):
                if a.is_terminal():
                    break
                action = int(np.random.default_rng(steps).choice(a.legal_actions())) if not a.is_chance_node() else 1
                a.apply_action(action)
                b.apply_action(action)
            assert same(a, b, game.num_players())
        if state.is_terminal():
            break
        step_random(state, rng)
        steps += 1
    assert steps > 10


@pytest.mark.parametrize("name", sorted(SMALL))
def test_resampled_states_and_states_from_an_env_round_trip(name):
    game = pyspiel.load_game(name, SMALL[name])
    state, rng = game.new_initial_state(), np.random.default_rng(1)
    for _ in range(8):
        step_random(state, rng)
    sampler = iter(np.random.default_rng(2).random(10))
    world = state.resample_from_infostate(state.current_player(), lambda: next(sampler))
    copy = game.deserialize_state(world.serialize())
    assert same(copy, world, game.num_players()) and copy.env.get_state() == world.env.get_state()
    fresh = game.state_from_env(state.env.clone())
    copy = game.deserialize_state(fresh.serialize())
    assert same(copy, fresh, game.num_players()) and copy.history() == []


def pickled_text(marker: Path) -> str:
    """OpenSpiel's own state format whose ``__dict__`` pickle creates ``marker`` when read."""
    payload = base64.b64encode(pickle.dumps({"_table": Payload(marker)})).decode()
    return f"history=-1:3\nmove_number=1\n__dict__={payload}"


def test_a_pickle_payload_is_refused_and_runs_nothing(tmp_path):
    marker = tmp_path / "pwned"
    game = pyspiel.load_game("tableenvs_llama_party_v0", SMALL["tableenvs_llama_party_v0"])
    text = pickled_text(marker)
    full = pyspiel.serialize_game_and_state(game, game.new_initial_state()).split("[State]\n")[0] + "[State]\n" + text
    for attempt in (
        lambda: game.deserialize_state(text),
        lambda: deserialize_state(text),
        lambda: deserialize_state(full),
    ):
        with pytest.raises(UntrustedStateError) as raised:
            attempt()
        message = str(raised.value)
        assert "pickle that can run any code" in message and "trust_pickle=True" in message and "\n" not in message
    assert not marker.exists()


def test_with_trust_the_same_payload_would_run(tmp_path):
    """The refusal above matters: trusted, OpenSpiel's reader unpickles the payload (in a subprocess: the state it
    then builds from a file object is not one OpenSpiel can use)."""
    marker = tmp_path / "pwned"
    code = f"""
        import pyspiel, tableenvs.openspiel
        game = pyspiel.load_game("tableenvs_llama_party_v0", {SMALL["tableenvs_llama_party_v0"]!r})
        try:
            game.deserialize_state({pickled_text(marker)!r}, trust_pickle=True)
        except Exception:
            pass
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, timeout=HANG)
    assert marker.exists()


def test_openspiel_own_format_reads_back_with_trust():
    game = pyspiel.load_game("tableenvs_rummikub_v0", SMALL["tableenvs_rummikub_v0"])
    state, rng = game.new_initial_state(), np.random.default_rng(3)
    for _ in range(6):
        step_random(state, rng)
    full = pyspiel.serialize_game_and_state(game, state)
    assert same(deserialize_state(full, trust_pickle=True), state, 2)
    assert same(game.deserialize_state(full.split("[State]\n", 1)[1], trust_pickle=True), state, 2)
    other = pyspiel.load_game("tableenvs_rummikub_v0", {**SMALL["tableenvs_rummikub_v0"], "deal_seeds": 65})
    with pytest.raises(ValueError, match="with other parameters, not of this game"):
        other.deserialize_state(full.split("[State]\n", 1)[1], trust_pickle=True)


def base_record(over: bool = False) -> tuple[pyspiel.Game, dict]:
    game = pyspiel.load_game("tableenvs_llama_party_v0", SMALL["tableenvs_llama_party_v0"])
    state, rng = game.new_initial_state(), np.random.default_rng(4)
    while not state.is_terminal() and (over or len(state.history()) < 10):
        step_random(state, rng)
    return game, json.loads(state.serialize())


def changed(record: dict, **changes) -> dict:
    return {**json.loads(json.dumps(record)), **changes}


BAD = {
    "returns wrong": (lambda r: changed(r, returns=[5.0, 0.0]), "returns [5.0, 0.0] are not the env's returns"),
    "returns too short": (lambda r: changed(r, returns=[0.0]), "returns must be a list of 2 numbers"),
    "returns a string": (lambda r: changed(r, returns=["0", 0]), "returns must hold finite numbers"),
    "returns infinite": (lambda r: changed(r, returns="INFINITE"), "returns must hold finite numbers"),
    "step_rewards wrong": (lambda r: changed(r, step_rewards=[1.0, 2.0]), "step_rewards [1.0, 2.0] are not the env's"),
    "over but not ended": (lambda r: changed(r, over=True), "over is true but the env's game has not ended"),
    "over a number": (lambda r: changed(r, over=1), "over must be true or false"),
    "recall short": (lambda r: changed(r, recall=r["recall"][:1]), "recall must be a list of 2 digests"),
    "recall not hex": (lambda r: changed(r, recall=["zz" * 16, r["recall"][1]]), "recall[0] must be 32 lowercase hex"),
    "params of another size": (
        lambda r: changed(r, params={**r["params"], "num_players": 3}),
        "not of this game",
    ),
    "params of another game": (
        lambda r: changed(r, game="tableenvs_rummikub_v0"),
        "not of this game",
    ),
    "a game not of the bridge": (lambda r: changed(r, game="kuhn_poker"), "the record's game 'kuhn_poker' is not one"),
    "params a list": (lambda r: changed(r, params=[1]), "params must map parameter names"),
    "params a nested value": (lambda r: changed(r, params={**r["params"], "deck": {"a": 1}}), "params must map"),
    "params with a 10^30": (lambda r: changed(r, params={**r["params"], "num_players": 10**30}), "beyond OpenSpiel's"),
    "env of other options": (
        lambda r: changed(r, env={**r["env"], "options": {**r["env"]["options"], "reward": "win"}}),
        "not this game's",
    ),
    "env of another game": (
        lambda r: changed(r, env={**r["env"], "game": "pilipili_v0"}),
        "env must be a state record",
    ),
    "env malformed": (lambda r: changed(r, env={**r["env"], "returns": [1.0]}), "returns must have 2 items"),
    "env null mid-game": (lambda r: changed(r, env=None), "a state before the deal (env null) has zero returns"),
    "history with an illegal action": (lambda r: changed(r, history=[3, 9999]), "history[1] = 9999 is not a legal"),
    "history with a bad deal": (lambda r: changed(r, history=[64]), "history[0] = 64 is not a legal action"),
    "history of strings": (lambda r: changed(r, history=["3"]), "history[0] must be an action id"),
    "history too long": (lambda r: changed(r, history=[3] * 100_000), "history has 100000 actions"),
    "history a dict": (lambda r: changed(r, history={}), "history must be a list of actions"),
    "an unknown key": (lambda r: changed(r, surprise=1), "unknown surprise"),
    "a missing key": (lambda r: {k: v for k, v in r.items() if k != "recall"}, "missing recall"),
    "another format": (lambda r: changed(r, format="x"), "not a tableenvs OpenSpiel state record"),
    "a newer version": (lambda r: changed(r, version=2), "the record has version 2"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_an_inconsistent_record_is_refused_in_one_line(case):
    game, record = base_record()
    make, words = BAD[case]
    text = json.dumps(make(record)).replace('"INFINITE"', "[1e400, 0.0]")  # json.dumps would write Infinity
    readers = {"game": lambda: game.deserialize_state(text), "module": lambda: deserialize_state(text)}
    for reader, read in readers.items():
        with pytest.raises(ValueError) as raised:
            read()
        message = str(raised.value)
        assert message.startswith("deserialize_state: ") and "\n" not in message and len(message) < 1200, message
        # the module's reader loads the game the record names, so a record of another game is refused otherwise
        if reader == "game" or case not in ("params of another size", "params of another game"):
            assert words in message, message


def test_a_record_naming_a_deck_file_opens_no_file(tmp_path):
    """Only a game already loaded with that deck reads such a record; the module's reader never opens the file."""
    deck = tmp_path / "deck.json"
    _, record = base_record()
    for path in (str(deck), "/etc/passwd.json"):
        text = json.dumps(changed(record, params={**record["params"], "deck": path}))
        with pytest.raises(ValueError, match="the record's params deck name a file; load the game with it yourself"):
            deserialize_state(text)
    assert not deck.exists()


def test_a_finished_game_claimed_running_is_refused():
    game, record = base_record(over=True)
    assert record["over"] is True
    with pytest.raises(ValueError, match="over is false but the env's game has ended"):
        game.deserialize_state(json.dumps(changed(record, over=False)))


@pytest.mark.parametrize(
    "text, words",
    [
        ("", "not a tableenvs OpenSpiel state record"),
        ("hello", "not a tableenvs OpenSpiel state record"),
        ("{" * 100_000 + "}" * 100_000, "deserialize_state: "),
        ("[" * 100_000, "deserialize_state: not a tableenvs"),
        ('{"returns": NaN}', "NaN is not JSON"),
        ("[1, 2]", "not a tableenvs OpenSpiel state record"),
        ("{", "not JSON"),
    ],
)
def test_text_that_is_not_a_record_is_refused_in_one_line(text, words):
    game = pyspiel.load_game("tableenvs_llama_party_v0", SMALL["tableenvs_llama_party_v0"])
    with pytest.raises(ValueError) as raised:
        game.deserialize_state(text)
    assert words in str(raised.value) and "\n" not in str(raised.value)
    with pytest.raises(TypeError):
        serialize_state("not a state")


def test_a_trusted_pickle_with_inconsistent_contents_is_refused_too():
    """Even through OpenSpiel's own (trusted) reader, the record the pickle holds is checked as the JSON one is."""
    from tableenvs.openspiel.state import _Table

    game, record = base_record()
    record.pop("history")
    bad = changed(record, returns=[float("nan"), 0.0])

    class Tampered:
        def __reduce__(self):
            return (_Table.__new__, (_Table,), bad)

    text = "history=-1:3\nmove_number=1\n__dict__=" + base64.b64encode(pickle.dumps({"_table": Tampered()})).decode()
    with pytest.raises(ValueError, match="returns must hold finite numbers"):
        game.deserialize_state(text, trust_pickle=True)
    assert tos.TableState.serialize.__doc__
