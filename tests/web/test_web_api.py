"""The web server's JSON API, through Starlette's TestClient: whole games against agents, bad input that
changes nothing, per-seat views that depend only on what the seat may see, limits, expiry and the downloads.

The white-box checks read the server's live env (``table_of``) for its hidden state, which the API never shows.
"""

from __future__ import annotations

import gc
import json
import re
import time
import weakref

import numpy as np
import pytest

import tableenvs
from tableenvs.play.records import GameRecord, replay
from tableenvs.testing import per_game
from tableenvs.web.app import page_html
from tests.web.helpers_web import REQUEST_SECONDS, auth, client, table_of, wait_for_turn

#: Short games: the options of each game.
SHORT = per_game(
    {"pilipili_v0": {"max_rounds": 1}, "llama_party_v0": {}, "rummikub_v0": {"max_turns": 16}},
    "builtin",
    "views",
    "picture",
)


def create(test_client, game, seats, seed=5, **extra):
    answer = test_client.post(
        "/api/games", json={"game": game, "options": SHORT[game], "seats": seats, "seed": seed, "pause": 0, **extra}
    )
    assert answer.status_code == 201, answer.text
    return answer.json()


def move(test_client, game_id, token, action):
    """``POST /api/games/{id}/actions`` with the seat's token in the Authorization header."""
    return test_client.post(f"/api/games/{game_id}/actions", json={"action": action}, headers=auth(token))


def seat_view(test_client, game_id, token=None):
    return test_client.get(f"/api/games/{game_id}", headers=auth(token))


def test_the_page_loads_nothing_from_elsewhere():
    text = page_html()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//|<link|<img|@import|url\(""", text)
    with client() as test_client:
        for path in ("/", "/games/anything"):
            answer = test_client.get(path)
            assert answer.status_code == 200 and answer.text == text
            policy = answer.headers["content-security-policy"]
            assert "default-src 'none'" in policy and "connect-src 'self'" in policy
        catalog = test_client.get("/api/catalog").json()
        assert [game["name"] for game in catalog["games"]] == tableenvs.names()
        assert all("human" in game["seats"] for game in catalog["games"])


@pytest.mark.parametrize("game", sorted(SHORT))
def test_a_whole_game_against_agents_ends_with_the_env_returns(game):
    with client() as test_client:
        created = create(test_client, game, ["human", "random"])
        assert set(created["tokens"]) == {"player_0"}  # a token for each human seat, none for the agent
        game_id, token = created["id"], created["tokens"]["player_0"]
        shadow = tableenvs.make_raw(game, num_players=2, **SHORT[game])
        shadow.reset(seed=5)
        rng = np.random.default_rng(0)
        view = wait_for_turn(test_client, game_id, token)
        while not view["over"]:
            assert view["to_act"] == "player_0" and view["you"] == "player_0" and "returns" not in view
            choice = view["legal"][rng.integers(len(view["legal"]))]
            view = move(test_client, game_id, token, choice["action"])
            assert view.status_code == 200, view.text
            view = wait_for_turn(test_client, game_id, token)
        table = table_of(test_client, game_id)
        outcome = table.env.outcome()
        assert view["returns"] == list(outcome.returns) and view["view"] == "god"
        assert view["outcome"]["winners"] == [f"player_{s}" for s in outcome.winners]
        assert view["outcome"]["reason"] == outcome.reason.text  # why the game ended, shown on the page
        assert view["svg"] == table.env.render_svg() and view["seed"] == 5
        # the record replays to the same returns; every move in it is the one the server played
        record = GameRecord.from_dict(test_client.get(f"/api/games/{game_id}/record").json())
        result = replay(record)
        assert result.returns == view["returns"] and len(record.steps) == view["move_count"]
        page = test_client.get(f"/api/games/{game_id}/replay")
        assert page.status_code == 200 and "attachment" in page.headers["content-disposition"]
        assert '<script id="record" type="application/json">' in page.text
        # the human's own moves read as made, the agent's as the table learned them
        for step, shown in zip(record.steps[-len(view["moves"]) :], view["moves"], strict=True):
            assert shown["agent"] == step["agent"]
            if step["agent"] == "player_0":
                assert shown["text"] == step["description"]
        for step in record.steps:
            shadow.step(step["action"])
        assert list(shadow.outcome().returns) == view["returns"]


def timeless(view: dict) -> dict:
    """A view without its ``expires_in`` (the clock moves between two requests)."""
    return {key: value for key, value in view.items() if key != "expires_in"}


def snapshot(test_client, game_ids):
    """Everything a request could change: each game's full env state, version, log and record, and the views."""
    state = {}
    for game_id in game_ids:
        table = table_of(test_client, game_id)
        state[game_id] = (
            json.dumps(table.env.get_state(), sort_keys=True),
            table.version,
            list(table.moves),
            list(table.recorder.record.steps),
            {agent: timeless(table.view(agent, 1e9)) for agent in (None, *table.agents)},
        )
    return state


def test_bad_input_is_refused_clearly_and_changes_nothing():
    with client(max_body=2048) as test_client:
        first = create(test_client, "llama_party_v0", ["human", "human"])
        other = create(test_client, "pilipili_v0", ["human", "human"])
        game_id, tokens = first["id"], first["tokens"]
        url = f"/api/games/{game_id}/actions"
        before = snapshot(test_client, [game_id, other["id"]])
        legal = seat_view(test_client, game_id, tokens["player_0"]).json()["legal"]
        assert legal and seat_view(test_client, game_id, tokens["player_1"]).json()["legal"] == []
        illegal = next(a for a in range(200) if a not in {choice["action"] for choice in legal})

        def refused(status, field=None, token=tokens["player_0"], headers=None, **request):
            answer = test_client.post(url, headers={**auth(token), **(headers or {})}, **request)
            assert answer.status_code == status, (request, answer.text)
            body = answer.json()
            assert body["field"] == field and body["error"], (request, body)
            return body

        own = tokens["player_0"]
        altered = own[:-1] + ("y" if own.endswith("x") else "x")  # one character off (a token may end in "x")
        for token in ("nope", altered, other["tokens"]["player_0"]):
            assert refused(403, token=token, json={"action": legal[0]["action"]}) == {
                "error": "wrong token",
                "field": None,
            }
        wrong = seat_view(test_client, game_id, "nope")
        assert wrong.status_code == 403 and wrong.json() == {"error": "wrong token", "field": None}
        # the token travels only in the Authorization header: in the URL or the body it is refused, never used
        for path in (f"/api/games/{game_id}?token={tokens['player_0']}", f"{url}?token={tokens['player_0']}"):
            answer = test_client.request("GET" if "actions" not in path else "POST", path, json={"action": 1})
            assert answer.status_code == 400 and answer.json()["field"] == "token", answer.text
            assert "Authorization: Bearer" in answer.json()["error"]
        body = refused(400, "token", token=None, json={"token": tokens["player_0"], "action": legal[0]["action"]})
        assert "Authorization header" in body["error"]
        refused(401, "token", token=None, json={"action": legal[0]["action"]})
        for header in ("Basic abc", "Bearer", tokens["player_0"]):
            refused(400, "token", token=None, headers={"Authorization": header}, json={"action": legal[0]["action"]})
        # not your turn: names no moves (player_0's would reveal its hand)
        body = refused(409, token=tokens["player_1"], json={"action": legal[0]["action"]})
        assert body["legal"] == [] and "player_0 is to act" in body["error"]
        body = refused(422, "action", json={"action": illegal})
        assert body["legal"] == legal and legal[0]["text"] in body["error"]
        for action in ("3", 3.0, True, None, [1], {"a": 1}):
            body = refused(400, "action", json={"action": action})
            assert "integer" in body["error"]
        refused(400, "action", json={})
        refused(400, "extra", json={"action": legal[0]["action"], "extra": 1})
        json_type = {"Content-Type": "application/json"}
        for content in (b"{", b"", b"[1, 2]", b'"text"', b"\xff\xfe", b'{"action": NaN}', b"[" * 1000 + b"]" * 1000):
            refused(400, content=content, headers=json_type)
        big = json.dumps({"action": legal[0]["action"], "pad": "x" * 3000}).encode()
        refused(413, content=big, headers=json_type)
        refused(413, content=iter([big[:1000], big[1000:]]), headers=json_type)  # streamed, no Content-Length
        assert move(test_client, "none", "x", 1).status_code == 404
        assert test_client.get(f"/api/games/{game_id}?wait=soon").json()["field"] == "wait"
        assert snapshot(test_client, [game_id, other["id"]]) == before
        # and the right request still works
        answer = move(test_client, game_id, tokens["player_0"], legal[0]["action"])
        assert answer.status_code == 200 and answer.json()["version"] == 1


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"game": "chess", "seats": ["human", "human"]}, "game", "pilipili_v0"),
        ({"seats": ["human", "human"]}, "game", "required"),
        ({"game": "pilipili_v0"}, "seats", "required"),
        ({"game": "pilipili_v0", "seats": "human"}, "seats", "list"),
        ({"game": "pilipili_v0", "seats": ["human"]}, "seats", "2-8 players"),
        ({"game": "pilipili_v0", "seats": ["human", "genius"]}, "seats[1]", "unknown seat"),
        ({"game": "pilipili_v0", "seats": ["human", 3]}, "seats[1]", "a seat is a name"),
        ({"game": "pilipili_v0", "seats": ["human", "search:sims=100000"]}, "seats[1]", "at most sims=1000"),
        ({"game": "pilipili_v0", "seats": ["human", "search:ms=60000"]}, "seats[1]", "at most ms=1000"),
        ({"game": "pilipili_v0", "seats": ["human", "search:bogus=1"]}, "seats[1]", "bad option"),
        ({"game": "pilipili_v0", "seats": ["human", "model:best"]}, "seats[1]", "no model named"),
        (  # every player count has a model (rummikub_v0-2p.npz at 2 players): a changed rule has none
            {"game": "rummikub_v0", "seats": ["human", "trained"], "options": {"min_initial": 20}},
            "options",
            "no model for rummikub_v0 with",
        ),
        (  # a changed rule has no model
            {"game": "pilipili_v0", "seats": ["human", "trained"], "options": {"expert": False}},
            "options",
            "no model for pilipili_v0 with",
        ),
        ({"game": "pilipili_v0", "seats": ["human", "/etc/passwd.zip"]}, "seats[1]", "unknown seat"),
        ({"game": "pilipili_v0", "seats": ["human", "human"], "options": []}, "options", "object"),
        ({"game": "pilipili_v0", "seats": ["human", "human"], "options": {"colour": 1}}, "options", "colour"),
        ({"game": "pilipili_v0", "seats": ["human", "human"], "options": {"max_rounds": -1}}, "options", "max_rounds"),
        (
            {"game": "pilipili_v0", "seats": ["human", "human"], "options": {"num_players": 3}},
            "options.num_players",
            "",
        ),
        (
            {"game": "pilipili_v0", "seats": ["human", "human"], "options": {"render_mode": "human"}},
            "options.render_mode",
            "",
        ),
        ({"game": "pilipili_v0", "seats": ["human", "human"], "seed": -1}, "seed", "integer"),
        ({"game": "pilipili_v0", "seats": ["human", "human"], "seed": "7"}, "seed", "integer"),
        ({"game": "pilipili_v0", "seats": ["human", "human"], "seed": 2**64}, "seed", "2**63"),
        ({"game": "pilipili_v0", "seats": ["human", "human"], "pause": 60}, "pause", "0..5"),
        ({"game": "pilipili_v0", "seats": ["human", "human"], "pause": True}, "pause", "number"),
        ({"game": "pilipili_v0", "seats": ["human", "human"], "colour": "red"}, "colour", "unknown field"),
        (["pilipili_v0"], None, "JSON object"),
    ],
)
def test_a_bad_new_game_names_the_field_and_creates_nothing(body, field, words):
    with client() as test_client:
        answer = test_client.post("/api/games", json=body)
        assert answer.status_code == 400, answer.text
        assert answer.json()["field"] == field and words in answer.json()["error"]
        assert test_client.get("/api/status").json()["live_games"] == 0


def test_trained_is_refused_for_a_game_without_a_shipped_model(tmp_path, monkeypatch):
    monkeypatch.setenv("TABLEENVS_MODELS", str(tmp_path))  # an empty models directory: no model for any game
    with client() as test_client:
        answer = test_client.post("/api/games", json={"game": "rummikub_v0", "seats": ["human", "trained"]})
        assert answer.status_code == 400, answer.text
        assert answer.json()["field"] == "seats[1]" and "no shipped model" in answer.json()["error"]
        assert test_client.get("/api/status").json()["live_games"] == 0


def test_views_depend_only_on_what_the_seat_may_see():
    """Each seat's (and the spectator's) view is unchanged when everything that seat cannot know is resampled
    (``sample_world``), at every step of a whole game of each title; the other seats' moves read as the table
    learned them; and the resampling does change the hidden state, so a leak would show."""
    rng = np.random.default_rng(1)
    for game in sorted(SHORT):
        with client() as test_client:
            created = create(test_client, game, ["human", "human"], seed=11)
            game_id, tokens = created["id"], created["tokens"]
            table = table_of(test_client, game_id)
            shadow = tableenvs.make_raw(game, num_players=2, **SHORT[game])
            shadow.reset(seed=11)
            public = []
            hidden_changed = 0
            while True:
                for agent in ("player_0", "player_1", None):
                    seen = seat_view(test_client, game_id, tokens.get(agent)).json()
                    if agent is not None and not seen["over"]:
                        assert seen["svg"] == shadow.render_svg(agent)
                    if seen["over"]:
                        continue
                    live = table.env
                    world = live.sample_world(agent or "player_0", rng)  # a spectator knows less than player_0
                    hidden_changed += world.get_state()["rules"] != live.get_state()["rules"]
                    table.env = world
                    try:
                        again = seat_view(test_client, game_id, tokens.get(agent)).json()
                    finally:
                        table.env = live
                    assert timeless(again) == timeless(seen), f"{game}: {agent}'s view changed with what it cannot see"
                    for shown, (mover, text) in zip(seen["moves"], public[-len(seen["moves"]) :], strict=True):
                        assert shown["agent"] == mover
                        if mover != agent:
                            assert shown["text"] == text
                    assert "token" not in json.dumps(seen) and not any(t in json.dumps(seen) for t in tokens.values())
                if seen["over"]:
                    break
                view = seat_view(test_client, game_id, tokens[seen["to_act"]]).json()
                action = view["legal"][rng.integers(len(view["legal"]))]["action"]
                public.append((shadow.agent_selection, shadow.describe_action_public(action)))
                shadow.step(action)
                answer = move(test_client, game_id, tokens[view["to_act"]], action)
                assert answer.status_code == 200
            assert hidden_changed > 0, f"{game}: sample_world never changed the hidden state; the check proves nothing"


def test_the_other_seats_dealt_cards_are_never_in_a_seats_responses():
    """Llama Party at the deal: seat 1's responses (view, errors) hold none of seat 0's dealt cards (and so on)."""
    with client() as test_client:
        created = create(test_client, "llama_party_v0", ["human", "human"], seed=3)
        game_id, tokens = created["id"], created["tokens"]
        shadow = tableenvs.make_raw("llama_party_v0", num_players=2)
        shadow.reset(seed=3)
        cards = {agent: re.findall(r"\b[A-H][1-4]\(", shadow.render_view(agent)) for agent in shadow.possible_agents}
        assert all(len(hand) == 8 for hand in cards.values()) and not set(cards["player_0"]) & set(cards["player_1"])
        for agent, other in (("player_0", "player_1"), ("player_1", "player_0")):
            texts = [
                seat_view(test_client, game_id, tokens[agent]).text,
                move(test_client, game_id, tokens[agent], 10**6).text,
                test_client.get(f"/api/games/{game_id}").text,
            ]
            own = [card[:2] for card in cards[agent]]
            assert all(f">{code}<" in texts[0] for code in own), "the seat does not see its own cards"
            for text in texts:
                for card in cards[other]:
                    assert f">{card[:2]}<" not in text and card not in text, f"{agent} was shown {other}'s {card}"


def test_an_agent_thinking_never_blocks_another_game(monkeypatch):
    """An agent that is thinking (here: held until the test lets it go, so no timing is involved) holds its own game
    only: another game is created and moved meanwhile, and the thinking game goes on once the agent answers."""
    import threading

    from tableenvs.web import runner

    release, started = threading.Event(), threading.Event()
    think = runner.think

    def slow_think(seat, *args):
        if seat.kind == "search":
            started.set()
            assert release.wait(REQUEST_SECONDS), "the test never let the agent go"
        return think(seat, *args)

    monkeypatch.setattr(runner, "think", slow_think)
    with client() as test_client:
        slow = create(test_client, "llama_party_v0", ["search:sims=2:rollout=random", "human"])
        assert started.wait(REQUEST_SECONDS), "the search seat never started thinking"
        fast = create(test_client, "llama_party_v0", ["human", "random"])
        view = seat_view(test_client, fast["id"], fast["tokens"]["player_0"]).json()
        answer = move(test_client, fast["id"], fast["tokens"]["player_0"], view["legal"][0]["action"])
        assert answer.status_code == 200
        waiting = seat_view(test_client, slow["id"]).json()
        assert waiting["version"] == 0 and waiting["thinking"] and waiting["to_act"] == "player_0"
        release.set()
        view = wait_for_turn(test_client, slow["id"], slow["tokens"]["player_1"])
        assert view["move_count"] == 1 and view["moves"][0] == {"agent": "player_0", "text": "chooses a goal"}


class FakeClock:
    """A clock the test moves by hand: the server's idle and age expiry without waiting."""

    def __init__(self, now: float = 1_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_the_live_game_limit_idle_and_age_expiry():
    clock = FakeClock()
    with client(clock=clock, max_games=2, idle_seconds=100.0, max_age_seconds=1000.0) as test_client:
        tables = test_client.app.state.tables
        kept = create(test_client, "pilipili_v0", ["human", "human"])
        dropped = weakref.ref(table_of(test_client, create(test_client, "pilipili_v0", ["human", "human"])["id"]))
        full = test_client.post("/api/games", json={"game": "pilipili_v0", "seats": ["human", "human"]})
        assert full.status_code == 503 and "at most 2 live games" in full.json()["error"]
        for _ in range(3):  # a seat that keeps asking keeps its game; the other one expires
            clock.now += 60
            assert seat_view(test_client, kept["id"], kept["tokens"]["player_0"]).status_code == 200
            tables.sweep()
        assert test_client.get("/api/status").json()["live_games"] == 1
        gc.collect()
        assert dropped() is None, "an expired game is still held in memory"
        view = seat_view(test_client, kept["id"], kept["tokens"]["player_0"]).json()
        assert view["expires_in"] == 100.0  # just used: idle time left (its age allows 820 s more)
        for _ in range(16):  # used every 50 s, it still expires at 1000 s of age
            clock.now += 50
            assert seat_view(test_client, kept["id"], kept["tokens"]["player_0"]).status_code == 200
            tables.sweep()
        assert seat_view(test_client, kept["id"]).json()["expires_in"] == 20.0
        clock.now += 21
        assert tables.sweep() == [kept["id"]]
        gone = seat_view(test_client, kept["id"])
        assert gone.status_code == 404 and "expired" in gone.json()["error"]
        assert test_client.get("/api/status").json()["live_games"] == 0
        create(test_client, "pilipili_v0", ["human", "human"])


def test_downloads_wait_for_the_end():
    with client() as test_client:
        created = create(test_client, "pilipili_v0", ["human", "random"])
        for what in ("record", "replay"):
            answer = test_client.get(f"/api/games/{created['id']}/{what}")
            assert answer.status_code == 409 and "once the game is over" in answer.json()["error"]
        assert "seed" not in test_client.get(f"/api/games/{created['id']}").json()


def test_the_serve_flags_are_checked(tmp_path, monkeypatch):
    import argparse

    from tableenvs.web import command

    parser = argparse.ArgumentParser()
    command.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["serve"])
    assert (args.host, args.port) == ("127.0.0.1", 8000)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    config = command.config_from_args(args)
    assert config.data == str(tmp_path / "xdg" / "tableenvs" / "web") and config.allowed_hosts == []
    argv = ["serve", "--data", str(tmp_path / "d"), "--allowed-host", "games.lan", "--host", "192.168.1.5"]
    config = command.config_from_args(parser.parse_args(argv))
    assert config.data == str(tmp_path / "d") and config.allowed_hosts == ["games.lan", "192.168.1.5"]
    model = tmp_path / "m.zip"
    model.write_bytes(b"")
    argv = ["serve", "--model", f"best={model}", "--max-games", "3", "--trust-models"]
    config = command.config_from_args(parser.parse_args(argv))
    assert config.models == {"best": str(model.resolve())} and config.max_games == 3
    for flags, words in (
        (["--model", f"best={model}"], "holds pickles that can run code"),  # an SB3 .zip only with --trust-models
        (["--model", "best"], "NAME=PATH"),
        (["--model", f"best={tmp_path / 'none.zip'}"], "no saved model"),
        (["--max-games", "0"], "--max-games must be at least 1"),
        (["--idle-seconds", "nan"], "--idle-seconds"),
        (["--port", "70000"], "--port"),
        (["--max-moves", "0"], "--max-moves must be at least 1"),
        (["--max-option", "0"], "--max-option must be at least 1"),
        (["--max-age-seconds", "inf"], "--max-age-seconds"),
        (["--header-seconds", "0"], "--header-seconds"),
        (["--allowed-host", "http://evil/"], "--allowed-host"),
    ):
        with pytest.raises(ValueError, match=re.escape(words)):
            command.config_from_args(parser.parse_args(["serve", *flags]))


def test_the_pause_comes_before_an_agents_turn():
    with client() as test_client:
        created = create(test_client, "llama_party_v0", ["human", "random"], pause=0.4)
        game_id, token = created["id"], created["tokens"]["player_0"]
        view = wait_for_turn(test_client, game_id, token)
        start = time.monotonic()
        answer = move(test_client, game_id, token, view["legal"][0]["action"]).json()
        assert answer["to_act"] == "player_1" and answer["thinking"] and answer["pause"] == 0.4
        view = wait_for_turn(test_client, game_id, token)
        assert view["move_count"] == 2 and time.monotonic() - start >= 0.4


def test_a_failing_agent_stops_its_game_not_the_server(monkeypatch):
    from tableenvs.web import runner

    def broken(*args):
        raise RuntimeError("the policy broke")

    monkeypatch.setattr(runner, "think", broken)
    with client() as test_client:
        created = create(test_client, "llama_party_v0", ["random", "human"])
        game_id, token = created["id"], created["tokens"]["player_1"]
        view = wait_for_turn(test_client, game_id, token)
        assert view["error"] == "player_0 (random) failed: RuntimeError: the policy broke"
        assert view["to_act"] is None and view["legal"] == [] and not view["over"]
        answer = move(test_client, game_id, token, 0)
        assert answer.status_code == 409 and "the game has stopped" in answer.json()["error"]
        assert test_client.get("/api/status").status_code == 200


def test_the_command_refuses_bad_flags_before_serving(capsys):
    from tableenvs.web import command

    assert command.main(["--max-games", "0"]) == 2
    assert "--max-games must be at least 1" in capsys.readouterr().err


def test_a_trained_seat_plays_the_shipped_model_where_the_game_has_one():
    """``trained`` is offered and seated only for a game with a model in the package, at the model's options; its
    moves are the shipped model's (numpy) choices for that seat's observations."""
    from tableenvs.policies import make_policy
    from tableenvs.policies.numpy_policy import read_header, shipped_models, trained_model_path

    with client() as test_client:
        catalog = {game["name"]: game["seats"] for game in test_client.get("/api/catalog").json()["games"]}
        assert {name for name, seats in catalog.items() if "trained" in seats} == set(shipped_models()) != set()
        game = shipped_models()[0]
        players = read_header(trained_model_path(game))["options"]["num_players"]
        seats = ["trained"] + ["random"] * (players - 1)
        answer = test_client.post("/api/games", json={"game": game, "seats": seats, "seed": 3, "pause": 0})
        assert answer.status_code == 201, answer.text
        view = wait_for_turn(test_client, answer.json()["id"], None)
        assert view["over"] and not view["error"]
        record = GameRecord.from_dict(test_client.get(f"/api/games/{answer.json()['id']}/record").json())
    # replay the record: every move of player_0 is the shipped model's choice at that point
    env = tableenvs.make_raw(game, num_players=players)
    trained = make_policy("trained", env)
    checked = []

    def before_step(env, index, step):
        if step["agent"] == "player_0":
            observation = env.observe("player_0")
            choice = trained.act(observation["observation"], observation["action_mask"], np.random.default_rng(0))
            checked.append(choice == step["action"])

    replay(record, before_step=before_step)
    assert checked and all(checked), f"{checked.count(False)} of {len(checked)} moves differ from the shipped model's"
