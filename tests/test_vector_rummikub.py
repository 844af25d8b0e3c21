"""Rummikub's batched engine (``tableenvs.vector.make("rummikub_v0", ...)``) plays exactly the AEC env's game: the
differential check of ``tests/vector_differential.py`` (seat to act, observation, mask and every seat's rewards at
every step, get_state against the AEC record, event log included) at 2, 3 and 4 players and under every rules
option, through auto-resets into the next episode; and its refusals."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from vector_differential import check_results, play_both, same_games_from_seeds, seeded_pair, state_plays_on

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


# 2, 3 and 4 players; two-game episodes; episodes cut short by max_turns (after a finished game, with its scores,
# and in the first game); games ended by a player going out, by passes with the lowest rack, as draws when the pool
# runs out (end_on_empty_pool); failed plays with penalties. Each case: options, envs, what its episodes must show.
RESULT_CASES = {
    "2p-two-games-cut-short": (
        {"num_players": 2, "games_per_episode": 2, "max_turns": 130, "min_initial": 755}, 16,
        ("truncated", "1 games", "lowest_rack", "scored"),
    ),
    "2p-short": ({"num_players": 2, "max_turns": 60, "min_initial": 0}, 24, ("truncated", "terminated", "out")),
    "3p-two-games": ({"num_players": 3, "games_per_episode": 2, "min_initial": 0}, 16, ("2 games", "out")),
    "3p-draw-empty-pool": (
        {"num_players": 3, "pool_exhausted": "draw", "end_on_empty_pool": True, "min_initial": 755}, 8,
        ("terminated", "draw"),
    ),
    "4p-penalties": (
        {"num_players": 4, "strict_commit": False, "draw_after_play": True}, 16, ("lowest_rack", "out", "scored"),
    ),
    "4p-default": ({"num_players": 4}, 16, ("terminated", "scored")),
}  # fmt: skip


@pytest.mark.parametrize("case", list(RESULT_CASES))
def test_last_results_are_the_aec_outcome_of_every_ended_episode(case):
    """``last_results`` of the envs whose episode ended on a step (asked for all of them at once) give, row by row,
    the AEC env's ``outcome()`` of the same episode: every seat's summed rewards and final score exactly (float64),
    and its winners, those of an episode cut short included (the best scores, as ``outcome`` names them)."""
    options, num_envs, required = RESULT_CASES[case]
    batched, raws, _, mask = seeded_pair(NAME, options, num_envs, 70)
    rng = np.random.default_rng(5)
    episodes = np.zeros(num_envs, np.int64)
    seen: Counter[str] = Counter()
    while (episodes < 2).any():
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        _, mask, rewards, terminated, truncated = batched.step(actions)
        ended = np.flatnonzero(terminated | truncated)
        returns, scores, winners = batched.last_results(ended)
        assert returns.dtype == scores.dtype == np.float64 and winners.dtype == np.bool_
        assert returns.shape == scores.shape == winners.shape == (len(ended), batched.num_players)
        for i, env in enumerate(raws):
            env.step(int(actions[i]))
            if i not in ended:
                continue
            j = int(np.flatnonzero(ended == i)[0])
            outcome, game = env.outcome(), env.game
            where = f"{case}: env {i} episode {episodes[i]}"
            assert outcome is not None and outcome.truncated == bool(truncated[i]), where
            assert tuple(returns[j].tolist()) == outcome.returns, f"{where}: {returns[j]} {outcome.returns}"
            assert tuple(scores[j].tolist()) == outcome.scores, f"{where}: {scores[j]} {outcome.scores}"
            assert tuple(np.flatnonzero(winners[j]).tolist()) == outcome.winners, f"{where}: {winners[j]}"
            seen["truncated" if outcome.truncated else "terminated"] += 1
            seen[f"{len(game.results)} games"] += 1
            seen.update(result.end for result in game.results)
            seen["scored"] += any(outcome.scores)
            episodes[i] += 1
            env.reset()
    assert all(seen[what] > 0 for what in required), seen


def test_step_rows_plays_only_the_envs_it_names():
    """``step_rows`` (the batched evaluation's step once some games are over): the envs named play on exactly as
    their AEC envs do (the masks asked only for them, a turn's incremental sweep kept across the steps it waits),
    with their results; the others stay as they are, no reward, not ended; bad rows and actions are refused in one
    line, changing nothing."""
    num, options = 10, {"num_players": 3, "games_per_episode": 2, "max_turns": 90}
    batched, raws, obs, mask = seeded_pair(NAME, options, num, 50)
    rng = np.random.default_rng(3)
    ended = waited = 0
    while ended < 2 * num:
        rows = np.flatnonzero(rng.random(num) < 0.5)
        actions = np.array([rng.choice(np.flatnonzero(mask[r])) for r in rows], np.int64)
        kept = obs.copy(), mask.copy()
        obs, mask, rewards, terminated, truncated = batched.step_rows(rows, actions)
        played = dict(zip(rows.tolist(), actions.tolist(), strict=True))
        for i, env in enumerate(raws):
            where = f"step {waited + ended} env {i}"
            if i in played:
                env.step(played[i])
                assert rewards[i].tolist() == [env.rewards[a] for a in env.possible_agents], where
                done = all(env.terminations.values()), all(env.truncations.values())
                assert (bool(terminated[i]), bool(truncated[i])) == done, where
                if terminated[i] or truncated[i]:
                    check_results(batched.last_results, i, env.outcome(), where)
                    ended += 1
                    env.reset()
            else:
                assert not rewards[i].any() and not terminated[i] and not truncated[i], where
                assert np.array_equal(obs[i], kept[0][i]) and np.array_equal(mask[i], kept[1][i]), where
                waited += 1
            agent = env.agent_selection
            assert batched.to_act[i] == env.agent_name_mapping[agent], where
            assert np.array_equal(env.observe(agent)["observation"], obs[i]), where
            assert np.array_equal(env.observe(agent)["action_mask"], mask[i]), where
    assert waited > 100
    assert batched.get_state(4) == raws[4].get_state()  # the replay log holds the row's own actions only
    before = obs.copy(), mask.copy(), batched.get_state(1)
    legal = int(np.flatnonzero(mask[1])[0])
    illegal = int(np.flatnonzero(mask[1] == 0)[0])
    first = int(np.flatnonzero(mask[3])[0])
    for rows, actions, match in (
        ([1, 1], [legal, legal], "rows must be distinct env indices in 0..9"),
        ([1, num], [legal, 0], "rows must be distinct env indices in 0..9"),
        ([[1]], [[legal]], "rows must be a 1-D array of env indices"),
        ([1.0], [legal], "rows must be a 1-D array of env indices"),
        ([1], [legal, legal], r"actions must have shape \(1,\)"),
        ([3, 1], [first, illegal], f"env 1: illegal action {illegal} for player_"),
        ([3, 1], [first, 234], r"env 1: action 234 is not an action id \(0..54\)"),
    ):
        with pytest.raises(ValueError, match=match) as error:
            batched.step_rows(np.array(rows), np.array(actions))
        assert "\n" not in str(error.value)
    assert np.array_equal(batched.obs, before[0]) and np.array_equal(batched.mask, before[1])
    assert batched.get_state(1) == before[2]
    obs, mask, rewards, terminated, truncated = batched.step_rows(np.zeros(0, np.int64), np.zeros(0, np.int64))
    assert np.array_equal(obs, before[0]) and not rewards.any() and not (terminated | truncated).any()


def test_stepping_a_subset_of_rows_plays_the_games_those_envs_play_alone():
    """Envs stepped now and then by ``step_rows`` among others play the very games an engine of those envs alone,
    stepped every time with the same actions, plays: the same observations, masks, rewards, ends and results."""
    options = {"num_players": 4, "max_turns": 200}
    wide = tableenvs.vector.make(NAME, 6, **options)
    alone = tableenvs.vector.make(NAME, 2, **options)
    mine = np.array([4, 1])
    wide_obs, wide_mask = wide.reset([9, 31, 8, 7, 30, 6])
    obs, mask = alone.reset([30, 31])
    rng = np.random.default_rng(8)
    ends = 0
    for step in range(1200):
        assert np.array_equal(wide_obs[mine], obs) and np.array_equal(wide_mask[mine], mask), step
        assert np.array_equal(wide.to_act[mine], alone.to_act), step
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        others = np.flatnonzero(rng.random(4) < 0.5)
        rows = np.concatenate([mine, np.array([0, 2, 3, 5])[others]])
        extra = np.array([rng.choice(np.flatnonzero(wide_mask[r])) for r in rows[2:]], np.int64)
        wide_step = wide.step_rows(rows, np.concatenate([actions, extra]))
        wide_obs, wide_mask, wide_rewards, wide_term, wide_trunc = wide_step
        obs, mask, rewards, terminated, truncated = alone.step(actions)
        assert np.array_equal(wide_rewards[mine], rewards) and np.array_equal(wide_term[mine], terminated), step
        assert np.array_equal(wide_trunc[mine], truncated), step
        done = np.flatnonzero(terminated | truncated)
        if done.size:
            ends += done.size
            for a, b in zip(wide.last_results(mine[done]), alone.last_results(done), strict=True):
                assert np.array_equal(a, b), step
    assert ends >= 4
