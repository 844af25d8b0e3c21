"""The games as OpenSpiel games, and agents across the two libraries (needs ``open_spiel``: ``pip install open-spiel``).

Where you are: a bridge beside the games, built only on each env's public API (and the state API of
:mod:`tableenvs.core.table_env`: ``clone``, ``get_state``/``set_state``, ``sample_world``). ``import
tableenvs.openspiel`` registers three pyspiel Python games; nothing else in tableenvs imports this module. Guide:
``docs/openspiel.md``.

=============================  =====================================================================================
OpenSpiel name                 ``tableenvs_pilipili_v0``, ``tableenvs_llama_party_v0``, ``tableenvs_rummikub_v0``;
                               ``pyspiel.load_game("tableenvs_rummikub_v0", {"num_players": 2})``
Parameters                     the env's constructor options (same names and defaults; Llama Party's ``deck`` is
                               ``"standard"`` or a file path), plus ``deal_seeds`` (how many deals the chance node
                               chooses from, default 65536) and ``reward_model`` (``"terminal"``, the default: all
                               of a seat's reward paid at the end; ``"rewards"``: each step's env rewards)
Chance                         one explicit chance node at the start: deal seed ``k`` in ``0..deal_seeds-1``,
                               uniform; the env is then ``reset(seed=k)`` and everything random after it (deals of
                               later rounds, dummy draws, the pool) follows from that seed and the moves
Actions                        the env's ``Discrete`` action ids, 1:1; legal actions from the action mask
Observation tensor / string    the seat's observation vector (the game's encoder) / ``render_view`` text
Information state string       the ``render_view`` text plus a ``recall`` line: a hash of every distinct
                               observation the seat has had since the deal and of its own moves (perfect recall);
                               the information state *tensor* is the observation vector (not perfect recall)
clone / serialize              ``env.clone()`` / a pickle holding ``json.dumps(env.get_state())``
resample_from_infostate        ``env.sample_world(agent, rng)``, ``rng`` seeded from the probability sampler
Agents                         :class:`PolicyBot` (a tableenvs policy as a ``pyspiel.Bot``), :class:`BotPolicy` and
                               :func:`make_bot_policy` (an OpenSpiel bot as a tableenvs policy, e.g.
                               ``make_bot_policy("openspiel:ismcts:sims=100", env)``)
=============================  =====================================================================================
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

try:
    import pyspiel
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "tableenvs.openspiel needs OpenSpiel: pip install open-spiel (Python 3.9-3.12 wheels on Linux and macOS)"
    ) from error

from tableenvs.core.registry import make_raw
from tableenvs.core.table_env import TableEnv
from tableenvs.core.validation import check_choice, check_int
from tableenvs.policies.search import check_acting_in

DEFAULT_DEAL_SEEDS = 2**16
MAX_DEAL_SEEDS = 2**31 - 1  # OpenSpiel actions and parameters are C++ ints
REWARD_MODELS = ("terminal", "rewards")
_COMMON = {"deal_seeds": DEFAULT_DEAL_SEEDS, "reward_model": "terminal"}

# ---------------------------------------------------------------------------------------------- per-game facts


def _pilipili_facts(env: TableEnv) -> dict[str, Any]:
    """Utility bounds, length bound and utility kind of a Pili Pili env (see docs/openspiel.md, "Game facts")."""
    from tableenvs.pilipili.missions import BASIC_MISSION
    from tableenvs.pilipili.rules import CHILI_LIMIT, effective_hand_size

    n = env.num_players
    missions = env.missions or [BASIC_MISSION]
    most_taken = 0  # chilis one seat can take in one round
    most_decisions = 0  # decisions in one round
    for m in missions:
        hand = effective_hand_size(m, n)
        tricks = hand + m.extra_draw
        listed = len(set(m.listed_numbers))
        extras = 2 * m.first_last_trick + (listed if m.listed_each else min(tricks, listed))
        own = tricks + extras  # |bid - tricks won| <= tricks, plus the mission's extra chilis
        most_taken = max(most_taken, own * (2 if m.designate else 1))
        per_seat = m.has_look + 1 + m.designate + min(m.pass_count, hand) + tricks
        decisions = n * per_seat + m.memorise + (3 * (tricks - 1) if m.swap else 0)
        most_decisions = max(most_decisions, decisions)
    if env.reward_mode == "penalty":
        # a seat's total reward is minus the chilis it holds at the end: at most CHILI_LIMIT - 1 before the last round
        low, high = -float(CHILI_LIMIT - 1 + most_taken), 0.0
    else:
        low, high = -1.0, 1.0
    return {"min": low, "max": high, "length": env.max_rounds * most_decisions, "zero_sum": False}


@lru_cache(maxsize=8)
def _llama_round_bounds(deck: tuple) -> tuple[int, int]:
    """Lowest and highest round score of one seat: over every letter count of a 7-card hand the deck allows, the
    4 lowest and the 4 highest goal cards' points (the 4 display goals are 4 distinct cards)."""
    from tableenvs.llama_party.cards import NUM_LETTERS
    from tableenvs.llama_party.rules import HAND_SIZE, NUM_SLOTS, goal_points

    available = [0] * NUM_LETTERS
    for card in deck:
        available[card.letter] += 1
    low = high = None
    for cut in itertools.combinations(range(HAND_SIZE + NUM_LETTERS - 1), NUM_LETTERS - 1):
        counts = [b - a - 1 for a, b in zip((-1, *cut), (*cut, HAND_SIZE + NUM_LETTERS - 1), strict=True)]
        if any(c > a for c, a in zip(counts, available, strict=True)):
            continue
        points = sorted(goal_points(card, counts) for card in deck)
        lo, hi = sum(points[:NUM_SLOTS]), sum(points[-NUM_SLOTS:])
        low = lo if low is None else min(low, lo)
        high = hi if high is None else max(high, hi)
    if low is None or high is None:
        raise ValueError("llama_party: the deck allows no 7-card hand's letter counts")
    return int(low), int(high)


def _llama_facts(env: TableEnv) -> dict[str, Any]:
    from tableenvs.llama_party.rules import NUM_ROUNDS, PASS_COUNTS

    if env.reward_mode == "score":
        low, high = _llama_round_bounds(tuple(env.deck))
        low, high = min(low, NUM_ROUNDS * low), max(high, NUM_ROUNDS * high)
    else:
        low, high = -1, 1
    length = NUM_ROUNDS * env.num_players * (1 + sum(PASS_COUNTS))
    return {"min": float(low), "max": float(high), "length": length, "zero_sum": False}


def _rummikub_facts(env: TableEnv) -> dict[str, Any]:
    from tableenvs.rummikub.rules import FULL_SET, rack_total

    game = env.game
    points = rack_total(FULL_SET)  # every rack total of one game, together, is at most this
    tiles = int(FULL_SET.sum())
    if game.strict_commit:
        # every turn ends with one commit or draw; a staged tile always reaches the table, which keeps it all game
        length = game.max_turns + tiles * game.games_per_episode
    else:
        # a failed commit takes the tiles back: a turn stages at most the rack (the others hold >= 1 tile each)
        length = game.max_turns * (1 + tiles - (env.num_players - 1))
    bound = float(points * game.games_per_episode)
    return {"min": -bound, "max": bound, "length": length, "zero_sum": True}


@dataclass(frozen=True)
class _Title:
    short_name: str
    long_name: str
    env: str
    params: dict[str, Any]
    players: tuple[int, int]
    facts: Callable[[TableEnv], dict[str, Any]]


TITLES = {
    title.short_name: title
    for title in (
        _Title(
            "tableenvs_pilipili_v0",
            "tableenvs Pili Pili",
            "pilipili_v0",
            {"num_players": 5, "missions": "standard", "expert": True, "reward": "penalty", "max_rounds": 100},
            (2, 8),
            _pilipili_facts,
        ),
        _Title(
            "tableenvs_llama_party_v0",
            "tableenvs Llama Party",
            "llama_party_v0",
            {"num_players": 4, "deck": "standard", "reward": "score"},
            (2, 4),
            _llama_facts,
        ),
        _Title(
            "tableenvs_rummikub_v0",
            "tableenvs Rummikub",
            "rummikub_v0",
            {
                "num_players": 4,
                "min_initial": 30,
                "draw_after_play": False,
                "strict_commit": True,
                "pool_exhausted": "lowest_rack",
                "games_per_episode": 1,
                "max_turns": 1000,
                "end_on_empty_pool": False,
            },
            (2, 4),
            _rummikub_facts,
        ),
    )
}
ENV_TO_OPENSPIEL = {title.env: name for name, title in TITLES.items()}


def _game_type(title: _Title, reward_model: str, zero_sum: bool) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=title.short_name,
        long_name=title.long_name,
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM if zero_sum else pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=(
            pyspiel.GameType.RewardModel.TERMINAL
            if reward_model == "terminal"
            else pyspiel.GameType.RewardModel.REWARDS
        ),
        max_num_players=title.players[1],
        min_num_players=title.players[0],
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification={**title.params, **_COMMON},
    )


# ---------------------------------------------------------------------------------------------- game


class _Static:
    """What every state of one game shares (never copied, never pickled: a state's pickle names the game)."""

    def __init__(self, title: _Title, params: dict[str, Any], env_options: dict[str, Any]):
        self.title = title
        self.params = params
        self.key = _key(title.short_name, params)
        self.deal_seeds = params["deal_seeds"]
        self.terminal_rewards = params["reward_model"] == "terminal"
        self.template = make_raw(title.env, **env_options, render_mode="ansi")
        self.template.reset(seed=0)  # clone() needs a started env; every deal is a reset(seed=k) of a clone
        self.num_players = self.template.num_players
        self.agents = tuple(self.template.possible_agents)
        self.chance_outcomes = [(k, 1.0 / self.deal_seeds) for k in range(self.deal_seeds)]


_STATICS: dict[tuple, _Static] = {}


def _key(short_name: str, params: dict[str, Any]) -> tuple:
    return (short_name, tuple(sorted(params.items())))


def _env_options(title: _Title, params: dict[str, Any]) -> dict[str, Any]:
    """The env's constructor options from OpenSpiel parameters (``ValueError`` naming a bad one)."""
    unknown = sorted(set(params) - set(title.params) - set(_COMMON))
    if unknown:
        raise ValueError(
            f"{title.short_name}: unknown parameter(s) {', '.join(map(repr, unknown))}; parameters: "
            f"{', '.join([*title.params, *_COMMON])}"
        )
    check_int("deal_seeds", params["deal_seeds"], 1, MAX_DEAL_SEEDS)
    check_choice("reward_model", params["reward_model"], REWARD_MODELS)
    options = {key: params[key] for key in title.params}
    if title.env == "llama_party_v0" and options["deck"] == "standard":
        options["deck"] = None
    return options


class TableGame(pyspiel.Game):
    """One of the three games as a pyspiel game; the subclasses below fix which (``_TITLE``)."""

    _TITLE: _Title

    def __init__(self, params: dict[str, Any] | None = None):
        title = self._TITLE
        params = {**title.params, **_COMMON, **(params or {})}
        try:
            options = _env_options(title, params)
            static = _Static(title, params, options)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{title.short_name}: {error}") from None
        facts = title.facts(static.template)
        info = pyspiel.GameInfo(
            num_distinct_actions=static.template.num_actions,
            max_chance_outcomes=static.deal_seeds,
            num_players=static.num_players,
            min_utility=facts["min"],
            max_utility=facts["max"],
            utility_sum=0.0 if facts["zero_sum"] else None,
            max_game_length=facts["length"],
        )
        super().__init__(_game_type(title, params["reward_model"], facts["zero_sum"]), info, params)
        self._static = static
        _STATICS[static.key] = static

    def new_initial_state(self) -> TableState:
        """The state before the deal (a chance node)."""
        return TableState(self)

    def max_chance_nodes_in_history(self) -> int:
        return 1

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> TableObserver:
        """The observer OpenSpiel asks for (observation: ``perfect_recall=False``; information state: ``True``)."""
        if isinstance(iig_obs_type, dict) and params is None:  # C++ calls make_py_observer(params) for the default
            iig_obs_type, params = None, iig_obs_type
        return TableObserver(self._static, iig_obs_type, params)

    def state_from_env(self, env: TableEnv) -> TableState:
        """A state (after the deal) continuing from a started raw env of this game with the same options; the
        state takes the env (pass a clone or ``sample_world`` to keep yours). Its ``history()`` is empty, and the
        seats' recall starts from the env's current observations."""
        static = self._static
        if not isinstance(env, TableEnv) or env.metadata["name"] != static.title.env:
            raise ValueError(f"state_from_env: expected a raw {static.title.env} env, got {env!r}")
        if env.num_players != static.num_players:
            raise ValueError(f"state_from_env: the env has {env.num_players} players, the game {static.num_players}")
        state = TableState(self)
        table = state._table
        table.env = env
        table.returns = np.array(env._returns, np.float64)
        table.over = env.outcome() is not None
        table.recall = [b""] * static.num_players
        table.seen = [b""] * static.num_players
        table.observe_all()
        return state


def _game_class(title: _Title) -> type:
    name = "".join(part.title() for part in title.env.removesuffix("_v0").split("_")) + "Game"
    return type(name, (TableGame,), {"_TITLE": title, "__doc__": f"{title.long_name} as a pyspiel game."})


PiliPiliGame = _game_class(TITLES["tableenvs_pilipili_v0"])
LlamaPartyGame = _game_class(TITLES["tableenvs_llama_party_v0"])
RummikubGame = _game_class(TITLES["tableenvs_rummikub_v0"])
GAME_CLASSES = {"tableenvs_pilipili_v0": PiliPiliGame, "tableenvs_llama_party_v0": LlamaPartyGame}
GAME_CLASSES["tableenvs_rummikub_v0"] = RummikubGame

for _name, _cls in GAME_CLASSES.items():
    pyspiel.register_game(_game_type(TITLES[_name], "terminal", _name == "tableenvs_rummikub_v0"), _cls)


# ---------------------------------------------------------------------------------------------- state


class _Table:
    """A state's env and bookkeeping. OpenSpiel's ``Clone`` deep-copies a Python state's attributes and its
    ``Serialize`` pickles them: this object answers the first with ``env.clone()`` and the second with the env's
    JSON state record (``get_state``), so neither ever copies or pickles an env object."""

    __slots__ = ("static", "env", "returns", "step_rewards", "over", "recall", "seen")

    def __init__(self, static: _Static):
        self.static = static
        self.env: TableEnv | None = None  # None before the deal
        self.returns = np.zeros(static.num_players)
        self.step_rewards = np.zeros(static.num_players)
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
        for seat, agent in enumerate(self.static.agents):
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
        new.static = self.static
        new.env = None if self.env is None else self.env.clone()
        new.returns = self.returns.copy()
        new.step_rewards = self.step_rewards.copy()
        new.over = self.over
        new.recall = self.recall[:]
        new.seen = self.seen[:]
        return new

    def __getstate__(self) -> dict[str, Any]:
        static = self.static
        return {
            "game": static.title.short_name,
            "params": static.params,
            "env": None if self.env is None else json.dumps(self.env.get_state()),
            "returns": self.returns.tolist(),
            "step_rewards": self.step_rewards.tolist(),
            "over": self.over,
            "recall": self.recall,
            "seen": self.seen,
        }

    def __setstate__(self, record: dict[str, Any]) -> None:
        key = _key(record["game"], record["params"])
        if key not in _STATICS:
            pyspiel.load_game(record["game"], record["params"])  # registers its _Static
        self.static = _STATICS[key]
        env = record["env"]
        self.env = None if env is None else TableEnv.from_state(json.loads(env), render_mode="ansi")
        self.returns = np.array(record["returns"], np.float64)
        self.step_rewards = np.array(record["step_rewards"], np.float64)
        self.over = record["over"]
        self.recall = list(record["recall"])
        self.seen = list(record["seen"])


class TableState(pyspiel.State):
    """A game in progress: before the deal (chance node), then the env (``state.env``), until it ends."""

    def __init__(self, game: TableGame):
        super().__init__(game)
        self._table = _Table(game._static)

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
        return self._table.static.chance_outcomes

    def _apply_action(self, action: int) -> None:
        table = self._table
        static = table.static
        if table.env is None:
            env = static.template.clone()
            env.reset(seed=int(action))
            table.env = env
            table.recall = [b"deal;"] * static.num_players
            table.seen = [b""] * static.num_players
            table.observe_all()
            table.step_rewards = np.zeros(static.num_players)
            return
        env = table.env
        actor = env.agent_name_mapping[env.agent_selection]
        env.step(int(action))
        rewards = env.rewards
        table.step_rewards = np.array([rewards[agent] for agent in static.agents], np.float64)
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
        if table.static.terminal_rewards and not table.over:
            return [0.0] * table.static.num_players
        return table.returns.tolist()

    def rewards(self) -> list[float]:
        table = self._table
        if table.static.terminal_rewards:
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
        new._table.env = env.sample_world(self._table.static.agents[player_id], np.random.default_rng(seed))
        return new

    def __str__(self) -> str:
        env = self._table.env
        if env is None:
            return f"before the deal: chance picks one of {self._table.static.deal_seeds} deal seeds"
        text = env.render()
        if not isinstance(text, str):  # never: the states' envs render text (render_mode="ansi")
            raise TypeError(f"a state's env renders text, got {type(text).__name__}")
        return text


# ---------------------------------------------------------------------------------------------- observer


class TableObserver:
    """OpenSpiel's PyObserver for these games: ``tensor`` (and ``dict``, its named sections from the encoder's
    layout) is the seat's observation vector; ``string_from`` its ``render_view`` text, plus the recall line when
    the observation type asks for perfect recall (the information state). Only the seat's own view exists:
    ``private_info`` must be ``SINGLE_PLAYER`` and ``public_info`` true."""

    def __init__(self, static: _Static, iig_obs_type: Any = None, params: Any = None):
        if params:
            raise ValueError(f"{static.title.short_name}: observation parameters are not supported; got {params}")
        if iig_obs_type is None:
            iig_obs_type = pyspiel.IIGObservationType(perfect_recall=False)
        if iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or not iig_obs_type.public_info:
            raise ValueError(
                f"{static.title.short_name}: only a seat's own view is available (public_info=True, "
                f"private_info=SINGLE_PLAYER); got public_info={iig_obs_type.public_info}, "
                f"private_info={iig_obs_type.private_info}"
            )
        self.static = static
        self.perfect_recall = iig_obs_type.perfect_recall
        encoder = static.template.encoder
        self.tensor = np.zeros(static.template.observation_size, np.float32)
        self.dict: dict[str, np.ndarray] = {}
        layout = getattr(encoder, "observation_layout", None)
        if layout is not None and layout.size == self.tensor.size:
            for section in layout:
                self.dict[section.name] = self.tensor[section.slice].reshape(section.shape)
        else:
            self.dict["observation"] = self.tensor

    def set_from(self, state: TableState, player: int) -> None:
        env = state._table.env
        if env is None:
            self.tensor.fill(0.0)
        else:
            self.tensor[:] = env.observe(self.static.agents[player])["observation"]

    def string_from(self, state: TableState, player: int) -> str:
        table = state._table
        agent = self.static.agents[player]
        if table.env is None:
            return f"{agent}'s view: before the deal"
        text = table.env.render_view(agent)
        if self.perfect_recall:
            text += f"\nrecall {table.recall[player].hex()}"
        return text


# ---------------------------------------------------------------------------------------------- agents


def load_game(env_name: str, **params: Any) -> TableGame:
    """The OpenSpiel game of tableenvs env ``env_name`` (``"pilipili_v0"``, ...) with ``params``."""
    if env_name not in ENV_TO_OPENSPIEL:
        raise ValueError(f"no OpenSpiel game for {env_name!r}; games: {', '.join(ENV_TO_OPENSPIEL)}")
    return pyspiel.load_game(ENV_TO_OPENSPIEL[env_name], params)


def game_for_env(env: Any) -> TableGame:
    """The OpenSpiel game with the options of ``env`` (a raw or wrapped tableenvs env)."""
    raw = getattr(env, "unwrapped", None)
    if not isinstance(raw, TableEnv) or raw.metadata["name"] not in ENV_TO_OPENSPIEL:
        raise ValueError(f"game_for_env: expected a tableenvs env of {', '.join(ENV_TO_OPENSPIEL)}, got {env!r}")
    name = raw.metadata["name"]
    options = raw._state_options()
    if name == "llama_party_v0" and options["deck"] is None:
        options["deck"] = "standard"
    bad = {key: value for key, value in options.items() if not isinstance(value, (bool, int, float, str))}
    if bad:
        raise ValueError(
            f"game_for_env: OpenSpiel parameters are numbers, booleans or strings; the env's option(s) "
            f"{', '.join(f'{k}={v!r:.60}' for k, v in bad.items())} cannot be one (use a file path for a deck, a "
            "finite max_rounds)"
        )
    return load_game(name, **options)


class PolicyBot(pyspiel.Bot):
    """A tableenvs policy (any :func:`tableenvs.policies.make_policy` spec: ``"heuristic"``, ``"search:sims=50"``,
    a ``.npz`` model, a ``.zip`` model with ``trust_models=True``, a policy object) as a ``pyspiel.Bot`` for the games
    of this module.

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

        return ismcts.ISMCTSBot(game, evaluator, c, sims, random_state=random_state)

    return make_bot


def make_bot_policy(spec: str, env: Any) -> BotPolicy:
    """A tableenvs policy for ``env`` playing the OpenSpiel bot ``spec`` (``"openspiel:ismcts:sims=100"``, ...)."""
    return BotPolicy(env, bot_factory(spec), name=spec)


__all__ = [
    "BotPolicy",
    "LlamaPartyGame",
    "PiliPiliGame",
    "PolicyBot",
    "RummikubGame",
    "TableGame",
    "TableObserver",
    "TableState",
    "bot_factory",
    "game_for_env",
    "load_game",
    "make_bot_policy",
    "parse_bot_spec",
]
