"""The greedy Llama Party agent: ``HeuristicPolicy`` (found by ``tableenvs.policies.make_policy("heuristic", env)``).

Where you are: built-in agents of ``tableenvs/llama_party``. The policy reads only the observation vector and the
mask (decoded through ``encoder.LAYOUT``); the env is used only for its configuration (the deck).

Greedy rule: value a hand by its score under the goals the player knows (the revealed ones and its own), plus
the expected score under each still-unknown goal, taken as a uniformly random card among those that could be
a face-down goal (never one it held this round).

* goal step: choose the goal card that leaves the most valuable 7 cards (the own goal then counts as known);
* pass step: pass the card whose loss leaves the most valuable hand, one pick at a time.

Ties go to the lowest card index, so the policy is deterministic given the observation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tableenvs.llama_party.cards import DECK_SIZE, NUM_LETTERS
from tableenvs.llama_party.encoder import LAYOUT
from tableenvs.llama_party.rules import NUM_SLOTS


class GoalTable:
    """Vectorised scoring of a letter-count vector under every card of a deck as a goal."""

    def __init__(self, deck):
        self.letters = np.array([card.letter for card in deck], np.int64)
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

    def counts(self, cards: np.ndarray) -> np.ndarray:
        return np.bincount(self.letters[cards], minlength=NUM_LETTERS)

    def points(self, counts: np.ndarray) -> np.ndarray:
        """Points of a hand with letter ``counts`` under each card as a goal (shape ``(32,)``)."""
        copies = np.where(self.needed, counts // self.need, 99).min(axis=2)
        return self.letter_points @ counts + (self.combo_points * copies).sum(axis=1)

    def points_many(self, counts: np.ndarray) -> np.ndarray:
        """:meth:`points` of each row of ``counts`` (shape ``(hands, 8)`` -> ``(hands, 32)``), in one pass."""
        copies = np.where(self.needed, counts[:, None, None, :] // self.need, 99).min(axis=3)
        return counts @ self.letter_points.T + (self.combo_points * copies).sum(axis=2)


class HeuristicPolicy:
    """Greedy expected-score player; see the module docstring."""

    name = "heuristic"

    def __init__(self, env: Any):
        self.table = GoalTable(env.unwrapped.deck)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        del rng  # deterministic
        hand = np.flatnonzero(observation[LAYOUT.HAND : LAYOUT.HAND + DECK_SIZE])
        own = np.flatnonzero(observation[LAYOUT.OWN_GOAL : LAYOUT.OWN_GOAL + DECK_SIZE])
        revealed = np.flatnonzero(observation[LAYOUT.REVEALED : LAYOUT.REVEALED + NUM_SLOTS * DECK_SIZE]) % DECK_SIZE
        staged = np.flatnonzero(observation[LAYOUT.STAGED : LAYOUT.STAGED + DECK_SIZE])
        legal = np.flatnonzero(action_mask)
        goal_step = observation[LAYOUT.STEP] == 1.0

        # cards that cannot be a face-down goal: all the player held this round, and the face-up goals
        seen = observation[LAYOUT.PASSED : LAYOUT.PASSED + DECK_SIZE] > 0
        seen |= observation[LAYOUT.RECEIVED : LAYOUT.RECEIVED + DECK_SIZE] > 0
        seen[hand] = seen[own] = seen[revealed] = seen[staged] = True
        unseen = ~seen
        # every candidate at once: the hand's letter counts without the candidate, scored under every goal
        counts = self.table.counts(hand) - np.eye(NUM_LETTERS, dtype=np.int64)[self.table.letters[legal]]
        points = self.table.points_many(counts)
        if goal_step:
            known_points = points[np.arange(len(legal)), legal]
            unknown = NUM_SLOTS - 1
        else:
            known = np.union1d(revealed, own)
            known_points = points[:, known].sum(axis=1)
            unknown = NUM_SLOTS - len(known)
        values = known_points + (unknown * points[:, unseen].mean(axis=1) if unknown and unseen.any() else 0.0)
        best_card, best_value = int(legal[0]), -np.inf
        for card, value in zip(legal.tolist(), values.tolist(), strict=True):
            if value > best_value + 1e-9:
                best_card, best_value = card, value
        return best_card
