"""The built-in ``"search"`` policy: determinised Monte Carlo search over the state API, for every game.

Where you are: shared plumbing beside :mod:`tableenvs.policies` (which builds it by name). It uses only the env's
public API: ``sample_world(agent, rng)`` (a clone with everything the agent cannot know resampled),
``legal_actions()``, ``step``, ``rewards`` and the dead-step flags, so it works for every game that implements
``sample_world``.

The algorithm (perfect-information Monte Carlo with UCB1 at the root, a depth-1 determinised UCT). Each
simulation samples a world consistent with what the agent has observed, chooses a root action by UCB1 over the
statistics gathered so far (every legal action is tried once first, in order), plays it in that world, then plays
every seat with the rollout policy (the game's heuristic, or uniform random) until the end of the current scoring
period: the first step that pays any seat a nonzero reward (the end of a round in Pili Pili and Llama Party with
their default rewards, the end of the game otherwise), or the end of the game, or ``depth`` decisions (or ``turns``
turns). A
simulation's value is the agent's reward over those steps. The action played is the one simulated most (ties: the
higher mean value, then the lower id). UCB1's exploration term is ``c * spread * sqrt(ln N / n_a)``, ``spread``
being the range of values seen so far, so ``c`` does not depend on a game's reward scale.

The paired root (``root=paired``): each sampled world is copied once per legal action and every action is simulated
in its copy with the same rollout randomness (a generator seeded alike; the copies share the world's own RNG state),
so the actions are compared world by world (common random numbers) and the noise the worlds share cancels out of the
differences. The action played is the one of highest mean value (ties: the lower id); with ``z=X`` and a rollout
policy, the rollout policy's own choice at the root (from the observation, as it would play) is kept unless the best
action's mean gain over it, world by world, exceeds ``X`` standard errors: search overrides the heuristic only on
evidence.

Hooks a game's heuristic (the rollout policy, ``make_policy("heuristic", env)``) may provide, used when present:

* ``act_in_world(world, rng) -> int``: the same action as ``act`` on the observation of the seat to act in
  ``world``, read from the world's rules state (no observation encoded and decoded): faster rollouts. Reading the
  rules state of a *sampled* world is not cheating; the root decision still sees the real game only through
  ``sample_world`` and the observation.
* ``estimate(world, agent) -> float``: the agent's expected reward for the rest of the scoring period, in the
  game's reward units, added to a rollout's value when it is cut off after ``depth`` decisions (without one a cut-off
  rollout counts 0). Used with either rollout policy. Rummikub's heuristic has one (rack points and tile counts).

Budgets (options of the spec, ``search:sims=200``, ``search:ms=50:rollout=random``):

=================  ==========================================================================================
``sims=N``         N simulations per decision (default 100 when no ``ms`` is given). Deterministic: the same
                   state and generator give the same action.
``ms=T``           simulations until T milliseconds of this process's CPU time (``time.process_time``) have been
                   used in the decision (at least one per legal action is not guaranteed; at least one in all).
                   Not reproducible: how many simulations fit depends on the machine and its load.
``rollout=R``      ``heuristic`` (default; ``random`` for games without one), ``random``, or ``trained`` (the game's
                   shipped model, ``make_policy("trained", env)``; refused for a game that has none)
``c=X``            UCB1 exploration constant (default 0.7), ``X > 0``
``depth=D``        at most D decisions per rollout (default 400); a cut-off rollout is valued by the game's
                   ``estimate`` hook if it has one, else 0
``turns=K``        cut a rollout off (valued as at ``depth``) when the seat to act has changed K times: every
                   root action is then valued at the same point of the game, however many decisions its turn
                   takes (Rummikub: a play of k tiles is k + 1 decisions); default: no such cut-off
``root=R``         ``ucb`` (default: UCB1 over the root actions, one simulation at a time) or ``paired``
                   (every legal action simulated on each sampled world, see below; ``sims=N`` then plays
                   ``ceil(N / legal actions)`` worlds, at least 2, and ``ms=T`` worlds until T ms, at least 2)
``z=X``            with ``root=paired`` or ``mode=turns``: keep the rollout policy's own root choice unless
                   another action (turn) beats it by more than X standard errors of the paired gain (default 0:
                   always the best mean)
``batched=1``      the paired root (as ``root=paired``, with ``z``) whose rollouts all run as one batch in the
                   game's compiled engine, the batched heuristic (the shipped model with ``rollout=trained``, or
                   uniform random) playing every seat: :mod:`tableenvs.policies.batched_search`; needs the game's
                   batched engine (and batched heuristic for ``rollout=heuristic``); ``mode=flat`` only, no
                   ``turns`` or ``estimate``
``lead=L``         ``mode=turns`` only: ``heuristic`` (default: the heuristic's own turn leads the candidates) or
                   ``trained`` (the game's shipped model plays its turn out on a copy of the env, and that turn
                   leads: with ``z`` it is kept unless beaten; refused where no model is shipped for the options)
``mode=M``         ``flat`` (default: the root search above), ``ismcts`` (information-set MCTS, one tree over
                   the agent's information sets, a fresh ``sample_world`` per iteration:
                   :mod:`tableenvs.policies.ismcts`; ``sims``/``ms`` count iterations; ``c``, ``depth``, ``turns``,
                   ``rollout`` as here) or ``turns`` (search over whole turns, below)
=================  ==========================================================================================

The search over whole turns (``mode=turns``, for games whose turn is several decisions: Rummikub). At the first
decision of its turn the policy asks the game's heuristic for candidate complete turns (``propose_turns(observation,
action_mask)``: lists of action ids, the heuristic's own turn first), simulates every candidate on each sampled world
with the same rollout randomness (as ``root=paired``), each rollout cut off ``turns`` turns after the root (default
players + 1: the agent's turn, one round of the others, its next turn) and valued by the heuristic's
``fitted_estimate`` (else ``estimate``), and plays the turn of highest mean (``z`` as above, the first candidate
kept unless beaten; ``lead=trained`` puts the shipped model's own turn first) action by action; the
later decisions of that turn follow the plan without searching (while the observation is the one the plan expects).
``sims=N`` plays ``ceil(N / candidates)`` worlds, at least 2.

``make_policy("search", env)``, the bare name, plays the game's default setting (its spec's ``search_default``, the
one that beat the heuristic in docs/agents.md); ``parse_search_spec("search")`` itself is the game-independent
:class:`SearchOptions` ``()``.

The policy keeps the env it was made with and searches from that env's current state when asked to act (the
observation and mask it is given must be that env's current agent's: :func:`tableenvs.policies.make_policy` is
called with the env the policy will play, as the CLI, the tournaments and ``SingleAgentEnv`` do). It reads the
hidden state only through ``sample_world``, so it does not cheat; the generator it is given is its only source of
randomness.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from tableenvs.core.table_env import TableEnv
from tableenvs.policies.rollouts import advance, checks_actions, rollout_action
from tableenvs.policies.search_spec import DEFAULT_SIMS as DEFAULT_SIMS
from tableenvs.policies.search_spec import SearchOptions as SearchOptions
from tableenvs.policies.search_spec import default_spec as default_spec
from tableenvs.policies.search_spec import parse_search_spec as parse_search_spec


def check_acting_in(env: TableEnv, observation: np.ndarray, action_mask: np.ndarray, who: str, how: str) -> None:
    """``ValueError`` unless ``observation`` and ``action_mask`` are those of the agent to act in ``env``: a policy
    that searches from ``env``'s state (this module's, an OpenSpiel bot's) must be asked about that env's turn.
    ``who`` names the policy, ``how`` the call that makes it for an env."""
    current = env.observe(env.agent_selection)
    if not (
        np.array_equal(current["action_mask"], action_mask) and np.array_equal(current["observation"], observation)
    ):
        raise ValueError(
            f"{who}: the observation is not that of the agent to act in the env the policy was made with; make it "
            f"with {how} on the env it plays"
        )


class SearchPolicy:
    """Determinised Monte Carlo search (see the module docstring) acting for the agent to act in ``env``."""

    name = "search"

    def __init__(
        self,
        env: Any,
        options: SearchOptions | None = None,
        rollout_policy: Any = None,
        estimate: Any = None,
        heuristic: Any = None,
        lead_policy: Any = None,
    ):
        raw = getattr(env, "unwrapped", None)
        if not isinstance(raw, TableEnv):
            raise TypeError(f"SearchPolicy: env must be a tableenvs env, got {env!r}")
        self.env = raw
        self.options = options or SearchOptions()
        self.rollout_policy = rollout_policy
        self.estimate = estimate  # (world, agent) -> the agent's expected reward for the rest, at a cut-off
        self.heuristic = heuristic if heuristic is not None else rollout_policy  # mode=turns: propose_turns
        #: mode=turns with lead=trained: the policy whose own turn leads the candidates (played out on a copy)
        self.lead_policy = lead_policy
        self.last_simulations = 0  # simulations of the last decision (benchmarks read it)
        #: The flat UCB root's statistics of the last decision: (legal ids, visits, mean values), else None
        #: (distillation reads the visits as a soft target: :mod:`tableenvs.training.distill`).
        self.last_root: tuple[list[int], np.ndarray, np.ndarray] | None = None
        #: The paired batched root's values of the last decision (``batched=1``): (legal ids, each one's mean value
        #: over the sampled worlds, in the game's reward units until the rollouts' end), else None (distillation
        #: keeps them beside the choice: :mod:`tableenvs.training.distill`).
        self.last_values: tuple[list[int], np.ndarray] | None = None
        self._turn_plan: tuple[list[bytes], list[int], int] | None = None  # mode=turns: the turn under way
        #: mode=turns: the name of the turn chosen at this decision (``propose_turns``' name), None when none was chosen
        #: here (a turn's later decisions, or another mode)
        self.last_turn: str | None = None
        self._batched = None  # batched=1: the rollouts in the game's batched engine
        if self.options.batched:
            from tableenvs.policies.batched_search import BatchedRollouts

            self._batched = BatchedRollouts(raw, self.options.rollout, self.options.depth)

    def __repr__(self) -> str:
        return f"SearchPolicy({self.env.metadata['name']}, {self.options})"

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        env = self.env
        agent = env.agent_selection
        check_acting_in(env, observation, action_mask, "SearchPolicy.act", "make_policy('search', env)")
        legal = np.flatnonzero(action_mask).tolist()
        if not legal:
            raise ValueError("SearchPolicy.act: the action mask has no legal action")
        self.last_root = self.last_values = None
        if len(legal) == 1:
            self.last_simulations = 0
            return int(legal[0])
        if self.options.mode == "ismcts":
            from tableenvs.policies.ismcts import ISMCTS

            tree = ISMCTS(env, agent, self.options, self.rollout_policy, self.estimate)
            action = tree.search(rng)
            self.last_simulations = tree.iterations
            return int(action)
        if self.options.mode == "turns":
            return self._search_turns(env, agent, observation, action_mask, rng)
        if self._batched is not None:
            return self._search_batched(agent, legal, observation, action_mask, rng)
        if self.options.root == "paired":
            return self._search_paired(env, agent, legal, observation, action_mask, rng)
        return self._search(env, agent, legal, rng)

    def _search(self, env: TableEnv, agent: str, legal: list[int], rng: np.random.Generator) -> int:
        opts = self.options
        budget = opts.simulations
        deadline = math.inf if budget is not None else opts.deadline()  # read only without a simulation budget
        count = len(legal)
        visits = np.zeros(count)
        totals = np.zeros(count)
        low, high = math.inf, -math.inf
        done = 0
        while (done < budget) if budget is not None else (done == 0 or time.process_time() < deadline):
            if done < count:
                index = done
            else:
                spread = max(high - low, 1e-9)
                scores = totals / visits + opts.c * spread * np.sqrt(math.log(done) / visits)
                index = int(np.argmax(scores))
            world = env.sample_world(agent, rng)
            value = self._simulate(world, agent, legal[index], rng)
            visits[index] += 1
            totals[index] += value
            low, high = min(low, value), max(high, value)
            done += 1
        self.last_simulations = done
        means = np.divide(totals, visits, out=np.full(count, -math.inf), where=visits > 0)
        self.last_root = (legal, visits, means)
        best = max(range(count), key=lambda i: (visits[i], means[i], -i))
        return int(legal[best])

    def _search_paired(
        self,
        env: TableEnv,
        agent: str,
        legal: list[int],
        observation: np.ndarray,
        action_mask: np.ndarray,
        rng: np.random.Generator,
    ) -> int:
        """``root=paired``: every legal action simulated on each sampled world, with the same rollout randomness
        (common random numbers), so that the differences between actions are measured world by world."""
        opts = self.options
        count = len(legal)
        default = None
        if opts.z > 0 and self.rollout_policy is not None:
            default = legal.index(self.rollout_policy.act(observation, action_mask, rng))
        budget = opts.simulations
        deadline = math.inf if budget is not None else opts.deadline()  # read only without a simulation budget
        rows: list[list[float]] = []
        while len(rows) < 2 or (  # at least two worlds, so that a paired spread exists
            (len(rows) * count < budget) if budget is not None else (time.process_time() < deadline)
        ):
            world = env.sample_world(agent, rng)
            seed = int(rng.integers(2**63))
            rows.append(
                [
                    self._simulate(
                        world.clone() if i < count - 1 else world, agent, action, np.random.default_rng(seed)
                    )
                    for i, action in enumerate(legal)
                ]
            )
        self.last_simulations = len(rows) * count
        values = np.array(rows)
        means = values.mean(axis=0)
        best = int(np.argmax(means))  # ties: the lower id
        if default is not None and best != default:
            gains = values[:, best] - values[:, default]
            error = gains.std(ddof=1) / math.sqrt(len(gains)) if len(gains) > 1 else math.inf
            if not gains.mean() > opts.z * error:
                best = default
        return int(legal[best])

    def _search_batched(
        self, agent: str, legal: list[int], observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator
    ) -> int:
        """``batched=1``: the paired root with every rollout in the game's batched engine (batched_search.py)."""
        from tableenvs.policies.batched_search import paired_choice

        opts = self.options
        assert self._batched is not None
        default = None
        if opts.z > 0 and self.rollout_policy is not None:
            default = legal.index(self.rollout_policy.act(observation, action_mask, rng))
        budget = opts.simulations
        worlds = None if budget is None else max(2, -(-budget // len(legal)))
        deadline = math.inf if budget is not None else opts.deadline()
        values = self._batched.values(self.env, agent, legal, rng, worlds, deadline)
        self.last_simulations = values.size
        means = values.mean(axis=0)
        self.last_values = (legal, means)
        return int(legal[paired_choice(values, default, opts.z, means)])

    def _search_turns(
        self,
        env: TableEnv,
        agent: str,
        observation: np.ndarray,
        action_mask: np.ndarray,
        rng: np.random.Generator,
    ) -> int:
        """``mode=turns``: the next action of the best whole turn among those the game's heuristic proposes
        (``propose_turns``), each turn simulated on every sampled world with the same rollout randomness, as
        ``root=paired`` does with single actions; the rest of a chosen turn is played from the plan."""
        self.last_turn = None
        plan = self._turn_plan
        if plan is not None:
            expected, actions, index = plan
            if index < len(actions) and observation.tobytes() == expected[index] and action_mask[actions[index]]:
                self._turn_plan = (expected, actions, index + 1)
                self.last_simulations = 0
                return actions[index]
        self._turn_plan = None
        propose = getattr(self.heuristic, "propose_turns", None)
        if propose is None:
            raise ValueError(f"search mode=turns: {env.metadata['name']}'s heuristic proposes no turns")
        if observation_staged(self.heuristic, observation):
            self.last_simulations = 0  # a turn under way that is not ours (a plan lost): the heuristic goes on
            return int(self.heuristic.act(observation, action_mask, rng))
        proposals = propose(observation, action_mask)
        if self.lead_policy is not None:
            led = self._lead_turn(env, agent, rng)
            proposals = [("lead", led)] + [(name, actions) for name, actions in proposals if list(actions) != led]
        names, turns = [name for name, _ in proposals], [actions for _, actions in proposals]
        estimate = getattr(self.heuristic, "fitted_estimate", None) or self.estimate
        best = 0
        if len(turns) > 1:
            best = self._paired_turns(env, agent, turns, estimate, rng)
        else:
            self.last_simulations = 0
        actions = turns[best]
        self.last_turn = names[best]
        expected = []  # the agent's observation before each action of the turn (its own moves: nothing hidden)
        ahead = env.clone()
        for action in actions[:-1]:
            expected.append(ahead.observe(agent)["observation"].tobytes())
            ahead.step(action)
        expected.append(ahead.observe(agent)["observation"].tobytes())
        self._turn_plan = (expected, actions, 1)
        return actions[0]

    def _lead_turn(self, env: TableEnv, agent: str, rng: np.random.Generator) -> list[int]:
        """The turn ``lead_policy`` plays from here: its actions on a copy of ``env`` until another seat is to act or
        the game ends (the agent's own moves: the copy shows it nothing it does not see)."""
        ahead = env.clone()
        actions: list[int] = []
        while True:
            seen = ahead.observe(agent)
            action = int(self.lead_policy.act(seen["observation"], seen["action_mask"], rng))
            actions.append(action)
            ahead.step(action)
            if ahead.agent_selection != agent or ahead.terminations[agent] or ahead.truncations[agent]:
                return actions

    def _paired_turns(
        self, env: TableEnv, agent: str, turns: list[list[int]], estimate: Any, rng: np.random.Generator
    ) -> int:
        """Index of the turn of highest mean value over paired sampled worlds (ties: the first, the heuristic's);
        with ``z=X`` the first is kept unless beaten by more than X standard errors of the paired gain."""
        opts = self.options
        count = len(turns)
        budget = opts.simulations
        deadline = math.inf if budget is not None else opts.deadline()  # read only without a simulation budget
        cut_after = opts.turns if opts.turns is not None else env.num_players + 1
        rows: list[list[float]] = []
        while len(rows) < 2 or (
            (len(rows) * count < budget) if budget is not None else (time.process_time() < deadline)
        ):
            world = env.sample_world(agent, rng)
            seed = int(rng.integers(2**63))
            row = []
            for i, actions in enumerate(turns):
                copy = world.clone() if i < count - 1 else world
                for action in actions[:-1]:
                    copy.step(action)
                row.append(
                    self._simulate(copy, agent, actions[-1], np.random.default_rng(seed), estimate, turns=cut_after)
                )
            rows.append(row)
        self.last_simulations = len(rows) * count
        values = np.array(rows)
        best = int(np.argmax(values.mean(axis=0)))
        if opts.z > 0 and best != 0:
            gains = values[:, best] - values[:, 0]
            if not gains.mean() > opts.z * gains.std(ddof=1) / math.sqrt(len(gains)):
                best = 0
        return best

    def _simulate(
        self,
        world: TableEnv,
        agent: str,
        action: int,
        rng: np.random.Generator,
        estimate: Any = None,
        turns: int | None = None,
    ) -> float:
        """Play ``action`` then the rollout policy to the end of the scoring period; the agent's reward
        (``estimate`` and ``turns``: instead of the policy's own)."""
        value = 0.0
        policy = self.rollout_policy
        in_world = getattr(policy, "act_in_world", None)
        turns_left = self.options.turns if turns is None else turns
        estimate = self.estimate if estimate is None else estimate
        cut_off = True  # after ``depth`` decisions or ``turns`` turns, unless the scoring period ends first
        checked = False  # the root action: legal in the world, which shows the agent the real mask
        for _ in range(self.options.depth):
            reward, ended, turns_left = advance(world, action, agent, turns_left, checked)
            value += reward
            if ended:
                cut_off = False
                break
            if turns_left == 0:
                break
            action = rollout_action(world, policy, in_world, rng)
            checked = checks_actions(policy, in_world)
        if cut_off and estimate is not None:  # the game's estimate of the rest, if it has one
            value += estimate(world, agent)
        return value


def observation_staged(heuristic: Any, observation: np.ndarray) -> bool:
    """Whether ``observation`` shows a turn under way (the heuristic's ``turn_under_way`` hook; False without)."""
    under_way = getattr(heuristic, "turn_under_way", None)
    return bool(under_way(observation)) if under_way is not None else False
