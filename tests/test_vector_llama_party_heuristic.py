"""Llama Party's batched heuristic (``BatchedHeuristic``) chooses exactly as ``HeuristicPolicy`` on thousands of
positions recorded from batched play (half heuristic, half random moves, so play reaches varied positions), at 2, 3
and 4 players and with a deck of several-rule cards; its card values (a model's derived inputs) are the Python ones
float for float; and it refuses malformed input in one line."""

from __future__ import annotations

import numpy as np
import pytest
from test_vector_llama_party import several_rule_deck

import tableenvs
import tableenvs.vector
from tableenvs.llama_party.agents import HeuristicPolicy
from tableenvs.llama_party.batched_heuristic import BatchedHeuristic
from tests.batched_positions import recorded_positions

NAME = "llama_party_v0"


@pytest.mark.parametrize(
    "options",
    [{"num_players": 2}, {"num_players": 3}, {"num_players": 4}, {"num_players": 4, "deck": several_rule_deck()}],
    ids=["2p", "3p", "4p", "4p-several-rule-deck"],
)
def test_the_batched_heuristic_chooses_as_the_python_heuristic(options):
    obs, mask, _ = recorded_positions(NAME, options, 48, 80, options["num_players"], heuristic=True)  # 3,840 positions
    python = HeuristicPolicy(tableenvs.make_raw(NAME, **options))
    rng = np.random.default_rng(0)
    expected = np.array([python.act(o, m, rng) for o, m in zip(obs, mask, strict=True)])
    chosen = BatchedHeuristic(options.get("deck")).act(obs, mask)
    assert len(np.unique(expected)) > 16  # varied positions, not one choice repeated
    assert np.flatnonzero(chosen != expected).tolist() == []


@pytest.mark.parametrize(
    "options", [{"num_players": 2}, {"num_players": 3}, {"num_players": 4, "deck": several_rule_deck()}],
    ids=["2p", "3p", "4p-several-rule-deck"],
)  # fmt: skip
def test_the_card_values_of_a_batch_are_the_row_by_row_values(options):
    """``CardValues.batch`` (the derived inputs of the 2- and 3-player models, one compiled call) gives the very
    floats of ``CardValues`` row by row, with and without the pick block, final positions (no legal card) included."""
    from tableenvs.llama_party.features import CardValues

    obs, mask, _ = recorded_positions(NAME, options, 32, 60, options["num_players"], heuristic=True)
    env = tableenvs.make_raw(NAME, **options)
    env.reset(seed=0)
    mask = mask.copy()
    mask[:5] = 0  # as a final observation
    for choice in (True, False):
        values = CardValues(env, choice=choice)
        expected = np.stack([values(o, m) for o, m in zip(obs, mask, strict=True)])
        got = values.batch(obs, mask)
        assert got.dtype == np.float32 and np.array_equal(got, expected)
        assert (expected[:, :32] > -5).sum() > len(obs)  # values, not only defaults
        assert expected[:, 32:].sum() == (len(obs) - 5 if choice else 0)


def test_the_batched_heuristic_refuses_malformed_batches():
    heuristic = BatchedHeuristic()
    obs = np.zeros((3, 469), np.float32)
    mask = np.ones((3, 32), np.int8)
    with pytest.raises(ValueError, match=r"obs must be \(rows, 469\) and mask \(rows, 32\)"):
        heuristic.act(obs[:, :400], mask)
    mask[1] = 0
    with pytest.raises(ValueError, match="row 1 of the mask has no legal action"):
        heuristic.act(obs, mask)


def test_front_door_heuristic_matches_the_class_and_refuses_games_without_one(monkeypatch):
    import dataclasses

    import tableenvs.vector

    games = tableenvs.vector.make("llama_party_v0", 16, num_players=3)
    obs, mask = games.reset(seed=5)
    player = tableenvs.vector.batched_heuristic(games)
    assert isinstance(player, tableenvs.vector.BatchedPolicy)
    envs = np.arange(16, dtype=np.int64)
    assert np.array_equal(player.act(obs, mask, envs), BatchedHeuristic().act(obs, mask))
    plain = dataclasses.replace(tableenvs.spec("llama_party_v0"), batched_heuristic=None)
    import tableenvs.vector.players as players

    real_spec = players.game_spec
    monkeypatch.setattr(players, "game_spec", lambda name: plain if name == "llama_party_v0" else real_spec(name))
    with pytest.raises(ValueError, match="llama_party_v0 has no batched heuristic.*; games that have one: pilipili_v0"):
        tableenvs.vector.batched_heuristic(games)
