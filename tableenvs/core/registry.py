"""Environments by name: ``make``, ``make_raw``, ``names``, and the PettingZoo and Gymnasium registrations.

Where you are: :mod:`tableenvs.core`, the shared base under every game. Each game has one :class:`GameSpec`, the
only way the layers above the games know it: the games tableenvs ships are listed in :mod:`tableenvs.games`; an
installed package declares its own in the entry-point group ``tableenvs.games`` (:func:`discover_games`, run by
:func:`names` and :func:`spec`), and a script may call :func:`register_game`. Registering a game puts it in three
registries at once:

* tableenvs' own: ``tableenvs.make("pilipili_v0")`` (the AEC env, wrapped as PettingZoo classic envs are);
* PettingZoo's: ``pettingzoo.make("aec", "tableenvs/PiliPili-v0")`` (the same wrapped AEC env). The games are
  turn-based, so they have no parallel API; the id is also put in PettingZoo's parallel registry, under an entry
  point that raises a ``ValueError`` saying so and naming the AEC call (PettingZoo's own "namespace not found"
  would hide the reason);
* Gymnasium's: ``gymnasium.make("tableenvs/PiliPili-v0", opponents="heuristic")``, the single-agent view
  (:class:`tableenvs.training.single_agent.SingleAgentEnv`). In a fresh process (a ``SubprocVecEnv`` worker) write
  ``"tableenvs:tableenvs/PiliPili-v0"`` so Gymnasium imports tableenvs first.

Game modules are imported only when a game is made (registries store entry-point strings), so
``import tableenvs`` stays fast and never imports torch.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

from pettingzoo import AECEnv

from tableenvs.core.wrappers import wrap


@dataclass(frozen=True)
class GameSpec:
    """How to find one environment.

    ``module`` must define ``raw_env`` (a :class:`tableenvs.core.table_env.TableEnv` subclass) and ``env(**options)``
    (the wrapped env). ``heuristic`` is ``"module:Class"`` of the game's built-in heuristic policy.
    ``player_counts`` lists every ``num_players`` the game accepts (empty: the game has no such option) and
    ``option_sets`` a few option combinations worth testing (``{}`` = the defaults); the conformance suite
    (``tests/test_conformance.py``) plays every player count with every option set.

    The rest declare what the game has beyond the :class:`~tableenvs.core.table_env.TableEnv` basics
    (:data:`CAPABILITIES`; ``heuristic`` is one too). Tests select games by them
    (``tableenvs.testing.games("worlds")``), never by name, and each defaults to "not declared": a game registered from
    outside is assumed to have none of them.
    """

    name: str  # tableenvs name, e.g. "pilipili_v0"
    module: str  # e.g. "tableenvs.pilipili.env"
    registry_id: str  # PettingZoo and Gymnasium id, e.g. "tableenvs/PiliPili-v0"
    heuristic: str | None = None
    player_counts: tuple[int, ...] = ()
    option_sets: tuple[Mapping[str, Any], ...] = field(default=({},), hash=False)
    # one of the games tableenvs ships: tests/ runs its game-independent tests on it (with its rows in their tables)
    builtin: bool = False
    state: bool = False  # clone(), get_state() / set_state() and TableEnv.from_state
    worlds: bool = False  # sample_world(agent, rng), which the search policies need (and state, which it builds on)
    views: bool = False  # render_view(agent) and describe_action_public(action): the table as one seat knows it
    picture: bool = False  # render_svg(agent) and render_mode="rgb_array": the table drawn (god view and per seat)
    # "module:attr" of the game's OpenSpielTitle (tableenvs.core.declarations): tableenvs.openspiel bridges it, as the
    # pyspiel game "tableenvs_<name>"
    openspiel: str | None = None
    # What the layers above the games read of it (each "module:attr" string is imported only when used):
    # the setting the bare policy name "search" plays (tableenvs.policies.search)
    search_default: str = "search"
    # derived model inputs by name -> "module:Class" (tableenvs.policies.input_features; a model file names them)
    input_features: Mapping[str, str] = field(default_factory=dict, hash=False)
    # candidate plays a candidate-scoring model reads, by name -> "module:Class" (the same module)
    candidates: Mapping[str, str] = field(default_factory=dict, hash=False)
    # the input_features name the search-clone training recipe appends to the observation (None: the observation)
    clone_features: str | None = None
    # the game's own training recipes, by name -> "module:attr" of a ScorerRecipe (tableenvs.core.declarations)
    recipes: Mapping[str, str] = field(default_factory=dict, hash=False)
    # "module:factory" of its compiled batched engine (tableenvs.vector.make), imported on first use; None: it has none
    batched: str | None = None
    # "module:factory" of its heuristic for a whole batch (tableenvs.vector.batched_heuristic): factory(game) takes
    # the BatchedGame and returns a tableenvs.vector.BatchedPolicy choosing as the Python heuristic; None: it has none
    batched_heuristic: str | None = None
    # candidate plays for a whole batch, by the candidates' name -> "module:factory" (tableenvs.vector.candidates):
    # factory(games, env) gives each row's single action or its candidates, as the named candidates class would
    batched_candidates: Mapping[str, str] = field(default_factory=dict, hash=False)

    def declares(self, capability: str) -> bool:
        """Whether the spec declares ``capability`` (one of :data:`CAPABILITIES`; ``ValueError`` naming them if not)."""
        if capability not in CAPABILITIES:
            raise ValueError(f"unknown capability {capability!r}; capabilities: {', '.join(CAPABILITIES)}")
        return bool(getattr(self, capability))

    def load(self, field_name: str, key: str | None = None) -> Any:
        """The object a ``"module:attr"`` field names (``key``: the entry of a mapping field), imported now;
        ``ValueError`` saying the game declares none."""
        value = getattr(self, field_name)
        if key is not None:
            if key not in value:
                known = ", ".join(value) or "none"
                what = field_name.replace("_", " ")
                raise ValueError(f"{self.name} declares no {what} named {key!r}; it declares: {known}")
            value = value[key]
        if not value:
            raise ValueError(f"{self.name} declares no {field_name.replace('_', ' ')}")
        return load_attr(value, f"{self.name}'s {field_name}")

    def raw_env_class(self) -> type[Any]:
        return importlib.import_module(self.module).raw_env

    def option_names(self) -> list[str]:
        """Constructor options of the raw env (``render_mode`` included)."""
        params = inspect.signature(self.raw_env_class().__init__).parameters
        return [p for p in params if p != "self"]


def load_attr(target: str, what: str) -> Any:
    """The attribute ``"module:attr"`` names, imported now; ``ValueError`` in one line (``what`` says whose it is)."""
    module, sep, attr = target.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"{what}: {target!r} is not 'module:attr'")
    try:
        return getattr(importlib.import_module(module), attr)
    except ImportError as error:
        raise ValueError(f"{what}: cannot import {module!r} ({error})") from None
    except AttributeError:
        raise ValueError(f"{what}: module {module!r} has no attribute {attr!r}") from None


#: The :class:`GameSpec` fields that declare a capability (``heuristic``: the spec names a heuristic policy).
CAPABILITIES = ("builtin", "heuristic", "state", "worlds", "views", "picture", "openspiel")

_GAMES: dict[str, GameSpec] = {}


def register_game(spec: GameSpec) -> None:
    """Add a game to the tableenvs registry (and PettingZoo's, under ``spec.registry_id``)."""
    if spec.name in _GAMES:
        raise ValueError(f"an environment named {spec.name!r} is already registered")
    _GAMES[spec.name] = spec
    _register_with_pettingzoo(spec)
    _register_with_gymnasium(spec)


#: The entry-point group an installed package declares its games in: ``name = "module:attr"``, the attribute a
#: :class:`GameSpec` (docs/adding-a-game.md, "Installing a game").
ENTRY_POINT_GROUP = "tableenvs.games"

#: Entry points that could not be loaded: entry-point name -> the one-line reason (:func:`spec` raises it).
_BROKEN: dict[str, str] = {}
_discovered = False


def discover_games() -> None:
    """Register the games installed packages declare in :data:`ENTRY_POINT_GROUP` (once per process; :func:`names`,
    :func:`spec` and so :func:`make` call it). A bad entry point is skipped with a one-line warning, and asking
    for its name raises that line; an entry point of a name already registered must be that very spec."""
    global _discovered
    if _discovered:
        return
    _discovered = True
    import warnings
    from importlib.metadata import entry_points

    for point in entry_points(group=ENTRY_POINT_GROUP):
        package = f", package {point.dist.name}" if point.dist is not None else ""
        where = f"entry point {point.name} = {point.value!r} (group {ENTRY_POINT_GROUP}{package})"
        try:
            game = load_attr(point.value, where)
            if not isinstance(game, GameSpec):
                raise ValueError(f"{where}: is a {type(game).__name__}, not a tableenvs GameSpec")
            if game.name != point.name:
                raise ValueError(f"{where}: names the game {game.name!r}; the entry point's name must be the same")
            if _GAMES.get(game.name, game) != game:
                raise ValueError(f"{where}: another game named {game.name!r} is already registered")
            if game.name not in _GAMES:
                register_game(game)
        except Exception as error:  # a package's own code may raise anything: it becomes the one line
            said = str(error).splitlines()[0] if str(error) else type(error).__name__
            _BROKEN[point.name] = said if said.startswith(where) else f"{where}: {type(error).__name__}: {said}"
            warnings.warn(f"tableenvs: skipped {_BROKEN[point.name]}", RuntimeWarning, stacklevel=2)


def names() -> list[str]:
    """Names accepted by :func:`make`, sorted: the registered games and those installed packages declare."""
    discover_games()
    return sorted(_GAMES)


def spec(name: str) -> GameSpec:
    """The :class:`GameSpec` of ``name``; ``ValueError`` listing the valid names if unknown."""
    try:
        return _GAMES[name]
    except (KeyError, TypeError):
        pass
    discover_games()
    if isinstance(name, str) and name in _GAMES:
        return _GAMES[name]
    if isinstance(name, str) and name in _BROKEN:
        raise ValueError(f"environment {name!r} cannot be loaded: {_BROKEN[name]}") from None
    raise ValueError(f"unknown environment {name!r}; available: {', '.join(names())}") from None


def make_raw(name: str, **options: Any) -> Any:
    """The unwrapped env ``name`` built with ``options`` (raises on illegal actions instead of ending the game)."""
    game = spec(name)
    check_option_names(game, options)
    return game.raw_env_class()(**options)


def make(name: str, **options: Any) -> AECEnv:
    """The env ``name`` wrapped as PettingZoo classic envs are (an illegal move ends the game, -1 to the mover)."""
    return wrap(make_raw(name, **options))


def check_option_names(game: GameSpec, options: dict[str, Any], wrapper_options: tuple[str, ...] = ()) -> None:
    """``TypeError`` listing the valid options if ``options`` has a key that is neither the game's option nor one
    of ``wrapper_options`` (the options of a wrapper that passes the rest to the game, e.g. the single-agent env)."""
    valid = game.option_names()
    unknown = sorted(set(options) - set(valid) - set(wrapper_options))
    if unknown:
        own = f"; {', '.join(wrapper_options)} for the wrapper" if wrapper_options else ""
        raise TypeError(
            f"{game.name}: unknown option(s) {', '.join(map(repr, unknown))}; valid options: "
            f"{', '.join(valid)} for the game{own}"
        )


def _register_with_pettingzoo(game: GameSpec) -> None:
    import pettingzoo

    if game.registry_id not in pettingzoo.aec_registry:
        pettingzoo.register("aec", game.registry_id, entry_point=f"{game.module}:env")
    if game.registry_id not in pettingzoo.parallel_registry:
        pettingzoo.register("parallel", game.registry_id, entry_point=functools.partial(_no_parallel_api, game))


def _no_parallel_api(game: GameSpec, **options: Any) -> NoReturn:
    """The parallel registry's entry point for a turn-based game: a ``ValueError`` naming the AEC calls."""
    raise ValueError(
        f"{game.registry_id} ({game.name}) is a turn-based game: it has no parallel API. Make the AEC env with "
        f"pettingzoo.make('aec', {game.registry_id!r}) or tableenvs.make({game.name!r})"
    )


def _register_with_gymnasium(game: GameSpec) -> None:
    import gymnasium

    if game.registry_id not in gymnasium.registry:
        gymnasium.register(
            id=game.registry_id,
            entry_point="tableenvs.training.single_agent:SingleAgentEnv",
            kwargs={"game": game.name},
        )
