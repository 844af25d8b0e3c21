"""Llama Party encoder: action ids and the observation vector of one seat.

Where you are: the encoding layer of ``tableenvs/llama_party``, between the rules engine (``rules.py``) and the
AEC adapter (``env.py``). The greedy agent (``agents.py``) decodes observations with the same :data:`LAYOUT`.

Actions: one ``Discrete(32)`` space; action ``c`` picks card ``c`` (its index in the deck) from the actor's hand,
as its goal in the goal step, or as one of the cards to pass in a pass step.

Observation (float32, seen from the observing seat; "relative seat" ``r`` is the player ``r`` places to the
left, 0 = self, padded to 4 seats): the sections of :data:`LAYOUT` (a :class:`tableenvs.core.layout.Layout`; the table
in ``docs/llama_party.md`` is its ``markdown_table()``, checked by the tests).

Hidden: other players' hands, picks and goals, the dummies' contents and goals, and the positions of
face-down goals (the own goal's position included): the seat sees what ``LlamaParty.seen_by`` says.
"""

from __future__ import annotations

import numpy as np

from tableenvs.core import layout
from tableenvs.core.layout import float_entries
from tableenvs.llama_party.cards import DECK_SIZE, NUM_LETTERS, Deck
from tableenvs.llama_party.rules import (  # MAX_START_TOTAL and max_round_score are also this module's names
    DEAL_SIZE,
    GOAL_STEP,
    MAX_START_TOTAL,
    NUM_ROUNDS,
    NUM_SLOTS,
    PASS_COUNTS,
    LlamaParty,
    max_round_score,
)

NUM_ACTIONS = DECK_SIZE
SCORE_SCALE = 100.0


#: The observation's sections in order: ``(name, size or shape, content)``.
LAYOUT = layout.Layout(
    [
        ("hand", DECK_SIZE, "1 for each card in the own hand (cards already picked in this step excluded)"),
        ("staged", DECK_SIZE, "1 for each card picked to pass in this step, not yet moved"),
        ("own_goal", DECK_SIZE, "1 at the own goal card once chosen"),
        (
            "revealed",
            (NUM_SLOTS, DECK_SIZE),
            "for display position p (block 96 + 32p): 1 at the revealed goal card; all 0 while face down",
        ),
        ("passed", DECK_SIZE, "1 for each card the player passed this round"),
        ("received", DECK_SIZE, "1 for each card the player received this round (from a player or drawn from a dummy)"),
        ("hand_letters", NUM_LETTERS, "own hand's count of each letter A..H, divided by 8"),
        ("step", 5, "one-hot: goal choice, pass 1, pass 2, pass 3, pass 4 (pass i follows reveal i)"),
        ("picks_left", 1, "picks the player still has to make in this step, / 4 (0 when not its turn)"),
        ("round", NUM_ROUNDS, "one-hot round number 1..4"),
        ("num_players", 3, "one-hot 2, 3, 4"),
        (
            "ring",
            (3, 4),
            "for the slots 1, 2, 3 places to the left in the passing ring: one-hot [dummy, relative seat 1, "
            "relative seat 2, relative seat 3]",
        ),
        ("totals", 4, "totals by relative seat, / 100"),
        (
            "round_scores",
            (NUM_ROUNDS, 4),
            "score of each finished round of this game (row) by relative seat (column), / 100",
        ),
        (
            "shown_hands",
            (NUM_SLOTS, DECK_SIZE),
            "for relative seat r (block 341 + 32r): 1 for each card that player showed at the last scoring "
            "(decision 16); all 0 before the first scoring",
        ),
    ]
)
OBSERVATION_SIZE = LAYOUT.size


def observation_bounds(deck: Deck) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` of every observation entry for ``deck``."""
    low = np.zeros(OBSERVATION_SIZE, np.float32)
    high = np.ones(OBSERVATION_SIZE, np.float32)
    round_bound = max_round_score(deck) / SCORE_SCALE
    total_bound = (MAX_START_TOTAL + NUM_ROUNDS * max_round_score(deck)) / SCORE_SCALE
    low[LAYOUT.TOTALS : LAYOUT.TOTALS + 4] = -total_bound
    high[LAYOUT.TOTALS : LAYOUT.TOTALS + 4] = total_bound
    low[LAYOUT.ROUND_SCORES : LAYOUT.SHOWN_HANDS] = -round_bound
    high[LAYOUT.ROUND_SCORES : LAYOUT.SHOWN_HANDS] = round_bound
    return low, high


class Encoder:
    """Writes observations of a :class:`LlamaParty` game; one per env.

    Hot path (profiled): item writes through a memoryview for the few set entries (faster here than numpy
    scalar writes or fancy indexing from lists);
    the table block (round, player count, ring, totals, round scores, shown hands), which changes only when a round
    is dealt or scored, is cached per seat under ``game.version`` and copied in as one slice.
    """

    #: Raise when an observation entry changes meaning (saved models record it; tableenvs.core.layout.layout_version).
    LAYOUT_VERSION = 1

    #: The number of action ids (tableenvs.core.layout.Encoder).
    num_actions = NUM_ACTIONS

    def __init__(self, deck: Deck, num_players: int):
        self.deck = deck
        self.num_players = num_players
        self.size = OBSERVATION_SIZE
        self.low, self.high = observation_bounds(deck)
        self.observation_layout = LAYOUT
        self._card_text = [str(card) for card in deck]  # describing every action is on the hot path
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
        view = float_entries(out)  # item writes through a memoryview are cheaper than numpy scalar writes
        # The parts of LlamaParty.seen_by(seat), read one by one (no tuple per observation): its own slot's cards
        # (hand, picks, goal, passed, received) and the face-up goals.
        hand = game.hands[seat]
        letters = self.letters
        counts = [0] * NUM_LETTERS
        for card in hand:
            view[card] = 1.0
            counts[letters[card]] += 1
        for letter, count in enumerate(counts):
            if count:
                view[LAYOUT.HAND_LETTERS + letter] = count / DEAL_SIZE
        for card in game.staged[seat]:
            view[LAYOUT.STAGED + card] = 1.0
        goal = game.goal_of_slot[seat]
        if goal >= 0:
            view[LAYOUT.OWN_GOAL + goal] = 1.0
        step = game.step
        display = game.display
        for position in range(step):  # the face-up goals, game.revealed, without the slice
            view[LAYOUT.REVEALED + position * DECK_SIZE + display[position]] = 1.0
        for card in game.passed[seat]:
            view[LAYOUT.PASSED + card] = 1.0
        for card in game.received[seat]:
            view[LAYOUT.RECEIVED + card] = 1.0
        view[LAYOUT.STEP + step] = 1.0
        if game.to_act == seat and not game.over:
            view[LAYOUT.PICKS_LEFT] = game.picks_left / 4.0
        if game.version != self._table_version:
            self._table_version = game.version
            self._table_blocks = [None] * self.num_players
        block = self._table_blocks[seat]
        if block is None:
            block = self._table_blocks[seat] = self._table_block(game, seat)
        # numpy's stubs give ndarray the buffer protocol only from Python 3.12 on (the write is a plain buffer copy)
        view[LAYOUT.ROUND :] = block  # type: ignore[call-overload]

    fill_observation = fill  # the name the Encoder protocol (tableenvs.core.layout) gives it

    def _table_block(self, game: LlamaParty, seat: int) -> np.ndarray:
        """The ``round`` .. ``shown_hands`` blocks of ``seat``'s observation."""
        n = self.num_players
        full = np.zeros(OBSERVATION_SIZE, np.float32)
        full[LAYOUT.ROUND + game.round_number - 1] = 1.0
        full[LAYOUT.NUM_PLAYERS + n - 2] = 1.0
        ring = game.ring
        where = ring.index(seat)
        relative = self._relative[seat]
        for offset in range(1, NUM_SLOTS):
            slot = ring[(where + offset) % NUM_SLOTS]
            column = relative[slot] if slot < n else 0
            full[LAYOUT.RING + (offset - 1) * 4 + column] = 1.0
        for other in range(n):
            full[LAYOUT.TOTALS + relative[other]] = game.totals[other] / SCORE_SCALE
        for row, scores in enumerate(game.round_scores):
            for other in range(n):
                full[LAYOUT.ROUND_SCORES + row * 4 + relative[other]] = scores[other] / SCORE_SCALE
        for other, cards in enumerate(game.shown_hands):
            base = LAYOUT.SHOWN_HANDS + relative[other] * DECK_SIZE
            for card in cards:
                full[base + card] = 1.0
        return full[LAYOUT.ROUND :]

    @staticmethod
    def fill_mask(game: LlamaParty, mask: np.ndarray) -> None:
        """1 for every card in the hand of the player to act (nothing once the game is over)."""
        if not game.over:
            mask[game.hands[game.to_act]] = 1

    @staticmethod
    def apply(game: LlamaParty, action: int) -> list[int] | None:
        """Pick card ``action`` (goal or card to pass); the round scores if the pick ended a round."""
        return game.act(action)

    def describe(self, game: LlamaParty, action: int) -> str:
        """``"choose goal <card>"``, ``"pass <card> (2 of 3)"`` (``"pick <card>"`` once the game is over)."""
        card = self._card_text[action] if 0 <= action < DECK_SIZE else describe_card(self.deck, action)
        if game.over:
            return f"pick {card}"
        if game.step == GOAL_STEP:
            return f"choose goal {card}"
        count = PASS_COUNTS[game.step - 1]
        return f"pass {card} ({count - game.picks_left + 1} of {count})"


def describe_card(deck: Deck, card: int) -> str:
    """E.g. ``"D1(D: +3/D, DDD +13)"`` (standard deck); ``"card 40 (no such card)"`` out of range."""
    if 0 <= card < len(deck):
        return str(deck[card])
    return f"card {card} (no such card)"
