"""Rummikub's batched engine (``tableenvs.vector.make("rummikub_v0", ...)``) plays exactly the AEC env's game: the
differential check of ``tests/vector_differential.py`` (seat to act, observation, mask and every seat's rewards at
every step, get_state against the AEC record, event log included) at 2, 3 and 4 players and under every rules
option, through auto-resets into the next episode; and its refusals."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from vector_differential import play_both, same_games_from_seeds, state_plays_on

import tableenvs
import tableenvs.vector

NAME = "rummikub_v0"


def asked(questions: list[tuple[int, int]]):
    """A ``finish`` for ``play_both``: keeps how many mask questions the engine asked and how many of them its
    Python ``TurnSweep``s answered (turns whose sweep did not fit the compiled slots)."""

    def finish(batched, envs):
        questions.append((batched._masks.questions, batched._masks.python_questions))

    return finish


@pytest.mark.parametrize("num_players", [2, 4])
def test_the_batched_engine_plays_the_aec_game(num_players):
    questions: list[tuple[int, int]] = []
    counts = play_both(
        NAME, {"num_players": num_players}, 64, seed=1000 * num_players, event_log=True, extra=5,
        finish=asked(questions),
    )  # fmt: skip
    assert counts["games"] >= 64 and counts["states"] > 0
    ((total, python),) = questions
    assert 0 < python < total / 2  # both sides answered: the compiled slots and the Python sweeps of big tables


def test_turns_whose_sweep_does_not_fit_the_compiled_slots_are_answered_alike(monkeypatch):
    from tableenvs.rummikub import batched_solver

    monkeypatch.setattr(batched_solver, "STATES", 256)  # most sweeps outgrow these: their turns go to Python
    monkeypatch.setattr(batched_solver, "EDGES", 1024)
    monkeypatch.setattr(batched_solver, "SLOTS", 512)
    questions: list[tuple[int, int]] = []
    counts = play_both(NAME, {"num_players": 3}, 32, seed=55, event_log=True, extra=5, finish=asked(questions))
    ((total, python),) = questions
    assert counts["games"] >= 32 and total / 3 < python < total


class Watch:
    """What the AEC envs went through (seen before each step): how finished games ended, failed plays, the
    longest episode in turns."""

    def __init__(self):
        self.ends: Counter[str] = Counter()
        self.seen: dict[int, int] = {}
        self.failed = 0
        self.most_turns = 0

    def __call__(self, env):
        game = env.game
        key = id(env)
        if len(game.results) > self.seen.get(key, 0):
            self.ends[game.results[-1].end] += 1
        self.seen[key] = len(game.results)
        self.failed += sum("invalid play taken back" in line for line in env.event_log[-1:])
        self.most_turns = max(self.most_turns, game.turn)


def test_the_batched_engine_plays_the_aec_game_with_the_spec_option_set():
    options = tableenvs.spec(NAME).option_sets[1]  # strict_commit=False, draw_after_play=True, games_per_episode=2
    assert options == {"strict_commit": False, "draw_after_play": True, "games_per_episode": 2}
    watch = Watch()
    counts = play_both(NAME, {"num_players": 4, **options}, 48, seed=7, event_log=True, extra=3, watch=watch)
    assert counts["games"] >= 48 and watch.ends["out"] > 0  # second games started inside an episode


@pytest.mark.parametrize(
    "options",
    [
        {"num_players": 3, "pool_exhausted": "draw", "end_on_empty_pool": True, "min_initial": 0},
        {"num_players": 2, "max_turns": 40, "min_initial": 12, "games_per_episode": 3},
        {"num_players": 4, "strict_commit": False, "min_initial": 50, "end_on_empty_pool": True},
    ],
    ids=["draw-end-on-empty-pool", "max-turns", "penalties"],
)
def test_the_batched_engine_plays_the_aec_game_under_every_rules_option(options):
    counts = play_both(NAME, options, 32, seed=300, event_log=True, extra=3)
    assert counts["games"] >= 32


def test_games_that_end_by_passes_with_the_lowest_rack_and_truncated_episodes_agree():
    """Long 2-player episodes where nobody can open (``min_initial`` above what any rack makes): every game ends
    when the pool has run out and both players passed (80 turns), and the third game of each episode is cut short at
    ``max_turns``."""
    watch = Watch()
    options = {"num_players": 2, "games_per_episode": 3, "max_turns": 200, "min_initial": 755}
    play_both(NAME, options, 16, seed=11, event_log=True, extra=3, watch=watch, state_every=61)
    assert watch.ends == {"lowest_rack": 32} and watch.most_turns == 199


def test_a_sequence_of_seeds_and_trusted_mode_play_the_same_games():
    same_games_from_seeds(NAME, {"num_players": 3}, 200)


def test_get_state_opens_in_the_aec_env_and_plays_on_identically():
    state_plays_on(NAME, {"num_players": 4}, warmup=60)


def test_an_illegal_action_names_the_env_the_action_and_the_legal_ones_and_changes_nothing():
    games = tableenvs.vector.make(NAME, 8)
    obs, mask = games.reset(0)
    before = (obs.copy(), mask.copy(), games.get_state(5))
    actions = np.array([np.flatnonzero(m)[-1] for m in mask])
    illegal = int(np.flatnonzero(mask[5] == 0)[0])
    actions[5] = illegal
    legal = ", ".join(str(a) for a in np.flatnonzero(mask[5]))
    said = rf"env 5: illegal action {illegal} for player_{int(games.to_act[5])}; legal actions: {legal}$"
    with pytest.raises(ValueError, match=said):
        games.step(actions)
    actions[5] = 55
    with pytest.raises(ValueError, match=r"env 5: action 55 is not an action id \(0..54\)"):
        games.step(actions)
    assert np.array_equal(obs, before[0]) and np.array_equal(mask, before[1]) and games.get_state(5) == before[2]


def test_options_the_batched_engine_does_not_support_are_refused_in_one_line():
    with pytest.raises(ValueError, match=r"^rummikub_v0: the batched engine does not render \(render_mode='ansi'\)"):
        tableenvs.vector.make(NAME, 2, render_mode="ansi")
    with pytest.raises(TypeError, match="unknown option"):
        tableenvs.vector.make(NAME, 2, players=3)
    with pytest.raises(ValueError, match="num_players must be in 2..4"):
        tableenvs.vector.make(NAME, 2, num_players=5)
    with pytest.raises(ValueError, match="pool_exhausted must be one of"):
        tableenvs.vector.make(NAME, 2, pool_exhausted="nobody")


def test_the_engine_keeps_the_contract():
    games = tableenvs.vector.make(NAME, 5, num_players=2)
    assert isinstance(games, tableenvs.vector.BatchedGame)
    assert (games.num_envs, games.num_players, games.num_actions) == (5, 2, 55)
    env = tableenvs.make_raw(NAME, num_players=2)
    env.reset(seed=0)
    assert games.obs_size == env.observation_space("player_0")["observation"].shape[0]
    games.reset(0)
    assert games.to_act.dtype == np.int64 and games.to_act.shape == (5,)
    assert NAME in tableenvs.vector.batched_names()


def test_the_replay_log_grows_with_long_episodes_and_get_state_still_replays_them(monkeypatch):
    import tableenvs.rummikub.batched as batched

    monkeypatch.setattr(batched, "_LOG_START", 8)  # episodes outgrow the log many times over
    counts = play_both(NAME, {"num_players": 3, "games_per_episode": 2}, 8, seed=5, event_log=True, state_every=7)
    assert counts["steps"] > 64 and counts["states"] > 0
