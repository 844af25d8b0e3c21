"""The batched in-process masked-PPO trainer (:mod:`tableenvs.training.batched`): seconds-long runs only.

A few hundred samples on Pili Pili and Llama Party run and export a numpy policy file that ``make_policy`` plays
through a whole game; the same seed gives the same weights; bad arguments are one-line ``ValueError``s.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

import tableenvs  # noqa: E402
from tableenvs.policies import make_policy  # noqa: E402
from tableenvs.policies.numpy_policy import load_numpy_policy, random_numpy_policy  # noqa: E402
from tableenvs.training.batched import BatchedConfig, BatchedTrainer, train_batched  # noqa: E402

SMALL = {"n_envs": 4, "rollout": 128, "minibatch": 64, "epochs": 2, "hidden": (16,), "warmup_games": 1}
GAMES = [("pilipili_v0", {}), ("llama_party_v0", {"num_players": 4})]


def play_one_game(game: str, options: dict, model: str, seed: int = 3) -> None:
    """Every seat played by ``model`` (a numpy policy file) to the end of one game, through the AEC API."""
    env = tableenvs.make_raw(game, **options)
    policy = make_policy(model, env)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        env.step(
            None if terminated or truncated else policy.act(observation["observation"], observation["action_mask"], rng)
        )
    assert env.outcome() is not None


@pytest.mark.parametrize(("game", "options"), GAMES)
def test_short_run_exports_a_model_that_plays(tmp_path, game, options):
    result = train_batched(game, samples=300, options=options, out=tmp_path, seed=1, **SMALL)
    assert result.samples >= 300 and result.updates >= 1 and result.games >= 1
    assert result.model is not None and result.model.exists()
    assert (tmp_path / "progress.jsonl").read_text().count("\n") == result.updates
    header = load_numpy_policy(result.model)
    assert header.game == game and header.hidden == (16,) and header.meta["samples"] == result.samples
    play_one_game(game, options, str(result.model))


def test_every_decision_is_complete_and_legal():
    trainer = BatchedTrainer(BatchedConfig("pilipili_v0", samples=100, **SMALL))
    count = trainer.collect()
    assert count >= SMALL["rollout"]
    rows = np.arange(count)
    assert np.all(trainer._mask[rows, trainer._action[:count]] == 1)  # every sampled action was legal
    assert np.all(trainer._done[:count] | (trainer._next[:count] > rows))  # a later successor or the game's end
    # one game per env: each game ends with one last decision per seat
    assert trainer._done[:count].sum() == trainer.games * trainer.num_players
    # every reward of every seat lands on one of its decisions: the rewards add up to the games' returns
    assert len(trainer.game_returns) == trainer.games * trainer.num_players
    assert np.isclose(trainer._reward[:count].sum(), sum(trainer.game_returns))
    stats = trainer.update(count)
    assert np.isfinite(list(stats.values())).all()


def test_opponents_mode_counts_only_the_learner():
    trainer = BatchedTrainer(BatchedConfig("llama_party_v0", samples=100, opponents="random", **SMALL))
    count = trainer.collect()
    assert trainer._done[:count].sum() == trainer.games  # one learner seat per game
    assert np.isclose(trainer._reward[:count].sum(), sum(trainer.game_returns))
    trainer.update(count)


def test_learner_seats_share_each_table_with_the_opponents():
    trainer = BatchedTrainer(
        BatchedConfig(
            "pilipili_v0", samples=100, options={"num_players": 4}, opponents="heuristic", learner_seats=3, **SMALL
        )
    )
    count = trainer.collect()
    assert trainer._done[:count].sum() == 3 * trainer.games  # three learner seats per game, one last decision each
    assert len(trainer.game_returns) == 3 * trainer.games
    assert np.isclose(trainer._reward[:count].sum(), sum(trainer.game_returns))
    trainer.update(count)
    opponent_seats = []  # the heuristic's seat rotates from game to game: every seat in four deals
    for _ in range(4):
        trainer._new_game(0)
        opponent_seats.append(trainer._learns[0].index(False))
    assert sorted(opponent_seats) == [0, 1, 2, 3]


def test_value_warmup_trains_the_critic_alone_first():
    trainer = BatchedTrainer(BatchedConfig("llama_party_v0", samples=100, value_warmup=200, **SMALL))

    def arrays(net) -> list[np.ndarray]:
        return [p.detach().numpy().copy() for p in net.parameters()]

    actor, critic = arrays(trainer.actor), arrays(trainer.critic)
    trainer.update(trainer.collect())  # the rollout (at least 128 decisions) began at 0 samples: inside the warm-up
    assert all(np.array_equal(a, b) for a, b in zip(actor, arrays(trainer.actor), strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(critic, arrays(trainer.critic), strict=True))
    while trainer.samples < 200:
        trainer.update(trainer.collect())
    actor = arrays(trainer.actor)
    trainer.update(trainer.collect())  # began past the warm-up: the actor learns
    assert not all(np.array_equal(a, b) for a, b in zip(actor, arrays(trainer.actor), strict=True))


def test_same_seed_same_weights():
    def weights(seed: int) -> list[np.ndarray]:
        trainer = BatchedTrainer(BatchedConfig("llama_party_v0", samples=200, seed=seed, **SMALL))
        trainer.train()
        return [array for pair in trainer.weights() for array in pair]

    first, again, other = weights(5), weights(5), weights(6)
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other, strict=True))


def test_start_from_a_numpy_policy(tmp_path):
    env = tableenvs.make_raw("pilipili_v0")
    start = random_numpy_policy(tmp_path / "start.npz", env, hidden=(16,), activation="relu", seed=2)
    trainer = BatchedTrainer(BatchedConfig("pilipili_v0", samples=100, start=str(start), **{**SMALL, "hidden": (8,)}))
    model = load_numpy_policy(start)
    for (weight, bias), (w, b) in zip(trainer.weights(), model.weights, strict=True):
        assert np.array_equal(weight, w) and np.array_equal(bias, b)
    trainer.train()
    path = trainer.export(tmp_path / "tuned.npz")
    assert load_numpy_policy(path).hidden == (16,)
    play_one_game("pilipili_v0", {}, str(path))


def test_a_start_reading_derived_inputs_keeps_them(tmp_path):
    """A start over the observation and derived inputs (Llama Party's card values): each rollout row carries them
    as the features compute them row by row, and the tuned export names them and plays."""
    from tableenvs.llama_party.features import CardValues
    from tableenvs.policies.model_file import save_for_env

    env = tableenvs.make_raw("llama_party_v0", num_players=2)
    features = CardValues(env)
    inputs = int(env.observation_size) + features.size
    rng = np.random.default_rng(4)
    actions = int(env.num_actions)
    weights = [
        (rng.normal(0, 0.3, (inputs, 8)).astype(np.float32), np.zeros(8, np.float32)),
        (rng.normal(0, 0.3, (8, actions)).astype(np.float32), np.zeros(actions, np.float32)),
    ]
    start = save_for_env(tmp_path / "start.npz", env, weights=weights, activation="relu",
                         input_features="llama_party_card_values_v1")  # fmt: skip
    config = BatchedConfig("llama_party_v0", samples=200, options={"num_players": 2}, start=str(start),
                           opponents="heuristic", **SMALL)  # fmt: skip
    trainer = BatchedTrainer(config)
    count = trainer.collect()
    size = trainer.observation_size
    for row in range(0, count, 7):
        assert np.array_equal(trainer._obs[row, size:], features(trainer._obs[row, :size], trainer._mask[row]))
    trainer.update(count)
    path = trainer.export(tmp_path / "tuned.npz")
    assert load_numpy_policy(path).input_features == "llama_party_card_values_v1"
    play_one_game("llama_party_v0", {"num_players": 2}, str(path))


def test_start_must_fit(tmp_path):
    tanh = random_numpy_policy(tmp_path / "tanh.npz", tableenvs.make_raw("pilipili_v0"), activation="tanh")
    with pytest.raises(ValueError, match="starts only from a ReLU model"):
        BatchedTrainer(BatchedConfig("pilipili_v0", start=str(tanh), **SMALL))
    three = tableenvs.make_raw("pilipili_v0", num_players=3)
    other = random_numpy_policy(tmp_path / "three.npz", three, activation="relu")
    with pytest.raises(ValueError, match="was trained on pilipili_v0"):
        BatchedTrainer(BatchedConfig("pilipili_v0", start=str(other), **SMALL))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"game": "no_such_game"}, "unknown environment 'no_such_game'"),
        ({"game": "pilipili_v0", "n_envs": 0}, "n_envs must be an integer >= 1"),
        ({"game": "pilipili_v0", "minibatch": -1}, "minibatch must be an integer >= 1"),
        ({"game": "pilipili_v0", "gamma": 1.5}, "gamma must be in"),
        ({"game": "pilipili_v0", "learning_rate": 0.0}, "learning_rate"),
        ({"game": "pilipili_v0", "reward_scale": -1.0}, "reward_scale must be a positive number"),
        ({"game": "pilipili_v0", "opponents": 3}, "opponents must be None"),
        ({"game": "pilipili_v0", "start": 3}, "start must be the path"),
        ({"game": "pilipili_v0", "value_warmup": -1}, "value_warmup must be an integer >= 0"),
        ({"game": "pilipili_v0", "learner_seats": 0}, "learner_seats must be an integer >= 1"),
        ({"game": "pilipili_v0", "learner_seats": 2}, "learner_seats=2 needs opponents"),
    ],
)
def test_bad_arguments_are_clear(kwargs, message):
    with pytest.raises(ValueError, match=message):
        BatchedConfig(**kwargs)


def test_the_cli_trains_with_the_batched_backend_and_refuses_the_flags_it_does_not_read(tmp_path, capsys):
    from tableenvs.cli import main

    out = tmp_path / "run"
    args = ["train", "pilipili_v0", "--backend", "batched", "--players", "3", "--timesteps", "100", "--seed", "2"]
    assert main([*args, "--envs", "2", "--out", str(out)]) == 2  # the batched trainer has its own envs
    err = capsys.readouterr().err
    assert "--backend batched does not take --envs" in err and err.count("\n") == 1 and not out.exists()
    assert main([*args, "--no-progress", "--out", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    model = load_numpy_policy(out / "model.npz")
    assert model.game == "pilipili_v0" and model.options["num_players"] == 3
    assert (out / "progress.jsonl").read_text().count("\n") >= 1
    play_one_game("pilipili_v0", {"num_players": 3}, str(out / "model.npz"))


def test_learner_seats_must_leave_a_seat_to_the_opponents():
    config = BatchedConfig("pilipili_v0", options={"num_players": 3}, opponents="random", learner_seats=3, **SMALL)
    with pytest.raises(ValueError, match=r"learner_seats must be below the number of players \(3\)"):
        BatchedTrainer(config)
