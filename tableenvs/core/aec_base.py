"""PettingZoo's AEC bookkeeping, once for every game: the lower layer of :class:`tableenvs.core.table_env.TableEnv`.

Where you are: :mod:`tableenvs.core`, the shared base under every game (it imports nothing of tableenvs above
``core``). :class:`AECBase` does, from the hooks a game adapter fills in (the table in
:mod:`tableenvs.core.table_env`):

* ``agents`` / ``possible_agents`` (``player_0 .. player_{n-1}``) and ``agent_selection``;
* ``rewards``, ``_cumulative_rewards``, ``terminations``, ``truncations``, ``infos``;
* ``observe(agent)`` returning ``{"observation": float32 vector, "action_mask": int8 vector}``, the mask all
  zeros except for the agent to act (PettingZoo classic convention);
* the dead-agent step after the game ends (every agent is stepped once more with ``None``);
* one action check (:func:`tableenvs.core.actions.check_action`) for raw and wrapped envs: only ``int`` and numpy
  integers in range, else ``InvalidActionError``; a clear ``IllegalActionError`` for an in-range illegal action on
  the raw env (the wrapped env from :func:`tableenvs.make` ends the game with -1 to the mover instead, as
  PettingZoo classic does);
* a transactional ``reset``: if it raises (bad ``seed`` or ``options``) the env is left exactly as it was, so
  ``_start`` should check every option before changing anything (what it did change is undone anyway);
* clear errors for an unknown agent name and for any call before the first ``reset()``;
* seeding through one ``numpy.random.Generator`` per env (never global state), ``render()`` in
  ``"ansi"``, ``"human"`` and ``"rgb_array"`` modes, and a readable event log used by ``tableenvs play``;
* :meth:`AECBase.outcome`, the finished game's :class:`tableenvs.core.outcome.Outcome`.

The state API (``clone``, ``get_state``, ``set_state``, ``sample_world``) is the layer above,
:mod:`tableenvs.core.state_api`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from tableenvs.core.actions import IllegalActionError, check_action
from tableenvs.core.outcome import CUT_SHORT, RULES_ENDED, EndReason, Outcome
from tableenvs.core.svg import rasterise
from tableenvs.core.validation import check_choice, check_seed

RENDER_MODES = ("ansi", "human", "rgb_array")


class AECBase(AECEnv):
    """PettingZoo's AEC bookkeeping for a turn-based table game, driven by the hooks at the end of the class.

    Not subclassed by a game directly: a game adapter subclasses :class:`tableenvs.core.table_env.TableEnv`, whose
    docstring lists every hook in one table.
    """

    metadata: dict[str, Any] = {
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": False,
        "render_fps": 1,
    }
    #: The number of action ids; an adapter that passes an encoder takes it from the encoder's ``num_actions``.
    num_actions: int = 0
    #: Keys accepted in ``reset(options=...)``; unknown keys are warned about and ignored.
    reset_option_keys: tuple[str, ...] = ()

    def __init_subclass__(cls, *, name: str | None = None, **kwargs: Any) -> None:
        """``class MyGameEnv(TableEnv, name="mygame_v0")``: the env's name, added to the metadata it inherits."""
        super().__init_subclass__(**kwargs)
        if name is not None:
            cls.metadata = {**cls.metadata, "name": name}

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
        """``encoder`` (a :class:`tableenvs.core.layout.Encoder`), if given, becomes ``self.encoder`` and gives the
        observation's size and bounds and the number of actions; otherwise pass ``observation_size`` (and the
        bounds) and set the class attribute ``num_actions``."""
        super().__init__()
        if encoder is not None:
            self.encoder = encoder
            observation_size, observation_low, observation_high = encoder.size, encoder.low, encoder.high
            self.num_actions = encoder.num_actions
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

    def last(self, observe: bool = True) -> tuple[Any, ...]:
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
        self._play(agent, action)

    def step_trusted(self, action: int) -> None:
        """:meth:`step` for search rollouts in a sampled world: ``action`` must be a legal action id (an ``int`` the
        mask allows) for the agent to act in a game that is not over, which is not checked, and the step is not
        written to ``event_log``. Everything else is :meth:`step`'s (the rules, rewards, terminations, the next
        agent), so a rollout plays the same game, without building the mask or the move's text at every step."""
        self._play(self.agent_selection, action)

    def _play(self, agent: str, action: int) -> None:
        """Apply a legal ``action`` of ``agent`` (the agent to act) and do PettingZoo's bookkeeping after it."""
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

    # -- per-player views: one seat's view of the table, and the hook each game implements
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

    def is_tentative(self, action: int) -> bool:
        """Whether ``action`` only prepares the agent's move (e.g. a Rummikub tile staged): nothing is revealed to
        the others and nothing is drawn until the turn's closing move, so a front end may let a player take it
        back by replaying the turn without it (``tableenvs serve`` does)."""
        return self._is_tentative(int(action))

    def render_public_svg(self) -> str:
        """The table as an SVG picture as everyone sees it (a spectator's view): no seat's hidden cards, no moves.
        ``NotImplementedError`` for a game without one."""
        self._require_reset("render_public_svg()")
        return self._public_picture_svg()

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

    def _is_tentative(self, action: int) -> bool:
        """Hook: :meth:`is_tentative`; the default: no action is."""
        return False

    def _public_picture_svg(self) -> str:
        """Hook: the table as SVG text as everyone sees it (:meth:`render_public_svg`)."""
        raise NotImplementedError(f"{self.metadata['name']} has no public picture")

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
        return Outcome(scores, name, higher, named, returns, truncated, self._declared_end_reason(truncated))

    # ------------------------------------------------------------------ internals

    def _declared_end_reason(self, truncated: bool) -> EndReason:
        """The declared reason (``end_reasons``) that the hook :meth:`_end_reason` names; a clear error otherwise."""
        key = self._end_reason(truncated)
        for reason in self.end_reasons:
            if reason.key == key and reason.truncated == truncated:
                return reason
        kind = "cut short" if truncated else "ended by its rules"
        keys = ", ".join(r.key for r in self.end_reasons if r.truncated == truncated) or "none"
        raise ValueError(
            f"{self.metadata['name']}: end reason {key!r} is not one it declares for a game {kind}: {keys}"
        )

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
        contract, :mod:`tableenvs.core.engine`); adapters call it after starting a game and after each move."""
        log = self.game.log
        if log:
            self.event_log += log
            log.clear()

    # ------------------------------------------------------------------ hooks for adapters
    # The defaults of _current_seat, _fill_mask, _fill_observation and _describe_action serve an adapter that
    # keeps its rules engine in ``self.game`` (tableenvs.core.engine) and its encoder in ``self.encoder``
    # (tableenvs.core.layout.Encoder); an adapter without them overrides these hooks.

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

    #: Every way a game can end (see :class:`Outcome`): the rules' reasons and the env's cut-offs, as data.
    end_reasons: tuple[EndReason, ...] = (RULES_ENDED, CUT_SHORT)

    def _end_reason(self, truncated: bool) -> str:
        """The key of the reason the game just ended for: the one reason of ``end_reasons`` of its kind."""
        keys = [reason.key for reason in self.end_reasons if reason.truncated == truncated]
        if len(keys) != 1:
            raise NotImplementedError(
                f"{self.metadata['name']} declares {len(keys)} end reasons of this kind ({', '.join(keys) or 'none'}): "
                "its _end_reason(truncated) must say which one ended the game"
            )
        return keys[0]
