"""The world sampler of trick-taking: the cards one seat cannot see, dealt again as the public play allows.

Where you are: ``trick_taking/worlds.py``, used by the adapter's ``_resample_hidden`` (``sample_world``). The cards a
seat cannot see (the other hands and the undealt cards) are dealt again so that every hand keeps its size and no
seat gets a card of a suit it showed it lacks (it did not follow that suit). Cards go one by one, in random order,
to a holder chosen with chance proportional to the room it has left, among those that leave the rest dealable
(Hall's condition over the four suits); so the deal is uniform when nobody has shown a void, and close to it after.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from trick_taking.rules import TrickGame, suit

ALL_SUITS = range(4)
SUIT_SETS = [frozenset(suits) for size in range(1, 5) for suits in combinations(ALL_SUITS, size)]


def deal_world(game: TrickGame, seat: int, rng: np.random.Generator) -> None:
    """Deal ``game``'s cards hidden from ``seat`` again (in place), keeping the hand sizes and the shown voids."""
    holders = [s for s in range(game.num_players) if s != seat]
    room = {s: len(game.hands[s]) for s in holders} | {-1: len(game.undealt)}  # -1: the undealt cards
    voids = game.voids()
    takes = {s: frozenset(ALL_SUITS) - voids[s] for s in holders} | {-1: frozenset(ALL_SUITS)}
    pool = [card for s in holders for card in game.hands[s]] + game.undealt
    left = [sum(suit(card) == x for card in pool) for x in ALL_SUITS]
    dealt: dict[int, list[int]] = {s: [] for s in room}
    for card in rng.permutation(pool).tolist():
        left[suit(card)] -= 1
        # Hall's condition: a set of suits with as many cards left as room among the holders taking any of them
        # is tight, and none of those holders may take this card
        tight = [x for x in SUIT_SETS if sum(room[h] for h in room if takes[h] & x) == sum(left[s] for s in x)]
        fits = [h for h in room if room[h] and suit(card) in takes[h] and not any(takes[h] & x for x in tight)]
        weights = np.array([room[h] for h in fits], float)
        holder = fits[int(rng.choice(len(fits), p=weights / weights.sum()))]
        room[holder] -= 1
        dealt[holder].append(card)
    for s in holders:
        game.hands[s] = sorted(dealt[s])
    game.undealt = sorted(dealt[-1])
