"""Llama Party encoder: action ids and the observation vector of one seat.

Where you are: the encoding layer of ``tableenvs/llama_party``, between the rules engine (``rules.py``) and the
AEC adapter (``env.py``). The greedy agent (``agents.py``) decodes observations with the same :data:`LAYOUT`.

Actions: one ``Discrete(32)`` space; action ``c`` picks card ``c`` (its index in the deck) from the actor's hand,
as its goal in the goal step, or as one of the cards to pass in a pass step.

Observation (float32, seen from the observing seat; "relative seat" ``r`` is the player ``r`` places to the
left, 0 = self, padded to 4 seats):

====================  ====  ==========================================================================
block                 size  content
====================  ====  ==========================================================================
``hand``              32    1 for each card in the own hand (cards already picked to pass excluded)
``staged``            32    1 for each card picked to pass in this step, not yet moved
``own_goal``          32    1 at the own goal card (after it is chosen)
``revealed``          4x32  for display position ``p``: 1 at the revealed goal card (all 0 while face down)
``passed``            32    1 for each card the player passed this round
``received``          32    1 for each card the player received this round
``hand_letters``      8     own hand's count of each letter A..H, / 8
``step``              5     one-hot: goal choice, pass 1 .. pass 4 (pass ``i`` follows reveal ``i``)
``picks_left``        1     picks the player still has to make in this step, / 4 (0 when not its turn)
``round``             4     one-hot round number 1..4
``num_players``       3     one-hot 2, 3, 4 players
``ring``              3x4   for the slots 1, 2, 3 places to the left in the passing ring: one-hot
                            [dummy, relative seat 1, relative seat 2, relative seat 3]
``totals``            4     totals by relative seat, / 100
``round_scores``      4x4   score of each finished round (row) by relative seat (column), / 100
``shown_hands``       4x32  by relative seat: 1 for each card that player showed at the last scoring (its
                            final 7 cards, public); kept until the next scoring, all 0 before the first
====================  ====  ==========================================================================

Hidden: other players' hands, picks and goals, the dummies' contents and goals, and the positions of
face-down goals (the own goal's position included).
"""

from __future__ import annotations

import numpy as np

from tableenvs.llama_party.cards import DECK_SIZE, NUM_LETTERS, Card, Deck
from tableenvs.llama_party.rules import DEAL_SIZE, HAND_SIZE, NUM_ROUNDS, NUM_SLOTS, LlamaParty

NUM_ACTIONS = DECK_SIZE
SCORE_SCALE = 100.0
MAX_START_TOTAL = 1000  # bound on |totals| given through reset(options={"totals": ...})


class Layout:
    """Offsets of the observation blocks (see the module docstring)."""

    HAND = 0
    STAGED = HAND + DECK_SIZE
    OWN_GOAL = STAGED + DECK_SIZE
    REVEALED = OWN_GOAL + DECK_SIZE
    PASSED = REVEALED + NUM_SLOTS * DECK_SIZE
    RECEIVED = PASSED + DECK_SIZE
    HAND_LETTERS = RECEIVED + DECK_SIZE
    STEP = HAND_LETTERS + NUM_LETTERS
    PICKS_LEFT = STEP + 5
    ROUND = PICKS_LEFT + 1
    NUM_PLAYERS = ROUND + NUM_ROUNDS
    RING = NUM_PLAYERS + 3
    TOTALS = RING + 3 * 4
    ROUND_SCORES = TOTALS + 4
    SHOWN_HANDS = ROUND_SCORES + NUM_ROUNDS * 4
    SIZE = SHOWN_HANDS + NUM_SLOTS * DECK_SIZE


LAYOUT = Layout
OBSERVATION_SIZE = Layout.SIZE


def max_round_score(deck: Deck) -> int:
    """An upper bound on |score| of a 7-card hand in one round (four goals, each at its most extreme)."""

    def extreme(card: Card) -> int:
        tops = sum(abs(points) for _, points in card.tops) * HAND_SIZE
        return tops + sum(abs(points) * (HAND_SIZE // sum(need)) for _, need, points in card.bottoms)

    return NUM_SLOTS * max(extreme(card) for card in deck)


def observation_bounds(deck: Deck) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` of every observation entry for ``deck``."""
    low = np.zeros(OBSERVATION_SIZE, np.float32)
    high = np.ones(OBSERVATION_SIZE, np.float32)
    round_bound = max_round_score(deck) / SCORE_SCALE
    total_bound = (MAX_START_TOTAL + NUM_ROUNDS * max_round_score(deck)) / SCORE_SCALE
    low[Layout.TOTALS : Layout.TOTALS + 4] = -total_bound
    high[Layout.TOTALS : Layout.TOTALS + 4] = total_bound
    low[Layout.ROUND_SCORES : Layout.SHOWN_HANDS] = -round_bound
    high[Layout.ROUND_SCORES : Layout.SHOWN_HANDS] = round_bound
    return low, high


class Encoder:
    """Writes observations of a :class:`LlamaParty` game; one per env.

    Hot path (profiled): item writes through a memoryview for the few set entries (faster here than numpy
    scalar writes or fancy indexing from lists);
    the table block (round, player count, ring, totals, round scores, shown hands), which changes only when a round
    is dealt or scored, is cached per seat under ``game.version`` and copied in as one slice.
    """

    def __init__(self, deck: Deck, num_players: int):
        self.deck = deck
        self.num_players = num_players
        self.letters = [card.letter for card in deck]
        # relative seat of seat s seen from seat me: (s - me) % n
        self._relative = [[(s - me) % num_players for s in range(num_players)] for me in range(num_players)]
        self._table_version = -1
        self._table_blocks: list[np.ndarray | None] = [None] * num_players

    def __getstate__(self) -> dict:
        # The table cache is keyed by a per-process version counter (see ``LlamaParty.touch``): never carry it
        # to another process (pickling) or copy; the next observation rebuilds it.
        state = dict(self.__dict__)
        state["_table_version"] = -1
        state["_table_blocks"] = [None] * self.num_players
        return state

    def fill(self, game: LlamaParty, seat: int, out: np.ndarray) -> None:
        """Write ``seat``'s observation into ``out``, a zeroed, contiguous float32 vector."""
        view = memoryview(out)  # item writes through a memoryview are cheaper than numpy scalar writes
        hand = game.hands[seat]
        letters = self.letters
        counts = [0] * NUM_LETTERS
        for card in hand:
            view[card] = 1.0
            counts[letters[card]] += 1
        for letter, count in enumerate(counts):
            if count:
                view[Layout.HAND_LETTERS + letter] = count / DEAL_SIZE
        for card in game.staged[seat]:
            view[Layout.STAGED + card] = 1.0
        goal = game.goal_of_slot[seat]
        if goal >= 0:
            view[Layout.OWN_GOAL + goal] = 1.0
        step = game.step
        display = game.display
        for position in range(step):
            view[Layout.REVEALED + position * DECK_SIZE + display[position]] = 1.0
        for card in game.passed[seat]:
            view[Layout.PASSED + card] = 1.0
        for card in game.received[seat]:
            view[Layout.RECEIVED + card] = 1.0
        view[Layout.STEP + step] = 1.0
        if game.to_act == seat and not game.over:
            view[Layout.PICKS_LEFT] = game.picks_left / 4.0
        if game.version != self._table_version:
            self._table_version = game.version
            self._table_blocks = [None] * self.num_players
        block = self._table_blocks[seat]
        if block is None:
            block = self._table_blocks[seat] = self._table_block(game, seat)
        view[Layout.ROUND :] = block

    def _table_block(self, game: LlamaParty, seat: int) -> np.ndarray:
        """The ``round`` .. ``shown_hands`` blocks of ``seat``'s observation."""
        n = self.num_players
        full = np.zeros(OBSERVATION_SIZE, np.float32)
        full[Layout.ROUND + game.round_number - 1] = 1.0
        full[Layout.NUM_PLAYERS + n - 2] = 1.0
        ring = game.ring
        where = ring.index(seat)
        relative = self._relative[seat]
        for offset in range(1, NUM_SLOTS):
            slot = ring[(where + offset) % NUM_SLOTS]
            column = relative[slot] if slot < n else 0
            full[Layout.RING + (offset - 1) * 4 + column] = 1.0
        for other in range(n):
            full[Layout.TOTALS + relative[other]] = game.totals[other] / SCORE_SCALE
        for row, scores in enumerate(game.round_scores):
            for other in range(n):
                full[Layout.ROUND_SCORES + row * 4 + relative[other]] = scores[other] / SCORE_SCALE
        for other, cards in enumerate(game.shown_hands):
            base = Layout.SHOWN_HANDS + relative[other] * DECK_SIZE
            for card in cards:
                full[base + card] = 1.0
        return full[Layout.ROUND :]


def describe_card(deck: Deck, card: int) -> str:
    """E.g. ``"D1(D: +3/D, DDD +13)"`` (standard deck); ``"card 40 (no such card)"`` out of range."""
    if 0 <= card < len(deck):
        return str(deck[card])
    return f"card {card} (no such card)"
