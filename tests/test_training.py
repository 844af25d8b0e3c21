"""Training plumbing with Stable-Baselines3 (needs the ``train`` extra): masks reach MaskablePPO, a few hundred
steps train, save and reload, vectorised envs (SubprocVecEnv included) carry the masks, saved models play as
policies, self-play snapshots feed the opponent pool, and the training job writes its files.

These test plumbing on the toy Nim game, not learning (docs/training.md records the learning evidence).
"""

import json
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from load_bounds import HANG

pytest.importorskip("sb3_contrib", reason="needs the train extra: pip install -e '.[train]'")

import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.utils import get_action_masks  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402
from stable_baselines3.common.vec_env import SubprocVecEnv  # noqa: E402

import tableenvs  # noqa: E402
from tableenvs.core.registry import GameSpec  # noqa: E402
from tableenvs.policies import UntrustedModelError, make_policy  # noqa: E402
from tableenvs.policies.numpy_policy import NumpyPolicy  # noqa: E402
from tableenvs.policies.sb3_policy import SB3Policy  # noqa: E402
from tableenvs.training.job import TrainConfig, evaluate_agent, summary, train  # noqa: E402
from tableenvs.training.selfplay import SelfPlayCallback  # noqa: E402
from tableenvs.training.single_agent import OpponentPool, SingleAgentEnv  # noqa: E402

torch.set_num_threads(1)
# The toy Nim game under its own name (tests/test_registry.py registers "nim_gym_v0"; test files may run in any order).
if "nim_gym_v0" not in tableenvs.names():
    tableenvs.register_game(GameSpec("nim_gym_v0", "tableenvs.toy_game", "tableenvs/NimGymTest-v0"))
NIM_ID = tableenvs.spec("nim_gym_v0").registry_id
SMALL = {"n_steps": 64, "batch_size": 64, "n_epochs": 2}


class MaskRecordingEnv(SingleAgentEnv):
    """Counts how often MaskablePPO asks for the masks."""

    mask_calls = 0

    def action_masks(self):
        MaskRecordingEnv.mask_calls += 1
        return super().action_masks()


def nim_model(env, **kwargs):
    return MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=2, seed=0, device="cpu", **kwargs)


def test_masks_reach_maskable_ppo_and_no_illegal_action_is_taken():
    # pile 2: action 2 (take 3) is illegal at every decision and 1 often is; an unmasked action would raise.
    env = MaskRecordingEnv("nim_gym_v0", num_players=2, pile=2)
    MaskRecordingEnv.mask_calls = 0
    model = nim_model(env)
    model.learn(300)
    assert MaskRecordingEnv.mask_calls >= 300


def test_a_few_hundred_steps_train_save_and_reload(tmp_path):
    env = gymnasium.make(NIM_ID, num_players=3, pile=12, opponents="random")
    model = nim_model(env)
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(400)
    assert any(not torch.equal(a, b) for a, b in zip(before, model.policy.parameters(), strict=True))
    path = tmp_path / "nim.zip"
    model.save(path)
    loaded = MaskablePPO.load(path, device="cpu")
    obs, _ = env.reset(seed=0)
    mask = env.get_wrapper_attr("action_masks")()
    a1, _ = model.predict(obs, action_masks=mask, deterministic=True)
    a2, _ = loaded.predict(obs, action_masks=mask, deterministic=True)
    assert a1 == a2 and mask[a1]


def test_saved_model_plays_as_a_policy_and_as_an_opponent(tmp_path):
    env = SingleAgentEnv("nim_gym_v0", num_players=2, pile=7)
    model = nim_model(env)
    model.learn(128)
    path = tmp_path / "m.zip"
    model.save(path)
    raw = tableenvs.make_raw("nim_gym_v0", num_players=2, pile=7)
    with pytest.raises(UntrustedModelError, match="holds pickles that can run code"):
        make_policy(str(path), raw)  # an SB3 .zip loads only when trusted
    policy = make_policy(str(path), raw, trust_models=True)
    assert isinstance(policy, SB3Policy)
    rng = np.random.default_rng(0)
    raw.reset(seed=0)
    observation = raw.observe(raw.agent_selection)
    probabilities = policy.action_probabilities(observation["observation"], np.array([1, 0, 1], np.int8))
    assert probabilities[1] == 0.0 and probabilities.sum() == pytest.approx(1.0)
    assert policy.act(observation["observation"], np.array([0, 1, 0], np.int8), rng) == 1
    sampled = SB3Policy(path, raw, deterministic=False)
    draws = {sampled.act(observation["observation"], np.array([1, 1, 0], np.int8), rng) for _ in range(200)}
    assert draws <= {0, 1}
    # as an opponent, by path, and as an in-memory model
    versus = SingleAgentEnv("nim_gym_v0", num_players=2, pile=7, opponents=str(path), trust_models=True)
    versus.reset(seed=1)
    assert isinstance(next(iter(versus._seat_policies.values())), SB3Policy)
    assert isinstance(make_policy(model, raw), SB3Policy)


def test_model_for_another_player_count_is_refused(tmp_path):
    model = nim_model(SingleAgentEnv("nim_gym_v0", num_players=2))
    path = tmp_path / "two.zip"
    model.save(path)
    with pytest.raises(ValueError, match=r"trained on another game or player count"):
        SingleAgentEnv("nim_gym_v0", num_players=3, opponents=str(path), trust_models=True)


def test_self_play_snapshots_feed_the_opponent_pool(tmp_path):
    def make():
        return SingleAgentEnv("nim_gym_v0", num_players=2, pile=9, opponents=OpponentPool(["random"]))

    env = make_vec_env(make, n_envs=2, seed=0)
    model = nim_model(env)
    callback = SelfPlayCallback(tmp_path / "pool", snapshot_every=128, pool_size=2, latest_prob=0.5)
    model.learn(600, callback=callback)
    snapshots = sorted((tmp_path / "pool").glob("*.zip"))
    assert len(snapshots) >= 3
    pools = env.get_attr("opponents")
    assert all(isinstance(p, OpponentPool) for p in pools)
    # "random" stays as the first member, then the pool_size most recent snapshots, newest last
    assert pools[0].members[0] == "random"
    assert pools[0].members[1:] == [str(s) for s in callback.snapshots[-2:]]


def test_training_evaluation_is_a_reproducible_duplicate_gauntlet_through_the_one_evaluator():
    config = TrainConfig("nim_gym_v0", options={"num_players": 3}, opponents="random")
    a = evaluate_agent(config, ["random"], 30, seed=5)
    b = evaluate_agent(config, ["random"], 30, seed=5)
    assert a.records == b.records and a.plan.design == "gauntlet" and a.duplicate
    assert a.games == 30 and (a.seat_counts()[0] == 10).all()  # the agent in every seat equally often
    # Nim: exactly one loser, so a seat's win share is 1/2 (two winners share) or 0
    agent_wins = {1.0 / len(r.winners) if r.entrants.index(0) in r.winners else 0.0 for r in a.records}
    assert agent_wins <= {0.0, 0.5}
    assert summary(a)["games"] == 30 and 0.0 <= summary(a)["win_rate"] <= 0.5


def test_training_job_writes_model_curve_and_results(tmp_path, capsys):
    config = TrainConfig(
        "nim_gym_v0",
        out=tmp_path / "run",
        timesteps=256,
        options={"num_players": 2, "pile": 6},
        num_envs=2,
        eval_every=128,
        eval_games=20,
        final_games=20,
        hyperparameters=SMALL,
        progress_bar=False,
    )
    result = train(config)
    assert result.model_path.is_file() and result.curve_path.stat().st_size > 1000
    assert len(result.history) >= 2 and result.history[-1]["timesteps"] >= 256
    saved = json.loads(result.results_path.read_text())
    assert saved["config"]["env"] == "nim_gym_v0" and len(saved["final"]) == 2  # Nim has no heuristic
    printed = capsys.readouterr().out
    assert "final evaluation: 20 games per row" in printed and "trained" in printed
    assert json.loads(result.results_path.read_text(), parse_constant=lambda name: pytest.fail(f"{name} in JSON"))
    # the saved model reloads as a policy for the same game, and model.npz beside it plays the same
    raw = tableenvs.make_raw("nim_gym_v0", pile=6)
    assert isinstance(make_policy(str(result.model_path), raw, trust_models=True), SB3Policy)
    assert result.numpy_model_path == result.model_path.with_name("model.npz")
    assert isinstance(make_policy(str(result.numpy_model_path), raw), NumpyPolicy)
    assert "model.npz (plays without torch" in printed


def test_train_config_errors():
    with pytest.raises(ValueError, match="unknown environment 'chess'"):
        TrainConfig("chess")
    with pytest.raises(ValueError, match="timesteps must be a positive integer, got 0"):
        TrainConfig("nim_gym_v0", timesteps=0)
    with pytest.raises(ValueError, match="unknown hyperparameter"):
        TrainConfig("nim_gym_v0", hyperparameters={"lr": 1})


def test_make_vec_env_subproc_by_gymnasium_id_carries_masks_to_maskable_ppo():
    # "tableenvs:<id>": each fresh worker process imports tableenvs (registering the ids) before gymnasium.make.
    vec = make_vec_env(
        "tableenvs:tableenvs/PiliPili-v0",
        n_envs=2,
        seed=0,
        vec_env_cls=SubprocVecEnv,
        env_kwargs={"num_players": 3, "opponents": "heuristic"},
    )
    try:
        vec.reset()
        masks = get_action_masks(vec)
        assert masks.shape == (2, vec.action_space.n) and masks.dtype == bool
        assert masks.any(axis=1).all() and not masks.all(axis=1).any()
        # An unmasked (illegal) action would raise IllegalActionError in a worker and fail this test.
        model = nim_model(vec)
        model.learn(256)
    finally:
        vec.close()


def test_cli_train_runs_the_job(tmp_path, capsys):
    from tableenvs.cli import main

    out = tmp_path / "cli"
    code = main(
        ["train", "nim_gym_v0", "--timesteps", "1024", "--option", "pile=5", "--players", "3", "--envs", "2"]
        + ["--eval-every", "128", "--eval-games", "10", "--final-games", "10", "--no-progress", "--out", str(out)]
    )
    assert code == 0
    saved = json.loads((out / "results.json").read_text())
    assert saved["config"]["options"] == {"pile": 5, "num_players": 3}
    assert (out / "model.zip").is_file() and (out / "model.npz").is_file() and (out / "curve.png").is_file()
    assert main(["train", "nim_gym_v0", "--option", "pile"]) == 2
    assert "--option expects KEY=VALUE" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------- any SB3 algorithm


def tiny_config(tmp_path, **changes):
    settings = dict(
        out=tmp_path / "run",
        timesteps=256,
        options={"num_players": 2, "pile": 6},
        num_envs=2,
        eval_every=128,
        eval_games=10,
        final_games=0,
        hyperparameters=SMALL,
        progress_bar=False,
        checkpoint_every=0,
    )
    settings.update(changes)
    return TrainConfig("nim_gym_v0", **settings)


@pytest.mark.parametrize(
    "algo, hyperparameters",
    [("ppo", SMALL), ("a2c", {}), ("dqn", {"learning_starts": 64, "buffer_size": 500})],
)
def test_unmasked_algorithms_train_with_random_replacement_and_play_as_policies(tmp_path, algo, hyperparameters):
    config = tiny_config(tmp_path, algo=algo, hyperparameters=hyperparameters, final_games=6)
    assert config.illegal_action == "random"  # the default for learners that do not read masks
    result = train(config)
    saved = json.loads(result.results_path.read_text())
    assert saved["algo"] == {"ppo": "PPO", "a2c": "A2C", "dqn": "DQN"}[algo]
    assert saved["timesteps"] == config.steps_to_run() and 0.0 <= saved["illegal_action_rate"] <= 1.0
    assert result.history[0]["illegal_rate"] is None and all(h["illegal_rate"] is not None for h in result.history[1:])
    # the saved model plays (masked) as a policy, DQN through its Q-values
    policy = make_policy(str(result.model_path), tableenvs.make_raw("nim_gym_v0", pile=6), trust_models=True)
    assert isinstance(policy, SB3Policy)
    assert policy.act(np.array([6, 1, 1, 0], np.float32), np.array([0, 1, 0], np.int8), np.random.default_rng()) == 1
    # and its model.npz (DQN's Q-network, the others' actor) gives the same logits up to a shift
    numpy = make_policy(str(result.numpy_model_path), tableenvs.make_raw("nim_gym_v0", pile=6))
    observation = np.array([6, 1, 1, 0], np.float32)
    difference = numpy._logits(observation) - policy._logits(observation)
    assert np.allclose(difference, difference[0], atol=1e-5)


def test_sb3_evaluate_policy_works_with_a_non_raising_mode():
    from stable_baselines3 import PPO
    from stable_baselines3.common.evaluation import evaluate_policy

    env = SingleAgentEnv("nim_gym_v0", num_players=3, pile=8, illegal_action="lose")
    model = PPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
    mean, std = evaluate_policy(model, env, n_eval_episodes=5)
    assert -1.0 <= mean <= 1.0


def test_algorithm_settings_are_checked():
    with pytest.raises(ValueError, match="ppo does not read action masks"):
        TrainConfig("nim_gym_v0", algo="ppo", illegal_action="raise")
    with pytest.raises(ValueError, match="algo must be one of maskable_ppo, ppo, a2c, dqn"):
        TrainConfig("nim_gym_v0", algo="sac")
    with pytest.raises(ValueError, match="unknown hyperparameter.*n_epochs for dqn"):
        TrainConfig("nim_gym_v0", algo="dqn", hyperparameters={"n_epochs": 3})
    assert TrainConfig("nim_gym_v0").illegal_action == "raise"
    config = TrainConfig("nim_gym_v0", timesteps=50_000)
    assert config.steps_to_run() == 51_200  # whole rollouts of 512 x 4
    assert TrainConfig("nim_gym_v0", timesteps=3000, algo="dqn").steps_to_run() == 3008  # train_freq 4 x 4 envs


# ---------------------------------------------------------------------------------------------- checkpoints, resume


def test_interrupted_run_saves_a_checkpoint_and_resumes_to_its_budget(tmp_path, monkeypatch, capsys):
    import tableenvs.training.job as train_module

    real = train_module.evaluate_agent
    calls = []

    def interrupting(config, agents, games, seed):
        calls.append(1)
        if len(calls) == 4:  # the baseline, steps 0 and 128, then Ctrl-C during the evaluation at step 256
            raise KeyboardInterrupt
        return real(config, agents, games, seed)

    monkeypatch.setattr(train_module, "evaluate_agent", interrupting)
    config = tiny_config(tmp_path, timesteps=512, checkpoint_every=128, final_games=4)
    first = train(config)
    assert first.interrupted == "SIGINT" and first.timesteps == 256
    printed = capsys.readouterr().out
    line = [x for x in printed.splitlines() if "SIGINT" in x]
    assert len(line) == 1 and "at step 256 of 512" in line[0] and f"--resume {config.out}" in line[0]
    assert not (config.out / "model.zip").exists()
    state = train_module.read_checkpoint(config.out)
    assert (
        state["timesteps"] == 256 and not state["complete"] and [h["timesteps"] for h in state["history"]] == [0, 128]
    )

    monkeypatch.setattr(train_module, "evaluate_agent", real)
    with pytest.raises(ValueError, match="holds an unfinished run .step 256 of 512.: continue it with"):
        train(config)  # a fresh start would overwrite it
    second = train_module.resume(config.out, progress_bar=False)
    assert second.interrupted is None and second.timesteps == 512
    assert "resuming at step 256" in capsys.readouterr().out
    saved = json.loads(second.results_path.read_text())
    assert saved["timesteps"] == 512 and saved["interruptions"] == 1 and saved["resumes"] == 1
    # each step evaluated once: nothing trained twice, nothing skipped
    assert [h["timesteps"] for h in saved["history"]] == [0, 128, 256, 384, 512]
    with pytest.raises(ValueError, match="is complete"):
        train_module.resume(config.out)
    with pytest.raises(
        ValueError, match="only log_formats, progress_bar, tensorboard, trust_models, verbose may change"
    ):
        train_module.resume(config.out, timesteps=10)
    with pytest.raises(ValueError, match="no checkpoint to resume"):
        train_module.resume(tmp_path / "nowhere")


def test_sigterm_stops_a_self_play_run_and_resume_keeps_its_opponent_pool(tmp_path, monkeypatch, capsys):
    import os
    import signal

    import tableenvs.training.job as train_module

    real = train_module.evaluate_agent
    calls = []

    def terminating(config, agents, games, seed):
        calls.append(1)
        if len(calls) == 4:  # the baseline, steps 0 and 128, then SIGTERM (as from `kill`) at step 256
            os.kill(os.getpid(), signal.SIGTERM)
        return real(config, agents, games, seed)

    monkeypatch.setattr(train_module, "evaluate_agent", terminating)
    config = tiny_config(tmp_path, timesteps=512, self_play_every=100, self_play_pool=2)
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    first = train(config)
    assert first.interrupted == "SIGTERM" and first.timesteps == 256
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before  # the job's handlers left
    assert "checkpoint (SIGTERM received) at step 256" in capsys.readouterr().out
    pool = train_module.read_checkpoint(config.out)["opponent_pool"]
    assert pool["members"][0] == "random" and len(pool["members"]) == 3  # random + the 2 newest snapshots
    assert all(Path(member).is_file() for member in pool["members"][1:])

    monkeypatch.setattr(train_module, "evaluate_agent", real)
    second = train_module.resume(config.out, progress_bar=False)
    assert second.timesteps == 512
    snapshots = sorted((config.out / "pool").glob("snapshot_*.zip"))
    assert len(snapshots) >= 4  # taken before and after the interruption
    final_pool = train_module.read_checkpoint(config.out)["opponent_pool"]["members"]
    assert final_pool[0] == "random" and final_pool[1:] == [str(p) for p in snapshots[-2:]]


def test_ctrl_c_in_a_cli_subprocess_saves_a_checkpoint_then_resume_finishes(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import threading

    from tableenvs.cli import main

    out = tmp_path / "run"
    script = (
        "import sys, tableenvs; from tableenvs.core.registry import GameSpec; "
        "tableenvs.register_game(GameSpec('nim_gym_v0', 'tableenvs.toy_game', 'tableenvs/NimGymTest-v0')); "
        "from tableenvs.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    args = ["train", "nim_gym_v0", "--timesteps", "1536", "--players", "2", "--envs", "1", "--eval-every", "100000"]
    args += [
        "--eval-games",
        "4",
        "--final-games",
        "0",
        "--checkpoint-every",
        "1024",
        "--no-progress",
        "--out",
        str(out),
    ]
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    process = subprocess.Popen(
        [sys.executable, "-u", "-c", script, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    lines = []
    # wait for the first periodic checkpoint itself (the line that says it was written), then Ctrl-C; a run that
    # never writes one ends its output and fails below, and HANG (a thread closing stdout) stops a hung one
    watchdog = threading.Timer(HANG, process.kill)
    watchdog.start()
    try:
        for text in process.stdout:
            lines.append(text)
            if "checkpoint (periodic)" in text:
                process.send_signal(signal.SIGINT)
                break
        rest, errors = process.communicate(timeout=HANG)
    finally:
        watchdog.cancel()
    lines += rest.splitlines(keepends=True)
    assert process.returncode == 130, (lines, errors)
    assert "Traceback" not in errors
    stopped = [x for x in lines if "SIGINT received" in x]
    assert len(stopped) == 1 and "resume with: tableenvs train --resume" in stopped[0]
    steps = json.loads((out / "checkpoint" / "state.json").read_text())["timesteps"]
    assert steps in (512, 1024)  # whole rollouts of 512
    # flags that would change the run are refused; then the run finishes its budget
    assert main(["train", "--resume", str(out), "--seed", "3"]) == 2
    assert main(["train", "--resume", str(out), "--no-progress"]) == 0
    saved = json.loads((out / "results.json").read_text())
    assert saved["timesteps"] == 1536 and saved["interruptions"] == 1


def test_logger_formats_and_tensorboard_get_the_evaluation_figures(tmp_path):
    result = train(tiny_config(tmp_path, log_formats=["csv"], tensorboard=str(tmp_path / "tb")))
    header = (tmp_path / "run" / "logs" / "progress.csv").read_text().splitlines()[0].split(",")
    assert {"eval/win_rate", "eval/win_rate_low", "eval/mean_reward_high"} <= set(header)
    assert result.history[-1]["timesteps"] == 256
    events = list((tmp_path / "tb").glob("events.out.tfevents.*"))
    assert events
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    accumulator = EventAccumulator(str(events[0]))
    accumulator.Reload()
    assert [e.step for e in accumulator.Scalars("eval/win_rate")] == [0, 128, 256]
