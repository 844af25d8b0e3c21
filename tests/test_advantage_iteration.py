"""Advantage iteration (tableenvs.training.advantage_iteration): the true-state copies replay the game that was
played, the labels' shape, resumable labelling, the fit learns a planted advantage, one-line errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tableenvs
from tableenvs.policies.model_env import model_options
from tableenvs.policies.numpy_policy import NumpyPolicy, load_numpy_policy, trained_model_path
from tableenvs.training import advantage_iteration as ai

GAME = "llama_party_v0"


def shipped(players: int) -> str:
    env = tableenvs.make_raw(GAME, num_players=players)
    env.reset(seed=0)
    return str(trained_model_path(GAME, model_options(env)))


def span_rewards(model: str, players: int, deal: int) -> list[tuple[float, float]]:
    """The model's game against itself dealt by ``deal``, replayed in the AEC env: at each decision with a choice,
    the acting seat's reward and the other seats' mean reward until the scoring period ends (independently of
    the labeller)."""
    env = tableenvs.make_raw(GAME, num_players=players)
    policy = NumpyPolicy(model, env)
    env.reset(seed=deal)
    spans: list[list[float]] = []
    seats: list[int] = []
    open_rows: list[int] = []
    for agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        mask = observation["action_mask"]
        if mask.sum() > 1:
            spans.append([0.0, 0.0])
            seats.append(env.agent_name_mapping[agent])
            open_rows.append(len(spans) - 1)
        env.step(policy.act(observation["observation"], mask, np.random.default_rng(0)))
        rewards = np.array([env.rewards.get(name, 0.0) for name in env.possible_agents], np.float64)
        for row in open_rows:
            spans[row][0] += rewards[seats[row]]
            spans[row][1] += (rewards.sum() - rewards[seats[row]]) / (players - 1)
        if rewards.any() or any(env.terminations.values()) or any(env.truncations.values()):
            open_rows = []
    return [(own, others) for own, others in spans]


@pytest.mark.parametrize("players", [2, 4])
def test_each_copy_of_the_true_state_replays_the_game_played(players: int) -> None:
    """The copy that plays the model's own choice is the game played: its value equals the reward the seat got in
    the game until the scoring period ended, and its ``others`` the other seats' mean reward over that span, at
    every labelled decision (3 games, a batch of 64 rows so that the decisions of several batches and games are
    mixed)."""
    model = shipped(players)
    data = ai._label_block(GAME, {"num_players": players}, model, [7, 8, 9], 64)
    rows = len(data["action"])
    assert rows > 3 * 10 * players  # every seat decides at least ten times a game with a choice
    legal = data["mask"] > 0
    assert (legal.sum(axis=1) > 1).all()
    assert np.array_equal(np.isnan(data["value"]), ~legal)
    assert np.array_equal(np.isnan(data["others"]), ~legal)
    own = data["value"][np.arange(rows), data["action"].astype(int)]
    assert np.array_equal(own, data["played"])
    replayed = np.array([pair for deal in (7, 8, 9) for pair in span_rewards(model, players, deal)], np.float32)
    assert replayed.shape == (rows, 2)
    assert np.array_equal(own, replayed[:, 0])
    others = data["others"][np.arange(rows), data["action"].astype(int)]
    np.testing.assert_allclose(others, replayed[:, 1], atol=1e-4)
    assert np.abs(replayed[:, 1]).sum() > 0  # the others do score within the spans
    # the actions' values differ somewhere: the copies are not all one game
    assert (np.nanmax(data["value"], axis=1) > np.nanmin(data["value"], axis=1)).mean() > 0.5
    assert set(np.unique(data["game"]).tolist()) == {7, 8, 9}


def test_the_labels_are_the_model_s_own_choices_and_observations() -> None:
    """Each row's observation and choice are those of the model's game played with the same deal."""
    model = shipped(4)
    data = ai._label_block(GAME, {"num_players": 4}, model, [3], 128)
    env = tableenvs.make_raw(GAME, num_players=4)
    policy = NumpyPolicy(model, env)
    env.reset(seed=3)
    seen = []
    for _agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        action = policy.act(observation["observation"], observation["action_mask"], np.random.default_rng(0))
        if observation["action_mask"].sum() > 1:
            seen.append((observation["observation"].copy(), action))
        env.step(action)
    assert len(seen) == len(data["action"])
    for (observation, action), row, chosen in zip(seen, data["observation"], data["action"], strict=True):
        assert np.array_equal(observation.astype(np.float32), row)
        assert action == chosen


def test_labelling_is_resumable_and_read_back(tmp_path) -> None:
    model = shipped(2)
    made = ai.label_advantages(GAME, {"num_players": 2}, model=model, games=3, out_dir=tmp_path, seed=50,
                               workers=1, block=2, say=lambda *_: None)  # fmt: skip
    shards = sorted(tmp_path.glob("games-*.npz"))
    assert [p.name for p in shards] == ["games-000000.npz", "games-000002.npz"]
    stamps = [p.stat().st_mtime_ns for p in shards]
    again = ai.label_advantages(GAME, {"num_players": 2}, model=model, games=3, out_dir=tmp_path, seed=50,
                                workers=1, block=2, say=lambda *_: None)  # fmt: skip
    assert again == 0 and [p.stat().st_mtime_ns for p in shards] == stamps
    data = ai.read_advantages(tmp_path)
    assert len(data["action"]) == made
    assert set(np.unique(data["game"]).tolist()) == {50, 51, 52}
    assert json.loads((tmp_path / "labels.json").read_text())["seed"] == 50


@pytest.mark.parametrize("objective", ["score", "margin"])
def test_the_fit_learns_a_planted_advantage(objective: str) -> None:
    """Values that make the highest legal action id worth 5 points more than the rest: the fit (no bonus) comes
    to choose it on held-out games more often than the start does, and its reported gain says so (over 4 epochs of
    about 3,000 rows it takes a quarter of what choosing it always would gain; a fit that learnt nothing gains 0).
    For the margin, the 5 points are the others' loss (the seat's own values all equal); the score objective
    would see nothing there."""
    pytest.importorskip("torch")
    model = shipped(4)
    data = ai._label_block(GAME, {"num_players": 4}, model, list(range(20, 40)), 512)
    legal = data["mask"] > 0
    highest = np.where(legal, np.arange(legal.shape[1]), -1).argmax(axis=1)
    planted = np.where(legal, 0.0, np.nan).astype(np.float32)
    planted[np.arange(len(highest)), highest] = 5.0
    if objective == "score":
        data = {**data, "value": planted, "others": np.where(legal, 1.0, np.nan).astype(np.float32)}
    else:
        data = {**data, "value": np.where(legal, 2.0, np.nan).astype(np.float32), "others": -planted}
    start = load_numpy_policy(model)
    result = ai.fit_advantages(data, start, bonus=0.0, objective=objective, epochs=4, lr=1e-3, seed=0, threads=1,
                               players=4, say=lambda *_: None)  # fmt: skip
    first, best = result.history[0], max(result.history, key=lambda row: row["val_gain"])
    assert first["val_agree"] == 1.0 and first["val_gain"] == 0.0
    start_hits = (data["action"] == highest).mean()
    assert best["val_gain"] > 0.15 * 5.0 * (1 - start_hits)
    assert result.weights[0][0].shape == (start.observation_size, start.hidden[0])


def test_bad_input_is_one_line_and_changes_nothing(tmp_path) -> None:
    model = shipped(2)
    with pytest.raises(ValueError, match="games") as caught:
        ai.label_advantages(GAME, {"num_players": 2}, model=model, games=0, out_dir=tmp_path / "x")
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "x").exists()
    with pytest.raises(ValueError, match="num_players") as caught:  # a 2-player model at 3 players
        ai.label_advantages(GAME, {"num_players": 3}, model=model, games=2, out_dir=tmp_path / "z")
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "z").exists()
    with pytest.raises(ValueError, match="steps"):
        ai.advantage_iteration(GAME, tmp_path / "y", start=model, options={"num_players": 2}, steps=0)
    assert not (tmp_path / "y").exists()
    with pytest.raises(ValueError, match="objective") as caught:
        ai.advantage_step(GAME, tmp_path / "w", start=model, options={"num_players": 2}, objective="wins")
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "w").exists()


def test_a_step_writes_a_playable_model_and_a_rerun_returns_it(tmp_path) -> None:
    pytest.importorskip("torch")
    model = shipped(2)
    out = ai.advantage_step(GAME, tmp_path, start=model, options={"num_players": 2}, label_games=4, epochs=1,
                            workers=1, say=lambda *_: None)  # fmt: skip
    fitted = load_numpy_policy(out)
    assert fitted.input_features == load_numpy_policy(model).input_features  # the start's derived inputs kept
    fit = json.loads((tmp_path / "fit.json").read_text())
    assert fit["meta"]["label_games"] == 4 and len(fit["history"]) == 2
    assert "objective" not in fit["meta"]  # the default is not named: files made before the option stay the same
    stamp = out.stat().st_mtime_ns
    assert ai.advantage_step(GAME, tmp_path, start=model, options={"num_players": 2}, say=lambda *_: None) == out
    assert out.stat().st_mtime_ns == stamp
    env = tableenvs.make_raw(GAME, num_players=2)
    policy = NumpyPolicy(out, env)
    env.reset(seed=1)
    for _agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else policy.act(observation["observation"],
                                                                  observation["action_mask"],
                                                                  np.random.default_rng(0)))  # fmt: skip
    assert not env.agents


@pytest.mark.parametrize(
    "players, start, digest",
    [
        (4, "llama_party_v0-a9f34ef7ace4.npz", "a9f34ef7ace4"),
        (3, "llama_party_v0-3p.npz", "f08e89a50672"),
        (3, "llama_party_v0-3p-11298774a2ec.npz", "11298774a2ec"),  # the second command's start (the margin step)
        (2, "llama_party_v0-2p.npz", "1c4456394e70"),
    ],
)
def test_the_shipped_models_made_by_it_start_from_committed_files(players: int, start: str, digest: str) -> None:
    """The shipped 2-, 3- and 4-player Llama Party models are advantage steps (their headers say so), and the model each
    run started from (at 3 players each of the two runs) is committed where tableenvs/models/README.md's command reads
    it, so it runs from a fresh clone."""
    import hashlib
    from pathlib import Path

    model = load_numpy_policy(shipped(players))
    assert model.meta["recipe"].startswith("advantage step from ")
    first = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "replaced-models" / start
    assert hashlib.sha256(first.read_bytes()).hexdigest().startswith(digest)
    assert load_numpy_policy(first).options == model.options
    assert load_numpy_policy(first).input_features == model.input_features
