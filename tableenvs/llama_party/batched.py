"""Llama Party's batched engine: many games stepped at once by compiled kernels, the same game as ``llama_party_v0``.

Where you are: the Python half of ``tableenvs/llama_party``'s batched engine (``tableenvs.vector.make
("llama_party_v0", num_envs, ...)`` builds it through the game's spec); the rules, observation and mask are the
kernels of ``batched_kernels.py``, compiled on first use and cached on disk. The contract is
:class:`tableenvs.vector.BatchedGame`: env ``i`` reset with seed ``s`` deals from ``numpy.random.default_rng(s)``
exactly as the AEC env does, and an ended game is followed by the next one from the same generator.

Options: the AEC env's ``num_players`` (2..4), ``deck`` and ``reward`` ("score"/"win"); ``render_mode`` is refused
(the batched engine draws nothing: open one env's game with :meth:`LlamaPartyBatched.get_state` and
``TableEnv.from_state`` to look at it). Reset options (scripted hands, totals) are not supported.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tableenvs.core.state import STATE_FORMAT, STATE_VERSION, plain
from tableenvs.core.validation import check_choice, check_int
from tableenvs.llama_party import batched_kernels as k
from tableenvs.llama_party.cards import DECK_SIZE, MAX_RULES, NUM_LETTERS, STANDARD_DECK, Deck, card_record, load_cards
from tableenvs.llama_party.encoder import NUM_ACTIONS, OBSERVATION_SIZE
from tableenvs.llama_party.env import REWARDS
from tableenvs.llama_party.rules import HAND_SIZE, NUM_SLOTS
from tableenvs.vector.checks import env_index
from tableenvs.vector.compile import kernels_once
from tableenvs.vector.draws import GENERATOR_WORDS, seeded, state_of
from tableenvs.vector.engine import BatchedEngine, refuse_render_mode

NAME = "llama_party_v0"


def kernels() -> tuple[Any, ...]:
    """``(step, reset, first_illegal)`` compiled (once per process; on disk across processes)."""
    return kernels_once(
        (k.step_kernel, k.reset_kernel, k.first_illegal), "the Llama Party batched engine", k.__file__, "about 10 s"
    )


def deck_arrays(deck: Deck) -> tuple[np.ndarray, ...]:
    """``(letter, letter_points, need, bottom_points, num_bottoms)`` of every card: what scoring reads."""
    letter = np.array([card.letter for card in deck], np.int64)
    letter_points = np.array([card.letter_points for card in deck], np.int64)
    need = np.zeros((DECK_SIZE, MAX_RULES, NUM_LETTERS), np.int64)
    bottom_points = np.zeros((DECK_SIZE, MAX_RULES), np.int64)
    num_bottoms = np.array([len(card.bottoms) for card in deck], np.int64)
    for index, card in enumerate(deck):
        for b, (_, combo_need, points) in enumerate(card.bottoms):
            need[index, b] = combo_need
            bottom_points[index, b] = points
    return letter, letter_points, need, bottom_points, num_bottoms


class LlamaPartyBatched(BatchedEngine):
    """``num_envs`` games of Llama Party (see :class:`tableenvs.vector.BatchedGame` for the contract)."""

    name = NAME

    def __init__(
        self,
        num_envs: int,
        num_players: int = 4,
        deck: str | Path | list[dict[str, Any]] | None = None,
        reward: str = "score",
        trusted: bool = False,
    ):
        num_players = check_int("num_players", num_players, 2, 4)
        self.reward_mode = check_choice("reward", reward, REWARDS)
        super().__init__(num_envs, num_players, OBSERVATION_SIZE, NUM_ACTIONS, trusted)
        self.deck = load_cards(deck)
        self._deck_arrays = deck_arrays(self.deck)
        self._step, self._reset, self._first_illegal = kernels()
        self._board = np.zeros((num_envs, k.BOARD_WIDTH), np.int32)
        self._money = np.zeros((num_envs, 3, self.num_players), np.float64)
        self._generators = np.zeros((num_envs, GENERATOR_WORDS), np.uint64)
        self._ended = np.zeros((num_envs, 3, NUM_SLOTS), np.float64)  # the step kernel's results of ended games

    @property
    def to_act(self) -> np.ndarray:  # type: ignore[override]
        """int64 ``(num_envs,)``: the seat to act in each env."""
        return self._board[:, k.TO_ACT].astype(np.int64)

    def _start_games(self, seeds: list[int]) -> None:
        self._generators = seeded(seeds)
        self._reset(
            self._board, self._money, self.num_players, self._deck_arrays[0], self._generators, self.obs, self.mask,
        )  # fmt: skip

    def _play(self, actions: np.ndarray, check: bool) -> int:
        if check:
            bad = int(self._first_illegal(self._board, actions))
            if bad >= 0:
                return bad
        self._step(
            self._board, self._money, self.num_players, self.reward_mode == "win", self._deck_arrays,
            self._generators, actions, self.obs, self.mask, self.rewards, self.terminated, self._ended,
        )  # fmt: skip
        return -1

    def last_results(self, envs: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The results of the games that ended on the last step in ``envs`` (ints; each must have ended then):
        ``(returns, scores, winners)``, ``(len(envs), num_players)`` each: every seat's total reward (float64), its
        final total (the AEC env's ``outcome().scores``) and whether the rules name it a winner (``outcome().winners``:
        the highest total, ties broken by the last round's score)."""
        envs = np.asarray(envs, np.int64)
        n = self.num_players
        ended = self._ended[envs]
        totals, last = ended[:, k.ENDED_TOTALS, :n], ended[:, k.ENDED_LAST, :n]
        best = totals.max(axis=1, keepdims=True)
        tied = totals == best
        best_last = np.where(tied, last, -np.inf).max(axis=1, keepdims=True)
        return ended[:, k.ENDED_RETURNS, :n].copy(), totals.copy(), tied & (last == best_last)

    def legal_actions(self, index: int) -> list[int]:
        """The legal actions of env ``index``'s seat to act (the cards in its hand), sorted."""
        index = env_index(index, self.num_envs)
        row = self._board[index]
        seat = int(row[k.TO_ACT])
        at = k.HANDS + seat * k.SLOT_CAP
        return sorted(int(card) for card in row[at : at + row[k.HAND_LEN + seat]])

    def _load_rows(self, rows: np.ndarray, record: Any, check: bool) -> None:
        from tableenvs.llama_party.batched_load import load_rows  # load_state: batched_load.py

        load_rows(self, rows, record, check)

    def _load_env_rows(self, rows: np.ndarray, env: Any) -> None:
        from tableenvs.llama_party.batched_load import load_env_rows

        load_env_rows(self, rows, env)

    def _state_record(self, index: int) -> dict[str, Any]:
        """``llama_party_v0``'s state record of env ``index``. The batched engine writes no event log: the record's
        ``event_log`` is empty."""
        row = [int(x) for x in self._board[index]]
        money = self._money[index]
        n = self.num_players
        agents = [f"player_{seat}" for seat in range(n)]
        deck = None if self.deck == STANDARD_DECK else [card_record(card) for card in self.deck]
        return {
            "format": STATE_FORMAT,
            "version": STATE_VERSION,
            "game": NAME,
            "options": {"num_players": n, "deck": deck, "reward": self.reward_mode},
            "rng": plain(state_of(self._generators[index])),
            "agents": agents,
            "agent_selection": agents[row[k.TO_ACT]],
            "skip_agent_selection": None,
            "rewards": {agent: float(money[k.LAST, s]) for s, agent in enumerate(agents)},
            "cumulative_rewards": {agent: float(money[k.CUMULATIVE, s]) for s, agent in enumerate(agents)},
            "terminations": dict.fromkeys(agents, False),
            "truncations": dict.fromkeys(agents, False),
            "infos": {agent: {} for agent in agents},
            "returns": [float(x) for x in money[k.RETURNS]],
            "ended": None,
            "event_log": [],
            "rules": _rules_record(row, n),
        }


def _rules_record(row: list[int], n: int) -> dict[str, Any]:
    """``LlamaParty.to_record`` of a game held in one board row (a game that is running: not over)."""

    def cards(at: int, length: int) -> list[int]:
        return row[at : at + length]

    step, scored, moved = row[k.STEP], row[k.SCORED], row[k.MOVED]
    seats = range(n)
    return {
        "hands": [cards(k.HANDS + slot * k.SLOT_CAP, row[k.HAND_LEN + slot]) for slot in range(NUM_SLOTS)],
        "goal_of_slot": cards(k.GOAL, NUM_SLOTS),
        "display": cards(k.DISPLAY, NUM_SLOTS) if step else [],
        "step": step,
        "to_act": row[k.TO_ACT],
        "staged": [cards(k.STAGED + seat * NUM_SLOTS, row[k.STAGED_LEN + seat]) for seat in seats],
        "passed": [cards(k.PASSED + seat * k.MOVED_CAP, moved) for seat in seats],
        "received": [cards(k.RECEIVED + seat * k.MOVED_CAP, moved) for seat in seats],
        "totals": cards(k.TOTALS, n),
        "round_scores": [cards(k.ROUND_SCORES + r * NUM_SLOTS, n) for r in range(scored)],
        "round_number": row[k.ROUND],
        "over": False,
        "winners": [],
        "shown_hands": [cards(k.SHOWN + seat * HAND_SIZE, HAND_SIZE) for seat in seats] if scored else [],
        "shown_display": cards(k.SHOWN_DISPLAY, NUM_SLOTS) if scored else [],
        "dummy_feeds": row[k.FEEDS] if n == 3 else None,
    }


def batched_game(num_envs: int, **options: Any) -> LlamaPartyBatched:
    """The factory ``GameSpec.batched`` names: the AEC env's options, ``trusted``; ``render_mode`` refused."""
    refuse_render_mode(NAME, options)
    return LlamaPartyBatched(num_envs, **options)
