"""Batched players (``tableenvs.vector.players``): a numpy policy file evaluated for a whole batch chooses, greedy,
exactly as ``NumpyPolicy`` row by row on thousands of positions recorded from batched play (the shipped models and
random-weight files, relu and tanh); the batched random player draws as ``RandomPolicy`` with the same generators;
sampling stays legal and follows its seed; what cannot be batched is refused in one line."""

from __future__ import annotations

import numpy as np
import pytest

import tableenvs
import tableenvs.vector
from tableenvs.policies import RandomPolicy
from tableenvs.policies.numpy_policy import NumpyPolicy, load_numpy_policy, random_numpy_policy, trained_model_path
from tableenvs.vector.candidates import BatchedCandidatePolicy
from tableenvs.vector.players import UNION_SHARE, BatchedNumpyPolicy, BatchedRandomPolicy, check_batchable_model
from tests.batched_positions import recorded_positions

MODELS = [
    ("llama_party_v0", {"num_players": 4}, "shipped"),
    ("pilipili_v0", {"num_players": 5}, "shipped"),
    ("llama_party_v0", {"num_players": 3}, "random-relu"),
    ("pilipili_v0", {"num_players": 3}, "random-tanh"),
]


@pytest.mark.parametrize("name, options, kind", MODELS, ids=[f"{n}-{o['num_players']}p-{k}" for n, o, k in MODELS])
def test_a_batched_model_chooses_as_numpy_policy_row_by_row(name, options, kind, tmp_path):
    obs, mask, games = recorded_positions(name, options, 64, 48, seed=options["num_players"])  # 3,072 positions
    raw = tableenvs.make_raw(name, **options)
    if kind == "shipped":
        path = trained_model_path(name)
    else:
        activation = kind.split("-")[1]
        path = random_numpy_policy(tmp_path / "m.npz", raw, hidden=(48, 32), activation=activation, seed=3)
    reference = NumpyPolicy(path, raw)
    rng = np.random.default_rng(0)
    expected = np.array([reference.act(o, m, rng) for o, m in zip(obs, mask, strict=True)])
    batched = BatchedNumpyPolicy(path, raw)
    chosen = batched.act(obs, mask, np.zeros(len(obs), np.int64))
    assert chosen.dtype == np.int64 and chosen.shape == expected.shape
    assert len(np.unique(expected)) > 8  # varied positions, not one choice repeated
    assert np.flatnonzero(chosen != expected).tolist() == []
    # in batches of one step's 64 rows (the first layer sums each row's nonzero inputs only): the same choices
    steps = [slice(start, start + 64) for start in range(0, len(obs), 64)]
    by_step = np.concatenate([batched.act(obs[rows], mask[rows], np.arange(64)) for rows in steps])
    assert np.flatnonzero(by_step != expected).tolist() == []
    # rows read in place from the whole buffers (what the batched evaluation hands over): the same choices
    picked = np.sort(np.random.default_rng(1).choice(len(obs), 700, replace=False))
    assert np.array_equal(batched.act_rows(obs, mask, picked), expected[picked])
    spec = "trained" if kind == "shipped" else str(path)
    front = tableenvs.vector.batched_policy(spec, games, env=raw)  # the front door builds the same player
    assert np.array_equal(front.act(obs[:500], mask[:500], np.arange(500)), expected[:500])


def test_rows_with_one_legal_action_and_logits_that_are_not_numbers_are_played_as_numpy_policy_plays_them():
    """A row with one legal action is played without a forward pass; a row whose logits are not numbers is still
    seen as such by the compiled output layer (its dot products may be reassociated, nothing more) and decided as
    ``NumpyPolicy`` decides it. Pili Pili 5p: its 234 actions take the legal-actions-only output layer."""
    obs, mask, _ = recorded_positions("pilipili_v0", {"num_players": 5}, 64, 16, seed=5)
    raw = tableenvs.make_raw("pilipili_v0", num_players=5)
    batched = BatchedNumpyPolicy(trained_model_path("pilipili_v0"), raw)
    only = (mask != 0).sum(axis=1) == 1
    assert 0 < only.sum() < len(mask)  # both kinds of rows are there
    expected = np.array([batched.reference.act(o, m, None) for o, m in zip(obs, mask, strict=True)])
    assert np.array_equal(batched.act(obs, mask), expected)
    assert np.array_equal(expected[only], (mask[only] != 0).argmax(axis=1))
    bias = batched._weights[-1][1]  # shared with the reference player: both see the same broken layer
    saved = bias.copy()
    try:
        bias[::3] = np.nan
        expected = np.array([batched.reference.act(o, m, None) for o, m in zip(obs, mask, strict=True)])
        assert np.array_equal(batched.act(obs, mask), expected)
        bias[:] = np.nan
        assert np.array_equal(batched.act(obs, mask), (mask != 0).argmax(axis=1))  # NumpyPolicy: the first legal
    finally:
        bias[:] = saved


def test_the_batched_random_player_draws_as_random_policy_with_the_same_generators():
    obs, mask, games = recorded_positions("llama_party_v0", {"num_players": 3}, 8, 1, seed=1)
    player = BatchedRandomPolicy(games)
    mine = [[np.random.default_rng([e, s]) for s in range(3)] for e in range(8)]
    for e in range(8):
        player.seat_generators(e, [np.random.default_rng([e, s]) for s in range(3)])
    reference = RandomPolicy()
    rng = np.random.default_rng(5)
    obs, mask = games.reset(7)
    checked = 0
    for _ in range(200):
        envs = np.flatnonzero(rng.random(8) < 0.7)  # some rows each step, so the streams advance unevenly
        chosen = player.act(obs[envs], mask[envs], envs)
        for row, e in enumerate(envs):
            assert chosen[row] == reference.act(obs[e], mask[e], mine[e][int(games.to_act[e])])
            checked += 1
        actions = mask.argmax(axis=1)
        actions[envs] = chosen
        obs, mask, *_ = games.step(actions)
    assert checked > 1000


def test_sampling_is_legal_follows_its_seed_and_the_softmax(tmp_path):
    obs, mask, games = recorded_positions("llama_party_v0", {"num_players": 4}, 32, 8, seed=2)
    raw = tableenvs.make_raw("llama_party_v0", num_players=4)
    path = random_numpy_policy(tmp_path / "m.npz", raw, hidden=(16,), seed=1)
    one = BatchedNumpyPolicy(path, raw, deterministic=False, seed=9)
    two = BatchedNumpyPolicy(path, raw, deterministic=False, seed=9)
    envs = np.arange(len(obs))
    first = one.act(obs, mask, envs)
    assert np.array_equal(first, two.act(obs, mask, envs))
    assert mask[envs, first].all()
    # one position drawn many times: the frequencies follow NumpyPolicy's masked softmax
    row = 5
    reference = NumpyPolicy(path, raw, deterministic=False)
    probabilities = reference.action_probabilities(obs[row], mask[row])
    draws = one.act(np.repeat(obs[row : row + 1], 20000, 0), np.repeat(mask[row : row + 1], 20000, 0), envs[:1])
    counts = np.bincount(draws, minlength=len(probabilities)) / 20000
    assert np.abs(counts - probabilities).max() < 0.02  # 4 standard errors at p = 0.5 is 0.014
    assert set(np.flatnonzero(counts)) <= set(np.flatnonzero(mask[row]))


def test_what_cannot_be_batched_is_refused_in_one_line(tmp_path):
    games = tableenvs.vector.make("llama_party_v0", 4, num_players=4)
    for spec in ("search", "openspiel:random", object()):
        with pytest.raises(ValueError, match="has no batched player") as error:
            tableenvs.vector.batched_policy(spec, games)
        assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match="give env= .* or reset the games"):
        tableenvs.vector.batched_policy("trained", games)
    games.reset(0)
    assert isinstance(tableenvs.vector.batched_policy("trained", games), BatchedNumpyPolicy)  # options from the games
    rummikub = load_numpy_policy(trained_model_path("rummikub_v0"))
    with pytest.raises(ValueError, match="candidate-scoring model .*batched_policy plays this one with") as error:
        check_batchable_model(rummikub)  # BatchedNumpyPolicy refuses it; batched_policy gives its own player
    assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match="candidate-scoring model"):
        BatchedNumpyPolicy(rummikub, tableenvs.make_raw("rummikub_v0", num_players=4))
    rows = tableenvs.vector.make("rummikub_v0", 2, num_players=4)
    assert isinstance(tableenvs.vector.batched_policy("trained", rows, env=tableenvs.make_raw("rummikub_v0")),
                      BatchedCandidatePolicy)  # fmt: skip
    other = random_numpy_policy(tmp_path / "3p.npz", tableenvs.make_raw("llama_party_v0", num_players=3))
    with pytest.raises(ValueError, match="3"):  # a model made for 3 players refused for 4, as NumpyPolicy does
        tableenvs.vector.batched_policy(str(other), games)


@pytest.mark.parametrize("offset", [False, True], ids=["scale", "offset-and-scale"])
def test_a_model_reading_input_features_and_an_input_scale_chooses_as_numpy_policy(tmp_path, offset):
    """The features a model file names are appended to every row (row by row through the game's feature class,
    which has no batched form), after an input scale (and an input offset: the dense first layer, leaving out the
    inputs zero in every row of a batch): still NumpyPolicy's choice on every position."""
    from tableenvs.core.layout import layout_version
    from tableenvs.policies.input_features import feature_size
    from tableenvs.policies.model_env import model_options
    from tableenvs.policies.model_file import save_numpy_policy

    name = "llama_party_v0"
    features = next(iter(tableenvs.spec(name).input_features))
    obs, mask, games = recorded_positions(name, {"num_players": 4}, 32, 24, seed=8)  # 768 positions
    raw = tableenvs.make_raw(name, num_players=4)
    inputs = obs.shape[1] + feature_size(features)
    rng = np.random.default_rng(4)
    weights = [(rng.normal(0, 0.1, (inputs, 24)), np.zeros(24)), (rng.normal(0, 0.3, (24, 32)), rng.normal(0, 0.1, 32))]
    scale = rng.uniform(0.5, 2.0, inputs).astype(np.float32)
    shift = np.where(rng.random(inputs) < 0.1, rng.normal(0, 0.5, inputs), 0).astype(np.float32) if offset else None
    path = save_numpy_policy(
        tmp_path / "f.npz", game=name, options=model_options(raw), layout_version=layout_version(raw), weights=weights,
        activation="relu", input_offset=shift, input_scale=scale, input_features=features,
    )  # fmt: skip
    reference = NumpyPolicy(path, raw)
    expected = np.array([reference.act(o, m, rng) for o, m in zip(obs, mask, strict=True)])
    player = tableenvs.vector.batched_policy(str(path), games, env=raw)
    chosen = player.act(obs, mask, np.arange(len(obs)))
    assert len(np.unique(expected)) > 8
    assert np.flatnonzero(chosen != expected).tolist() == []
    if offset:  # most inputs stay zero after the offset, so the batch's union of nonzero inputs is the smaller product
        shifted = (np.concatenate([obs, player.inputs(obs, mask)[:, obs.shape[1] :]], axis=1) - shift) != 0
        assert shifted.any(axis=0).mean() < UNION_SHARE
    for rows in (slice(0, 1), slice(5, 40)):  # one row, a few rows
        assert np.array_equal(player.act(obs[rows], mask[rows], np.arange(len(obs))[rows]), expected[rows])
