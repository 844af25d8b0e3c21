"""The state API of every game: ``clone()``, ``get_state()`` / ``set_state()`` and ``TableEnv.from_state``.

Random games (seeded loops) in every game and several player counts and options: a clone taken at a random point
continues exactly like the original (observations, masks, rewards, terminations, infos, RNG, event log, outcome);
changing a clone never changes the original and back; a record read back from JSON continues identically in a
fresh env and in another process; bad records are refused with a clear error and leave the env as it was.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tableenvs
from tableenvs.core.state import StateError
from tableenvs.core.table_env import TableEnv
from tableenvs.testing import games, per_game

ROOT = Path(__file__).resolve().parents[1]

#: The option sets each game's random games are played with.
OPTION_SETS = per_game(
    {
        "pilipili_v0": [
            {"num_players": 2},
            {"num_players": 5},
            {"num_players": 8},
            {"num_players": 4, "missions": "none", "reward": "win"},
            {"num_players": 3, "expert": False, "max_rounds": 2},
        ],
        "llama_party_v0": [{"num_players": 2}, {"num_players": 3, "reward": "win"}, {"num_players": 4}],
        "rummikub_v0": [
            {"num_players": 2, "max_turns": 60},
            {"num_players": 4, "max_turns": 40},
            {
                "num_players": 3,
                "strict_commit": False,
                "draw_after_play": True,
                "games_per_episode": 2,
                "min_initial": 0,
                "end_on_empty_pool": True,
                "pool_exhausted": "draw",
                "max_turns": 200,
            },
        ],
    },
    "builtin",
    "state",
)
CONFIGS = [(name, options) for name, option_sets in OPTION_SETS.items() for options in option_sets]
#: The options of each game's game restored in another process.
RESTORED = per_game(
    {
        "pilipili_v0": {"num_players": 5},
        "llama_party_v0": {"num_players": 3},
        "rummikub_v0": {"num_players": 2, "max_turns": 40},
    },
    "builtin",
    "state",
)
#: The options of each game's game that bad records must leave as it was.
BAD_RECORDS = per_game(
    {"pilipili_v0": {"num_players": 4}, "llama_party_v0": {"num_players": 4}, "rummikub_v0": {"num_players": 3}},
    "builtin",
    "state",
)
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in options.items())}" for name, options in CONFIGS]


def make(name: str, options: dict) -> TableEnv:
    return tableenvs.make_raw(name, **options)


def is_dead(env: TableEnv) -> bool:
    agent = env.agent_selection
    return env.terminations[agent] or env.truncations[agent]


def pick(env: TableEnv, rng: np.random.Generator):
    """A random legal action, or ``None`` for a dead step."""
    return None if is_dead(env) else int(rng.choice(env.legal_actions()))


def played(name: str, options: dict, seed: int, steps: int) -> TableEnv:
    """An env reset with ``seed`` after ``steps`` random steps (fewer if the game and its dead steps end first)."""
    env = make(name, options)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed + 1000)
    for _ in range(steps):
        if not env.agents:
            break
        env.step(pick(env, rng))
    return env


def assert_same(a: TableEnv, b: TableEnv) -> None:
    assert a.agents == b.agents
    if a.agents:
        assert a.agent_selection == b.agent_selection
    assert a.rewards == b.rewards
    assert a._cumulative_rewards == b._cumulative_rewards
    assert a.terminations == b.terminations
    assert a.truncations == b.truncations
    assert a.infos == b.infos
    for agent in a.possible_agents:
        oa, ob = a.observe(agent), b.observe(agent)
        assert np.array_equal(oa["observation"], ob["observation"]), agent
        assert np.array_equal(oa["action_mask"], ob["action_mask"]), agent
    assert a._rng.bit_generator.state == b._rng.bit_generator.state
    assert a.event_log == b.event_log
    assert a.outcome() == b.outcome()


def play_on_together(envs: list[TableEnv], seed: int, max_steps: int = 100_000) -> int:
    """Step every env with the same random actions (chosen in the first) to the end, checking they agree."""
    rng = np.random.default_rng(seed)
    steps = 0
    while envs[0].agents and steps < max_steps:
        action = pick(envs[0], rng)
        for env in envs:
            env.step(action)
        for env in envs[1:]:
            assert_same(envs[0], env)
        steps += 1
    return steps


def game_length(name: str, options: dict, seed: int) -> int:
    """Steps of the random game ``played`` plays with ``seed`` (the dead steps included)."""
    env = make(name, options)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed + 1000)
    steps = 0
    while env.agents:
        env.step(pick(env, rng))
        steps += 1
    return steps


def seeds_and_points(name: str, options: dict) -> list[tuple[int, int]]:
    """Seeds, each with a random point of its game (uniform over its steps, the end included) to clone at."""
    count = 2 if name == "rummikub_v0" else 4
    points = []
    for seed in range(count):
        length = game_length(name, options, seed)
        points.append((seed, int(np.random.default_rng(seed).integers(0, length + 1))))
    return points


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=IDS)
def test_clone_continues_identically(name, options):
    for seed, point in seeds_and_points(name, options):
        env = played(name, options, seed, point)
        clone = env.clone()
        assert type(clone) is type(env) and clone is not env
        assert_same(env, clone)
        play_on_together([env, clone], seed)
        assert not env.agents and not clone.agents


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=IDS)
def test_clone_is_independent(name, options):
    seed = 7
    env = played(name, options, seed, 30)
    before = json.dumps(env.get_state())
    clone = env.clone()
    rng = np.random.default_rng(99)
    while clone.agents:  # play the clone to the end with its own actions and draws
        clone.step(pick(clone, rng))
    clone._rng.random(5)
    assert json.dumps(env.get_state()) == before
    # and the other way: the original moving on leaves a second clone as it was
    second = env.clone()
    snapshot = json.dumps(second.get_state())
    while env.agents:
        env.step(pick(env, rng))
    assert json.dumps(second.get_state()) == snapshot


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=IDS)
def test_json_round_trip_continues_identically(name, options):
    for seed, point in seeds_and_points(name, options)[:2]:
        env = played(name, options, seed, point)
        record = env.get_state()
        text = json.dumps(record)
        fresh = make(name, options)  # never reset: set_state is enough
        fresh.set_state(json.loads(text))
        assert json.dumps(fresh.get_state()) == text
        rebuilt = TableEnv.from_state(json.loads(text))
        assert type(rebuilt) is type(env)
        assert_same(env, fresh)
        assert_same(env, rebuilt)
        play_on_together([env, fresh, rebuilt], seed)
        assert json.dumps(record) == text  # get_state's dict is a snapshot: playing on does not change it


def test_set_state_back_to_an_earlier_point():
    env = played("pilipili_v0", {"num_players": 4}, 3, 25)
    record = env.get_state()
    reference = env.clone()
    rng = np.random.default_rng(5)
    for _ in range(15):
        if env.agents:
            env.step(pick(env, rng))
    env.set_state(record)  # same env, rewound
    assert_same(env, reference)
    play_on_together([env, reference], 11)


def test_custom_decks_round_trip(tmp_path):
    from tableenvs.llama_party.cards import STANDARD_DECK, card_record
    from tableenvs.pilipili.missions import standard_missions
    from tableenvs.pilipili.rules import mission_record

    missions = [mission_record(m) for m in standard_missions()[:6]]
    deck = [card_record(card) for card in STANDARD_DECK][::-1]
    for name, options in (
        ("pilipili_v0", {"num_players": 4, "missions": missions}),
        ("llama_party_v0", {"num_players": 3, "deck": deck}),
    ):
        env = played(name, options, 2, 40)
        record = json.loads(json.dumps(env.get_state()))
        rebuilt = TableEnv.from_state(record)
        assert_same(env, rebuilt)
        play_on_together([env, rebuilt], 4)
        with pytest.raises(ValueError, match="other options"):
            make(name, {"num_players": options["num_players"]}).set_state(record)


_CHILD = """
import json, sys
import numpy as np
from tableenvs.core.table_env import TableEnv
env = TableEnv.from_state(json.load(open(sys.argv[1])))
rng = np.random.default_rng(int(sys.argv[2]))
trace = []
while env.agents:
    agent = env.agent_selection
    dead = env.terminations[agent] or env.truncations[agent]
    action = None if dead else int(rng.choice(env.legal_actions()))
    env.step(action)
    obs = env.observe(agent)
    trace.append([action, obs["observation"].tolist(), obs["action_mask"].tolist(),
                  env._cumulative_rewards.get(agent)])
print(json.dumps({"trace": trace, "scores": env.outcome().scores, "log": env.event_log}))
"""


def test_restore_in_another_process(tmp_path):
    results = {}
    for name, options in RESTORED.items():
        env = played(name, options, 4, 35)
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(env.get_state()))
        rng = np.random.default_rng(8)
        trace = []
        while env.agents:
            agent = env.agent_selection
            action = pick(env, rng)
            env.step(action)
            obs = env.observe(agent)
            trace.append(
                [action, obs["observation"].tolist(), obs["action_mask"].tolist(), env._cumulative_rewards.get(agent)]
            )
        results[name] = (path, {"trace": trace, "scores": list(env.outcome().scores), "log": env.event_log})
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    environ = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name, (path, expected) in results.items():
        out = subprocess.run(
            [sys.executable, str(script), str(path), "8"], capture_output=True, text=True, env=environ, check=True
        )
        got = json.loads(out.stdout)
        assert got["scores"] == expected["scores"], name
        assert got["log"] == expected["log"], name
        assert got["trace"] == json.loads(json.dumps(expected["trace"])), name


# ---------------------------------------------------------------------------------------------- bad records


def _bad_records(record: dict) -> list[tuple[object, str]]:
    """(record, words the error must contain) for a valid ``record`` of a running game."""

    def changed(**fields):
        copy = json.loads(json.dumps(record))
        copy.update(fields)
        return copy

    def rules_changed(key, value):
        copy = json.loads(json.dumps(record))
        copy["rules"][key] = value
        return copy

    missing = json.loads(json.dumps(record))
    del missing["rules"]
    other_seat = [a for a in record["agents"] if a != record["agent_selection"]][0]
    first = "hands" if "hands" in record["rules"] else "racks"
    duplicated = json.loads(json.dumps(record["rules"][first]))
    duplicated[0][0] = duplicated[1][0] if record["game"] != "rummikub_v0" else duplicated[0][0] + 1
    return [
        ([1, 2, 3], "state record is the dict"),
        (changed(format="something-else"), "not a tableenvs state record"),
        (changed(version=999), "format version 999"),
        (missing, "missing rules"),
        (changed(extra=1), "unknown 'extra'"),
        (changed(options={**record["options"], "num_players": 7}), "other options"),
        (changed(rng={"bit_generator": "PCG64", "state": "oops"}), "rng"),
        (changed(rng={"bit_generator": "NoSuchGenerator"}), "unknown bit generator"),
        (changed(agents=["player_9"]), "agents"),
        (changed(agent_selection=other_seat), "agent_selection"),
        (changed(ended="finished"), "ended"),
        (changed(rewards={"player_0": "x"}), "rewards"),
        (changed(rules="nothing"), "rules"),
        (rules_changed(first, duplicated), first if record["game"] == "llama_party_v0" else "rules"),
        (rules_changed("to_act", 99), "to_act"),
    ]


@pytest.mark.parametrize(("name", "options"), list(BAD_RECORDS.items()))
def test_bad_records_are_refused_and_change_nothing(name, options):
    env = played(name, options, 1, 12)
    record = env.get_state()
    before = json.dumps(record)
    for bad, words in _bad_records(record):
        with pytest.raises(ValueError, match="set_state") as caught:
            env.set_state(bad)
        assert words in str(caught.value), (words, str(caught.value))
        assert json.dumps(env.get_state()) == before, words
        fresh = make(name, options)
        with pytest.raises(ValueError):
            fresh.set_state(bad)
        with pytest.raises(RuntimeError, match="reset"):
            fresh.observe("player_0")  # still never started
    others = [n for n in games("builtin", "state") if n != name]
    for other in others:
        foreign = played(other, {}, 1, 3).get_state()
        with pytest.raises(ValueError, match=f"record is of game '{other}'; this env is {name}"):
            env.set_state(foreign)
    assert json.dumps(env.get_state()) == before
    env.step(pick(env, np.random.default_rng(0)))  # still playable


def test_from_state_refuses_unknown_game_and_state_before_reset():
    with pytest.raises(StateError, match="not one of"):
        TableEnv.from_state({"game": "chess_v0", "options": {}})
    env = make("llama_party_v0", {})
    for method in (env.clone, env.get_state):
        with pytest.raises(RuntimeError, match="reset"):
            method()


# ---------------------------------------------------------------------------------------------- sample_world


@pytest.mark.parametrize(
    "options",
    [
        {"num_players": 2},
        {"num_players": 4, "max_turns": 80},
        {"num_players": 3, "min_initial": 0, "games_per_episode": 2},
    ],
)
def test_rummikub_sample_world_keeps_what_the_agent_knows(options):
    from tableenvs.rummikub.rules import FULL_SET

    varied = 0
    for seed in range(3):
        length = game_length("rummikub_v0", options, seed)
        point = int(np.random.default_rng(seed).integers(0, length))
        env = played("rummikub_v0", options, seed, point)
        before = json.dumps(env.get_state())
        rng = np.random.default_rng(seed)
        for agent in env.possible_agents:
            seat = env.agent_name_mapping[agent]
            truth = env.observe(agent)
            others = [s for s in range(env.num_players) if s != seat]
            hidden = []
            for _ in range(4):
                world = env.sample_world(agent, rng)
                seen = world.observe(agent)
                assert np.array_equal(seen["observation"], truth["observation"])
                assert np.array_equal(seen["action_mask"], truth["action_mask"])
                game = world.game
                assert np.array_equal(
                    game.racks.sum(axis=0) + game.table + np.bincount(game.pool[game._drawn :], minlength=53),
                    FULL_SET,
                )
                hidden.append(game.racks[others].tobytes())
                TableEnv.from_state(json.loads(json.dumps(world.get_state())))  # a valid record
                play_rng = np.random.default_rng(1)
                for _ in range(40):  # the world plays on under the rules
                    if not world.agents:
                        break
                    world.step(pick(world, play_rng))
            if env.game.racks[others].sum() >= 5 and env.game.pool_size >= 5:
                assert len(set(hidden)) > 1, agent  # the other racks are resampled (4 samples, tiny odds of a tie)
                varied += 1
        assert json.dumps(env.get_state()) == before  # the real game is untouched
    assert varied >= 3


def test_sample_world_checks_its_arguments():
    for name in games("builtin", "worlds"):
        env = played(name, {"num_players": 2}, 0, 3)
        with pytest.raises(ValueError, match="unknown agent"):
            env.sample_world("player_7", np.random.default_rng(0))
        with pytest.raises(TypeError, match="Generator"):
            env.sample_world("player_0", 3)
