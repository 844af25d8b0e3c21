"""The AEC base class every tableenvs game adapter derives from.

Where you are: shared plumbing. A game package (``tableenvs/<game>/``) keeps its rules engine and its
encoder separate and writes a thin adapter class on top of :class:`TableEnv`. The adapter fills in a
handful of hooks; this class does all of PettingZoo's bookkeeping once, for every game:

* ``agents`` / ``possible_agents`` (``player_0 .. player_{n-1}``) and ``agent_selection``;
* ``rewards``, ``_cumulative_rewards``, ``terminations``, ``truncations``, ``infos``;
* ``observe(agent)`` returning ``{"observation": float32 vector, "action_mask": int8 vector}``, the mask all
  zeros except for the agent to act (PettingZoo classic convention);
* the dead-agent step after the game ends (every agent is stepped once more with ``None``);
* a clear :class:`IllegalActionError` for an illegal action on the raw env (the wrapped env from
  :func:`tableenvs.make` ends the game with -1 to the mover instead, as PettingZoo classic does);
* seeding through one ``numpy.random.Generator`` per env (never global state), ``render()`` in
  ``"ansi"`` and ``"human"`` modes, and a readable event log used by ``tableenvs play``.

Hooks an adapter implements (all seats are integers ``0 .. n-1``; agent names are derived):

=========================  ==============================================================================
``_start(rng, options)``   begin a new game; ``options`` is the dict given to ``reset`` (may be empty)
``_current_seat()``        seat that must act now
``_fill_mask(mask)``       set 1 at every legal action id of the current seat (``mask`` arrives zeroed)
``_fill_observation(s, out)``  write seat ``s``'s observation into the zeroed float32 vector ``out``
``_apply(action)``         apply a legal action; return per-seat rewards for this step (sequence or None)
``_is_over()``             the game has ended by its rules
``_is_truncated()``        the game was cut short (e.g. ``max_rounds``); default False
``_describe_action(a)``    short human text for action id ``a`` in the current state
``_render_text()``         the table as text
``_final_scores()``        each seat's final score in the game's own measure (default: None, total reward)
``_rules_winners()``       the seats the rules name as winners, tie-breaks included (default: none named)
=========================  ==============================================================================

Class attributes an adapter sets: ``metadata`` (with ``"name"``), ``num_actions``, ``score_name`` and
``higher_is_better`` (what :meth:`TableEnv.outcome` reports) and, if ``reset`` takes options,
``reset_option_keys``. ``num_players``, ``observation_size`` and the observation bounds are
passed to ``TableEnv.__init__``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from tableenvs.ratings import competition_ranks
from tableenvs.validation import check_choice

RENDER_MODES = ("ansi", "human")


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

    def __init__(
        self,
        num_players: int,
        observation_size: int,
        *,
        observation_low: float | np.ndarray = 0.0,
        observation_high: float | np.ndarray = 1.0,
        render_mode: str | None = None,
    ):
        super().__init__()
        if render_mode is not None:
            check_choice("render_mode", render_mode, (None, *RENDER_MODES))
        self.render_mode = render_mode
        self.num_players = num_players
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

    # ------------------------------------------------------------------ PettingZoo API

    def observation_space(self, agent: str) -> spaces.Dict:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed)
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
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {name: {} for name in self.agents}
        self.event_log = []
        self._mask = None
        self._returns = np.zeros(self.num_players)
        self._ended: str | None = None  # "terminated" or "truncated" once the game is over (for outcome())
        self._start(self._rng, options)
        self.agent_selection = self.possible_agents[self._current_seat()]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self.agent_name_mapping[agent]
        observation = np.zeros(self.observation_size, np.float32)
        self._fill_observation(seat, observation)
        if agent == self.agent_selection and not (self.terminations[agent] or self.truncations[agent]):
            action_mask = self._current_mask().copy()
        else:
            action_mask = np.zeros(self.num_actions, np.int8)
        return {"observation": observation, "action_mask": action_mask}

    def step(self, action: Any) -> None:
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

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn(
                f"{self.metadata['name']}: render() called without a render_mode; "
                f"pass render_mode='ansi' or 'human' to the constructor."
            )
            return None
        text = self._render_text()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    # ------------------------------------------------------------------ conveniences

    def action_masks(self) -> np.ndarray:
        """The current agent's action mask as a bool array (what sb3-contrib's MaskablePPO reads)."""
        return self._current_mask().astype(bool)

    @property
    def current_seat(self) -> int:
        """Seat index of ``agent_selection``."""
        return self.agent_name_mapping[self.agent_selection]

    def legal_actions(self) -> list[int]:
        """Legal action ids of the agent to act."""
        return np.flatnonzero(self._current_mask()).tolist()

    def describe_action(self, action: int) -> str:
        """Human text for ``action`` in the current state (for logs and errors)."""
        return self._describe_action(int(action))

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

    # ------------------------------------------------------------------ internals

    def _current_mask(self) -> np.ndarray:
        if self._mask is None:
            mask = np.zeros(self.num_actions, np.int8)
            self._fill_mask(mask)
            self._mask = mask
        return self._mask

    def _legal_action_id(self, action: Any) -> int:
        """Return ``action`` as an int if legal for the current agent; raise IllegalActionError otherwise."""
        try:
            action_id = int(action)
        except (TypeError, ValueError):
            raise IllegalActionError(
                f"{self.metadata['name']}: action must be an integer id in 0..{self.num_actions - 1}, got {action!r}"
            ) from None
        mask = self._current_mask()
        if not 0 <= action_id < self.num_actions or not mask[action_id]:
            legal = np.flatnonzero(mask)
            shown = ", ".join(f"{a} ({self._describe_action(int(a))})" for a in legal[:12])
            more = f", ... {len(legal) - 12} more" if len(legal) > 12 else ""
            what = (
                f"{action_id} ({self._describe_action(action_id)})"
                if 0 <= action_id < self.num_actions
                else f"{action_id} (out of range 0..{self.num_actions - 1})"
            )
            raise IllegalActionError(
                f"{self.metadata['name']}: illegal action {what} for {self.agent_selection}; legal: {shown}{more}"
            )
        return action_id

    def _log(self, text: str) -> None:
        """Append an outcome line (trick won, round scored, ...) to the event log."""
        self.event_log.append(text)

    # ------------------------------------------------------------------ hooks for adapters

    def _start(self, rng: np.random.Generator, options: dict[str, Any]) -> None:
        raise NotImplementedError

    def _current_seat(self) -> int:
        raise NotImplementedError

    def _fill_mask(self, mask: np.ndarray) -> None:
        raise NotImplementedError

    def _fill_observation(self, seat: int, out: np.ndarray) -> None:
        raise NotImplementedError

    def _apply(self, action: int) -> Sequence[float] | None:
        raise NotImplementedError

    def _is_over(self) -> bool:
        raise NotImplementedError

    def _is_truncated(self) -> bool:
        return False

    def _describe_action(self, action: int) -> str:
        return f"action {action}"

    def _render_text(self) -> str:
        raise NotImplementedError

    #: What :meth:`_final_scores` counts, and whether more is better (see :class:`Outcome`).
    score_name: str = "reward"
    higher_is_better: bool = True

    def _final_scores(self) -> Sequence[float] | None:
        return None

    def _rules_winners(self) -> Sequence[int]:
        return ()


#: Public state of the raw env that PettingZoo's wrappers reach through ``__getattr__`` (one chained lookup
#: per wrapper layer, the main cost of a wrapped step). The wrappers below read it in one hop instead.
_RAW_STATE = ("agents", "possible_agents", "agent_selection", "rewards", "terminations", "truncations", "infos")


def _reads_raw_state(check_reset: bool):
    """Class decorator: give a PettingZoo wrapper properties that read ``_RAW_STATE`` from ``self._raw``.

    With ``check_reset`` the properties keep ``OrderEnforcingWrapper``'s refusal before ``reset()``.
    """

    def state_property(name: str) -> property:
        def read(wrapper: wrappers.BaseWrapper) -> Any:
            if check_reset and not wrapper._has_reset and name != "possible_agents":
                raise AttributeError(f"{name} cannot be accessed before reset")
            return getattr(wrapper._raw, name)

        return property(read, doc=f"The raw env's ``{name}``.")

    def decorate(cls: type) -> type:
        for name in _RAW_STATE:
            setattr(cls, name, state_property(name))
        cls._cumulative_rewards = property(lambda wrapper: wrapper._raw._cumulative_rewards)
        original_init = cls.__init__

        def __init__(self, env: AECEnv, *args: Any, **kwargs: Any) -> None:
            original_init(self, env, *args, **kwargs)
            self._raw = env.unwrapped

        cls.__init__ = __init__
        return cls

    return decorate


@_reads_raw_state(check_reset=False)
class _TerminateIllegalWrapper(wrappers.TerminateIllegalWrapper):
    """PettingZoo's ``TerminateIllegalWrapper``, reading the raw env's state in one hop."""


@_reads_raw_state(check_reset=False)
class _AssertOutOfBoundsWrapper(wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's ``AssertOutOfBoundsWrapper``, with an integer fast path for the bounds check."""

    def step(self, action: Any) -> None:
        if type(action) is int and 0 <= action < self._raw.num_actions:  # the common case, same verdict
            self.env.step(action)
        else:
            super().step(action)


@_reads_raw_state(check_reset=True)
class _OrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper``, reading the raw env's state in one hop (refused before reset)."""


def wrap(raw_env: TableEnv, illegal_reward: float = -1.0) -> AECEnv:
    """Wrap a raw env as PettingZoo classic ``env()`` does.

    An illegal action ends the game with ``illegal_reward`` to the mover (``TerminateIllegalWrapper``); an
    action outside the action space raises (``AssertOutOfBoundsWrapper``); calls out of order raise
    (``OrderEnforcingWrapper``). The three are PettingZoo's own wrappers, subclassed only to read the raw
    env's state in one hop instead of through a ``__getattr__`` chain (about 3x the raw env's cost per step
    otherwise; see docs/benchmarks.md).
    """
    env = _TerminateIllegalWrapper(raw_env, illegal_reward=illegal_reward)
    env = _AssertOutOfBoundsWrapper(env)
    return _OrderEnforcingWrapper(env)
