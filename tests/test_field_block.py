"""benchmarks/field.py and benchmarks/exploitability.py write docs/agents.md's field tables and exploitability table
from their saved JSON: the blocks in the docs are what the saved files render (a hand edit or a stale block fails
here), and each field table's best-response lines take the exploitability runs of its own model only, largest budget
first, with the ratio only where the heuristic's gain is shown above 0."""

from __future__ import annotations

from pathlib import Path

from tests.benchmark_scripts import load_benchmark

ROOT = Path(__file__).resolve().parents[1]

field = load_benchmark("field.py", "field_script")
exploitability = load_benchmark("exploitability.py", "exploitability_script")


def block(begin: str, end: str) -> str:
    page = (ROOT / "docs" / "agents.md").read_text()
    assert page.count(begin) == 1 and page.count(end) == 1
    return page.split(begin, 1)[1].split(end, 1)[0]


def test_the_docs_blocks_are_what_the_saved_rows_render():
    assert block(field.BEGIN, field.END).strip() == field.all_tables().strip(), "field block stale: --docs-only"
    saved = exploitability.table(exploitability.saved_runs())
    assert block(exploitability.BEGIN, exploitability.END).strip() == saved.strip(), "exploitability block stale"


def run(samples: int, targets: dict[str, tuple[float, float, float]], model=None, extra: str = "") -> dict:
    rows = [
        {"target": target, "samples": samples, "gain": gain, "low": low, "high": high}
        for target, (gain, low, high) in targets.items()
    ]
    command = (
        f"python benchmarks/exploitability.py --game g --players 4 --budget-samples {samples} --targets "
        f"{','.join(targets)} --seed 0{extra}"
    )
    return {"game": "g", "players": 4, "command": command, "rows": rows, "start": "clone", "model": model}


def test_best_response_lines_take_this_models_runs_largest_budget_first():
    model = ("g.npz", "aaaaaaaaaaaa")
    runs = [
        run(1000, {"heuristic": (2.0, 1.0, 3.0)}),
        run(1000, {"trained": (0.5, -0.5, 1.5)}, model=list(model)),  # the same budget, another process
        run(5000, {"trained": (9.0, 8.0, 10.0)}, model=["g.npz", "bbbbbbbbbbbb"]),  # another model's: left out
        run(3000, {"heuristic": (0.5, -0.1, 1.1), "trained": (0.2, -0.3, 0.7)}),  # saved before runs named a model
        run(9000, {"heuristic": (1.0, 0.5, 1.5)}),  # no trained row: no line
    ]
    lines = exploitability.summary("g", 4, model, runs)
    assert lines == [
        "at 3,000 learner decisions: against `trained` +0.20 [-0.30, +0.70], against `heuristic` +0.50 [-0.10, "
        "+1.10]; ratio n/a (the heuristic's gain is not shown above 0: its interval takes in 0 or less)",
        "at 1,000 learner decisions: against `trained` +0.50 [-0.50, +1.50], against `heuristic` +2.00 [+1.00, "
        "+3.00]; ratio 0.25",
    ]
    assert exploitability.summary("g", 3, model, runs) == []  # another player count


def test_the_cross_entropy_learners_lines_come_first_and_count_games():
    model = ("g.npz", "aaaaaaaaaaaa")
    scorer = {
        "game": "g", "players": 4, "learner": "scorer", "recipe": "holding", "start": "recipe", "model": list(model),
        "command": "python benchmarks/exploitability.py --game g --players 4 --learner scorer --recipe holding "
        "--generations 2 --population 3 --vector-games 40 --eval-games 8 --targets heuristic,trained --seed 0",
        "rows": [
            {"target": "heuristic", "training_games": 240, "gain": 10.0, "low": 4.0, "high": 16.0},
            {"target": "trained", "training_games": 240, "gain": 3.0, "low": -1.0, "high": 7.0},
        ],
    }  # fmt: skip
    runs = [run(9000, {"heuristic": (2.0, 1.0, 3.0), "trained": (0.5, -0.5, 1.5)}, model=list(model)), scorer]
    assert exploitability.summary("g", 4, model, runs) == [
        "at 240 games of `holding` (cross-entropy): against `trained` +3.00 [-1.00, +7.00], against `heuristic` "
        "+10.00 [+4.00, +16.00]; ratio 0.30",
        "at 9,000 learner decisions: against `trained` +0.50 [-0.50, +1.50], against `heuristic` +2.00 [+1.00, "
        "+3.00]; ratio 0.25",
    ]
    for row in scorer["rows"]:
        row.update(cpu_seconds=1.0, deals=2, games=8, learner_mean=0.0, target_mean=0.0, self_gain=0.0, self_low=0.0,
                   self_high=0.0)  # fmt: skip
    scorer.update(finished="then", commit="abc")
    rendered = exploitability.table([scorer])
    assert "| g 4p | `trained` | 240 games of `holding` (cross-entropy) (1) | +3.00 [-1.00, +7.00]" in rendered
    assert "from `recipe`" not in rendered


def test_the_planners_rows_name_its_search_and_come_after_the_cross_entropy_learners():
    model = ("g.npz", "aaaaaaaaaaaa")
    planner = {
        "game": "g", "players": 4, "learner": "search", "start": "none", "model": list(model), "finished": "then",
        "commit": "abc",
        "command": "python benchmarks/exploitability.py --game g --players 4 --learner search --eval-games 8 "
        "--targets heuristic,trained --seed 0",
        "rows": [
            {"target": "heuristic", "spec": "search:sims=5", "decisions": 9, "decision_ms": 2.5, "gain": 2.0,
             "low": 1.0, "high": 3.0},
            {"target": "trained", "spec": "search:sims=5:rollout=trained", "decisions": 9, "decision_ms": 4.0,
             "gain": 0.6, "low": -0.4, "high": 1.6},
        ],
    }  # fmt: skip
    runs = [run(9000, {"heuristic": (2.0, 1.0, 3.0), "trained": (0.5, -0.5, 1.5)}, model=list(model)), planner]
    assert exploitability.summary("g", 4, model, runs)[0] == (
        "at planner `search:sims=5:rollout=trained`, 4.0 ms a decision: against `trained` +0.60 [-0.40, +1.60], "
        "against `heuristic` +2.00 [+1.00, +3.00]; ratio 0.30"
    )
    for row in planner["rows"]:
        row.update(cpu_seconds=1.0, deals=2, games=8, learner_mean=0.0, target_mean=0.0, self_gain=0.0, self_low=0.0,
                   self_high=0.0)  # fmt: skip
    rendered = exploitability.table([planner])
    assert "| g 4p | `heuristic` | planner `search:sims=5`, 2.5 ms a decision (1) | +2.00 [+1.00, +3.00]" in rendered
    assert "| g 4p | `trained` | planner `search:sims=5:rollout=trained`, 4.0 ms a decision (1) |" in rendered
    assert "from `none`" not in rendered and rendered.count("| 0.30 |") == 1
