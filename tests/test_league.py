"""The ``league`` recipe (:mod:`tableenvs.training.league`): PPO on the batched engine against a population.

Tiny budgets (a few thousand samples, CPU seconds): the recipe writes a loadable model that fits the env, the
rollout bookkeeping gives every decision its seat's rewards, the same seed gives the same run, and a game without a
batched engine or heuristic is refused in one line.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pytest.importorskip("torch")

from tableenvs.core import registry
from tableenvs.core.registry import make_raw
from tableenvs.policies import make_policy
from tableenvs.policies.model_env import check_model_fits
from tableenvs.policies.numpy_policy import load_numpy_policy
from tableenvs.training.batched_config import BatchedConfig
from tableenvs.training.league import LEAGUE_PPO, LeagueSettings, LeagueTrainer, check_league_game, league

GAME = "llama_party_v0"
TINY = {"rollout": 1024, "minibatch": 512, "hidden": (16,), "value_warmup": 0}


def test_recipe_writes_a_model_that_fits(tmp_path):
    lines: list[str] = []
    path = league(
        GAME, tmp_path, options={"num_players": 3}, steps=2000, label_games=8, chunk=1000, settings=TINY,
        league_settings={"num_envs": 8, "snapshot_every": 1000}, say=lines.append,
    )  # fmt: skip
    assert path == tmp_path / "model.npz" and (tmp_path / "clone.npz").is_file()
    env = make_raw(GAME, num_players=3)
    model = load_numpy_policy(path)
    check_model_fits(model, env)
    assert model.meta["recipe"].startswith("league")
    policy = make_policy(str(path), env)
    env.reset(seed=0)
    seen = env.observe(env.agent_selection)
    assert seen["action_mask"][policy.act(seen["observation"], seen["action_mask"], np.random.default_rng(0))]
    assert any(line.startswith("exported") for line in lines)
    progress = (tmp_path / "league" / "progress.jsonl").read_text().splitlines()
    assert progress and '"league"' in progress[-1]
    # A rerun continues from the newest export: nothing left to do, the same model comes back.
    again = league(
        GAME, tmp_path, options={"num_players": 3}, steps=2000, label_games=8, settings=TINY, say=lines.append
    )
    assert again == path and any(line.startswith("resuming") for line in lines)


def _trainer(self_play: float, seed: int = 0) -> LeagueTrainer:
    config = BatchedConfig(GAME, options={"num_players": 4}, seed=seed, **{**LEAGUE_PPO, **TINY})
    return LeagueTrainer(config, LeagueSettings(num_envs=16, self_play=self_play))


def test_self_play_rewards_reach_every_decision():
    """With every seat the learner, the rewards given to decisions add up to the finished games' totals, every
    decision has a successor or ends its game, and no game is left open."""
    trainer = _trainer(1.0)
    count = trainer.collect()
    assert count >= trainer.config.rollout
    assert np.all(trainer._done[:count] | (trainer._next[:count] >= 0))
    finished = sum(trainer.game_returns)
    assert finished != 0 and np.isclose(trainer._reward[:count].sum(), finished, rtol=1e-5)
    assert trainer.self_games == trainer.games > 0 and trainer.opponent_returns == []


def test_population_is_met_and_scored():
    trainer = _trainer(0.0)
    trainer.collect()
    names = [row["member"] for row in trainer.league_table()]
    assert names == ["heuristic", "start"]
    assert sum(trainer.met) == trainer.games > 0 and trainer.opponent_returns
    assert np.isclose(trainer.priorities().sum(), 1.0)
    trainer._snapshot()  # a frozen copy joins, scored 0.5 until met
    assert [row["member"] for row in trainer.league_table()][-1].startswith("snapshot@")


def test_same_seed_same_rollout():
    first, second = _trainer(0.25, seed=5), _trainer(0.25, seed=5)
    count = first.collect()
    assert second.collect() == count
    assert np.array_equal(first._action[:count], second._action[:count])
    assert np.array_equal(first._reward[:count], second._reward[:count])


def test_game_without_batched_heuristic_is_refused(monkeypatch):
    real = registry.spec(GAME)
    monkeypatch.setattr(registry, "spec", lambda name: dataclasses.replace(real, batched_heuristic=None))
    with pytest.raises(ValueError, match="no batched_heuristic") as error:
        check_league_game(GAME)
    assert "\n" not in str(error.value)


def test_cli_runs_the_recipe_and_refuses_what_it_does_not_read(tmp_path, monkeypatch, capsys):
    from tableenvs.cli import main
    from tableenvs.training import league as league_module

    calls = []

    def small(game, out, **kwargs):  # the CLI's arguments, then a run of seconds
        calls.append((game, dict(kwargs)))
        kwargs.update(steps=500, label_games=4, settings=TINY, league_settings={"num_envs": 4})
        return league(game, out, **kwargs)

    monkeypatch.setattr(league_module, "league", small)
    out = tmp_path / "run"
    args = ["train", GAME, "--recipe", "league", "--players", "2", "--out", str(out)]
    assert main([*args, "--learner-seats", "1"]) == 2
    err = capsys.readouterr().err
    assert "--recipe league does not take --learner-seats" in err and err.count("\n") == 1 and not out.exists()
    assert main([*args, "--seed", "4"]) == 0
    game, kwargs = calls[0]
    assert game == GAME and kwargs["options"] == {"num_players": 2} and kwargs["seed"] == 4
    assert kwargs["steps"] == 10_000_000 and kwargs["label_games"] == 3000  # the defaults unless told
    check_model_fits(load_numpy_policy(out / "model.npz"), make_raw(GAME, num_players=2))


def test_an_export_is_what_a_run_with_that_budget_ends_with(tmp_path):
    """Rollouts are whole, so the model a run exported at ``S`` samples is the final model of a run given ``S``."""
    small = {"num_envs": 8, "snapshot_every": 1500}
    league(GAME, tmp_path / "long", options={"num_players": 2}, steps=4000, label_games=8, chunk=1000,
           settings=TINY, league_settings=small, say=lambda _: None)  # fmt: skip
    exports = sorted((tmp_path / "long" / "league").glob("model-*.npz"))
    assert len(exports) >= 3
    middle = exports[1]
    steps = int(middle.stem.split("-")[1])
    short = league(GAME, tmp_path / "short", options={"num_players": 2}, steps=steps, label_games=8, chunk=1000,
                   settings=TINY, league_settings=small, say=lambda _: None)  # fmt: skip
    assert short == tmp_path / "short" / "model.npz"
    same = load_numpy_policy(tmp_path / "short" / "league" / f"model-{steps:09d}.npz").weights
    for (w1, b1), (w2, b2) in zip(load_numpy_policy(middle).weights, same, strict=True):
        assert np.array_equal(w1, w2) and np.array_equal(b1, b2)


def test_init_starts_the_league_from_a_model_file_instead_of_the_clone(tmp_path):
    """``init``: no clone; the league's first member and start are the given model (its weights, exported unchanged
    while the actor is frozen), copied to ``init.npz``; a rerun continues it, and another start is refused."""
    first = league(GAME, tmp_path / "first", options={"num_players": 2}, steps=1000, label_games=8, settings=TINY,
                   league_settings={"num_envs": 4}, say=lambda _: None)  # fmt: skip
    lines: list[str] = []
    frozen = {**TINY, "value_warmup": 10**9}  # only the critic learns: the actor stays the --init model's
    run = tmp_path / "second"
    path = league(GAME, run, options={"num_players": 2}, steps=1000, settings=frozen, init=first,
                  league_settings={"num_envs": 4}, say=lines.append)  # fmt: skip
    assert (run / "init.npz").read_bytes() == first.read_bytes() and not (run / "clone.npz").exists()
    assert any(line.startswith("starting from") for line in lines)
    started, ended = load_numpy_policy(first), load_numpy_policy(path)
    assert ended.meta["recipe"].startswith("league (start from model.npz")
    for (w1, b1), (w2, b2) in zip(started.weights, ended.weights, strict=True):
        assert np.array_equal(w1, w2) and np.array_equal(b1, b2)
    again = league(GAME, run, options={"num_players": 2}, steps=1000, settings=frozen, init=first, say=lines.append)
    assert again == path and any(line.startswith("resuming") for line in lines)
    with pytest.raises(ValueError, match="started from --init") as error:
        league(GAME, run, options={"num_players": 2}, steps=1000, settings=frozen, say=lines.append)
    assert "\n" not in str(error.value)
    other = tmp_path / "other.npz"
    other.write_bytes((tmp_path / "first" / "clone.npz").read_bytes())
    with pytest.raises(ValueError, match="another --init"):
        league(GAME, run, options={"num_players": 2}, steps=1000, settings=frozen, init=other, say=lines.append)
    with pytest.raises(ValueError, match="from the heuristic's clone, not --init"):
        league(GAME, tmp_path / "first", options={"num_players": 2}, steps=1000, init=first, say=lines.append)


@pytest.mark.parametrize(
    ("init", "message"),
    [
        ("missing.npz", "--init 'missing.npz'"),
        ("3p", "--init"),  # a model of another player count
    ],
)
def test_cli_refuses_a_bad_init_in_one_line_before_anything_is_written(init, message, tmp_path, capsys):
    from tableenvs.cli import main

    if init == "3p":
        made = league(GAME, tmp_path / "three", options={"num_players": 3}, steps=500, label_games=4, settings=TINY,
                      league_settings={"num_envs": 4}, say=lambda _: None)  # fmt: skip
        init = str(made)
    out = tmp_path / "run"
    code = main(["train", GAME, "--recipe", "league", "--players", "2", "--init", init, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1 and not out.exists()
    both = ["train", GAME, "--recipe", "league", "--init", init, "--label-games", "5", "--out", str(out)]
    assert main(both) == 2 and "not both" in capsys.readouterr().err and not out.exists()


def _feature_model(path, players: int):
    """A small random ReLU network over the observation and Llama Party's card values (as a search clone reads)."""
    from tableenvs.policies.input_features import input_features
    from tableenvs.policies.model_file import save_for_env

    env = make_raw(GAME, num_players=players)
    inputs = int(env.observation_size) + input_features("llama_party_card_values_v1", env).size
    rng = np.random.default_rng(7)
    weights = [
        (rng.normal(0, 0.3, (inputs, 16)).astype(np.float32), rng.normal(0, 0.1, 16).astype(np.float32)),
        (rng.normal(0, 0.3, (16, int(env.num_actions))).astype(np.float32), np.zeros(int(env.num_actions), np.float32)),
    ]
    scale = rng.uniform(0.5, 1.0, inputs).astype(np.float32)
    return save_for_env(path, env, weights=weights, activation="relu", input_scale=scale,
                        input_features="llama_party_card_values_v1")  # fmt: skip


def test_a_start_that_reads_derived_inputs_keeps_reading_them(tmp_path):
    """A start model over the observation and derived inputs (a search clone's card values): the learner's rollout
    rows carry the derived inputs as the model file's own features compute them row by row, the start member chooses
    as ``NumpyPolicy`` of that file does, and the export names the same derived inputs (unchanged weights while the
    actor is frozen; after training, a file ``make_policy`` plays)."""
    from tableenvs.llama_party.features import CardValues

    start = _feature_model(tmp_path / "start.npz", 2)
    frozen = {**LEAGUE_PPO, **TINY, "hidden": (16,), "value_warmup": 10**9}
    config = BatchedConfig(GAME, options={"num_players": 2}, seed=3, start=str(start), **frozen)
    trainer = LeagueTrainer(config, LeagueSettings(num_envs=8, heuristic=False))
    size = trainer.observation_size
    assert trainer.derived is not None and trainer.input_size == size + 64
    count = trainer.collect()
    env = make_raw(GAME, num_players=2)
    features = CardValues(env)
    rows = np.random.default_rng(0).choice(count, 40, replace=False)
    for row in rows:
        expected = features(trainer._obs[row, :size], trainer._mask[row])
        assert np.array_equal(trainer._obs[row, size:], expected)
    reference = make_policy(str(start), env)
    member = trainer.members[trainer.member_names.index("start")]
    chosen = member.act(trainer._obs[rows, :size], trainer._mask[rows], rows)
    for row, action in zip(rows, chosen, strict=True):
        assert action == reference.act(trainer._obs[row, :size], trainer._mask[row], np.random.default_rng(0))
    exported = load_numpy_policy(trainer.export(tmp_path / "frozen.npz"))
    started = load_numpy_policy(start)
    assert exported.input_features == "llama_party_card_values_v1" and exported.observation_size == size + 64
    assert np.array_equal(exported.input_scale, started.input_scale)
    for (w1, b1), (w2, b2) in zip(started.weights, exported.weights, strict=True):
        assert np.array_equal(w1, w2) and np.array_equal(b1, b2)
    path = league(GAME, tmp_path / "run", options={"num_players": 2}, steps=1500, settings=TINY, init=start,
                  league_settings={"num_envs": 8, "snapshot_every": 500}, say=lambda _: None)  # fmt: skip
    trained = load_numpy_policy(path)
    assert trained.input_features == "llama_party_card_values_v1"
    assert any(not np.array_equal(w1, w2) for (w1, _), (w2, _) in zip(started.weights, trained.weights, strict=True))
    policy = make_policy(str(path), env)
    env.reset(seed=1)
    seen = env.observe(env.agent_selection)
    assert seen["action_mask"][policy.act(seen["observation"], seen["action_mask"], np.random.default_rng(0))]
