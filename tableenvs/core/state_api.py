"""The state API, once for every game: ``clone``, ``get_state``/``set_state``, ``from_state`` and ``sample_world``.

Where you are: :mod:`tableenvs.core`, the layer between PettingZoo's bookkeeping (:mod:`tableenvs.core.aec_base`)
and the class a game adapter subclasses (:mod:`tableenvs.core.table_env`). What each game must add is in the state
hooks at the end of :class:`StateAPI` (and in the table of :mod:`tableenvs.core.table_env`); the record helpers
(checks that name the field, generator copies) are in :mod:`tableenvs.core.state`.

A state record is a plain, versioned, JSON-serialisable dict; a world of :meth:`StateAPI.sample_world` is a clone in
which what one seat cannot know is resampled (the game's ``worlds.py`` and its docs page say how).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from tableenvs.core.aec_base import AECBase
from tableenvs.core.engine import RestorableEngine, StateReader
from tableenvs.core.registry import make_raw, names
from tableenvs.core.state import (
    STATE_FORMAT,
    STATE_VERSION,
    StateError,
    as_bool,
    as_float,
    as_list,
    check_bounds,
    check_restored,
    copy_generator,
    field,
    generator_from_state,
    plain,
)

if TYPE_CHECKING:
    from typing import Self


def _names_a_file(value: Any) -> bool:
    """Whether an option value is a deck file name (the deck loaders read only ``.toml`` and ``.json`` files)."""
    return isinstance(value, str) and value.lower().endswith((".toml", ".json"))


class StateAPI(AECBase):
    """``clone``, ``get_state``/``set_state``, ``from_state`` and ``sample_world`` over :class:`AECBase`; a game
    fills in the state hooks at the end (each raises ``NotImplementedError`` naming the game until it does)."""

    #: sample_world's cache: (event log, its length, seat, the log as that seat saw it); set on first use
    _world_log: tuple[list[str], int, int, list[str]] | None

    def clone(self) -> Self:
        """An independent copy of this raw env that continues identically: same future observations, masks,
        rewards and RNG draws for the same actions; changing one never changes the other.

        Much cheaper than ``copy.deepcopy`` (docs/benchmarks.md, "State API"): the game's mutable state is copied
        by the engine's own ``copy``; decks, missions, spaces and encoder tables are shared (never mutated);
        per-state caches (encoder blocks, the Rummikub solver's turn sweep) start empty in the clone.
        """
        self._require_reset("clone()")
        new = object.__new__(type(self))
        d = new.__dict__
        d.update(self.__dict__)
        d["agents"] = self.agents[:]
        d["rewards"] = dict(self.rewards)
        d["_cumulative_rewards"] = dict(self._cumulative_rewards)
        d["terminations"] = dict(self.terminations)
        d["truncations"] = dict(self.truncations)
        d["infos"] = {agent: dict(info) for agent, info in self.infos.items()}
        d["event_log"] = self.event_log[:]
        d["_returns"] = self._returns.copy()
        d["_rng"] = copy_generator(self._started_rng())
        self._clone_game(new)
        return new

    def get_state(self) -> dict[str, Any]:
        """The whole game as a plain, versioned, JSON-serialisable dict (``json.dumps`` works on it).

        Keys: ``format``, ``version``, ``game`` (env name), ``options`` (the env's constructor options but
        ``render_mode``), ``rng`` (the generator's ``bit_generator.state``), the PettingZoo bookkeeping
        (``agents``, ``agent_selection``, ``rewards``, ``cumulative_rewards``, ``terminations``, ``truncations``,
        ``infos``), ``returns``, ``ended``, ``event_log`` and ``rules`` (the engine's state). :meth:`set_state` on
        an env with the same options (or :meth:`from_state`, in any process) continues the game identically.
        """
        self._require_reset("get_state()")
        return {
            "format": STATE_FORMAT,
            "version": STATE_VERSION,
            "game": self.metadata["name"],
            "options": self._state_options(),
            "rng": plain(self._started_rng().bit_generator.state),
            "agents": list(self.agents),
            "agent_selection": self.agent_selection,
            "skip_agent_selection": getattr(self, "_skip_agent_selection", None),
            "rewards": {agent: float(x) for agent, x in self.rewards.items()},
            "cumulative_rewards": {agent: float(x) for agent, x in self._cumulative_rewards.items()},
            "terminations": {agent: bool(x) for agent, x in self.terminations.items()},
            "truncations": {agent: bool(x) for agent, x in self.truncations.items()},
            "infos": self._infos_state(),
            "returns": [float(x) for x in self._returns],
            "ended": self._ended,
            "event_log": list(self.event_log),
            "rules": self._rules_state(),
        }

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Restore a record of :meth:`get_state` (also one read back from JSON, saved in another process).

        The env must have the record's options (see :meth:`from_state`). A record of another game, another
        format version, other options, or with a missing or malformed field raises ``ValueError``
        (:class:`tableenvs.core.state.StateError`) naming what is wrong; the record is checked in full before
        anything changes, so on error the env is left exactly as it was. Works before the first ``reset()``.
        """
        name = self.metadata["name"]
        try:
            check_bounds(state)  # sizes, nesting, finite numbers: before any field is read
            updates = self._parse_state(state)
        except StateError as error:
            raise StateError(f"{name}: set_state: {error}") from None
        saved = dict(self.__dict__)
        try:
            self.__dict__.update(updates)
            if self._ended is None:
                to_act = self.possible_agents[self._current_seat()]
                if self.agent_selection != to_act:
                    raise StateError(
                        f"{name}: set_state: agent_selection is {self.agent_selection!r} but the rules state has "
                        f"{to_act} to act"
                    )
            try:
                check_restored(self)  # the bookkeeping agrees with the rules; the agent to act has a legal move
            except StateError as error:
                raise StateError(f"{name}: set_state: {error}") from None
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    @staticmethod
    def from_state(state: Mapping[str, Any], render_mode: str | None = None) -> StateAPI:
        """A new raw env made with the record's game and options, in the record's state."""
        game = state.get("game") if isinstance(state, Mapping) else None
        if game not in names():
            raise StateError(f"from_state: the record's game {game!r} is not one of {', '.join(names())}")
        options = field(state, "options", "the record")
        if not isinstance(options, Mapping):
            raise StateError(f"from_state: options must be a dict, got {type(options).__name__}")
        if "render_mode" in options:
            raise StateError("from_state: the record's options hold render_mode; pass render_mode= to from_state")
        named_files = [key for key, value in options.items() if _names_a_file(value)]
        if named_files:
            raise StateError(
                f"from_state: option(s) {', '.join(map(repr, named_files))} name a deck file; a state record embeds "
                "its decks (get_state writes them out), so it is never read from a path the record names"
            )
        try:
            env = make_raw(game, **options, render_mode=render_mode)
        except (TypeError, ValueError) as error:  # the constructor's checks: unknown option, bad value, out of range
            raise StateError(f"from_state: the record's options are not valid for {game}: {error}") from None
        env.set_state(state)
        return env

    def _parse_state(self, state: Any) -> dict[str, Any]:
        """Check a record in full and build the attributes :meth:`set_state` swaps in (nothing is changed here)."""
        name = self.metadata["name"]
        if not isinstance(state, Mapping):
            raise StateError(f"a state record is the dict get_state() returns, got {type(state).__name__}")
        if state.get("format") != STATE_FORMAT:
            raise StateError(f"not a tableenvs state record (format {state.get('format')!r}, not {STATE_FORMAT!r})")
        if state.get("game") != name:
            raise StateError(f"the record is of game {state.get('game')!r}; this env is {name}")
        if state.get("version") != STATE_VERSION:
            raise StateError(
                f"the record has format version {state.get('version')!r}; this tableenvs reads version {STATE_VERSION}"
            )
        keys = (
            *("format", "version", "game", "options", "rng", "agents", "agent_selection", "skip_agent_selection"),
            *("rewards", "cumulative_rewards", "terminations", "truncations", "infos", "returns", "ended"),
            *("event_log", "rules"),
        )
        missing = [key for key in keys if key not in state]
        unknown = sorted(set(state) - set(keys))
        if missing or unknown:
            raise StateError(
                "malformed record: "
                + "; ".join(
                    part
                    for part in (
                        f"missing {', '.join(missing)}" if missing else "",
                        f"unknown {', '.join(map(repr, unknown))}" if unknown else "",
                    )
                    if part
                )
            )
        mine, theirs = plain(self._state_options()), plain(state["options"])
        if not isinstance(theirs, dict):
            raise StateError(f"options must be a dict, got {type(theirs).__name__}")
        differ = sorted(key for key in set(mine) | set(theirs) if mine.get(key, ...) != theirs.get(key, ...))
        if differ:
            shown = "; ".join(f"{key}: record {theirs.get(key, '(absent)')!r}, env {mine.get(key)!r}" for key in differ)
            raise StateError(
                f"the record was saved with other options ({shown[:400]}); make the env with the record's options "
                "(TableEnv.from_state(record) does)"
            )
        agents = as_list(state["agents"], "agents")
        if any(agent not in self.possible_agents for agent in agents) or agents != sorted(
            set(agents), key=self.possible_agents.index
        ):
            raise StateError(f"agents must be distinct names of {self.possible_agents} in seat order, got {agents!r}")
        selection = state["agent_selection"]
        if selection not in self.possible_agents:
            raise StateError(f"agent_selection must be one of {self.possible_agents}, got {selection!r}")
        skip = state["skip_agent_selection"]
        if skip is not None and skip not in self.possible_agents:
            raise StateError(f"skip_agent_selection must be None or an agent name, got {skip!r}")

        def per_agent(key: str, convert: Callable[[Any, str], Any]) -> dict[str, Any]:
            value = state[key]
            if not isinstance(value, Mapping) or sorted(value) != sorted(agents):
                raise StateError(f"{key} must map each of the agents {agents} to a value")
            return {agent: convert(value[agent], f"{key}[{agent!r}]") for agent in agents}

        rewards = per_agent("rewards", as_float)
        cumulative = per_agent("cumulative_rewards", as_float)
        terminations = per_agent("terminations", as_bool)
        truncations = per_agent("truncations", as_bool)
        returns = [as_float(x, f"returns[{i}]") for i, x in enumerate(as_list(state["returns"], "returns"))]
        if len(returns) != self.num_players:
            raise StateError(f"returns must have {self.num_players} items, got {len(returns)}")
        ended = state["ended"]
        if ended not in (None, "terminated", "truncated"):
            raise StateError(f"ended must be None, 'terminated' or 'truncated', got {ended!r}")
        if ended is None and (
            agents != self.possible_agents or any(terminations.values()) or any(truncations.values())
        ):
            raise StateError("a game still running (ended None) has every agent, none terminated or truncated")
        event_log = as_list(state["event_log"], "event_log")
        if not all(isinstance(line, str) for line in event_log):
            raise StateError("event_log must be a list of strings")
        rng = generator_from_state(state["rng"])
        try:
            infos = self._infos_from_state(state["infos"], agents)
            updates = self._rules_from_state(state["rules"], rng)
        except StateError:
            raise
        except (KeyError, TypeError, IndexError, ValueError, AttributeError) as error:
            raise StateError(f"rules: malformed record ({type(error).__name__}: {error})") from None
        updates.update(
            _rng=rng,
            agents=agents,
            agent_selection=selection,
            _skip_agent_selection=skip,
            rewards=rewards,
            _cumulative_rewards=cumulative,
            terminations=terminations,
            truncations=truncations,
            infos=infos,
            _returns=np.array(returns, np.float64),
            _ended=ended,
            event_log=event_log,
            _mask=None,
            _has_started=True,
        )
        return updates

    def sample_world(self, agent: str, rng: np.random.Generator) -> Self:
        """A clone in which everything ``agent`` cannot know is resampled with ``rng`` (uniformly among the worlds
        consistent with what it has observed, as far as the game's page says), and the env's own RNG (future
        shuffles and draws) is replaced by one seeded from ``rng``. ``observe(agent)`` of the result equals
        ``observe(agent)`` here. For determinised search (PIMC, IS-MCTS; :mod:`tableenvs.policies.search`). Each game's
        page (and its ``worlds.py`` or ``_resample_hidden``) says what is resampled and how far from uniform it is."""
        seat = self._seat_of(agent)
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"sample_world: rng must be a numpy.random.Generator, got {type(rng).__name__}")
        world = self.clone()
        # the event log as ``agent`` saw it (the clone's names the hidden moves), made once per log and seat
        cached = self.__dict__.get("_world_log")
        if cached is None or cached[0] is not self.event_log or cached[1] != len(self.event_log) or cached[2] != seat:
            cached = self._world_log = (self.event_log, len(self.event_log), seat, self._world_event_log(seat))
        world.event_log = list(cached[3])
        world._world_log = None
        world._rng = np.random.default_rng(int(rng.integers(2**63)))
        world._mask = None
        world.game.rng = world._rng  # the engine's generator (tableenvs.core.engine.RestorableEngine)
        self._resample_hidden(world, seat, rng)
        return world

    # Hooks of the state API (the table in tableenvs.core.table_env). The defaults of _clone_game and _rules_state
    # serve an engine in ``self.game`` that keeps tableenvs.core.engine.RestorableEngine.

    def _restorable_game(self, what: str) -> Any:
        game = getattr(self, "game", None)
        if not (callable(getattr(game, "copy", None)) and callable(getattr(game, "to_record", None))):
            raise NotImplementedError(
                f"{self.metadata['name']} has no {what}: its engine (self.game) has no copy(rng) and to_record() "
                "(tableenvs.core.engine.RestorableEngine), and the adapter does not override the state hooks"
            )
        return game

    def _clone_game(self, new: Self) -> None:
        """Give ``new`` (a shallow copy of this env with its own ``_rng`` and ``event_log``) its own game; the
        default copies ``self.game`` drawing from the new generator."""
        new.game = self._restorable_game("clone()").copy(new._started_rng())

    def _state_options(self) -> dict[str, Any]:
        """The constructor options (but ``render_mode``) as plain JSON values."""
        raise NotImplementedError(f"{self.metadata['name']} has no get_state()")

    def _rules_state(self) -> dict[str, Any]:
        """The engine's state as plain JSON values (default: ``self.game.to_record()``)."""
        return self._restorable_game("get_state()").to_record()

    def _state_reader(self) -> StateReader[RestorableEngine]:
        """The reader of this env's engine records (:class:`tableenvs.core.engine.StateReader`), holding the env's
        options."""
        raise NotImplementedError(f"{self.metadata['name']} has no set_state(): the adapter names no _state_reader()")

    def _rules_from_state(self, rules: Any, rng: np.random.Generator) -> dict[str, Any]:
        """Check ``rules`` and build the attributes (``game``, ...) to swap in; raise :class:`StateError`. The
        default reads the engine with :meth:`_state_reader` (``{"game": engine}``)."""
        return {"game": self._state_reader().read(rules, rng)}

    def _resample_hidden(self, world: Self, seat: int, rng: np.random.Generator) -> None:
        """Resample in ``world`` (a clone with a new ``_rng``, its engine already drawing from it) everything
        ``seat`` cannot know."""
        raise NotImplementedError(f"{self.metadata['name']}: sample_world() is not implemented yet")

    def _world_event_log(self, seat: int) -> list[str]:
        """The event log of a world sampled for ``seat``: ``seat``'s own moves in full, the others' as
        :meth:`describe_action_public` said them, the rules' public outcome lines. The default keeps none (a
        game that can tell its lines apart overrides it)."""
        return []

    def _infos_state(self) -> dict[str, Any]:
        """``infos`` as plain JSON values (default: they already are)."""
        return plain(self.infos)

    def _infos_from_state(self, infos: Any, agents: list[str]) -> dict[str, dict[str, Any]]:
        if not isinstance(infos, Mapping) or sorted(infos) != sorted(agents):
            raise StateError(f"infos must map each of the agents {agents} to a dict")
        if not all(isinstance(info, Mapping) for info in infos.values()):
            raise StateError("infos must map each agent to a dict")
        return {agent: dict(infos[agent]) for agent in agents}
