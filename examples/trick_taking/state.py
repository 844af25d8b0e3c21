"""Reading a trick-taking state record back (``TableEnv.set_state``'s ``rules``), checked for consistency.

Where you are: ``trick_taking/state.py``, beside the engine (:mod:`trick_taking.rules`). A record is refused,
naming what is wrong, unless it is a deal the rules could have reached: the 52 cards once each, hand sizes that
match the cards each seat has played, each trick led by the previous trick's winner, and no seat holding (or having
played since) a card of a suit it showed it lacks. A world of ``sample_world`` must pass this too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tableenvs.core.state import as_int, distinct, field, int_list, int_lists, require
from trick_taking.rules import DECK, TrickGame, card_name, suit, trick_winner


@dataclass(frozen=True)
class TrickReader:
    """Reads the engine back from its record with an env's options (a ``tableenvs.core.engine.StateReader``)."""

    num_players: int
    hand_size: int

    def read(self, record: Any, rng: Any) -> TrickGame:
        return game_from_record(record, self.num_players, self.hand_size, rng)


if TYPE_CHECKING:
    from tableenvs.core.engine import StateReader

    _reader: type[StateReader[TrickGame]] = TrickReader


def game_from_record(rules: Any, num_players: int, hand_size: int, rng: Any) -> TrickGame:
    """The engine in the state ``rules`` describes; :class:`tableenvs.core.state.StateError` naming the field if
    the rules could not have reached it."""
    n = num_players
    hands = int_lists(field(rules, "hands", "rules"), "rules.hands", 0, DECK - 1, length=n)
    undealt = int_list(field(rules, "undealt", "rules"), "rules.undealt", 0, DECK - 1, length=DECK - n * hand_size)
    leader = as_int(field(rules, "leader", "rules"), "rules.leader", 0, n - 1)
    played = int_lists(field(rules, "played", "rules"), "rules.played", 0, DECK - 1, most=hand_size)
    trick = int_list(field(rules, "trick", "rules"), "rules.trick", 0, DECK - 1, most=n - 1)
    for i, each in enumerate(played):
        require(len(each) == n + 1 and each[0] < n, f"rules.played[{i}]", f"{each} is not [leader, {n} cards]")
    cards = [*(c for hand in hands for c in hand), *undealt, *(c for each in played for c in each[1:]), *trick]
    distinct(cards, "rules: the cards")
    require(len(cards) == DECK, "rules", f"the cards are {len(cards)}, not the deck of {DECK}")
    for i, (first, *cards_of_trick) in enumerate(played):
        winner, next_leader = trick_winner(first, cards_of_trick, n), [*played, [leader]][i + 1][0]
        why = f"won by player_{winner}, next led by player_{next_leader}"
        require(winner == next_leader, f"rules.played[{i}]", why)
    game = TrickGame(hands, undealt, leader, rng, played, trick)
    lacks: list[set[int]] = [set() for _ in range(n)]
    for seat, card, led in game.plays():
        require(suit(card) not in lacks[seat], "rules", f"player_{seat} plays {card_name(card)} after showing a void")
        if suit(card) != led:
            lacks[seat].add(led)
    for seat in range(n):
        in_trick = (seat - leader) % n < len(trick)
        size = hand_size - len(played) - in_trick
        require(len(hands[seat]) == size, f"rules.hands[{seat}]", f"holds {len(hands[seat])} cards, not {size}")
        held = [card_name(c) for c in hands[seat] if suit(c) in lacks[seat]]
        require(not held, f"rules.hands[{seat}]", f"holds {' '.join(held)} of a suit it showed it lacks")
    return game
