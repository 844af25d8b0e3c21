"""Llama Party's batched engine (``tableenvs.vector.make("llama_party_v0", ...)``) plays exactly the AEC env's game:
the differential check of ``tests/vector_differential.py`` at 2, 3 and 4 players with every option it supports
(both rewards, a deck of several-rule cards), through an auto-reset into the next game; and its refusals."""

from __future__ import annotations

import numpy as np
import pytest
from vector_differential import play_both, same_games_from_seeds, state_plays_on

import tableenvs
import tableenvs.vector
from tableenvs.core.registry import GameSpec, register_game
from tableenvs.llama_party.cards import STANDARD_DECK, card_record

NAME = "llama_party_v0"


def several_rule_deck() -> list[dict]:
    """The standard deck with a few cards carrying several rules (letter rules and combinations), and 8 As moved."""
    cards = [card_record(card) for card in STANDARD_DECK]
    cards[0]["top"] = [{"letter": "A", "points": 2}, {"letter": "H", "points": -1}]
    cards[0]["bottom"] = [{"combo": "AABB", "points": 12}, {"combo": "AA", "points": 3}, {"combo": "HH", "points": -4}]
    cards[13]["bottom"] = [{"combo": "DG", "points": 7}, {"combo": "DDGG", "points": 20}]
    cards[21]["top"] = [{"letter": "D", "points": -1}, {"letter": "D", "points": 3}, {"letter": "E", "points": 1}]
    cards[5]["letter"], cards[9]["letter"] = "C", "B"
    return cards


@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize("options", [{}, {"reward": "win"}], ids=["score", "win"])
def test_the_batched_engine_plays_the_aec_game(num_players, options):
    counts = play_both(NAME, {"num_players": num_players, **options}, 64, seed=1000 * num_players)
    assert counts["games"] >= 64 and counts["states"] > 0


@pytest.mark.parametrize("num_players", [3, 4])
def test_the_batched_engine_plays_the_aec_game_with_a_deck_of_several_rule_cards(num_players):
    options = {"num_players": num_players, "deck": several_rule_deck(), "reward": "score"}
    assert play_both(NAME, options, 32, seed=77)["games"] >= 32


def test_a_sequence_of_seeds_and_trusted_mode_play_the_same_games():
    same_games_from_seeds(NAME, {}, 300)


def test_get_state_opens_in_the_aec_env_and_plays_on_identically():
    state_plays_on(NAME, {"num_players": 3}, warmup=70)  # into round 2


def test_an_illegal_action_names_the_env_the_action_and_the_legal_ones_and_changes_nothing():
    games = tableenvs.vector.make(NAME, 8)
    obs, mask = games.reset(0)
    before = (obs.copy(), mask.copy(), games.get_state(5))
    actions = np.array([np.flatnonzero(m)[0] for m in mask])
    illegal = int(np.flatnonzero(mask[5] == 0)[0])
    actions[5] = illegal
    legal = ", ".join(str(a) for a in np.flatnonzero(mask[5]))
    with pytest.raises(ValueError, match=rf"env 5: illegal action {illegal} for player_0; legal actions: {legal}$"):
        games.step(actions)
    actions[5] = 40
    with pytest.raises(ValueError, match=r"env 5: action 40 is not an action id \(0..31\)"):
        games.step(actions)
    trusted = tableenvs.vector.make(NAME, 8, trusted=True)
    trusted.reset(0)
    with pytest.raises(ValueError, match="env 5: action 40 is not an action id"):  # checked even when trusted
        trusted.step(actions)
    assert np.array_equal(obs, before[0]) and np.array_equal(mask, before[1]) and games.get_state(5) == before[2]
    with pytest.raises(ValueError, match=r"actions must have shape \(8,\)"):
        games.step(actions[:7])
    with pytest.raises(ValueError, match="actions must be integers"):
        games.step(actions.astype(float))


def test_bad_seeds_and_calls_before_reset_are_refused():
    games = tableenvs.vector.make(NAME, 4)
    with pytest.raises(RuntimeError, match="before the first reset"):
        games.step([0, 0, 0, 0])
    with pytest.raises(ValueError, match="seed lists 3 seeds for 4 envs"):
        games.reset([1, 2, 3])
    with pytest.raises(ValueError, match=r"seed\[1\] must be None or a non-negative integer"):
        games.reset([1, -2, 3, 4])
    with pytest.raises(ValueError, match="seed must be None or a non-negative integer"):
        games.reset(-1)
    with pytest.raises(ValueError, match="env index must be an int in 0..3"):
        games.reset(0) and games.get_state(4)


def test_options_the_batched_engine_does_not_support_are_refused_in_one_line():
    with pytest.raises(ValueError, match=r"^llama_party_v0: the batched engine does not render \(render_mode='ansi'\)"):
        tableenvs.vector.make(NAME, 2, render_mode="ansi")
    with pytest.raises(TypeError, match="unknown option"):
        tableenvs.vector.make(NAME, 2, players=3)
    with pytest.raises(ValueError, match="num_players must be in 2..4"):
        tableenvs.vector.make(NAME, 2, num_players=5)
    with pytest.raises(ValueError, match="num_envs must be an integer >= 1"):
        tableenvs.vector.make(NAME, 0)


def test_a_game_without_a_batched_engine_is_named_with_what_it_lacks():
    name = "nim_vector_test_v0"
    if name not in tableenvs.names():
        register_game(GameSpec(name, "tableenvs.toy_game", "tableenvs/NimVectorTest-v0"))
    with pytest.raises(ValueError) as error:
        tableenvs.vector.make(name, 4)
    message = str(error.value)
    assert "\n" not in message and message.startswith(f"{name} has no batched engine")
    assert "'batched'" in message and NAME in message
    assert NAME in tableenvs.vector.batched_names() and name not in tableenvs.vector.batched_names()


def test_the_engine_keeps_the_contract():
    games = tableenvs.vector.make(NAME, 5, num_players=2)
    assert isinstance(games, tableenvs.vector.BatchedGame)
    assert (games.num_envs, games.num_players, games.num_actions) == (5, 2, 32)
    env = tableenvs.make_raw(NAME, num_players=2)
    env.reset(seed=0)
    assert games.obs_size == env.observation_space("player_0")["observation"].shape[0]
    games.reset(0)
    assert games.to_act.dtype == np.int64 and games.to_act.shape == (5,)


def _twice(values):  # a kernel for the compile test below (numba caches functions defined in files)
    return values * 2


def test_a_compilation_is_announced_once_on_stderr_and_then_loaded_from_the_disk_cache(tmp_path, monkeypatch, capsys):
    import tableenvs.vector.compile as compile_module

    monkeypatch.setattr(compile_module, "cache_dir", lambda: str(tmp_path))
    (kernel,) = compile_module.compile_kernels((_twice,), "a test kernel", __file__, "no time")
    assert kernel(np.arange(3)).tolist() == [0, 2, 4]
    first = capsys.readouterr().err
    assert first.count("tableenvs: compiling a test kernel, once: no time") == 1, first
    (again,) = compile_module.compile_kernels((_twice,), "a test kernel", __file__, "no time")
    assert again(np.arange(2)).tolist() == [0, 2]
    assert "compiling" not in capsys.readouterr().err
    assert any(tmp_path.rglob("*.nbi")), "nothing was cached in the cache directory"
