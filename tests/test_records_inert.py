"""Issue 30 item 4: records are inert: every field type-checked on load, options as the CLI takes them (no
render_mode), text escaped for terminals (printable), and the HTML page's JSON holds no ``<``."""

from __future__ import annotations

import json
import re

import pytest

from tableenvs.play.records import GameRecord, RecordError, printable, record_game, replay
from tableenvs.play.viewer import viewer_html

HOSTILE = ["<!--<script>", "</script><script>alert(1)</script>", "\x1b[31mred\x1b[0m\x9b2J"]


@pytest.fixture(scope="module")
def record():
    return record_game("pilipili_v0", "random", seed=3, options={"num_players": 3, "missions": "none"})


@pytest.mark.parametrize(
    "changes, words",
    [
        ({"policies": 5}, ["policies", "3 names"]),
        ({"policies": ["a", "b"]}, ["policies", "3 names"]),
        ({"policies": ["a", 2, "c"]}, ["policies[1]", "text"]),
        ({"returns": "x"}, ["returns", "3 numbers"]),
        ({"returns": [0.0, float("nan"), 0.0]}, ["returns[1]", "finite"]),
        ({"returns": [0.0, True, 0.0]}, ["returns[1]"]),
        ({"outcome": 5}, ["outcome", "exactly the fields"]),
        ({"options": {"num_players": 3, "missions": "none", "render_mode": "human"}}, ["options", "render_mode"]),
        ({"options": {"colour": "red"}}, ["options", "colour"]),
        ({"options": {"num_players": 99}}, ["options", "num_players"]),
        ({"options": []}, ["options must be an object"]),
        ({"game": 5}, ["game must be"]),
        ({"seed": 2**200}, ["seed must be"]),
        ({"steps": [{"agent": "player_0", "action": 1, "description": 7}]}, ["step 0 is not"]),
    ],
)
def test_each_bad_field_is_a_record_error_naming_it(record, changes, words):
    data = {**record.to_dict(), **changes}
    with pytest.raises(RecordError) as caught:
        GameRecord.from_dict(data)
    assert all(word in str(caught.value) for word in words), str(caught.value)


@pytest.mark.parametrize(
    "field, value, words",
    [
        ("scores", [0.0, 1.0], ["outcome.scores"]),
        ("winners", [7], ["outcome.winners"]),
        ("winners", [], ["outcome.winners"]),
        ("truncated", "no", ["outcome.truncated"]),
        ("score_name", 3, ["outcome.score_name"]),
    ],
)
def test_outcome_fields_are_checked(record, field, value, words):
    data = record.to_dict()
    data["outcome"] = {**data["outcome"], field: value}
    with pytest.raises(RecordError, match=re.escape(words[0])):
        GameRecord.from_dict(data)


def test_nan_and_deep_nesting_in_a_file_are_record_errors(record, tmp_path):
    path = tmp_path / "nan.json"
    path.write_text(record.to_json().replace('"returns": [', '"returns": [NaN, ', 1))
    with pytest.raises(RecordError, match="NaN is not a JSON number"):
        GameRecord.load(path)
    path.write_text('{"format": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(RecordError, match="nested too deeply"):
        GameRecord.load(path)


def test_printable_escapes_control_characters_but_newlines():
    assert printable("a\nb") == "a\nb"
    assert printable("\x1b[31mred\t\r\x9b\x00\u202e") == "\\x1b[31mred\\t\\r\\x9b\\x00\\u202e"
    assert printable("é 日本 👨\u200d👩") == "é 日本 👨\u200d👩"


def test_replay_errors_escape_record_text(record):
    data = record.to_dict()
    data["steps"][0] = {**data["steps"][0], "agent": "\x1b[2Jplayer_9"}
    with pytest.raises(RecordError) as caught:
        replay(data)
    assert "\x1b" not in str(caught.value) and "\\x1b[2J" in str(caught.value)


def test_hostile_strings_replay_and_the_page_json_has_no_less_than(record):
    data = {**record.to_dict(), "policies": HOSTILE}
    assert replay(data).steps == len(record.steps)
    text = viewer_html(data)
    payload = re.search(r'<script id="record" type="application/json">(.*?)</script>', text, re.S).group(1)
    assert "<" not in payload
    assert json.loads(payload)["policies"] == HOSTILE
    assert text.count("</script>") == 2 and "<!--" not in text


def test_hostile_record_page_still_steps_in_chromium(record, tmp_path):
    import os

    from browser import chromium_page, missing

    reason = missing()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"the browser test needs {reason}")
        pytest.skip(f"needs {reason}")
    from tableenvs.play.viewer import write_html

    path = write_html({**record.to_dict(), "policies": HOSTILE}, tmp_path / "hostile.html")
    last = len(record.steps)
    with chromium_page() as page:
        page.goto(path.as_uri())
        assert page.text_content("#position") == f"step 0 / {last}"
        page.keyboard.press("ArrowRight")
        step = record.steps[0]
        assert page.text_content("#position") == f"step 1 / {last}"
        assert page.text_content("#move") == f"{step['agent']}: {step['description']}"
        assert HOSTILE[0] in page.title()


def test_the_command_line_shows_a_hostile_record_inertly(record, tmp_path, cli):
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps({**record.to_dict(), "policies": HOSTILE}))
    code, out, err = cli(["replay", str(path), "--quiet"])
    assert code == 0, err
    assert "\x1b" not in out and "\x9b" not in out and "\\x1b[31mred" in out
    bad = {**record.to_dict(), "steps": [{**record.to_dict()["steps"][0], "agent": "\x1b[2Jplayer_9"}]}
    path.write_text(json.dumps(bad))
    code, out, err = cli(["replay", str(path)])
    assert code == 2 and "\x1b" not in err and "\\x1b[2J" in err, err


def test_replacing_an_existing_html_page_says_so_and_keeps_it_until_written(record, tmp_path, cli):
    source, page = tmp_path / "game.json", tmp_path / "game.html"
    record.save(source)
    page.write_text("earlier page")
    code, out, err = cli(["replay", str(source), "--quiet", "--html", str(page)])
    assert code == 0, err
    assert f"--html '{page}' exists and will be replaced" in err
    assert page.read_text().startswith("<!DOCTYPE html") or "<html" in page.read_text()[:200]
