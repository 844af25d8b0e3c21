"""tableenvs.training.rllib in the RLlib venv (``.venv-rllib``, see docs/training.md#rllib): the multi-agent env against
the raw game, the PPO config, and a short ``tableenvs train --backend rllib`` run whose policy ``tableenvs eval``
plays.

Not collected by the main test run (its testpaths are ``tests``); ``.ci/run`` runs ``python -m pytest -q tests_rllib``
in the RLlib venv. With ``TABLEENVS_MAIN_PYTHON`` set to the main venv's python (``.ci/run`` does), the trained
policy is also played there, where Ray RLlib is not installed.
"""

import ipaddress
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tableenvs
from tableenvs.policies import RandomPolicy, play_game
from tableenvs.training.rllib import TableMultiAgentEnv, ppo_config

ROOT = Path(__file__).resolve().parent.parent
GAMES = [("pilipili_v0", 3), ("llama_party_v0", 2), ("rummikub_v0", 2)]


def _play_through(env, seed, rng):
    """Random legal play through the RLlib env; per-agent reward totals, steps, and the checks on each step."""
    observations, infos = env.reset(seed=seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    steps = 0
    policy = RandomPolicy()
    while True:
        assert len(observations) == 1, "a turn-based game shows only the agent to act"
        (agent,) = observations
        assert agent in env.possible_agents and agent == env.raw.agent_selection
        observation = observations[agent]
        assert observation in env.observation_spaces[agent]
        np.testing.assert_array_equal(observation["action_mask"], env.raw.observe(agent)["action_mask"])
        action = policy.act(observation["observations"], observation["action_mask"], rng)
        observations, rewards, terminateds, truncateds, infos = env.step({agent: action})
        steps += 1
        assert set(rewards) == set(env.possible_agents)
        for name, reward in rewards.items():
            totals[name] += reward
        if terminateds["__all__"] or truncateds["__all__"]:
            assert set(observations) == set(env.possible_agents), "every learner gets its last observation"
            done = terminateds if terminateds["__all__"] else truncateds
            assert all(done[name] for name in env.possible_agents)
            return totals, steps
        assert not any(terminateds.values()) and not any(truncateds.values())


@pytest.mark.parametrize(("name", "players"), GAMES)
def test_every_seat_learning_the_env_gives_the_raw_games_rewards_and_decisions(name, players):
    env = TableMultiAgentEnv({"env": name, "options": {"num_players": players}})
    for seed in range(3):
        totals, steps = _play_through(env, seed, np.random.default_rng(seed))
        raw = tableenvs.make_raw(name, num_players=players)
        expected, decisions = play_game(raw, [RandomPolicy()] * players, seed=seed, rng=np.random.default_rng(seed))
        assert steps == decisions
        np.testing.assert_allclose([totals[agent] for agent in raw.possible_agents], expected)


def test_learners_and_opponents_only_the_learning_seats_are_shown():
    env = TableMultiAgentEnv(
        {"env": "pilipili_v0", "options": {"num_players": 3}, "learners": [1], "opponents": "heuristic", "seed": 0}
    )
    assert env.possible_agents == ["player_1"]
    for seed in range(3):
        totals, steps = _play_through(env, seed, np.random.default_rng(seed))
        assert steps > 0 and set(totals) == {"player_1"}


def test_an_exported_policy_file_plays_the_other_seats_self_play_against_a_frozen_copy(tmp_path):
    from tableenvs.policies.torch_policy import build_network, save_policy

    raw = tableenvs.make_raw("pilipili_v0", num_players=3)
    network = build_network(raw.observation_space("player_0")["observation"].shape[0], raw.action_space("player_0").n)
    frozen = save_policy(
        network, tmp_path / "policy.pt", env="pilipili_v0", options={"num_players": 3}, hidden=[128, 128]
    )
    env = TableMultiAgentEnv(
        {"env": "pilipili_v0", "options": {"num_players": 3}, "learners": [0], "opponents": str(frozen), "seed": 0}
    )
    assert env.possible_agents == ["player_0"]
    totals, steps = _play_through(env, 4, np.random.default_rng(4))
    assert steps > 0 and set(totals) == {"player_0"}


def test_bad_configs_are_refused_with_what_is_allowed():
    with pytest.raises(ValueError, match="needs 'env'"):
        TableMultiAgentEnv({"options": {}})
    with pytest.raises(ValueError, match="takes only 'options', 'learners', 'opponents' and 'seed'"):
        TableMultiAgentEnv({"env": "pilipili_v0", "player": 3})
    with pytest.raises(ValueError, match=r"learners must list distinct seats among \[0, 1\]"):
        TableMultiAgentEnv({"env": "llama_party_v0", "options": {"num_players": 2}, "learners": [2]})
    with pytest.raises(ValueError, match="policies must be one of shared, per_seat"):
        ppo_config("pilipili_v0", policies="one")


def test_ppo_config_maps_seats_to_one_shared_or_one_module_each():
    shared = ppo_config("llama_party_v0", options={"num_players": 3})
    assert set(shared.policies) == {"shared"}
    assert shared.policy_mapping_fn("player_2", None) == "shared"
    per_seat = ppo_config("llama_party_v0", options={"num_players": 3}, policies="per_seat")
    assert set(per_seat.policies) == {"player_0", "player_1", "player_2"}
    assert per_seat.policy_mapping_fn("player_2", None) == "player_2"


def _run(python, *args, cwd):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [python, "-m", "tableenvs.cli", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_a_short_cli_run_writes_a_policy_that_tableenvs_eval_plays(tmp_path):
    out = tmp_path / "rllib_run"
    printed = _run(
        sys.executable,
        *("train", "llama_party_v0", "--backend", "rllib", "--players", "2", "--timesteps", "4000"),
        *("--env-runners", "1", "--final-games", "0", "--out", str(out)),
        cwd=tmp_path,
    )
    assert "iteration 1: 2000/4000 env steps" in printed and "iteration 2: 4000/4000 env steps" in printed
    record = json.loads((out / "results.json").read_text())
    assert record["env_steps"] >= 4000 and len(record["iterations"]) == 2
    assert record["config"]["options"] == {"num_players": 2} and record["policies"] == {"shared": "policy.pt"}
    pythons = [sys.executable] + [p for p in [os.environ.get("TABLEENVS_MAIN_PYTHON")] if p]
    for index, python in enumerate(pythons):
        played = _run(
            python,
            *("eval", "llama_party_v0", "--policies", f"random,{out / 'policy.pt'}", "--games", "40"),
            *("--no-plot", "--no-progress", "--out", str(tmp_path / f"eval{index}")),
            cwd=tmp_path,
        )
        assert "2 players, as the training record of rllib_run says" in played
        result = json.loads((tmp_path / f"eval{index}" / "results.json").read_text())
        assert result["games"] == 40


def test_per_seat_policies_export_one_file_each(tmp_path):
    """Also --ray-address: "local" makes ray.init start a new local instance (a real cluster is not run here)."""
    out = tmp_path / "per_seat"
    _run(
        sys.executable,
        *("train", "llama_party_v0", "--backend", "rllib", "--players", "2", "--timesteps", "500", "--per-seat"),
        *("--env-runners", "0", "--ray-address", "local", "--final-games", "0", "--no-progress", "--out", str(out)),
        cwd=tmp_path,
    )
    assert json.loads((out / "results.json").read_text())["policies"] == {
        "player_0": "player_0.pt",
        "player_1": "player_1.pt",
    }
    from tableenvs.policies.torch_policy import load_policy

    first, _ = load_policy(out / "player_0.pt")
    second, _ = load_policy(out / "player_1.pt")
    pairs = zip(first.state_dict().values(), second.state_dict().values(), strict=True)
    assert not all(np.array_equal(a, b) for a, b in pairs), "each seat's module trained on its own"


def _listening_sockets(pids: set[int]) -> list[str]:
    """The addresses (``ip:port``) on which any of ``pids`` listens for TCP, read from ``/proc`` (Linux)."""
    inodes = set()
    for pid in pids:
        try:
            for fd in os.scandir(f"/proc/{pid}/fd"):
                target = os.readlink(fd.path)
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except (FileNotFoundError, PermissionError, ProcessLookupError):
            continue
    found = []
    for table, family in (("/proc/net/tcp", socket.AF_INET), ("/proc/net/tcp6", socket.AF_INET6)):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] != "0A" or fields[9] not in inodes:  # 0A: LISTEN
                continue
            raw, port = fields[1].split(":")
            packed = bytes.fromhex(raw)
            packed = b"".join(packed[i : i + 4][::-1] for i in range(0, len(packed), 4))  # host order per 32 bits
            found.append(f"{socket.inet_ntop(family, packed)}:{int(port, 16)}")
    return found


def _descendants(root: int) -> set[int]:
    parents = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
            except (FileNotFoundError, ProcessLookupError):
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    family, grew = {root}, True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in family} - family
        family |= more
        grew = bool(more)
    return family


def test_a_local_ray_listens_on_127_0_0_1_only():
    """The brief: every server a test starts listens on 127.0.0.1 only. Ray binds to the machine's network address
    unless told; ``init_ray`` (what ``tableenvs train --backend rllib`` and the benchmarks call) tells it."""
    import ray

    from tableenvs.training.rllib import init_ray

    if ray.is_initialized():
        ray.shutdown()
    init_ray()
    try:
        assert ray.get_runtime_context().gcs_address.startswith("127.0.0.1:")
        addresses = _listening_sockets(_descendants(os.getpid()))
        assert len(addresses) >= 3, f"expected the GCS, the raylet and the object manager to listen: {addresses}"
        for address in addresses:
            host = ipaddress.ip_address(address.rsplit(":", 1)[0])
            host = getattr(host, "ipv4_mapped", None) or host
            assert host.is_loopback, f"a Ray process listens on {address}, not on 127.0.0.1: {addresses}"
    finally:
        ray.shutdown()
