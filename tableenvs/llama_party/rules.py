"""Llama Party rules engine: state, legal moves, transitions and scoring, in plain Python.

Where you are: the rules layer of ``tableenvs/llama_party`` (no RL or numpy-space concepts here; the
encoder turns a state into vectors, ``env.py`` adapts it to PettingZoo). Cards are integers 0..31 (their
index in the deck, see ``cards.py``).

A round, in short (the full rules and every decision are in ``docs/llama_party.md``):

1. Four hands of 8 are dealt to four *hand slots*: slots ``0 .. n-1`` are the real players (by seat),
   slots ``n .. 3`` are dummy hands. Each dummy puts a random card of its hand aside as its goal.
2. Goal step (``step == 0``): every real player, in seat order, picks one of its 8 cards as its secret goal.
3. The four goals go face down on display positions 0..3 (round 1: random order; later rounds: real players by
   total, highest leftmost, ties in random order, dummy goals rightmost in random order).
4. Pass steps ``step == 1..4``: goal ``step - 1`` is revealed, then every real player, in seat order, picks
   ``PASS_COUNTS[step - 1]`` (4, 3, 2, 1) cards one at a time; nothing moves until all have picked. Then every
   player's picks go to the next slot of the passing ring (its left). Cards passed into a dummy are shuffled into
   it and the slot after the dummy draws as many cards from it at random.
5. After the fourth pass every real player shows its 7 cards (``shown_hands``), scored against the four goals;
   the game ends after round 4 or after a round in which a total reaches ``END_SCORE``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import numpy as np

from tableenvs.core.engine import RestorableEngine, RulesError, ViewedEngine
from tableenvs.llama_party.cards import NUM_LETTERS, Card, Deck

NUM_SLOTS = 4  # hands dealt every round = goals = display positions
DEAL_SIZE = 8
HAND_SIZE = 7  # after the goal is chosen and after every pass
PASS_COUNTS = (4, 3, 2, 1)  # cards passed after reveal 1, 2, 3, 4
GOAL_STEP = 0
NUM_ROUNDS = 4
END_SCORE = 100
MIN_PLAYERS, MAX_PLAYERS = 2, 4

_versions = itertools.count()  # unique across games, so caches keyed on a version never confuse two games


# ---------------------------------------------------------------------------------------------- scoring


def letter_counts(hand: Sequence[int], deck: Deck) -> list[int]:
    """How many cards of each letter A..H ``hand`` holds."""
    counts = [0] * NUM_LETTERS
    for card in hand:
        counts[deck[card].letter] += 1
    return counts


def combo_copies(need: Sequence[int], counts: Sequence[int]) -> int:
    """Complete copies of a combination (``need[l]`` cards of letter ``l`` per copy) that ``counts`` can form,
    each card used at most once across copies: DDFF holds 2 x DF, DFF holds 1 x DF."""
    copies = None
    for letter, needed in enumerate(need):
        if needed:
            available = counts[letter] // needed
            if copies is None or available < copies:
                copies = available
    return copies or 0


def goal_points(goal: Card, counts: Sequence[int]) -> int:
    """Points one goal card gives a hand with letter ``counts``: every top rule plus every bottom rule (each
    combination counted on its own: a hand holding AABB scores both AABB and AA when a card lists both)."""
    points = 0
    for letter, weight in enumerate(goal.letter_points):
        if weight:
            points += weight * counts[letter]
    for _, need, combo_points in goal.bottoms:
        points += combo_points * combo_copies(need, counts)
    return points


def hand_score(hand: Sequence[int], goals: Sequence[int], deck: Deck) -> int:
    """A hand's round score: every goal scored independently (a repeated goal scores again)."""
    counts = letter_counts(hand, deck)
    return sum(goal_points(deck[goal], counts) for goal in goals)


class Draws(Protocol):
    """What the engine draws from: a ``numpy.random.Generator``, or the recorded draws of a round being replayed
    (:class:`tableenvs.llama_party.worlds.ScriptedDraws`)."""

    def integers(self, high: int, /) -> Any: ...

    def permutation(self, n: int, /) -> np.ndarray: ...


# ---------------------------------------------------------------------------------------------- seating


def passing_ring(num_players: int, dummy_feeds: int | None = None) -> tuple[int, ...]:
    """Hand slots in passing order: ``ring[i]`` passes to ``ring[i + 1]`` (its left), the last to the first.

    2 players: P0 -> D0 -> P1 -> D1 (slots 0, 2, 1, 3). 3 players: seats 0 -> 1 -> 2 with the dummy (slot 3)
    right before ``dummy_feeds``, the seat that draws from it. 4 players: 0 -> 1 -> 2 -> 3.
    """
    if num_players == 4:
        return (0, 1, 2, 3)
    if num_players == 2:
        return (0, 2, 1, 3)
    if dummy_feeds is None or not 0 <= dummy_feeds < 3:
        raise ValueError(f"3 players need the seat the dummy feeds (0..2), got {dummy_feeds!r}")
    order = [(dummy_feeds + i) % 3 for i in range(3)]
    return (3, *order)


def place_goals(
    round_number: int,
    goal_of_slot: Sequence[int],
    num_players: int,
    totals: Sequence[int],
    rng: Draws,
) -> list[int]:
    """Goal cards by display position 0..3 (0 is revealed first).

    Round 1: random order. Later rounds: real players' goals by total, highest leftmost, equal totals in
    random order among themselves; dummy goals take the rightmost positions in random order.
    """
    if round_number == 1:
        return [goal_of_slot[int(slot)] for slot in rng.permutation(NUM_SLOTS)]
    seats = [int(seat) for seat in rng.permutation(num_players)]
    seats.sort(key=lambda seat: -totals[seat])  # stable: the shuffle decides among equal totals
    dummies = [num_players + int(d) for d in rng.permutation(NUM_SLOTS - num_players)]
    return [goal_of_slot[slot] for slot in seats + dummies]


def lowest_total_seat(totals: Sequence[int], rng: Draws) -> int:
    """The seat with the lowest total; ties broken uniformly at random.

    Always exactly one draw from ``rng``, tie or not, so later deals do not depend on how play went (duplicate
    deals in :mod:`tableenvs.evaluation` replay one seed under several seatings).
    """
    low = min(totals)
    tied = [seat for seat, total in enumerate(totals) if total == low]
    return tied[int(rng.integers(3 * 4 * 5 * 7)) % len(tied)]


def winners(totals: Sequence[int], last_round_scores: Sequence[int]) -> list[int]:
    """Seats that win: highest total; among equal totals the higher last-round score; still equal: all of them."""
    best = max(totals)
    tied = [seat for seat, total in enumerate(totals) if total == best]
    best_last = max(last_round_scores[seat] for seat in tied)
    return [seat for seat in tied if last_round_scores[seat] == best_last]


# ---------------------------------------------------------------------------------------------- the game


class SeatView(NamedTuple):
    """What one seat may see now of the round's cards: Llama Party's one visibility decision
    (:meth:`LlamaParty.seen_by`), read alike by the text view, the picture and the world sampler
    (``docs/llama_party.md``, "What a seat sees"). The parts are the engine's own lists (not copies): read them,
    don't change them. Everything else a seat sees is public (totals, round scores, the passing ring, the hands
    shown at the last scoring); of the other slots (players and dummies) it sees no card, pick or goal."""

    hand: list[int]  # its hand, its picks of this step excluded
    picks: list[int]  # the cards it picked to pass in this step, not yet moved
    goal: int  # its goal card, -1 until chosen
    passed: list[int]  # what it passed this round, in order
    received: list[int]  # what it received this round, in order
    revealed: list[int]  # the face-up goals, by display position (the rest of the display is face down)


class LlamaParty:
    """One game of Llama Party for ``num_players`` (2..4) real players.

    Drive it with :meth:`start`, then repeatedly :meth:`act` with a card from :meth:`legal_cards` for the seat
    :attr:`to_act`. Public state (read it, don't write it unless you are a test building a position):

    ``hands[slot]``       cards in a hand slot (real seats ``0..n-1``, dummies ``n..3``); a real player's picks
                          for the current pass are moved out of its hand into ``staged[seat]`` as it picks
    ``goal_of_slot``      each slot's goal card this round (``-1`` until chosen)
    ``display``           goal cards by display position, set once all goals are chosen
    ``step``              0 = goal choice, 1..4 = the pass after reveal ``step`` (goals ``display[:step]`` are face up)
    ``passed``/``received``  per seat, the cards it passed / received this round, in order
    ``totals``, ``round_scores`` (one list per finished round), ``round_number`` (1..4), ``over``, ``winners``
    ``shown_hands``       per seat, the 7 cards it showed at the last scoring (``[]`` before the first); public,
                          kept until the next scoring (the next round is dealt in the same step)
    ``shown_display``     the four goals of that scoring, by display position
    ``log``               outcome lines appended at reveals, passes and scoring (the env drains it)
    ``version``           changes whenever the table state (round, ring, totals, round scores) changes; the
                          encoder caches on it, so code that edits that state by hand must call :meth:`touch`
    """

    def __init__(self, deck: Deck, num_players: int):
        if not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
            raise ValueError(f"num_players must be in {MIN_PLAYERS}..{MAX_PLAYERS}, got {num_players}")
        self.deck = deck
        self.num_players = num_players
        self.log: list[str] = []

    # ------------------------------------------------------------------ setup

    def start(
        self,
        rng: Draws,
        *,
        hands: Sequence[Sequence[int]] | None = None,
        totals: Sequence[int] | None = None,
        first_round: int = 1,
        dummy_feeds: int | None = None,
    ) -> None:
        """Begin a game. ``hands`` (4 lists of 8 cards, by slot), ``totals``, ``first_round`` and ``dummy_feeds``
        (3 players: the seat the dummy feeds) script the first round; later rounds are dealt at random."""
        n = self.num_players
        self.rng = rng
        self.totals = [int(t) for t in totals] if totals is not None else [0] * n
        self.round_scores: list[list[int]] = []
        self.round_number = first_round
        self.over = False
        self.winners: list[int] = []
        self.shown_hands: list[list[int]] = []
        self.shown_display: list[int] = []
        self.log = []
        self._deal(hands, dummy_feeds)

    def _deal(self, hands: Sequence[Sequence[int]] | None = None, dummy_feeds: int | None = None) -> None:
        n = self.num_players
        rng = self.rng
        if hands is None:
            order = rng.permutation(len(self.deck)).tolist()
            hands = [order[i * DEAL_SIZE : (i + 1) * DEAL_SIZE] for i in range(NUM_SLOTS)]
        self.hands = [list(hand) for hand in hands]
        self.goal_of_slot = [-1] * NUM_SLOTS
        for slot in range(n, NUM_SLOTS):
            self.goal_of_slot[slot] = self.hands[slot].pop(int(rng.integers(DEAL_SIZE)))
        if n == 3:
            if dummy_feeds is None:
                if self.round_number == 1:
                    dummy_feeds = int(rng.integers(3))
                else:
                    dummy_feeds = lowest_total_seat(self.totals, rng)
            self.dummy_feeds: int | None = dummy_feeds  # the seat the dummy feeds (3 players only)
        else:
            self.dummy_feeds = None
        self.ring = passing_ring(n, self.dummy_feeds)
        self.left_of = [0] * NUM_SLOTS
        for i, slot in enumerate(self.ring):
            self.left_of[slot] = self.ring[(i + 1) % NUM_SLOTS]
        self.display: list[int] = []
        self.staged: list[list[int]] = [[] for _ in range(n)]
        self.passed: list[list[int]] = [[] for _ in range(n)]
        self.received: list[list[int]] = [[] for _ in range(n)]
        self.step = GOAL_STEP
        self.to_act = 0
        self.touch()
        if n < NUM_SLOTS:
            where = ", ".join(f"D{slot - n} feeds player_{self.left_of[slot]}" for slot in range(n, NUM_SLOTS))
            self.log.append(f"round {self.round_number}: dealt; {where}")
        else:
            self.log.append(f"round {self.round_number}: dealt")

    def touch(self) -> None:
        """Mark the table state (round, ring, totals, round scores) as changed."""
        self.version = next(_versions)

    def __setstate__(self, state: dict[str, Any]) -> None:
        # Versions come from a per-process counter: one made in another process (or earlier in this one) could
        # equal a version an encoder here has cached, so an unpickled (or copied) game takes a fresh one.
        self.__dict__.update(state)
        if "version" in state:
            self.touch()

    # ------------------------------------------------------------------ queries

    @property
    def picks_left(self) -> int:
        """Picks the seat to act still has to make in this step."""
        return 1 if self.step == GOAL_STEP else PASS_COUNTS[self.step - 1] - len(self.staged[self.to_act])

    def seen_by(self, seat: int) -> SeatView:
        """What ``seat`` may see now: its own hand slot's cards (hand, picks, goal, what it passed and received)
        and the face-up goals (:attr:`revealed`). The observation encoder reads the same parts one by one (no tuple
        per observation); ``tests/llama_party/test_llama_party_seat_view.py`` checks that they agree."""
        hand, picks, goal = self.hands[seat], self.staged[seat], self.goal_of_slot[seat]
        return SeatView(hand, picks, goal, self.passed[seat], self.received[seat], self.revealed)

    @property
    def revealed(self) -> list[int]:
        """Face-up goals, by display position: the first ``step`` (one more is turned before each pass)."""
        return self.display[: self.step]

    def legal_cards(self) -> list[int]:
        """Cards the seat to act may pick: any card still in its hand (none once the game is over)."""
        return [] if self.over else list(self.hands[self.to_act])

    def all_cards(self) -> list[int]:
        """Every card in play (hands, staged picks, goals): always the whole deck, each card once."""
        cards = [card for hand in self.hands for card in hand]
        cards += [card for picks in self.staged for card in picks]
        cards += [goal for goal in self.goal_of_slot if goal >= 0]
        return cards

    # ------------------------------------------------------------------ transitions

    def act(self, card: int) -> list[int] | None:
        """The seat to act picks ``card`` (its goal, or one card to pass). Returns the round scores by seat when
        this pick ends a round, else None. Raises :class:`~tableenvs.core.engine.RulesError` for a card not in the
        seat's hand."""
        if self.over:
            raise RulesError("the game is over")
        seat = self.to_act
        hand = self.hands[seat]
        if card not in hand:
            raise RulesError(f"player_{seat} cannot pick card {card}: its hand holds {sorted(hand)}")
        hand.remove(card)
        if self.step == GOAL_STEP:
            self.goal_of_slot[seat] = card
            done = True
        else:
            self.staged[seat].append(card)
            done = len(self.staged[seat]) == PASS_COUNTS[self.step - 1]
        if not done:
            return None
        if seat + 1 < self.num_players:
            self.to_act = seat + 1
            return None
        self.to_act = 0
        if self.step == GOAL_STEP:
            self.display = place_goals(self.round_number, self.goal_of_slot, self.num_players, self.totals, self.rng)
        else:
            self._resolve_pass()
            if self.step == len(PASS_COUNTS):
                return self.end_round()
        self.step += 1
        self.log.append(f"goal {self.step} revealed: {self.deck[self.display[self.step - 1]]}")
        return None

    def _resolve_pass(self) -> None:
        n = self.num_players
        count = PASS_COUNTS[self.step - 1]
        incoming: list[list[int]] = [[] for _ in range(n)]
        for seat in range(n):
            target = self.left_of[seat]
            if target < n:
                incoming[target] = self.staged[seat]
            else:
                self.hands[target].extend(self.staged[seat])
        for dummy in range(n, NUM_SLOTS):
            pool = self.hands[dummy]
            # a uniformly random subset of ``count`` positions (permutation: 3x faster than Generator.choice)
            drawn_at = sorted(self.rng.permutation(len(pool))[:count].tolist(), reverse=True)
            incoming[self.left_of[dummy]] = [pool.pop(i) for i in drawn_at]
        for seat in range(n):
            self.passed[seat].extend(self.staged[seat])
            self.received[seat].extend(incoming[seat])
            self.hands[seat].extend(incoming[seat])
            self.staged[seat] = []
        self.log.append(f"pass {self.step}: every player passed {count} card(s) to the left")

    def end_round(self) -> list[int]:
        """Score every real hand against the four goals, update totals, and end the game or deal the next round.

        Public so tests can score a position they built by hand (``hands`` and ``display`` set)."""
        scores = [hand_score(self.hands[seat], self.display, self.deck) for seat in range(self.num_players)]
        self.round_scores.append(scores)
        for seat, score in enumerate(scores):
            self.totals[seat] += score
        # every player shows its 7 cards face up (所有玩家将自己的7张手牌正面朝上公开): public from now on
        self.shown_hands = [sorted(self.hands[seat]) for seat in range(self.num_players)]
        self.shown_display = list(self.display)
        self.touch()
        for seat, score in enumerate(scores):
            letters = "".join(sorted(self.deck[card].letter_name for card in self.hands[seat]))
            self.log.append(f"player_{seat} shows {letters}: {score:+d}")
        self.log.append(
            f"round {self.round_number} scored: "
            + ", ".join(f"player_{s} {score:+d} (total {self.totals[s]})" for s, score in enumerate(scores))
        )
        if self.round_number >= NUM_ROUNDS or max(self.totals) >= END_SCORE:
            self.over = True
            self.winners = winners(self.totals, scores)
            self.log.append("game over; winner(s): " + ", ".join(f"player_{s}" for s in self.winners))
        else:
            self.round_number += 1
            self._deal()
        return scores

    # ------------------------------------------------------------------ copies and records (the state API)

    def copy(self, rng: np.random.Generator) -> LlamaParty:
        """An independent copy drawing from ``rng``: every list the rules change in place is copied; the deck,
        the ring and the shown hands are shared (never changed in place). The version is kept: an encoder that
        caches on it must start empty for the copy (``LlamaPartyEnv.clone`` gives the copy a fresh one)."""
        new = LlamaParty.__new__(LlamaParty)
        d = self.__dict__.copy()
        d["rng"] = rng
        for key in ("hands", "staged", "passed", "received"):
            d[key] = [inner[:] for inner in d[key]]
        for key in ("goal_of_slot", "totals", "round_scores", "display", "left_of", "winners", "log"):
            d[key] = d[key][:]
        new.__dict__ = d
        return new

    def to_record(self) -> dict[str, Any]:
        """The game as plain JSON values (the deck and player count are the env's options)."""
        keys = (
            *("hands", "goal_of_slot", "display", "step", "to_act", "staged", "passed", "received", "totals"),
            *("round_scores", "round_number", "over", "winners", "shown_hands", "shown_display", "dummy_feeds"),
        )
        return json.loads(json.dumps({key: getattr(self, key) for key in keys}))


MAX_START_TOTAL = 1000  # bound on |totals| given through reset(options={"totals": ...})


def max_round_score(deck: Deck) -> int:
    """An upper bound on |score| of a 7-card hand in one round (four goals, each at its most extreme)."""

    def extreme(card: Card) -> int:
        tops = sum(abs(points) for _, points in card.tops) * HAND_SIZE
        return tops + sum(abs(points) * (HAND_SIZE // sum(need)) for _, need, points in card.bottoms)

    return NUM_SLOTS * max(extreme(card) for card in deck)


_SCORE_BOUNDS: dict[int, tuple[Deck, int, int]] = {}


def score_bounds(deck: Deck) -> tuple[int, int]:
    """The encoder's bounds on one round's |score| with ``deck`` and on the |totals| a game may start with (the
    observation's bounds; cached per deck object)."""
    cached = _SCORE_BOUNDS.get(id(deck))
    if cached is None or cached[0] is not deck:
        cached = _SCORE_BOUNDS[id(deck)] = (deck, max_round_score(deck), MAX_START_TOTAL)
    return cached[1], cached[2]


if TYPE_CHECKING:  # the type checker holds the engine to the contract of tableenvs.core.engine
    _contract: type[RestorableEngine] = LlamaParty
    _views: type[ViewedEngine] = LlamaParty
