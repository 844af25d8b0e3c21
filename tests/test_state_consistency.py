"""``set_state`` refuses inconsistent records with a ``StateError`` naming the field, before anything changes:
the measured cases one by one, then the field-by-field mutation fuzz
(``benchmarks/state_mutation_fuzz.py``) for ``CI_SECONDS`` (``STATE_FUZZ_SECONDS`` for a longer run)."""

from __future__ import annotations

import json
import os
import time

import numpy as np
import pytest

import tableenvs
from benchmarks import state_mutation_fuzz as fuzz
from tableenvs.core.state import StateError
from tableenvs.testing import games


def played(name: str, options: dict, seed: int, steps: int):
    env = tableenvs.make_raw(name, **options)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        env.step(int(rng.choice(env.legal_actions())))
    return env


def refused(env, record: dict, words: str) -> None:
    before = json.dumps(env.get_state())
    with pytest.raises(StateError, match=words):
        env.set_state(record)
    assert json.dumps(env.get_state()) == before


def copy(record: dict) -> dict:
    return json.loads(json.dumps(record))


def test_rummikub_invalid_meld_in_arrangement():
    env = played("rummikub_v0", {"num_players": 2}, 0, 0)
    for seed in range(40):  # a point with melds on the table
        env = played("rummikub_v0", {"num_players": 2}, seed, 60)
        if env.game.arrangement and not env.game.over and not env.game.truncated:
            break
    record = copy(env.get_state())
    meld = record["rules"]["arrangement"][0]
    meld[0] = "run" if meld[0] == "group" else "group"
    refused(env, record, r"rules\.arrangement\[0\]")


def test_pilipili_phase_shifted_and_counters():
    env = played("pilipili_v0", {"num_players": 4, "missions": "none"}, 1, 10)
    record = env.get_state()
    for key, value, words in (
        ("phase", record["rules"]["phase"] + 1, "rules"),
        ("tricks_played", -1, "trick"),
        ("rounds_completed", 10**30, "rounds_completed"),
    ):
        bad = copy(record)
        bad["rules"][key] = value
        refused(env, bad, words)
    bad = copy(record)
    bad["rules"]["last_scored"] = [[0] * 4, [0] * 4, [0] * 4, [0] * 4, [[9, 3, 3]], 7]
    refused(env, bad, "last_scored")


def test_rummikub_truncated_mid_game_and_huge_turn():
    env = played("rummikub_v0", {"num_players": 2, "max_turns": 100}, 2, 20)
    record = env.get_state()
    bad = copy(record)
    bad["rules"]["truncated"] = True
    refused(env, bad, "truncated")
    for turn in (10**30, 1e30, 2**63):
        bad = copy(record)
        bad["rules"]["turn"] = turn
        refused(env, bad, "turn")
    with pytest.raises(ValueError, match="max_turns"):
        tableenvs.make_raw("rummikub_v0", max_turns=2**63)


@pytest.mark.parametrize("name", games("builtin", "state"))
def test_non_finite_rewards_deep_nesting_and_huge_lists(name):
    env = played(name, {"num_players": 2}, 3, 5)
    record = env.get_state()
    for value in (float("nan"), float("inf"), -float("inf")):
        for key in ("rewards", "cumulative_rewards"):
            bad = copy(record)
            bad[key]["player_0"] = value
            refused(env, bad, "finite")
        bad = copy(record)
        bad["returns"][0] = value
        refused(env, bad, "finite")
    deep: list = []
    for _ in range(50_000):
        deep = [deep]
    bad = copy(record)
    bad["event_log"] = deep
    refused(env, bad, "deep")
    bad = copy(record)
    bad["rules"]["pool" if name == "rummikub_v0" else "hands"] = list(range(5_000_000))
    start = time.thread_time()  # CPU time of this thread: a starved machine does not inflate it
    refused(env, bad, "items")
    assert time.thread_time() - start < 0.5


def test_llama_party_counts_of_the_step():
    env = played("llama_party_v0", {"num_players": 3}, 4, 5)
    record = env.get_state()
    bad = copy(record)
    bad["rules"]["step"] = (bad["rules"]["step"] + 1) % 5
    refused(env, bad, "rules")
    bad = copy(record)
    bad["rules"]["over"] = True
    refused(env, bad, "rules")


def test_mutation_fuzz_finds_nothing_broken():
    seconds = float(os.environ.get("STATE_FUZZ_SECONDS", fuzz.CI_SECONDS))
    counts = fuzz.run(seconds, seed=int(os.environ.get("STATE_FUZZ_SEED", "0")))
    assert counts.mutations > 0 and counts.rejected > 0 and counts.played > 0, counts.line()
    assert not counts.broken, (counts.line(), counts.broken[:10])
