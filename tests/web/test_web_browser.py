"""The web page in a real browser: Debian's Chromium, driven by Playwright (``tests/browser.py``), against
``tableenvs serve`` run in a subprocess on 127.0.0.1 (checked: it listens nowhere else).

* For each title, a whole game against a built-in agent, set up in the lobby and played by clicking the listed legal
  moves; the result the page shows must be the returns the API reports, the picture the API's, and the page must
  ask for nothing but the server's own URLs.
* Two tabs, one per human seat of one Llama Party game: every step is checked against a shadow env following the
  same moves; every API answer each tab received holds only that seat's picture, legal moves and the others' moves
  as the table learned them, and none of the other seat's dealt cards while they are still secret.

Without Chromium or Playwright these tests are skipped, except under CI (``CI`` set), where they fail.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest

import tableenvs
from tableenvs.testing import per_game
from tests.browser import page_or_skip
from tests.web.helpers_web import api, served

#: (options of a short game, the agent played against) of each game
OPPONENTS = per_game(
    {
        "pilipili_v0": ({"max_rounds": 1}, "heuristic"),
        "llama_party_v0": ({}, "random"),
        "rummikub_v0": ({"max_turns": 12}, "heuristic"),
    },
    "builtin",
    "views",
    "picture",
)
GAMES = [(game, *row) for game, row in OPPONENTS.items()]
#: Moves of the two-tab game: its first round (goal choices, the passes of 4, 3, 2 and 1 cards, the reveals) and a
#: little of the second; whole games are played in the test above.
TWO_TAB_MOVES = 30
ENABLED = "#legal button.move:not([disabled])"


#: Playwright's wait for a page element, ms: a bound against a page that never shows it, not a speed check. Each
#: wait is for one answer from a local server (milliseconds idle); 120 s holds on a machine at load 20.
PAGE_TIMEOUT_MS = 120_000


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with served("--agent-threads", "2", "--data", str(tmp_path_factory.mktemp("web-data"))) as base:
        yield base


@pytest.fixture(scope="module")
def page():
    with page_or_skip() as page:
        page.set_default_timeout(PAGE_TIMEOUT_MS)
        yield page


def svg_text(svg: str) -> list[str]:
    return [text.strip() for text in ElementTree.fromstring(svg).itertext() if text.strip()]


def table_text(tab) -> list[str]:
    return [t.strip() for t in tab.eval_on_selector_all("#table svg text", "els => els.map(e => e.textContent)")]


def parse_link(link: str) -> tuple[str, str]:
    match = re.fullmatch(r"/games/([^#]+)#token=(.+)", link)
    assert match, link
    return match.group(1), match.group(2)


#: Resolves once the page has shown version ``v`` with a move to click, or the game is over; woken by the page's
#: ``rendered`` event, not by timers or animation frames (both throttled in a background tab).
WAIT_FOR_VERSION = """([v, move]) => new Promise((resolve) => {
  const check = () => {
    const ready = document.body.dataset.version === v && (!move || document.querySelector(SELECTOR) !== null);
    if (ready || document.body.dataset.over === "true") { document.removeEventListener("rendered", check); resolve(); }
  };
  document.addEventListener("rendered", check);
  check();
})""".replace("SELECTOR", repr(ENABLED))


def wait_for_version(tab, version: int, move: bool = True) -> None:
    """Wait until ``tab`` shows ``version`` (and, with ``move``, a move to click) or the game is over."""
    tab.evaluate(WAIT_FOR_VERSION, [str(version), move])


def shown_result(tab) -> tuple[list[tuple[str, float]], str]:
    tab.wait_for_selector('body[data-over="true"]')
    items = tab.eval_on_selector_all("#returns .return", "els => els.map(e => [e.dataset.agent, e.textContent])")
    returns = []
    for agent, text in items:
        match = re.fullmatch(rf",?\s*{agent} ([+-][0-9.e+-]+)", text)
        assert match, text
        returns.append((agent, float(match.group(1))))
    return returns, tab.text_content("#winners")


@pytest.mark.parametrize(("game", "options", "agent"), GAMES)
def test_a_whole_game_by_clicking(server, page, game, options, agent):
    requests: list[str] = []
    bearers: list[str] = []

    def asked(request) -> None:
        requests.append(request.url)
        bearers.append(request.headers.get("authorization", ""))

    page.on("request", asked)
    page.goto(server + "/")
    page.select_option("#game", game)
    page.select_option("#players", "2")
    page.select_option("#seat-0", "human")
    page.select_option("#seat-1", agent)
    page.fill("#options", json.dumps(options))
    page.fill("#seed", "7")
    page.fill("#pause", "0")
    page.click("#create")
    link = page.get_attribute('#links a[data-agent="player_0"]', "href")
    assert page.locator("#links a").count() == 1  # the agent's seat has no link
    game_id, token = parse_link(link)
    page.goto(server + link)
    rng = np.random.default_rng(0)
    clicks = 0
    while True:
        page.wait_for_selector(f'body[data-over="true"], {ENABLED}')
        if page.get_attribute("body", "data-over") == "true":
            break
        buttons = page.locator(ENABLED)
        count = buttons.count()
        if count == 0:  # the view changed between the wait and the count (a newer one shown): wait for it again
            continue
        buttons.nth(int(rng.integers(count))).click()
        clicks += 1
    status, view = api(server, "GET", f"/api/games/{game_id}", token=token)
    assert status == 200 and view["over"] and clicks > 0
    returns, winners = shown_result(page)
    assert returns == [(f"player_{s}", value) for s, value in enumerate(view["returns"])]
    assert winners.startswith("winner(s): " + ", ".join(view["outcome"]["winners"]))
    assert table_text(page) == svg_text(view["svg"])
    # the downloads: the record replays to the same returns
    record = page.request.get(server + page.get_attribute("#record-link", "href")).json()
    assert record["returns"] == view["returns"] and len(record["steps"]) == view["move_count"]
    page.remove_listener("request", asked)
    assert all(url.startswith(server + "/") for url in requests), "the page asked for something elsewhere"
    # the seat's token went in the Authorization header of the page's API calls, never in a URL
    assert not any(token in url for url in requests)
    assert bearers.count(f"Bearer {token}") >= clicks


def test_two_tabs_never_see_each_others_cards(server, page):
    game = "llama_party_v0"
    status, created = api(
        server, "POST", "/api/games", {"game": game, "seats": ["human", "human"], "seed": 9, "pause": 0}
    )
    assert status == 201
    seats = ["player_0", "player_1"]
    tabs = {"player_0": page, "player_1": page.context.new_page()}
    answers: dict[str, list] = {agent: [] for agent in seats}
    try:
        for agent, tab in tabs.items():
            tab.set_default_timeout(PAGE_TIMEOUT_MS)
            tab.on("response", lambda response, agent=agent: answers[agent].append(response))
            tab.goto(server + created["links"][agent])
        shadow = tableenvs.make_raw(game, num_players=2)
        shadow.reset(seed=9)
        dealt = {agent: re.findall(r"\b[A-H][1-4]\([^)]*\)", shadow.render_view(agent)) for agent in seats}
        assert all(len(hand) == 8 for hand in dealt.values())
        pictures, legal, public = [], [], []  # by version: each seat's picture and legal moves; each move's words
        secret = []  # by version: for each seat, the other seat's dealt cards its view has never shown
        seen = {agent: set() for agent in seats}
        other = {"player_0": "player_1", "player_1": "player_0"}

        def note_version() -> None:
            pictures.append({agent: shadow.render_svg(agent) for agent in seats})
            legal.append([shadow.describe_action(a) for a in shadow.legal_actions()])
            for agent in seats:
                seen[agent] |= {card for card in dealt[other[agent]] if card in shadow.render_view(agent)}
            secret.append({agent: [c for c in dealt[other[agent]] if c not in seen[agent]] for agent in seats})

        rng = np.random.default_rng(2)
        while len(public) < TWO_TAB_MOVES:
            version = len(public)
            note_version()
            agent = shadow.agent_selection
            tab = tabs[agent]
            wait_for_version(tab, version)
            assert table_text(tab) == svg_text(pictures[-1][agent])
            buttons = tab.locator(ENABLED)
            assert buttons.all_text_contents() == legal[-1]
            index = int(rng.integers(buttons.count()))
            action = int(buttons.nth(index).get_attribute("data-action"))
            assert action == shadow.legal_actions()[index]
            # a click event dispatched on the element: the tab is in the background, where the browser pauses
            # rendering, so a pointer click may find the button "not visible" (seen on a loaded machine)
            buttons.nth(index).dispatch_event("click")
            public.append((agent, shadow.describe_action_public(action)))
            shadow.step(action)
        note_version()
        for agent, tab in tabs.items():  # both pages reach the last move, each showing its own picture
            wait_for_version(tab, len(public), move=False)
            assert table_text(tab) == svg_text(shadow.render_svg(agent))
        # at the deal all 8 are secret; by the end some were passed or shown, so the check covered both cases
        assert all(len(cards) == 8 for cards in secret[0].values())
        assert all(len(cards) < 8 for cards in secret[-1].values())
        for agent in seats:
            views = [r.json() for r in answers[agent] if "/api/games/" in r.url and r.status == 200]
            assert len(views) >= len(public) // 2
            for view in views:
                assert view["you"] == agent
                version = view["version"]
                if view["over"]:
                    continue
                assert view["svg"] == pictures[version][agent]
                mine = view["to_act"] == agent
                assert [move["text"] for move in view["legal"]] == (legal[version] if mine else [])
                start = view["move_count"] - len(view["moves"])
                for move, (mover, text) in zip(view["moves"], public[start:version], strict=True):
                    assert move["agent"] == mover and (mover == agent or move["text"] == text)
                text = json.dumps(view)
                for card in secret[version][agent]:
                    assert card not in text and f">{card[:2]}<" not in text, f"{agent} was shown {card} at {version}"
    finally:
        tabs["player_1"].close()
        page.goto("about:blank")  # stop its updates: the game is left unfinished
