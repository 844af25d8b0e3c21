"""Llama Party's rules, observation and mask as numba kernels over many games at once (the batched engine's core).

Where you are: the compiled half of ``tableenvs/llama_party``'s batched engine (the Python half, the
:class:`tableenvs.vector.BatchedGame` object, is ``batched.py``). Each function below is a line-for-line
transcription of ``rules.py`` (``LlamaParty.start``, ``_deal``, ``act``, ``_resolve_pass``, ``end_round``,
``place_goals``, ``lowest_total_seat``, ``winners``) and ``encoder.py`` (``Encoder.fill``, ``fill_mask``), drawing
from each env's own ``numpy.random.Generator`` in the same order (:mod:`tableenvs.vector.draws`), so env ``i``
plays exactly the game the AEC env plays with the same seed and actions; ``tests/test_vector_llama_party.py``
checks it step by step.

State: one int32 row per env (``board[e]``, the sections below, seat-indexed parts padded to 4 seats; lists keep the
rules engine's order, which later draws depend on), and one float64 block per env (``money[e]``: the last step's
rewards, PettingZoo's cumulative rewards and the game's returns, by seat). Kernels are plain functions here;
``batched.py`` compiles them (cached on disk) on first use.
"""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

from tableenvs.llama_party.cards import DECK_SIZE, NUM_LETTERS
from tableenvs.llama_party.encoder import LAYOUT, SCORE_SCALE
from tableenvs.llama_party.rules import (
    DEAL_SIZE,
    END_SCORE,
    HAND_SIZE,
    NUM_ROUNDS,
    NUM_SLOTS,
    PASS_COUNTS,
)
from tableenvs.vector.draws import integers, permutation

SLOT_CAP = HAND_SIZE + max(PASS_COUNTS)  # a dummy holds at most 7 cards plus one pass fed into it
MOVED_CAP = sum(PASS_COUNTS)
LOWEST_TIE_DRAW = 3 * 4 * 5 * 7  # rules.lowest_total_seat's one draw

# the board row's sections (offsets into board[e])
HANDS = 0  # NUM_SLOTS x SLOT_CAP cards, in the engine's order
HAND_LEN = HANDS + NUM_SLOTS * SLOT_CAP
GOAL = HAND_LEN + NUM_SLOTS  # goal_of_slot, -1 until chosen
DISPLAY = GOAL + NUM_SLOTS  # display by position (valid from step 1)
STAGED = DISPLAY + NUM_SLOTS  # per seat, 4 picks
STAGED_LEN = STAGED + NUM_SLOTS * max(PASS_COUNTS)
PASSED = STAGED_LEN + NUM_SLOTS  # per seat, MOVED_CAP cards
RECEIVED = PASSED + NUM_SLOTS * MOVED_CAP
MOVED = RECEIVED + NUM_SLOTS * MOVED_CAP  # cards passed (= received) per seat so far this round
RING = MOVED + 1
LEFT_OF = RING + NUM_SLOTS
STEP = LEFT_OF + NUM_SLOTS
TO_ACT = STEP + 1
ROUND = TO_ACT + 1
FEEDS = ROUND + 1  # 3 players: the seat the dummy feeds; else -1
TOTALS = FEEDS + 1
ROUND_SCORES = TOTALS + NUM_SLOTS  # NUM_ROUNDS rows by seat
SCORED = ROUND_SCORES + NUM_ROUNDS * NUM_SLOTS  # rounds scored
SHOWN = SCORED + 1  # per seat, the 7 cards shown at the last scoring (sorted)
SHOWN_DISPLAY = SHOWN + NUM_SLOTS * HAND_SIZE
BOARD_WIDTH = SHOWN_DISPLAY + NUM_SLOTS

# the workspace every kernel passes down (int64): permutations, letter counts, incoming cards, scores, draws
W_PERM = 0
W_COUNTS = W_PERM + DECK_SIZE
W_INCOMING = W_COUNTS + NUM_LETTERS
W_SCORES = W_INCOMING + NUM_SLOTS * NUM_SLOTS
W_DRAWN = W_SCORES + NUM_SLOTS
WORK_SIZE = W_DRAWN + NUM_SLOTS

# money[e] rows
LAST, CUMULATIVE, RETURNS = 0, 1, 2
# rows of ``ended`` (num_envs, 3, NUM_SLOTS): a finished game's total rewards, final totals, last round's scores
ENDED_RETURNS, ENDED_TOTALS, ENDED_LAST = 0, 1, 2

_PASS_COUNTS = PASS_COUNTS  # a tuple: numba reads it as a constant
_OBS_HAND, _OBS_STAGED, _OBS_GOAL, _OBS_REVEALED = LAYOUT.HAND, LAYOUT.STAGED, LAYOUT.OWN_GOAL, LAYOUT.REVEALED
_OBS_PASSED, _OBS_RECEIVED, _OBS_LETTERS, _OBS_STEP = LAYOUT.PASSED, LAYOUT.RECEIVED, LAYOUT.HAND_LETTERS, LAYOUT.STEP
_OBS_PICKS, _OBS_ROUND, _OBS_PLAYERS, _OBS_RING = LAYOUT.PICKS_LEFT, LAYOUT.ROUND, LAYOUT.NUM_PLAYERS, LAYOUT.RING
_OBS_TOTALS, _OBS_SCORES, _OBS_SHOWN = LAYOUT.TOTALS, LAYOUT.ROUND_SCORES, LAYOUT.SHOWN_HANDS


@register_jitable
def _pop(board, at, length_at, index):
    """Remove and return ``board[at + index]`` of the list of ``board[length_at]`` cards at ``at``."""
    length = board[length_at]
    card = board[at + index]
    for k in range(index, length - 1):
        board[at + k] = board[at + k + 1]
    board[length_at] = length - 1
    return card


@register_jitable
def _append(board, at, length_at, card):
    board[at + board[length_at]] = card
    board[length_at] += 1


@register_jitable
def deal(board, n, gen, work):
    """``LlamaParty._deal`` (no scripted hands)."""
    permutation(gen, DECK_SIZE, work)
    for slot in range(NUM_SLOTS):
        for k in range(DEAL_SIZE):
            board[HANDS + slot * SLOT_CAP + k] = work[W_PERM + slot * DEAL_SIZE + k]
        board[HAND_LEN + slot] = DEAL_SIZE
        board[GOAL + slot] = -1
        board[DISPLAY + slot] = -1
    for slot in range(n, NUM_SLOTS):
        index = integers(gen, DEAL_SIZE)
        board[GOAL + slot] = _pop(board, HANDS + slot * SLOT_CAP, HAND_LEN + slot, index)
    if n == 3:
        if board[ROUND] == 1:
            feeds = integers(gen, 3)
        else:  # rules.lowest_total_seat: one draw, tie or not
            low = min(board[TOTALS], board[TOTALS + 1], board[TOTALS + 2])
            tied = 0
            for seat in range(3):
                if board[TOTALS + seat] == low:
                    tied += 1
            pick = integers(gen, LOWEST_TIE_DRAW) % tied
            feeds = -1
            for seat in range(3):
                if board[TOTALS + seat] == low:
                    if pick == 0:
                        feeds = seat
                        break
                    pick -= 1
        board[FEEDS] = feeds
        board[RING] = 3
        for i in range(3):
            board[RING + 1 + i] = (feeds + i) % 3
    else:
        board[FEEDS] = -1
        ring = (0, 1, 2, 3) if n == 4 else (0, 2, 1, 3)
        for i in range(NUM_SLOTS):
            board[RING + i] = ring[i]
    for i in range(NUM_SLOTS):
        board[LEFT_OF + board[RING + i]] = board[RING + (i + 1) % NUM_SLOTS]
    for seat in range(NUM_SLOTS):
        board[STAGED_LEN + seat] = 0
    board[MOVED] = 0
    board[STEP] = 0
    board[TO_ACT] = 0


@register_jitable
def start(board, n, gen, work):
    """``LlamaParty.start`` with no scripted options: totals 0, round 1, nothing shown, then the deal."""
    for seat in range(NUM_SLOTS):
        board[TOTALS + seat] = 0
    board[SCORED] = 0
    board[ROUND] = 1
    deal(board, n, gen, work)


@register_jitable
def _place_goals(board, n, gen, work):
    """``rules.place_goals``: the display by position."""
    order = work[W_PERM:]
    if board[ROUND] == 1:
        permutation(gen, NUM_SLOTS, order)
        for p in range(NUM_SLOTS):
            board[DISPLAY + p] = board[GOAL + order[p]]
    else:
        permutation(gen, n, order)
        for i in range(1, n):  # stable insertion sort, highest total first
            seat = order[i]
            j = i - 1
            while j >= 0 and board[TOTALS + order[j]] < board[TOTALS + seat]:
                order[j + 1] = order[j]
                j -= 1
            order[j + 1] = seat
        for p in range(n):
            board[DISPLAY + p] = board[GOAL + order[p]]
        permutation(gen, NUM_SLOTS - n, order)
        for d in range(NUM_SLOTS - n):
            board[DISPLAY + n + d] = board[GOAL + n + order[d]]


@register_jitable
def _resolve_pass(board, n, gen, work):
    """``LlamaParty._resolve_pass``: every seat's picks move left; a dummy fed cards gives as many at random."""
    count = _PASS_COUNTS[board[STEP] - 1]
    for seat in range(n):
        target = board[LEFT_OF + seat]
        for k in range(count):
            card = board[STAGED + seat * NUM_SLOTS + k]
            if target < n:
                work[W_INCOMING + target * NUM_SLOTS + k] = card
            else:
                _append(board, HANDS + target * SLOT_CAP, HAND_LEN + target, card)
    for dummy in range(n, NUM_SLOTS):
        at = HANDS + dummy * SLOT_CAP
        permutation(gen, board[HAND_LEN + dummy], work)
        for i in range(count):  # the first `count` positions, highest first (sorted(..., reverse=True))
            position = work[W_PERM + i]
            j = i - 1
            while j >= 0 and work[W_DRAWN + j] < position:
                work[W_DRAWN + j + 1] = work[W_DRAWN + j]
                j -= 1
            work[W_DRAWN + j + 1] = position
        receiver = board[LEFT_OF + dummy]
        for k in range(count):
            card = _pop(board, at, HAND_LEN + dummy, work[W_DRAWN + k])
            work[W_INCOMING + receiver * NUM_SLOTS + k] = card
    moved = board[MOVED]
    for seat in range(n):
        for k in range(count):
            board[PASSED + seat * MOVED_CAP + moved + k] = board[STAGED + seat * NUM_SLOTS + k]
            card = work[W_INCOMING + seat * NUM_SLOTS + k]
            board[RECEIVED + seat * MOVED_CAP + moved + k] = card
            _append(board, HANDS + seat * SLOT_CAP, HAND_LEN + seat, card)
        board[STAGED_LEN + seat] = 0
    board[MOVED] = moved + count


@register_jitable
def hand_score(board, seat, letter, letter_points, need, bottom_points, num_bottoms, work):
    """``rules.hand_score`` of ``seat``'s hand against the display."""
    counts = work[W_COUNTS : W_COUNTS + NUM_LETTERS]
    counts[:] = 0
    for k in range(board[HAND_LEN + seat]):
        counts[letter[board[HANDS + seat * SLOT_CAP + k]]] += 1
    total = 0
    for p in range(NUM_SLOTS):
        goal = board[DISPLAY + p]
        for letter_index in range(NUM_LETTERS):
            total += letter_points[goal, letter_index] * counts[letter_index]
        for b in range(num_bottoms[goal]):
            copies = -1
            for letter_index in range(NUM_LETTERS):
                needed = need[goal, b, letter_index]
                if needed:
                    available = counts[letter_index] // needed
                    if copies < 0 or available < copies:
                        copies = available
            if copies > 0:
                total += bottom_points[goal, b] * copies
    return total


@register_jitable
def _end_round(board, n, win, deck, gen, work, rewards):
    """``LlamaParty.end_round`` plus the env's rewards for it; True when the game is over."""
    letter, letter_points, need, bottom_points, num_bottoms = deck
    row = board[SCORED]
    scores = work[W_SCORES : W_SCORES + NUM_SLOTS]
    for seat in range(n):
        scores[seat] = hand_score(board, seat, letter, letter_points, need, bottom_points, num_bottoms, work)
        board[TOTALS + seat] += scores[seat]
        board[ROUND_SCORES + row * NUM_SLOTS + seat] = scores[seat]
        at = HANDS + seat * SLOT_CAP
        shown = SHOWN + seat * HAND_SIZE
        for i in range(HAND_SIZE):  # sorted(hand), by insertion
            card = board[at + i]
            j = i - 1
            while j >= 0 and board[shown + j] > card:
                board[shown + j + 1] = board[shown + j]
                j -= 1
            board[shown + j + 1] = card
    for p in range(NUM_SLOTS):
        board[SHOWN_DISPLAY + p] = board[DISPLAY + p]
    board[SCORED] = row + 1
    best = board[TOTALS]
    for seat in range(1, n):
        best = max(best, board[TOTALS + seat])
    over = board[ROUND] >= NUM_ROUNDS or best >= END_SCORE
    if not win:
        for seat in range(n):
            rewards[seat] = scores[seat]
    elif over:  # rules.winners, then engine.win_rewards
        best_last = -(1 << 40)
        for seat in range(n):
            if board[TOTALS + seat] == best:
                best_last = max(best_last, scores[seat])
        count = 0
        for seat in range(n):
            if board[TOTALS + seat] == best and scores[seat] == best_last:
                count += 1
        for seat in range(n):
            won = board[TOTALS + seat] == best and scores[seat] == best_last
            rewards[seat] = 1.0 / count if won else -1.0
    if not over:
        board[ROUND] += 1
        deal(board, n, gen, work)
    return over


@register_jitable(inline="always")
def take(board, e, card):
    """The first half of ``LlamaParty.act(card)`` for env ``e`` (a legal card): the card leaves the hand of the seat
    to act and becomes its goal or one of its picks. Returns whether the seat has made all its picks of the step.
    Inlined where it is called (see :func:`observe`)."""
    seat = board[e, TO_ACT]
    at = HANDS + seat * SLOT_CAP
    length = board[e, HAND_LEN + seat]
    k = 0
    while k < length and board[e, at + k] != card:  # bounded: a trusted caller's illegal card stays in this row
        k += 1
    if k < length:
        for i in range(k, length - 1):
            board[e, at + i] = board[e, at + i + 1]
        board[e, HAND_LEN + seat] = length - 1
    step = board[e, STEP]
    if step == 0:
        board[e, GOAL + seat] = card
        return True
    picks = board[e, STAGED_LEN + seat]
    board[e, STAGED + seat * NUM_SLOTS + picks] = card
    board[e, STAGED_LEN + seat] = picks + 1
    return picks + 1 == _PASS_COUNTS[step - 1]


@register_jitable
def advance(board, n, win, deck, gen, work, rewards):
    """The second half of ``LlamaParty.act`` once the last seat has made its picks of the step: the goals placed,
    or the pass resolved (and the round scored: ``rewards`` gets the step's); True when the game is over."""
    board[TO_ACT] = 0
    step = board[STEP]
    if step == 0:
        _place_goals(board, n, gen, work)
    else:
        _resolve_pass(board, n, gen, work)
        if step == len(_PASS_COUNTS):
            return _end_round(board, n, win, deck, gen, work, rewards)
    board[STEP] = step + 1
    return False


@register_jitable(inline="always")
def observe(board, e, n, letter, obs, mask, work):
    """``Encoder.fill`` for env ``e``'s seat to act into ``obs[e]`` and ``Encoder.fill_mask`` into ``mask[e]``.
    Inlined where it is called, on whole arrays and an index: a call passing array views costs reference counting
    (atomic) for every argument, several times this function's own work."""
    seat = board[e, TO_ACT]
    for i in range(obs.shape[1]):
        obs[e, i] = 0.0
    for i in range(mask.shape[1]):
        mask[e, i] = 0
    for letter_index in range(NUM_LETTERS):
        work[W_COUNTS + letter_index] = 0
    at = HANDS + seat * SLOT_CAP
    for k in range(board[e, HAND_LEN + seat]):
        card = board[e, at + k]
        obs[e, _OBS_HAND + card] = 1.0
        mask[e, card] = 1
        work[W_COUNTS + letter[card]] += 1
    for letter_index in range(NUM_LETTERS):
        count = work[W_COUNTS + letter_index]
        if count:
            obs[e, _OBS_LETTERS + letter_index] = count / DEAL_SIZE
    staged = board[e, STAGED_LEN + seat]
    for k in range(staged):
        obs[e, _OBS_STAGED + board[e, STAGED + seat * NUM_SLOTS + k]] = 1.0
    goal = board[e, GOAL + seat]
    if goal >= 0:
        obs[e, _OBS_GOAL + goal] = 1.0
    step = board[e, STEP]
    for p in range(step):
        obs[e, _OBS_REVEALED + p * DECK_SIZE + board[e, DISPLAY + p]] = 1.0
    for k in range(board[e, MOVED]):
        obs[e, _OBS_PASSED + board[e, PASSED + seat * MOVED_CAP + k]] = 1.0
        obs[e, _OBS_RECEIVED + board[e, RECEIVED + seat * MOVED_CAP + k]] = 1.0
    obs[e, _OBS_STEP + step] = 1.0
    picks_left = 1 if step == 0 else _PASS_COUNTS[step - 1] - staged
    obs[e, _OBS_PICKS] = picks_left / 4.0
    # the table block (Encoder._table_block)
    obs[e, _OBS_ROUND + board[e, ROUND] - 1] = 1.0
    obs[e, _OBS_PLAYERS + n - 2] = 1.0
    where = 0
    for i in range(NUM_SLOTS):
        if board[e, RING + i] == seat:
            where = i
    for offset in range(1, NUM_SLOTS):
        slot = board[e, RING + (where + offset) % NUM_SLOTS]
        column = (slot - seat) % n if slot < n else 0
        obs[e, _OBS_RING + (offset - 1) * 4 + column] = 1.0
    for other in range(n):
        relative = (other - seat) % n
        obs[e, _OBS_TOTALS + relative] = board[e, TOTALS + other] / SCORE_SCALE
        for row in range(board[e, SCORED]):
            obs[e, _OBS_SCORES + row * 4 + relative] = board[e, ROUND_SCORES + row * NUM_SLOTS + other] / SCORE_SCALE
        if board[e, SCORED]:
            base = _OBS_SHOWN + relative * DECK_SIZE
            for k in range(HAND_SIZE):
                obs[e, base + board[e, SHOWN + other * HAND_SIZE + k]] = 1.0


# ---------------------------------------------------------------------------------------------- the batch kernels


def reset_kernel(board, money, n, letter, rng, obs, mask):
    """Start a new game in every env (generators freshly seeded) and write its first observation and mask."""
    work = np.empty(WORK_SIZE, np.int64)
    for e in range(board.shape[0]):
        start(board[e], n, rng[e], work)
        money[e, :, :] = 0.0
        observe(board, e, n, letter, obs, mask, work)


def step_kernel(board, money, n, win, deck, rng, actions, obs, mask, rewards, terminated, ended):
    """Play ``actions[e]`` (legal) in every env: rewards, PettingZoo's reward bookkeeping, an ended game replaced
    by the next one from the env's stream (its result kept first in ``ended[e]``: every seat's total reward, final
    total and last round's score), and the new observation and mask. The common step (a pick that does not
    end the step) touches only whole arrays by index; the rest, once every few steps, goes through ``advance``."""
    work = np.empty(WORK_SIZE, np.int64)
    step_rewards = np.zeros(NUM_SLOTS, np.float64)
    letter = deck[0]
    for e in range(board.shape[0]):
        seat = board[e, TO_ACT]
        for s in range(n):
            rewards[e, s] = 0.0
        over = advanced = False
        if take(board, e, actions[e]):
            if seat + 1 < n:
                board[e, TO_ACT] = seat + 1
            else:
                advanced = True
                step_rewards[:] = 0.0
                over = advance(board[e], n, win, deck, rng[e], work, step_rewards)
                for s in range(n):
                    rewards[e, s] = step_rewards[s]
        terminated[e] = over
        if over:  # the AEC env's reset() without a seed: the next game from the same generator
            last_row = ROUND_SCORES + (board[e, SCORED] - 1) * NUM_SLOTS
            for s in range(n):
                ended[e, ENDED_RETURNS, s] = money[e, RETURNS, s] + step_rewards[s]
                ended[e, ENDED_TOTALS, s] = board[e, TOTALS + s]
                ended[e, ENDED_LAST, s] = board[e, last_row + s]
            start(board[e], n, rng[e], work)
            for row in range(3):
                for s in range(n):
                    money[e, row, s] = 0.0
        else:  # AECBase._play: the mover's cumulative reward restarts, then every seat's step reward is added
            money[e, CUMULATIVE, seat] = 0.0
            for s in range(n):
                reward = step_rewards[s] if advanced else 0.0  # float64, as the AEC env's rewards dict holds them
                money[e, LAST, s] = reward
                money[e, CUMULATIVE, s] += reward
                money[e, RETURNS, s] += reward
        observe(board, e, n, letter, obs, mask, work)


def first_illegal(board, actions):
    """The first env whose action is not a card in the hand of its seat to act, or -1."""
    for e in range(board.shape[0]):
        row = board[e]
        at = HANDS + row[TO_ACT] * SLOT_CAP
        legal = False
        for k in range(row[HAND_LEN + row[TO_ACT]]):
            if row[at + k] == actions[e]:
                legal = True
        if not legal:
            return e
    return -1
