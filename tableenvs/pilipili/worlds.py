"""Pili Pili: resampling what one seat cannot know, for ``PiliPiliEnv.sample_world`` (determinised search).

Where you are: the Pili Pili package, beside the rules engine (``rules.py``); the env's ``_resample_hidden`` hook
calls :func:`resample_hidden` on a copy of the game. Nothing here is reached by normal play.

How a world is sampled. Each round is a fresh deal, so only the current round's cards matter. A card is *seen* by
the observer if it has looked at it at some point of the round (its own hand once it may look at it; the others'
hands while forehead-visible or revealed; the cards it handed over itself, wherever they went since) and
*hidden* if it now lies where the observer cannot see (another hand, the stock, its own hand before it may look,
another player's face-down card of a simultaneous trick). The hidden cards it has never seen are **dealt afresh**:
their places (listed in an order that follows the places: stock, own hand, the others' hands by seat, the face-down
trick) get the sorted set of those cards in a uniformly random order, and every record of the round follows (hands,
picks, trick, memorised hand positions, the cards others handed over). So what a place gets depends on ``rng`` and
on what the observer knows, never on the card really there: two rounds it cannot tell apart give the same world
(``tests/test_worlds_exact.py``). No rule but highest-or-lowest and memorise depends on which unseen card is which
before it is played, so ``observe(seat)`` is unchanged. The hands are then sorted (their order follows the real
deal), a face-down wild gets a fresh declared value, the cards another seat has picked but not yet handed over (to
pass, or to give in a swap) are drawn afresh from its hand, and the world's event log names the others' moves only
as ``describe_action_public`` does (:func:`world_event_log`).

How far from uniform. Among the worlds consistent with everything the observer saw, the sampler is uniform
conditional on one thing it keeps as it really is: where the *seen* cards that are now hidden lie (the cards the
observer passed or swapped away, which the receiver may have handed on by a later swap; under forehead bidding,
every hand after bidding, which passing, drawing or swapping may since have changed). In the standard deck these
are exactly known except after a swap chain (mission 30). It also ignores what the others' bids and plays say about
their hands (as determinised search does: every assignment counts the same). Under highest-or-lowest the others'
past plays must each have been the highest or lowest number card they held, and under memorise the cards they played
must sit at the hand positions they played: a uniform assignment is drawn up to ``_TRIES`` times and kept if it passes
(exact rejection sampling); if none does, transpositions that never add a broken player are applied from the last
draw until none is broken, then a Metropolis chain of legal transpositions (``_CHAIN_STEPS`` per hidden card) runs
(approximately uniform; if no legal assignment is reached the cards stay as they are). With highest-or-lowest and
swaps together (custom decks only) the others' hands are kept as they are.

The mission pile's order (hidden) is put in deck order and shuffled; the env gives the world a new RNG, so later deals
differ too. A memorised wild being declared by another player (the observer sees only ``play``) is put back to the
moment before that player chose its position (and that ``play`` leaves the world's event log).
"""

from __future__ import annotations

import numpy as np

from tableenvs.pilipili.rules import BID, DECLARE, LOOK, MAX_WILD_VALUE, NUM_CARDS, PLAY, WILD, PiliPiliGame

_TRIES = 50
_CHAIN_STEPS = 30
_DESCENT_ROUNDS = 10


def resample_hidden(game: PiliPiliGame, seat: int, rng: np.random.Generator) -> None:
    """Relabel in place (``game`` is the world's own copy) every card ``seat`` cannot see and has never seen."""
    if game.seen_by(seat).phase != game.phase:  # a wild being declared, which to this seat is still being played
        declarer = game.to_act
        game.position_used[declarer][game.position_cards[declarer].index(WILD)] = False
        game.phase = PLAY
    if game._mission_pile:  # the pile's order is hidden: a canonical order (deck order), then a shuffle
        index = {id(mission): i for i, mission in enumerate(game.missions or ())}
        pile = sorted(game._mission_pile, key=lambda mission: index[id(mission)])
        game._mission_pile = [pile[i] for i in rng.permutation(len(pile)).tolist()]
    unseen = _unseen_hidden_cards(game, seat)
    mapping = _relabelling(game, seat, unseen, rng) if len(unseen) > 1 else None
    if mapping is not None:
        _apply(game, mapping, rng)
    # hands in order of card id: their order follows the real deal, passes and swaps (even the observer's own: two
    # of its cards swapped in the deck order are the same hand to it), and no one observes it
    game.hands = [sorted(hand) for hand in game.hands]
    _redraw_others_picks(game, seat, rng)


def _redraw_others_picks(game: PiliPiliGame, seat: int, rng: np.random.Generator) -> None:
    """The cards another seat has picked and not yet handed over (``staged``: picks to pass, the card a trick's
    winner gives in a swap) are hidden from ``seat``, though how many there are is not: they are drawn afresh from
    that seat's (sorted) hand, so which cards they are depends on ``rng`` alone, never on the real picks."""
    for other, picks in enumerate(game.staged):
        if other != seat and picks:
            hand = game.hands[other]
            chosen = rng.choice(len(hand), size=len(picks), replace=False)
            game.staged[other] = [hand[i] for i in sorted(chosen.tolist())]


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
    """``{old card: new card}``: the hidden places of ``unseen`` (in the order :func:`_unseen_hidden_cards` lists
    them, which follows the places, not the cards) get the sorted unseen cards in a uniformly random order. What
    a place gets depends only on ``rng`` and on what ``seat`` knows, never on the card really there (None: keep
    the cards as they are)."""
    cards = sorted(unseen)
    m = game.mission
    constrained = (m.highest_or_lowest and (game.round_tricks or game.trick)) or (
        m.memorise and any(any(used) for s, used in enumerate(game.position_used) if s != seat)
    )
    if not constrained:
        return dict(zip(unseen, rng.permutation(cards).tolist(), strict=True))
    checked = [s for s in range(game.n) if s != seat]

    def violations(mapping: dict[int, int]) -> int:
        return sum(not _consistent(game, s, mapping) for s in checked)

    for _ in range(_TRIES):
        mapping = dict(zip(unseen, rng.permutation(cards).tolist(), strict=True))
        if not violations(mapping):
            return mapping
    # No uniform draw passed: transpositions, each kept if it breaks no more players' plays than before, until
    # every play is legal; then a Metropolis chain of legal transpositions (its stationary law is uniform).
    bad = violations(mapping)
    steps = _CHAIN_STEPS * len(unseen)
    for _ in range(steps * (1 + _DESCENT_ROUNDS)):
        if not bad and steps <= 0:
            break
        i, j = rng.choice(len(unseen), 2, replace=False)
        a, b = unseen[i], unseen[j]
        mapping[a], mapping[b] = mapping[b], mapping[a]
        now = violations(mapping)
        if now > bad or (bad == 0 and now):
            mapping[a], mapping[b] = mapping[b], mapping[a]
        else:
            bad = now
        if not bad:
            steps -= 1
    return mapping if not bad else None


def _consistent(game: PiliPiliGame, seat: int, mapping: dict[int, int]) -> bool:
    """Whether ``seat``'s public plays this round stay legal with the cards relabelled by ``mapping``: under
    highest-or-lowest each was then its highest or lowest number card; under memorise the cards it played are at
    the hand positions it played, in the look-time hand sorted by card id."""
    m = game.mission
    if m.highest_or_lowest and not _plays_were_extremes(game, seat, mapping):
        return False
    cards = game.position_cards[seat]
    if m.memorise and cards:
        relabelled = sorted(mapping.get(card, card) for card in cards)
        for position, (card, used) in enumerate(zip(cards, game.position_used[seat], strict=True)):
            if used and relabelled[position] != mapping.get(card, card):
                return False
    return True


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
        if card in mapping:  # face down: a wild's declared value is hidden too
            value = int(rng.integers(MAX_WILD_VALUE + 1)) if new == WILD else new
        trick.append((s, new, value))
    game.trick = trick
    for s, cards in enumerate(game.position_cards):
        if cards:  # memorise: positions are the look-time hand sorted by card id; a used flag follows its card
            used = dict(zip(relabel(cards), game.position_used[s], strict=True))
            game.position_cards[s] = sorted(used)
            game.position_used[s] = [used[card] for card in game.position_cards[s]]


def world_event_log(game: PiliPiliGame, lines: list[str], seat: int) -> list[str]:
    """The event log ``lines`` as ``seat`` saw it: its own moves in full, the others' as
    ``describe_action_public`` says them (which card is passed or given, the value a memorised wild is declared
    as, and every card of a face-down trick are left out); the rules' lines (round, trick, pass and score
    outcomes) are public and kept."""
    own = f"player_{seat}: "
    rounds = sum(line.startswith("round ") and ": dealer player_" in line for line in lines)
    simultaneous = False
    out = []
    for line in lines:
        if line.startswith("round ") and ": dealer player_" in line:
            rounds -= 1
            # the current round's mission is the game's; an earlier one's is read off the round's line
            effects = line.split("): ", 1)[-1].split("; ")
            simultaneous = game.mission.simultaneous if rounds == 0 else "simultaneous play" in effects
            out.append(line)
            continue
        name, sep, text = line.partition(": ")
        if not sep or not name.startswith("player_") or line.startswith(own):
            out.append(line)
            continue
        verb = text.split(" ", 1)[0]
        if text.startswith(("pass ", "give ")):
            text = f"{verb} a card"
        elif text.startswith("declare the wild as "):
            text = "moves"
        elif simultaneous and text.startswith("play "):
            text = "plays a card face down"
        out.append(f"{name}: {text}")
    if game.phase == DECLARE and game.to_act != seat and out and out[-1].startswith(f"player_{game.to_act}: play "):
        out.pop()  # the world puts the declarer back before it chose the hand position (resample_hidden)
    return out
