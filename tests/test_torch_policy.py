"""The torch-only policy file (``.pt``, what ``tableenvs train --backend rllib`` exports) in the main venv, no Ray.

The RLlib side (training, the multi-agent env) is tested in ``tests_rllib/`` in a venv of its own.
"""

import json
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tableenvs  # noqa: E402
from tableenvs.cli import main  # noqa: E402
from tableenvs.policies import make_policy  # noqa: E402
from tableenvs.policies.torch_policy import TorchPolicy, build_network, load_policy, masked_logits, save_policy  # noqa: E402


def _saved(tmp_path, env="llama_party_v0", num_players=2, name="policy.pt", seed=0):
    """A randomly initialised network for ``env`` saved as a policy file, with a training record beside it."""
    torch.manual_seed(seed)
    raw = tableenvs.make_raw(env, num_players=num_players)
    agent = raw.possible_agents[0]
    network = build_network(raw.observation_space(agent)["observation"].shape[0], raw.action_space(agent).n, [16])
    path = save_policy(network, tmp_path / name, env=env, options={"num_players": num_players}, hidden=[16])
    config = {"env": env, "options": {"num_players": num_players}, "backend": "rllib"}
    (tmp_path / "results.json").write_text(json.dumps({"config": config}))
    return path, network, raw


def test_a_saved_policy_loads_with_the_same_weights_and_record(tmp_path):
    path, network, raw = _saved(tmp_path)
    loaded, record = load_policy(path)
    assert record["env"] == "llama_party_v0" and record["options"] == {"num_players": 2} and record["hidden"] == [16]
    observation = torch.rand(5, record["observation_size"])
    assert torch.equal(loaded.pi(observation), network.pi(observation))
    assert torch.equal(loaded.vf(observation), network.vf(observation))


def test_masked_logits_and_the_policy_never_choose_an_illegal_action(tmp_path):
    path, network, raw = _saved(tmp_path)
    with torch.no_grad():  # make action 0 by far the most likely, then forbid it
        network.pi[-1].bias.zero_()
        network.pi[-1].bias[0] = 100.0
    mask = torch.ones(1, network.pi[-1].out_features)
    mask[0, 0] = 0
    logits = masked_logits(network, torch.zeros(1, network.pi[0].in_features), mask)
    assert logits[0, 0] == torch.finfo(torch.float32).min and int(logits.argmax()) != 0
    policy = TorchPolicy(network, raw)
    rng = np.random.default_rng(0)
    raw.reset(seed=3)
    for deterministic in (True, False):
        policy.deterministic = deterministic
        for _ in range(20):
            observation = raw.observe(raw.agent_selection)
            action = policy.act(observation["observation"], observation["action_mask"], rng)
            assert observation["action_mask"][action] == 1


def test_sampling_is_reproducible_from_the_callers_generator(tmp_path):
    path, _, raw = _saved(tmp_path)
    policy = make_policy(str(path), raw, deterministic=False)
    assert isinstance(policy, TorchPolicy)
    raw.reset(seed=1)
    observation = raw.observe(raw.agent_selection)
    draws = [
        [policy.act(observation["observation"], observation["action_mask"], rng) for _ in range(30)]
        for rng in (np.random.default_rng(5), np.random.default_rng(5))
    ]
    assert draws[0] == draws[1] and len(set(draws[0])) > 1


def test_a_policy_of_another_game_or_size_is_refused(tmp_path):
    path, _, _ = _saved(tmp_path)
    with pytest.raises(ValueError, match="trained on llama_party_v0, not pilipili_v0"):
        make_policy(str(path), tableenvs.make_raw("pilipili_v0", num_players=2))
    other = tmp_path / "other"
    other.mkdir()
    pili, _, _ = _saved(other, env="pilipili_v0", num_players=3)
    with pytest.raises(ValueError, match="expects observations of size .* another player count"):
        make_policy(str(pili), tableenvs.make_raw("pilipili_v0", num_players=5))


def test_other_files_are_refused_with_a_clear_error(tmp_path):
    text = tmp_path / "notes.pt"
    text.write_text("not a policy")
    with pytest.raises(ValueError, match="is not a tableenvs policy file"):
        load_policy(text)
    tensors = tmp_path / "tensors.pt"
    torch.save({"weight": torch.zeros(2)}, tensors)
    with pytest.raises(ValueError, match="saved by tableenvs.policies.torch_policy"):
        load_policy(tensors)
    with pytest.raises(FileNotFoundError, match="no policy file"):
        load_policy(tmp_path / "missing.pt")


def test_tableenvs_eval_plays_a_policy_file_and_reads_its_player_count(tmp_path, capsys):
    run = tmp_path / "rllib_run"
    run.mkdir()
    path, _, _ = _saved(run)
    out = tmp_path / "eval"
    argv = ["eval", "llama_party_v0", "--policies", f"random,{path}", "--games", "8", "--out", str(out)]
    assert main([*argv, "--no-plot", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "2 players, as the training record of rllib_run says" in printed
    assert json.loads((out / "results.json").read_text())["games"] == 8
    assert "rllib_run" in printed


def test_importing_tableenvs_rllib_without_ray_names_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    monkeypatch.delitem(sys.modules, "tableenvs.training.rllib", raising=False)
    with pytest.raises(ImportError, match=r'needs Ray RLlib .*pip install "tableenvs\[rllib\]"'):
        import tableenvs.training.rllib  # noqa: F401


def test_cli_rllib_flags_are_checked_before_anything_runs(capsys):
    assert main(["train", "pilipili_v0", "--backend", "rllib", "--algo", "ppo"]) == 2
    assert "--backend rllib does not take --algo" in capsys.readouterr().err
    assert main(["train", "pilipili_v0", "--env-runners", "2"]) == 2
    assert "--env-runners only go with --backend rllib" in capsys.readouterr().err
    assert main(["train", "pilipili_v0", "--backend", "rllib", "--env-runners", "-1"]) == 2
    assert "--env-runners must be an integer >= 0" in capsys.readouterr().err
