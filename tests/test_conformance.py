"""One conformance suite for every registered game (issue 16, item 3).

Every game tableenvs registers (``tableenvs.names()``, the tests' toy games aside) is checked the same way,
parametrised by what its :class:`GameSpec` declares: every player count in ``player_counts`` crossed with every
option set in ``option_sets`` (as PettingZoo's ``all_parameter_combs_test`` and OpenSpiel's ``games_sim_test`` do).
Registering a game with those two fields is all it takes to be tested here; the game-specific rule tests stay in
each game's test folder.

Checks: PettingZoo's ``api_test``, ``seed_test`` and ``render_test`` (ansi text non-empty, ``rgb_array`` a picture
with something drawn); different seeds deal different games; the registries (``make``, ``make_raw``,
``pettingzoo.make``, the Gymnasium id, unknown options, the player range); the spaces; an illegal action (the raw
env raises naming the legal actions, the wrapped env ends the game with -1 to the mover); pickle and deepcopy
continue identically; the heuristic only plays masked actions; the observation table of the game's docs page
matches the encoder; ``tableenvs play GAME --quiet``.
"""

from __future__ import annotations

import copy
import importlib
import pickle
import re
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import tableenvs
from tableenvs.aec import IllegalActionError, TableEnv
from tableenvs.policies import make_policy

ROOT = Path(__file__).resolve().parents[1]

# The package's own games (the tests register toy games too; whether those are in ``names()`` here depends on
# the order pytest imports test modules, so they are left out).
GAMES = [name for name in tableenvs.names() if tableenvs.spec(name).module.startswith("tableenvs.")]


def _options_id(options: dict[str, Any]) -> str:
    return ",".join(f"{key}={value}" for key, value in options.items()) or "defaults"


def _cases() -> list:
    """(game, options) for every game, player count and option set; ``options`` includes ``num_players``."""
    cases = []
    for name in GAMES:
        game = tableenvs.spec(name)
        for count in game.player_counts or (None,):
            for option_set in game.option_sets:
                options = dict(option_set) if count is None else {"num_players": count, **option_set}
                cases.append(pytest.param(name, options, id=f"{name}-{_options_id(options)}"))
    return cases


CASES = _cases()
HEURISTIC_GAMES = [name for name in GAMES if tableenvs.spec(name).heuristic is not None]
ignore_reset_option_warning = pytest.mark.filterwarnings("ignore:.*ignoring unknown reset option:UserWarning")


def _random_steps(env, steps: int, rng: np.random.Generator) -> None:
    """Play up to ``steps`` random legal moves (fewer if the game ends)."""
    for _ in range(steps):
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            return
        env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))


def test_every_game_declares_its_player_counts_and_option_sets():
    assert {"pilipili_v0", "llama_party_v0", "rummikub_v0"} <= set(GAMES)
    for name in GAMES:
        game = tableenvs.spec(name)
        assert game.option_sets and all(isinstance(options, dict) for options in game.option_sets), name
        counts = game.player_counts
        if "num_players" in game.option_names():
            assert counts and list(counts) == list(range(counts[0], counts[-1] + 1)), name
        else:
            assert not counts, name


# ---------------------------------------------------------------------- PettingZoo's own tests


@ignore_reset_option_warning
@pytest.mark.parametrize(("name", "options"), CASES)
def test_api_and_seed_tests(name, options):
    api_test(tableenvs.make(name, **options), num_cycles=300)
    seed_test(lambda **kw: tableenvs.make(name, **options, **kw), num_cycles=300)


@pytest.mark.parametrize(("name", "options"), CASES)
def test_render_test_and_ansi_text(name, options, capsys):
    render_test(
        lambda render_mode=None: tableenvs.make(name, **options, render_mode=render_mode),
        custom_tests={
            "ansi": lambda text: isinstance(text, str) and text.strip() != "",
            "rgb_array": lambda image: image.shape[0] > 100 and (image != image[0, 0]).any(),  # a drawn table
        },
    )
    # (the text at the end of a game is checked by test_pickle_and_deepcopy_continue_identically)
    human = tableenvs.make_raw(name, **options, render_mode="human")
    human.reset(seed=0)
    capsys.readouterr()
    assert human.render() is None
    assert capsys.readouterr().out.strip()


@pytest.mark.parametrize(("name", "options"), CASES)
def test_different_seeds_deal_different_games(name, options):
    env = tableenvs.make_raw(name, **options)
    starts = []
    for seed in range(4):
        env.reset(seed=seed)
        starts.append(np.concatenate([env.observe(agent)["observation"] for agent in env.possible_agents]))
    assert any(not np.array_equal(starts[0], other) for other in starts[1:])


# ---------------------------------------------------------------------- registries and spaces


@pytest.mark.parametrize("name", GAMES)
def test_registries(name):
    game = tableenvs.spec(name)
    counts = game.player_counts or (None,)
    for count in counts:
        options = {} if count is None else {"num_players": count}
        raw = tableenvs.make_raw(name, **options)
        assert type(raw) is game.raw_env_class() and isinstance(raw, TableEnv)
        assert raw.metadata["name"] == name
        wrapped = tableenvs.make(name, **options)
        assert not isinstance(wrapped, TableEnv) and type(wrapped.unwrapped) is type(raw)
        by_id = pettingzoo.make("aec", game.registry_id, **options)
        by_id.reset(seed=0)
        assert type(by_id.unwrapped) is type(raw) and by_id.agents == raw.possible_agents
        if count is not None:
            assert raw.num_players == count and len(raw.possible_agents) == count
    assert gymnasium.spec(game.registry_id).kwargs == {"game": name}
    single = gymnasium.make(game.registry_id, opponents="random")
    observation, _ = single.reset(seed=0)
    assert single.observation_space.contains(observation)
    with pytest.raises(
        TypeError, match=r"unknown option\(s\) 'players'; valid options: " + ", ".join(game.option_names())
    ):
        tableenvs.make(name, players=2)


@pytest.mark.parametrize("name", [name for name in GAMES if tableenvs.spec(name).player_counts])
def test_player_range_matches_the_env_and_the_readme(name):
    counts = tableenvs.spec(name).player_counts
    default = tableenvs.make_raw(name).num_players
    assert default in counts
    for outside in (counts[0] - 1, counts[-1] + 1):
        with pytest.raises(ValueError, match=rf"num_players must be in {counts[0]}\.\.{counts[-1]}, got {outside}"):
            tableenvs.make_raw(name, num_players=outside)
    readme = (ROOT / "README.md").read_text()
    row = re.search(rf"^\| `{name}` \|.*\| (\d+)[–-](\d+) \|", readme, flags=re.M)
    assert row, f"README.md's table of games has no row for {name}"
    assert (int(row[1]), int(row[2])) == (counts[0], counts[-1])


@pytest.mark.parametrize(("name", "options"), CASES)
def test_spaces(name, options):
    env = tableenvs.make_raw(name, **options)
    n = env.num_actions
    for agent in env.possible_agents:
        space = env.observation_space(agent)
        assert space is env.observation_space(agent)  # built once
        assert set(space.spaces) == {"observation", "action_mask"}
        observation, mask = space["observation"], space["action_mask"]
        assert observation.dtype == np.float32 and observation.shape == (env.observation_size,)
        assert mask.dtype == np.int8 and mask.shape == (n,)
        assert (mask.low == 0).all() and (mask.high == 1).all()
        assert (observation.low <= observation.high).all()
        action_space = env.action_space(agent)
        assert isinstance(action_space, gymnasium.spaces.Discrete) and action_space.n == n
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(40):
        for agent in env.possible_agents:
            observed = env.observe(agent)
            assert env.observation_space(agent).contains(observed), agent
        if env.terminations[env.agent_selection] or env.truncations[env.agent_selection]:
            break
        _random_steps(env, 1, rng)


# ---------------------------------------------------------------------- illegal actions


def _position_with_an_illegal_action(name, options, wrapped: bool):
    """An env (raw or wrapped) a few random moves into a game, at a decision with at least one illegal action."""
    for seed in range(20):
        env = tableenvs.make(name, **options) if wrapped else tableenvs.make_raw(name, **options)
        env.reset(seed=seed)
        _random_steps(env, seed % 7, np.random.default_rng(seed))
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            continue
        mask = env.observe(agent)["action_mask"]
        if not mask.all():
            return env, int(np.flatnonzero(mask == 0)[0]), seed
    raise AssertionError(f"{name}: no decision with an illegal action in 20 games")


@pytest.mark.parametrize(("name", "options"), CASES)
def test_illegal_action_raw_raises_naming_the_legal_ones(name, options):
    env, action, _ = _position_with_an_illegal_action(name, options, wrapped=False)
    agent = env.agent_selection
    before = {a: env.observe(a)["observation"] for a in env.possible_agents}
    legal = env.legal_actions()
    with pytest.raises(IllegalActionError) as caught:
        env.step(action)
    message = str(caught.value)
    assert f"{name}: illegal action {action} ({env.describe_action(action)}) for {agent}; legal: " in message
    for legal_action in legal[:12]:
        assert f"{legal_action} ({env.describe_action(legal_action)})" in message
    if len(legal) > 12:
        assert f"... {len(legal) - 12} more" in message
    assert env.agent_selection == agent and env.legal_actions() == legal  # nothing moved
    for a in env.possible_agents:
        np.testing.assert_array_equal(env.observe(a)["observation"], before[a])


@pytest.mark.parametrize(("name", "options"), CASES)
def test_illegal_action_wrapped_ends_the_game_with_minus_one_to_the_mover(name, options):
    env, action, _ = _position_with_an_illegal_action(name, options, wrapped=True)
    mover = env.agent_selection
    env.step(action)
    assert all(env.terminations.values())
    assert env.rewards[mover] == -1
    assert all(reward == 0 for agent, reward in env.rewards.items() if agent != mover)
    for agent in env.agent_iter():  # every agent gets its dead step
        _, reward, terminated, truncated, _ = env.last()
        assert terminated or truncated
        assert reward == (-1 if agent == mover else 0)
        env.step(None)
    assert env.agents == []


# ---------------------------------------------------------------------- copies


def _snapshot(env) -> tuple:
    """Everything an agent or a trainer can read from ``env`` now (it renders as ansi text)."""
    raw = env.unwrapped
    observations = [env.observe(agent) for agent in raw.possible_agents]
    text = env.render()
    assert isinstance(text, str) and text.strip()
    return (
        text,
        env.agent_selection,
        list(env.agents),
        [(o["observation"].tobytes(), o["action_mask"].tobytes()) for o in observations],
        dict(env.rewards),
        dict(raw._cumulative_rewards),
        env.last()[1:4],
        dict(env.terminations),
        dict(env.truncations),
        repr(env.infos),
        list(raw.event_log),
    )


@pytest.mark.parametrize("wrapped", [False, True], ids=["raw", "wrapped"])
@pytest.mark.parametrize(("name", "options"), CASES)
def test_pickle_and_deepcopy_continue_identically(name, options, wrapped):
    make = tableenvs.make if wrapped else tableenvs.make_raw
    env = make(name, **options, render_mode="ansi")
    env.reset(seed=3)
    _random_steps(env, 15, np.random.default_rng(3))
    copies = [pickle.loads(pickle.dumps(env)), copy.deepcopy(env)]
    expected = _snapshot(env)
    for other in copies:
        assert _snapshot(other) == expected
    rng = np.random.default_rng(4)
    for _ in range(10_000):  # to the end of the game, the same moves everywhere
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            break
        action = int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"])))
        for each in (env, *copies):
            each.step(action)
        expected = _snapshot(env)
        for other in copies:
            assert _snapshot(other) == expected
    else:
        raise AssertionError(f"{name}: the game did not end in 10,000 moves")
    for each in (env, *copies):
        each.reset()  # no seed: the copied random generator deals the next game
    expected = _snapshot(env)
    for other in copies:
        assert _snapshot(other) == expected


# ---------------------------------------------------------------------- the heuristic


@pytest.mark.parametrize(("name", "options"), [case for case in CASES if case.values[0] in HEURISTIC_GAMES])
def test_heuristic_only_plays_masked_actions(name, options):
    env = tableenvs.make_raw(name, **options)
    policy = make_policy("heuristic", env)
    rng = np.random.default_rng(len(options))
    # 12 games with the default options (the Pili Pili test this replaces played 12 six-round games), 4 otherwise
    for seed in range(12 if set(options) <= {"num_players"} else 4):
        env.reset(seed=seed)
        for _ in range(10_000):
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                break
            observation = env.observe(agent)
            action = policy.act(observation["observation"], observation["action_mask"], rng)
            assert observation["action_mask"][action] == 1, (seed, agent, action, env.describe_action(action))
            env.step(action)
        else:
            raise AssertionError(f"{name}: the heuristic game did not end in 10,000 moves")


# ---------------------------------------------------------------------- the docs page


def _docs_page(name: str) -> Path:
    """The game's page, as linked from README.md's table of games."""
    readme = (ROOT / "README.md").read_text()
    row = re.search(rf"^\| `{name}` \|.*\]\((docs/[\w.-]+\.md)\) \|$", readme, flags=re.M)
    assert row, f"README.md's table of games links no docs page for {name}"
    return ROOT / row[1]


def _markdown_tables(text: str) -> list[list[list[str]]]:
    """Every table of a markdown page as rows of cells (header row first, the |---| row dropped)."""
    tables, current = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if not all(re.fullmatch(r":?-+:?", cell) for cell in cells):
                current.append(cells)
        elif current:
            tables.append(current)
            current = []
    return tables


def _size(text: str, n: int) -> int:
    """A size cell as written in the docs ("53", "4 x 32", "(n−1)·56", "1 + 7n") for ``n`` players."""
    expression = text.replace("−", "-").replace("·", "*").replace(" x ", "*").replace("×", "*")
    expression = re.sub(r"(\d)\s*n\b", r"\1*n", expression)
    assert re.fullmatch(r"[\dn+\-*() ]+", expression), f"cannot read the size {text!r}"
    return int(eval(expression, {"__builtins__": {}}, {"n": n}))  # digits, n, + - * and brackets only


def _layout_table(text: str) -> tuple[list[str], list[int], list[str], int | None]:
    """The observation layout table of a docs page: (names, offsets, sizes as written, the n of the offsets).

    It is the one table whose header has a size column, an offset column ("offset" or "start", "start (n = 5)"
    when offsets depend on the player count) and a name column ("block" or "section").
    """
    found = []
    for header, *rows in _markdown_tables(text):
        columns = [cell.lower() for cell in header]
        size = [i for i, c in enumerate(columns) if c == "size"]
        offset = [i for i, c in enumerate(columns) if c.startswith(("offset", "start"))]
        label = [i for i, c in enumerate(columns) if c in ("block", "section")]
        if size and offset and label:
            n = re.search(r"n\s*=\s*(\d+)", columns[offset[0]])
            names = [row[label[0]].strip("`") for row in rows]
            offsets = [int(row[offset[0]]) for row in rows]
            found.append((names, offsets, [row[size[0]] for row in rows], int(n[1]) if n else None))
    assert len(found) == 1, f"expected one observation layout table, found {len(found)}"
    return found[0]


def _code_layout(env: TableEnv) -> dict[str, int] | None:
    """Section name -> offset as the game's encoder declares it (``encoder.layout()`` or its module's ``LAYOUT``
    class of upper-case offsets), or None if it declares none."""
    encoder = getattr(env, "encoder", None)
    if encoder is None:
        return None
    if callable(getattr(encoder, "layout", None)):
        return {name: start for name, start, _ in encoder.layout()}
    layout = getattr(importlib.import_module(type(encoder).__module__), "LAYOUT", None)
    if layout is None:
        return None
    offsets = {key.lower(): value for key, value in vars(layout).items() if key.isupper() and key != "SIZE"}
    return dict(sorted(offsets.items(), key=lambda item: item[1]))


@pytest.mark.parametrize("name", GAMES)
def test_docs_observation_table_matches_the_encoder(name):
    text = _docs_page(name).read_text()
    names, offsets, sizes, table_n = _layout_table(text)
    game = tableenvs.spec(name)
    for count in game.player_counts or (None,):
        env = tableenvs.make_raw(name, **({} if count is None else {"num_players": count}))
        n = count if count is not None else 0
        widths = [_size(size, n) for size in sizes]
        assert sum(widths) == env.observation_size, f"{count} players: the docs table adds up to {sum(widths)}"
        if table_n is None or table_n == count:
            starts = [sum(widths[:i]) for i in range(len(widths))]
            assert offsets == starts, f"{count} players: offsets {offsets} should be {starts}"
            code = _code_layout(env)
            if code is not None:
                assert list(code) == names
                assert list(code.values()) == offsets
    assert table_n is None or table_n in game.player_counts
    # every "Discrete(k)" on the page is the action space; every "Box(float32, (k,))" the observation
    env = tableenvs.make_raw(name)
    discrete = re.findall(r"Discrete\((\d+)\)", text)
    assert discrete and set(discrete) == {str(env.num_actions)}
    constant_size = len({tableenvs.make_raw(name, num_players=c).observation_size for c in game.player_counts}) <= 1
    boxes = set(re.findall(r"Box\(float32, \((\d+),\)\)", text))
    assert boxes == ({str(env.observation_size)} if constant_size else set())


# ---------------------------------------------------------------------- the command line


@pytest.mark.parametrize("name", GAMES)
def test_cli_play_quiet_runs_a_whole_game(name, capsys):
    from tableenvs.cli import main

    game = tableenvs.spec(name)
    policies = "heuristic" if game.heuristic else "random"
    for count in (game.player_counts[0], game.player_counts[-1]) if game.player_counts else (None,):
        players = [] if count is None else ["--players", str(count)]
        assert main(["play", name, "--quiet", "--seed", "0", "--policies", policies, *players]) == 0
        out = capsys.readouterr().out
        agents = tableenvs.make_raw(name, **({} if count is None else {"num_players": count})).possible_agents
        assert out.startswith(f"{name}: ") and all(agent in out for agent in agents)
