"""Issue 30 item 7 leftovers: deep deck files, linear mission-deck loading, evaluate's unknown policy, dead steps."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest

import tableenvs
from tableenvs.core.registry import make_raw
from tableenvs.decks import DeckError
from tableenvs.llama_party.cards import load_cards
from tableenvs.pilipili.missions import load_missions
from tests.bad_input.helpers_bad_input import GAMES, assert_clear_error


@pytest.mark.parametrize("suffix", [".json", ".toml"])
@pytest.mark.parametrize("depth", [900, 50_000])
def test_deeply_nested_deck_files_are_a_deck_error(tmp_path, suffix, depth):
    if suffix == ".json":
        text = '{"mission": ' + "[" * depth + "]" * depth + "}"
    else:
        text = "name = " + "[" * depth + "]" * depth + "\n"
    path = tmp_path / f"deep{suffix}"
    path.write_text(text)
    for load in (load_missions, load_cards):
        message = assert_clear_error(DeckError, [str(path), "nested"], lambda load=load: load(path))
        assert len(message) < 400


def test_deeply_nested_deck_data_is_a_deck_error():
    data: list = []
    for _ in range(50_000):
        data = [data]
    assert_clear_error(DeckError, ["nested more than"], lambda: load_missions({"mission": data}))


def _deck(n: int) -> list[dict]:
    return [
        {"id": i + 1, "hand_size": 5, "expert": False, "effects": [{"type": "pass_left", "count": 1}]} for i in range(n)
    ]


def test_mission_deck_loading_is_linear():
    def seconds(n: int) -> float:
        deck = _deck(n)
        start = time.process_time()
        assert len(load_missions(deck)) == n
        return time.process_time() - start

    seconds(200)  # warm up
    small, large = min(seconds(1000) for _ in range(2)), min(seconds(8000) for _ in range(2))
    assert large < 8 * small * 2.0, (small, large)  # quadratic would be 64x
    assert large < 4.0


def test_mission_deck_duplicate_ids_still_named():
    deck = _deck(3)
    deck[2]["id"] = 1
    assert_clear_error(DeckError, ["duplicate mission id(s) 1"], lambda: load_missions(deck))


def test_evaluate_names_an_unknown_policy():
    pytest.importorskip("openskill")
    from tableenvs.evaluation import evaluate

    assert_clear_error(ValueError, ["policy #1", "unknown policy 'nope'"], lambda: evaluate("pilipili_v0", ["nope"], 4))
    assert_clear_error(ValueError, ["got 1", "one player per policy"], lambda: evaluate("pilipili_v0", ["random"], 4))


def _played_out(env):
    rng = np.random.default_rng(0)
    env.reset(seed=1)
    for _ in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
        else:
            env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    assert env.agents == []
    return env


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("call", [("step", None), ("step", 0), ("last", True), ("last", False)])
def test_raw_env_after_all_dead_steps_is_a_clear_error(game, call):
    env = _played_out(make_raw(game))
    method, argument = call
    assert_clear_error(
        RuntimeError, [game, "every agent took its dead step", "reset()"], lambda: getattr(env, method)(argument)
    )


@pytest.mark.parametrize("game", GAMES)
def test_wrapped_env_after_all_dead_steps(game):
    env = _played_out(tableenvs.make(game))
    for observe in (True, False):
        assert_clear_error(RuntimeError, ["every agent took its dead step"], lambda o=observe: env.last(o))
    env.observe(env.agent_selection)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(0)  # PettingZoo's warning, no KeyError
        env.step(None)
