"""The AEC base class every tableenvs game adapter derives from.

Where you are: shared plumbing. A game package (``tableenvs/<game>/``) keeps its rules engine and its
encoder separate and writes a thin adapter class on top of :class:`TableEnv`. The adapter fills in a
handful of hooks; this class does all of PettingZoo's bookkeeping once, for every game:

* ``agents`` / ``possible_agents`` (``player_0 .. player_{n-1}``) and ``agent_selection``;
* ``rewards``, ``_cumulative_rewards``, ``terminations``, ``truncations``, ``infos``;
* ``observe(agent)`` returning ``{"observation": float32 vector, "action_mask": int8 vector}``, the mask all
  zeros except for the agent to act (PettingZoo classic convention);
* the dead-agent step after the game ends (every agent is stepped once more with ``None``);
* one action check (:func:`check_action`) for raw and wrapped envs: only ``int`` and numpy integers in range,
  else :class:`InvalidActionError`; a clear :class:`IllegalActionError` for an in-range illegal action on the raw
  env (the wrapped env from :func:`tableenvs.make` ends the game with -1 to the mover instead, as PettingZoo
  classic does);
* a transactional ``reset``: if it raises (bad ``seed`` or ``options``) the env is left exactly as it was, so
  ``_start`` should check every option before changing anything (what it did change is undone anyway);
* clear errors for an unknown agent name and for any call before the first ``reset()``;
* seeding through one ``numpy.random.Generator`` per env (never global state), ``render()`` in
  ``"ansi"``, ``"human"`` and ``"rgb_array"`` modes, and a readable event log used by ``tableenvs play``.

Hooks an adapter implements (all seats are integers ``0 .. n-1``; agent names are derived):

=========================  ==============================================================================
``_start(rng, options)``   begin a new game; ``options`` is the dict given to ``reset`` (may be empty)
``_current_seat()``        seat that must act now (default: ``self.game.to_act``)
``_fill_mask(mask)``       set 1 at every legal action id of the current seat (``mask`` arrives zeroed; default:
                           ``self.encoder.fill_mask``)
``_fill_observation(s, out)``  write seat ``s``'s observation into the zeroed float32 vector ``out`` (default:
                           ``self.encoder.fill_observation``)
``_apply(action)``         apply a legal action; return per-seat rewards for this step (sequence or None)
``_is_over()``             the game has ended by its rules (default: ``self.game.over``)
``_is_truncated()``        the game was cut short (e.g. ``max_rounds``); default False
``_describe_action(a)``    short text for action id ``a`` in the current state (default: ``self.encoder.describe``)
``_render_text()``         the table as text
``_render_view_text(s)``   the table as text as seat ``s`` may see it (``render_view(agent)``)
``_picture_svg(s)``        the table as SVG text, god view (``s`` None) or seat ``s``'s (``render_svg``, ``rgb_array``)
``_final_scores()``        each seat's final score in the game's own measure (default: None, total reward)
``_rules_winners()``       the seats the rules name as winners, tie-breaks included (default: ``self.game.winners``)
=========================  ==============================================================================

The defaults serve an adapter that keeps its rules engine in ``self.game`` (:mod:`tableenvs.engine`) and its encoder
in ``self.encoder`` (:class:`tableenvs.layout.Encoder`); ``docs/adding-a-game.md`` walks through one.

Class attributes an adapter sets: ``metadata`` (with ``"name"``), ``num_actions``, ``score_name`` and
``higher_is_better`` (what :meth:`TableEnv.outcome` reports) and, if ``reset`` takes options,
``reset_option_keys``. ``num_players``, ``observation_size`` and the observation bounds are
passed to ``TableEnv.__init__``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from tableenvs.ratings import competition_ranks
from tableenvs.state import (
    STATE_FORMAT,
    STATE_VERSION,
    StateError,
    as_bool,
    as_float,
    as_list,
    copy_generator,
    field,
    generator_from_state,
    plain,
)
from tableenvs.svg import rasterise
from tableenvs.validation import check_choice, check_seed

RENDER_MODES = ("ansi", "human", "rgb_array")


class IllegalActionError(ValueError):
    """An action outside the current agent's mask was given to an unwrapped env."""


@dataclass(frozen=True)
class Outcome:
    """A finished game's result, as :meth:`TableEnv.outcome` reports it. Tuples are by seat.

    ``scores`` is the game's own final measure (Pili Pili: chilis held; Llama Party and Rummikub: points) or, for
    a game without one, each seat's total reward (``score_name == "reward"``). ``winners``: the seats the rules
    name (tie-breaks included) when the game ended by its rules and they name any; otherwise (a truncated game,
    or rules that name none) the seats with the best score. ``returns``: each seat's total reward this game.
    """

    scores: tuple[float, ...]
    score_name: str
    higher_is_better: bool
    winners: tuple[int, ...]
    returns: tuple[float, ...]
    truncated: bool

    def ranks(self) -> tuple[int, ...]:
        """Competition ranks (1 = best): winners rank 1, the others by score, equal scores sharing a rank."""
        keys = [(0 if s in self.winners else 1, -x if self.higher_is_better else x) for s, x in enumerate(self.scores)]
        return tuple(competition_ranks(keys))


class InvalidActionError(IllegalActionError, TypeError):
    """An action that is not an integer id of the action space (a str, float, bool, out of range, ...).

    Raised the same way by raw, wrapped (:func:`tableenvs.make`) and single-agent envs. Only Python ``int`` and
    numpy integers (``bool`` excluded; 0-d integer arrays included) are action ids; ``None`` only for the dead step
    after the game ends.
    A subclass of :class:`IllegalActionError` (so of ``ValueError``) and of ``TypeError``.
    """


def check_action(action: Any, num_actions: int, env_name: str) -> int:
    """``action`` as an ``int`` if it is an integer id in ``0..num_actions-1``; else :class:`InvalidActionError`.

    Nothing is converted: ``"3"``, ``3.7``, ``3.0``, ``True``, ``Decimal(3)`` and ``np.float64(3)`` are refused.
    A 0-d integer array (``np.array(3)``, what Stable-Baselines3's ``model.predict`` returns for one observation)
    counts as a numpy integer, as in Gymnasium's ``Discrete.contains``.
    """
    is_integer_array = isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer)
    if (isinstance(action, (int, np.integer)) and not isinstance(action, bool)) or is_integer_array:
        action_id = int(action)
        if 0 <= action_id < num_actions:
            return action_id
        problem = "is out of range"
    elif action is None:
        problem = "is only for the dead step after the game has ended"
    else:
        problem = "is not an integer"
    raise InvalidActionError(
        f"{env_name}: action {action!r} ({type(action).__name__}) {problem}; not in action space: "
        f"an action is an int or numpy integer id in 0..{num_actions - 1}"
    )


def _names_a_file(value: Any) -> bool:
    """Whether an option value is a deck file name (the deck loaders read only ``.toml`` and ``.json`` files)."""
    return isinstance(value, str) and value.lower().endswith((".toml", ".json"))


class TableEnv(AECEnv):
    """PettingZoo AEC environment for a turn-based table game; see the module docstring for the hooks."""

    metadata: dict[str, Any] = {
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": False,
        "render_fps": 1,
    }
    num_actions: int = 0
    #: Keys accepted in ``reset(options=...)``; unknown keys are warned about and ignored.
    reset_option_keys: tuple[str, ...] = ()
    #: sample_world's cache: (event log, its length, seat, the log as that seat saw it); set on first use
    _world_log: tuple[list[str], int, int, list[str]] | None

    def __init__(
        self,
        num_players: int,
        observation_size: int | None = None,
        *,
        observation_low: float | np.ndarray = 0.0,
        observation_high: float | np.ndarray = 1.0,
        render_mode: str | None = None,
        encoder: Any = None,
    ):
        """``encoder`` (a :class:`tableenvs.layout.Encoder`), if given, becomes ``self.encoder`` and gives the
        observation's size and bounds; otherwise pass ``observation_size`` (and the bounds)."""
        super().__init__()
        if encoder is not None:
            self.encoder = encoder
            observation_size, observation_low, observation_high = encoder.size, encoder.low, encoder.high
        if render_mode is not None:
            check_choice("render_mode", render_mode, (None, *RENDER_MODES))
        self.render_mode = render_mode
        self.num_players = num_players
        if observation_size is None:
            raise TypeError(f"{type(self).__name__}: pass an encoder or an observation_size")
        self.observation_size = observation_size
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self.agent_name_mapping = {name: i for i, name in enumerate(self.possible_agents)}
        observation_box = spaces.Box(
            low=np.broadcast_to(np.asarray(observation_low, np.float32), (observation_size,)).copy(),
            high=np.broadcast_to(np.asarray(observation_high, np.float32), (observation_size,)).copy(),
            dtype=np.float32,
        )
        self._observation_spaces = {
            name: spaces.Dict(
                {
                    "observation": observation_box,
                    "action_mask": spaces.Box(0, 1, (self.num_actions,), np.int8),
                }
            )
            for name in self.possible_agents
        }
        self._action_spaces = {name: spaces.Discrete(self.num_actions) for name in self.possible_agents}
        self._rng: np.random.Generator | None = None
        self._mask: np.ndarray | None = None  # current seat's mask, cached until the next step
        self.event_log: list[str] = []
        self.agents: list[str] = []
        self._has_started = False  # set by the first successful reset()

    # ------------------------------------------------------------------ PettingZoo API

    def observation_space(self, agent: str) -> spaces.Dict:
        try:
            return self._observation_spaces[agent]
        except (KeyError, TypeError):
            raise self._unknown_agent(agent) from None

    def action_space(self, agent: str) -> spaces.Discrete:
        try:
            return self._action_spaces[agent]
        except (KeyError, TypeError):
            raise self._unknown_agent(agent) from None

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game. A reset that raises (bad ``seed`` or ``options``) leaves the env exactly as it was."""
        seed = check_seed(seed)
        if options is not None and not isinstance(options, Mapping):
            raise ValueError(f"{self.metadata['name']}: options must be a dict or None, got {options!r}")
        options = dict(options or {})
        unknown = sorted(set(options) - set(self.reset_option_keys))
        if unknown:
            known = ", ".join(self.reset_option_keys) or "none"
            warnings.warn(
                f"{self.metadata['name']}: ignoring unknown reset option(s) {', '.join(map(repr, unknown))}; "
                f"known options: {known}",
                stacklevel=2,
            )
            for key in unknown:
                del options[key]
        # Transactional: the hooks validate before they mutate, and whatever they did change is undone here.
        saved = dict(self.__dict__)
        rng = np.random.default_rng(seed) if seed is not None or self._rng is None else self._rng
        rng_state = rng.bit_generator.state
        try:
            self._rng = rng
            self.agents = self.possible_agents[:]
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
            self.terminations = dict.fromkeys(self.agents, False)
            self.truncations = dict.fromkeys(self.agents, False)
            self.infos: dict[str, dict[str, Any]] = {name: {} for name in self.agents}
            self.event_log = []
            self._mask = None
            self._returns = np.zeros(self.num_players)
            self._ended: str | None = None  # "terminated" or "truncated" once the game is over (outcome())
            self._start(rng, options)
            self.agent_selection = self.possible_agents[self._current_seat()]
        except BaseException:
            rng.bit_generator.state = rng_state
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise
        self._has_started = True

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self.agent_name_mapping.get(agent) if isinstance(agent, str) else None
        if seat is None or not self._has_started:
            seat = self._seat_of(agent)  # raises naming the agent, or asking for reset()
        observation = np.zeros(self.observation_size, np.float32)
        self._fill_observation(seat, observation)
        # .get: after the dead steps the agents have left these dicts; their masks are all zeros
        if agent == self.agent_selection and not (
            self.terminations.get(agent, True) or self.truncations.get(agent, True)
        ):
            action_mask = self._current_mask().copy()
        else:
            action_mask = np.zeros(self.num_actions, np.int8)
        return {"observation": observation, "action_mask": action_mask}

    def last(self, observe: bool = True):
        self._require_reset("last()")
        self._require_agents("last()")
        return super().last(observe)

    def step(self, action: Any) -> None:
        if not self._has_started:
            self._require_reset("step()")
        if not self.agents:
            self._require_agents("step()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        action = self._legal_action_id(action)
        self.event_log.append(f"{agent}: {self._describe_action(action)}")
        self._cumulative_rewards[agent] = 0.0
        step_rewards = self._apply(action)
        self._mask = None
        self.rewards = dict.fromkeys(self.agents, 0.0)
        if step_rewards is not None:
            for seat, reward in enumerate(step_rewards):
                self.rewards[self.possible_agents[seat]] = float(reward)
                self._returns[seat] += reward
        if self._is_over():
            self.terminations = dict.fromkeys(self.agents, True)
            self._ended = "terminated"
        elif self._is_truncated():
            self.truncations = dict.fromkeys(self.agents, True)
            self._ended = "truncated"
        else:
            self.agent_selection = self.possible_agents[self._current_seat()]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | np.ndarray | None:
        """The god view: text (``"ansi"``), printed (``"human"``) or a ``uint8`` H x W x 3 picture (``"rgb_array"``,
        the :meth:`render_svg` picture rasterised; needs the ``render`` extra)."""
        if self.render_mode is None:
            gymnasium.logger.warn(
                f"{self.metadata['name']}: render() called without a render_mode; "
                f"pass render_mode='ansi', 'human' or 'rgb_array' to the constructor."
            )
            return None
        self._require_reset("render()")
        if self.render_mode == "rgb_array":
            return rasterise(self._picture_svg(None))
        text = self._render_text()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    # -- per-player views (issue 14): one seat's view of the table, and the hook each game implements
    def render_view(self, agent: str) -> str:
        """The table as text, as ``agent`` may see it under the game's information rules (never hidden cards).

        ``render()`` stays the god view; this is what a human in that seat is shown (``tableenvs play``).
        """
        seat = self._seat_of(agent)
        return self._render_view_text(seat)

    def render_svg(self, agent: str | None = None) -> str:
        """The table as an SVG picture (text): the god view, or ``agent``'s view under the same information rules
        as :meth:`render_view`. Needs no extra; ``render_mode="rgb_array"`` rasterises the god view."""
        seat = None if agent is None else self._seat_of(agent)
        self._require_reset("render_svg()")
        return self._picture_svg(seat)

    def describe_action_public(self, action: int) -> str:
        """What the other seats learn when the agent to act takes ``action`` now (hidden cards left out), e.g.
        ``"pass a card"`` where :meth:`describe_action` says ``"pass 37"``. Shown to human tables."""
        self._require_reset("describe_action_public()")
        return self._describe_action_public(check_action(action, self.num_actions, self.metadata["name"]))

    def _render_view_text(self, seat: int) -> str:
        """Hook: the table as text from ``seat``, showing only what that seat may see."""
        raise NotImplementedError(f"{self.metadata['name']} has no per-player view")

    def _picture_svg(self, seat: int | None) -> str:
        """Hook: the table as SVG text, the god view (``seat`` None) or as ``seat`` may see it."""
        raise NotImplementedError(f"{self.metadata['name']} has no picture")

    def _describe_action_public(self, action: int) -> str:
        """Hook: :meth:`describe_action_public`; the default says only that the agent moved."""
        return "moves"

    def close(self) -> None:
        pass

    # ------------------------------------------------------------------ conveniences

    def action_masks(self) -> np.ndarray:
        """The current agent's action mask as a bool array (what sb3-contrib's MaskablePPO reads)."""
        self._require_reset("action_masks()")
        return self._current_mask().astype(bool)

    @property
    def current_seat(self) -> int:
        """Seat index of ``agent_selection``."""
        self._require_reset("current_seat")
        return self.agent_name_mapping[self.agent_selection]

    def legal_actions(self) -> list[int]:
        """Legal action ids of the agent to act."""
        self._require_reset("legal_actions()")
        return np.flatnonzero(self._current_mask()).tolist()

    def describe_action(self, action: int) -> str:
        """Human text for ``action`` in the current state (for logs and errors)."""
        self._require_reset("describe_action()")
        return self._describe_action(check_action(action, self.num_actions, self.metadata["name"]))

    def outcome(self) -> Outcome | None:
        """The result of the game that just ended (see :class:`Outcome`), or None while it is still running."""
        ended = getattr(self, "_ended", None)
        if ended is None:
            return None
        truncated = ended == "truncated"
        returns = tuple(float(x) for x in self._returns)
        final = self._final_scores()
        if final is None:
            scores, name, higher = returns, "reward", True
        else:
            scores, name, higher = tuple(float(x) for x in final), self.score_name, self.higher_is_better
        named = () if truncated else tuple(sorted(int(s) for s in self._rules_winners()))
        if not named:
            best = max(scores) if higher else min(scores)
            named = tuple(s for s, x in enumerate(scores) if x == best)
        return Outcome(scores, name, higher, named, returns, truncated)

    # ------------------------------------------------------------------ state API (clone, get_state, set_state)

    def clone(self) -> TableEnv:
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
        (:class:`tableenvs.state.StateError`) naming what is wrong; the record is checked in full before
        anything changes, so on error the env is left exactly as it was. Works before the first ``reset()``.
        """
        from tableenvs.state import check_bounds, check_restored

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
    def from_state(state: Mapping[str, Any], render_mode: str | None = None) -> TableEnv:
        """A new raw env made with the record's game and options, in the record's state."""
        from tableenvs.registry import make_raw, names

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

        def per_agent(key: str, convert) -> dict[str, Any]:
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

    def sample_world(self, agent: str, rng: np.random.Generator) -> TableEnv:
        """A clone in which everything ``agent`` cannot know is resampled with ``rng`` (uniformly among the worlds
        consistent with what it has observed, as far as the game's page says), and the env's own RNG (future
        shuffles and draws) is replaced by one seeded from ``rng``. ``observe(agent)`` of the result equals
        ``observe(agent)`` here. For determinised search (PIMC, IS-MCTS; :mod:`tableenvs.search`). Each game's
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
        self._resample_hidden(world, seat, rng)
        return world

    # Hooks of the state API: each game adapter implements the first four.

    def _clone_game(self, new: TableEnv) -> None:
        """Give ``new`` (a shallow copy of this env with its own ``_rng`` and ``event_log``) its own game."""
        raise NotImplementedError(f"{self.metadata['name']} has no clone()")

    def _state_options(self) -> dict[str, Any]:
        """The constructor options (but ``render_mode``) as plain JSON values."""
        raise NotImplementedError(f"{self.metadata['name']} has no get_state()")

    def _rules_state(self) -> dict[str, Any]:
        """The engine's state as plain JSON values."""
        raise NotImplementedError(f"{self.metadata['name']} has no get_state()")

    def _rules_from_state(self, rules: Any, rng: np.random.Generator) -> dict[str, Any]:
        """Check ``rules`` and build the attributes (``game``, ...) to swap in; raise :class:`StateError`."""
        raise NotImplementedError(f"{self.metadata['name']} has no set_state()")

    def _resample_hidden(self, world: TableEnv, seat: int, rng: np.random.Generator) -> None:
        """Resample in ``world`` (a clone with a new ``_rng``) everything ``seat`` cannot know; point the engine
        at ``world._rng``."""
        raise NotImplementedError(f"{self.metadata['name']}: sample_world() is not implemented yet")

    def _world_event_log(self, seat: int) -> list[str]:
        """The event log of a world sampled for ``seat``: ``seat``'s own moves in full, the others' as
        :meth:`describe_action_public` said them, the rules' public outcome lines. The default keeps none (a
        game that can tell its lines apart overrides it)."""
        return []

    def _infos_state(self) -> dict[str, Any]:
        """``infos`` as plain JSON values (default: they already are)."""
        return plain(self.infos)

    def _infos_from_state(self, infos: Any, agents: list[str]) -> dict[str, dict]:
        if not isinstance(infos, Mapping) or sorted(infos) != sorted(agents):
            raise StateError(f"infos must map each of the agents {agents} to a dict")
        if not all(isinstance(info, Mapping) for info in infos.values()):
            raise StateError("infos must map each agent to a dict")
        return {agent: dict(infos[agent]) for agent in agents}

    # ------------------------------------------------------------------ internals

    def _current_mask(self) -> np.ndarray:
        if self._mask is None:
            mask = np.zeros(self.num_actions, np.int8)
            self._fill_mask(mask)
            self._mask = mask
        return self._mask

    def _legal_action_id(self, action: Any) -> int:
        """``action`` as an int if legal for the current agent; :class:`InvalidActionError` if it is no action id
        (see :func:`check_action`), :class:`IllegalActionError` if the mask forbids it."""
        if type(action) is not int or not 0 <= action < self.num_actions:
            action = check_action(action, self.num_actions, self.metadata["name"])
        mask = self._current_mask()
        if not mask[action]:
            legal = np.flatnonzero(mask)
            shown = ", ".join(f"{a} ({self._describe_action(int(a))})" for a in legal[:12])
            more = f", ... {len(legal) - 12} more" if len(legal) > 12 else ""
            raise IllegalActionError(
                f"{self.metadata['name']}: illegal action {action} ({self._describe_action(action)}) for "
                f"{self.agent_selection}; legal: {shown}{more}"
            )
        return action

    def _require_reset(self, what: str) -> None:
        if not self._has_started:
            raise RuntimeError(f"{self.metadata['name']}: {what} before the first reset(); call reset() first")

    def _started_rng(self) -> np.random.Generator:
        """The env's generator: set by the first ``reset()`` (or ``set_state``), so None here is a bug."""
        rng = self._rng
        if rng is None:
            raise RuntimeError(f"{self.metadata['name']}: no generator yet (call reset() first)")
        return rng

    def _require_agents(self, what: str) -> None:
        """A clear error, not PettingZoo's bare ``KeyError`` on the departed agent, for ``what`` once every agent
        has taken its dead step (``agents`` is empty); the wrapped env's ``step`` warns instead, as PettingZoo's."""
        if self._has_started and not self.agents:
            raise RuntimeError(
                f"{self.metadata['name']}: {what} after the game ended and every agent took its dead step (agents is "
                "empty); call reset() to play again"
            )

    def _unknown_agent(self, agent: Any) -> ValueError:
        return ValueError(
            f"{self.metadata['name']}: unknown agent {agent!r}; agents are {', '.join(self.possible_agents)}"
        )

    def _seat_of(self, agent: Any) -> int:
        """Seat of agent name ``agent``; a clear error for an unknown name or before the first reset."""
        seat = self.agent_name_mapping.get(agent) if isinstance(agent, str) else None
        if seat is None:
            raise self._unknown_agent(agent)
        self._require_reset(f"observe({agent!r})")
        return seat

    def _drain_log(self) -> None:
        """Move the lines the rules engine ``self.game`` appended to its ``log`` into the event log (the engine
        contract, :mod:`tableenvs.engine`); adapters call it after starting a game and after each move."""
        log = self.game.log
        if log:
            self.event_log += log
            log.clear()

    # ------------------------------------------------------------------ hooks for adapters
    # The defaults of _current_seat, _fill_mask, _fill_observation and _describe_action serve an adapter that
    # keeps its rules engine in ``self.game`` (tableenvs.engine) and its encoder in ``self.encoder``
    # (tableenvs.layout.Encoder); an adapter without them overrides these hooks.

    def _start(self, rng: np.random.Generator, options: dict[str, Any]) -> None:
        raise NotImplementedError

    def _current_seat(self) -> int:
        return self.game.to_act

    def _fill_mask(self, mask: np.ndarray) -> None:
        self.encoder.fill_mask(self.game, mask)

    def _fill_observation(self, seat: int, out: np.ndarray) -> None:
        self.encoder.fill_observation(self.game, seat, out)

    def _apply(self, action: int) -> Sequence[float] | None:
        raise NotImplementedError

    def _is_over(self) -> bool:
        return self.game.over

    def _is_truncated(self) -> bool:
        return False

    def _describe_action(self, action: int) -> str:
        return self.encoder.describe(self.game, action)

    def _render_text(self) -> str:
        raise NotImplementedError

    #: What :meth:`_final_scores` counts, and whether more is better (see :class:`Outcome`).
    score_name: str = "reward"
    higher_is_better: bool = True

    def _final_scores(self) -> Sequence[float] | None:
        return None

    def _rules_winners(self) -> Sequence[int]:
        return self.game.winners


class _BeforeReset:
    """Stands in for the raw env in an order-enforcing wrapper until the first ``reset()``."""

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"{name} cannot be accessed before reset")


if TYPE_CHECKING:
    # The mixin only ever sits before a PettingZoo wrapper in the bases, so its super() is one (untyped: Any).
    from pettingzoo.utils.wrappers import BaseWrapper as _WrapperMixinBase
else:
    _WrapperMixinBase = object


class _ReadsRawState(_WrapperMixinBase):
    """Mixin for a PettingZoo wrapper: read the raw env's public state in one hop.

    PettingZoo's wrappers reach ``agents``, ``agent_selection``, ``rewards``, ... through ``__getattr__``, one
    chained lookup per wrapper layer (the main cost of a wrapped step). Put this mixin first in the bases and
    these names read straight from the raw env. A wrapper with ``refuses_before_reset`` reads the per-game state
    (all but ``possible_agents``) from a :class:`_BeforeReset` stand-in until its first successful ``reset()``, so
    it keeps ``OrderEnforcingWrapper``'s refusal at no cost per read.
    """

    refuses_before_reset = False

    def __init__(self, env: AECEnv, *args: Any, **kwargs: Any) -> None:
        super().__init__(env, *args, **kwargs)
        self._raw = env.unwrapped
        self._state_env = _BeforeReset() if self.refuses_before_reset else self._raw

    @property
    def possible_agents(self) -> list[str]:
        return self._raw.possible_agents

    @property
    def agents(self) -> list[str]:
        return self._state_env.agents

    @property
    def agent_selection(self) -> str:
        return self._state_env.agent_selection

    @property
    def rewards(self) -> dict[str, float]:
        return self._state_env.rewards

    @property
    def terminations(self) -> dict[str, bool]:
        return self._state_env.terminations

    @property
    def truncations(self) -> dict[str, bool]:
        return self._state_env.truncations

    @property
    def infos(self) -> dict[str, dict]:
        return self._state_env.infos

    @property
    def _cumulative_rewards(self) -> dict[str, float]:
        return self._raw._cumulative_rewards


class _TerminateIllegalWrapper(_ReadsRawState, wrappers.TerminateIllegalWrapper):
    """PettingZoo's ``TerminateIllegalWrapper``, reading the raw env's state in one hop.

    A reset that raises (bad seed or options) leaves this wrapper's own state as it was, like the raw env's.
    """

    # set by TerminateIllegalWrapper (untyped); declared for the type checker
    _terminated: bool
    _prev_obs: dict[str, np.ndarray] | None
    _prev_info: dict[str, Any] | None

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        saved = (self._terminated, self._prev_obs, self._prev_info)
        try:
            super().reset(seed=seed, options=options)
        except BaseException:
            self._terminated, self._prev_obs, self._prev_info = saved
            raise


class _AssertOutOfBoundsWrapper(_ReadsRawState, wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's ``AssertOutOfBoundsWrapper``, with the shared action check instead of a bare assert.

    Anything but an int or numpy integer in range (or ``None`` for the dead step) raises
    :class:`InvalidActionError` naming the value, its type and the range; numpy integers go on as ``int``.
    """

    def step(self, action: Any) -> None:
        raw = self._raw
        if type(action) is int and 0 <= action < raw.num_actions:  # the common case, same verdict
            self.env.step(action)
            return
        agent = raw.agent_selection
        if action is None and (raw.terminations[agent] or raw.truncations[agent]):
            self.env.step(None)
            return
        self.env.step(check_action(action, raw.num_actions, raw.metadata["name"]))


class _OrderEnforcingWrapper(_ReadsRawState, wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper``, reading the raw env's state in one hop (refused before reset).

    A reset that raises does not count as the first reset.

    Over the stack ``wrap`` builds, the ordinary calls go to the raw env in one hop: ``observe`` (and ``last``)
    records the observation for the ``TerminateIllegalWrapper`` below as its own ``observe`` does, and ``step`` with
    an in-range int that the last observation's mask allows, for a live agent, does what the three wrappers would
    (each a pass-through then). Everything else takes the wrappers' own path. The chain of calls through the three
    wrappers was about 7% of a Rummikub step (callgrind, issue 17); ``tests/test_wrapper_fast_path.py`` compares the
    two paths with PettingZoo's own wrappers on games with illegal and dead steps.
    """

    refuses_before_reset = True
    # set by OrderEnforcingWrapper (untyped); declared for the type checker
    _has_reset: bool
    _has_updated: bool

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        inner = getattr(env, "env", None)
        fused = (
            isinstance(env, _AssertOutOfBoundsWrapper)
            and isinstance(inner, _TerminateIllegalWrapper)
            and inner.env is self._raw
        )
        self._illegal = inner if fused else None  # the TerminateIllegalWrapper of ``wrap``'s stack, else no one hop

    def observe(self, agent: str) -> Any:
        illegal = self._illegal
        if illegal is None or not self._has_reset:
            return super().observe(agent)
        raw = self._raw
        observation = raw.observe(agent)
        if agent == raw.agent_selection:  # as TerminateIllegalWrapper.observe
            illegal._prev_obs = observation
            illegal._prev_info = raw.infos[agent] if agent in raw.infos else {}
        return observation

    def last(self, observe: bool = True) -> tuple:
        if self._illegal is None or not self._has_reset:
            return super().last(observe)
        raw = self._raw
        raw._require_agents("last()")
        agent = raw.agent_selection
        assert agent is not None
        observation = self.observe(agent) if observe else None
        return (
            observation,
            raw._cumulative_rewards[agent],
            raw.terminations[agent],
            raw.truncations[agent],
            raw.infos[agent],
        )

    def step(self, action: Any) -> None:
        illegal, raw = self._illegal, self._raw
        if illegal is not None and self._has_reset and type(action) is int and 0 <= action < raw.num_actions:
            previous = illegal._prev_obs
            if previous is not None and not illegal._terminated:
                agent = raw.agent_selection
                live = agent in raw.terminations and not (raw.terminations[agent] or raw.truncations[agent])
                if live and previous["action_mask"][action]:
                    self._has_updated = True  # as OrderEnforcingWrapper.step; TerminateIllegalWrapper.step then
                    illegal._prev_obs = illegal._prev_info = None  # forgets the observation and steps the env
                    raw.step(action)
                    return
        super().step(action)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        saved = (self._has_reset, self._has_updated)
        try:
            super().reset(seed=seed, options=options)
        except BaseException:
            self._has_reset, self._has_updated = saved
            raise
        self._state_env = self._raw


def wrap(raw_env: TableEnv, illegal_reward: float = -1.0) -> AECEnv:
    """Wrap a raw env as PettingZoo classic ``env()`` does.

    An illegal action ends the game with ``illegal_reward`` to the mover (``TerminateIllegalWrapper``); an
    action outside the action space raises (``AssertOutOfBoundsWrapper``); calls out of order raise
    (``OrderEnforcingWrapper``). The three are PettingZoo's own wrappers, subclassed only to read the raw
    env's state in one hop instead of through a ``__getattr__`` chain (about 3x the raw env's cost per step
    otherwise; see docs/benchmarks.md), and the outer one answers ordinary ``observe``/``last``/``step`` calls in
    one hop as the three would (``_OrderEnforcingWrapper``).
    """
    env = _TerminateIllegalWrapper(raw_env, illegal_reward=illegal_reward)
    env = _AssertOutOfBoundsWrapper(env)
    return _OrderEnforcingWrapper(env)
