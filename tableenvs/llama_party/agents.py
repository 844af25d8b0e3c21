"""The greedy Llama Party agent: ``HeuristicPolicy`` (found by ``tableenvs.policies.make_policy("heuristic", env)``).

Where you are: built-in agents of ``tableenvs/llama_party``. The policy reads only the observation vector and the
mask (decoded through ``encoder.LAYOUT``); the env is used only for its configuration (the deck).

Greedy rule: value a hand by its score under the goals the player knows (the revealed ones and its own), plus
the expected score under each still-unknown goal, taken as a uniformly random card among those that could be
a face-down goal (never one it held this round).

* goal step: choose the goal card that leaves the most valuable 7 cards (the own goal then counts as known);
* pass step: pass the card whose loss leaves the most valuable hand, one pick at a time.

Ties go to the lowest card index, so the policy is deterministic given the observation.

For the search policy's rollouts (``tableenvs.policies.search``), ``act_in_world`` makes the same choice from a sampled
world's rules state (no observation encoded and decoded); both go through ``values`` and ``choose``. The points of a
hand under every goal are memoised by its letter counts (``GoalTable.points_without``).
"""

from __future__ import annotations

import functools
import math
import operator
from typing import Any

import numpy as np

from tableenvs.llama_party.cards import DECK_SIZE, NUM_LETTERS, Deck
from tableenvs.llama_party.encoder import LAYOUT
from tableenvs.llama_party.rules import NUM_SLOTS


class GoalTable:
    """Vectorised scoring of a letter-count vector under every card of a deck as a goal."""

    def __init__(self, deck: Deck) -> None:
        self.letters = np.array([card.letter for card in deck], np.int64)
        self.letter_of = self.letters.tolist()  # the same as a list: read card by card in rollouts
        # letter rules are linear: one (cards x letters) weight matrix holds them all
        self.letter_points = np.array([card.letter_points for card in deck], np.int64)
        # combinations: (cards x most combinations on a card x letters), padded with empty combinations worth 0
        width = max(len(card.bottoms) for card in deck)
        need = np.zeros((len(deck), width, NUM_LETTERS), np.int64)
        self.combo_points = np.zeros((len(deck), width), np.int64)
        for card in deck:
            for k, (_, card_need, points) in enumerate(card.bottoms):
                need[card.index, k] = card_need
                self.combo_points[card.index, k] = points
        self.needed = need > 0
        self.need = np.maximum(need, 1)
        self._without: dict[tuple[int, ...], list[list[int]]] = {}  # memo of points_without

    def points(self, counts: np.ndarray) -> np.ndarray:
        """Points of a hand with letter ``counts`` under each card as a goal: shape ``(32,)`` for counts of shape
        ``(8,)``, ``(n, 32)`` for ``n`` hands of shape ``(n, 8)``."""
        counts = np.asarray(counts)
        if counts.ndim == 2:
            copies = np.where(self.needed, counts[:, None, None, :] // self.need, 99).min(axis=3)
            return counts @ self.letter_points.T + (self.combo_points * copies).sum(axis=2)
        copies = np.where(self.needed, counts // self.need, 99).min(axis=2)
        return self.letter_points @ counts + (self.combo_points * copies).sum(axis=1)

    def points_without(self, counts: tuple[int, ...]) -> list[list[int]]:
        """Row ``l``: :meth:`points` of the letter ``counts`` less one card of letter ``l`` (meaningful for the
        letters ``counts`` holds; 8 lists of 32), memoised: a game meets a few thousand distinct hands. Plain lists:
        the heuristic reads a few rows of it per decision, faster than through numpy's per-call overhead."""
        rows = self._without.get(counts)
        if rows is None:
            less = np.maximum(np.array(counts, np.int64) - np.eye(NUM_LETTERS, dtype=np.int64), 0)
            rows = self._without[counts] = self.points(less).tolist()
        return rows


@functools.lru_cache(maxsize=8)
def goal_table(deck: Deck) -> GoalTable:
    """The :class:`GoalTable` of ``deck``, shared by every policy playing with it (its memo with them)."""
    return GoalTable(deck)


assert (LAYOUT.HAND, LAYOUT.STAGED, LAYOUT.OWN_GOAL, LAYOUT.REVEALED, LAYOUT.PASSED, LAYOUT.RECEIVED) == tuple(
    DECK_SIZE * k for k in (0, 1, 2, 3, 7, 8)
), "HeuristicPolicy.act reads the card sections as consecutive blocks of 32 from index 0"


class HeuristicPolicy:
    """Greedy expected-score player; see the module docstring.

    :meth:`act` decodes the observation; :meth:`act_in_world` reads the same facts from a (sampled) world's rules
    state, for fast search rollouts (:mod:`tableenvs.policies.search`); both make the same choice through
    :meth:`values` and :meth:`choose`.
    """

    name = "heuristic"

    def __init__(self, env: Any):
        self.table = goal_table(env.unwrapped.deck)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        del rng  # deterministic
        legal = np.flatnonzero(action_mask).tolist()
        return self.choose(legal, self.values(legal, *self.read(observation)))

    @staticmethod
    def read(observation: np.ndarray) -> tuple[list[int], list[int], list[int], list[int], list[int], bool]:
        """What the rule uses from a seat's observation, as :meth:`values` takes it after ``legal``: ``(hand, own,
        revealed, staged, exchanged, goal_step)``."""
        # the card sections (hand, staged, own goal, 4 revealed positions, passed, received) are 32 wide each and
        # follow one another from index 0: one scan, then each card by its section
        sections: list[list[int]] = [[] for _ in range(9)]
        for index in np.flatnonzero(observation[: LAYOUT.RECEIVED + DECK_SIZE]).tolist():
            sections[index // DECK_SIZE].append(index % DECK_SIZE)
        hand, staged, own, *revealed_by_position, passed, received = sections
        revealed = [card for cards in revealed_by_position for card in cards]
        return hand, own, revealed, staged, passed + received, bool(observation[LAYOUT.STEP] == 1.0)

    def act_in_world(self, world: Any, rng: np.random.Generator) -> int:
        """:meth:`act` for the seat to act in ``world`` (a raw env, e.g. a sampled world), read from its rules
        state instead of its observation: the same choice, without encoding and decoding the observation."""
        del rng  # deterministic
        game = world.game
        seat = game.to_act
        hand = game.hands[seat]
        goal = game.goal_of_slot[seat]
        own = [goal] if goal >= 0 else []
        seen = game.passed[seat] + game.received[seat]
        legal = sorted(hand)
        return self.choose(
            legal, self.values(legal, hand, own, game.display[: game.step], game.staged[seat], seen, game.step == 0)
        )

    @staticmethod
    def choose(legal: list[int], values: list[float]) -> int:
        """The card to pick among ``legal`` (ascending) given their :meth:`values`: the first of the highest (the rule
        of the module docstring; deterministic)."""
        best_card, best_value = legal[0], -math.inf
        for card, value in zip(legal, values, strict=True):
            if value > best_value + 1e-9:
                best_card, best_value = card, value
        return best_card

    def values(
        self,
        legal: list[int],
        hand: list[int],
        own: list[int],
        revealed: list[int],
        staged: list[int],
        exchanged: list[int],
        goal_step: bool,
    ) -> list[float]:
        """The expected points of the hand left by picking each card of ``legal`` (ascending): what the greedy rule
        maximises. ``own`` is the own goal (empty before it is chosen), ``revealed`` the face-up goals, ``staged``
        this pass's picks so far, ``exchanged`` the cards the player passed and received this round."""
        # the value of a hand is its points under each goal (a row of 32) times the weight of each goal: 1 for a
        # known goal, (goals still unknown) / (cards that could be one) for each card that could be one (not held
        # by the player this round, not a face-up goal). Plain lists, no numpy: this runs in rollouts, on 32 numbers
        seen = [*exchanged, *hand, *own, *revealed, *staged]
        unseen = DECK_SIZE - len(set(seen))
        unknown = NUM_SLOTS - 1 if goal_step else NUM_SLOTS - len(set(revealed).union(own))
        weights = [unknown / unseen if unknown and unseen else 0.0] * DECK_SIZE
        for card in seen:
            weights[card] = 0.0
        if not goal_step:
            for card in (*revealed, *own):
                weights[card] = 1.0
        letter_of = self.table.letter_of
        counts = [0] * NUM_LETTERS
        for card in hand:
            counts[letter_of[card]] += 1
        without = self.table.points_without(tuple(counts))
        by_letter: dict[int, float] = {}  # the value of the hand less one card of a letter
        found = []
        for card in legal:
            letter = letter_of[card]
            value = by_letter.get(letter)
            if value is None:
                value = by_letter[letter] = sum(map(operator.mul, without[letter], weights))
            if goal_step:  # the candidate is the own goal
                value += without[letter][card]
            found.append(value)
        return found
