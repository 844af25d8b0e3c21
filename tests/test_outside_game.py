"""Issue 27's outsider: a fourth game written from docs/adding-a-game.md in its own package
(``examples/trick_taking/``), registered with ``tableenvs.register_game``, passes ``tableenvs.testing.check_game`` with
no edit to shared code, tests or README; and the check catches a world sampler that ignores a public constraint (the
suits a seat showed it lacks) and a misnamed section on the game's docs page.

Each check runs in a fresh process with ``examples/`` (and the repository, for ``tableenvs``) on the path, never
``tests/``, as a user's project would run it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from load_bounds import HANG

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

RUN_CHECKS = """
    import dataclasses
    import sys

    import tableenvs
    from tableenvs.testing import ConformanceError, check_game
    from trick_taking import DOCS, SPEC

    name, module, page = sys.argv[1:4]
    if name != SPEC.name:  # a broken variant: the same spec under its own name and module
        SPEC = dataclasses.replace(SPEC, name=name, module=module, registry_id=f"outside/{name}")
    tableenvs.register_game(SPEC)
    try:
        skipped = [item.check for item in check_game(name, docs=DOCS if page == "-" else page) if item.skip]
    except ConformanceError as error:
        sys.exit(str(error))  # on stderr, exit status 1
    print("passed; skipped:", skipped)
"""

CARELESS_SAMPLER = """
    \"\"\"Broken on purpose: its worlds deal the hidden cards at random, ignoring the suits a seat showed it lacks
    (a public constraint the current observation does not show).\"\"\"

    from tableenvs.core.wrappers import wrap
    from trick_taking.env import TrickTakingEnv


    class CarelessTricks(TrickTakingEnv):
        metadata = {**TrickTakingEnv.metadata, "name": "careless_tricks_v0"}

        def _resample_hidden(self, world, seat, rng):
            game = world.game
            holders = [s for s in range(game.num_players) if s != seat]
            pool = rng.permutation([card for s in holders for card in game.hands[s]] + game.undealt).tolist()
            for s in holders:
                size = len(game.hands[s])
                game.hands[s], pool = sorted(pool[:size]), pool[size:]
            game.undealt = sorted(pool)


    raw_env = CarelessTricks


    def env(**options):
        return wrap(CarelessTricks(**options))
"""


def _check(tmp_path: Path, name: str, module: str, page: Path | None = None) -> subprocess.CompletedProcess:
    (tmp_path / "run_checks.py").write_text(textwrap.dedent(RUN_CHECKS))
    (tmp_path / "careless_tricks.py").write_text(textwrap.dedent(CARELESS_SAMPLER))
    path = os.pathsep.join([str(EXAMPLES), str(ROOT), os.environ.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "run_checks.py", name, module, "-" if page is None else str(page)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=HANG,
    )


def test_the_trick_taking_game_passes_every_check(tmp_path):
    done = _check(tmp_path, "trick_taking_v0", "trick_taking.env")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == "passed; skipped: []\n", done.stdout  # every check applies


def _fails_one_check(done: subprocess.CompletedProcess, name: str) -> str:
    """The failure report of a run that must fail exactly one check."""
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{name} fails 1 conformance check(s)" in done.stderr, done.stderr
    return done.stderr


def test_a_sampler_that_ignores_shown_voids_fails_the_worlds_check(tmp_path):
    report = _fails_one_check(_check(tmp_path, "careless_tricks_v0", "careless_tricks"), "careless_tricks_v0")
    pattern = (
        r"^worlds\[careless_tricks_v0-defaults\]: a world sampled for player_\d at move \d+ of seed \d is refused by "
        r"the game's state reader: careless_tricks_v0: set_state: rules\.hands\[\d\]: holds .+ of a suit it showed it "
        r"lacks$"
    )
    assert re.search(pattern, report, flags=re.M), report


def test_a_misnamed_docs_section_fails_the_docs_check(tmp_path):
    page = tmp_path / "trick_taking.md"
    text = (EXAMPLES / "trick_taking" / "trick_taking.md").read_text()
    page.write_text(text.replace("| `played` | 52 | 52 |", "| `seen` | 52 | 52 |"))
    report = _fails_one_check(_check(tmp_path, "trick_taking_v0", "trick_taking.env", page), "trick_taking_v0")
    assert "docs[trick_taking_v0-defaults]: trick_taking.md: the table's sections ['hand', 'seen', " in report, report
