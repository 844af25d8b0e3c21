"""The compiled rules, observation and mask of the batched Pili Pili engine (numba, cached on disk).

Where you are: the Pili Pili package, under ``batched.py`` (which owns the arrays and the Python API). Each function
here is the array form of one piece of ``table.py`` / ``rules.py`` (the round's deal, the moves, trick resolution,
scoring) or of ``encoder.py`` (mask and observation), over struct-of-arrays state, one row per env:

* ``g`` int64 ``(num_envs, NG)``: the scalars of a game (``G_*`` columns);
* ``ps`` int64 ``(num_envs, NP, 8)``: per-seat values (``P_*`` rows); hands and picks are card bitmasks
  (bit ``c`` = card ``c``, 0 the wild): their order never matters to the rules, the mask or the observation;
* ``posc`` ``(num_envs, 8, 28)``: the hand positions seen at a memorise look; ``deck`` ``(num_envs, 56)``: the
  round's shuffled deck (the stock is its tail from ``G_STOCK``); ``pile`` ``(num_envs, missions)``: the shuffled
  mission pile (drawn from ``G_PILE_POS``); ``rng`` / ``rng0``: the generator now and at the game's start
  (:mod:`tableenvs.vector.draws`); ``log``: the game's actions (what ``get_state`` replays);
* ``mp`` int64 ``(missions, NM)``: each mission's parameters (``M_*`` columns, hand size already capped for the
  player count) and ``mvec`` float32: its observation section (``encoder.mission_vector``).

Every decision where the rules write-up is silent is the AEC engine's, line for line; the differential test
(tests/pilipili/test_batched.py) holds the two to the same seat to act, observation, mask and rewards.
"""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

from tableenvs.pilipili.batched_primitives import borrowed, highest_bit, lowest_bit, popcount, wrap_seat
from tableenvs.vector.draws import integers, permutation

# phases (table.Phase)
LOOK, BID, DESIGNATE, PASS, PLAY, DECLARE, SWAP_NAME, SWAP_GIVE, GAME_OVER = range(9)
# action ids (encoder.py)
A_PLAY = 29
A_PLAY_WILD = 84
A_PICK = 141
A_NAME = 197
A_DECLINE = 204
A_POSITION = 205
A_READY = 233
NUM_ACTIONS = 234
NUM_CARDS = 56
CHILI_LIMIT = 6
MAX_WILD_VALUE = 56
MISSION_SIZE = 23 + 29 + 56  # encoder.MISSION_FLAGS, forbidden bids, listed numbers

# g columns
(G_PHASE, G_TO_ACT, G_DEALER, G_LEADER, G_MIS, G_H, G_TOTAL, G_BIDS_MADE, G_LAST_BID, G_ACTED, G_TPLAYED,
 G_TLEN, G_LAST_WINNER, G_REVEALED, G_SWAP_W, G_SWAP_T, G_ROUNDS, G_STOCK, G_PLAYED, G_PILE_POS, G_PREV,
 G_PREV_WINNER, G_TRUNC, G_LOG_LEN) = range(24)  # fmt: skip
NG = 24
# ps rows (per seat)
(P_CHILIS, P_BIDS, P_WON, P_EXTRAS, P_DESIG, P_CHANGE, P_TCARD, P_TVAL, P_LCARD, P_LVAL, P_PBID, P_PWON,
 P_PTAKEN, P_PDISC, P_PLVAL, P_PLWILD, P_POSLEN, P_POSUSED, P_NSTAGED, P_HAND, P_STAGED) = range(21)  # fmt: skip
P_ENDED = 21  # the final chilis of the env's last ended game (``last_results``; kept by ``new_game``)
NP = 22
# mp columns
(M_HAND, M_PASS_DIR, M_PASS_COUNT, M_PASS_N, M_PASS_ALL, M_FORBID, M_FOREHEAD, M_BLIND, M_EXTRA, M_REVEAL,
 M_EXACT, M_SIMUL, M_REV, M_TIMED, M_FL, M_MEMO, M_NOCOPY, M_DESIG, M_HOL, M_LISTED, M_LIST_EACH, M_SWAP,
 M_BID_START, M_BID_DIR, M_HAS_LOOK) = range(25)  # fmt: skip
NM = 25
# per-seat observation block fields (encoder.SEAT_FIELDS) and previous-round fields (encoder.PREVIOUS_FIELDS)
S_DEALER, S_LEADER, S_TO_ACT, S_HAS_BID, S_BID, S_WON, S_CHILIS, S_HAND = range(8)
S_TPLAYED, S_TVISIBLE, S_TVALUE, S_TWILD, S_LVALUE, S_LWILD, S_LWON, S_SWAP, S_LAST = range(8, 17)
SEAT_FIELDS = 17
PREVIOUS_FIELDS = 7


def offsets(n: int) -> dict[str, int]:
    """The observation's section starts for ``n`` players (``batched.py`` checks them against the encoder's)."""
    o_seats = 10 + 3 * NUM_CARDS + (n - 1) * NUM_CARDS
    o_round = o_seats + n * (SEAT_FIELDS + n)
    o_mission = o_round + 5
    o_positions = o_mission + MISSION_SIZE
    o_previous = o_positions + 28
    return {
        "phase": 0,
        "own_hand": 10,
        "own_staged": 10 + NUM_CARDS,
        "cards_played_this_round": 10 + 2 * NUM_CARDS,
        "other_hands": 10 + 3 * NUM_CARDS,
        "seats": o_seats,
        "round": o_round,
        "mission": o_mission,
        "positions_in_hand": o_positions,
        "previous_round": o_previous,
        "size": o_previous + 1 + PREVIOUS_FIELDS * n,
    }


# ---------------------------------------------------------------------- the deal


@register_jitable
def start_round(e, n, nm, g, ps, deck, pile, rng, mp):
    """``PiliPiliTable.start_round`` with no script: draw a mission (refilling the pile), shuffle, deal."""
    if nm == 0:
        mi = 0
    else:
        if g[e, G_PILE_POS] >= nm:
            permutation(rng[e], nm, pile[e])
            g[e, G_PILE_POS] = 0
        mi = pile[e, g[e, G_PILE_POS]]
        g[e, G_PILE_POS] += 1
    h = mp[mi, M_HAND]
    permutation(rng[e], NUM_CARDS, deck[e])
    for s in range(n):
        hand = 0
        for j in range(h):
            hand |= 1 << deck[e, s * h + j]
        ps[e, P_HAND, s] = hand
        ps[e, P_STAGED, s] = 0
        ps[e, P_NSTAGED, s] = 0
        ps[e, P_BIDS, s] = -1
        ps[e, P_WON, s] = 0
        ps[e, P_EXTRAS, s] = 0
        ps[e, P_DESIG, s] = -1
        ps[e, P_POSLEN, s] = 0
        ps[e, P_POSUSED, s] = 0
    dealer = g[e, G_DEALER]
    g[e, G_STOCK] = n * h
    g[e, G_MIS] = mi
    g[e, G_H] = h
    g[e, G_TOTAL] = h + mp[mi, M_EXTRA]
    g[e, G_BIDS_MADE] = 0
    g[e, G_LAST_BID] = -1
    g[e, G_REVEALED] = 0
    g[e, G_TLEN] = 0
    g[e, G_LAST_WINNER] = -1
    g[e, G_PLAYED] = 0
    g[e, G_TPLAYED] = 0
    g[e, G_LEADER] = dealer
    g[e, G_SWAP_W] = -1
    g[e, G_SWAP_T] = -1
    g[e, G_ACTED] = 0
    if mp[mi, M_HAS_LOOK]:
        g[e, G_PHASE] = LOOK
        g[e, G_TO_ACT] = dealer
    else:
        g[e, G_PHASE] = BID
        g[e, G_TO_ACT] = (dealer + mp[mi, M_BID_START] + n) % n


@register_jitable
def new_game(e, n, nm, g, ps, deck, pile, rng, rng0, mp):
    """``PiliPiliGame(...).start()`` drawing from row ``e``'s generator (kept in ``rng0`` for ``get_state``)."""
    for k in range(rng.shape[1]):
        rng0[e, k] = rng[e, k]
    g[e, G_LOG_LEN] = 0
    g[e, G_ROUNDS] = 0
    g[e, G_PILE_POS] = nm
    g[e, G_PREV] = 0
    g[e, G_PREV_WINNER] = -1
    g[e, G_TRUNC] = 0
    for s in range(n):
        ps[e, P_CHILIS, s] = 0
        ps[e, P_CHANGE, s] = 0
    g[e, G_DEALER] = integers(rng[e], n)
    start_round(e, n, nm, g, ps, deck, pile, rng, mp)


# ---------------------------------------------------------------------- what is legal


@register_jitable
def legal_bids(e, n, g, ps, mp):
    """``legal_bids`` as a bitmask of bids 0..28 (restrictions lifted in order: hook, no-copy, forbidden)."""
    mi = g[e, G_MIS]
    h = g[e, G_H]
    made = g[e, G_BIDS_MADE]
    hook = -1
    if made == n - 1:
        total = 0
        for s in range(n):
            if ps[e, P_BIDS, s] >= 0:
                total += ps[e, P_BIDS, s]
        hook = h - total
    copy = g[e, G_LAST_BID] if mp[mi, M_NOCOPY] and made > 0 else -1
    forbidden = mp[mi, M_FORBID]
    for level in range(4):
        legal = 0
        for b in range(h + 1):
            if level == 0 and b == hook:
                continue
            if level <= 1 and b == copy:
                continue
            if level <= 2 and (forbidden >> b) & 1:
                continue
            legal |= 1 << b
        if legal != 0:
            return legal
    return 0


@register_jitable
def legal_play_cards(e, g, ps, mp):
    """``legal_play_cards`` as a card bitmask (the highest-or-lowest rule keeps the extremes and the wild)."""
    hand = ps[e, P_HAND, g[e, G_TO_ACT]]
    if not mp[g[e, G_MIS], M_HOL]:
        return hand
    numbers = hand & ~1
    legal = hand & 1
    if numbers != 0:
        legal |= (1 << lowest_bit(numbers)) | (1 << highest_bit(numbers))
    return legal


@register_jitable
def fill_mask(e, n, g, ps, mp, mask):
    """``Encoder.fill_mask`` into row ``e`` of ``mask`` (2-D indexing throughout: a row view costs a reference
    count in numba)."""
    for a in range(NUM_ACTIONS):
        mask[e, a] = 0
    phase = g[e, G_PHASE]
    seat = g[e, G_TO_ACT]
    if phase == PLAY:
        if mp[g[e, G_MIS], M_MEMO]:
            used = ps[e, P_POSUSED, seat]
            for p in range(ps[e, P_POSLEN, seat]):
                if (used >> p) & 1 == 0:
                    mask[e, A_POSITION + p] = 1
            return
        cards = legal_play_cards(e, g, ps, mp)
        if cards & 1:
            for a in range(A_PLAY_WILD, A_PLAY_WILD + MAX_WILD_VALUE + 1):
                mask[e, a] = 1
        cards &= ~1
        while cards != 0:
            mask[e, A_PLAY - 1 + lowest_bit(cards)] = 1
            cards &= cards - 1
    elif phase == BID:
        bids = legal_bids(e, n, g, ps, mp)
        while bids != 0:
            mask[e, lowest_bit(bids)] = 1
            bids &= bids - 1
    elif phase == PASS or phase == SWAP_GIVE:
        cards = ps[e, P_HAND, seat]
        if phase == PASS:
            cards &= ~ps[e, P_STAGED, seat]
        while cards != 0:
            mask[e, A_PICK + lowest_bit(cards)] = 1
            cards &= cards - 1
    elif phase == SWAP_NAME or phase == DESIGNATE:
        for a in range(A_NAME, A_NAME + n - 1):
            mask[e, a] = 1
        if phase == SWAP_NAME:
            mask[e, A_DECLINE] = 1
    elif phase == DECLARE:
        for a in range(A_PLAY_WILD, A_PLAY_WILD + MAX_WILD_VALUE + 1):
            mask[e, a] = 1
    elif phase == LOOK:
        mask[e, A_READY] = 1


# ---------------------------------------------------------------------- the moves


@register_jitable
def _after_pass(e, n, g, ps, deck, mp):
    mi = g[e, G_MIS]
    extra = mp[mi, M_EXTRA]
    dealer = g[e, G_DEALER]
    if extra:
        pos = g[e, G_STOCK]
        for i in range(n):
            seat = (dealer + i) % n
            for _ in range(extra):
                ps[e, P_HAND, seat] |= 1 << deck[e, pos]
                pos += 1
        g[e, G_STOCK] = pos
    g[e, G_REVEALED] = mp[mi, M_REVEAL]
    g[e, G_PHASE] = PLAY
    g[e, G_LEADER] = dealer
    g[e, G_TO_ACT] = dealer


@register_jitable
def _after_designation(e, n, g, ps, deck, mp):
    mi = g[e, G_MIS]
    if mp[mi, M_PASS_COUNT]:
        g[e, G_PHASE] = PASS
        g[e, G_TO_ACT] = g[e, G_DEALER]
        return
    if mp[mi, M_PASS_ALL]:
        d = mp[mi, M_PASS_DIR]
        old = ps[e, P_HAND, :n].copy()
        for s in range(n):
            ps[e, P_HAND, s] = old[(s - d + n) % n]
    _after_pass(e, n, g, ps, deck, mp)


@register_jitable
def _score_round(e, n, max_rounds, g, ps, deck, pile, rng, mp, nm):
    mi = g[e, G_MIS]
    designate = mp[mi, M_DESIG]
    exact = mp[mi, M_EXACT]
    highest = 0
    for s in range(n):
        taken = abs(ps[e, P_BIDS, s] - ps[e, P_WON, s]) + ps[e, P_EXTRAS, s]
        if designate:
            t = ps[e, P_DESIG, s]
            taken += abs(ps[e, P_BIDS, t] - ps[e, P_WON, t]) + ps[e, P_EXTRAS, t]
        chilis = ps[e, P_CHILIS, s] + taken
        discarded = 0
        if exact and ps[e, P_BIDS, s] == ps[e, P_WON, s]:
            discarded = min(ps[e, P_BIDS, s], chilis)
            chilis -= discarded
        ps[e, P_CHANGE, s] = chilis - ps[e, P_CHILIS, s]
        ps[e, P_CHILIS, s] = chilis
        highest = max(highest, chilis)
        ps[e, P_PBID, s] = ps[e, P_BIDS, s]
        ps[e, P_PWON, s] = ps[e, P_WON, s]
        ps[e, P_PTAKEN, s] = taken
        ps[e, P_PDISC, s] = discarded
        ps[e, P_PLVAL, s] = ps[e, P_LVAL, s]
        ps[e, P_PLWILD, s] = 1 if ps[e, P_LCARD, s] == 0 else 0
    g[e, G_PREV] = 1
    g[e, G_PREV_WINNER] = g[e, G_LAST_WINNER]
    g[e, G_ROUNDS] += 1
    if highest >= CHILI_LIMIT:
        g[e, G_PHASE] = GAME_OVER
    elif max_rounds > 0 and g[e, G_ROUNDS] >= max_rounds:
        g[e, G_TRUNC] = 1
        g[e, G_PHASE] = GAME_OVER
    else:
        g[e, G_DEALER] = (g[e, G_DEALER] + 1) % n
        start_round(e, n, nm, g, ps, deck, pile, rng, mp)


@register_jitable
def _add_to_trick(e, n, nm, max_rounds, card, value, g, ps, deck, pile, rng, mp):
    """``_add_to_trick``: 1 if the move scored the round, else 0."""
    seat = g[e, G_TO_ACT]
    ps[e, P_TCARD, seat] = card
    ps[e, P_TVAL, seat] = value
    g[e, G_TLEN] += 1
    if g[e, G_TLEN] < n:
        g[e, G_TO_ACT] = wrap_seat(seat + 1, n)
        return 0
    mi = g[e, G_MIS]
    reverse = mp[mi, M_REV]
    leader = g[e, G_LEADER]
    winner = -1
    best = -1
    cards = 0
    for j in range(n):
        s = wrap_seat(leader + j, n)
        c = ps[e, P_TCARD, s]
        v = ps[e, P_TVAL, s]
        if reverse:
            v = MAX_WILD_VALUE - v
        strength = 2 * v + (1 if c != 0 else 0)
        if strength > best:
            best = strength
            winner = s
        cards |= 1 << c
        ps[e, P_LCARD, s] = c
        ps[e, P_LVAL, s] = ps[e, P_TVAL, s]
    ps[e, P_WON, winner] += 1
    g[e, G_TPLAYED] += 1
    played = g[e, G_TPLAYED]
    total = g[e, G_TOTAL]
    g[e, G_PLAYED] |= cards
    extra = 0
    if mp[mi, M_FL]:
        extra += (1 if played == 1 else 0) + (1 if played == total else 0)
    if mp[mi, M_LISTED] != 0:
        hits = popcount(cards & mp[mi, M_LISTED])
        extra += hits if mp[mi, M_LIST_EACH] else min(hits, 1)
    ps[e, P_EXTRAS, winner] += extra
    g[e, G_LAST_WINNER] = winner
    g[e, G_TLEN] = 0
    g[e, G_LEADER] = winner
    g[e, G_TO_ACT] = winner
    if played == total:
        _score_round(e, n, max_rounds, g, ps, deck, pile, rng, mp, nm)
        return 1
    if mp[mi, M_SWAP]:
        g[e, G_PHASE] = SWAP_NAME
    return 0


@register_jitable
def apply(e, n, nm, max_rounds, a, g, ps, posc, deck, pile, rng, mp):
    """``Encoder.apply`` of the legal action id ``a``: 1 if it scored a round, else 0."""
    seat = g[e, G_TO_ACT]
    phase = g[e, G_PHASE]
    mi = g[e, G_MIS]
    if a < A_PLAY:  # bid
        ps[e, P_BIDS, seat] = a
        g[e, G_LAST_BID] = a
        g[e, G_BIDS_MADE] += 1
        g[e, G_TO_ACT] = wrap_seat(seat + mp[mi, M_BID_DIR], n)
        if g[e, G_BIDS_MADE] == n:
            g[e, G_TO_ACT] = g[e, G_DEALER]
            if mp[mi, M_DESIG]:
                g[e, G_PHASE] = DESIGNATE
            else:
                _after_designation(e, n, g, ps, deck, mp)
        return 0
    if a < A_PLAY_WILD:  # a number card
        card = a - A_PLAY + 1
        ps[e, P_HAND, seat] &= ~(1 << card)
        return _add_to_trick(e, n, nm, max_rounds, card, card, g, ps, deck, pile, rng, mp)
    if a < A_PICK:  # the wild as a value (played, or a memorised wild declared)
        if phase == DECLARE:
            g[e, G_PHASE] = PLAY
        ps[e, P_HAND, seat] &= ~1
        return _add_to_trick(e, n, nm, max_rounds, 0, a - A_PLAY_WILD, g, ps, deck, pile, rng, mp)
    if a < A_NAME:  # pick a card to pass or to give
        card = a - A_PICK
        bit = 1 << card
        if phase == PASS:
            ps[e, P_STAGED, seat] |= bit
            ps[e, P_NSTAGED, seat] += 1
            if ps[e, P_NSTAGED, seat] < mp[mi, M_PASS_N]:
                return 0
            g[e, G_ACTED] += 1
            g[e, G_TO_ACT] = wrap_seat(seat + 1, n)
            if g[e, G_ACTED] < n:
                return 0
            g[e, G_ACTED] = 0
            d = mp[mi, M_PASS_DIR]
            for s in range(n):  # keep the unstaged cards (the staged ones stay in P_STAGED until received)
                ps[e, P_HAND, s] &= ~ps[e, P_STAGED, s]
            for s in range(n):
                ps[e, P_HAND, s] |= ps[e, P_STAGED, (s - d + n) % n]
            for s in range(n):
                ps[e, P_STAGED, s] = 0
                ps[e, P_NSTAGED, s] = 0
            _after_pass(e, n, g, ps, deck, mp)
            return 0
        # SWAP_GIVE
        ps[e, P_STAGED, seat] = bit
        ps[e, P_NSTAGED, seat] = 1
        w = g[e, G_SWAP_W]
        t = g[e, G_SWAP_T]
        if seat == w:
            g[e, G_TO_ACT] = t
            return 0
        cw = ps[e, P_STAGED, w]
        ct = ps[e, P_STAGED, t]
        ps[e, P_HAND, w] = (ps[e, P_HAND, w] & ~cw) | ct
        ps[e, P_HAND, t] = (ps[e, P_HAND, t] & ~ct) | cw
        ps[e, P_STAGED, w] = 0
        ps[e, P_STAGED, t] = 0
        ps[e, P_NSTAGED, w] = 0
        ps[e, P_NSTAGED, t] = 0
        g[e, G_PHASE] = PLAY
        g[e, G_TO_ACT] = w
        return 0
    if a < A_DECLINE:  # name a player: designation or swap partner
        target = (seat + a - A_NAME + 1) % n
        if phase == DESIGNATE:
            ps[e, P_DESIG, seat] = target
            g[e, G_ACTED] += 1
            g[e, G_TO_ACT] = wrap_seat(seat + 1, n)
            if g[e, G_ACTED] == n:
                g[e, G_ACTED] = 0
                _after_designation(e, n, g, ps, deck, mp)
        else:
            g[e, G_SWAP_W] = seat
            g[e, G_SWAP_T] = target
            g[e, G_PHASE] = SWAP_GIVE
        return 0
    if a == A_DECLINE:
        g[e, G_PHASE] = PLAY
        return 0
    if a < A_READY:  # memorise: a hand position
        p = a - A_POSITION
        ps[e, P_POSUSED, seat] |= 1 << p
        card = posc[e, seat, p]
        if card == 0:
            g[e, G_PHASE] = DECLARE
            return 0
        ps[e, P_HAND, seat] &= ~(1 << card)
        return _add_to_trick(e, n, nm, max_rounds, card, card, g, ps, deck, pile, rng, mp)
    # ready: look at the hand
    if mp[mi, M_MEMO]:
        hand = ps[e, P_HAND, seat]
        k = 0
        while hand != 0:
            posc[e, seat, k] = lowest_bit(hand)
            hand &= hand - 1
            k += 1
        ps[e, P_POSLEN, seat] = k
        ps[e, P_POSUSED, seat] = 0
    g[e, G_ACTED] += 1
    g[e, G_TO_ACT] = wrap_seat(seat + 1, n)
    if g[e, G_ACTED] == n:
        g[e, G_ACTED] = 0
        g[e, G_PHASE] = BID
        g[e, G_TO_ACT] = (g[e, G_DEALER] + mp[mi, M_BID_START] + n) % n
    return 0


# ---------------------------------------------------------------------- the observation


@register_jitable
def _rel(s, seat, n):
    """The relative seat of ``s`` seen from ``seat`` (``(s - seat) % n`` without a division)."""
    r = s - seat
    return r + n if r < 0 else r


@register_jitable
def fill_observation(e, n, seat, g, ps, mp, mnz, mvec, obs):
    """``Encoder.fill_observation`` of ``seat`` into row ``e`` of ``obs`` (the visibility rules of ``seen_by``)."""
    size = obs.shape[1]
    for i in range(size):
        obs[e, i] = 0.0
    o_seats = 10 + 3 * NUM_CARDS + (n - 1) * NUM_CARDS
    width = SEAT_FIELDS + n
    o_round = o_seats + n * width
    o_mission = o_round + 5
    o_positions = o_mission + MISSION_SIZE
    o_previous = o_positions + 28
    phase = g[e, G_PHASE]
    to_act = g[e, G_TO_ACT]
    mi = g[e, G_MIS]
    if phase != GAME_OVER:
        shown = PLAY if phase == DECLARE and seat != to_act else phase
        obs[e, shown] = 1.0
        obs[e, o_seats + (_rel(g[e, G_LEADER], seat, n)) * width + S_LEADER] = 1.0
        obs[e, o_seats + (_rel(to_act, seat, n)) * width + S_TO_ACT] = 1.0
    # sees_own_hand
    if mp[mi, M_MEMO]:
        own = phase == LOOK and to_act == seat
    elif mp[mi, M_TIMED]:
        own = (to_act == seat) if phase == LOOK else phase != BID
    elif mp[mi, M_FOREHEAD] or mp[mi, M_BLIND]:
        own = phase != BID
    else:
        own = True
    if own:
        obs[e, 8] = 1.0
        cards = ps[e, P_HAND, seat]
        while cards != 0:
            obs[e, 10 + lowest_bit(cards)] = 1.0
            cards &= cards - 1
        cards = ps[e, P_STAGED, seat]
        while cards != 0:
            obs[e, 10 + NUM_CARDS + lowest_bit(cards)] = 1.0
            cards &= cards - 1
    # sees_other_hands
    others = mp[mi, M_FOREHEAD] != 0 if phase == BID else g[e, G_REVEALED] != 0
    if others:
        obs[e, 9] = 1.0
        for r in range(1, n):
            o = 10 + 3 * NUM_CARDS + (r - 1) * NUM_CARDS
            s = seat + r
            if s >= n:
                s -= n
            cards = ps[e, P_HAND, s]
            while cards != 0:
                obs[e, o + lowest_bit(cards)] = 1.0
                cards &= cards - 1
    o_played = 10 + 2 * NUM_CARDS
    cards = g[e, G_PLAYED]
    while cards != 0:
        obs[e, o_played + lowest_bit(cards)] = 1.0
        cards &= cards - 1
    obs[e, o_seats + (_rel(g[e, G_DEALER], seat, n)) * width + S_DEALER] = 1.0
    for r in range(n):
        s = seat + r
        if s >= n:
            s -= n
        b = o_seats + r * width
        if ps[e, P_BIDS, s] >= 0:
            obs[e, b + S_HAS_BID] = 1.0
            obs[e, b + S_BID] = ps[e, P_BIDS, s]
        obs[e, b + S_WON] = ps[e, P_WON, s]
        obs[e, b + S_CHILIS] = ps[e, P_CHILIS, s]
        obs[e, b + S_HAND] = popcount(ps[e, P_HAND, s])
        obs[e, b + S_LAST] = ps[e, P_CHANGE, s]
    face_down = mp[mi, M_SIMUL] != 0
    leader = g[e, G_LEADER]
    for j in range(g[e, G_TLEN]):
        s = leader + j
        if s >= n:
            s -= n
        b = o_seats + (_rel(s, seat, n)) * width
        obs[e, b + S_TPLAYED] = 1.0
        if not face_down or s == seat:
            card = ps[e, P_TCARD, s]
            obs[e, b + S_TVISIBLE] = 1.0
            obs[e, o_played + card] = 1.0
            obs[e, b + S_TVALUE] = ps[e, P_TVAL, s]
            if card == 0:
                obs[e, b + S_TWILD] = 1.0
    if g[e, G_LAST_WINNER] >= 0:
        for s in range(n):
            b = o_seats + (_rel(s, seat, n)) * width
            obs[e, b + S_LVALUE] = ps[e, P_LVAL, s]
            if ps[e, P_LCARD, s] == 0:
                obs[e, b + S_LWILD] = 1.0
        obs[e, o_seats + (_rel(g[e, G_LAST_WINNER], seat, n)) * width + S_LWON] = 1.0
    if mp[mi, M_DESIG]:
        for s in range(n):
            t = ps[e, P_DESIG, s]
            if t >= 0:
                obs[e, o_seats + (_rel(s, seat, n)) * width + SEAT_FIELDS + _rel(t, seat, n)] = 1.0
    if phase == SWAP_GIVE:
        obs[e, o_seats + (_rel(g[e, G_SWAP_W], seat, n)) * width + S_SWAP] = 1.0
        obs[e, o_seats + (_rel(g[e, G_SWAP_T], seat, n)) * width + S_SWAP] = 1.0
    if mp[mi, M_MEMO]:
        used = ps[e, P_POSUSED, seat]
        for p in range(ps[e, P_POSLEN, seat]):
            if (used >> p) & 1 == 0:
                obs[e, o_positions + p] = 1.0
    obs[e, o_round] = g[e, G_H]
    obs[e, o_round + 1] = g[e, G_TPLAYED]
    obs[e, o_round + 2] = g[e, G_TOTAL]
    obs[e, o_round + 3] = g[e, G_ROUNDS]
    if phase == PASS and to_act == seat:
        obs[e, o_round + 4] = mp[mi, M_PASS_N] - ps[e, P_NSTAGED, seat]
    for j in range(1, mnz[mi, 0] + 1):  # the mission section's nonzero entries
        i = mnz[mi, j]
        obs[e, o_mission + i] = mvec[mi, i]
    if g[e, G_PREV]:
        obs[e, o_previous] = 1.0
        for s in range(n):
            b = o_previous + 1 + (_rel(s, seat, n)) * PREVIOUS_FIELDS
            obs[e, b] = ps[e, P_PBID, s]
            obs[e, b + 1] = ps[e, P_PWON, s]
            obs[e, b + 2] = ps[e, P_PTAKEN, s]
            obs[e, b + 3] = ps[e, P_PDISC, s]
            obs[e, b + 4] = ps[e, P_PLVAL, s]
            obs[e, b + 5] = ps[e, P_PLWILD, s]
        obs[e, o_previous + 1 + (_rel(g[e, G_PREV_WINNER], seat, n)) * PREVIOUS_FIELDS + 6] = 1.0


# ---------------------------------------------------------------------- the batch


def reset_envs(envs, n, nm, g, ps, deck, pile, rng, rng0, mp, mnz, mvec, obs, mask, to_act):
    """Start a new game in each env of ``envs`` (its generator row already set) and write its first view."""
    g, ps, deck, pile, rng = borrowed(g), borrowed(ps), borrowed(deck), borrowed(pile), borrowed(rng)
    rng0, mp, mnz, mvec = borrowed(rng0), borrowed(mp), borrowed(mnz), borrowed(mvec)
    obs, mask = borrowed(obs), borrowed(mask)
    for k in range(envs.shape[0]):
        e = envs[k]
        new_game(e, n, nm, g, ps, deck, pile, rng, rng0, mp)
        to_act[e] = g[e, G_TO_ACT]
        fill_observation(e, n, to_act[e], g, ps, mp, mnz, mvec, obs)
        fill_mask(e, n, g, ps, mp, mask)


def step_envs(actions, check, n, nm, max_rounds, win, g, ps, posc, deck, pile, rng, rng0, log, mp, mnz, mvec,
              obs, mask, rewards, terminated, truncated, to_act):  # fmt: skip
    """Apply each env's (legal) action; an env whose game ended starts its next one. Returns the longest action
    log now held (the caller grows ``log`` before it fills), or, when ``check`` finds an action out of range or
    not in its env's mask, ``-1 - e`` for the first such env ``e``, having changed nothing. The range is checked
    even unchecked (``check`` false): the kernel indexes with the action."""
    return _step_some(np.arange(actions.shape[0]), actions, check, n, nm, max_rounds, win, g, ps, posc, deck, pile,
                      rng, rng0, log, mp, mnz, mvec, obs, mask, rewards, terminated, truncated, to_act)  # fmt: skip


def step_rows(rows, actions, check, n, nm, max_rounds, win, g, ps, posc, deck, pile, rng, rng0, log, mp, mnz, mvec,
              obs, mask, rewards, terminated, truncated, to_act):  # fmt: skip
    """:func:`step_envs` for envs ``rows`` only (``actions[i]`` in env ``rows[i]``; ``-1 - i`` for the first bad
    one); every other env is left as it is, its rewards zero and not ended."""
    return _step_some(rows, actions, check, n, nm, max_rounds, win, g, ps, posc, deck, pile, rng, rng0, log, mp, mnz,
                      mvec, obs, mask, rewards, terminated, truncated, to_act)  # fmt: skip


@register_jitable
def _step_some(rows, actions, check, n, nm, max_rounds, win, g, ps, posc, deck, pile, rng, rng0, log, mp, mnz, mvec,
               obs, mask, rewards, terminated, truncated, to_act):  # fmt: skip
    g, ps, posc, deck, pile = borrowed(g), borrowed(ps), borrowed(posc), borrowed(deck), borrowed(pile)
    rng, rng0, log, mp, mnz = borrowed(rng), borrowed(rng0), borrowed(log), borrowed(mp), borrowed(mnz)
    mvec, obs, mask = borrowed(mvec), borrowed(obs), borrowed(mask)
    for i in range(rows.shape[0]):
        if actions[i] < 0 or actions[i] >= NUM_ACTIONS or (check and mask[rows[i], actions[i]] == 0):
            return -1 - i
    rewards[:] = 0.0
    terminated[:] = False
    truncated[:] = False
    longest = 0
    for i in range(rows.shape[0]):
        step_env(rows[i], actions[i], n, nm, max_rounds, win, g, ps, posc, deck, pile, rng, rng0, log, mp, mnz, mvec,
                 obs, mask, rewards, terminated, truncated, to_act)  # fmt: skip
    for e in range(g.shape[0]):
        longest = max(longest, g[e, G_LOG_LEN])
    return longest


@register_jitable
def step_env(e, a, n, nm, max_rounds, win, g, ps, posc, deck, pile, rng, rng0, log, mp, mnz, mvec, obs, mask,
             rewards, terminated, truncated, to_act):  # fmt: skip
    """Env ``e`` plays its legal action ``a`` (a finished game followed by the next); its view and rewards."""
    for s in range(n):
        rewards[e, s] = 0.0
    terminated[e] = False
    truncated[e] = False
    log[e, g[e, G_LOG_LEN]] = a
    g[e, G_LOG_LEN] += 1
    if apply(e, n, nm, max_rounds, a, g, ps, posc, deck, pile, rng, mp):
        over = g[e, G_PHASE] == GAME_OVER
        if not win:
            for s in range(n):
                rewards[e, s] = -ps[e, P_CHANGE, s]
        elif over and not g[e, G_TRUNC]:
            low = ps[e, P_CHILIS, 0]
            for s in range(1, n):
                low = min(low, ps[e, P_CHILIS, s])
            count = 0
            for s in range(n):
                if ps[e, P_CHILIS, s] == low:
                    count += 1
            for s in range(n):
                rewards[e, s] = 1.0 / count if ps[e, P_CHILIS, s] == low else -1.0
        if over:
            for s in range(n):
                ps[e, P_ENDED, s] = ps[e, P_CHILIS, s]
            if g[e, G_TRUNC]:
                truncated[e] = True
            else:
                terminated[e] = True
            new_game(e, n, nm, g, ps, deck, pile, rng, rng0, mp)
    to_act[e] = g[e, G_TO_ACT]
    fill_observation(e, n, to_act[e], g, ps, mp, mnz, mvec, obs)
    fill_mask(e, n, g, ps, mp, mask)
