"""A game of the OpenSpiel bridge in progress: ``TableState`` (a ``pyspiel.State``) over its env and bookkeeping.

Where you are: the state half of :mod:`tableenvs.openspiel`. :class:`Shared` is what every state of one game shares
(the title, the parameters, a started template env), found by :func:`shared_key` in :data:`SHARED_BY_KEY`;
``_Table`` holds one state's env, returns and per-seat recall, and answers OpenSpiel's deep copy with
``env.clone()``. A state is saved as its JSON state record (:meth:`TableState.serialize`, :data:`RECORD_FORMAT`): the
game and parameters, the OpenSpiel history, the env's own state record (``get_state``), the returns, the last step's
rewards, whether it is over, and each seat's recall hash; :func:`table_from_record` checks such a record in full
(the env's record by ``TableEnv.from_state``, and returns, over, recall and parameters against the env and the game)
before anything is built. :class:`TableState` plays the env: one chance node (the deal seed), then the env's action
ids. The game (:mod:`tableenvs.openspiel.game`) builds the ``Shared`` and reads records back
(``TableGame.deserialize_state``); the observer (:mod:`tableenvs.openspiel.observer`) reads a state's ``_table``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

import numpy as np
import pyspiel

from tableenvs.core.registry import make_raw
from tableenvs.core.state import StateError, plain
from tableenvs.core.table_env import TableEnv
from tableenvs.openspiel.game_types import TITLES, Title

#: Marks a state record of the bridge (``record["format"]``) and its layout version (``record["version"]``).
RECORD_FORMAT = "tableenvs-openspiel-state"
RECORD_VERSION = 1
RECORD_KEYS = ("format", "version", "game", "params", "history", "env", "returns", "step_rewards", "over", "recall")
_DIGEST = re.compile(r"[0-9a-f]{32}")
#: What a parameter naming a file ends with (a deck file): a record naming one is read only by a game already loaded.
FILES = (".toml", ".json")


class Shared:
    """What every state of one game shares (never copied, never pickled: a state's pickle names the game)."""

    def __init__(self, title: Title, params: dict[str, Any], env_options: dict[str, Any]):
        self.title = title
        self.params = params
        self.key = shared_key(title.short_name, params)
        self.deal_seeds = params["deal_seeds"]
        self.terminal_rewards = params["reward_model"] == "terminal"
        self.template = make_raw(title.env, **env_options, render_mode="ansi")
        self.template.reset(seed=0)  # clone() needs a started env; every deal is a reset(seed=k) of a clone
        self.num_players = self.template.num_players
        self.agents = tuple(self.template.possible_agents)
        self.chance_outcomes = [(k, 1.0 / self.deal_seeds) for k in range(self.deal_seeds)]


#: Every game built so far, by :func:`shared_key` (each ``TableGame`` adds its own): a state restored from a pickle
#: finds its game's ``Shared`` here.
SHARED_BY_KEY: dict[tuple, Shared] = {}


def shared_key(short_name: str, params: dict[str, Any]) -> tuple:
    """The key of one game: its OpenSpiel name and parameters."""
    return (short_name, tuple(sorted(params.items())))


class _Table:
    """A state's env and bookkeeping. OpenSpiel's ``Clone`` deep-copies a Python state's attributes and its
    ``Serialize`` pickles them: this object answers the first with ``env.clone()`` and the second with the env's
    JSON state record (``get_state``), so neither ever copies or pickles an env object."""

    __slots__ = ("shared", "env", "returns", "step_rewards", "over", "recall", "seen")

    def __init__(self, shared: Shared):
        self.shared = shared
        self.env: TableEnv | None = None  # None before the deal
        self.returns = np.zeros(shared.num_players)
        self.step_rewards = np.zeros(shared.num_players)
        self.over = False
        self.recall: list[bytes] = []  # per seat: hash of every distinct observation and own move so far
        self.seen: list[bytes] = []  # per seat: its last observation's bytes

    def dealt_env(self) -> TableEnv:
        """The env, which exists from the deal on (None before it: asking for it then is a bug)."""
        env = self.env
        if env is None:
            raise RuntimeError("the game has not been dealt yet (a chance node)")
        return env

    def observe_all(self, actor: int | None = None, action: int | None = None) -> None:
        """Fold each seat's new observation (and the actor's move) into its recall hash."""
        env = self.dealt_env()
        for seat, agent in enumerate(self.shared.agents):
            observation = env.observe(agent)["observation"].tobytes()
            moved = seat == actor
            if observation != self.seen[seat] or moved:
                digest = hashlib.blake2b(self.recall[seat], digest_size=16)
                if moved:
                    if action is None:
                        raise ValueError("observe_all: the actor's move needs its action")
                    digest.update(b"move %d;" % action)
                digest.update(observation)
                self.recall[seat] = digest.digest()
                self.seen[seat] = observation

    def __deepcopy__(self, memo: dict) -> _Table:
        new = _Table.__new__(_Table)
        new.shared = self.shared
        new.env = None if self.env is None else self.env.clone()
        new.returns = self.returns.copy()
        new.step_rewards = self.step_rewards.copy()
        new.over = self.over
        new.recall = self.recall[:]
        new.seen = self.seen[:]
        return new

    def record(self) -> dict[str, Any]:
        """This table as the plain, JSON-serialisable part of a state record (all of it but ``history``, which is
        the OpenSpiel state's)."""
        shared = self.shared
        return {
            "format": RECORD_FORMAT,
            "version": RECORD_VERSION,
            "game": shared.title.short_name,
            "params": dict(shared.params),
            "env": None if self.env is None else self.env.get_state(),
            "returns": self.returns.tolist(),
            "step_rewards": self.step_rewards.tolist(),
            "over": self.over,
            "recall": [digest.hex() for digest in self.recall],
        }

    def __getstate__(self) -> dict[str, Any]:
        # what OpenSpiel's own serialisation (pyspiel.serialize_game_and_state, pickle) stores: the record
        return self.record()

    def __setstate__(self, record: dict[str, Any]) -> None:
        # OpenSpiel's own deserialisation (a pickle: trusted input only); the record is checked all the same
        if isinstance(record, dict) and "format" not in record:  # the layout of older versions
            record = {key: value for key, value in record.items() if key != "seen"}
            record.update(format=RECORD_FORMAT, version=RECORD_VERSION)
        table = table_from_record(record)
        for name in _Table.__slots__:
            setattr(self, name, getattr(table, name))


def _numbers(value: Any, count: int, what: str) -> np.ndarray:
    """``value`` as ``count`` finite floats; a :class:`StateError` naming ``what`` otherwise."""
    if not isinstance(value, list) or len(value) != count:
        raise StateError(f"{what} must be a list of {count} numbers, got {_shown(value)}")
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in value):
        raise StateError(f"{what} must hold finite numbers, got {_shown(value)}")
    return np.array(value, np.float64)


def _shown(value: Any, limit: int = 100) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def record_shared(record: Any, shared: Shared | None = None) -> Shared:
    """The :class:`Shared` of the game a state record names (loaded if need be): ``shared`` itself, which the
    record's game and parameters must match. A :class:`StateError` for a record of no bridged game."""
    if not isinstance(record, dict):
        raise StateError(f"a state record is a JSON object, got {type(record).__name__}")
    if record.get("format") != RECORD_FORMAT:
        raise StateError(f"not a tableenvs OpenSpiel state record (format {_shown(record.get('format'))})")
    if record.get("version") != RECORD_VERSION or isinstance(record.get("version"), bool):
        raise StateError(
            f"the record has version {_shown(record.get('version'))}; this tableenvs reads version {RECORD_VERSION}"
        )
    game, params = record.get("game"), record.get("params")
    if not isinstance(game, str) or game not in TITLES:
        raise StateError(f"the record's game {_shown(game)} is not one of {', '.join(TITLES)}")
    if not isinstance(params, dict) or not all(
        isinstance(key, str) and isinstance(value, (bool, int, float, str)) for key, value in params.items()
    ):
        raise StateError(f"params must map parameter names to numbers, booleans or strings, got {_shown(params)}")
    if any(isinstance(value, int) and not -(2**31) <= value < 2**31 for value in params.values()):
        raise StateError(f"params hold an integer beyond OpenSpiel's (32-bit): {_shown(params, 300)}")
    key = shared_key(game, params)
    if shared is not None:
        if shared.key != key:
            raise StateError(
                f"the record is of {game} with params {_shown(params, 300)}, not of this game "
                f"({shared.title.short_name} with params {_shown(shared.params, 300)})"
            )
        return shared
    if key not in SHARED_BY_KEY:
        files = [name for name, value in params.items() if isinstance(value, str) and value.lower().endswith(FILES)]
        if files:  # a record never makes this process open a file it names
            raise StateError(
                f"the record's params {', '.join(files)} name a file; load the game with it yourself "
                "(pyspiel.load_game) and read the record with that game's deserialize_state"
            )
        try:
            pyspiel.load_game(game, params)  # registers its Shared; refuses unknown or bad parameters
        except (ValueError, TypeError, RuntimeError, pyspiel.SpielError) as error:
            raise StateError(f"the record's params are not valid for {game}: {' '.join(str(error).split())}") from None
    found = SHARED_BY_KEY.get(key)
    if found is None:  # the game fills in defaults: a record names every parameter its game has
        raise StateError(f"the record's params {_shown(params, 300)} do not name every parameter of {game}")
    return found


def table_from_record(record: Any, shared: Shared | None = None) -> _Table:
    """A ``_Table`` from a state record (the ``history`` key, the OpenSpiel state's, is not read here), checked in
    full before it is built: the game and parameters (:func:`record_shared`), the env's record
    (``TableEnv.from_state``, which refuses any malformed one) of an env with the game's options, and ``returns``,
    ``step_rewards``, ``over`` and ``recall`` against that env. A :class:`StateError` (a ``ValueError``) names the
    first thing wrong."""
    shared = record_shared(record, shared)
    missing = [key for key in RECORD_KEYS if key not in record and key != "history"]
    unknown = sorted(str(key) for key in set(record) - set(RECORD_KEYS))
    if missing or unknown:
        said = [
            f"missing {', '.join(missing)}" if missing else "",
            f"unknown {', '.join(unknown[:5])}" if unknown else "",
        ]
        raise StateError(f"record keys: {'; '.join(part for part in said if part)}")
    n = shared.num_players
    returns = _numbers(record["returns"], n, "returns")
    step_rewards = _numbers(record["step_rewards"], n, "step_rewards")
    over, recall = record["over"], record["recall"]
    if not isinstance(over, bool):
        raise StateError(f"over must be true or false, got {_shown(over)}")
    table = _Table(shared)
    state = record["env"]
    if state is None:  # before the deal
        if returns.any() or step_rewards.any() or over or recall != []:
            raise StateError(
                "a state before the deal (env null) has zero returns and step_rewards, is not over and has no recall"
            )
        return table
    if isinstance(state, str):  # the layout OpenSpiel's pickles of older versions hold: the env's record as JSON text
        try:
            state = json.loads(state)
        except (ValueError, RecursionError):
            raise StateError("env is not a state record") from None
    if not isinstance(state, dict) or state.get("game") != shared.title.env:
        raise StateError(f"env must be a state record of {shared.title.env}, got {_shown(state)}")
    env = TableEnv.from_state(state, render_mode="ansi")  # a StateError naming what is wrong
    mine, theirs = plain(shared.template._state_options()), plain(env._state_options())
    if mine != theirs:
        raise StateError(f"the env's options {_shown(theirs, 300)} are not this game's {_shown(mine, 300)}")
    if not np.array_equal(returns, env._returns):
        raise StateError(f"returns {returns.tolist()} are not the env's returns {env._returns.tolist()}")
    rewards = np.array([env.rewards.get(agent, 0.0) for agent in shared.agents], np.float64)
    if step_rewards.any() and not np.array_equal(step_rewards, rewards):
        raise StateError(f"step_rewards {step_rewards.tolist()} are not the env's last rewards {rewards.tolist()}")
    following = env.agent_selection
    ended = bool(env.terminations[following] or env.truncations[following])
    if over != ended:
        raise StateError(f"over is {str(over).lower()} but the env's game {'has' if ended else 'has not'} ended")
    if not isinstance(recall, list) or len(recall) != n:
        raise StateError(f"recall must be a list of {n} digests, got {_shown(recall)}")
    digests = []
    for seat, digest in enumerate(recall):
        if isinstance(digest, bytes) and len(digest) == 16:  # older pickles
            digests.append(digest)
        elif isinstance(digest, str) and _DIGEST.fullmatch(digest):
            digests.append(bytes.fromhex(digest))
        else:
            raise StateError(f"recall[{seat}] must be 32 lowercase hex digits, got {_shown(digest)}")
    table.env = env
    table.returns, table.step_rewards, table.over, table.recall = returns, step_rewards, over, digests
    table.seen = [env.observe(agent)["observation"].tobytes() for agent in shared.agents]  # what observe_all keeps
    return table


class TableState(pyspiel.State):
    """A game in progress: before the deal (chance node), then the env (``state.env``), until it ends."""

    def __init__(self, game: pyspiel.Game):
        """A state of ``game`` (a :class:`tableenvs.openspiel.TableGame`) before the deal."""
        super().__init__(game)
        self._table = _Table(game._shared)

    @property
    def env(self) -> TableEnv | None:
        """The raw tableenvs env of this state (None before the deal). Read it; do not step it."""
        return self._table.env

    def current_player(self) -> int:
        table = self._table
        if table.env is None:
            return pyspiel.PlayerId.CHANCE
        if table.over:
            return pyspiel.PlayerId.TERMINAL
        return table.env.agent_name_mapping[table.env.agent_selection]

    def _legal_actions(self, player: int) -> list[int]:
        return self._table.dealt_env().legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """Deal seeds ``0 .. deal_seeds-1``, uniform."""
        return self._table.shared.chance_outcomes

    def _apply_action(self, action: int) -> None:
        table = self._table
        shared = table.shared
        if table.env is None:
            env = shared.template.clone()
            env.reset(seed=int(action))
            table.env = env
            table.recall = [b"deal;"] * shared.num_players
            table.seen = [b""] * shared.num_players
            table.observe_all()
            table.step_rewards = np.zeros(shared.num_players)
            return
        env = table.env
        actor = env.agent_name_mapping[env.agent_selection]
        env.step(int(action))
        rewards = env.rewards
        table.step_rewards = np.array([rewards[agent] for agent in shared.agents], np.float64)
        table.returns = table.returns + table.step_rewards
        following = env.agent_selection
        table.over = env.terminations[following] or env.truncations[following]
        table.observe_all(actor, int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal seed {action}"
        try:
            return self._table.dealt_env().describe_action(int(action))
        except Exception:  # noqa: BLE001 - an action of another phase cannot always be described now
            return f"action {action}"

    def is_terminal(self) -> bool:
        return self._table.over

    def returns(self) -> list[float]:
        table = self._table
        if table.shared.terminal_rewards and not table.over:
            return [0.0] * table.shared.num_players
        return table.returns.tolist()

    def rewards(self) -> list[float]:
        table = self._table
        if table.shared.terminal_rewards:
            return self.returns()
        return table.step_rewards.tolist()

    def serialize(self) -> str:
        """This state as its JSON state record (one line; :data:`RECORD_KEYS`): read back by the game's
        ``deserialize_state`` (or :func:`tableenvs.openspiel.deserialize_state`), which runs no code and checks it
        in full. OpenSpiel's own ``pyspiel.serialize_game_and_state`` does not call this: it pickles."""
        record = self._table.record()
        record["history"] = [int(action) for action in self.history()]
        return json.dumps({key: record[key] for key in RECORD_KEYS}, allow_nan=False, separators=(",", ":"))

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> TableState:
        """A state ``player_id`` cannot tell from this one, the rest resampled by ``env.sample_world`` with a
        generator seeded from ``probability_sampler()`` (for IS-MCTS). Its ``history()`` is this state's: the
        chance outcome there is the true deal seed, not one that deals the resampled world."""
        new = self.clone()
        env = self._table.env
        if env is None or self._table.over:
            return new
        seed = int(probability_sampler() * 2**53)
        new._table.env = env.sample_world(self._table.shared.agents[player_id], np.random.default_rng(seed))
        return new

    def __str__(self) -> str:
        env = self._table.env
        if env is None:
            return f"before the deal: chance picks one of {self._table.shared.deal_seeds} deal seeds"
        text = env.render()
        if not isinstance(text, str):  # never: the states' envs render text (render_mode="ansi")
            raise TypeError(f"a state's env renders text, got {type(text).__name__}")
        return text
