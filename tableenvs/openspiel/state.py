"""A game of the OpenSpiel bridge in progress: ``TableState`` (a ``pyspiel.State``) over its env and bookkeeping.

Where you are: the state half of :mod:`tableenvs.openspiel`. :class:`Shared` is what every state of one game shares
(the title, the parameters, a started template env), found by :func:`shared_key` in :data:`SHARED_BY_KEY`;
``_Table`` holds one state's env, returns and per-seat recall, and answers OpenSpiel's deep copy with
``env.clone()`` and its pickle with the env's state record. :class:`TableState` plays the env: one chance node (the
deal seed), then the env's action ids. The game (:mod:`tableenvs.openspiel.game`) builds the ``Shared``; the
observer (:mod:`tableenvs.openspiel.observer`) reads a state's ``_table``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
import pyspiel

from tableenvs.core.registry import make_raw
from tableenvs.core.table_env import TableEnv
from tableenvs.openspiel.game_types import Title


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

    def __getstate__(self) -> dict[str, Any]:
        shared = self.shared
        return {
            "game": shared.title.short_name,
            "params": shared.params,
            "env": None if self.env is None else json.dumps(self.env.get_state()),
            "returns": self.returns.tolist(),
            "step_rewards": self.step_rewards.tolist(),
            "over": self.over,
            "recall": self.recall,
            "seen": self.seen,
        }

    def __setstate__(self, record: dict[str, Any]) -> None:
        key = shared_key(record["game"], record["params"])
        if key not in SHARED_BY_KEY:
            pyspiel.load_game(record["game"], record["params"])  # registers its Shared
        self.shared = SHARED_BY_KEY[key]
        env = record["env"]
        self.env = None if env is None else TableEnv.from_state(json.loads(env), render_mode="ansi")
        self.returns = np.array(record["returns"], np.float64)
        self.step_rewards = np.array(record["step_rewards"], np.float64)
        self.over = record["over"]
        self.recall = list(record["recall"])
        self.seen = list(record["seen"])


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
