"""One conformance suite for every registered game, public as
:mod:`tableenvs.testing` (``check_game(name)``), so a game written outside the package is checked alike.

Every game the package registers is checked here, one pytest item per check and option set
(``tableenvs.testing.checks``), its docs page being the one README.md's table of games links. What only this
repository can check stays here: README.md's table of games (a row per game, its player range, its page). The Nim
example (``tableenvs/toy_game.py``) is checked as an outside game would be: registered from a module outside the
package in a fresh process, where a deliberately broken copy (an unmasked illegal action, a misnamed docs section)
must fail ``check_game`` naming the check.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from load_bounds import HANG

import tableenvs
from tableenvs.testing import checks, games

ROOT = Path(__file__).resolve().parents[1]

# The package's own games (GameSpec.builtin; the toy games other test modules register declare nothing, and whether
# those are in ``names()`` here depends on the order pytest imports test modules).
GAMES = games("builtin")


def _docs_page(name: str) -> Path:
    """The game's page, as linked from README.md's table of games."""
    readme = (ROOT / "README.md").read_text()
    row = re.search(rf"^\| `{name}` \|.*\]\((docs/[\w.-]+\.md)\) \|$", readme, flags=re.M)
    assert row, f"README.md's table of games links no docs page for {name}"
    return ROOT / row[1]


ITEMS = [item for name in GAMES for item in checks(name, docs=_docs_page(name))]


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


def test_every_check_applies_to_the_package_games():
    """Each of the package's games has a heuristic, a player count and a docs page: no check is left out."""
    assert [item.id for item in ITEMS if item.skip] == []
    assert {item.check for item in ITEMS} == {
        *("api", "render", "seeds_differ", "spaces", "illegal_raw", "illegal_wrapped", "copies", "heuristic", "engine"),
        *("registries", "player_range", "docs", "cli_play", "state", "worlds"),
    }


@pytest.mark.filterwarnings("ignore:.*ignoring unknown reset option:UserWarning")
@pytest.mark.parametrize("item", ITEMS, ids=[item.id for item in ITEMS])
def test_conformance(item):
    item.run()


@pytest.mark.parametrize("name", [name for name in GAMES if tableenvs.spec(name).player_counts])
def test_readme_lists_the_player_range(name):
    counts = tableenvs.spec(name).player_counts
    readme = (ROOT / "README.md").read_text()
    row = re.search(rf"^\| `{name}` \|.*\| (\d+)[–-](\d+) \|", readme, flags=re.M)
    assert row, f"README.md's table of games has no row for {name}"
    assert (int(row[1]), int(row[2])) == (counts[0], counts[-1])


# ---------------------------------------------------------------------- a game from outside the package

OUTSIDE_GAME = """
    import numpy as np
    from tableenvs.core.wrappers import wrap
    from tableenvs.toy_game import NimEnv

    class OutsideNim(NimEnv):
        metadata = {**NimEnv.metadata, "name": "outside_nim_v0"}

    class UnmaskedNim(OutsideNim):
        \"\"\"Broken on purpose: the mask always allows taking 3, even from a pile of 1 or 2.\"\"\"
        metadata = {**NimEnv.metadata, "name": "unmasked_nim_v0"}

        def _fill_mask(self, mask: np.ndarray) -> None:
            super()._fill_mask(mask)
            mask[2] = 1

    raw_env = OutsideNim

    def env(**options):
        return wrap(OutsideNim(**options))

    def unmasked_env(**options):
        return wrap(UnmaskedNim(**options))
"""

RUN_CHECKS = """
    import sys
    import tableenvs
    from tableenvs.core.registry import GameSpec
    from tableenvs.testing import ConformanceError, check_game

    game, module, page = sys.argv[1:4]
    worlds = sys.argv[4:] == ["worlds"]  # the game declares state and worlds
    spec = GameSpec(game, module, f"outside/{game}-v0", player_counts=(2, 3, 4), state=worlds, worlds=worlds)
    tableenvs.register_game(spec)
    try:
        ran = check_game(game, docs=None if page == "-" else page)
    except ConformanceError as error:
        print(error)
        sys.exit(1)
    print("passed", len(ran), "skipped:", ",".join(sorted({item.check for item in ran if item.skip})))
"""


CARELESS_SAMPLER = """
    from tableenvs.core.wrappers import wrap
    from tableenvs.llama_party.env import LlamaPartyEnv

    class CarelessLlama(LlamaPartyEnv):
        \"\"\"Broken on purpose: its worlds swap the sampling seat's hand, which that seat sees.\"\"\"
        metadata = {**LlamaPartyEnv.metadata, "name": "careless_llama_v0"}

        def _resample_hidden(self, world, seat, rng):
            super()._resample_hidden(world, seat, rng)
            hands = world.game.hands
            other = (seat + 1) % len(hands)
            hands[seat], hands[other] = hands[other], hands[seat]

    raw_env = CarelessLlama

    def env(**options):
        return wrap(CarelessLlama(**options))
"""


FORGETFUL_STATE = """
    import numpy as np

    from tableenvs.core.wrappers import wrap
    from tableenvs.llama_party.env import LlamaPartyEnv

    class ForgetfulLlama(LlamaPartyEnv):
        \"\"\"Broken on purpose: a restored game forgets its generator, so later rounds are dealt otherwise.\"\"\"
        metadata = {**LlamaPartyEnv.metadata, "name": "forgetful_llama_v0"}

        def set_state(self, state):
            super().set_state(state)
            self.game.rng = np.random.default_rng(0)

    raw_env = ForgetfulLlama

    def env(**options):
        return wrap(ForgetfulLlama(**options))
"""


def _check_outside(
    tmp_path: Path, game: str, module: str, page: Path | None, *flags: str
) -> subprocess.CompletedProcess:
    (tmp_path / "outside_nim.py").write_text(textwrap.dedent(OUTSIDE_GAME))
    (tmp_path / "unmasked_nim.py").write_text("from outside_nim import UnmaskedNim as raw_env, unmasked_env as env\n")
    (tmp_path / "careless_llama.py").write_text(textwrap.dedent(CARELESS_SAMPLER))
    (tmp_path / "forgetful_llama.py").write_text(textwrap.dedent(FORGETFUL_STATE))
    (tmp_path / "run_checks.py").write_text(textwrap.dedent(RUN_CHECKS))
    return subprocess.run(
        [sys.executable, "run_checks.py", game, module, "-" if page is None else str(page), *flags],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=HANG,
    )


def test_a_game_from_outside_the_package_passes_check_game(tmp_path):
    done = _check_outside(tmp_path, "outside_nim_v0", "outside_nim", ROOT / "docs" / "adding-a-game.md")
    assert done.returncode == 0, done.stdout + done.stderr
    stdout = done.stdout
    assert stdout.startswith("passed ") and stdout.rstrip().endswith("skipped: heuristic,state,worlds"), stdout


def test_an_unmasked_illegal_action_fails_check_game(tmp_path):
    done = _check_outside(tmp_path, "unmasked_nim_v0", "unmasked_nim", ROOT / "docs" / "adding-a-game.md")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "unmasked_nim_v0 fails" in done.stdout and "conformance check(s)" in done.stdout
    assert re.search(r"^(api|copies|spaces)\[unmasked_nim_v0-", done.stdout, flags=re.M), done.stdout


def test_a_misnamed_docs_section_fails_check_game(tmp_path):
    page = tmp_path / "nim.md"
    guide = (ROOT / "docs" / "adding-a-game.md").read_text()
    page.write_text(guide.replace("| `my_turn` | 1 | 1 |", "| `your_turn` | 1 | 1 |"))
    assert page.read_text() != guide
    done = _check_outside(tmp_path, "outside_nim_v0", "outside_nim", page)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "docs[outside_nim_v0-defaults]: nim.md: the table's sections ['pile', 'your_turn', 'to_act']" in done.stdout


def test_a_sampler_that_ignores_what_a_seat_sees_fails_check_game(tmp_path):
    """Issue 27: a game from outside whose sample_world breaks a constraint the seat has observed (here its own hand)
    fails the conformance check, and only the worlds check."""
    done = _check_outside(tmp_path, "careless_llama_v0", "careless_llama", None, "worlds")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "careless_llama_v0 fails 1 conformance check(s)" in done.stdout, done.stdout
    pattern = r"^worlds\[careless_llama_v0-defaults\]: a world sampled for player_\d at move \d+ of seed 5 shows it"
    assert re.search(pattern + " another observation", done.stdout, flags=re.M), done.stdout


def test_a_state_record_that_does_not_restore_the_game_fails_check_game(tmp_path):
    """A game from outside whose restored state forgets its generator (later deals differ) fails the state check,
    and only it: a record must give back the whole game, its future included."""
    done = _check_outside(tmp_path, "forgetful_llama_v0", "forgetful_llama", None, "worlds")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "forgetful_llama_v0 fails 1 conformance check(s)" in done.stdout, done.stdout
    pattern = r"^state\[forgetful_llama_v0-defaults\]: raw env: the (from_state|set_state) copy differs \d+ moves after"
    assert re.search(pattern, done.stdout, flags=re.M), done.stdout
