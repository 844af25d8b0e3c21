"""Playing by clicking the picture, in a real browser: Debian's Chromium driven by Playwright (``tests/browser.py``),
against ``tableenvs serve`` run in a subprocess on 127.0.0.1 (checked: it listens nowhere else).

* For each title, a whole game against a fast built-in agent, played by clicking only ``[data-action]`` elements of
  the table picture (never the move list), with no script error and no console error; after every click no two
  texts of the picture and no two blocks or buttons of the page overlap.
* A click on the seat's next turn is sent even while the answer to its last move has not arrived yet.
* Rummikub: staged tiles are taken back by clicking them, and "take all back and draw" draws instead.
* At a phone's width (390 x 844) the page's blocks and the picture's texts do not overlap either, and a spectator
  sees the public picture (with nothing to click).

Waits are Playwright's, on page events (a new ``data-version`` on the body), each with a generous 60 s timeout: a
click's answer and an agent's move take well under a second, but the machine running the tests may be loaded many
times over; nothing here measures wall time. The CPU each game costs the server is reported per game (``-s``) and
bounded generously (60 s) to catch a runaway, with the process's own CPU clock (``/proc``), not wall time.

Without Chromium or Playwright these tests are skipped, except under CI (``CI`` set), where they fail.
"""

from __future__ import annotations

import numpy as np
import pytest

from tableenvs.testing import per_game
from tests.browser import page_or_skip
from tests.web.helpers_web import Served, api
from tests.web.helpers_web import start as start_server

#: (options, the agent played against) of each game: whole games, the fastest built-in agents
OPPONENTS = per_game(
    {
        "pilipili_v0": ({}, "heuristic"),
        "llama_party_v0": ({}, "random"),
        "rummikub_v0": ({}, "heuristic"),
    },
    "builtin",
    "views",
    "picture",
)
WAIT_MS = 60_000  # see the module docstring: events, not deadlines; generous for a loaded machine
HANG_MS = 180_000  # a wait for the page's event fails after this instead of hanging the test run (a safety net)
CPU_BUDGET = 60.0  # seconds of the server's CPU per game

#: Resolves once the page shows a version other than ``v`` that has a move to click in the picture, or the game is
#: over; woken by the page's ``rendered`` event (not by timers, throttled in a background tab).
WAIT_FOR_TURN = """([v, ms]) => new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error("no turn of this seat within " + ms + " ms")), ms);
  const check = () => {
    const over = document.body.dataset.over === "true";
    const ready = document.body.dataset.version !== v && document.querySelector("#table [data-action]") !== null;
    if (ready || over) { document.removeEventListener("rendered", check); clearTimeout(timer); resolve(over); }
  };
  document.addEventListener("rendered", check);
  check();
})"""

#: Resolves once the page shows a version other than ``v`` (``page.wait_for_function`` would evaluate a string, which
#: the page's Content-Security-Policy forbids).
WAIT_FOR_CHANGE = """([v, ms]) => new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error("no new view within " + ms + " ms")), ms);
  const check = () => {
    if (document.body.dataset.version !== v) {
      document.removeEventListener("rendered", check); clearTimeout(timer); resolve();
    }
  };
  document.addEventListener("rendered", check);
  check();
})"""

#: Every overlapping pair of the picture's texts, of the page's blocks, and of the buttons (each as text).
OVERLAPS = """() => {
  const shown = (selector) => Array.from(document.querySelectorAll(selector))
    .map((element) => [element, element.getBoundingClientRect()])
    .filter(([element, box]) => box.width > 0 && box.height > 0);
  const overlap = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 &&
    Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
  const name = (element) => (element.id ? "#" + element.id + " " : "") + (element.textContent || "").slice(0, 40);
  const found = [];
  for (const selector of ["#table svg text", "#play > *", "#legal button, #draft button"]) {
    const items = shown(selector);
    for (let i = 0; i < items.length; i++) {
      for (let j = i + 1; j < items.length; j++) {
        if (overlap(items[i][1], items[j][1])) found.push(name(items[i][0]) + " | " + name(items[j][0]));
      }
    }
  }
  return found;
}"""


def server_cpu(pid: int) -> float:
    """CPU seconds (user + system) the process ``pid`` has used, from ``/proc``."""
    import os

    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.fixture(scope="module")
def serving(tmp_path_factory):
    """The served subprocess (its own data folder, never the user's)."""
    server = start_server("--agent-threads", "2", "--data", str(tmp_path_factory.mktemp("data")))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def server(serving: Served) -> str:
    return serving.base


@pytest.fixture()
def page():
    with page_or_skip() as page:
        page.set_default_timeout(WAIT_MS)
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
        page.on("console", lambda message: message.type == "error" and errors.append(f"console: {message.text}"))
        yield page
        assert errors == [], errors


def start(server: str, page, game: str, seats: list[str], options: dict, seed: int) -> tuple[str, str]:
    status, created = api(
        server, "POST", "/api/games", {"game": game, "seats": seats, "options": options, "seed": seed, "pause": 0}
    )
    assert status == 201, created
    link = created["links"]["player_0"]
    page.goto(server + link)
    return created["id"], link.split("#token=")[1]


def click_until_over(page, rng, most: int | None = None) -> int:
    """Click a random ``[data-action]`` element of the picture whenever there is one, until the game is over (or
    after ``most`` clicks); the number of clicks. After each answer, no overlaps."""
    clicks, version = 0, None
    while True:
        over = page.evaluate(WAIT_FOR_TURN, [version, HANG_MS])
        assert page.evaluate(OVERLAPS) == [], f"overlaps after {clicks} clicks"
        if over or clicks == most:
            return clicks
        version = page.get_attribute("body", "data-version")
        targets = page.locator("#table [data-action]")
        target = targets.nth(int(rng.integers(targets.count())))
        action = int(target.get_attribute("data-action"))
        legal = [
            int(a) for a in page.eval_on_selector_all("#legal button.move", "els => els.map(e => e.dataset.action)")
        ]
        assert action in legal
        target.click()
        clicks += 1


@pytest.mark.parametrize("game", sorted(OPPONENTS))
def test_a_whole_game_by_clicking_the_picture(serving, server, page, game):
    options, agent = OPPONENTS[game]
    pid = serving.process.pid
    cpu = server_cpu(pid)
    game_id, token = start(server, page, game, ["human", agent], options, seed=7)
    assert page.text_content("#rules-link") == f"the rules of {game}"
    clicks = click_until_over(page, np.random.default_rng(0))
    status, view = api(server, "GET", f"/api/games/{game_id}", token=token)
    assert status == 200 and view["over"] and clicks > 0
    assert not view["outcome"]["truncated"]  # the game ended by its rules
    assert page.locator("#table [data-action]").count() == 0  # the god view at the end: nothing to click
    assert page.text_content("#winners").startswith("winner(s): " + ", ".join(view["outcome"]["winners"]))
    used = server_cpu(pid) - cpu
    print(f"{game}: {clicks} clicks, {view['move_count']} moves, server CPU {used:.1f} s")
    assert used < CPU_BUDGET, f"{game}: the server used {used:.1f} s of CPU for one game"


def test_a_click_is_sent_when_the_next_turn_shows_before_the_last_moves_answer(server, page):
    """The answer to a move can reach the page after its follow request has shown the seat's next turn (a fast agent
    replied in between, and the answer was slow). A click on that next turn is a new move: the page sends it instead
    of dropping it as a double click of the last one. The first move's answer is held back here to make that order
    certain."""
    held = []

    def hold_first_answer(route):
        if held:
            route.continue_()
        else:
            held.append((route, route.fetch()))  # the server has the move; the page waits for its answer

    page.route("**/actions", hold_first_answer)
    game_id, token = start(server, page, "llama_party_v0", ["human", "random"], {}, seed=7)
    assert page.evaluate(WAIT_FOR_TURN, [None, HANG_MS]) is False
    version = page.get_attribute("body", "data-version")
    page.locator("#table [data-action]").first.click()
    assert page.evaluate(WAIT_FOR_TURN, [version, HANG_MS]) is False  # shown by the follow request alone
    assert len(held) == 1
    version = page.get_attribute("body", "data-version")
    with page.expect_request(lambda request: request.method == "POST" and request.url.endswith("/actions")):
        page.locator("#table [data-action]").first.click()
    route, answer = held.pop()
    route.fulfill(response=answer)
    page.evaluate(WAIT_FOR_CHANGE, [version, HANG_MS])
    status, view = api(server, "GET", f"/api/games/{game_id}", token=token)
    assert status == 200, view
    assert [move["agent"] for move in view["moves"]].count("player_0") == 2


def test_staged_tiles_are_taken_back_by_clicking_them(server, page):
    game_id, token = start(server, page, "rummikub_v0", ["human", "heuristic"], {}, seed=16)  # player_0 can open
    staged = []
    for _ in range(3):
        version = page.get_attribute("body", "data-version")
        tile = page.locator("#table g.move[data-action]").first  # a rack tile (the buttons come after the racks)
        staged.append(int(tile.get_attribute("data-action")))
        tile.click()
        page.evaluate(WAIT_FOR_CHANGE, [version, HANG_MS])
    assert page.locator("#table [data-undo]").count() == 3
    version = page.get_attribute("body", "data-version")
    page.locator(f'#table [data-undo="{staged[1]}"]').click()
    page.evaluate(WAIT_FOR_CHANGE, [version, HANG_MS])
    assert sorted(
        int(x) for x in page.eval_on_selector_all("#table [data-undo]", "els => els.map(e => e.dataset.undo)")
    ) == sorted([staged[0], staged[2]])
    status, view = api(server, "GET", f"/api/games/{game_id}", token=token)
    assert status == 200, view
    assert [move["text"].split()[0] for move in view["moves"]] == ["stage", "stage"]
    version = page.get_attribute("body", "data-version")
    page.click("#draft button.instead")  # take all back and draw
    page.evaluate(WAIT_FOR_CHANGE, [version, HANG_MS])
    assert page.locator("#table [data-undo]").count() == 0
    status, view = api(server, "GET", f"/api/games/{game_id}", token=token)
    assert status == 200, view
    assert view["moves"][0] == {"agent": "player_0", "text": "draw"}
    assert "player_0 (you): draw" in page.text_content("#moves")


@pytest.mark.parametrize("game", sorted(OPPONENTS))
def test_a_phone_screen_and_a_spectator(server, game):
    """At 390 x 844: a few moves by clicking the picture, no overlaps; the spectator's page shows the public
    picture with nothing to click."""
    options, agent = OPPONENTS[game]
    with page_or_skip(390, 844) as phone:
        phone.set_default_timeout(WAIT_MS)
        errors: list[str] = []
        phone.on("pageerror", lambda error: errors.append(str(error)))
        game_id, _ = start(server, phone, game, ["human", agent], options, seed=3)
        assert click_until_over(phone, np.random.default_rng(1), most=6) > 0
        phone.goto(f"{server}/games/{game_id}")
        phone.wait_for_selector("#table svg")
        assert "public view" in phone.text_content("#table svg") and phone.locator("#table [data-action]").count() == 0
        assert phone.evaluate(OVERLAPS) == [] and errors == []
