"""Tournaments (tableenvs.evaluation): seating balance, seeds, reproducibility across workers, statistics on
known inputs, bad inputs refused before any game, output files and the ``tableenvs eval`` CLI."""

from __future__ import annotations

import csv
import json
import math
from itertools import permutations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tableenvs.evaluation as evaluation
from tableenvs.cli import main
from tableenvs.evaluation import EvaluationResult, FinalScore, GameRecord, cycle_length, evaluate, seating
from tableenvs.ratings import competition_ranks, elo_ratings, mean_interval, openskill_ratings, wilson_interval


@pytest.fixture
def no_games(monkeypatch):
    """Fail the test if any batch of games is started."""

    def refuse(*args, **kwargs):
        raise AssertionError("games were started before the input was checked")

    monkeypatch.setattr(evaluation, "run_batches", refuse)


# ---------------------------------------------------------------------------------------------- seating


@pytest.mark.parametrize("k, n", [(1, 4), (2, 2), (2, 5), (3, 3), (4, 4), (3, 2), (4, 2), (5, 3)])
def test_every_entrant_sits_in_every_seat_equally_over_a_cycle(k, n):
    cycle = cycle_length(k, n)
    counts = np.zeros((k, n), dtype=int)
    tables = [seating(g, k, n) for g in range(3 * cycle)]
    for table in tables:
        assert len(table) == n
        for seat, entrant in enumerate(table):
            counts[entrant, seat] += 1
    assert (counts == counts[0, 0]).all(), counts
    if n < k:  # every ordered table of distinct entrants, once per cycle
        assert len(set(tables[:cycle])) == cycle == len(list(permutations(range(k), n)))
        assert all(len(set(t)) == n for t in tables)
    else:  # rotation, documented formula
        assert all(t[s] == (s + g) % k for g, t in enumerate(tables) for s in range(n))


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 5), n=st.integers(1, 6), start=st.integers(0, 10_000))
def test_any_whole_cycle_is_balanced_wherever_it_starts(k, n, start):
    cycle = cycle_length(k, n)
    counts = np.zeros((k, n), dtype=int)
    for g in range(start, start + cycle):
        table = seating(g, k, n)
        assert all(0 <= e < k for e in table)
        for seat, entrant in enumerate(table):
            counts[entrant, seat] += 1
    assert (counts == counts[0, 0]).all()


@settings(max_examples=60, deadline=None)
@given(
    meetings=st.one_of(st.integers(1, 40).map(lambda m: [m] * 3), st.lists(st.integers(1, 40), min_size=3, max_size=3)),
    fractions=st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3),
    order=st.permutations([0, 1, 2]),
)
def test_elo_is_centred_follows_pairwise_scores_and_ignores_labels(meetings, fractions, order):
    counts, scores = np.zeros((3, 3)), np.zeros((3, 3))
    for (i, j), count, fraction in zip([(0, 1), (0, 2), (1, 2)], meetings, fractions, strict=True):
        won = round(count * fraction * 2) / 2  # whole and half points
        counts[i, j] = counts[j, i] = count
        scores[i, j], scores[j, i] = won, count - won
    ratings, errors = elo_ratings(scores, counts)
    assert ratings.mean() == pytest.approx(1500.0) and (errors > 0).all()
    permuted, _ = elo_ratings(scores[np.ix_(order, order)], counts[np.ix_(order, order)])
    assert permuted == pytest.approx(ratings[list(order)], abs=1e-6)
    if len(set(meetings)) == 1:  # a balanced round robin: Bradley-Terry ranks as the total scores do
        totals = scores.sum(axis=1)
        for a in range(3):
            for b in range(3):
                if totals[a] > totals[b] + 1e-9:
                    assert ratings[a] > ratings[b]


def test_more_seats_than_policies_cycle_through_the_list():
    assert seating(0, 2, 5) == (0, 1, 0, 1, 0)
    assert seating(1, 2, 5) == (1, 0, 1, 0, 1)
    assert seating(0, 3, 2) == (0, 1) and seating(1, 3, 2) == (0, 2) and seating(2, 3, 2) == (1, 0)


def test_seat_counts_of_a_real_run_are_balanced():
    result = evaluate("llama_party_v0", ["random", "heuristic", "random"], games=12, num_players=3)
    assert (result.seat_counts() == 4).all()
    assert [r.index for r in result.records] == list(range(12))


# ---------------------------------------------------------------------------------------------- reproducibility


def test_same_seed_same_results_other_seed_other_deals():
    a = evaluate("pilipili_v0", ["random", "heuristic"], games=6, num_players=3, seed=5)
    b = evaluate("pilipili_v0", ["random", "heuristic"], games=6, num_players=3, seed=5)
    c = evaluate("pilipili_v0", ["random", "heuristic"], games=6, num_players=3, seed=6)
    assert a.records == b.records and a.to_dict() == b.to_dict()
    assert [r.rewards for r in a.records] != [r.rewards for r in c.records]


def test_one_and_two_worker_processes_give_identical_results():
    kwargs = dict(games=16, num_players=2, seed=3)
    one = evaluate("llama_party_v0", ["random", "heuristic"], workers=1, **kwargs)
    two = evaluate("llama_party_v0", ["random", "heuristic"], workers=2, **kwargs)
    assert one.records == two.records
    assert one.to_dict() == two.to_dict()


def test_batch_size_does_not_change_results(monkeypatch):
    kwargs = dict(games=10, num_players=2, seed=1)
    default = evaluate("pilipili_v0", ["heuristic", "random"], **kwargs)
    monkeypatch.setattr(evaluation, "MAX_BATCH", 3)
    small = evaluate("pilipili_v0", ["heuristic", "random"], **kwargs)
    assert default.records == small.records


def test_local_and_ray_backends_give_identical_results():
    ray = pytest.importorskip("ray", reason="needs the ray extra")
    kwargs = dict(games=8, num_players=2, seed=11)
    local = evaluate("llama_party_v0", ["random", "heuristic"], **kwargs)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = evaluate("llama_party_v0", ["random", "heuristic"], workers=2, backend="ray", **kwargs)
    finally:
        ray.shutdown()
    assert local.records == remote.records
    assert local.to_dict() == remote.to_dict()


def test_setup_is_reused_only_for_the_same_names_options_and_model_files(tmp_path):
    def batch(specs, options=None):
        return evaluation._Batch("pilipili_v0", options or {"num_players": 2}, tuple(specs), True, 0, 2, (0,), False)

    key = evaluation._setup_key
    assert key(batch(["random", "heuristic"])) == key(batch(["random", "heuristic"]))
    assert key(batch(["random", "heuristic"])) != key(batch(["heuristic", "random"]))
    assert key(batch(["random", "heuristic"], {"num_players": 3})) != key(batch(["random", "heuristic"]))
    assert key(batch(["random", lambda o, m, r: 0])) is None  # objects are built afresh for every batch
    model = tmp_path / "model.zip"
    model.write_bytes(b"first")
    first = key(batch(["random", str(model)]))
    model.write_bytes(b"second save")  # saved again (other size): the model must be loaded again
    assert first is not None and key(batch(["random", str(model)])) != first


# ---------------------------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(env="chess_v0"), ValueError, "unknown environment 'chess_v0'; available: .*pilipili_v0"),
        (dict(policies=["random", "greedy"]), ValueError, r"policy #2 \(greedy\): unknown policy 'greedy'"),
        (dict(games=0), ValueError, "games must be an integer >= 1, got 0"),
        (dict(games=-3), ValueError, "games must be an integer >= 1, got -3"),
        (dict(games=2.5), ValueError, "games must be an integer >= 1"),
        (dict(workers=0), ValueError, "workers must be an integer >= 1, got 0"),
        (dict(backend="dask"), ValueError, "backend must be one of 'local', 'ray', got 'dask'"),
        (dict(policies=[]), ValueError, "policies is empty"),
        (dict(num_players=9), ValueError, "num_players"),
        (dict(options={"colour": 1}), TypeError, "unknown option.*'colour'"),
        (dict(policies=["random", "missing.zip"]), FileNotFoundError, r"policy #2 \(missing.zip\).*no saved SB3"),
        (dict(policies=["random", lambda o, m, r: 0], workers=2), ValueError, "cannot be sent to worker processes"),
    ],
)
def test_bad_input_is_refused_before_any_game(no_games, kwargs, error, match):
    call = dict(env="pilipili_v0", policies=["random", "heuristic"], games=4) | kwargs
    with pytest.raises(error, match=match):
        evaluate(call.pop("env"), call.pop("policies"), call.pop("games"), **call)


def _saved_model(tmp_path, env_name, num_players):
    sb3_contrib = pytest.importorskip("sb3_contrib", reason="needs the train extra")
    from tableenvs.single_agent import SingleAgentEnv

    model = sb3_contrib.MaskablePPO("MlpPolicy", SingleAgentEnv(env_name, num_players=num_players), seed=0)
    path = tmp_path / f"{env_name}_{num_players}p.zip"
    model.save(path)
    return str(path)


def test_model_for_another_game_or_player_count_is_refused_and_a_matching_one_plays(tmp_path, monkeypatch):
    model = _saved_model(tmp_path, "pilipili_v0", 3)
    result = evaluate("pilipili_v0", ["random", model, "heuristic"], games=3)  # matching: plays
    assert result.labels == ["random", "pilipili_v0_3p.zip", "heuristic"] and result.games == 3
    monkeypatch.setattr(evaluation, "run_batches", lambda *a, **k: pytest.fail("games were started"))
    with pytest.raises(ValueError, match=r"policy #2 \(pilipili_v0_3p.zip\).*was it trained on another game"):
        evaluate("pilipili_v0", ["random", model], games=2)  # 2 players: other observation size
    with pytest.raises(ValueError, match="was it trained on another game or player count"):
        evaluate("llama_party_v0", ["random", model, "heuristic"], games=2)


def test_training_record_beside_the_model_catches_a_player_count_the_sizes_cannot(tmp_path, no_games):
    model = _saved_model(tmp_path, "llama_party_v0", 4)  # Llama Party's observation size is the same for 2..4
    record = tmp_path / "results.json"
    record.write_text(json.dumps({"config": {"env": "llama_party_v0", "options": {}}}))  # default: 4 players
    with pytest.raises(ValueError, match=r"policy #2 .*trained with 4 players; this tournament has 2"):
        evaluate("llama_party_v0", ["random", model], games=2)
    record.write_text(json.dumps({"config": {"env": "rummikub_v0", "options": {"num_players": 2}}}))
    with pytest.raises(ValueError, match="trained on rummikub_v0, not llama_party_v0"):
        evaluate("llama_party_v0", ["random", model], games=2)


# ---------------------------------------------------------------------------------------------- statistics


def test_interval_helpers_on_known_values():
    low, high = wilson_interval(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-4) and high == pytest.approx(0.7634, abs=1e-4)
    assert wilson_interval(0, 20)[0] == 0.0 and wilson_interval(20, 20)[1] == 1.0
    assert all(math.isnan(x) for x in wilson_interval(0, 0))
    mean, low, high = mean_interval([1.0, 2.0, 3.0, 4.0])
    assert mean == 2.5 and high - mean == pytest.approx(1.959964 * np.std([1, 2, 3, 4], ddof=1) / 2)
    assert mean_interval([7.0]) == (7.0, 7.0, 7.0)
    assert competition_ranks([(0, 1), (1, 0), (0, 1), (1, 5)]) == [1, 3, 1, 4]


def test_elo_fit_recovers_the_bradley_terry_difference():
    scores = np.array([[0.0, 75.0], [25.0, 0.0]])
    counts = np.array([[0, 100], [100, 0]])
    ratings, errors = elo_ratings(scores, counts, prior_games=0.0)
    assert ratings[0] - ratings[1] == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert ratings.mean() == pytest.approx(1500.0)
    # standard error of the logit difference is 1/sqrt(n p (1-p)); each centred rating carries half of it
    expected = 400 / math.log(10) / math.sqrt(100 * 0.75 * 0.25) / 2
    assert errors == pytest.approx([expected, expected], rel=1e-6)
    sweep, _ = elo_ratings(np.array([[0.0, 10.0], [0.0, 0.0]]), np.array([[0, 10], [10, 0]]))
    assert np.isfinite(sweep).all() and sweep[0] > sweep[1]  # the prior keeps a clean sweep finite


def test_openskill_rates_the_winner_up_and_averages_duplicate_seats():
    ratings = openskill_ratings(2, [((0, 1), (1, 2))] * 5)
    assert ratings[0][0] > 25.0 > ratings[1][0]
    # entrant 0 in two seats that finish first and last: its copies' updates average out
    (mu_a, _), (mu_b, _) = openskill_ratings(2, [((0, 1, 0), (1, 2, 3))])
    assert abs(mu_a - 25.0) < abs(mu_b - 25.0)


def _record(index, entrants, rewards, winners, ranks, scores=None):
    return GameRecord(index, entrants, rewards, scores, winners, ranks, False, 10)


def test_statistics_on_known_records():
    records = [
        _record(0, (0, 1), (1.0, -1.0), (0,), (1, 2), (3.0, 7.0)),
        _record(1, (1, 0), (0.0, 0.0), (0, 1), (1, 1), (5.0, 5.0)),  # shared win
        _record(2, (0, 1), (-1.0, 1.0), (1,), (2, 1), (9.0, 2.0)),
        _record(3, (1, 0), (-1.0, 1.0), (1,), (2, 1), (6.0, 1.0)),
    ]
    result = EvaluationResult("toy", {}, 2, ["a", "b"], 0, records, FinalScore("x", "chilis", False))
    a, b = result.policies
    assert (a["appearances"], a["wins"], a["win_rate"]) == (4, 2.5, 0.625)
    assert (b["appearances"], b["wins"], b["win_rate"]) == (4, 1.5, 0.375)
    assert a["reward_mean"] == pytest.approx(0.25) and b["reward_mean"] == pytest.approx(-0.25)
    assert a["score_mean"] == pytest.approx((3 + 5 + 9 + 1) / 4) and b["score_mean"] == pytest.approx(5.0)
    assert a["mean_rank"] == 1.25 and b["mean_rank"] == 1.5
    h2h = result.head_to_head
    assert h2h["kind"] == "head_to_head" and h2h["meetings"] == [[0, 4], [4, 0]]
    assert h2h["score"] == [[0.0, 2.5], [1.5, 0.0]] and h2h["score_rate"][0][1] == 0.625
    assert a["elo"] > 1500 > b["elo"]
    assert (a["win_rate_low"], a["win_rate_high"]) == wilson_interval(2.5, 4)


def test_truncated_games_are_won_by_the_best_final_score():
    result = evaluate("pilipili_v0", ["random", "heuristic", "random"], games=6, options={"max_rounds": 1})
    truncated = [record for record in result.records if record.truncated]
    assert len(truncated) >= 3  # a round can also end the game (someone reaches 6 chilis)
    for record in truncated:
        best = min(record.final_scores)
        assert record.winners == tuple(s for s, x in enumerate(record.final_scores) if x == best)
        assert all((record.ranks[s] == 1) == (s in record.winners) for s in range(3))


def test_engine_winners_and_rewards_add_up_in_finished_games():
    result = evaluate("llama_party_v0", ["heuristic", "random"], games=6, num_players=4)
    for record in result.records:
        assert not record.truncated and record.rewards == record.final_scores  # reward="score": rewards sum to totals
        best = max(record.final_scores)
        assert all(record.final_scores[s] == best for s in record.winners)
    rows = {row["policy"]: row for row in result.policies}
    assert rows["heuristic"]["appearances"] == rows["random"]["appearances"] == 12
    assert sum(row["wins"] for row in result.policies) == pytest.approx(6.0)  # shared wins split


# ---------------------------------------------------------------------------------------------- outputs and CLI


def test_save_writes_json_csv_and_png(tmp_path):
    result = evaluate("llama_party_v0", ["random", "heuristic"], games=4, seed=2)
    paths = result.save(tmp_path)
    data = json.loads(paths["json"].read_text())
    assert data["entrants"] == ["random", "heuristic"] and data["games"] == 4 and data["seed"] == 2
    assert data["policies"] == json.loads(json.dumps(result.policies))
    with paths["games_csv"].open() as handle:
        assert len(list(csv.DictReader(handle))) == 4
    with paths["policies_csv"].open() as handle:
        assert [row["policy"] for row in csv.DictReader(handle)] == ["random", "heuristic"]
    assert paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_an_entrant_without_a_seat_gets_empty_statistics_and_strict_json(tmp_path):
    result = evaluate("llama_party_v0", ["random", "heuristic", "random"], games=1, num_players=2)
    assert [row["appearances"] for row in result.policies] == [1, 1, 0]  # game 0 seats entrants 0 and 1
    paths = result.save(tmp_path, plot=False)
    data = json.loads(paths["json"].read_text(), parse_constant=lambda name: pytest.fail(f"{name} in JSON"))
    assert data["policies"][2]["win_rate"] is None and data["policies"][2]["elo"] is None


def test_cli_eval_prints_the_table_and_writes_the_files(tmp_path, capsys):
    out = tmp_path / "eval"
    code = main(
        [
            "eval",
            "pilipili_v0",
            "--players",
            "random,heuristic",
            "--num-players",
            "3",
            "--games",
            "3",
            "--out",
            str(out),
            "--no-progress",
            "--no-plot",
            "--seed",
            "4",
        ]  # fmt: skip
    )
    printed = capsys.readouterr().out
    assert code == 0
    assert "win rate" in printed and "heuristic" in printed and "pilipili_v0, 3 players, 3 games (seed 4)" in printed
    assert sorted(p.name for p in out.iterdir()) == ["games.csv", "head_to_head.csv", "policies.csv", "results.json"]
    assert json.loads((out / "results.json").read_text())["num_players"] == 3


def test_cli_eval_reports_bad_input(tmp_path, capsys, no_games):
    assert main(["eval", "pilipili_v0", "--players", "random,nobody", "--out", str(tmp_path)]) == 2
    assert "unknown policy 'nobody'" in capsys.readouterr().err
    assert main(["eval", "pilipili_v0", "--players", "random", "--games", "0"]) == 2
    assert "games must be an integer >= 1, got 0" in capsys.readouterr().err
