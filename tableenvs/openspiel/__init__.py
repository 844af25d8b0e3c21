"""The games as OpenSpiel games, and agents across the two libraries (needs ``open_spiel``: ``pip install open-spiel``).

Where you are: a bridge beside the games, built only on each env's public API (and the state API of
:mod:`tableenvs.core.table_env`: ``clone``, ``get_state``/``set_state``, ``sample_world``). ``import
tableenvs.openspiel`` registers three pyspiel Python games; nothing else in tableenvs imports this package. Guide:
``docs/openspiel.md``.

=============================  =====================================================================================
OpenSpiel name                 ``tableenvs_pilipili_v0``, ``tableenvs_llama_party_v0``, ``tableenvs_rummikub_v0``;
                               ``pyspiel.load_game("tableenvs_rummikub_v0", {"num_players": 2})``
Parameters                     the env's constructor options (same names and defaults; Llama Party's ``deck`` is
                               ``"standard"`` or a file path), plus ``deal_seeds`` (how many deals the chance node
                               chooses from, default 65536) and ``reward_model`` (``"terminal"``, the default: all
                               of a seat's reward paid at the end; ``"rewards"``: each step's env rewards)
Chance                         one explicit chance node at the start: deal seed ``k`` in ``0..deal_seeds-1``,
                               uniform; the env is then ``reset(seed=k)`` and everything random after it (deals of
                               later rounds, dummy draws, the pool) follows from that seed and the moves
Actions                        the env's ``Discrete`` action ids, 1:1; legal actions from the action mask
Observation tensor / string    the seat's observation vector (the game's encoder) / ``render_view`` text
Information state string       the ``render_view`` text plus a ``recall`` line: a hash of every distinct
                               observation the seat has had since the deal and of its own moves (perfect recall);
                               the information state *tensor* is the observation vector (not perfect recall)
clone / serialize              ``env.clone()`` / the JSON state record (``state.serialize()``, read back, checked
                               and running nothing, by ``game.deserialize_state`` or :func:`deserialize_state`;
                               OpenSpiel's own pickled format only with ``trust_pickle=True``)
resample_from_infostate        ``env.sample_world(agent, rng)``, ``rng`` seeded from the probability sampler
Agents                         :class:`PolicyBot` (a tableenvs policy as a ``pyspiel.Bot``), :class:`BotPolicy` and
                               :func:`make_bot_policy` (an OpenSpiel bot as a tableenvs policy, e.g.
                               ``make_bot_policy("openspiel:ismcts:sims=100", env)``)
=============================  =====================================================================================

The package by job: :mod:`~tableenvs.openspiel.game_types` (the titles: names, parameters, game facts, game
types), :mod:`~tableenvs.openspiel.state` (``TableState``), :mod:`~tableenvs.openspiel.observer`
(``TableObserver``), :mod:`~tableenvs.openspiel.game` (``TableGame``, its subclasses and their registration) and
:mod:`~tableenvs.openspiel.bots` (the agents). Every name is importable from here.
"""

from __future__ import annotations

try:
    import pyspiel  # noqa: F401  (checked here, before any module of the package needs it)
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "tableenvs.openspiel needs OpenSpiel: pip install open-spiel (Python 3.9-3.12 wheels on Linux and macOS)"
    ) from error

from tableenvs.openspiel.bots import BotFactory, BotPolicy, PolicyBot, bot_factory, make_bot_policy, parse_bot_spec
from tableenvs.openspiel.game import (
    GAME_CLASSES,
    TableGame,
    UntrustedStateError,
    deserialize_state,
    game_for_env,
    load_game,
    serialize_state,
)
from tableenvs.openspiel.game_types import (
    DEFAULT_DEAL_SEEDS,
    ENV_TO_OPENSPIEL,
    MAX_DEAL_SEEDS,
    REWARD_MODELS,
    TITLES,
)
from tableenvs.openspiel.observer import TableObserver
from tableenvs.openspiel.state import TableState

__all__ = [
    "DEFAULT_DEAL_SEEDS",
    "ENV_TO_OPENSPIEL",
    "GAME_CLASSES",
    "MAX_DEAL_SEEDS",
    "REWARD_MODELS",
    "TITLES",
    "BotFactory",
    "BotPolicy",
    "PolicyBot",
    "TableGame",
    "TableObserver",
    "TableState",
    "UntrustedStateError",
    "bot_factory",
    "deserialize_state",
    "game_for_env",
    "load_game",
    "make_bot_policy",
    "parse_bot_spec",
    "serialize_state",
]
