"""The card table's API beyond moves: clickable pictures, the spectator's public picture, taking back tentative moves
(Rummikub's staged tiles), the rules' news in the move list and the rules pages (in-process ``TestClient``).

* At every step of a whole game of each title, the seat to act's picture carries ``data-action`` on exactly its
  legal moves, the other seat's none, and the spectator's public picture none and no text of either hand.
* Taking back a staged tile leaves the env, the move log and the game record exactly as a game that never staged
  it (compared with a shadow env's state); drawing instead of staged tiles is one request; refusals change nothing.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import tableenvs
from tableenvs.testing import per_game
from tests.web.helpers_web import auth, client, table_of, wait_for_turn

SHORT = per_game(
    {"pilipili_v0": {"max_rounds": 1}, "llama_party_v0": {}, "rummikub_v0": {"max_turns": 16}},
    "builtin",
    "views",
    "picture",
)
STAGING_SEED = 16  # a Rummikub deal (2 players) where player_0 starts and can open at once: 7 tiles to stage
ACTION = re.compile(r'data-action="(\d+)"')


def create(test_client, game: str, seats: list[str], seed: int, **options) -> dict:
    answer = test_client.post("/api/games", json={"game": game, "seats": seats, "seed": seed, "options": options})
    assert answer.status_code == 201, answer.text
    return answer.json()


def view_of(test_client, game_id: str, token: str | None) -> dict:
    return test_client.get(f"/api/games/{game_id}", headers=auth(token)).json()


def post(test_client, game_id: str, route: str, token: str | None, body: dict):
    """``POST /api/games/{id}/{route}`` with the seat's token in the Authorization header."""
    return test_client.post(f"/api/games/{game_id}/{route}", json=body, headers=auth(token))


@pytest.mark.parametrize("game", sorted(SHORT))
def test_pictures_carry_exactly_the_legal_moves_and_the_spectator_sees_the_public_picture(game):
    rng = np.random.default_rng(3)
    with client() as test_client:
        created = create(test_client, game, ["human", "human"], seed=5, **SHORT[game])
        game_id, tokens = created["id"], created["tokens"]
        table = table_of(test_client, game_id)
        steps = 0
        while True:
            spectator = view_of(test_client, game_id, None)
            if spectator["over"]:
                break
            assert spectator["view"] == "public" and spectator["svg"] == table.env.render_public_svg()
            assert "public view" in spectator["svg"] and not ACTION.search(spectator["svg"])
            to_act = spectator["to_act"]
            for agent, token in tokens.items():
                view = view_of(test_client, game_id, token)
                clickable = sorted({int(a) for a in ACTION.findall(view["svg"])})
                legal = sorted(move["action"] for move in view["legal"])
                assert clickable == (legal if agent == to_act else []), (game, agent, steps)
            view = view_of(test_client, game_id, tokens[to_act])
            action = view["legal"][rng.integers(len(view["legal"]))]["action"]
            answer = post(test_client, game_id, "actions", tokens[to_act], {"action": action})
            assert answer.status_code == 200
            steps += 1
        assert steps >= 3 and view_of(test_client, game_id, None)["view"] == "god"


def test_the_public_picture_shows_no_hand():
    """Llama Party: the spectator's picture holds no card id of any hand (every card id is in some hand or goal)."""
    env = tableenvs.make_raw("llama_party_v0", num_players=3)
    env.reset(seed=4)
    svg = env.render_public_svg()
    hands = {env.deck[card].id for hand in env.game.hands for card in hand}
    shown = set(re.findall(r">([A-H][1-4])<", svg))
    assert hands and not (hands & shown)
    assert all(hand_card in env.render_svg() for hand_card in hands)  # the god view draws them: the check can fail


def staged_game(test_client):
    created = create(test_client, "rummikub_v0", ["human", "heuristic"], seed=STAGING_SEED)
    game_id, token = created["id"], created["tokens"]["player_0"]
    return game_id, token, table_of(test_client, game_id)


def stage(test_client, game_id, token, count: int) -> list[int]:
    """Stage ``count`` tiles (the first stageable each time); their actions."""
    staged = []
    for _ in range(count):
        view = view_of(test_client, game_id, token)
        action = next(move["action"] for move in view["legal"] if move["action"] < 53)
        answer = post(test_client, game_id, "actions", token, {"action": action})
        assert answer.status_code == 200
        staged.append(action)
    return staged


def shadow_state(actions: list[int]) -> dict:
    shadow = tableenvs.make_raw("rummikub_v0", num_players=2)
    shadow.reset(seed=STAGING_SEED)
    for action in actions:
        shadow.step(action)
    return shadow.get_state()


def test_taking_back_a_staged_tile_is_as_if_it_was_never_staged():
    with client() as test_client:
        game_id, token, table = staged_game(test_client)
        staged = stage(test_client, game_id, token, 3)
        view = view_of(test_client, game_id, token)
        assert len(view["moves"]) == 3 and view["svg"] == table.env.render_svg("player_0")
        assert [move["action"] for move in view["draft"]["take_back"]] == list(dict.fromkeys(staged))
        assert [move["text"] for move in view["draft"]["instead"]] == ["draw"]
        undo = {int(a) for a in re.findall(r'data-undo="(\d+)"', view["svg"])}
        assert undo == set(staged)
        answer = post(test_client, game_id, "take-back", token, {"action": staged[1], "then": None})
        assert answer.status_code == 200, answer.text
        kept = [staged[0], staged[2]]
        assert table.env.get_state() == shadow_state(kept)
        view = answer.json()
        assert [move["text"] for move in view["moves"]] == [
            f"stage {tableenvs.rummikub.tiles.tile_name(a)}" for a in kept
        ]
        assert view["move_count"] == 2 and len(table.recorder.record.steps) == 2
        assert [step["action"] for step in table.recorder.record.steps] == kept
        # all back, then draw: one request; the turn passes to the agent
        answer = post(test_client, game_id, "take-back", token, {"action": None, "then": 54})
        assert answer.status_code == 200, answer.text
        view = answer.json()
        assert [move["text"] for move in view["moves"]][:1] == ["draw"] and view["draft"] is None
        assert [step["action"] for step in table.recorder.record.steps][:1] == [54]


def test_refused_take_backs_change_nothing():
    with client() as test_client:
        game_id, token, table = staged_game(test_client)
        answer = post(test_client, game_id, "take-back", token, {"action": None})
        assert answer.status_code == 409 and "no tentative move" in answer.json()["error"]
        staged = stage(test_client, game_id, token, 2)
        before = (json.dumps(table.env.get_state(), sort_keys=True), table.version, len(table.moves))
        for sent, body, status, field in [
            (token, {"action": 52 if 52 not in staged else 0}, 422, "take_back"),
            (token, {"action": staged[0], "then": 54}, 422, "then"),  # tiles still staged: no draw
            (token, {"action": "1"}, 400, "action"),
            (token, {"action": None, "oops": 1}, 400, "oops"),
            ("wrong", {"action": None}, 403, None),
            (None, {"action": None}, 401, "token"),
            (None, {"token": token, "action": None}, 400, "token"),  # the token only in the header
            (token, {"token": token, "action": None}, 400, "token"),
        ]:
            answer = post(test_client, game_id, "take-back", sent, body)
            assert answer.status_code == status and answer.json()["field"] == field, (body, answer.text)
            after = (json.dumps(table.env.get_state(), sort_keys=True), table.version, len(table.moves))
            assert after == before, body
        answer = test_client.post(f"/api/games/{game_id}/take-back?token={token}", json={"action": None})
        assert answer.status_code == 400 and answer.json()["field"] == "token"
        headers = {**auth(token), "Content-Type": "text/plain"}  # OriginGuard: a change must be JSON
        answer = test_client.post(f"/api/games/{game_id}/take-back", content=b'{"action": null}', headers=headers)
        assert answer.status_code == 415, answer.text
        after = (json.dumps(table.env.get_state(), sort_keys=True), table.version, len(table.moves))
        assert after == before


def test_a_take_back_is_kept_across_a_restart(tmp_path):
    """With a data folder, a take-back deletes the moves taken back from the store: a server restarted on the same
    folder rebuilds the game at the same position (the taken-back tile is not replayed), with the same view, and the
    seat may still take back the tiles it staged before the restart."""
    data = str(tmp_path / "data")

    def shown(view: dict) -> dict:
        return {key: view[key] for key in ("svg", "legal", "draft", "moves", "move_count", "to_act")}

    with client(data=data) as test_client:
        game_id, token, table = staged_game(test_client)
        staged = stage(test_client, game_id, token, 3)
        answer = post(test_client, game_id, "take-back", token, {"action": staged[1], "then": None})
        assert answer.status_code == 200, answer.text
        kept = [staged[0], staged[2]]
        before = shown(view_of(test_client, game_id, token))
        assert before["move_count"] == 2
    with client(data=data) as test_client:
        table = table_of(test_client, game_id)
        assert table.env.get_state() == shadow_state(kept)
        assert [step["action"] for step in table.recorder.record.steps] == kept
        assert shown(view_of(test_client, game_id, token)) == before
        # the rebuilt turn can still be taken back: all of it, then a draw
        answer = post(test_client, game_id, "take-back", token, {"action": None, "then": 54})
        assert answer.status_code == 200, answer.text
        view = wait_for_turn(test_client, game_id, token)  # the agent has moved
        after = shown(view)
        assert after["moves"][0]["text"] == "draw"
    with client(data=data) as test_client:
        table = table_of(test_client, game_id)
        assert [step["action"] for step in table.recorder.record.steps][:1] == [54]
        assert shown(view_of(test_client, game_id, token)) == after


def test_the_move_list_carries_the_rules_news():
    """Pili Pili: each trick's winner and the round's score appear under the move that caused them; Rummikub: a
    commit is followed by the tiles played."""
    with client() as test_client:
        created = create(test_client, "pilipili_v0", ["human", "heuristic"], seed=2, max_rounds=1)
        game_id, token = created["id"], created["tokens"]["player_0"]
        table = table_of(test_client, game_id)
        while not table.over:
            view = view_of(test_client, game_id, token)
            if view["legal"]:
                post(test_client, game_id, "actions", token, {"action": view["legal"][0]["action"]})
            else:
                test_client.get(f"/api/games/{game_id}?wait={view['version']}", headers=auth(token))
        events = [line for move in view_of(test_client, game_id, token)["moves"] for line in move.get("events", [])]
        assert sum(" won by player_" in line for line in events) == table.env.game.hand_size
        assert any(line.startswith("round scored:") for line in events)
    with client() as test_client:
        game_id, token, table = staged_game(test_client)
        staged = []
        while True:
            legal = [move["action"] for move in view_of(test_client, game_id, token)["legal"]]
            action = 53 if 53 in legal else legal[0]
            view = post(test_client, game_id, "actions", token, {"action": action}).json()
            if action == 53:
                break
            staged.append(action)
        placed = tableenvs.rummikub.tiles.tiles_played_text(np.bincount(staged, minlength=53))
        assert view["moves"][-1]["events"] == [f"player_0 played {placed}"]
        assert all(move.get("tentative") for move in view["moves"][:-1]) and "tentative" not in view["moves"][-1]


def test_rules_pages():
    with client() as test_client:
        for game in sorted(SHORT):
            view = view_of(test_client, create(test_client, game, ["human", "random"], seed=1)["id"], None)
            assert view["rules"] == f"/rules/{game}"
            answer = test_client.get(view["rules"])
            assert answer.status_code == 200 and answer.text.startswith("# ")
            assert answer.headers["content-type"].startswith("text/plain")
        answer = test_client.get("/rules/nonesuch")
        assert answer.status_code == 404 and "no rules page" in answer.json()["error"]


def test_a_game_without_the_hooks_has_no_public_picture_and_nothing_tentative():
    from tableenvs.toy_game import NimEnv

    env = NimEnv()
    env.reset(seed=0)
    assert not any(env.is_tentative(action) for action in env.legal_actions())
    with pytest.raises(NotImplementedError, match="no public picture"):
        env.render_public_svg()
    rummikub = tableenvs.make_raw("rummikub_v0", num_players=2)
    rummikub.reset(seed=0)
    assert [rummikub.is_tentative(a) for a in (0, 52, 53, 54)] == [True, True, False, False]
