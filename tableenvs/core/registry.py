"""Environments by name: ``make``, ``make_raw``, ``names``, and the PettingZoo and Gymnasium registrations.

Where you are: :mod:`tableenvs.core`, the shared base under every game. Each game has one :class:`GameSpec`:
the games tableenvs ships are listed in :mod:`tableenvs.games`, and a game from outside calls
:func:`register_game` with its own. Registering a game puts it in three registries at once:

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
    openspiel: bool = False  # tableenvs.openspiel bridges it, as the pyspiel game "tableenvs_<name>"
    batched: str | None = None  # "module:factory" of its batched engine (make_batched(num_envs, **options))

    def declares(self, capability: str) -> bool:
        """Whether the spec declares ``capability`` (one of :data:`CAPABILITIES`; ``ValueError`` naming them if not)."""
        if capability not in CAPABILITIES:
            raise ValueError(f"unknown capability {capability!r}; capabilities: {', '.join(CAPABILITIES)}")
        return bool(getattr(self, capability))

    def raw_env_class(self) -> type[Any]:
        return importlib.import_module(self.module).raw_env

    def option_names(self) -> list[str]:
        """Constructor options of the raw env (``render_mode`` included)."""
        params = inspect.signature(self.raw_env_class().__init__).parameters
        return [p for p in params if p != "self"]


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


def names() -> list[str]:
    """Names accepted by :func:`make`, sorted."""
    return sorted(_GAMES)


def spec(name: str) -> GameSpec:
    """The :class:`GameSpec` of ``name``; ``ValueError`` listing the valid names if unknown."""
    try:
        return _GAMES[name]
    except (KeyError, TypeError):
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
