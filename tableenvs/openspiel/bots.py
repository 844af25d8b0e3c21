"""Agents across the two libraries: a tableenvs policy as a ``pyspiel.Bot``, and an OpenSpiel bot as a policy.

Where you are: the agents of :mod:`tableenvs.openspiel`. :class:`PolicyBot` plays any
:func:`tableenvs.policies.make_policy` spec in an OpenSpiel game of the bridge; :class:`BotPolicy` seats an OpenSpiel
bot in tableenvs (evaluation, ``tableenvs eval``), on a state of :func:`~tableenvs.openspiel.game.game_for_env`
continuing from a world the seat cannot tell from the true one. :func:`make_bot_policy` is the ``"openspiel:..."``
policy spec's entry point (``tableenvs.policies.SPEC_PREFIXES``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pyspiel

from tableenvs.core.table_env import TableEnv
from tableenvs.openspiel.game import TableGame, game_for_env
from tableenvs.policies.search import check_acting_in


class PolicyBot(pyspiel.Bot):
    """A tableenvs policy (any :func:`tableenvs.policies.make_policy` spec: ``"heuristic"``, ``"search:sims=50"``,
    a ``.npz`` model, a ``.zip`` model with ``trust_models=True``, a policy object) as a ``pyspiel.Bot`` for the games
    of the bridge.

    The policy sees what it sees in tableenvs: the seat's observation vector and action mask of the state's env
    (``"search"`` reads it only through ``sample_world``). Its randomness comes from ``seed``.
    """

    def __init__(
        self, player_id: int, policy: Any = "heuristic", seed: int | None = None, *, trust_models: bool = False
    ):
        pyspiel.Bot.__init__(self)
        self._trust_models = bool(trust_models)
        self._player_id = int(player_id)
        self._spec = policy
        self._rng = np.random.default_rng(seed)
        self._policy: Any = None
        self._rebuild = isinstance(policy, str) and (policy == "search" or policy.startswith("search:"))

    def player_id(self) -> int:
        return self._player_id

    def restart_at(self, state: Any) -> None:
        pass

    def inform_action(self, state: Any, player_id: int, action: int) -> None:
        pass

    def provides_policy(self) -> bool:
        return False

    def step(self, state: Any) -> int:
        from tableenvs.policies import make_policy

        env = getattr(state, "env", None)
        if not isinstance(env, TableEnv):
            raise ValueError(f"PolicyBot.step: not a state of a tableenvs OpenSpiel game after the deal: {state!r}")
        if state.current_player() != self._player_id:
            raise ValueError(f"PolicyBot.step: player {state.current_player()} acts, this bot is {self._player_id}")
        if self._policy is None or self._rebuild:  # search searches from the env it is made with
            self._policy = make_policy(self._spec, env, trust_models=self._trust_models)
        seen = env.observe(env.agent_selection)
        return int(self._policy.act(seen["observation"], seen["action_mask"], self._rng))


BotFactory = Callable[[TableGame, int, int], Any]


class BotPolicy:
    """An OpenSpiel bot as a tableenvs policy (``act(observation, action_mask, rng) -> int``) for ``env``.

    ``make_bot(game, player_id, seed)`` builds a ``pyspiel.Bot``; a fresh bot is made for every decision, seeded
    from the ``rng`` the policy is given, so decisions are reproducible and no bot state leaks between games. The
    bot is handed a state of :func:`game_for_env` continuing from ``env.sample_world(agent, rng)``: everything the
    seat cannot know is resampled first (``determinise=False`` hands it a clone of the true state instead: the bot
    then sees hidden cards; for experiments only). Like the ``"search"`` policy it must be made with the env it
    plays (``make_bot_policy(spec, env)``) and reads only the agent to act's observation there.
    """

    def __init__(self, env: Any, make_bot: BotFactory, *, name: str = "openspiel", determinise: bool = True):
        raw = getattr(env, "unwrapped", None)
        if not isinstance(raw, TableEnv):
            raise TypeError(f"BotPolicy: env must be a tableenvs env, got {env!r}")
        self.env = raw
        self.game = game_for_env(raw)
        self.make_bot = make_bot
        self.name = name
        self.determinise = determinise

    def __repr__(self) -> str:
        return f"BotPolicy({self.env.metadata['name']}, {self.name})"

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        env = self.env
        agent = env.agent_selection
        check_acting_in(env, observation, action_mask, self.name, "make_bot_policy(spec, env)")
        legal = np.flatnonzero(action_mask)
        if legal.size == 1:
            return int(legal[0])
        world = env.sample_world(agent, rng) if self.determinise else env.clone()
        state = self.game.state_from_env(world)
        bot = self.make_bot(self.game, env.agent_name_mapping[agent], int(rng.integers(2**31 - 1)))
        action = int(bot.step(state))
        if not 0 <= action < len(action_mask) or not action_mask[action]:
            raise ValueError(f"{self.name}: the bot chose {action}, not a legal action ({legal.tolist()[:12]})")
        return action


_BOT_KEYS = {"random": (), "mcts": ("sims", "c", "rollouts", "depth"), "ismcts": ("sims", "c", "rollouts", "depth")}


def parse_bot_spec(spec: str) -> tuple[str, dict[str, float]]:
    """``"openspiel:<bot>[:key=value...]"`` as ``(bot, options)``; ``ValueError`` naming the problem.

    Bots: ``random`` (``open_spiel.python.bots.uniform_random``), ``mcts`` (``open_spiel.python.algorithms.mcts``
    on the determinised state) and ``ismcts`` (``open_spiel.python.algorithms.ismcts``). Options of the two
    searches: ``sims`` (simulations per decision, default 100), ``c`` (UCT constant, default 2), ``rollouts``
    (random rollouts per leaf, default 1), ``depth`` (cut a rollout off after this many moves, valued 0 with
    terminal rewards; default none).
    """
    prefix, _, rest = spec.partition(":")
    bot, *parts = rest.split(":") if rest else [""]
    if prefix != "openspiel" or bot not in _BOT_KEYS:
        raise ValueError(f"not an OpenSpiel bot spec: {spec!r}; expected openspiel:{'|'.join(_BOT_KEYS)}[:key=value]")
    options: dict[str, float] = {}
    for part in parts:
        key, sep, value = part.partition("=")
        if not sep or key not in _BOT_KEYS[bot]:
            keys = ", ".join(_BOT_KEYS[bot]) or "none"
            raise ValueError(f"{spec!r}: bad option {part!r}; options of openspiel:{bot}: {keys}")
        try:
            number = float(value) if key == "c" else int(value)
        except ValueError:
            raise ValueError(f"{spec!r}: {key} must be a {'number' if key == 'c' else 'whole number'}") from None
        if not (number > 0 and math.isfinite(number)):
            raise ValueError(f"{spec!r}: {key} must be positive, got {value!r}")
        options[key] = number
    return bot, options


def bot_factory(spec: str) -> BotFactory:
    """``make_bot(game, player_id, seed)`` for an ``"openspiel:..."`` spec (see :func:`parse_bot_spec`)."""
    bot, options = parse_bot_spec(spec)
    sims, c = int(options.get("sims", 100)), float(options.get("c", 2.0))
    rollouts, depth = int(options.get("rollouts", 1)), options.get("depth")

    def make_bot(game: TableGame, player_id: int, seed: int) -> Any:
        random_state = np.random.RandomState(seed)
        if bot == "random":
            from open_spiel.python.bots.uniform_random import UniformRandomBot

            return UniformRandomBot(player_id, random_state)
        from open_spiel.python.algorithms import mcts

        evaluator = mcts.RandomRolloutEvaluator(rollouts, random_state, max_length=depth)
        if bot == "mcts":
            return mcts.MCTSBot(game, c, sims, evaluator, random_state=random_state, solve=False)
        from open_spiel.python.algorithms import ismcts

        searcher = ismcts.ISMCTSBot(game, evaluator, c, sims, random_state=random_state)
        # OpenSpiel's IS-MCTS resamples each root world with an unseeded pyspiel.UniformProbabilitySampler; the
        # worlds here are drawn from the bot's own seed instead, so a decision follows from the seed alone
        searcher.set_resampler(seeded_resampler(np.random.default_rng(seed)))
        return searcher

    return make_bot


def seeded_resampler(rng: np.random.Generator) -> Callable[[Any, int], Any]:
    """An IS-MCTS resampler (``ISMCTSBot.set_resampler``): ``state.resample_from_infostate(player, sampler)``
    with the sampler drawing from ``rng``, so the resampled worlds follow from ``rng``'s seed."""

    def resample(state: Any, player: int) -> Any:
        return state.resample_from_infostate(player, rng.random)

    return resample


def make_bot_policy(spec: str, env: Any) -> BotPolicy:
    """A tableenvs policy for ``env`` playing the OpenSpiel bot ``spec`` (``"openspiel:ismcts:sims=100"``, ...)."""
    return BotPolicy(env, bot_factory(spec), name=spec)
