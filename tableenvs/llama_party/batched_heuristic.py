"""Llama Party's greedy heuristic for a whole batch at once: the same choice as ``agents.HeuristicPolicy`` for every
observation, in one compiled call (so opponent seats and rollouts need not leave the batched engine).

Where you are: beside the batched engine (``batched.py``). :class:`BatchedHeuristic` reads what the Python
policy reads (the observation's card sections and the step, and the mask) and computes its values in the same order
(float64, the same sums term by term), so it picks the same card; ``tests/test_vector_llama_party_heuristic.py``
checks it on thousands of positions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numba.extending import register_jitable

from tableenvs.llama_party.batched import deck_arrays
from tableenvs.llama_party.cards import DECK_SIZE, NUM_LETTERS, load_cards
from tableenvs.llama_party.encoder import LAYOUT, NUM_ACTIONS, OBSERVATION_SIZE
from tableenvs.llama_party.rules import NUM_SLOTS
from tableenvs.vector.compile import kernels_once

_HAND, _STAGED, _GOAL, _REVEALED = LAYOUT.HAND, LAYOUT.STAGED, LAYOUT.OWN_GOAL, LAYOUT.REVEALED
_PASSED, _RECEIVED, _STEP = LAYOUT.PASSED, LAYOUT.RECEIVED, LAYOUT.STEP


@register_jitable
def row_values(
    row,
    mask_row,
    letter,
    letter_points,
    need,
    combo_points,
    num_bottoms,
    pair_goal,
    pair_combo,
    pair_count,
    scratch,
    values,
):
    """``values[card]`` for every legal card of ``mask_row``: ``HeuristicPolicy.values`` of the observation ``row``
    (float64, the same sums term by term); the other entries are left as they were. ``scratch``: the work arrays of
    :func:`_scratch`."""
    seen, known, weights, counts, linear, base_copies, without, done, by_letter = scratch
    goal_step = row[_STEP] == 1.0
    seen[:] = False
    known[:] = False
    for card in range(DECK_SIZE):
        if row[_HAND + card] != 0 or row[_STAGED + card] != 0 or row[_PASSED + card] != 0:
            seen[card] = True
        if row[_RECEIVED + card] != 0:
            seen[card] = True
        if row[_GOAL + card] != 0:
            seen[card] = True
            known[card] = True
        for p in range(NUM_SLOTS):
            if row[_REVEALED + p * DECK_SIZE + card] != 0:
                seen[card] = True
                known[card] = True
    unseen = 0
    known_count = 0
    for card in range(DECK_SIZE):
        if not seen[card]:
            unseen += 1
        if known[card]:
            known_count += 1
    unknown = NUM_SLOTS - 1 if goal_step else NUM_SLOTS - known_count
    share = unknown / unseen if unknown and unseen else 0.0
    for card in range(DECK_SIZE):
        weights[card] = 0.0 if seen[card] else share
        if known[card] and not goal_step:
            weights[card] = 1.0
    counts[:] = 0
    for card in range(DECK_SIZE):
        if row[_HAND + card] != 0:
            counts[letter[card]] += 1
    # GoalTable.points_without, exactly (integers) but cheaper: the points of the whole hand under every goal
    # once (linear part and copies of each combination), then per letter only what one card fewer changes
    for goal in range(DECK_SIZE):
        points = 0
        for k in range(NUM_LETTERS):
            points += letter_points[goal, k] * counts[k]
        for b in range(num_bottoms[goal]):
            copies = 99
            for k in range(NUM_LETTERS):
                if need[goal, b, k] > 0:
                    copies = min(copies, counts[k] // need[goal, b, k])
            base_copies[goal, b] = copies
            points += combo_points[goal, b] * copies
        linear[goal] = points  # the whole hand's points under this goal
    done[:] = False
    for card in range(mask_row.shape[0]):
        if not mask_row[card]:
            continue
        letter_index = letter[card]
        if not done[letter_index]:  # the hand less one card of this letter (none if it holds none), every goal
            fewer = 1 if counts[letter_index] > 0 else 0
            left = counts[letter_index] - fewer
            for goal in range(DECK_SIZE):
                without[letter_index, goal] = linear[goal] - letter_points[goal, letter_index] * fewer
            if fewer:  # a combination that needs this letter: copies min(before, left // need) (the others same)
                for p in range(pair_count[letter_index]):
                    goal = pair_goal[letter_index, p]
                    b = pair_combo[letter_index, p]
                    copies = min(base_copies[goal, b], left // need[goal, b, letter_index])
                    without[letter_index, goal] += combo_points[goal, b] * (copies - base_copies[goal, b])
            total = 0.0
            for goal in range(DECK_SIZE):
                total += without[letter_index, goal] * weights[goal]
            by_letter[letter_index] = total
            done[letter_index] = True
        value = by_letter[letter_index]
        if goal_step:
            value += without[letter_index, card]
        values[card] = value


@register_jitable
def choose(values, mask_row):
    """``HeuristicPolicy.choose``: the first legal card of the highest value (a later one must beat it by more than
    ``1e-9``), -1 when ``mask_row`` has no legal card."""
    best_card = -1
    best_value = -np.inf
    for card in range(mask_row.shape[0]):
        if not mask_row[card]:
            continue
        if best_card < 0:
            best_card = card
        if values[card] > best_value + 1e-9:
            best_card, best_value = card, values[card]
    return best_card


@register_jitable
def _scratch(num_combos):
    """The work arrays of :func:`row_values`, made once per kernel call."""
    return (
        np.zeros(DECK_SIZE, np.bool_),  # seen this round
        np.zeros(DECK_SIZE, np.bool_),  # the face-up goals and the own goal
        np.zeros(DECK_SIZE, np.float64),  # each goal's weight
        np.zeros(NUM_LETTERS, np.int64),  # the hand's cards by letter
        np.zeros(DECK_SIZE, np.int64),  # the hand's points under each goal
        np.zeros((DECK_SIZE, num_combos), np.int64),  # copies of each combination the hand holds
        np.zeros((NUM_LETTERS, DECK_SIZE), np.int64),  # points under each goal less one card of a letter
        np.zeros(NUM_LETTERS, np.bool_),  # letters worked out
        np.zeros(NUM_LETTERS, np.float64),  # the value of the hand less one card of a letter
    )


def heuristic_kernel(
    obs, mask, letter, letter_points, need, combo_points, num_bottoms, pair_goal, pair_combo, pair_count, out
):
    """``out[e]``: ``HeuristicPolicy.act(obs[e], mask[e])`` for every row (``values`` then ``choose``: the first card
    of the highest value, within ``1e-9``). ``pair_goal[l, :pair_count[l]]``, ``pair_combo[l, ...]``: the (goal,
    combination) pairs that need letter ``l`` (:func:`letter_pairs`)."""
    scratch = _scratch(combo_points.shape[1])
    values = np.zeros(mask.shape[1], np.float64)
    for e in range(obs.shape[0]):
        row_values(obs[e], mask[e], letter, letter_points, need, combo_points, num_bottoms, pair_goal, pair_combo,
                   pair_count, scratch, values)  # fmt: skip
        out[e] = choose(values, mask[e])


def card_values_kernel(
    obs, mask, letter, letter_points, need, combo_points, num_bottoms, pair_goal, pair_combo, pair_count, choice, out
):
    """``out[e]``: ``features.CardValues(env, choice)(obs[e], mask[e])`` for every row: ``(value - best) / 10``
    clipped at -5 for each legal card (-5 for the others), then 1 at the heuristic's pick (with ``choice``)."""
    scratch = _scratch(combo_points.shape[1])
    values = np.zeros(mask.shape[1], np.float64)
    for e in range(obs.shape[0]):
        out[e, :DECK_SIZE] = -5.0
        out[e, DECK_SIZE:] = 0.0
        row_values(obs[e], mask[e], letter, letter_points, need, combo_points, num_bottoms, pair_goal, pair_combo,
                   pair_count, scratch, values)  # fmt: skip
        pick = choose(values, mask[e])
        if pick < 0:  # a final observation: no legal card
            continue
        best = -np.inf
        for card in range(mask.shape[1]):
            if mask[e, card]:
                best = max(best, values[card])
        for card in range(mask.shape[1]):
            if mask[e, card]:
                out[e, card] = max(-5.0, (values[card] - best) / 10.0)
        if choice:
            out[e, DECK_SIZE + pick] = 1.0


def letter_pairs(need: np.ndarray, num_bottoms: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(pair_goal, pair_combo, pair_count)``: per letter, the (goal card, combination) pairs whose combination needs
    that letter, padded (what one card fewer of a letter can change)."""
    pairs: list[list[tuple[int, int]]] = [[] for _ in range(NUM_LETTERS)]
    for goal in range(need.shape[0]):
        for b in range(int(num_bottoms[goal])):
            for k in range(NUM_LETTERS):
                if need[goal, b, k] > 0:
                    pairs[k].append((goal, b))
    width = max(1, max(len(found) for found in pairs))
    pair_goal = np.zeros((NUM_LETTERS, width), np.int64)
    pair_combo = np.zeros((NUM_LETTERS, width), np.int64)
    for k, found in enumerate(pairs):
        for p, (goal, b) in enumerate(found):
            pair_goal[k, p], pair_combo[k, p] = goal, b
    return pair_goal, pair_combo, np.array([len(found) for found in pairs], np.int64)


class BatchedHeuristic:
    """``HeuristicPolicy``'s choice for a batch of Llama Party observations and masks (any deck)."""

    def __init__(self, deck: str | Path | list[dict[str, Any]] | None = None, deck_tables: Any = None):
        self._kernel, self._card_values = kernels_once(
            (heuristic_kernel, card_values_kernel), "the Llama Party batched heuristic", __file__, "about 8 s"
        )
        self._deck = deck_arrays(load_cards(deck)) if deck_tables is None else deck_tables
        self._pairs = letter_pairs(self._deck[2], self._deck[4])

    def act(self, obs: np.ndarray, mask: np.ndarray, envs: np.ndarray | None = None) -> np.ndarray:
        """The card (action) each row's seat picks: int64 ``(rows,)``. Every row needs a legal action. ``envs``
        (the rows' env indices, :class:`tableenvs.vector.BatchedPolicy`) is not needed: the observation says all."""
        obs = np.ascontiguousarray(obs, np.float32)
        mask = np.ascontiguousarray(mask, np.int8)
        if obs.ndim != 2 or obs.shape[1] != OBSERVATION_SIZE or mask.shape != (obs.shape[0], NUM_ACTIONS):
            raise ValueError(
                f"obs must be (rows, {OBSERVATION_SIZE}) and mask (rows, {NUM_ACTIONS}); "
                f"got {obs.shape} and {mask.shape}"
            )
        empty = np.flatnonzero(~mask.any(axis=1))
        if empty.size:
            raise ValueError(f"row {int(empty[0])} of the mask has no legal action")
        out = np.empty(obs.shape[0], np.int64)
        self._kernel(obs, mask, *self._deck, *self._pairs, out)
        return out

    def card_values(self, obs: np.ndarray, mask: np.ndarray, choice: bool = True) -> np.ndarray:
        """float32 ``(rows, 2 * DECK_SIZE)``: ``features.CardValues(env, choice)`` of every row (the heuristic's
        values of the legal cards and its pick, the derived inputs of models that name
        ``llama_party_card_values_v1``), in one compiled call. A row without a legal card gets the defaults."""
        obs = np.ascontiguousarray(obs, np.float32)
        mask = np.ascontiguousarray(mask, np.int8)
        if obs.ndim != 2 or obs.shape[1] != OBSERVATION_SIZE or mask.shape != (obs.shape[0], NUM_ACTIONS):
            raise ValueError(
                f"obs must be (rows, {OBSERVATION_SIZE}) and mask (rows, {NUM_ACTIONS}); "
                f"got {obs.shape} and {mask.shape}"
            )
        out = np.empty((obs.shape[0], 2 * DECK_SIZE), np.float32)
        self._card_values(obs, mask, *self._deck, *self._pairs, bool(choice), out)
        return out


def batched_heuristic(games: Any) -> BatchedHeuristic:
    """The factory ``GameSpec.batched_heuristic`` names: the heuristic for the deck ``games`` (a Llama Party batched
    engine) plays with."""
    return BatchedHeuristic(deck_tables=deck_arrays(games.deck))
