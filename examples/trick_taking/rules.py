"""The rules engine of plain trick-taking: no PettingZoo, no generator of its own (the adapter passes one in).

Where you are: ``trick_taking/rules.py``, the bottom layer (the contract: ``tableenvs.core.engine``). One deck of
52 cards (card ``c`` is rank ``c % 13`` of suit ``c // 13``); each player is dealt ``hand_size`` cards, the rest stay
face down. The leader plays any card; the others must follow the led suit if they can; the highest card of the
led suit wins the trick (+1 to its winner) and leads the next. The game ends when the hands are empty.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from tableenvs.core.engine import RestorableEngine, RulesError, ViewedEngine

SUITS = "SHDC"
RANKS = "23456789TJQKA"
DECK = 52


def suit(card: int) -> int:
    return card // 13


def card_name(card: int) -> str:
    return RANKS[card % 13] + SUITS[card // 13]


def trick_winner(leader: int, cards: list[int], num_players: int) -> int:
    """The seat whose card wins a full trick led by ``leader``: the highest card of the led suit."""
    led = suit(cards[0])
    best = max(range(len(cards)), key=lambda i: cards[i] if suit(cards[i]) == led else -1)
    return (leader + best) % num_players


class TrickGame:
    """One deal: ``hands`` by seat, the ``undealt`` cards, the finished tricks in ``played`` (each
    ``[leader, card, ...]`` in play order) and the current ``trick`` led by ``leader``."""

    def __init__(
        self,
        hands: list[list[int]],
        undealt: list[int],
        leader: int,
        rng: Any,
        played: list[list[int]] | None = None,
        trick: list[int] | None = None,
    ):
        self.num_players = len(hands)
        self.hands = [sorted(hand) for hand in hands]
        self.undealt = sorted(undealt)
        self.played = [list(each) for each in played or []]
        self.trick = list(trick or [])
        self.leader = leader
        self.to_act = (leader + len(self.trick)) % self.num_players
        self.rng = rng
        self.won = [0] * self.num_players
        for first, *cards in self.played:
            self.won[trick_winner(first, cards, self.num_players)] += 1
        self.over = not any(self.hands)
        self.winners = [s for s, won in enumerate(self.won) if won == max(self.won)] if self.over else []
        self.log: list[str] = []

    @classmethod
    def deal(cls, num_players: int, hand_size: int, rng: np.random.Generator) -> TrickGame:
        deck = rng.permutation(DECK).tolist()
        hands = [deck[i * hand_size : (i + 1) * hand_size] for i in range(num_players)]
        return cls(hands, deck[num_players * hand_size :], int(rng.integers(num_players)), rng)

    def legal_cards(self) -> list[int]:
        if self.over:
            return []
        hand = self.hands[self.to_act]
        if self.trick:
            follow = [card for card in hand if suit(card) == suit(self.trick[0])]
            if follow:
                return follow
        return hand

    def play(self, card: int) -> list[float] | None:
        """The player to act plays ``card``; the rewards by seat (+1 to the winner) when it completes a trick."""
        legal = self.legal_cards()
        if card not in legal:
            shown = " ".join(map(card_name, legal))
            raise RulesError(f"player_{self.to_act} cannot play {card_name(card)}; legal: {shown}")
        self.hands[self.to_act].remove(card)
        self.trick.append(card)
        self.to_act = (self.to_act + 1) % self.num_players
        if len(self.trick) < self.num_players:
            return None
        winner = trick_winner(self.leader, self.trick, self.num_players)
        self.played.append([self.leader, *self.trick])
        self.log.append(f"player_{winner} wins the trick {' '.join(map(card_name, self.trick))}")
        self.trick, self.leader, self.to_act = [], winner, winner
        self.won[winner] += 1
        if not any(self.hands):
            self.over = True
            self.winners = [s for s, won in enumerate(self.won) if won == max(self.won)]
            self.log.append(f"game over: tricks {self.won}")
        rewards = [0.0] * self.num_players
        rewards[winner] = 1.0
        return rewards

    def plays(self) -> Iterator[tuple[int, int, int]]:
        """Every card played so far, in order, as (seat, card, the suit led in its trick)."""
        for leader, *cards in [*self.played, [self.leader, *self.trick]]:
            for i, card in enumerate(cards):
                yield (leader + i) % self.num_players, card, suit(cards[0])

    def voids(self) -> list[set[int]]:
        """The suits each seat has shown it lacks (it did not follow a led suit): public knowledge."""
        shown: list[set[int]] = [set() for _ in range(self.num_players)]
        for seat, card, led in self.plays():
            if suit(card) != led:
                shown[seat].add(led)
        return shown

    def seen_by(self, seat: int) -> list[list[int] | int]:
        """What ``seat`` may see of the hands: its own cards, and only the size of each other hand (the one
        visibility decision: the text view and the picture read it; the tricks and the current trick are public)."""
        return [hand[:] if s == seat else len(hand) for s, hand in enumerate(self.hands)]

    def copy(self, rng: np.random.Generator) -> TrickGame:
        new = TrickGame(self.hands, self.undealt, self.leader, rng, self.played, self.trick)
        new.log = self.log[:]
        return new

    def to_record(self) -> dict[str, Any]:
        return {
            "hands": [hand[:] for hand in self.hands],
            "undealt": self.undealt[:],
            "leader": self.leader,
            "played": [each[:] for each in self.played],
            "trick": self.trick[:],
        }


if TYPE_CHECKING:  # the type checker holds the engine to the contract of tableenvs.core.engine
    _contract: type[RestorableEngine] = TrickGame
    _views: type[ViewedEngine] = TrickGame
