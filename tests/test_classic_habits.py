"""PettingZoo-classic habits: ``from tableenvs import pilipili_v0; pilipili_v0.env()``, a clear error
for ``pettingzoo.make("parallel", ...)``, ``api_test`` without the warnings the Dict observation convention
triggers, and the command line's ``--version`` and clean help texts."""

from __future__ import annotations

import importlib
import warnings

import pettingzoo
import pytest
from pettingzoo.test import api_test

import tableenvs
from tableenvs.core.registry import spec
from tableenvs.testing import games

#: The games the package ships (GameSpec.builtin: a game registered by a test or a user has no module under
#: tableenvs/, and declares nothing).
SHIPPED = games("builtin")


def test_every_shipped_game_has_a_classic_module():
    assert len(SHIPPED) == 3, SHIPPED


@pytest.mark.parametrize("name", SHIPPED)
def test_classic_module_gives_env_and_raw_env(name):
    module = importlib.import_module(f"tableenvs.{name}")
    assert module.raw_env is spec(name).raw_env_class()
    env = module.env()
    assert type(env) is type(tableenvs.make(name))
    assert env.unwrapped.metadata["name"] == name
    env.reset(seed=3)
    reference = tableenvs.make(name)
    reference.reset(seed=3)
    agent = env.agent_selection
    assert agent == reference.agent_selection
    assert (env.observe(agent)["observation"] == reference.observe(agent)["observation"]).all()


@pytest.mark.parametrize("name", SHIPPED)
def test_api_test_warns_no_more_than_pettingzoo_classic(name):
    module = importlib.import_module(f"tableenvs.{name}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(module.env(), num_cycles=300, verbose_progress=False)
    messages = [str(warning.message) for warning in caught]
    assert len(messages) <= 2, messages
    # the one left: api_test resets with options={"options": 1}, which every game names as an unknown reset option
    assert all("unknown reset option(s) 'options'" in message for message in messages), messages


def test_only_the_two_dict_observation_lists_are_extended():
    importlib.import_module("tableenvs.pilipili_v0")
    module = importlib.import_module("pettingzoo.test.api_test")
    assert "pilipili_v0" in module.env_obs_dicts and "pilipili_v0" in module.env_obs_space
    for other in ("env_all_zeros_obs", "env_diff_obs_shapes", "env_graphical_obs", "env_pos_inf_obs"):
        assert "pilipili_v0" not in getattr(module, other)


def test_parallel_make_says_the_game_is_turn_based():
    with pytest.raises(ValueError, match=r"turn-based game: it has no parallel API.*pettingzoo.make\('aec'"):
        pettingzoo.make("parallel", "tableenvs/PiliPili-v0")
    assert isinstance(pettingzoo.make("aec", "tableenvs/PiliPili-v0"), pettingzoo.AECEnv)


def test_version_flag(cli):
    code, text, _ = cli(["--version"])
    assert code == 0 and text.strip() == f"tableenvs {tableenvs.__version__}"


@pytest.mark.parametrize("command", [[], ["list"], ["play"], ["replay"], ["train"], ["eval"]])
def test_help_texts_have_no_markup(command, cli):
    code, text, _ = cli([*command, "--help"])
    assert code == 0 and text.startswith("usage: tableenvs")
    for markup in ("``", "%%", ":mod:", ":func:", ":class:", ":meth:"):
        assert markup not in text, (command, markup)
