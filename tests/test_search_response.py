"""The planning best response (:mod:`tableenvs.training.search_response`): the game's default search with the target
playing its rollouts, in one seat of a table of the target. Its measure is the other learners' (the same deals, the
same quantity as ``evaluate_gain``), whatever the number of workers; bad settings are one line before any game.
Tiny budgets: behaviour, not strength (strength: benchmarks/exploitability.py --learner search, docs/agents.md)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tableenvs
from tableenvs.training.best_response import evaluate_gain
from tableenvs.training.search_response import planner, planner_spec, search_best_response

NAME = "llama_party_v0"


def test_the_planner_is_the_games_default_search_with_the_target_in_its_rollouts():
    assert planner_spec(NAME, "heuristic") == "search:sims=50:z=2:batched=1"  # the default's paired root, batched
    assert planner_spec(NAME, "trained") == "search:sims=50:z=2:batched=1:rollout=trained"
    assert planner_spec("pilipili_v0", "trained") == "search:sims=60:rollout=trained"  # root=ucb: as it is
    search, policy = planner(tableenvs.make_raw(NAME, num_players=3), "trained")
    assert search.options.rollout == "trained" and search.options.batched and search.options.sims == 50
    assert type(search.rollout_policy).__name__ == type(policy).__name__ == "NumpyPolicy"
    for target in ("random", "search", "x.npz"):
        with pytest.raises(ValueError, match="answers heuristic or trained") as caught:
            planner_spec(NAME, target)
        assert "\n" not in str(caught.value)


@pytest.mark.parametrize("num_players", [2, 4])
def test_its_measure_is_evaluate_gains_on_the_same_deals(num_players):
    """A greedy model in the planner's seat, played in the AEC env, scores exactly what ``evaluate_gain`` measures
    for it in the batched engine from the same seed: the same deals, seatings and quantity."""
    options = {"num_players": num_players}
    ours = search_best_response(NAME, "heuristic", options=options, deals=6, seed=7, learner="trained", say=str)
    gain, low, high, learner_mean, target_mean = evaluate_gain(NAME, options, "trained", "heuristic", deals=6, seed=7)
    assert ours.games == 6 * num_players and ours.spec == "trained"
    assert np.allclose([ours.gain, ours.low, ours.high, ours.learner_mean, ours.target_mean],
                       [gain, low, high, learner_mean, target_mean], rtol=0, atol=1e-9)  # fmt: skip
    assert ours.low < ours.high


def test_the_planner_decides_and_workers_do_not_change_the_result():
    lines: list[str] = []
    one = search_best_response(NAME, "trained", options={"num_players": 2}, deals=2, seed=3, say=lines.append)
    two = search_best_response(NAME, "trained", options={"num_players": 2}, deals=2, seed=3, workers=2, say=str)
    assert one.spec == planner_spec(NAME, "trained") and one.decisions > 10 and one.decision_ms > 0
    assert (one.gain, one.low, one.high, one.learner_mean) == (two.gain, two.low, two.high, two.learner_mean)
    assert one.decisions == two.decisions and lines[-1].startswith("planning best response to trained: 2 of 2 deals")
    assert len(one.per_deal) == 2 and one.per_deal == two.per_deal and np.isclose(np.mean(one.per_deal), one.gain)


def test_two_runs_on_the_same_deals_are_compared_deal_by_deal(tmp_path):
    """``paired_difference`` pairs two runs' per-deal gains; ``exploitability.py --compare`` does it for two saved
    runs and refuses, in one line, runs on other deals."""
    from tableenvs.training.search_response import paired_difference
    from tests.benchmark_scripts import load_benchmark

    mean, low, high = paired_difference([1.0, 2.0, 3.0], [0.5, 1.0, 2.5])
    assert np.isclose(mean, 2 / 3) and low < mean < high
    assert paired_difference([1.0, 2.0], [0.0, 1.0]) == (1.0, 1.0, 1.0)  # no spread: a zero-width interval
    for first, second in (([1.0, 2.0], [1.0]), ([1.0], [1.0])):
        with pytest.raises(ValueError, match="two equal runs of at least 2 deals"):
            paired_difference(first, second)
    script = load_benchmark("exploitability.py", "exploitability_script")
    paths = []
    # "a" and "b" as runs saved before the seed field (read from the command), "c" and "d" with it
    runs = (("a", 0, False, [1.0, 2.0, 3.0]), ("b", 0, False, [0.5, 1.0, 2.5]), ("c", 5, True, [0.0, 0.0, 1.0]),
            ("d", 0, True, [1.0, 1.0, 1.0]))  # fmt: skip
    for name, seed, field, gains in runs:
        row = {"target": "trained", "gain": float(np.mean(gains)), "per_deal": gains}
        command = f"python benchmarks/exploitability.py --seed {seed} --eval-games 6"
        run = {"game": NAME, "players": 4, "command": command, "rows": [row]}
        if field:
            run = {**run, "seed": seed, "command": "python benchmarks/exploitability.py --seed 99"}
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(run))
    (line,) = script.compare_runs(str(paths[0]), str(paths[1]))
    assert line.startswith(f"{NAME} 4p, target trained: gain +2.000 - +1.333 = +0.667 [")
    assert line.endswith("per game, paired over 3 deals")
    (line,) = script.compare_runs(str(paths[0]), str(paths[3]))  # the field, not the command, names the seed
    assert "= +1.000 [" in line
    with pytest.raises(ValueError, match="not on the same deals") as caught:
        script.compare_runs(str(paths[0]), str(paths[2]))
    assert "\n" not in str(caught.value)
    (tmp_path / "other.json").write_text("{}")
    with pytest.raises(ValueError, match="other.json is not a run this benchmark saved"):
        script.compare_runs(str(paths[0]), str(tmp_path / "other.json"))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"deals": 1}, "deals must be an integer >= 2"),
        ({"workers": 0}, "workers must be an integer >= 1"),
        ({"target": "random"}, "answers heuristic or trained"),
        ({"options": {"num_players": 9}}, "num_players"),
    ],
)
def test_bad_settings_are_one_line_before_any_game(kwargs, message):
    settings = {"target": "heuristic", "deals": 4, **kwargs}
    said: list[str] = []
    with pytest.raises(ValueError, match=message) as caught:
        search_best_response(NAME, settings.pop("target"), say=said.append, **settings)
    assert "\n" not in str(caught.value) and said == []


def test_a_candidates_rows_are_kept_apart_from_the_committed_ones():
    """``exploitability.py``: a ``trained`` target measured through ``TABLEENVS_MODELS`` needs ``--results DIR``, and
    ``--results`` does not go with writing the docs (written from the committed rows only); one line each."""
    import argparse

    from tests.benchmark_scripts import load_benchmark

    script = load_benchmark("exploitability.py", "exploitability_script")

    def args(**given):
        base = {"results": None, "write_docs": False, "docs_only": False, "compare": None}
        return argparse.Namespace(**{**base, "targets": "heuristic,trained", **given})

    script.check_results(args(), None)  # the shipped model, the committed rows
    script.check_results(args(results="/tmp/candidates"), "/tmp/models")
    script.check_results(args(targets="heuristic"), "/tmp/models")  # no trained row
    script.check_results(args(docs_only=True), "/tmp/models")  # nothing played
    with pytest.raises(ValueError, match="TABLEENVS_MODELS is set") as caught:
        script.check_results(args(), "/tmp/models")
    assert "\n" not in str(caught.value) and "--results DIR" in str(caught.value)
    for flag in ("write_docs", "docs_only"):
        with pytest.raises(ValueError, match="--results: the docs are written from"):
            script.check_results(args(results="/tmp/candidates", **{flag: True}), None)
