"""Conformance checks that every tableenvs game must pass: ``check_game(name)``.

Where you are: a public module above everything else in the package (nothing in ``tableenvs`` imports it). A game
made anywhere, in its own package, registered with :func:`tableenvs.register_game`, is checked the way the
package's own games are, with no edit to shared code or tests::

    import tableenvs
    from tableenvs.testing import check_game

    tableenvs.register_game(GameSpec("nim_v0", "my_games.nim", "my_games/Nim-v0", player_counts=(2, 3)))
    check_game("nim_v0", docs="docs/nim.md")      # ConformanceError listing every failed check

The checks run for every player count in the spec's ``player_counts`` crossed with every option set in
``option_sets`` (as PettingZoo's ``all_parameter_combs_test`` and OpenSpiel's ``games_sim_test`` do), or once with
the defaults where the option set cannot matter. What a check needs from the game is declared on its
:class:`~tableenvs.core.registry.GameSpec`; a check that does not apply is reported as such, never passed silently:

==========================  ====================================================================================
check                       what it asserts
==========================  ====================================================================================
``api``                     PettingZoo's ``api_test`` and ``seed_test``
``render``                  PettingZoo's ``render_test``: ansi text non-empty, ``rgb_array`` a drawn picture (needs
                            the render extra), ``human`` prints
``seeds_differ``            different seeds deal different games
``registries``              ``make``, ``make_raw``, ``pettingzoo.make``, the Gymnasium id, unknown options named
``player_range``            the default player count is in ``player_counts``; one outside is refused, naming it
``spaces``                  Dict spaces of the classic convention, observations inside them over a random game
``illegal_raw``             an illegal action on the raw env raises, naming the legal ones, and changes nothing
``illegal_wrapped``         an illegal action on the wrapped env ends the game with -1 to the mover
``copies``                  pickle and deepcopy (raw and wrapped) continue identically to the end and one reset on
``heuristic``               the heuristic (``GameSpec.heuristic``) plays only masked actions to the end of games
``engine``                  the engine keeps the protocols of ``tableenvs.core.engine`` (``RestorableEngine`` with
                            ``state``, ``ViewedEngine``'s ``seen_by`` for every seat with ``views``, changing
                            nothing); each move's rewards are None or one finite number per seat; with ``state``
                            the adapter's ``StateReader`` reads engine records back to the same record
``docs``                    the docs page's observation table adds up to the encoder's layout (only with ``docs=``)
``cli_play``                ``tableenvs play NAME --quiet`` plays a whole game at the fewest and most players
``state``                   a ``get_state`` record, through JSON, restores by ``from_state`` and on a fresh env
                            by ``set_state``, and both continue identically to the end (only for games declaring
                            ``state``)
``worlds``                  a world of ``sample_world`` shows its seat the same observation and mask (and text view
                            and picture, where the game declares ``views`` / ``picture``: a leak shows), is a state the
                            game's own reader accepts (``set_state``: so the reader must refuse a record that breaks
                            a public constraint, e.g. a hand contradicting a shown void), plays on, and leaves the
                            real game as it was (only for games declaring ``worlds``)
==========================  ====================================================================================

``tests/test_conformance.py`` runs every check on every registered game, one pytest item each (:func:`checks`).

Tests beyond these checks select games by what their specs declare (the capability fields of
:class:`~tableenvs.core.registry.GameSpec`), never by a list of names: :func:`games` gives the registered games
declaring given capabilities, and :func:`per_game` checks that a table of per-game test data has a row for each of them
(so a new game makes the test fail, naming what to add, instead of being tested less)::

    @pytest.mark.parametrize("name", games("builtin", "worlds"))
    def test_sampled_worlds_keep_the_observation(name): ...

    SHORT = per_game({"pilipili_v0": {"max_rounds": 1}, ...}, "builtin", "picture")  # options of a short game
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import tableenvs
from tableenvs.core.registry import CAPABILITIES
from tableenvs.testing.checks import PER_CASE, PER_GAME, check_docs


class ConformanceError(AssertionError):
    """A game failed one or more conformance checks; the message names each failed check and why."""


Row = TypeVar("Row")


def games(*capabilities: str) -> list[str]:
    """The registered games (sorted) whose :class:`~tableenvs.core.registry.GameSpec` declares every one of
    ``capabilities`` (names in :data:`tableenvs.core.registry.CAPABILITIES`, e.g. ``"builtin"``, ``"heuristic"``,
    ``"worlds"``); ``games()`` is every registered game. An unknown capability is a ``ValueError`` naming them."""
    unknown = [c for c in capabilities if c not in CAPABILITIES]
    if unknown:
        raise ValueError(f"unknown capability {', '.join(map(repr, unknown))}; capabilities: {', '.join(CAPABILITIES)}")
    return [name for name in tableenvs.names() if all(tableenvs.spec(name).declares(c) for c in capabilities)]


def per_game(table: Mapping[str, Row], *capabilities: str) -> dict[str, Row]:
    """``table`` (game name -> that game's test data, e.g. its options for a short game) as a dict in the table's
    order, once checked to have a row for exactly the games of ``games(*capabilities)``; a game missing from it, or
    one in it that is not registered with those capabilities, is a ``ValueError`` naming the game. (A row may be
    empty: the game's "nothing to test here", written down.)"""
    wanted = games(*capabilities)
    declared = f"capabilities {', '.join(capabilities)}" if capabilities else "any capabilities"
    missing = [name for name in wanted if name not in table]
    if missing:
        raise ValueError(f"the table has no row for {', '.join(missing)} (registered with {declared}): add its data")
    extra = [name for name in table if name not in wanted]
    if extra:
        raise ValueError(f"the table has a row for {', '.join(extra)}, which is not registered with {declared}")
    return dict(table)


@dataclass(frozen=True)
class CheckItem:
    """One check of one game with one option set: ``run()`` raises ``AssertionError`` if the game fails it."""

    check: str
    game: str
    options: dict[str, Any]
    run: Callable[[], None]
    skip: str | None = None  # why the check does not apply, or None

    @property
    def id(self) -> str:
        shown = ",".join(f"{key}={value}" for key, value in self.options.items()) or "defaults"
        return f"{self.check}[{self.game}-{shown}]"


def cases(name: str) -> list[dict[str, Any]]:
    """Every (player count x option set) the spec of ``name`` declares, as constructor options."""
    spec = tableenvs.spec(name)
    return [
        dict(option_set) if count is None else {"num_players": count, **option_set}
        for count in spec.player_counts or (None,)
        for option_set in spec.option_sets
    ]


def checks(name: str, *, docs: str | Path | None = None) -> list[CheckItem]:
    """Every check of game ``name`` as separate items (what ``tests/`` parametrises over); ``docs`` is the game's
    page (the ``docs`` check reads its observation table; without it that check does not apply)."""
    spec = tableenvs.spec(name)
    items: list[CheckItem] = []
    for options in cases(name):
        for check, run in PER_CASE.items():
            skip = None
            if check == "heuristic" and spec.heuristic is None:
                skip = "the spec names no heuristic (GameSpec.heuristic)"
            items.append(CheckItem(check, name, options, _bind(run, name, options), skip))
    for check, run in PER_GAME.items():
        skip = None
        if check == "player_range" and not spec.player_counts:
            skip = "the game has no num_players option"
        if check in ("state", "worlds") and not spec.declares(check):
            skip = f"the spec does not declare {check} (GameSpec.{check})"
        items.append(CheckItem(check, name, {}, _bind(run, name, {}), skip))
    page = None if docs is None else Path(docs)
    skip = "no docs page given (check_game(name, docs=PATH))" if page is None else None
    items.append(CheckItem("docs", name, {}, lambda: check_docs(name, page), skip))
    return items


def check_game(name: str, *, docs: str | Path | None = None, progress: bool = False) -> list[CheckItem]:
    """Run every check of game ``name``; return the items run (those that did not apply carry ``skip``). Raise
    :class:`ConformanceError` naming every failed check and why, after running all of them."""
    failures, ran = [], []
    for item in checks(name, docs=docs):
        if progress:
            print(f"{item.id}: {'does not apply: ' + item.skip if item.skip else 'running'}", flush=True)
        if item.skip is not None:
            ran.append(item)
            continue
        try:
            item.run()
        except AssertionError as error:
            failures.append(f"{item.id}: {error}")
        except Exception as error:  # a crash inside the game is a failed check too, with its type
            failures.append(f"{item.id}: {type(error).__name__}: {error}")
        ran.append(item)
    if failures:
        raise ConformanceError(f"{name} fails {len(failures)} conformance check(s):\n" + "\n".join(failures))
    return ran


def _bind(run: Callable[[str, dict[str, Any]], None], name: str, options: dict[str, Any]) -> Callable[[], None]:
    return lambda: run(name, dict(options))
