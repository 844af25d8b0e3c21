"""The wrapped env of :func:`tableenvs.make`: PettingZoo classic's three wrappers, reading the raw env in one hop.

Where you are: :mod:`tableenvs.core`. :func:`wrap` stacks PettingZoo's own ``TerminateIllegalWrapper``,
``AssertOutOfBoundsWrapper`` and ``OrderEnforcingWrapper`` as PettingZoo classic's ``env()`` does; the subclasses
here change only how they reach the raw env's state (one hop instead of a ``__getattr__`` chain), never what
they do (``tests/test_wrapper_fast_path.py`` compares them with PettingZoo's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from tableenvs.core.actions import check_action
from tableenvs.core.aec_base import AECBase


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
    def infos(self) -> dict[str, dict[str, Any]]:
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
    wrappers was about 7% of a Rummikub step (callgrind); ``tests/test_wrapper_fast_path.py`` compares the
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

    def last(self, observe: bool = True) -> tuple[Any, ...]:
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


def wrap(raw_env: AECBase, illegal_reward: float = -1.0) -> AECEnv:
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
