"""Information-set Monte Carlo tree search (``search:mode=ismcts``), beside the flat determinised search of
:mod:`tableenvs.policies.search`.

Where you are: shared plumbing, built by :func:`tableenvs.policies.make_policy` through
:class:`tableenvs.policies.search.SearchPolicy` (``mode=ismcts``). Like the flat search it reads the real game only
through ``sample_world(agent, rng)`` and the agent's observation, so it does not cheat.

The algorithm (single-observer IS-MCTS, Cowling, Powley and Whitehouse 2012, with the other seats played by the
rollout policy): one tree over the acting agent's information sets. A node is an information set of the agent at one
of its decisions; its edges are the agent's actions. Each iteration

1. samples a fresh determinisation ``world = env.sample_world(agent, rng)`` (everything the agent cannot know
   resampled, its observation unchanged);
2. descends the tree in that world: at a node, the actions legal *in this world* are the available ones; each
   available edge's availability count goes up by one; an untried available action (in id order) is expanded,
   otherwise the edge maximising ``mean + c * spread * sqrt(ln(availability) / visits)`` (UCB1 with availability
   counts; ``spread`` the range of values seen, as in the flat search) is followed. After the agent's action the
   other seats act by the rollout policy until the agent is to act again; the node reached is keyed by the agent's
   observation there (its bytes), so worlds that the agent cannot tell apart share the node, and worlds it can tell
   apart (a card it drew, a move it saw) do not;
3. after the expansion, plays every seat with the rollout policy (the game's heuristic through ``act_in_world``, or
   uniform random) to the end of the scoring period, ``depth`` decisions or ``turns`` turns, as the flat search does,
   valued by the game's ``estimate`` hook at a cut-off;
4. adds the agent's reward over the whole iteration to every edge it followed.

The action played is the root edge visited most (ties: the higher mean, then the lower id). ``sims=N`` runs N
iterations (reproducible: same state and generator, same action), ``ms=T`` iterations until T ms of this process's
CPU time (anytime). The rollout policy is pluggable: ``rollout=heuristic`` (default), ``random``, or any object with
``act(observation, action_mask, rng)`` (and optionally ``act_in_world(world, rng)``) given as ``rollout_policy``.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from tableenvs.core.table_env import TableEnv
from tableenvs.policies.rollouts import advance, checks_actions, rollout_action


class _Node:
    """An information set of the agent at one of its decisions: per action, visits, value total, availability."""

    __slots__ = ("avail", "children", "totals", "visits")

    def __init__(self) -> None:
        self.visits: dict[int, int] = {}
        self.totals: dict[int, float] = {}
        self.avail: dict[int, int] = {}
        self.children: dict[int, dict[bytes, _Node]] = {}  # action -> the agent's next information sets


class ISMCTS:
    """One decision of IS-MCTS for ``agent`` in ``env`` (see the module docstring); ``search(rng)`` returns the
    action. ``options`` is a :class:`tableenvs.policies.search.SearchOptions` (``sims``/``ms``, ``c``, ``depth``,
    ``turns``)."""

    def __init__(self, env: TableEnv, agent: str, options: Any, rollout_policy: Any = None, estimate: Any = None):
        self.env = env
        self.agent = agent
        self.options = options
        self.rollout_policy = rollout_policy
        self.in_world = getattr(rollout_policy, "act_in_world", None)
        self.estimate = estimate
        self.root = _Node()
        self.iterations = 0

    def search(self, rng: np.random.Generator) -> int:
        opts = self.options
        budget = opts.simulations
        deadline = math.inf if budget is not None else opts.deadline()  # read only without a simulation budget
        self.low, self.high = math.inf, -math.inf
        while (
            (self.iterations < budget)
            if budget is not None
            else (self.iterations == 0 or time.process_time() < deadline)
        ):
            self._iterate(self.env.sample_world(self.agent, rng), rng)
            self.iterations += 1
        root = self.root
        return max(root.visits, key=lambda a: (root.visits[a], root.totals[a] / max(root.visits[a], 1), -a))

    # ------------------------------------------------------------------ one iteration

    def _iterate(self, world: TableEnv, rng: np.random.Generator) -> None:
        agent, opts = self.agent, self.options
        path: list[tuple[_Node, int]] = []
        node: _Node | None = self.root
        value = 0.0
        steps_left = opts.depth
        turns_left = opts.turns
        ended = False  # the scoring period or the game ended
        cut = False  # a depth or turns cut-off
        while steps_left > 0:
            acting = world.agent_selection
            checked = False  # a tree action is one of the world's legal actions
            if node is not None and acting == agent:
                action, expanded = self._select(node, world.legal_actions())
                path.append((node, action))
            else:
                action, expanded = rollout_action(world, self.rollout_policy, self.in_world, rng), False
                checked = checks_actions(self.rollout_policy, self.in_world)
            reward, ended, turns_left = advance(world, action, agent, turns_left, checked)
            steps_left -= 1
            value += reward
            if ended:
                break
            if turns_left == 0:
                cut = True
                break
            following = world.agent_selection
            if node is not None:
                if expanded:
                    node = None  # one new edge per iteration: the rest is the rollout
                elif acting == agent or following == agent:
                    if following == agent:  # the agent's next information set under the edge just followed
                        edge_node, edge_action = path[-1]
                        children = edge_node.children.setdefault(edge_action, {})
                        key = world.observe(agent)["observation"].tobytes()
                        child = children.get(key)
                        if child is None:
                            child = children[key] = _Node()
                        node = child
        if not ended and (cut or steps_left == 0) and self.estimate is not None:
            value += self.estimate(world, agent)
        self.low, self.high = min(self.low, value), max(self.high, value)
        for edge_node, action in path:
            edge_node.visits[action] += 1
            edge_node.totals[action] += value

    def _select(self, node: _Node, legal: list[int]) -> tuple[int, bool]:
        """The edge to follow among the available (``legal``) actions, and whether it is a new one."""
        avail, visits = node.avail, node.visits
        for action in legal:
            avail[action] = avail.get(action, 0) + 1
        for action in legal:
            if visits.get(action, 0) == 0:
                visits.setdefault(action, 0)
                node.totals.setdefault(action, 0.0)
                return action, True
        spread = max(self.high - self.low, 1e-9)
        c = self.options.c * spread
        totals = node.totals
        best, best_score = legal[0], -math.inf
        for action in legal:
            n = visits[action]
            score = totals[action] / n + c * math.sqrt(math.log(avail[action]) / n)
            if score > best_score:
                best, best_score = action, score
        return best, False
