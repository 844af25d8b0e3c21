"""The web server's trust boundaries and what it keeps: a request names no file, only the server's own host and
origin are answered, every game is bounded, games survive a crash of the server, slow connections are closed, and a
shutdown answers every waiting request without a traceback.

The subprocess tests run ``tableenvs serve`` on 127.0.0.1 (checked by :func:`tests.web.helpers_web.start`) with
its own ``--data`` folder. No test waits on a wall-clock deadline: waits are on events, on output lines, or counted
polls; socket timeouts are generous bounds against a hung server, stated where they are set.
"""

from __future__ import annotations

import inspect
import json
import os
import signal
import socket
import sys
import threading

import pytest

from tableenvs.core.registry import names
from tableenvs.core.registry import spec as game_spec
from tableenvs.decks import read_package_data
from tableenvs.testing import per_game
from tableenvs.web.store import GameStore
from tests.web.helpers_web import (
    REQUEST_SECONDS,
    UNCHANGED_POLLS,
    api,
    auth,
    client,
    start,
    table_of,
    wait_for_turn,
)

MARKER = "MARKER-5e1f0c9a"


#: Each game's options that take a built-in name or inline data: (option, value) that must be accepted.
BY_NAME_OR_DATA = per_game(
    {
        "pilipili_v0": [
            ("missions", "none"),
            ("missions", "standard"),
            ("missions", read_package_data("tableenvs.pilipili", "missions.toml")["mission"][:6]),
        ],
        "llama_party_v0": [("deck", read_package_data("tableenvs.llama_party", "standard_deck.toml")["cards"])],
        "rummikub_v0": [("pool_exhausted", "lowest_rack")],
    },
    "builtin",
)

_opened: list[str] | None = None


def _record_opens(event: str, args: tuple) -> None:
    if _opened is not None and event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        _opened.append(os.fsdecode(os.fspath(args[0])))


def game_options(game: str) -> list[str]:
    return [o for o in game_spec(game).option_names() if o not in ("render_mode", "num_players")]


def test_a_request_never_reads_a_file_it_names(tmp_path, monkeypatch):
    """Every option of every game, given paths to readable files holding a marker (absolute, relative, with ``~``,
    and a bare name that is a file in the server's working folder): refused, the file never opened (an audit hook
    records every open), the marker in no answer, and the answer the same whether the file exists or not."""
    global _opened
    folder = tmp_path / "files"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setenv("HOME", str(folder))
    files = {
        "deck.json": json.dumps({"cards": [{"id": MARKER}], "mission": [{"id": MARKER}]}),
        "deck.toml": f'[[mission]]\nid = "{MARKER}"\n[[cards]]\nid = "{MARKER}"\n',
        "deckfile": json.dumps([MARKER]),
    }
    for name, text in files.items():
        (folder / name).write_text(text)
    values = [
        str(folder / "deck.json"),
        str(folder / "deck.toml"),
        "deck.json",
        "./deck.toml",
        "../files/deck.json",
        "~/deck.json",
        f"file://{folder / 'deck.json'}",
        "deckfile",  # a bare name that is a file here
    ]
    sys.addaudithook(_record_opens)
    _opened = []
    try:
        with client() as test_client:
            for game in names():
                for option in game_options(game):
                    for value in values:
                        body = {"game": game, "seats": ["human", "human"], "options": {option: value}}
                        answer = test_client.post("/api/games", json=body)
                        assert answer.status_code == 400, (game, option, value, answer.text)
                        assert MARKER not in answer.text, (game, option, value, answer.text)
                        assert answer.json()["field"] == f"options.{option}", answer.text
                    # a bare name that is a file and one that is not get the same answer
                    answers = []
                    for value in ("deckfile", "nofile"):
                        body = {"game": game, "seats": ["human", "human"], "options": {option: value}}
                        answers.append(test_client.post("/api/games", json=body).json()["error"].replace(value, "X"))
                    assert answers[0] == answers[1], answers
            assert test_client.get("/api/status").json()["live_games"] == 0
    finally:
        opened, _opened = _opened, None
    touched = [path for path in opened if os.path.basename(path) in files]
    assert not touched, f"the server opened {touched}"


@pytest.mark.parametrize(
    ("game", "option", "value"), [(g, o, v) for g, rows in BY_NAME_OR_DATA.items() for o, v in rows]
)
def test_options_by_built_in_name_or_inline_data_are_accepted(game, option, value):
    with client(max_body=1_000_000) as test_client:
        players = min(game_spec(game).player_counts)
        body = {"game": game, "seats": ["human"] * players, "options": {option: value}, "seed": 1}
        answer = test_client.post("/api/games", json=body)
        assert answer.status_code == 201, answer.text
        assert table_of(test_client, answer.json()["id"]).options[option] == value


GAME = {"game": "llama_party_v0", "seats": ["human", "human"]}


def test_only_the_servers_own_host_and_origin_are_answered():
    with client(max_body=1024) as test_client:

        def post(headers, **request):
            request.setdefault("json", GAME)
            return test_client.post("/api/games", headers=headers, **request)

        foreign = [
            {"Host": "evil.example"},
            {"Host": "evil.example:8000"},
            {"Host": "127.0.0.1.evil.example"},
            {"Host": ""},
            {"Origin": "http://evil.example"},
            {"Origin": "http://127.0.0.1:9999"},  # another port is another origin
            {"Origin": "https://127.0.0.1:8000"},
            {"Origin": "null"},
            {"Sec-Fetch-Site": "cross-site"},
        ]
        for headers in foreign:
            answer = post(headers)
            assert answer.status_code == 403, (headers, answer.text)
            assert answer.json()["field"] is None and answer.json()["error"]
        # refused before any work: a body past the size limit is not even read
        assert post({"Host": "evil.example"}, json={**GAME, "pad": "x" * 5000}).status_code == 403
        # reads too: a page that renamed itself to this machine (DNS rebinding) reads nothing
        assert test_client.get("/api/status", headers={"Host": "evil.example"}).status_code == 403
        assert test_client.get("/", headers={"Host": "evil.example"}).status_code == 403
        # a change must be JSON: a plain-text or form POST (which a page elsewhere may send unasked) is refused
        for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data", None):
            headers = {} if content_type is None else {"Content-Type": content_type}
            answer = test_client.post("/api/games", content=json.dumps(GAME).encode(), headers=headers)
            assert answer.status_code == 415, (content_type, answer.text)
        assert test_client.get("/api/status").json()["live_games"] == 0
        # the server's own names and origin
        for headers in (
            {"Origin": "http://127.0.0.1:8000"},
            {"Host": "localhost:8000", "Origin": "http://localhost:8000"},
            {"Host": "[::1]:8000"},
            {"Sec-Fetch-Site": "same-origin", "Content-Type": "application/json; charset=utf-8"},
        ):
            assert post(headers).status_code == 201, headers
        # following a link from another site to the page is allowed (it carries no token to the server)
        assert (
            test_client.get("/", headers={"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}).status_code
            == 200
        )
    with client(allowed_hosts=["games.example.lan"]) as test_client:
        headers = {"Host": "games.example.lan:8000", "Origin": "http://games.example.lan:8000"}
        assert test_client.post("/api/games", json=GAME, headers=headers).status_code == 201
        assert test_client.post("/api/games", json=GAME, headers={"Host": "other.lan"}).status_code == 403


def int_options(game: str) -> list[str]:
    parameters = inspect.signature(game_spec(game).raw_env_class().__init__).parameters
    return [
        name
        for name in game_options(game)
        if isinstance(parameters[name].default, int) and not isinstance(parameters[name].default, bool)
    ]


def test_every_game_is_bounded():
    """A number option past the server's cap is refused naming the cap; an agent-only game stops at the move cap."""
    with client(max_option=1000, max_moves=25) as test_client:
        checked = 0
        for game in names():
            for option in int_options(game):
                body = {"game": game, "seats": ["random", "random"], "options": {option: 10**6}}
                answer = test_client.post("/api/games", json=body)
                assert answer.status_code == 400 and answer.json()["field"] == f"options.{option}", answer.text
                assert "cap of 1000" in answer.json()["error"]
                checked += 1
            created = test_client.post("/api/games", json={"game": game, "seats": ["random", "random"], "seed": 2})
            assert created.status_code == 201, created.text
            view = wait_for_turn(test_client, created.json()["id"], None)
            if view["over"]:
                assert view["move_count"] <= 25
            else:
                assert view["move_count"] == 25 and "cap of 25 moves" in view["error"], view
                assert view["to_act"] is None and not view["thinking"]
        assert checked >= 3


def views_of(test_client, game_id, tokens):
    """Every seat's and the spectator's view, without ``expires_in`` (the clock moves)."""
    seen = {}
    for agent in (None, *tokens):
        view = test_client.get(f"/api/games/{game_id}", headers=auth(tokens.get(agent))).json()
        seen[agent] = {key: value for key, value in view.items() if key != "expires_in"}
    return seen


def wait_through_agents(test_client, game_id, tokens):
    """The view once a seat in ``tokens`` is to act, or the game is over or stopped: the agents' turns have passed."""
    url = f"/api/games/{game_id}"
    view = test_client.get(url).json()
    unchanged = 0
    while not (view["over"] or view["error"]) and view["to_act"] not in tokens:
        answer = test_client.get(f"{url}?wait={view['version']}").json()
        unchanged = unchanged + 1 if answer["version"] == view["version"] else 0
        assert unchanged < UNCHANGED_POLLS, f"no change in {UNCHANGED_POLLS} polls"
        view = answer
    return view


def play_some(test_client, game_id, tokens, moves):
    """Play ``moves`` moves of the human seats (each its last legal move), waiting through the agents' turns, and
    return once the agents' turns after the last of them have passed too (so what is read next is settled)."""
    url = f"/api/games/{game_id}"
    for _ in range(moves):
        view = wait_through_agents(test_client, game_id, tokens)
        if view["over"] or view["error"]:
            return
        token = tokens[view["to_act"]]
        legal = test_client.get(url, headers=auth(token)).json()["legal"]
        answer = test_client.post(f"{url}/actions", json={"action": legal[-1]["action"]}, headers=auth(token))
        assert answer.status_code == 200, answer.text
    wait_through_agents(test_client, game_id, tokens)


def test_games_are_kept_in_the_data_folder_and_rebuilt(tmp_path):
    """A game rebuilt from the data folder shows every seat the same view with the same tokens, and goes on as it
    would have: the agent's later moves match those of a server that never stopped."""
    data = str(tmp_path / "data")
    with client(data=data) as test_client:
        humans = test_client.post("/api/games", json={"game": "pilipili_v0", "seats": ["human", "human"], "seed": 4})
        mixed = test_client.post("/api/games", json={"game": "llama_party_v0", "seats": ["human", "random"], "seed": 6})
        games = [(created.json()["id"], created.json()["tokens"]) for created in (humans, mixed)]
        for game_id, tokens in games:
            play_some(test_client, game_id, tokens, 5)
        before = {game_id: views_of(test_client, game_id, tokens) for game_id, tokens in games}
        with pytest.raises(ValueError, match="in use by another tableenvs serve"):
            GameStore(data)
    with client(data=data) as test_client:
        assert test_client.get("/api/status").json()["live_games"] == 2
        for game_id, tokens in games:
            assert views_of(test_client, game_id, tokens) == before[game_id]
        game_id, tokens = games[1]
        play_some(test_client, game_id, tokens, 6)
        after_restart = test_client.get(f"/api/games/{game_id}", headers=auth(tokens["player_0"])).json()["moves"]
    with client() as test_client:  # the same game on a server that never stopped
        created = test_client.post(
            "/api/games", json={"game": "llama_party_v0", "seats": ["human", "random"], "seed": 6}
        )
        game_id, tokens = created.json()["id"], created.json()["tokens"]
        play_some(test_client, game_id, tokens, 11)
        unbroken = test_client.get(f"/api/games/{game_id}", headers=auth(tokens["player_0"])).json()["moves"]
    assert after_restart == unbroken and len(unbroken) > 11


def test_stopped_games_are_rebuilt_stopped(tmp_path, monkeypatch):
    """A game stopped by the move cap, and one whose agent failed, come back stopped, with the same views."""
    from tableenvs.web import runner

    data = str(tmp_path / "data")
    with client(data=data, max_moves=6) as test_client:
        capped = test_client.post("/api/games", json={"game": "llama_party_v0", "seats": ["random", "random"]})
        game_id = capped.json()["id"]
        assert "cap of 6 moves" in wait_for_turn(test_client, game_id, None)["error"]
        monkeypatch.setattr(runner, "think", lambda *args: 1 / 0)
        failed = test_client.post("/api/games", json={"game": "llama_party_v0", "seats": ["random", "human"]})
        failed_id, tokens = failed.json()["id"], failed.json()["tokens"]
        assert "ZeroDivisionError" in wait_for_turn(test_client, failed_id, tokens["player_1"])["error"]
        before = {key: views_of(test_client, key, {}) for key in (game_id, failed_id)}
    monkeypatch.undo()
    with client(data=data, max_moves=6) as test_client:
        assert {key: views_of(test_client, key, {}) for key in (game_id, failed_id)} == before


def test_a_game_survives_kill_9_of_the_server(tmp_path):
    data = str(tmp_path / "data")
    server = start("--data", data)
    try:
        startup = "\n".join(server.startup)
        assert startup.index("warmed up") < startup.index("http://127.0.0.1:"), startup  # solvers ready first
        status, created = api(
            server.base, "POST", "/api/games", {"game": "llama_party_v0", "seats": ["human", "human"]}
        )
        assert status == 201, created
        game_id, tokens = created["id"], created["tokens"]
        for _ in range(7):
            _, view = api(server.base, "GET", f"/api/games/{game_id}", token=tokens["player_0"])
            token = tokens[view["to_act"]]
            _, view = api(server.base, "GET", f"/api/games/{game_id}", token=token)
            status, _ = api(
                server.base, "POST", f"/api/games/{game_id}/actions", {"action": view["legal"][0]["action"]}, token
            )
            assert status == 200
        before = {
            agent: api(server.base, "GET", f"/api/games/{game_id}", token=token)[1] for agent, token in tokens.items()
        }
        assert before["player_0"]["move_count"] == 7
    finally:
        server.process.kill()  # SIGKILL: no shutdown, no chance to write anything more
        server.process.communicate()
    assert server.process.returncode == -signal.SIGKILL
    server = start("--data", data)
    try:
        assert any("1 game(s) restored" in line for line in server.startup), server.startup
        for agent, token in tokens.items():
            status, view = api(server.base, "GET", f"/api/games/{game_id}", token=token)
            assert status == 200
            assert {k: v for k, v in view.items() if k != "expires_in"} == {
                k: v for k, v in before[agent].items() if k != "expires_in"
            }
        to_act = before["player_0"]["to_act"]
        legal = api(server.base, "GET", f"/api/games/{game_id}", token=tokens[to_act])[1]["legal"]
        status, view = api(
            server.base, "POST", f"/api/games/{game_id}/actions", {"action": legal[0]["action"]}, tokens[to_act]
        )
        assert status == 200 and view["move_count"] == 8
    finally:
        code, err = server.stop(signal.SIGINT)
    assert "Traceback" not in err, err


#: Seconds a test socket waits for the server to close a stalled connection: the server's own limit is 1 s, so this
#: bound (120 times that) is only reached if it never closes it, however loaded the machine.
CLOSE_BOUND = 120


def test_stalled_connections_are_closed_and_shutdown_answers_everyone(tmp_path):
    server = start("--data", str(tmp_path / "data"), "--header-seconds", "1")
    try:
        host, port = "127.0.0.1", server.port
        stalled = []
        for index in range(20):  # half a request line, or headers without their end
            connection = socket.create_connection((host, port), timeout=CLOSE_BOUND)
            connection.sendall(b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n" if index % 2 else b"GET /api/st")
            stalled.append(connection)
        for connection in stalled:
            assert connection.recv(1024) == b"", "a stalled connection was answered instead of closed"
            connection.close()
        assert api(server.base, "GET", "/api/status")[0] == 200  # the server still serves
        # clients that leave: one mid-body, one in the middle of a long-poll
        status, created = api(server.base, "POST", "/api/games", {"game": "pilipili_v0", "seats": ["human", "human"]})
        game_id = created["id"]
        leaving = socket.create_connection((host, port), timeout=CLOSE_BOUND)
        leaving.sendall(
            b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b'Content-Length: 200\r\n\r\n{"game": '
        )
        leaving.close()
        # a page waiting for a change: answered (200, the view) when the server stops
        answers: list = []
        waiter = threading.Thread(
            target=lambda: answers.append(api(server.base, "GET", f"/api/games/{game_id}?wait=0")), daemon=True
        )
        waiter.start()
        for _ in range(10_000):  # counted polls: each is a quick request; the waiter's request arrives long before
            if api(server.base, "GET", "/api/status")[1]["waiting"] == 1:
                break
        else:
            raise AssertionError("the long-poll never reached the server")
        poll = socket.create_connection((host, port), timeout=CLOSE_BOUND)
        poll.sendall(f"GET /api/games/{game_id}?wait=0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        poll.close()
    finally:
        code, err = server.stop(signal.SIGINT)
    waiter.join(REQUEST_SECONDS)
    assert answers and answers[0][0] == 200 and answers[0][1]["id"] == game_id, answers
    assert code == 130 and "Traceback" not in err and "ERROR" not in err, err


def test_the_server_remembers_that_a_ctrl_c_stopped_it():
    """The exit status of a Ctrl-C (130) comes from the server's own record of the signal, not only from uvicorn's
    re-raising it after the shutdown (which does not always come back as ``KeyboardInterrupt``)."""
    pytest.importorskip("uvicorn")
    from tableenvs.web.serving import Server

    async def app(scope, receive, send) -> None:  # never called: the server is not started
        raise AssertionError(scope)

    import uvicorn

    for sig, interrupted in ((signal.SIGTERM, False), (signal.SIGINT, True)):
        server = Server(uvicorn.Config(app, host="127.0.0.1", port=0))
        assert not server.interrupted
        server.handle_exit(sig, None)
        assert server.should_exit and server.interrupted is interrupted
