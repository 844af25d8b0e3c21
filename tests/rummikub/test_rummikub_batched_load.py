"""``RummikubBatched.load_state(i, record)`` and ``load_env(i, env)``: a batched env started from a Rummikub game under
way (a position of random play, a world sampled for a search) plays on exactly as the raw env does: the same seat to
act, observation, mask, rewards and episode end at every step, through the end of that game (and, where the episode
has more games, into the next deal, drawn from the loaded generator), for the same random legal actions.

Positions are taken at the start of a turn and in the middle of one (tiles staged), with the seat to act before and
after its initial meld, near the end of the pool and once it is empty (passes), in the second game of an episode, at
2, 3 and 4 players and under every rules option; rows are loaded after the engine has played (their masks' sweeps
hold another game's turn), with the masks' compiled slots and with the Python sweeps of turns that do not fit them.
"""

from __future__ import annotations

import numpy as np
import pytest

import tableenvs
import tableenvs.vector
from tableenvs.core.table_env import TableEnv
from tests.vector_differential import loaded_rows_play_on, sampled_worlds_in_blocks

from game_positions import positions_under_way  # isort: skip

NAME = "rummikub_v0"
DRAW = 54  # draw a tile


def _warm(batched, steps: int, seed: int) -> None:
    """Random legal steps in every row: the rows' masks then hold sweeps of other games (some mid-turn)."""
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        batched.step([rng.choice(np.flatnonzero(m)) for m in batched.mask])


OPTION_SETS = [
    ({"num_players": 2}, 14),
    ({"num_players": 3}, 14),
    ({"num_players": 4}, 14),
    ({"num_players": 4, "strict_commit": False, "draw_after_play": True, "games_per_episode": 2}, 14),
    ({"num_players": 3, "pool_exhausted": "draw", "end_on_empty_pool": True, "min_initial": 0}, 10),
    ({"num_players": 2, "max_turns": 120, "min_initial": 12, "games_per_episode": 3}, 10),
]


@pytest.mark.parametrize(("options", "count"), OPTION_SETS, ids=lambda x: str(x) if isinstance(x, dict) else None)
def test_a_loaded_aec_state_plays_on_as_the_aec_env(options, count):
    envs = positions_under_way(options, count, seed=17 * options["num_players"] + count)
    games = [env.game for env in envs]
    assert sum(bool(game.staged.any()) for game in games) >= count // 3  # in the middle of a turn
    assert any(not game.staged.any() for game in games)  # at the start of one
    assert any(not game.opened[game.to_act] for game in games)  # before the seat's initial meld
    assert any(game.opened[game.to_act] and game.staged.any() for game in games)  # a play onto the table, mid-turn
    assert any(game.pool_size <= 4 for game in games)  # near the end of the pool (or past it)
    if options.get("games_per_episode", 1) > 1:
        assert any(game.game_number > 1 for game in games)
    batched = tableenvs.vector.make(NAME, count + 3, **options)
    batched.reset(seed=7)
    _warm(batched, 40, seed=count)
    rows = [count + 2 - i for i in range(count)]  # rows in another order than the envs'
    for env, row in zip(envs, rows, strict=True):
        obs, mask = batched.load_state(row, env.get_state())
        seen = env.observe(env.agent_selection)
        assert np.array_equal(obs[row], seen["observation"]) and np.array_equal(mask[row], seen["action_mask"])
        assert batched.rewards[row].tolist() == [env.rewards[a] for a in env.possible_agents]
        assert batched.get_state(row) == env.get_state()
    opened = [TableEnv.from_state(env.get_state()) for env in envs]  # the record's own game, played by a fresh env
    rng = np.random.default_rng(count)
    assert loaded_rows_play_on(batched, opened, rows, rng, games=1) > 40
    for row, env in zip(rows[:3], opened, strict=False):  # in the next game (or episode): replayed from its start
        assert batched.get_state(row) == env.get_state()


def test_turns_whose_sweep_does_not_fit_the_compiled_slots_load_alike(monkeypatch):
    """With slots too small for most sweeps, the loaded rows' questions go to their Python ``TurnSweep``s, which must
    start afresh (a used one held another game's turn) and sweep from the tiles staged so far."""
    from tableenvs.rummikub import batched_solver

    monkeypatch.setattr(batched_solver, "STATES", 256)
    monkeypatch.setattr(batched_solver, "EDGES", 1024)
    monkeypatch.setattr(batched_solver, "SLOTS", 512)
    options = {"num_players": 3}
    envs = positions_under_way(options, 12, seed=4)
    batched = tableenvs.vector.make(NAME, 20, **options)
    batched.reset(seed=1)
    _warm(batched, 60, seed=2)
    used = sum(sweep._position is not None for sweep in batched._masks.sweeps)
    python = batched._masks.python_questions
    rows = list(range(1, 13))
    swept = []  # the positions whose loaded row asked its Python sweep
    for env, row in zip(envs, rows, strict=True):
        batched.load_state(row, env.get_state(), check=False)
        if batched._masks.python_questions > python + len(swept):
            swept.append(env)
    assert used >= 6 and len(swept) >= 3  # loaded rows answered by fresh Python sweeps
    for row, env in zip(range(13, 19, 2), swept, strict=False):  # a block of two rows: each asks its own sweep
        batched.load_env([row, row + 1], env)
    assert batched._masks.python_questions == python + len(swept) + 2 * len(swept[:3])
    opened = [TableEnv.from_state(env.get_state()) for env in envs + [env for env in swept[:3] for _ in range(2)]]
    rows += list(range(13, 19))
    assert loaded_rows_play_on(batched, opened, rows, np.random.default_rng(3), games=1) > 40


@pytest.mark.parametrize("num_players", [4, 2])
def test_sampled_worlds_loaded_into_several_rows_play_on_as_the_worlds(num_players):
    """A search's use: each sampled world put in a block of rows at once (``load_env``, one row per root action), each
    row played on by other random actions; ``get_state`` mid-way is the world's record after those actions; a row
    loaded again with the same world (the next simulation) starts afresh."""
    options = {"num_players": num_players}
    envs = positions_under_way(options, 6, seed=90 + num_players)
    batched = tableenvs.vector.make(NAME, 18, **options)
    batched.reset(seed=0)
    _warm(batched, 20, seed=1)
    rng = np.random.default_rng(5)
    worlds, rows = sampled_worlds_in_blocks(batched, envs, rng)
    for world, row in zip(worlds[::3], rows[::3], strict=True):  # each block's first row
        seen = world.observe(world.agent_selection)
        assert np.array_equal(batched.mask[row + 2], seen["action_mask"])
        assert np.array_equal(batched.obs[row + 1], seen["observation"])
    for _ in range(3):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in batched.mask], np.int64)
        batched.step(actions)
        for world, row in zip(worlds, rows, strict=True):
            world.step(int(actions[row]))
            assert not any(world.terminations.values())
    for world, row in zip(worlds[::4], rows[::4], strict=True):
        assert batched.get_state(row) == world.get_state()  # replayed from the loaded world (its clone)
    again = worlds[0].clone()  # the first world, 3 steps on, into rows 0 and 4 (which hold other turns' sweeps)
    batched.load_env([0, 4], again)
    worlds[0], worlds[4] = again.clone(), again.clone()
    assert loaded_rows_play_on(batched, worlds, rows, rng, games=1) > 20


def test_load_state_and_load_env_refuse_bad_input_in_one_line_and_change_nothing():
    env = tableenvs.make_raw(NAME, num_players=3)
    env.reset(seed=1)
    for action in (54, 54):  # two draws: a game under way
        env.step(action)
    batched = tableenvs.vector.make(NAME, 2, num_players=3)
    with pytest.raises(RuntimeError, match="before the first reset"):
        batched.load_state(0, env.get_state())
    batched.reset(seed=3)
    before = batched.get_state(0), batched.obs.copy(), batched.mask.copy(), batched.rewards.copy()

    def refused(error, match, call, *args):
        with pytest.raises(error, match=match) as raised:
            call(*args)
        assert "\n" not in str(raised.value)

    other = tableenvs.make_raw(NAME, num_players=3, min_initial=20, strict_commit=False)
    other.reset(seed=1)
    refused(ValueError, r"other options \(min_initial, strict_commit\)", batched.load_state, 0, other.get_state())
    refused(ValueError, r"load_env: the env was made with other options \(min_initial", batched.load_env, 0, other)
    four = tableenvs.make_raw(NAME, num_players=4)
    four.reset(seed=1)
    refused(ValueError, r"other options \(num_players\)", batched.load_state, 0, four.get_state())
    bad = env.get_state()
    bad["rules"]["racks"][0] = bad["rules"]["racks"][1]
    refused(ValueError, "106 tiles", batched.load_state, 0, bad)
    llama = tableenvs.make_raw("llama_party_v0", num_players=3)
    llama.reset(seed=1)
    refused(ValueError, "state record of rummikub_v0", batched.load_state, 0, llama.get_state())
    refused(ValueError, "raw rummikub_v0 env", batched.load_env, 0, llama)
    refused(ValueError, "raw rummikub_v0 env", batched.load_env, 0, tableenvs.make(NAME, num_players=3))
    refused(ValueError, "env index", batched.load_state, 2, env.get_state())
    refused(ValueError, "env index", batched.load_state, [0, -3], env.get_state())
    refused(ValueError, "env index", batched.load_env, range(1, 3), env)
    unstarted = tableenvs.make_raw(NAME, num_players=3)
    refused(ValueError, "whose game is running", batched.load_env, 0, unstarted)
    ended = tableenvs.make_raw(NAME, num_players=3, max_turns=2)
    ended.reset(seed=1)
    ended.step(54)
    ended.step(54)  # cut short at max_turns
    refused(ValueError, "ended", batched.load_state, 0, ended.get_state())
    refused(ValueError, "whose game is running", batched.load_env, 0, ended)
    after = batched.get_state(0), batched.obs, batched.mask, batched.rewards
    assert after[0] == before[0]
    assert all(np.array_equal(x, y) for x, y in zip(after[1:], before[1:], strict=True))
    moving = tableenvs.make_raw(NAME, num_players=3)
    moving.reset(seed=2)
    batched.load_env(1, moving)  # load_env keeps the env itself: once it moves on, get_state(1) cannot answer
    assert batched.get_state(1) == moving.get_state()
    moving.step(54)
    moved = r"get_state\(1\): env 1 was loaded by load_env from an env that has moved on"
    refused(ValueError, moved, batched.get_state, 1)
    record = env.get_state()
    batched.load_state(0, record)  # load_state keeps a copy of the record: changing the caller's changes nothing
    record["rules"]["turn"] = 0
    assert batched.get_state(0) == env.get_state()


def test_a_game_scripted_by_reset_options_loads_and_plays_on():
    """The engine's ``reset`` only deals; a game scripted in the AEC env (racks of any sizes, a table, the pool's
    order, the first player, opened flags) loads at its start and mid-turn, and its next game is dealt from the
    generator as the AEC env deals it."""
    rng = np.random.default_rng(0)
    table = ["red 1", "red 2", "red 3", "blue 7", "black 7", "orange 7"]
    racks = [["red 4", "red 5", "joker", "blue 9"], ["black 1", "black 2", "black 3", "blue 12", "blue 13"], ["red 9"]]
    scripted = [tableenvs.make_raw(NAME, num_players=3) for _ in range(3)]
    for env in scripted:
        env.reset(seed=4, options={"racks": racks, "table": table, "first_player": 0, "opened": [True, False, True]})
    scripted[1].step(int(np.flatnonzero(scripted[1].observe("player_0")["action_mask"])[0]))  # a tile staged
    for _ in range(7):  # the scripted game played on: two rounds of draws, then player_1 to act
        scripted[2].step(DRAW)
    assert scripted[1].game.staged.any() and scripted[0].game.pool_size == 106 - 6 - 10
    assert scripted[2].game.pool_size == 90 - 7 and scripted[2].agent_selection == "player_1"
    batched = tableenvs.vector.make(NAME, 5, num_players=3)
    batched.reset(seed=2)
    _warm(batched, 10, seed=3)
    rows = [4, 0, 2]
    for env, row in zip(scripted, rows, strict=True):
        batched.load_env(row, env)
        assert batched.get_state(row) == env.get_state()
    opened = [env.clone() for env in scripted]
    assert loaded_rows_play_on(batched, opened, rows, rng, games=2) > 40
