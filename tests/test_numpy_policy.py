"""Numpy policy files (tableenvs.policies.numpy_policy): the format round trip, the forward pass and masked play, the
refusal of a model that does not fit the env, the "trained" name everywhere a policy is named (make_policy,
SingleAgentEnv, tableenvs eval with worker processes, tableenvs play), and the export of a trained SB3 model (same
logits and actions as SB3Policy; tableenvs train writes model.npz; tableenvs export).

Trust and malformed files: tests/test_model_trust.py.
"""

import json
import re
import zipfile

import numpy as np
import pytest

import tableenvs
import tableenvs.policies.numpy_policy as numpy_policy
from tableenvs.core.layout import layout_version
from tableenvs.policies import BUILTIN_POLICIES, make_policy, play_game
from tableenvs.policies.numpy_policy import (
    NumpyModel,
    NumpyPolicy,
    convert_numpy_policy,
    load_numpy_policy,
    model_options,
    random_numpy_policy,
    read_header,
    save_for_env,
    save_numpy_policy,
)
from tableenvs.testing import per_game

#: (game, a player count) for each of the package's games
GAMES = list(per_game({"pilipili_v0": 4, "llama_party_v0": 3, "rummikub_v0": 2}, "builtin", "state").items())


def observations(raw, count, seed=0):
    """``count`` (observation, mask) pairs of random play on ``raw``."""
    rng = np.random.default_rng(seed)
    seen, game = [], 0
    while len(seen) < count:
        raw.reset(seed=seed + game)
        game += 1
        while len(seen) < count and not (raw.terminations[raw.agent_selection] or raw.truncations[raw.agent_selection]):
            view = raw.observe(raw.agent_selection)
            seen.append((view["observation"].copy(), view["action_mask"].copy()))
            legal = np.flatnonzero(view["action_mask"])
            raw.step(int(legal[rng.integers(legal.size)]))
    return seen


@pytest.fixture
def models_dir(tmp_path, monkeypatch):
    """An empty directory that ``"trained"`` reads (through ``$TABLEENVS_MODELS``, so worker processes see it too)."""
    directory = tmp_path / "models"
    directory.mkdir()
    monkeypatch.setenv("TABLEENVS_MODELS", str(directory))
    return directory


# ---------------------------------------------------------------------------------------------- the format


def test_every_game_has_a_layout_version_and_options_with_the_player_count():
    for name, players in GAMES:
        raw = tableenvs.make_raw(name, num_players=players)
        assert layout_version(raw) == 1 == type(raw.encoder).LAYOUT_VERSION
        options = model_options(tableenvs.make(name, num_players=players))  # a wrapped env too
        assert options["num_players"] == players and json.loads(json.dumps(options)) == options
        raw.reset(seed=0)
        assert options == raw.get_state()["options"]  # what the state API reports
    assert layout_version(object()) == 1  # an encoder (or env) that does not say is version 1


def test_save_and_load_round_trip_with_every_field(tmp_path):
    rng = np.random.default_rng(0)
    weights = [(rng.normal(size=(5, 3)), rng.normal(size=3)), (rng.normal(size=(3, 4)), rng.normal(size=4))]
    offset, scale = rng.normal(size=5), rng.random(5)
    path = save_numpy_policy(
        tmp_path / "m.npz",
        game="pilipili_v0",
        options={"num_players": 3},
        layout_version=1,
        weights=weights,
        activation="relu",
        input_offset=offset,
        input_scale=scale,
        meta={"recipe": "test", "steps": 7},
    )
    model = load_numpy_policy(path)
    assert (model.game, model.options, model.hidden, model.activation) == (
        "pilipili_v0",
        {"num_players": 3},
        (3,),
        "relu",
    )
    assert (model.observation_size, model.num_actions, model.meta) == (5, 4, {"recipe": "test", "steps": 7})
    assert all(w.dtype == np.float32 and b.dtype == np.float32 for w, b in model.weights)
    header = read_header(path)
    assert header["format"] == "tableenvs-numpy-policy" and header["version"] == 1 and header["hidden"] == [3]
    with np.load(path, allow_pickle=False) as archive:  # exactly the documented arrays
        assert sorted(archive.files) == sorted(
            ["header", "layer0.weight", "layer0.bias", "layer1.weight", "layer1.bias", "input.offset", "input.scale"]
        )
        assert archive["header"].dtype == np.uint8 and json.loads(archive["header"].tobytes()) == header
    # the forward pass: (obs - offset) * scale, relu between layers, logits out
    x = rng.normal(size=5).astype(np.float32)
    h = np.maximum((x - offset.astype(np.float32)) * scale.astype(np.float32) @ weights[0][0] + weights[0][1], 0)
    expected = h @ weights[1][0] + weights[1][1]
    assert np.allclose(model.logits(x), expected, atol=1e-5)
    assert np.allclose(NumpyPolicy(model)._logits(x), expected, atol=1e-5)


@pytest.mark.parametrize("activation", ["tanh", "relu"])
@pytest.mark.parametrize("name, players", GAMES)
def test_the_policy_plays_the_most_likely_legal_action_or_samples_the_masked_softmax(
    tmp_path, name, players, activation
):
    raw = tableenvs.make_raw(name, num_players=players)
    path = random_numpy_policy(tmp_path / "m.npz", raw, hidden=(32, 16), activation=activation)
    policy = make_policy(str(path), raw)
    sampled = make_policy(path, raw, deterministic=False)  # a pathlib.Path too
    assert isinstance(policy, NumpyPolicy) and isinstance(sampled, NumpyPolicy)
    rng = np.random.default_rng(1)
    for observation, mask in observations(raw, 60):
        logits = policy.model.logits(observation).astype(np.float64)
        action = policy.act(observation, mask, rng)
        assert mask[action] and action == int(np.argmax(np.where(mask > 0, logits, -np.inf)))
        probabilities = sampled.action_probabilities(observation, mask)
        assert probabilities[mask == 0].sum() == 0 and probabilities.sum() == pytest.approx(1.0)
        assert mask[sampled.act(observation, mask, rng)]
    # sampling draws from the caller's generator only: the same seed, the same actions
    first = [sampled.act(o, m, np.random.default_rng(5)) for o, m in observations(raw, 20)]
    assert first == [sampled.act(o, m, np.random.default_rng(5)) for o, m in observations(raw, 20)]
    with pytest.raises(ValueError, match="no legal action"):
        policy.act(observation, np.zeros_like(mask), rng)


def test_a_whole_game_with_a_numpy_policy_in_every_seat(tmp_path):
    raw = tableenvs.make_raw("pilipili_v0", num_players=3)
    policy = make_policy(str(random_numpy_policy(tmp_path / "m.npz", raw)), raw)
    totals, decisions = play_game(raw, [policy] * 3, seed=3, rng=np.random.default_rng(3))
    assert decisions > 10 and raw.outcome() is not None


def test_a_model_that_does_not_fit_the_env_is_refused_in_one_line_naming_both(tmp_path):
    five = tableenvs.make_raw("pilipili_v0", num_players=5)
    path = random_numpy_policy(tmp_path / "x.npz", five)
    cases = [
        (
            tableenvs.make_raw("pilipili_v0", num_players=4),
            ["'num_players': 5", "'num_players': 4", "differ: num_players"],
        ),
        (tableenvs.make_raw("pilipili_v0", num_players=5, missions="none"), ["'missions': 'standard'", "'none'"]),
    ]
    for env, words in cases:
        with pytest.raises(ValueError) as raised:
            make_policy(str(path), env)
        message = str(raised.value)
        assert message.startswith("model 'x.npz' was trained on pilipili_v0 options {") and "\n" not in message
        assert all(word in message for word in words), message
    with pytest.raises(ValueError) as raised:  # another game altogether: said in those words, no option dicts
        make_policy(str(path), tableenvs.make_raw("llama_party_v0", num_players=4))
    assert str(raised.value) == "model 'x.npz': wrong game: it was made for pilipili_v0, not llama_party_v0"
    model = load_numpy_policy(path)
    later = NumpyModel(**{**model.__dict__, "layout_version": 2})  # saved for another observation layout
    with pytest.raises(ValueError, match="observation layout version 2 but this tableenvs encodes version 1"):
        NumpyPolicy(later, five)


# ---------------------------------------------------------------------------------------------- "trained"


def test_trained_is_a_builtin_name_and_says_which_games_have_a_model(models_dir, monkeypatch):
    assert "trained" in BUILTIN_POLICIES
    raw = tableenvs.make_raw("pilipili_v0", num_players=4)
    with pytest.raises(ValueError, match=r"no trained model is shipped for pilipili_v0 .*\(shipped: none\)"):
        make_policy("trained", raw)
    random_numpy_policy(models_dir / "llama_party_v0.npz", tableenvs.make_raw("llama_party_v0"))
    with pytest.raises(ValueError, match=r"shipped: llama_party_v0\)") as raised:
        make_policy("trained", raw)
    assert "\n" not in str(raised.value)
    random_numpy_policy(models_dir / "pilipili_v0.npz", raw)
    assert isinstance(make_policy("trained", raw), NumpyPolicy)
    # without the variable, the package's directory (a module attribute tests may point elsewhere)
    monkeypatch.delenv("TABLEENVS_MODELS")
    monkeypatch.setattr(numpy_policy, "MODELS_DIR", models_dir)
    assert isinstance(make_policy("trained", raw), NumpyPolicy)
    assert isinstance(make_policy(f"trained:path={models_dir / 'pilipili_v0.npz'}", raw), NumpyPolicy)
    with pytest.raises(ValueError, match="'trained' takes only path=FILE.npz"):
        make_policy("trained:sims=3", raw)


def test_trained_as_an_opponent_of_the_single_agent_view(models_dir):
    raw = tableenvs.make_raw("llama_party_v0", num_players=3)
    random_numpy_policy(models_dir / "llama_party_v0.npz", raw)
    from tableenvs.training.single_agent import SingleAgentEnv

    env = SingleAgentEnv("llama_party_v0", num_players=3, opponents="trained")
    env.reset(seed=0)
    assert all(isinstance(policy, NumpyPolicy) for policy in env._seat_policies.values())
    observation, reward, terminated, truncated, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert observation.shape == env.observation_space.shape


def test_eval_takes_trained_and_its_player_count_and_workers_rebuild_it(models_dir, tmp_path, cli):
    random_numpy_policy(models_dir / "rummikub_v0.npz", tableenvs.make_raw("rummikub_v0", num_players=3))
    argv = ["eval", "rummikub_v0", "--policies", "trained,heuristic", "--games", "6", "--no-progress", "--no-plot"]
    code, out, err = cli(argv + ["--workers", "2", "--out", str(tmp_path / "eval")])
    assert code == 0, err
    assert "3 players, as the training record of trained says" in out and "\ntrained " in out
    saved = json.loads((tmp_path / "eval" / "results.json").read_text())
    assert saved["num_players"] == 3 and saved["games"] == 6
    # the same in this process: the workers do not change the games
    code, _, err = cli(argv + ["--out", str(tmp_path / "one")])
    assert code == 0, err
    assert (tmp_path / "one" / "games.csv").read_text() == (tmp_path / "eval" / "games.csv").read_text()


def test_play_takes_trained_and_a_npz_path(models_dir, tmp_path, cli):
    raw = tableenvs.make_raw("pilipili_v0", num_players=3)
    random_numpy_policy(models_dir / "pilipili_v0.npz", raw)
    other = random_numpy_policy(tmp_path / "other.npz", raw, seed=1)
    code, out, err = cli(
        ["play", "pilipili_v0", "--players", "3", "--policies", f"trained,{other},heuristic", "--quiet"]
    )
    assert code == 0, err
    assert "player_0=trained" in out and "total reward" in out


# ---------------------------------------------------------------------------------------------- export from SB3


@pytest.fixture(scope="module")
def trained_sb3(tmp_path_factory):
    """A MaskablePPO trained a few hundred steps on 3-player Pili Pili, saved as a .zip."""
    pytest.importorskip("sb3_contrib", reason="needs the train extra")
    import torch
    from sb3_contrib import MaskablePPO

    from tableenvs.training.single_agent import SingleAgentEnv

    torch.set_num_threads(1)
    env = SingleAgentEnv("pilipili_v0", num_players=3, opponents="heuristic")
    model = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=128,
        batch_size=64,
        n_epochs=1,
        policy_kwargs={"net_arch": [32, 32]},
        seed=0,
        device="cpu",
    )
    model.learn(256)
    path = tmp_path_factory.mktemp("sb3") / "model.zip"
    model.save(path)
    return model, path


def log_softmax(x):
    x = np.asarray(x, np.float64)
    return x - x.max() - np.log(np.exp(x - x.max()).sum())


@pytest.mark.parametrize("source", ["zip, pickle-free", "zip, trusted", "in memory"])
def test_an_exported_model_gives_sb3s_logits_and_actions(trained_sb3, tmp_path, source):
    from tableenvs.policies.sb3_policy import SB3Policy, export_sb3

    model, path = trained_sb3
    raw = tableenvs.make_raw("pilipili_v0", num_players=3)
    given = model if source == "in memory" else path
    out = export_sb3(given, tmp_path / "m.npz", raw, trust=source == "zip, trusted", meta={"note": "test"})
    exported = load_numpy_policy(out)
    assert exported.hidden == (32, 32) and exported.activation == "tanh"  # SB3's default activation
    assert exported.options == model_options(raw) and exported.meta["note"] == "test"
    assert exported.meta["algorithm"] == "MaskablePPO" and exported.meta["timesteps"] == model.num_timesteps
    ours, theirs = NumpyPolicy(out, raw), SB3Policy(model, raw)
    seen = observations(raw, 200, seed=7)
    for observation, _ in seen:  # SB3's Categorical keeps normalised logits: compare up to the shift
        assert np.allclose(log_softmax(ours._logits(observation)), theirs._logits(observation), atol=1e-4)
    rng = np.random.default_rng(0)
    assert [ours.act(o, m, rng) for o, m in seen] == [theirs.act(o, m, rng) for o, m in seen]


def test_export_refuses_what_the_format_cannot_express(tmp_path):
    pytest.importorskip("sb3_contrib", reason="needs the train extra")
    from sb3_contrib import MaskablePPO
    from torch import nn

    from tableenvs.policies.sb3_policy import export_sb3
    from tableenvs.training.single_agent import SingleAgentEnv

    env = SingleAgentEnv("pilipili_v0", num_players=3)
    raw = tableenvs.make_raw("pilipili_v0", num_players=3)
    elu = MaskablePPO("MlpPolicy", env, policy_kwargs={"activation_fn": nn.ELU, "net_arch": [8]}, device="cpu")
    elu.save(tmp_path / "elu.zip")
    with pytest.raises(ValueError, match="the format has only Tanh and ReLU"):
        export_sb3(tmp_path / "elu.zip", tmp_path / "elu.npz", raw)
    with pytest.raises(ValueError, match=r"activations \['ELU'\]"):
        export_sb3(elu, tmp_path / "elu.npz", raw)
    relu = MaskablePPO("MlpPolicy", env, policy_kwargs={"activation_fn": nn.ReLU, "net_arch": [8]}, device="cpu")
    relu.save(tmp_path / "relu.zip")
    assert load_numpy_policy(export_sb3(tmp_path / "relu.zip", tmp_path / "relu.npz", raw)).activation == "relu"
    with pytest.raises(ValueError, match="has observations of size .* another game or player count"):
        export_sb3(tmp_path / "relu.zip", tmp_path / "x.npz", "pilipili_v0", options={"num_players": 4})
    assert not (tmp_path / "elu.npz").exists() and not (tmp_path / "x.npz").exists()


def test_cli_export_reads_the_game_from_the_training_record(trained_sb3, tmp_path, cli):
    _, path = trained_sb3
    run = tmp_path / "run"
    run.mkdir()
    (run / "model.zip").write_bytes(path.read_bytes())
    code, _, err = cli(["export", str(run / "model.zip"), str(run / "a.npz")])
    assert code == 2 and "no results.json beside" in err and "give --game" in err
    (run / "results.json").write_text(json.dumps({"config": {"env": "pilipili_v0", "options": {"num_players": 3}}}))
    code, out, err = cli(["export", str(run / "model.zip"), str(run / "model.npz")])
    assert code == 0, err
    assert out.startswith(f"wrote {run / 'model.npz'}: pilipili_v0") and "(from " in out and "-32-32-" in out
    assert load_numpy_policy(run / "model.npz").options["num_players"] == 3
    code, _, err = cli(
        ["export", str(run / "model.zip"), str(run / "b.npz"), "--game", "pilipili_v0", "--players", "4"]
    )
    assert code == 2 and "another game or player count" in err
    code, _, err = cli(["export", str(run / "model.zip"), str(run / "b.txt"), "--game", "pilipili_v0"])
    assert code == 2 and "OUT must be a .npz file" in err


def test_repr_names_the_file_game_and_shape(tmp_path):
    env = tableenvs.make_raw("pilipili_v0", num_players=3)
    path = random_numpy_policy(tmp_path / "m.npz", env, hidden=(8,), seed=0)
    text = repr(NumpyPolicy(path))
    assert text.startswith("NumpyPolicy('m.npz', pilipili_v0, ") and "x8x" in text and "deterministic=True" in text


# ---------------------------------------------------------------------------------------------- float16 weights


def small_model(rng, sizes=(5, 3, 4)):
    """``(W, b)`` float64 layers chaining ``sizes`` (the saver rounds them)."""
    return [(rng.normal(size=(a, b)), rng.normal(size=b)) for a, b in zip(sizes, sizes[1:], strict=False)]


def rewritten(path, target, change):
    """A copy of the numpy policy file ``path`` at ``target`` with ``change(arrays)`` applied (uncompressed)."""
    with np.load(path, allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    change(arrays)
    np.savez(target, **arrays)
    return target


def test_float16_weights_round_trip_rounded_with_float32_biases_and_a_smaller_compressed_file(tmp_path):
    rng = np.random.default_rng(0)
    weights = small_model(rng, (40, 30, 20))
    offset, scale = rng.normal(size=40), rng.random(40)
    fields = dict(game="pilipili_v0", options={"num_players": 3}, layout_version=1, activation="relu")
    fields.update(weights=weights, input_offset=offset, input_scale=scale)
    wide = save_numpy_policy(tmp_path / "a.npz", **fields)
    narrow = save_numpy_policy(tmp_path / "b.npz", dtype="float16", **fields)
    assert narrow.stat().st_size < wide.stat().st_size
    model = load_numpy_policy(narrow)
    for (weight, bias), (w, b) in zip(weights, model.weights, strict=True):
        assert w.dtype == np.float32 and b.dtype == np.float32  # widened once, at load
        assert np.array_equal(w, weight.astype(np.float16).astype(np.float32))
        assert np.array_equal(b, bias.astype(np.float32))
    assert np.array_equal(model.input_offset, offset.astype(np.float32))
    assert np.array_equal(model.input_scale, scale.astype(np.float32))
    assert read_header(narrow) == read_header(wide)  # the same header (version 1)
    with np.load(narrow, allow_pickle=False) as archive:
        stored = {name: archive[name].dtype.name for name in archive.files if name != "header"}
    assert stored == {
        "layer0.weight": "float16",
        "layer1.weight": "float16",
        "layer0.bias": "float32",
        "layer1.bias": "float32",
        "input.offset": "float32",
        "input.scale": "float32",
    }
    with zipfile.ZipFile(narrow) as archive:  # np.savez_compressed
        assert {info.compress_type for info in archive.infolist()} == {zipfile.ZIP_DEFLATED}
    # an uncompressed archive whose weight matrices mix the two dtypes is read too
    mixed = rewritten(
        wide,
        tmp_path / "d.npz",
        lambda arrays: arrays.update({"layer1.weight": arrays["layer1.weight"].astype(np.float16)}),
    )
    assert [w.dtype for w, _ in load_numpy_policy(mixed).weights] == [np.float32, np.float32]
    # save_for_env passes the dtype on; a numpy dtype names it too
    env = tableenvs.make_raw("pilipili_v0", num_players=3)
    agent = env.possible_agents[0]
    sizes = (env.observation_space(agent)["observation"].shape[0], 8, env.action_space(agent).n)
    path = save_for_env(tmp_path / "c.npz", env, weights=small_model(rng, sizes), activation="tanh", dtype=np.float16)
    with np.load(path, allow_pickle=False) as archive:
        assert archive["layer0.weight"].dtype == np.float16 and archive["layer0.bias"].dtype == np.float32


def test_float16_weights_keep_the_greedy_actions_of_a_realistic_net_on_real_observations(tmp_path):
    raw = tableenvs.make_raw("pilipili_v0", num_players=5)  # 689 inputs, 234 actions
    source = random_numpy_policy(tmp_path / "a.npz", raw, hidden=(256, 256), activation="relu", seed=3)
    target = convert_numpy_policy(source, tmp_path / "b.npz")
    assert target.stat().st_size < 0.55 * source.stat().st_size  # 1,120,062 -> 558,402 bytes when written
    wide, narrow = load_numpy_policy(source), load_numpy_policy(target)
    assert narrow.meta == {"weight_dtype": "float16"} and narrow.header() == {**wide.header(), "meta": narrow.meta}
    with np.load(target, allow_pickle=False) as archive:
        assert all(archive[f"layer{i}.weight"].dtype == np.float16 for i in range(3))
    for (w32, b32), (w16, b16) in zip(wide.weights, narrow.weights, strict=True):
        assert w16.dtype == np.float32 and np.array_equal(w16, w32.astype(np.float16).astype(np.float32))
        assert np.array_equal(b16, b32)
    first, second = NumpyPolicy(wide, raw), NumpyPolicy(narrow, raw)
    rng = np.random.default_rng(0)
    seen = observations(raw, 400)
    same = sum(first.act(o, m, rng) == second.act(o, m, rng) for o, m in seen)
    assert same >= 0.99 * len(seen), f"{same}/{len(seen)}"  # 400/400 when written (relu and tanh, seeds 0-5)
    # back to float32: the float16 values exactly, now in float32 storage
    back = load_numpy_policy(convert_numpy_policy(target, tmp_path / "c.npz", dtype="float32"))
    assert back.meta == {"weight_dtype": "float32"}
    assert all(np.array_equal(w, v) for (w, _), (v, _) in zip(back.weights, narrow.weights, strict=True))


@pytest.mark.parametrize("dtype", ["int8", "float64", "bfloat16", np.float64, None, 16])
def test_a_storage_dtype_other_than_float32_or_float16_is_refused_naming_it(tmp_path, dtype):
    fields = dict(game="pilipili_v0", options={"num_players": 3}, layout_version=1, activation="relu")
    weights = small_model(np.random.default_rng(0))
    expected = rf"dtype \(the weights' storage\) must be one of float32, float16, got {re.escape(repr(dtype))}$"
    with pytest.raises(ValueError, match=expected):
        save_numpy_policy(tmp_path / "b.npz", weights=weights, dtype=dtype, **fields)
    source = save_numpy_policy(tmp_path / "a.npz", weights=weights, **fields)
    with pytest.raises(ValueError, match=expected):
        convert_numpy_policy(source, tmp_path / "c.npz", dtype=dtype)
    assert not (tmp_path / "b.npz").exists() and not (tmp_path / "c.npz").exists()


def test_a_weight_beyond_float16s_range_is_refused_rather_than_stored_as_infinity(tmp_path):
    fields = dict(game="pilipili_v0", options={"num_players": 3}, layout_version=1, activation="relu")
    weights = small_model(np.random.default_rng(0))
    weights[1][0][0, 0] = 1e5
    with pytest.raises(ValueError, match=r"'layer1.weight' has 1 value\(s\) beyond float16's range .*as float32$"):
        save_numpy_policy(tmp_path / "b.npz", weights=weights, dtype="float16", **fields)
    assert (
        load_numpy_policy(save_numpy_policy(tmp_path / "a.npz", weights=weights, **fields)).weights[1][0][0, 0] == 1e5
    )
    weights[1][0][0, 0] = np.inf  # not finite to begin with: the usual message
    with pytest.raises(ValueError, match=r"'layer1.weight' holds 1 non-finite value\(s\)"):
        save_numpy_policy(tmp_path / "b.npz", weights=weights, dtype="float16", **fields)


@pytest.mark.parametrize(
    "name, dtype, allowed",
    [
        ("layer0.weight", np.float64, "float32 or float16"),
        ("layer1.weight", np.int8, "float32 or float16"),
        ("layer0.bias", np.float16, "float32"),  # only the weight matrices may be float16
        ("input.scale", np.float16, "float32"),
    ],
)
def test_a_file_with_an_array_of_another_dtype_is_refused_naming_the_array_and_the_allowed_dtypes(
    tmp_path, name, dtype, allowed
):
    fields = dict(game="pilipili_v0", options={"num_players": 3}, layout_version=1, activation="relu")
    source = save_numpy_policy(
        tmp_path / "a.npz", weights=small_model(np.random.default_rng(0)), input_scale=np.ones(5), **fields
    )
    bad = rewritten(source, tmp_path / "c.npz", lambda arrays: arrays.update({name: arrays[name].astype(dtype)}))
    with pytest.raises(ValueError) as raised:
        load_numpy_policy(bad)
    message = str(raised.value)
    assert message == f"numpy policy {str(bad)!r}: {name!r} has dtype {np.dtype(dtype)}, not {allowed}", message


def _card_values_model(path) -> str:
    """A small random Llama Party network on the observation followed by ``llama_party_card_values_v1`` (the kind of
    file the search-clone recipe writes), as a model file; its path."""
    from tableenvs.llama_party.cards import DECK_SIZE
    from tableenvs.policies.model_file import save_for_env

    env = tableenvs.make_raw("llama_party_v0")
    rng = np.random.default_rng(0)
    sizes = [env.observation_size + 2 * DECK_SIZE, 32, env.num_actions]
    weights = [
        (rng.normal(0.0, 0.2, (a, b)), rng.normal(0.0, 0.1, b)) for a, b in zip(sizes[:-1], sizes[1:], strict=True)
    ]
    return str(save_for_env(path, env, weights=weights, activation="relu", input_features="llama_party_card_values_v1"))


def test_input_features_a_model_names_are_known_ones_and_need_the_env(tmp_path):
    """A header's ``input_features`` is a name from tableenvs.policies.input_features, never code: an unknown name is
    refused on save and load, and a model that reads features refuses to play without its env."""
    from tableenvs.policies.input_features import FEATURES
    from tableenvs.policies.model_file import save_numpy_policy

    weights = [(np.zeros((5, 3), np.float32), np.zeros(3, np.float32))]
    for bad in ("import os", ["llama_party_card_values_v1"]):  # not a name, or not even a string: one clear line
        with pytest.raises(ValueError, match="input_features must be one of " + ", ".join(FEATURES)):
            save_numpy_policy(
                tmp_path / "m.npz", game="llama_party_v0", options={}, layout_version=1, weights=weights,
                activation="relu", input_features=bad,
            )  # fmt: skip
    with pytest.raises(ValueError, match="give the env it plays"):
        NumpyPolicy(_card_values_model(tmp_path / "card_values.npz"))


def test_a_card_values_model_plays_its_network_on_the_observation_and_card_values(tmp_path):
    """What a model file naming ``llama_party_card_values_v1`` plays is the masked argmax of its network on the
    observation followed by CardValues of it; the values' pick block marks exactly the heuristic's choice."""
    from tableenvs.llama_party.agents import HeuristicPolicy
    from tableenvs.llama_party.cards import DECK_SIZE
    from tableenvs.llama_party.features import CardValues

    env = tableenvs.make_raw("llama_party_v0")
    policy = make_policy(_card_values_model(tmp_path / "card_values.npz"), env)
    features, heuristic = CardValues(env), HeuristicPolicy(env)
    rng = np.random.default_rng(0)
    checked = 0
    for seed in range(3):
        env.reset(seed=seed)
        while env.outcome() is None:
            seen = env.observe(env.agent_selection)
            observation, mask = seen["observation"], seen["action_mask"]
            extra = features(observation, mask)
            assert np.flatnonzero(extra[DECK_SIZE:]).tolist() == [heuristic.act(observation, mask, rng)]
            logits = policy.model.logits(np.concatenate([observation, extra]))
            expected = int(np.flatnonzero(mask)[np.argmax(logits[mask > 0])])
            action = policy.act(observation, mask, rng)
            assert action == expected
            env.step(action)
            checked += 1
    assert checked > 300
