"""The conformance checks themselves, one function each: what :func:`tableenvs.testing.check_game` runs.

Where you are: ``tableenvs/testing/``. ``PER_CASE`` checks run for every player count and option set a game's spec
declares, ``PER_GAME`` checks once per game; each raises ``AssertionError`` saying what is wrong. The items, their
skips and the runner are in :mod:`tableenvs.testing`.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import io
import pickle
import re
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

import tableenvs
from tableenvs.core.actions import IllegalActionError
from tableenvs.core.table_env import TableEnv
from tableenvs.testing.engine_check import check_engine


@contextlib.contextmanager
def _raises(kind: type[BaseException], pattern: str) -> Iterator[None]:
    """Assert that the block raises ``kind`` with a message matching the regular expression ``pattern``."""
    try:
        yield
    except kind as error:
        assert re.search(pattern, str(error)), f"{kind.__name__} message {str(error)!r} does not match {pattern!r}"
    else:
        raise AssertionError(f"expected {kind.__name__} matching {pattern!r}; nothing was raised")


def _random_steps(env: Any, steps: int, rng: np.random.Generator) -> None:
    """Play up to ``steps`` random legal moves (fewer if the game ends)."""
    for _ in range(steps):
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            return
        env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))


# ---------------------------------------------------------------------- checks run for every option set


def _check_api(name: str, options: dict[str, Any]) -> None:
    from pettingzoo.test import api_test, seed_test

    with warnings.catch_warnings():  # api_test resets with options={"options": 1}, which the games name and ignore
        warnings.filterwarnings("ignore", message=".*ignoring unknown reset option", category=UserWarning)
        warnings.filterwarnings("ignore", category=UserWarning, module="pettingzoo.test.api_test")
        with contextlib.redirect_stdout(io.StringIO()):
            api_test(tableenvs.make(name, **options), num_cycles=300)
            seed_test(lambda **kw: tableenvs.make(name, **options, **kw), num_cycles=300)


def _check_render(name: str, options: dict[str, Any]) -> None:
    from pettingzoo.test import render_test

    with contextlib.redirect_stdout(io.StringIO()):
        render_test(
            lambda render_mode=None: tableenvs.make(name, **options, render_mode=render_mode),
            custom_tests={
                "ansi": lambda text: isinstance(text, str) and text.strip() != "",
                "rgb_array": lambda image: image.shape[0] > 100 and (image != image[0, 0]).any(),  # a drawn table
            },
        )
    human = tableenvs.make_raw(name, **options, render_mode="human")
    human.reset(seed=0)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert human.render() is None, "render_mode='human': render() returns None"
    assert printed.getvalue().strip(), "render_mode='human' prints nothing"


def _check_seeds_differ(name: str, options: dict[str, Any]) -> None:
    env = tableenvs.make_raw(name, **options)
    starts = []
    for seed in range(4):
        env.reset(seed=seed)
        starts.append(np.concatenate([env.observe(agent)["observation"] for agent in env.possible_agents]))
    assert any(not np.array_equal(starts[0], other) for other in starts[1:]), "seeds 0..3 deal the same game"


def _check_spaces(name: str, options: dict[str, Any]) -> None:
    import gymnasium

    env = tableenvs.make_raw(name, **options)
    n = env.num_actions
    for agent in env.possible_agents:
        space = env.observation_space(agent)
        assert space is env.observation_space(agent), "observation_space(agent) is built once"
        assert set(space.spaces) == {"observation", "action_mask"}, f"Dict keys {sorted(space.spaces)}"
        observation, mask = space["observation"], space["action_mask"]
        assert observation.dtype == np.float32 and observation.shape == (env.observation_size,), observation
        assert mask.dtype == np.int8 and mask.shape == (n,), mask
        assert (mask.low == 0).all() and (mask.high == 1).all(), "the mask space is 0..1"
        assert (observation.low <= observation.high).all(), "observation bounds low <= high"
        action_space = env.action_space(agent)
        assert isinstance(action_space, gymnasium.spaces.Discrete) and action_space.n == n, action_space
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(40):
        for agent in env.possible_agents:
            assert env.observation_space(agent).contains(env.observe(agent)), f"{agent}'s observation is outside"
        if env.terminations[env.agent_selection] or env.truncations[env.agent_selection]:
            break
        _random_steps(env, 1, rng)


def _position_with_an_illegal_action(name: str, options: dict[str, Any], wrapped: bool) -> tuple[Any, int]:
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
            return env, int(np.flatnonzero(mask == 0)[0])
    raise AssertionError("no decision with an illegal action in 20 games")


def _check_illegal_raw(name: str, options: dict[str, Any]) -> None:
    env, action = _position_with_an_illegal_action(name, options, wrapped=False)
    agent = env.agent_selection
    before = {a: env.observe(a)["observation"] for a in env.possible_agents}
    legal = env.legal_actions()
    try:
        env.step(action)
    except IllegalActionError as error:
        message = str(error)
    else:
        raise AssertionError(f"the raw env accepted the illegal action {action}")
    expected = f"{name}: illegal action {action} ({env.describe_action(action)}) for {agent}; legal: "
    assert expected in message, f"{message!r} does not start {expected!r}"
    for legal_action in legal[:12]:
        assert f"{legal_action} ({env.describe_action(legal_action)})" in message, f"{message!r} omits {legal_action}"
    if len(legal) > 12:
        assert f"... {len(legal) - 12} more" in message, message
    assert env.agent_selection == agent and env.legal_actions() == legal, "an illegal action moved the game"
    for a in env.possible_agents:
        assert np.array_equal(env.observe(a)["observation"], before[a]), f"an illegal action changed {a}'s view"


def _check_illegal_wrapped(name: str, options: dict[str, Any]) -> None:
    env, action = _position_with_an_illegal_action(name, options, wrapped=True)
    mover = env.agent_selection
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")  # PettingZoo's wrapper warns about the illegal move (on stdout), as intended
        env.step(action)
    assert all(env.terminations.values()), "an illegal action does not end the game"
    assert env.rewards[mover] == -1, f"the mover's reward is {env.rewards[mover]}, not -1"
    assert all(reward == 0 for agent, reward in env.rewards.items() if agent != mover), env.rewards
    for agent in env.agent_iter():  # every agent gets its dead step
        _, reward, terminated, truncated, _ = env.last()
        assert terminated or truncated, f"{agent} is neither terminated nor truncated after the game ended"
        assert reward == (-1 if agent == mover else 0), f"{agent}'s last reward is {reward}"
        env.step(None)
    assert env.agents == [], "agents remain after every dead step"


def _snapshot(env: Any) -> tuple:
    """Everything an agent or a trainer can read from ``env`` now (it renders as ansi text)."""
    raw = env.unwrapped
    observations = [env.observe(agent) for agent in raw.possible_agents]
    text = env.render()
    assert isinstance(text, str) and text.strip(), "render_mode='ansi' gives no text"
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


def _same_as(env: Any, copies: dict[str, Any], when: str) -> None:
    expected = _snapshot(env)
    kind = "raw" if env is env.unwrapped else "wrapped"
    for how, other in copies.items():
        assert _snapshot(other) == expected, f"{kind} env: the {how} copy differs {when}"


def _play_alike(env: Any, copies: dict[str, Any], rng: np.random.Generator, every: int, when: str) -> None:
    """Play ``env`` and its ``copies`` to the end of the game with the same random moves, checking that they agree
    after every ``every``-th move."""
    for step in range(10_000):
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            return
        action = int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"])))
        for each in (env, *copies.values()):
            each.step(action)
        if step % every == 0:
            _same_as(env, copies, f"{step + 1} moves {when}")
    raise AssertionError("the game did not end in 10,000 random moves")


def _check_copies(name: str, options: dict[str, Any]) -> None:
    for make in (tableenvs.make_raw, tableenvs.make):
        env = make(name, **options, render_mode="ansi")
        env.reset(seed=3)
        _random_steps(env, 15, np.random.default_rng(3))
        copies = {"pickle": pickle.loads(pickle.dumps(env)), "deepcopy": copy.deepcopy(env)}
        _same_as(env, copies, "at once")
        _play_alike(env, copies, np.random.default_rng(4), 1, "after copying")
        for each in (env, *copies.values()):
            each.reset()  # no seed: the copied random generator deals the next game
        _same_as(env, copies, "after reset() without a seed")


def _check_state(name: str, _options: dict[str, Any]) -> None:
    """``get_state`` / ``set_state`` / ``TableEnv.from_state`` (games declaring ``state``): at points of a random game
    the record, through JSON, makes an env (from the record alone, and on a fresh env of the same options) that shows
    everything the game does and continues identically to the end, as the ``copies`` check asks of pickle."""
    import json

    env = tableenvs.make_raw(name, render_mode="ansi")
    rng = np.random.default_rng(8)
    for seed, steps in ((7, 0), (8, 9), (9, 40)):
        env.reset(seed=seed)
        _random_steps(env, steps, rng)
        record = json.loads(json.dumps(env.get_state()))
        loaded = TableEnv.from_state(record, render_mode="ansi")
        fresh = tableenvs.make_raw(name, render_mode="ansi")
        fresh.reset(seed=seed + 1000)  # another game first: set_state must replace all of it
        fresh.set_state(record)
        copies = {"from_state": loaded, "set_state": fresh}
        _same_as(env, copies, f"at once (seed {seed}, {steps} moves)")
        _play_alike(env, copies, rng, 7, f"after restoring (seed {seed})")
        _same_as(env, copies, f"at the end (seed {seed})")


def _check_heuristic(name: str, options: dict[str, Any]) -> None:
    from tableenvs.policies import make_policy

    env = tableenvs.make_raw(name, **options)
    policy = make_policy("heuristic", env)
    rng = np.random.default_rng(len(options))
    for seed in range(12 if set(options) <= {"num_players"} else 4):
        env.reset(seed=seed)
        for _ in range(10_000):
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                break
            observation = env.observe(agent)
            action = policy.act(observation["observation"], observation["action_mask"], rng)
            assert observation["action_mask"][action] == 1, (
                f"seed {seed}: the heuristic played the masked action {action} ({env.describe_action(action)}) "
                f"for {agent}"
            )
            env.step(action)
        else:
            raise AssertionError(f"seed {seed}: the heuristic game did not end in 10,000 moves")


#: Checks run for every (player count x option set).
PER_CASE: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "api": _check_api,
    "render": _check_render,
    "seeds_differ": _check_seeds_differ,
    "spaces": _check_spaces,
    "illegal_raw": _check_illegal_raw,
    "illegal_wrapped": _check_illegal_wrapped,
    "copies": _check_copies,
    "heuristic": _check_heuristic,
    "engine": check_engine,
}


# ---------------------------------------------------------------------- checks run once per game


def _check_registries(name: str, _options: dict[str, Any]) -> None:
    import gymnasium
    import pettingzoo

    spec = tableenvs.spec(name)
    for count in spec.player_counts or (None,):
        options = {} if count is None else {"num_players": count}
        raw = tableenvs.make_raw(name, **options)
        assert type(raw) is spec.raw_env_class() and isinstance(raw, TableEnv), type(raw)
        assert raw.metadata["name"] == name, f"metadata['name'] is {raw.metadata['name']!r}"
        wrapped = tableenvs.make(name, **options)
        assert not isinstance(wrapped, TableEnv) and type(wrapped.unwrapped) is type(raw), "make() is not wrapped"
        by_id = pettingzoo.make("aec", spec.registry_id, **options)
        by_id.reset(seed=0)
        assert type(by_id.unwrapped) is type(raw) and by_id.agents == raw.possible_agents, "pettingzoo.make"
        if count is not None:
            assert raw.num_players == count and len(raw.possible_agents) == count, f"{count} players"
    assert gymnasium.spec(spec.registry_id).kwargs == {"game": name}, "the Gymnasium registration"
    single = gymnasium.make(spec.registry_id, opponents="random")
    observation, _ = single.reset(seed=0)
    assert single.observation_space.contains(observation), "the single-agent view's observation"
    with _raises(TypeError, r"unknown option\(s\) 'players'; valid options: " + ", ".join(spec.option_names())):
        tableenvs.make(name, players=2)


def _check_player_range(name: str, _options: dict[str, Any]) -> None:
    counts = tableenvs.spec(name).player_counts
    default = tableenvs.make_raw(name).num_players
    assert default in counts, f"the default {default} players is not in player_counts {counts}"
    assert list(counts) == list(range(counts[0], counts[-1] + 1)), f"player_counts {counts} is not a range"
    for outside in (counts[0] - 1, counts[-1] + 1):
        with _raises(ValueError, rf"num_players must be in {counts[0]}\.\.{counts[-1]}, got {outside}"):
            tableenvs.make_raw(name, num_players=outside)


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


def layout_table(text: str) -> tuple[list[str], list[int], list[str], int | None]:
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
    """Section name -> offset as the game's encoder declares it (``encoder.observation_layout``, ``encoder.layout()``
    or its module's ``LAYOUT`` class of upper-case offsets), or None if it declares none."""
    encoder = getattr(env, "encoder", None)
    if encoder is None:
        return None
    layout = getattr(encoder, "observation_layout", None)
    if layout is not None:
        return {section.name: section.start for section in layout}
    if callable(getattr(encoder, "layout", None)):
        return {name: start for name, start, _ in encoder.layout()}
    layout = getattr(importlib.import_module(type(encoder).__module__), "LAYOUT", None)
    if layout is None:
        return None
    offsets = {key.lower(): value for key, value in vars(layout).items() if key.isupper() and key != "SIZE"}
    return dict(sorted(offsets.items(), key=lambda item: item[1]))


def check_docs(name: str, page: Path | None) -> None:
    if page is None:  # never: the docs item is skipped without a page
        raise ValueError(f"{name}: the docs check needs the game's docs page")
    text = page.read_text(encoding="utf-8")
    names, offsets, sizes, table_n = layout_table(text)
    spec = tableenvs.spec(name)
    for count in spec.player_counts or (None,):
        env = tableenvs.make_raw(name, **({} if count is None else {"num_players": count}))
        n = count if count is not None else 0
        widths = [_size(size, n) for size in sizes]
        assert sum(widths) == env.observation_size, (
            f"{page.name}, {count} players: the observation table adds up to {sum(widths)}, the encoder to "
            f"{env.observation_size}"
        )
        if table_n is None or table_n == count:
            starts = [sum(widths[:i]) for i in range(len(widths))]
            assert offsets == starts, f"{page.name}, {count} players: offsets {offsets} should be {starts}"
            code = _code_layout(env)
            if code is not None:
                assert list(code) == names, f"{page.name}: the table's sections {names} are {list(code)} in code"
                assert list(code.values()) == offsets, f"{page.name}: offsets {offsets}, in code {list(code.values())}"
    assert table_n is None or table_n in spec.player_counts, f"{page.name}: the table's n = {table_n} is no count"
    env = tableenvs.make_raw(name)
    discrete = re.findall(r"Discrete\((\d+)\)", text)
    assert discrete and set(discrete) == {str(env.num_actions)}, (
        f"{page.name}: Discrete(...) on the page says {sorted(set(discrete))}, the env has {env.num_actions}"
    )
    counts = spec.player_counts or (None,)
    sizes_by_count = {
        tableenvs.make_raw(name, **({} if c is None else {"num_players": c})).observation_size for c in counts
    }
    boxes = set(re.findall(r"Box\(float32, \((\d+),\)\)", text))
    assert boxes == ({str(env.observation_size)} if len(sizes_by_count) <= 1 else set()), (
        f"{page.name}: Box(float32, ...) on the page says {sorted(boxes)}, the env has {sorted(sizes_by_count)}"
    )


def _check_cli_play(name: str, _options: dict[str, Any]) -> None:
    from tableenvs.cli import main

    spec = tableenvs.spec(name)
    policies = "heuristic" if spec.heuristic else "random"
    for count in (spec.player_counts[0], spec.player_counts[-1]) if spec.player_counts else (None,):
        players = [] if count is None else ["--players", str(count)]
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(["play", name, "--quiet", "--seed", "0", "--policies", policies, *players])
        assert code == 0, f"tableenvs play {name} exited {code}"
        agents = tableenvs.make_raw(name, **({} if count is None else {"num_players": count})).possible_agents
        text = out.getvalue()
        assert text.startswith(f"{name}: ") and all(agent in text for agent in agents), text[:200]


#: Checks run once per game (and ``docs``, on the page given to :func:`checks`).
def _check_worlds(name: str, _options: dict[str, Any]) -> None:
    """``sample_world`` (games declaring ``worlds``): at points of two random games, a world sampled for any seat shows
    that seat the same observation and mask and the same agent to act (and, where the game declares ``views`` or
    ``picture``, the same text view and picture), is a state the game's own record reader accepts (``set_state``),
    plays on legally, and is a game of its own (sampling and stepping it leave the real
    game's state record as it was).

    The reader is how a game states what its rules make impossible, public history included (a seat holding a card
    of a suit it showed it lacks): a world that breaks a public constraint the current observation does not show is
    caught there, in any game whose reader checks the history it records."""
    import json

    env = tableenvs.make_raw(name)
    reader = tableenvs.make_raw(name)  # reads each world's state record back
    spec = tableenvs.spec(name)
    shown = [
        method
        for method, capability in (("render_view", "views"), ("render_svg", "picture"))
        if spec.declares(capability)
    ]
    for seed in (5, 6):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        for step in range(10_000):
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                break
            if step % 9 == 0:
                before = json.dumps(env.get_state(), sort_keys=True)
                for seer in env.agents:
                    world = env.sample_world(seer, np.random.default_rng([seed, step]))
                    real, seen = env.observe(seer), world.observe(seer)
                    differ = np.flatnonzero(real["observation"] != seen["observation"])
                    where = f"a world sampled for {seer} at move {step} of seed {seed}"
                    assert len(differ) == 0, f"{where} shows it another observation (entries {differ[:8].tolist()})"
                    assert np.array_equal(real["action_mask"], seen["action_mask"]), f"{where} has another mask"
                    assert world.agent_selection == agent, f"{where} has {world.agent_selection} to act, not {agent}"
                    for method in shown:  # what the seat is shown must not change with what it cannot know
                        assert getattr(world, method)(seer) == getattr(env, method)(seer), f"{where}: {method} differs"
                    try:
                        reader.set_state(world.get_state())
                    except ValueError as error:
                        raise AssertionError(f"{where} is refused by the game's state reader: {error}") from None
                    _random_steps(world, 6, np.random.default_rng(step))
                assert json.dumps(env.get_state(), sort_keys=True) == before, (
                    f"sampling worlds at move {step} of seed {seed} changed the real game"
                )
            env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))
        else:
            raise AssertionError("the game did not end in 10,000 random moves")


PER_GAME: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "registries": _check_registries,
    "player_range": _check_player_range,
    "cli_play": _check_cli_play,
    "state": _check_state,
    "worlds": _check_worlds,
}
