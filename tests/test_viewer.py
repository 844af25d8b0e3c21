"""The HTML replay viewer: ``tableenvs replay FILE --html OUT.html`` / :mod:`tableenvs.play.viewer`.

The page's data is checked against the record (every move, its words for the mover and for the others, the
returns, one picture per seat and step); the command line writes it or refuses a bad path; and one real headless
Chromium (Debian's, driven by Playwright) opens each game's page with the network blocked, steps forward and back
with the keys, the buttons and the slider, switches seats, and compares what the page shows with the record and
with the env's own pictures. Without Chromium or Playwright the browser test is skipped, except under CI
(``CI`` set), where it fails.
"""

import json
import re
import xml.etree.ElementTree as ElementTree

import pytest
from browser import page_or_skip

import tableenvs
from tableenvs.cli import main
from tableenvs.play.records import GameRecord, RecordError, record_game
from tableenvs.play.viewer import viewer_html, write_html
from tableenvs.testing import per_game

#: Short games: (options, policies) of each game.
SHORT = per_game(
    {
        "pilipili_v0": ({"num_players": 3, "max_rounds": 1}, ["heuristic", "random", "heuristic"]),
        "llama_party_v0": ({"num_players": 2}, ["heuristic", "random"]),
        "rummikub_v0": ({"num_players": 2}, ["heuristic", "heuristic"]),
    },
    "builtin",
    "heuristic",
    "state",
    "views",
    "picture",
)
GAMES = [(game, options, policies) for game, (options, policies) in SHORT.items()]


@pytest.fixture(scope="module")
def records():
    return {game: record_game(game, policies, seed=3, options=options) for game, options, policies in GAMES}


def page_data(text: str) -> dict:
    payload = re.search(r'<script id="record" type="application/json">(.*?)</script>', text, re.S).group(1)
    return json.loads(payload.replace("<\\/", "</"))


def states(record: GameRecord):
    """The raw env at every step of ``record`` (step 0 = the deal), as clones."""
    env = tableenvs.make_raw(record.game, **record.options)
    env.reset(seed=record.seed)
    yield env.clone()
    for step in record.steps:
        env.step(step["action"])
        yield env.clone()


@pytest.mark.parametrize("game", [game for game, _, _ in GAMES])
def test_page_data_follows_the_record(records, game):
    record = records[game]
    text = viewer_html(record)
    assert not re.search(r"""(src|href)\s*=|<link|<img|@import|url\(|fetch\(""", text), "the page loads something"
    data = page_data(text)
    frames = data["frames"]
    assert len(frames) == len(record.steps) + 1 and frames[0]["agent"] is None
    assert data["winners"] == [f"player_{s}" for s in record.outcome["winners"]]
    assert frames[-1]["returns"] == pytest.approx(record.returns)
    previous = None
    for index, (frame, env) in enumerate(zip(frames, states(record), strict=True)):
        if index:
            step = record.steps[index - 1]
            assert (frame["agent"], frame["description"]) == (step["agent"], step["description"])
            assert frame["public"] == previous.describe_action_public(step["action"])
        pictures = ["".join(data["elements"][e] for e in data["pictures"][k]) for k in frame["pictures"]]
        assert pictures == [env.render_svg(agent) for agent in (None, *env.possible_agents)]
        previous = env
    if game != "pilipili_v0":  # a goal choice, a staged tile (Pili Pili's one round may have no pass)
        assert any(frame["public"] != frame["description"] for frame in frames[1:])


def test_cli_writes_the_page_and_refuses_a_bad_path(records, tmp_path, capsys):
    path = records["llama_party_v0"].save(tmp_path / "game.json")
    out = tmp_path / "game.html"
    assert main(["replay", str(path), "--quiet", "--html", str(out)]) == 0
    assert "reproduces exactly" in capsys.readouterr().out
    assert page_data(out.read_text(encoding="utf-8"))["game"] == "llama_party_v0"
    assert main(["replay", str(path), "--html", str(tmp_path / "no" / "x.html")]) == 2
    assert "--html" in capsys.readouterr().err and not (tmp_path / "no").exists()


def test_a_record_that_does_not_reproduce_writes_no_page(records, tmp_path):
    data = records["rummikub_v0"].to_dict()
    data["steps"][3]["description"] = "something else"
    with pytest.raises(RecordError, match="step 3"):
        write_html(data, tmp_path / "bad.html")
    assert not (tmp_path / "bad.html").exists()


# ---------------------------------------------------------------- in a real browser


@pytest.fixture(scope="module")
def page():
    with page_or_skip() as page:
        yield page


def svg_text(svg: str) -> list[str]:
    return [text.strip() for text in ElementTree.fromstring(svg).itertext() if text.strip()]


@pytest.mark.parametrize("game", [game for game, _, _ in GAMES])
def test_viewer_in_headless_chromium(records, game, page, tmp_path):
    record = records[game]
    path = write_html(record, tmp_path / f"{game}.html")
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(path.as_uri())
    last = len(record.steps)
    envs = list(states(record))

    def shown():
        return page.text_content("#position"), page.text_content("#move")

    def table_text():
        return [t.strip() for t in page.eval_on_selector_all("#table svg text", "els => els.map(e => e.textContent)")]

    assert shown() == (f"step 0 / {last}", "the deal")
    assert table_text() == svg_text(envs[0].render_svg())
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    step = record.steps[1]
    assert shown() == (f"step 2 / {last}", f"{step['agent']}: {step['description']}")
    assert table_text() == svg_text(envs[2].render_svg())
    page.click("#back")
    assert shown() == (f"step 1 / {last}", f"{record.steps[0]['agent']}: {record.steps[0]['description']}")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")  # stays at the deal
    assert shown()[0] == f"step 0 / {last}"
    page.click("#forward")
    assert shown()[0] == f"step 1 / {last}"

    # a seat's view: its picture, and another seat's move as the table learned it
    seat = 1
    index = next(k for k, s in enumerate(record.steps) if s["agent"] != f"player_{seat}")
    page.select_option("#seat", str(seat))
    page.eval_on_selector("#slider", "(el, v) => { el.value = v; el.dispatchEvent(new Event('input')); }", index + 1)
    mover = envs[index]
    public = mover.describe_action_public(record.steps[index]["action"])
    assert shown() == (f"step {index + 1} / {last}", f"{record.steps[index]['agent']}: {public}")
    assert table_text() == svg_text(envs[index + 1].render_svg(f"player_{seat}"))
    assert f"player_{seat}'s view" in " ".join(table_text())

    # the end, through the slider, back in the god view
    page.select_option("#seat", "-1")
    page.eval_on_selector("#slider", "(el, v) => { el.value = v; el.dispatchEvent(new Event('input')); }", last)
    position, move = shown()
    winners = ", ".join(f"player_{s}" for s in record.outcome["winners"])
    assert position == f"step {last} / {last}" and move.endswith(f"game over, winner(s): {winners}")
    returns = ", ".join(f"player_{s} {x:+g}" for s, x in enumerate(record.returns))
    assert page.text_content("#scores") == f"returns so far: {returns}"
    assert table_text() == svg_text(envs[-1].render_svg())
    assert requests == [path.as_uri()], "the page asked for something beyond itself"
