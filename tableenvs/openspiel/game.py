"""The OpenSpiel bridge's games: ``TableGame``, one subclass per title, their registration with pyspiel, and lookups.

Where you are: the game half of :mod:`tableenvs.openspiel`. Importing this module registers the three pyspiel games
(``tableenvs_pilipili_v0``, ...) with their default parameters; ``pyspiel.load_game`` then builds a
:class:`TableGame`, which checks the parameters, builds the game's :class:`~tableenvs.openspiel.state.Shared` and
tells OpenSpiel the title's facts (:mod:`tableenvs.openspiel.game_types`). :func:`load_game` and
:func:`game_for_env` find the game of a tableenvs env name or env.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyspiel

from tableenvs.core.state import StateError
from tableenvs.core.table_env import TableEnv
from tableenvs.core.validation import check_choice, check_int
from tableenvs.openspiel.game_types import (
    COMMON_PARAMS,
    ENV_TO_OPENSPIEL,
    MAX_DEAL_SEEDS,
    REWARD_MODELS,
    TITLES,
    Title,
    game_type,
)
from tableenvs.openspiel.observer import TableObserver
from tableenvs.openspiel.state import SHARED_BY_KEY, Shared, TableState, record_shared, table_from_record

#: The longest state record :func:`deserialize_state` reads (characters): far above any real game's.
MAX_RECORD_CHARS = 64 * 2**20
#: The longest history :func:`deserialize_state` replays (a game's own bound, ``max_game_length``, may be far longer
#: for large parameters; the longest default games take a few thousand actions).
MAX_HISTORY = 100_000


class UntrustedStateError(ValueError):
    """A serialised state in OpenSpiel's own format, whose ``__dict__`` is a pickle that can run any code when it is
    read: refused unless the caller trusts its source (``trust_pickle=True``)."""


def _parse_record(text: Any) -> dict[str, Any]:
    """The JSON state record in ``text``; a one-line ``ValueError`` for anything else (an OpenSpiel pickle:
    :class:`UntrustedStateError`)."""
    if not isinstance(text, str):
        raise StateError(f"deserialize_state: a serialised state is text, got {type(text).__name__}")
    if len(text) > MAX_RECORD_CHARS:
        raise StateError(f"deserialize_state: the text is {len(text)} characters, over {MAX_RECORD_CHARS}")
    if not text.lstrip().startswith("{"):
        if "__dict__=" in text or text.startswith(("history=", "move_number=")):
            raise UntrustedStateError(
                "deserialize_state: this is OpenSpiel's own serialisation, whose __dict__ line is a pickle that can "
                "run any code when read; pass trust_pickle=True only for text you made yourself, or save states "
                "with state.serialize() (a JSON state record)"
            )
        raise StateError("deserialize_state: not a tableenvs OpenSpiel state record (a JSON object)")

    def reject(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")

    try:
        record = json.loads(text, parse_constant=reject)
    except RecursionError:
        raise StateError("deserialize_state: the record nests too deep") from None
    except ValueError as error:
        raise StateError(f"deserialize_state: not JSON ({' '.join(str(error).split())[:200]})") from None
    if not isinstance(record, dict):
        raise StateError(f"deserialize_state: a state record is a JSON object, got {type(record).__name__}")
    return record


def _env_options(title: Title, params: dict[str, Any]) -> dict[str, Any]:
    """The env's constructor options from OpenSpiel parameters (``ValueError`` naming a bad one)."""
    unknown = sorted(set(params) - set(title.params) - set(COMMON_PARAMS))
    if unknown:
        raise ValueError(
            f"{title.short_name}: unknown parameter(s) {', '.join(map(repr, unknown))}; parameters: "
            f"{', '.join([*title.params, *COMMON_PARAMS])}"
        )
    check_int("deal_seeds", params["deal_seeds"], 1, MAX_DEAL_SEEDS)
    check_choice("reward_model", params["reward_model"], REWARD_MODELS)
    options = {key: params[key] for key in title.params}
    for key, (param, option) in title.param_aliases.items():
        if options[key] == param:
            options[key] = option
    return options


class TableGame(pyspiel.Game):
    """One of the three games as a pyspiel game; the subclasses below fix which (``_TITLE``)."""

    _TITLE: Title

    def __init__(self, params: dict[str, Any] | None = None):
        title = self._TITLE
        params = {**title.params, **COMMON_PARAMS, **(params or {})}
        try:
            options = _env_options(title, params)
            shared = Shared(title, params, options)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{title.short_name}: {error}") from None
        facts = title.facts(shared.template)
        info = pyspiel.GameInfo(
            num_distinct_actions=shared.template.num_actions,
            max_chance_outcomes=shared.deal_seeds,
            num_players=shared.num_players,
            min_utility=facts["min"],
            max_utility=facts["max"],
            utility_sum=0.0 if facts["zero_sum"] else None,
            max_game_length=facts["length"],
        )
        super().__init__(game_type(title, params["reward_model"], facts["zero_sum"]), info, params)
        self._shared = shared
        SHARED_BY_KEY[shared.key] = shared

    def new_initial_state(self) -> TableState:
        """The state before the deal (a chance node)."""
        return TableState(self)

    def deserialize_state(self, text: str, *, trust_pickle: bool = False) -> TableState:
        """The state ``text`` holds: the JSON state record :meth:`TableState.serialize` writes, checked in full
        (``StateError``, a one-line ``ValueError``, naming what is wrong; nothing in it runs). Its game and
        parameters must be this game's; its OpenSpiel history is replayed (each action checked legal) so that
        ``history()`` is the saved one, then the saved env, returns and recall are restored.

        OpenSpiel's own format (``pyspiel.serialize_game_and_state``'s ``[State]`` part: a ``__dict__`` pickle) is
        refused with :class:`UntrustedStateError` unless ``trust_pickle=True``: reading it runs whatever code the
        pickle names."""
        try:
            record = _parse_record(text)
        except UntrustedStateError:
            if not trust_pickle:
                raise
            state = pyspiel.Game.deserialize_state(self, text)  # OpenSpiel's own reader: it unpickles
            if state._table.shared.key != self._shared.key:
                raise StateError(
                    f"deserialize_state: the pickled state is of {state._table.shared.title.short_name} with other "
                    "parameters, not of this game"
                ) from None
            state._table.shared = self._shared
            return state
        shared = self._shared
        try:
            record_shared(record, shared)
            table = table_from_record(record, shared)
        except StateError as error:
            raise StateError(f"deserialize_state: {error}") from None
        return self._replay(record.get("history"), table)

    def _replay(self, history: Any, table: Any) -> TableState:
        """A state whose OpenSpiel history is ``history`` (each action checked, then applied) and whose table is
        then ``table``."""
        shared = self._shared
        if not isinstance(history, list):
            raise StateError(f"deserialize_state: history must be a list of actions, got {type(history).__name__}")
        longest = min(self.max_game_length() + 1, MAX_HISTORY)
        if len(history) > longest:
            raise StateError(f"deserialize_state: history has {len(history)} actions; at most {longest} are read")
        if history and table.env is None:
            raise StateError("deserialize_state: a state before the deal (env null) has an empty history")
        state = self.new_initial_state()
        for index, action in enumerate(history):
            if not isinstance(action, int) or isinstance(action, bool):
                raise StateError(f"deserialize_state: history[{index}] must be an action id, got {action!r:.60}")
            if state.is_terminal():
                raise StateError(f"deserialize_state: history[{index}] follows the end of the game")
            legal = 0 <= action < shared.deal_seeds if state.is_chance_node() else action in state.legal_actions()
            if not legal:
                raise StateError(f"deserialize_state: history[{index}] = {action} is not a legal action there")
            state.apply_action(action)
        state._table = table
        return state

    def max_chance_nodes_in_history(self) -> int:
        return 1

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> TableObserver:
        """The observer OpenSpiel asks for (observation: ``perfect_recall=False``; information state: ``True``)."""
        if isinstance(iig_obs_type, dict) and params is None:  # C++ calls make_py_observer(params) for the default
            iig_obs_type, params = None, iig_obs_type
        return TableObserver(self._shared, iig_obs_type, params)

    def state_from_env(self, env: TableEnv) -> TableState:
        """A state (after the deal) continuing from a started raw env of this game with the same options; the
        state takes the env (pass a clone or ``sample_world`` to keep yours). Its ``history()`` is empty, and the
        seats' recall starts from the env's current observations."""
        shared = self._shared
        if not isinstance(env, TableEnv) or env.metadata["name"] != shared.title.env:
            raise ValueError(f"state_from_env: expected a raw {shared.title.env} env, got {env!r}")
        if env.num_players != shared.num_players:
            raise ValueError(f"state_from_env: the env has {env.num_players} players, the game {shared.num_players}")
        state = TableState(self)
        table = state._table
        table.env = env
        table.returns = np.array(env._returns, np.float64)
        table.over = env.outcome() is not None
        table.recall = [b""] * shared.num_players
        table.seen = [b""] * shared.num_players
        table.observe_all()
        return state


def _game_class(title: Title) -> type:
    name = "".join(part.title() for part in title.env.removesuffix("_v0").split("_")) + "Game"
    return type(name, (TableGame,), {"_TITLE": title, "__doc__": f"{title.long_name} as a pyspiel game."})


GAME_CLASSES = {name: _game_class(title) for name, title in TITLES.items()}

for _name, _cls in GAME_CLASSES.items():
    pyspiel.register_game(game_type(TITLES[_name], "terminal", TITLES[_name].zero_sum), _cls)


def load_game(env_name: str, **params: Any) -> TableGame:
    """The OpenSpiel game of tableenvs env ``env_name`` (``"pilipili_v0"``, ...) with ``params``."""
    if env_name not in ENV_TO_OPENSPIEL:
        raise ValueError(f"no OpenSpiel game for {env_name!r}; games: {', '.join(ENV_TO_OPENSPIEL)}")
    return pyspiel.load_game(ENV_TO_OPENSPIEL[env_name], params)


def serialize_state(state: TableState) -> str:
    """``state`` as its JSON state record (:meth:`TableState.serialize`): one line of JSON that names the game and
    its parameters, so :func:`deserialize_state` needs nothing else."""
    if not isinstance(state, TableState):
        raise TypeError(f"serialize_state: expected a state of a tableenvs OpenSpiel game, got {type(state).__name__}")
    return state.serialize()


def deserialize_state(text: str, *, trust_pickle: bool = False) -> TableState:
    """The state a JSON state record holds, in the game the record names (loaded if need be): see
    :meth:`TableGame.deserialize_state`. With ``trust_pickle=True`` it also reads the whole text
    ``pyspiel.serialize_game_and_state`` writes (OpenSpiel's format, a pickle that can run code: trusted text only).
    """
    try:
        record = _parse_record(text)
    except UntrustedStateError:
        if not trust_pickle:
            raise
        game, state = pyspiel.deserialize_game_and_state(text)  # OpenSpiel's own reader: it unpickles
        if not isinstance(game, TableGame):
            raise StateError(f"deserialize_state: the text is a state of {game}, not of a tableenvs game") from None
        return state
    try:
        shared = record_shared(record)
    except StateError as error:
        raise StateError(f"deserialize_state: {error}") from None
    game = pyspiel.load_game(shared.title.short_name, shared.params)
    return game.deserialize_state(text)


def game_for_env(env: Any) -> TableGame:
    """The OpenSpiel game with the options of ``env`` (a raw or wrapped tableenvs env)."""
    raw = getattr(env, "unwrapped", None)
    if not isinstance(raw, TableEnv) or raw.metadata["name"] not in ENV_TO_OPENSPIEL:
        raise ValueError(f"game_for_env: expected a tableenvs env of {', '.join(ENV_TO_OPENSPIEL)}, got {env!r}")
    name = raw.metadata["name"]
    options = raw._state_options()
    for key, (param, option) in TITLES[ENV_TO_OPENSPIEL[name]].param_aliases.items():
        if options[key] == option:
            options[key] = param
    bad = {key: value for key, value in options.items() if not isinstance(value, (bool, int, float, str))}
    if bad:
        raise ValueError(
            f"game_for_env: OpenSpiel parameters are numbers, booleans or strings; the env's option(s) "
            f"{', '.join(f'{k}={v!r:.60}' for k, v in bad.items())} cannot be one (use a file path for a deck, a "
            "finite max_rounds)"
        )
    return load_game(name, **options)
