"""Pili Pili: resampling what one seat cannot know, for ``PiliPiliEnv.sample_world`` (determinised search).

Where you are: the Pili Pili package, beside the rules engine (``rules.py``); the env's ``_resample_hidden`` hook
calls :func:`resample_hidden` on a copy of the game. Nothing here is reached by normal play.

How a world is sampled. Each round is a fresh deal, so only the current round's cards matter. A card is *seen* by
the observer if it has looked at it at some point of the round (its own hand once it may look at it; the others'
hands while forehead-visible or revealed; the cards it handed over itself, wherever they went since) and
*hidden* if it now lies where the observer cannot see (another hand, the stock, its own hand before it may look,
another player's face-down card of a simultaneous trick). The hidden cards it has never seen are **relabelled**: a
uniformly random permutation of them is applied to the whole round (hands, picks, stock, trick, memorised hand
positions, the cards others handed over). A relabelled round is a round the observer cannot tell from the real one
(it never saw those cards, and no rule but highest-or-lowest depends on which card is which before it is played),
so ``observe(seat)`` is unchanged.

How far from uniform. Among the worlds consistent with everything the observer saw, the sampler is uniform
conditional on one thing it keeps as it really is: where the *seen* cards that are now hidden lie (the cards the
observer passed or swapped away, which the receiver may have handed on by a later swap; under forehead bidding,
every hand after bidding, which passing, drawing or swapping may since have changed). In the standard deck these
are exactly known except after a swap chain (mission 30). It also ignores what the others' bids and plays say about
their hands (as determinised search does: every relabelling counts the same). Under highest-or-lowest the
others' past plays must each have been the highest or lowest number card they held: a uniform permutation is drawn
up to ``_TRIES`` times and kept if it passes (exact rejection sampling); if none does, a Metropolis chain of
transpositions started at the real deal (``_CHAIN_STEPS`` per hidden card, each kept only if the plays stay legal)
gives an approximately uniform sample. With highest-or-lowest and swaps together (custom decks only) the others'
hands are kept as they are.

The mission pile's order (hidden) is shuffled; the env gives the world a new RNG, so later deals differ too.
A memorised wild being declared by another player (the observer sees only ``play``) is put back to the moment
before that player chose its position.
"""

from __future__ import annotations

import numpy as np

from tableenvs.pilipili.rules import BID, DECLARE, LOOK, MAX_WILD_VALUE, NUM_CARDS, PLAY, WILD, PiliPiliGame

_TRIES = 20
_CHAIN_STEPS = 30


def resample_hidden(game: PiliPiliGame, seat: int, rng: np.random.Generator) -> None:
    """Relabel in place (``game`` is the world's own copy) every card ``seat`` cannot see and has never seen."""
    if game.over:
        return
    if game.phase == DECLARE and game.to_act != seat:
        declarer = game.to_act
        game.position_used[declarer][game.position_cards[declarer].index(WILD)] = False
        game.phase = PLAY
    if game._mission_pile:
        game._mission_pile = [game._mission_pile[i] for i in rng.permutation(len(game._mission_pile)).tolist()]
    unseen = _unseen_hidden_cards(game, seat)
    if len(unseen) < 2:
        return
    mapping = _relabelling(game, seat, unseen, rng)
    if mapping is not None:
        _apply(game, mapping, rng)


def has_seen_own_hand(game: PiliPiliGame, seat: int) -> bool:
    """Whether ``seat`` has looked at its current hand this round (it may look now, or looked earlier under the
    timed-look and memorise rules, its hand unchanged since)."""
    if game.sees_own_hand(seat):
        return True
    m = game.mission
    if not (m.timed_look or m.memorise):
        return False
    if game.phase != LOOK:
        return True
    return (seat - game.dealer) % game.n < game.acted  # looks go in order from the dealer


def _unseen_hidden_cards(game: PiliPiliGame, seat: int) -> list[int]:
    m = game.mission
    seen = set(game.given[seat])
    own_seen = has_seen_own_hand(game, seat)
    if own_seen:
        seen.update(game.hands[seat])
    others_seen = game.sees_other_hands() or (m.forehead and game.phase != BID)
    if m.highest_or_lowest and m.swap:
        others_seen = True  # custom decks only: the hand a past play came from is not known (module docstring)
    hidden = list(game.stock)
    if not own_seen:
        hidden += game.hands[seat]
    if not others_seen:
        hidden += [card for s in range(game.n) if s != seat for card in game.hands[s]]
    if m.simultaneous:
        hidden += [card for s, card, _ in game.trick if s != seat]
    if m.forehead and game.phase != BID:
        hidden = list(game.stock)  # every hand was seen while bidding (kept as is after bidding)
    return [card for card in hidden if card not in seen]


def _relabelling(game: PiliPiliGame, seat: int, unseen: list[int], rng: np.random.Generator) -> dict[int, int] | None:
    """A permutation of ``unseen`` as ``{old card: new card}`` (None: keep the cards as they are)."""
    if not (game.mission.highest_or_lowest and (game.round_tricks or game.trick)):
        return dict(zip(unseen, rng.permutation(unseen).tolist(), strict=True))
    checked = [s for s in range(game.n) if s != seat]
    for _ in range(_TRIES):
        mapping = dict(zip(unseen, rng.permutation(unseen).tolist(), strict=True))
        if all(_plays_were_extremes(game, s, mapping) for s in checked):
            return mapping
    mapping = {card: card for card in unseen}  # the real deal: legal
    for _ in range(_CHAIN_STEPS * len(unseen)):
        i, j = rng.choice(len(unseen), 2, replace=False)
        a, b = unseen[i], unseen[j]
        mapping[a], mapping[b] = mapping[b], mapping[a]
        if not all(_plays_were_extremes(game, s, mapping) for s in checked):
            mapping[a], mapping[b] = mapping[b], mapping[a]
    return mapping


def _plays_were_extremes(game: PiliPiliGame, seat: int, mapping: dict[int, int]) -> bool:
    """Under highest-or-lowest: whether every card ``seat`` played this round (relabelled by ``mapping``) was then
    its highest or lowest number card (or the wild). Its hand at a play = its hand now plus its later plays."""
    plays = [card for trick, _ in game.round_tricks for s, card, _ in trick if s == seat]
    plays += [card for s, card, _ in game.trick if s == seat]
    held = {mapping.get(card, card) for card in game.hands[seat]}
    for card in reversed(plays):
        card = mapping.get(card, card)
        held.add(card)
        if card != WILD:
            numbers = [c for c in held if c != WILD]
            if card != min(numbers) and card != max(numbers):
                return False
    return True


def _apply(game: PiliPiliGame, mapping: dict[int, int], rng: np.random.Generator) -> None:
    """Relabel every card of the current round by ``mapping`` (cards not in it stay)."""
    table = list(range(NUM_CARDS))
    for card, new in mapping.items():
        table[card] = new

    def relabel(cards: list[int]) -> list[int]:
        return [table[card] for card in cards]

    game.hands = [relabel(hand) for hand in game.hands]
    game.staged = [relabel(picks) for picks in game.staged]
    game.given = [relabel(cards) for cards in game.given]
    game.stock = relabel(game.stock)
    trick = []
    for s, card, value in game.trick:
        new = table[card]
        if new != card:
            value = int(rng.integers(MAX_WILD_VALUE + 1)) if new == WILD else new
        trick.append((s, new, value))
    game.trick = trick
    for s, cards in enumerate(game.position_cards):
        if cards:  # memorise: positions are the look-time hand sorted by card id; a used flag follows its card
            used = dict(zip(relabel(cards), game.position_used[s], strict=True))
            game.position_cards[s] = sorted(used)
            game.position_used[s] = [used[card] for card in game.position_cards[s]]
