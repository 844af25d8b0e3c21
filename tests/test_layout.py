"""The shared encoder shape (``tableenvs.core.layout``): the Layout class, and every registered game's encoder keeping
the Encoder protocol the adapters rely on."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tableenvs
from tableenvs.core.layout import Layout
from tableenvs.testing import games

ROOT = Path(__file__).resolve().parents[1]
GAMES = games("builtin")  # the package's own games, not the toy games other test modules register


def test_layout_offsets_slices_and_views():
    layout = Layout([("hand", 3, "cards in hand"), ("grid", (2, 4)), ("flag", 1, "a flag")])
    assert layout.offsets() == {"hand": 0, "grid": 3, "flag": 11}
    assert (layout.HAND, layout.GRID, layout.FLAG, layout.SIZE, layout.size) == (0, 3, 11, 12, 12)
    assert layout["grid"].slice == slice(3, 11) and layout["grid"].size == 8 and len(layout) == 3
    observation = np.arange(12, dtype=np.float32)
    view = layout.view(observation, "grid")
    assert view.shape == (2, 4) and view[1, 0] == 7
    view[0, 0] = -1  # a view: writes go to the observation
    assert observation[3] == -1
    assert layout.markdown_table().splitlines()[3] == "| `grid` | 3 | 2 x 4 |  |"


def test_layout_refuses_bad_names_and_shapes():
    with pytest.raises(ValueError, match="section name 'hand' is taken"):
        Layout([("hand", 3), ("hand", 2)])
    with pytest.raises(ValueError, match="section name 'size' is taken"):
        Layout([("size", 3)])
    with pytest.raises(KeyError, match="no section 'deck'; sections: hand"):
        Layout([("hand", 3)])["deck"]
    with pytest.raises(ValueError, match=r"has shape \(3,\), got \(4,\)"):
        Layout([("hand", 3)]).view(np.zeros(4), "hand")


@pytest.mark.parametrize("name", GAMES)
def test_encoder_keeps_the_protocol_the_adapter_uses(name):
    """Size, bounds and layout agree with the env's spaces; observations, masks and action texts the env gives
    are the encoder's, along a seeded random game."""
    for count in tableenvs.spec(name).player_counts:
        env = tableenvs.make_raw(name, num_players=count)
        encoder = env.encoder
        space = env.observation_space(env.possible_agents[0])["observation"]
        assert isinstance(encoder.observation_layout, Layout)
        assert encoder.size == encoder.observation_layout.size == env.observation_size
        assert np.array_equal(encoder.low, space.low) and np.array_equal(encoder.high, space.high)
        env.reset(seed=count)
        rng = np.random.default_rng(count)
        for _ in range(40):
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                break
            seat = env.agent_name_mapping[agent]
            expected = np.zeros(encoder.size, np.float32)
            encoder.fill_observation(env.game, seat, expected)
            mask = np.zeros(env.num_actions, np.int8)
            encoder.fill_mask(env.game, mask)
            observation = env.observe(agent)
            assert np.array_equal(observation["observation"], expected)
            assert np.array_equal(observation["action_mask"], mask)
            action = int(rng.choice(np.flatnonzero(mask)))
            assert env._describe_action(action) == encoder.describe(env.game, action)
            env.step(action)


def _fixed_size(name: str) -> bool:
    counts = tableenvs.spec(name).player_counts
    return len({tableenvs.make_raw(name, num_players=count).observation_size for count in counts}) == 1


#: Games whose observation size does not depend on the player count (the others show sizes as formulas in their
#: docs table, checked section by section against the layout in test_conformance.py).
FIXED_SIZE_GAMES = [name for name in GAMES if _fixed_size(name)]


def test_some_games_have_fixed_sizes():
    assert "rummikub_v0" in FIXED_SIZE_GAMES and "llama_party_v0" in FIXED_SIZE_GAMES


@pytest.mark.parametrize("name", FIXED_SIZE_GAMES)
def test_docs_table_is_printed_from_the_layout(name):
    """The docs page's observation table is ``Layout.markdown_table()``, verbatim."""
    page = ROOT / "docs" / f"{name.removesuffix('_v0')}.md"
    assert tableenvs.make_raw(name).encoder.observation_layout.markdown_table() in page.read_text()
