"""The written contract of ``tableenvs.core``: the hooks table of ``TableEnv`` is complete and true."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tableenvs
from tableenvs import testing
from tableenvs.core import table_env
from tableenvs.core.table_env import TableEnv
from tableenvs.toy_game import NimEnv


def _table_hooks() -> dict[str, str]:
    """Hook name -> its "when" column, read from the table in the module docstring of tableenvs.core.table_env."""
    pattern = r"^``(_\w+)\([^`]*\)``\s+(required|default|views|picture|state|worlds)\b"
    return dict(re.findall(pattern, table_env.__doc__ or "", re.M))


def _adapters() -> list[type]:
    return [tableenvs.spec(name).raw_env_class() for name in testing.games()] + [NimEnv]


def test_the_table_lists_hooks_of_the_base():
    hooks = _table_hooks()
    assert len(hooks) >= 20  # the table was read, not an empty match
    for name in hooks:
        assert callable(getattr(TableEnv, name, None)), f"the table lists {name}, which TableEnv does not have"


def test_the_table_has_fewer_than_21_required_hooks():
    """Issue 27: fewer required hooks than the 21 the old base had; most have defaults or belong to a capability."""
    hooks = _table_hooks()
    assert sorted(name for name, when in hooks.items() if when == "required") == ["_apply", "_render_text", "_start"]


@pytest.mark.parametrize("adapter", _adapters(), ids=lambda cls: cls.__name__)
def test_every_hook_a_game_overrides_is_in_the_table(adapter):
    """A private method of the base that a game overrides is a hook, so it must be in the one table."""
    hooks = _table_hooks()
    base_private = {name for name in dir(TableEnv) if name.startswith("_") and not name.startswith("__")}
    overridden = {name for name in vars(adapter) if name in base_private and callable(vars(adapter)[name])}
    assert overridden - set(hooks) == set()


@pytest.mark.parametrize("adapter", _adapters(), ids=lambda cls: cls.__name__)
def test_every_required_hook_is_written(adapter):
    for name, when in _table_hooks().items():
        if when == "required":
            assert getattr(adapter, name) is not getattr(TableEnv, name), f"{adapter.__name__} lacks {name}"


@pytest.mark.parametrize("name", testing.games())
def test_every_engine_keeps_the_engine_protocol(name):
    """The started engine of every registered game is an ``Engine``; with the ``state`` capability, a
    ``RestorableEngine`` whose generator is the env's own (the state API re-points it in a clone and a world)."""
    from tableenvs.core.engine import Engine, RestorableEngine

    env = tableenvs.make_raw(name)
    env.reset(seed=3)
    assert isinstance(env.game, Engine)
    if tableenvs.spec(name).declares("state"):
        assert isinstance(env.game, RestorableEngine)
        assert env.clone().game.rng is not env.game.rng
        if tableenvs.spec(name).declares("worlds"):
            world = env.sample_world(env.agent_selection, np.random.default_rng(0))
            assert world.game.rng is world._rng and world.game.rng is not env.game.rng


def test_a_game_without_a_restorable_engine_says_so():
    env = NimEnv()
    env.reset(seed=0)
    with pytest.raises(NotImplementedError, match=r"nim_v0 has no clone\(\).*copy\(rng\) and to_record\(\)"):
        env.clone()
    with pytest.raises(NotImplementedError, match=r"nim_v0 has no get_state\(\)"):
        env.get_state()


class _NimWithBadRewards(NimEnv):
    metadata = {**NimEnv.metadata, "name": "nim_bad_rewards_v0"}

    def _apply(self, action):
        rewards = super()._apply(action)
        return None if rewards is None else rewards[:1]  # one number, not one per seat


@pytest.mark.parametrize(
    "cls, views, said",
    [
        (NimEnv, True, r"is no ViewedEngine \(seen_by\)"),  # declares views, but its engine has no seen_by
        (_NimWithBadRewards, False, r"the move's rewards .* are not one number per seat"),
        (NimEnv, False, None),  # Nim as it is passes
    ],
)
def test_the_engine_check_catches_a_missing_seen_by_and_rewards_not_one_per_seat(cls, views, said, monkeypatch):
    """The ``engine`` check of ``check_game`` on Nim variants, each made through a spec saying what it declares."""
    from tableenvs.testing.engine_check import check_engine

    declared = tableenvs.GameSpec("nim_check_v0", "tableenvs.toy_game", "check/Nim-v0", views=views)
    monkeypatch.setattr(tableenvs, "spec", lambda name: declared)
    monkeypatch.setattr(tableenvs, "make_raw", lambda name, **options: cls(**options))
    if said is None:
        check_engine("nim_check_v0", {})
    else:
        with pytest.raises(AssertionError, match=said):
            check_engine("nim_check_v0", {})


class _StaleReader:
    """Reads every record as the first one it was given (a reader that ignores what it reads)."""

    def __init__(self, inner):
        self.inner, self.first = inner, None

    def read(self, record, rng):
        self.first = record if self.first is None else self.first
        return self.inner.read(self.first, rng)


class _OtherGeneratorReader:
    """Reads the record right, but the engine draws from a generator of its own (not the one it was given)."""

    def __init__(self, inner):
        self.inner = inner

    def read(self, record, rng):
        game = self.inner.read(record, rng)
        game.rng = np.random.default_rng(0)
        return game


@pytest.mark.parametrize(
    "reader, said",
    [
        (_StaleReader, r"the engine read back from its record writes another record"),
        (_OtherGeneratorReader, r"does not draw from the generator it was given"),
        (None, None),  # the game's own reader passes
    ],
)
@pytest.mark.parametrize("name", testing.games("state"))
def test_the_engine_check_holds_the_state_reader_to_its_records(name, reader, said, monkeypatch):
    """The ``engine`` check reads sampled engine records back with the adapter's ``_state_reader()`` (a
    ``StateReader``): a reader that ignores the record, or hands back an engine on another generator, fails."""
    from tableenvs.core.engine import StateReader
    from tableenvs.testing.engine_check import check_engine

    cls = tableenvs.spec(name).raw_env_class()
    own = cls._state_reader
    assert isinstance(own(tableenvs.make_raw(name)), StateReader)
    if reader is None:
        check_engine(name, {})
        return
    monkeypatch.setattr(cls, "_state_reader", lambda self: reader(own(self)))
    with pytest.raises(AssertionError, match=said):
        check_engine(name, {})
