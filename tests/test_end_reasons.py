"""Why a game ended: ``Outcome.reason``, one of the end reasons each game declares as data.

Every declared reason of every game is produced here by a scripted or played game (truncation included), and
``tableenvs play`` prints it at the end of a game.
"""

from __future__ import annotations

import numpy as np
import pytest

import tableenvs
from tableenvs.cli import main
from tableenvs.core.outcome import CUT_SHORT, RULES_ENDED, EndReason
from tableenvs.policies import RandomPolicy, make_policy, play_game
from tableenvs.rummikub.encoder import DRAW
from tableenvs.rummikub.rules import FULL_SET
from tableenvs.rummikub.tiles import TILE_TYPES, parse_tiles
from tableenvs.testing import games
from tableenvs.toy_game import NimEnv


def played(game: str, policy: str = "random", seed: int = 0, reset: dict | None = None, **options):
    """The outcome of one game of ``game`` played by ``policy`` at every seat (``reset``: scripted reset options)."""
    env = tableenvs.make_raw(game, **options)
    seats = [make_policy(policy, env)] * env.num_players
    if reset is None:
        play_game(env, seats, seed=seed, rng=np.random.default_rng(seed))
    else:
        env.reset(seed=seed, options=reset)
        while not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
            env.step(int(env.legal_actions()[0]))
    return env.outcome()


def rummikub_scripted(**options):
    """Two racks, every other tile on the table (a valid one) but one joker, which is the pool: player_0 draws it."""
    racks = [["red 5", "orange 2"], ["blue 5", "black 2"]]
    rest = FULL_SET - sum(parse_tiles("racks", r) for r in racks)
    rest[TILE_TYPES - 1] -= 1
    env = tableenvs.make_raw("rummikub_v0", num_players=2, **options)
    table = np.repeat(np.arange(TILE_TYPES), rest).tolist()
    env.reset(seed=0, options={"racks": racks, "table": table, "pool": ["joker"], "first_player": 0})
    while not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
        env.step(DRAW)
    return env.outcome()


#: (game, reason key) -> a game that ends for that reason
CASES = {
    ("pilipili_v0", "chili_limit"): lambda: played("pilipili_v0"),
    ("pilipili_v0", "max_rounds"): lambda: played("pilipili_v0", max_rounds=1),
    ("llama_party_v0", "last_round"): lambda: played("llama_party_v0"),
    ("llama_party_v0", "score_limit"): lambda: played("llama_party_v0", reset={"totals": [1000, 0, 0, 0]}),
    ("rummikub_v0", "went_out"): lambda: played("rummikub_v0", "heuristic", num_players=2),
    ("rummikub_v0", "blocked"): lambda: rummikub_scripted(),
    ("rummikub_v0", "pool_empty"): lambda: rummikub_scripted(end_on_empty_pool=True),
    ("rummikub_v0", "max_turns"): lambda: played("rummikub_v0", num_players=2, max_turns=5),
}


def test_every_declared_reason_is_tested():
    declared = {(name, reason.key) for name in games("builtin") for reason in tableenvs.make_raw(name).end_reasons}
    assert declared == set(CASES)


@pytest.mark.parametrize("game, key", list(CASES), ids=lambda x: x if isinstance(x, str) else None)
def test_each_reason_is_produced_by_a_game(game, key):
    outcome = CASES[game, key]()
    assert outcome.reason.key == key
    assert outcome.reason.truncated == outcome.truncated
    assert str(outcome).endswith(f"ended: {outcome.reason.text}")
    assert "reason=EndReason(key=" in repr(outcome)


def test_the_reason_survives_a_state_record():
    """Not saved: derived from the rules state, so a restored finished game reports the same reason."""
    env = tableenvs.make_raw("pilipili_v0", max_rounds=1)
    play_game(env, [RandomPolicy()] * env.num_players, seed=0, rng=np.random.default_rng(0))
    again = tableenvs.make_raw("pilipili_v0", max_rounds=1)
    again.set_state(env.get_state())
    assert again.outcome() == env.outcome() and again.outcome().reason.key == "max_rounds"


def test_a_game_declaring_none_gets_the_defaults():
    env = NimEnv()
    play_game(env, [RandomPolicy()] * env.num_players, seed=0, rng=np.random.default_rng(0))
    assert env.end_reasons == (RULES_ENDED, CUT_SHORT)
    assert env.outcome().reason is RULES_ENDED and str(RULES_ENDED) == "the game ended by its rules"


def test_an_undeclared_reason_is_a_clear_error():
    class Wrong(NimEnv):
        def _end_reason(self, truncated: bool) -> str:
            return "resigned"

    env = Wrong()
    play_game(env, [RandomPolicy()] * env.num_players, seed=0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"nim_v0: end reason 'resigned' is not one it declares .*: rules$"):
        env.outcome()


def test_several_reasons_of_a_kind_need_the_hook():
    class Two(NimEnv):
        end_reasons = (EndReason("a", "one way"), EndReason("b", "another way"))

    env = Two()
    play_game(env, [RandomPolicy()] * env.num_players, seed=0, rng=np.random.default_rng(0))
    with pytest.raises(NotImplementedError, match=r"nim_v0 declares 2 end reasons of this kind \(a, b\)"):
        env.outcome()


def test_play_prints_why_the_game_ended(capsys):
    assert main(["play", "rummikub_v0", "--players", "2", "--policies", "heuristic", "--seed", "0", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "\ngame ended: a player emptied its rack\ntotal reward: " in out
