"""The journal of a long benchmark row (``benchmarks/search_vs_heuristic.py``, also the ladder's): a stopped row
resumes only with the model files it was started with. A shipped model replaced since would otherwise mix two
models' games in one row; the journal records each model's SHA-256 (as ``tableenvs eval``'s resume does) and a
journal of other files, or one naming none, is refused with one line, its games left as they were."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tableenvs.evaluation.journal import FORMAT, LOG_FILE, TOURNAMENT_FILE
from tests.benchmark_scripts import load_benchmark

script = load_benchmark("search_vs_heuristic.py", "search_vs_heuristic_script")
TRAINED = {
    "env": "llama_party_v0",
    "policies": ["search", "trained"],
    "games": 2,
    "num_players": 4,
    "options": {},
    "seed": 0,
}


def shipped_digest() -> str:
    from tableenvs.policies.numpy_policy import resolve_trained

    return hashlib.sha256(Path(resolve_trained("trained", "llama_party_v0", None)).read_bytes()).hexdigest()


def stopped_journal(directory: Path, tournament: dict) -> Path:
    directory.mkdir()
    (directory / TOURNAMENT_FILE).write_text(json.dumps({"format": FORMAT, **tournament}))
    (directory / LOG_FILE).write_text("")
    return directory


def test_the_digests_name_the_shipped_file_the_row_plays():
    assert script.journal_models(TRAINED) == {"trained": shipped_digest()}
    assert script.journal_models({**TRAINED, "policies": ["heuristic", "random"]}) == {}


@pytest.mark.parametrize("models", [{"trained": "0" * 64}, None], ids=["another-file", "names-none"])
def test_a_journal_of_other_model_files_is_refused_and_left_as_it_was(tmp_path, models):
    started = {"arguments": TRAINED} if models is None else {"arguments": TRAINED, "models": models}
    journal = stopped_journal(tmp_path / "row.partial", started)
    before = {path.name: path.read_bytes() for path in journal.iterdir()}
    with pytest.raises(ValueError, match="other model files or names none") as caught:
        script.journaled_evaluate(journal, TRAINED, workers=1)
    assert "\n" not in str(caught.value)
    assert {path.name: path.read_bytes() for path in journal.iterdir()} == before


def test_a_whole_row_records_its_digests_while_it_plays_and_removes_its_journal(tmp_path, monkeypatch):
    journal = tmp_path / "row.partial"
    arguments = {**TRAINED, "policies": ["heuristic", "trained"]}
    seen = []
    real = script.evaluate

    def wrapped(**kwargs):  # the real tournament; after each logged batch, what the journal names
        on_games = kwargs.pop("on_games")

        def logged(records):
            on_games(records)
            seen.append(json.loads((journal / TOURNAMENT_FILE).read_text())["models"])

        return real(**kwargs, on_games=logged)

    monkeypatch.setattr(script, "evaluate", wrapped)
    result = script.journaled_evaluate(journal, arguments, workers=1)
    assert len(result.records) == 2
    assert seen and all(models == {"trained": shipped_digest()} for models in seen)
    assert not journal.exists()
