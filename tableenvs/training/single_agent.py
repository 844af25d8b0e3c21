"""A Gymnasium single-agent view of any tableenvs game, for Stable-Baselines3 and sb3-contrib's MaskablePPO.

Where you are: shared training plumbing. :class:`SingleAgentEnv` puts a learner in one seat of a tableenvs
game; the other seats are played inside :meth:`~SingleAgentEnv.step` by opponent policies.

=====================  ===========================================================================================
Observation space      the game's ``observation`` Box (the learner's own view; float32)
Action space           ``Discrete(num_actions)`` of the game; legal actions from :meth:`~SingleAgentEnv.action_masks`
Reward                 the learner's reward accumulated since its previous action (its own move included, then
                       every opponent move until the learner must act again or the game ends)
Episode                one game; ``terminated`` when it ends by its rules, ``truncated`` when cut short
                       (e.g. ``max_rounds``)
Seat                   ``seat=k`` (fixed), ``"rotate"`` (0, 1, 2, ... one per episode; ``reset(seed=...)``
                       restarts at 0, so a seed fixes the whole episode) or ``"random"``
Opponents              one spec for every other seat, a list of ``num_players - 1`` specs (the first sits to the
                       learner's left, i.e. the next seat, and so on round the table), or an
                       :class:`OpponentPool` sampled every episode. A spec is anything
                       :func:`tableenvs.policies.make_policy` accepts: ``"random"``, ``"heuristic"``,
                       ``"trained"``, a numpy policy (``.npz``), a saved SB3 model (``.zip``, only with
                       ``trust_models=True``: its pickles can run code), a :class:`~tableenvs.policies.Policy` or a
                       callable
Illegal action         ``illegal_action="raise"`` (default): :class:`tableenvs.core.actions.IllegalActionError` naming
                       the legal actions (use masks); ``"lose"``: the episode ends at once (``terminated``) with
                       reward ``illegal_reward`` (default -1.0) for that step, as PettingZoo classic's wrapper
                       does; ``"random"``: a uniformly random legal action (from the env's generator) is played
                       instead. Either way ``info["illegal_action"]`` holds the action asked for (and
                       ``info["played_action"]`` the one played with ``"random"``). The non-raising modes are for
                       algorithms without masks (PPO, A2C, DQN) and for env checkers
Info                   ``seat`` (the learner's seat); when the episode ends also ``episode_rewards`` (total reward
                       of every seat this game, learner's seat included) and ``game_info`` (the game's own
                       ``infos`` for the learner); ``illegal_action`` / ``played_action`` after an illegal action
=====================  ===========================================================================================

Made by name through Gymnasium after ``import tableenvs`` (see :mod:`tableenvs.core.registry`)::

    gymnasium.make("tableenvs/PiliPili-v0", num_players=4, opponents="heuristic", seat="rotate")

or directly: ``SingleAgentEnv("pilipili_v0", num_players=4, opponents=["random", "heuristic", "model.zip"])``.
Every other keyword is a game option, checked by the game. An illegal learner action raises
:class:`tableenvs.core.actions.IllegalActionError` unless ``illegal_action`` says otherwise (see above); an action
that is not an ``int`` or numpy integer in range raises :class:`tableenvs.core.actions.InvalidActionError`. After any
exception raised by ``step()`` or ``reset()`` (the episode's state is then unknown) every ``step()`` is refused,
naming that exception, until ``reset()`` succeeds.
If a game ends before the learner's first decision (possible only in toy games), :meth:`reset` deals again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from tableenvs.core.actions import IllegalActionError, check_action
from tableenvs.core.registry import check_option_names, make_raw
from tableenvs.core.registry import spec as game_spec
from tableenvs.core.table_env import TableEnv
from tableenvs.core.validation import check_seed
from tableenvs.policies import Policy, PolicySpec, make_policy

SEAT_MODES = ("rotate", "random")
#: What an illegal (in range, masked out) learner action does; see the module docstring.
ILLEGAL_ACTION_MODES = ("raise", "lose", "random")
#: The wrapper's own keyword options; every other keyword goes to the game.
WRAPPER_OPTIONS = ("opponents", "seat", "render_mode", "illegal_action", "illegal_reward", "trust_models")
_MAX_REDEALS = 1000


@dataclass
class OpponentPool:
    """Opponents drawn afresh every episode, independently for each opponent seat.

    With probability ``latest_prob`` a seat gets the last member of ``members`` (e.g. the newest snapshot of a
    self-play learner), otherwise a uniformly chosen earlier member. Members are policy specs (names or
    ``.zip`` paths are best: they pickle cheaply to subprocess workers and are loaded once per worker).
    Saved models in the pool predict ``deterministic``-ally or by sampling (default: sampling, for variety).
    ``trusted`` lists the members the pool's maker wrote itself (a self-play run's snapshots), loaded even where the
    env has no ``trust_models``.
    """

    members: list[PolicySpec] = field(default_factory=lambda: ["random"])
    latest_prob: float = 0.5
    deterministic: bool = False
    trusted: list[str] = field(default_factory=list)

    def __post_init__(self):
        if not self.members:
            raise ValueError("OpponentPool needs at least one member")
        if not 0.0 <= self.latest_prob <= 1.0:
            raise ValueError(f"latest_prob must be in [0, 1], got {self.latest_prob!r}")

    def sample(self, rng: np.random.Generator) -> PolicySpec:
        if len(self.members) == 1 or rng.random() < self.latest_prob:
            return self.members[-1]
        return self.members[int(rng.integers(len(self.members) - 1))]


RENDER_MODES = ("ansi", "human", "rgb_array")
#: Appended to the game's refusal of an illegal learner action under ``illegal_action="raise"``: the options that
#: let an algorithm or checker without masks (SB3's ``check_env``, PPO, DQN) step the env.
ILLEGAL_ACTION_HINT = (
    "mask actions with env.action_masks() (MaskablePPO does), or make the env with illegal_action='random' "
    "(play a random legal action instead) or illegal_action='lose' (end the game with illegal_reward), "
    "e.g. for SB3's check_env, PPO or DQN"
)


class SingleAgentEnv(gymnasium.Env):
    """One learner seat of a tableenvs game as a Gymnasium env; see the module docstring."""

    #: As the game's: ``"rgb_array"`` draws the table only when :meth:`render` is called (needs the ``render``
    #: extra then), so SB3's ``make_vec_env``, which asks for it, costs nothing per step.
    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 1}

    def __init__(
        self,
        game: str | TableEnv,
        *,
        opponents: PolicySpec | list[PolicySpec] | OpponentPool = "random",
        seat: int | str = "rotate",
        render_mode: str | None = None,
        illegal_action: str = "raise",
        illegal_reward: float = -1.0,
        trust_models: bool = False,
        **options: Any,
    ):
        if not isinstance(illegal_action, str) or illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(
                f"illegal_action must be one of {', '.join(map(repr, ILLEGAL_ACTION_MODES))}; got {illegal_action!r}"
            )
        if isinstance(illegal_reward, bool) or not isinstance(illegal_reward, (int, float, np.integer, np.floating)):
            raise TypeError(f"illegal_reward must be a number, got {illegal_reward!r}")
        if not np.isfinite(illegal_reward):
            raise ValueError(f"illegal_reward must be finite, got {illegal_reward!r}")
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self.trust_models = bool(trust_models)  # SB3 .zip opponents (pickles) load only with it
        if render_mode not in (None, *RENDER_MODES):
            # A TypeError, not a ValueError: SB3's make_vec_env first tries render_mode="rgb_array" and retries
            # without it on TypeError only.
            raise TypeError(f"render_mode must be one of None, 'ansi', 'human', 'rgb_array'; got {render_mode!r}")
        if isinstance(game, TableEnv):
            if options or render_mode is not None:
                raise TypeError("game options and render_mode go to the game's constructor, not with a game instance")
            self.game = game
        elif isinstance(game, str):
            check_option_names(game_spec(game), options, wrapper_options=WRAPPER_OPTIONS)
            if render_mode is not None:
                options["render_mode"] = render_mode
            self.game = make_raw(game, **options)
        else:
            raise TypeError(f"game must be a tableenvs name or a TableEnv instance, got {type(game).__name__}")
        self.render_mode = self.game.render_mode
        self.num_players = self.game.num_players
        agent = self.game.possible_agents[0]
        self.observation_space = self.game.observation_space(agent)["observation"]
        self.action_space: spaces.Discrete = spaces.Discrete(self.game.num_actions)
        self.seat_mode = self._check_seat(seat)
        self._policy_cache: dict[Any, Policy] = {}
        self.set_opponents(opponents)
        self.learner_seat = 0
        self._episodes = 0
        self._seat_policies: dict[int, Policy] = {}
        self._episode_rewards = np.zeros(self.num_players)
        self._over = True
        self._failure: str | None = None  # why step() is refused after an exception, until a reset succeeds

    # ------------------------------------------------------------------ configuration

    def _check_seat(self, seat: int | str) -> int | str:
        if isinstance(seat, str) and seat in SEAT_MODES:
            return seat
        if not isinstance(seat, (str, bool)) and isinstance(seat, (int, np.integer)) and 0 <= seat < self.num_players:
            return int(seat)
        raise ValueError(f"seat must be a seat index 0..{self.num_players - 1}, 'rotate' or 'random'; got {seat!r}")

    def set_opponents(self, opponents: PolicySpec | list[PolicySpec] | OpponentPool) -> None:
        """Replace the opponents from the next episode on (callable through a VecEnv's ``env_method``).

        Every policy is built here, so a bad spec fails at once rather than at the next reset.
        """
        if isinstance(opponents, (list, tuple)):
            if len(opponents) != self.num_players - 1:
                raise ValueError(
                    f"opponents lists one policy per other seat: {self.num_players - 1} for {self.num_players} "
                    f"players, got {len(opponents)}"
                )
            opponents = list(opponents)
        if isinstance(opponents, OpponentPool):
            keys = {self._policy_key(spec, opponents.deterministic) for spec in opponents.members}
            for spec in opponents.members:
                self._policy(spec, opponents.deterministic, str(spec) in opponents.trusted)
        else:
            specs = opponents if isinstance(opponents, list) else [opponents]
            keys = {self._policy_key(spec, True) for spec in specs}
            for spec in specs:
                self._policy(spec, True)
        # Forget policies no longer used (e.g. snapshots that left a self-play pool) so memory stays bounded.
        self._policy_cache = {key: policy for key, policy in self._policy_cache.items() if key in keys}
        self.opponents = opponents

    @staticmethod
    def _policy_key(spec: PolicySpec, deterministic: bool) -> tuple[Any, bool]:
        return (spec, deterministic) if isinstance(spec, (str, Path)) else (id(spec), deterministic)

    def _policy(self, spec: PolicySpec, deterministic: bool, trusted: bool = False) -> Policy:
        key = self._policy_key(spec, deterministic)
        policy = self._policy_cache.get(key)
        if policy is None:
            trust = self.trust_models or trusted
            policy = make_policy(spec, self.game, deterministic=deterministic, trust_models=trust)
            self._policy_cache[key] = policy
        return policy

    # ------------------------------------------------------------------ Gymnasium API

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        seed = check_seed(seed)
        try:
            result = self._reset(seed, options)
        except BaseException as error:
            self._fail("reset()", error)
            raise
        self._failure = None
        return result

    def _reset(self, seed: int | None, options: dict[str, Any] | None):
        super().reset(seed=seed)
        if seed is not None:
            self._episodes = 0  # a seed fixes the whole episode, seat rotation included
        rng = self.np_random
        for _ in range(_MAX_REDEALS):
            if self.seat_mode == "rotate":
                self.learner_seat = self._episodes % self.num_players
            elif self.seat_mode == "random":
                self.learner_seat = int(rng.integers(self.num_players))
            elif isinstance(self.seat_mode, int):
                self.learner_seat = self.seat_mode
            else:  # never: _check_seat let it through
                raise ValueError(f"seat must be a seat index, 'rotate' or 'random'; got {self.seat_mode!r}")
            self._episodes += 1
            self._seat_policies = self._choose_opponents(rng)
            # The game's own generator is seeded from ours, so one seed fixes deals, seats and opponents.
            game_seed = int(rng.integers(2**63)) if seed is not None else None
            self.game.reset(seed=game_seed, options=options)
            seed = None
            self._episode_rewards[:] = 0.0
            self._over = False
            self._play_opponents()
            if not self._over:
                return self._observe(), self._info()
        name = self.game.metadata["name"]
        raise RuntimeError(f"{name}: {_MAX_REDEALS} games in a row ended before the learner acted")

    def step(self, action: Any):
        """Play the learner's ``action`` and every opponent move up to the learner's next decision.

        After any exception raised here (a bad action, an opponent policy or the game failing) the episode is in
        an unknown state: every further ``step()`` is refused, naming that exception, until ``reset()``.
        """
        if self._failure is not None:
            raise RuntimeError(f"step() refused: {self._failure}; the episode cannot go on, call reset()")
        if self._over:
            raise RuntimeError("step() called after the episode ended; call reset()")
        try:
            return self._step(action)
        except BaseException as error:
            self._fail("step()", error)
            raise

    def _step(self, action: Any):
        game = self.game
        action = check_action(action, game.num_actions, game.metadata["name"])
        learner = game.possible_agents[self.learner_seat]
        illegal: dict[str, int] = {}
        if self.illegal_action != "raise" and not game.action_masks()[action]:
            illegal["illegal_action"] = action
            if self.illegal_action == "lose":
                # As PettingZoo classic's TerminateIllegalWrapper: the game stops here, the mover is penalised.
                self._over = True
                self._episode_rewards[self.learner_seat] += self.illegal_reward
                return self._observe(), self.illegal_reward, True, False, {**self._info(), **illegal}
            action = int(self.np_random.choice(np.flatnonzero(game.action_masks())))
            illegal["played_action"] = action
        try:
            game.step(action)
        except IllegalActionError as error:  # illegal_action="raise": the game refused, changing nothing
            raise type(error)(f"{error}; {ILLEGAL_ACTION_HINT}") from None
        reward = self._collect_rewards(learner)
        reward += self._play_opponents()
        terminated = bool(game.terminations[learner])
        truncated = bool(game.truncations[learner])
        return self._observe(), reward, terminated, truncated, {**self._info(), **illegal}

    def _fail(self, where: str, error: BaseException) -> None:
        self._failure = f"an earlier {where} raised {type(error).__name__}: {error}"
        self._over = True

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as a bool array (all False once the episode has ended)."""
        if self._over:  # ended, or stopped by an exception
            return np.zeros(self.action_space.n, dtype=bool)
        return self.game.action_masks()

    def render(self) -> str | np.ndarray | None:
        """The game's god view: text (``"ansi"``), printed (``"human"``) or a picture (``"rgb_array"``)."""
        return self.game.render()

    def close(self) -> None:
        self.game.close()

    # ------------------------------------------------------------------ internals

    def _choose_opponents(self, rng: np.random.Generator) -> dict[int, Policy]:
        others = [(self.learner_seat + k) % self.num_players for k in range(1, self.num_players)]
        opponents = self.opponents
        if isinstance(opponents, OpponentPool):
            return {s: self._policy(opponents.sample(rng), opponents.deterministic) for s in others}
        if isinstance(opponents, list):
            return {s: self._policy(spec, True) for s, spec in zip(others, opponents, strict=True)}
        policy = self._policy(opponents, True)
        return dict.fromkeys(others, policy)

    def _collect_rewards(self, learner: str) -> float:
        game = self.game
        for agent, value in game.rewards.items():
            self._episode_rewards[game.agent_name_mapping[agent]] += value
        if any(game.terminations.values()) or any(game.truncations.values()):
            self._over = True
        return float(game.rewards[learner])

    def _play_opponents(self) -> float:
        """Play every opponent decision until the learner must act or the game ends; the learner's reward."""
        game = self.game
        learner = game.possible_agents[self.learner_seat]
        reward = 0.0
        rng = self.np_random
        while not self._over and game.agent_selection != learner:
            agent = game.agent_selection
            observation = game.observe(agent)
            action = self._seat_policies[game.agent_name_mapping[agent]].act(
                observation["observation"], observation["action_mask"], rng
            )
            game.step(action)
            reward += self._collect_rewards(learner)
        return reward

    def _observe(self) -> np.ndarray:
        return self.game.observe(self.game.possible_agents[self.learner_seat])["observation"]

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"seat": self.learner_seat}
        if self._over:
            learner = self.game.possible_agents[self.learner_seat]
            info["episode_rewards"] = self._episode_rewards.copy()
            info["game_info"] = dict(self.game.infos.get(learner, {}))
        return info
