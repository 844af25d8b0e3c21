"""Game records: record -> JSON -> replay reproduces exactly, for every game; a record that
does not reproduce names its first differing step; bad files and other versions are refused in one line."""

import json

import pytest

from tableenvs.cli import main
from tableenvs.play.records import GameRecord, RecordError, record_game, replay
from tableenvs.testing import per_game

#: The options of each game's recorded game (its first seat plays the heuristic)
OPTIONS = per_game(
    {
        "pilipili_v0": {"num_players": 3, "missions": "standard"},
        "llama_party_v0": {"num_players": 3},
        "rummikub_v0": {"num_players": 2},
    },
    "builtin",
    "heuristic",
)
GAMES = list(OPTIONS.items())


@pytest.mark.parametrize("game, options", GAMES)
def test_records_round_trip_through_json_and_replay_exactly(game, options, tmp_path):
    record = record_game(
        game, ["heuristic", "random"] + ["random"] * (options["num_players"] - 2), seed=11, options=options
    )
    assert record.game == game and record.options == options and record.seed == 11
    assert record.policies[:2] == ["heuristic", "random"]
    assert record.steps and all({"agent", "action", "description"} <= set(step) for step in record.steps)
    assert record.outcome is not None and len(record.returns) == options["num_players"]
    path = record.save(tmp_path / "game.json")
    loaded = GameRecord.load(path)
    assert loaded == record
    assert json.loads(path.read_text())["format"] == "tableenvs-game-record"
    result = replay(path)
    assert result.steps == len(record.steps)
    assert result.returns == record.returns and result.outcome == record.outcome
    # same seed, same policies' rng: the same game
    assert (
        record_game(game, ["heuristic", "random"] + ["random"] * (options["num_players"] - 2), seed=11, options=options)
        == record
    )


def tampered(record: GameRecord, **changes) -> dict:
    data = record.to_dict()
    data.update(changes)
    return data


@pytest.fixture(scope="module")
def pilipili_record():
    return record_game("pilipili_v0", "random", seed=3, options={"num_players": 3, "missions": "none"})


def test_a_changed_action_names_the_first_differing_step(pilipili_record):
    data = pilipili_record.to_dict()
    step = data["steps"][5]
    legal_other = (step["action"] + 1) % 234
    data["steps"][5] = {**step, "action": legal_other}
    with pytest.raises(RecordError, match=r"at step 5 \(player_\d"):
        replay(data)


def test_a_changed_agent_or_description_names_the_step(pilipili_record):
    data = pilipili_record.to_dict()
    data["steps"][7] = {**data["steps"][7], "agent": "player_9"}
    with pytest.raises(RecordError, match=r"at step 7 .*is to act"):
        replay(data)
    data = pilipili_record.to_dict()
    data["steps"][2] = {**data["steps"][2], "description": "bid 99"}
    with pytest.raises(RecordError, match=r"at step 2 .*now reads"):
        replay(data)


def test_a_cut_or_padded_record_or_other_seed_does_not_reproduce(pilipili_record):
    data = pilipili_record.to_dict()
    data["steps"] = data["steps"][:-1]
    with pytest.raises(RecordError, match="not over after its last step"):
        replay(data)
    data = pilipili_record.to_dict()
    data["steps"].append(dict(data["steps"][-1]))
    with pytest.raises(RecordError, match=f"ended before step {len(pilipili_record.steps)}"):
        replay(data)
    with pytest.raises(RecordError, match="does not reproduce at step"):
        replay(tampered(pilipili_record, seed=4))
    with pytest.raises(RecordError, match="returns"):
        replay(tampered(pilipili_record, returns=[0.0, 0.0, 0.0]))


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"version": "0.0.1"}, "written by tableenvs '0.0.1'"),
        ({"format_version": 99}, "format version 99"),
        ({"format": "something-else"}, "not a tableenvs game record"),
        ({"seed": -1}, "seed must be an integer"),
        ({"steps": [{"agent": "player_0", "action": "3"}]}, "step 0 is not"),
        ({"game": "chess_v0"}, "cannot be set up.*chess_v0"),
    ],
)
def test_bad_records_are_refused_with_a_clear_error(pilipili_record, changes, message):
    with pytest.raises(RecordError, match=message):
        replay(tampered(pilipili_record, **changes))


def test_cli_play_record_then_replay(tmp_path, capsys):
    path = tmp_path / "game.json"
    assert (
        main(
            [
                "play",
                "llama_party_v0",
                "--players",
                "2",
                "--policies",
                "heuristic,random",
                "--quiet",
                "--record",
                str(path),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert f"wrote {path}" in out and "(seed " in out  # no --seed: one is drawn and kept in the record
    assert GameRecord.load(path).seed >= 0
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert "reproduces exactly" in out and "player_0: " in out  # the steps are shown unless --quiet
    reason = replay(GameRecord.load(path)).env.unwrapped.outcome().reason
    assert f"; ended: {reason}; returns " in out  # why it ended, as tableenvs play says it


def test_cli_replay_errors_are_one_line_and_exit_2(tmp_path, capsys, pilipili_record):
    cases = {
        "missing.json": (None, "cannot read record"),
        "not_json.json": ("{nope", "is not JSON"),
        "other.json": (json.dumps({"hello": 1}), "is not a tableenvs game record"),
        "cut.json": (
            json.dumps({**pilipili_record.to_dict(), "steps": pilipili_record.to_dict()["steps"][:3]}),
            "not over after its last step",
        ),
    }
    for name, (text, message) in cases.items():
        path = tmp_path / name
        if text is not None:
            path.write_text(text)
        assert main(["replay", str(path), "--quiet"]) == 2, name
        err = capsys.readouterr().err
        assert err.startswith("tableenvs: error: ") and err.count("\n") == 1, err
        assert message in err, err


def test_cli_record_path_is_checked_before_the_game(tmp_path, capsys):
    assert main(["play", "pilipili_v0", "--record", str(tmp_path / "no" / "such" / "dir.json")]) == 2
    assert "--record" in capsys.readouterr().err
    assert main(["play", "pilipili_v0", "--record", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_tournament_games_are_recorded_and_replay(tmp_path):
    pytest.importorskip("openskill")
    from tableenvs.evaluation import evaluate
    from tableenvs.play.records import record_tournament

    specs = ["random", "heuristic"]
    result = evaluate("pilipili_v0", specs, 4, opponents="random", num_players=3, options={"missions": "none"}, seed=1)
    paths = record_tournament(result, specs + ["random"], tmp_path, games=lambda g: 0 in g.entrants)
    assert paths and len(paths) == sum(0 in g.entrants for g in result.records)
    for path in paths:
        record = GameRecord.load(path)
        game = result.records[int(path.stem.split("_")[1])]
        assert record.returns == list(game.rewards)
        assert replay(record).returns == record.returns
    with pytest.raises(RecordError, match="the same policies"):
        record_tournament(result, ["heuristic", "random", "heuristic"], tmp_path / "other", games=[0, 1, 2, 3])
    with pytest.raises(ValueError, match="no game 99"):
        record_tournament(result, specs + ["random"], tmp_path, games=[99])


def test_cli_eval_records(tmp_path, capsys):
    pytest.importorskip("openskill")
    records = tmp_path / "records"
    args = ["eval", "llama_party_v0", "--policies", "random,heuristic", "--games", "2", "--no-plot", "--no-progress"]
    assert main([*args, "--out", str(tmp_path / "out"), "--records", str(records), "--record-games", "1"]) == 0
    assert "wrote 1 game records" in capsys.readouterr().out
    assert main(["replay", str(records / "game_00000.json"), "--quiet"]) == 0
    assert main([*args, "--out", str(tmp_path / "out"), "--record-games", "1"]) == 2
    assert "--record-games needs --records" in capsys.readouterr().err
