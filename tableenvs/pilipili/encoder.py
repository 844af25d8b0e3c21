"""Pili Pili action ids and observation vectors (the layer between the rules engine and the env).

Where you are: the Pili Pili package. The table below lists the action ids (one ``Discrete(234)`` space
for every kind of decision); :class:`Encoder` builds the exact action mask and a seat's observation vector
from a :class:`~tableenvs.pilipili.rules.PiliPiliGame`, and turns an action id back into a move. The
observation is seen from the observer's seat (relative seat 0 is the observer, 1 the next seat clockwise...)
and encodes only what that seat may know under the round's information rules (``docs/pilipili.md``).

Action ids (``k`` = offset clockwise from the actor, 1..n-1):

==========  =====  ================================================================================
ids         count  meaning
==========  =====  ================================================================================
0..28       29     bid ``b`` = id
29..83      55     play number card ``c`` = id - 28
84..140     57     play the wild declaring value ``v`` = id - 84 (also: declare a memorised wild's value)
141..196    56     pick card ``c`` = id - 141 (0 = wild) to pass, or to give in a swap
197..203    7      name the player ``k`` = id - 196 seats clockwise (designation, or swap partner)
204         1      decline the swap
205..232    28     play hand position ``p`` = id - 205 (memorise mission)
233         1      ready: look at your hand (timed look / memorise)
==========  =====  ================================================================================

The last section summarises the last scored round (bids, tricks won, chilis taken and discarded, the cards of its
last trick): the next round is dealt in the same step, so without it nobody would see how a round ended.

Observation layout: :attr:`Encoder.observation_layout` (a :class:`tableenvs.core.layout.Layout`, its sizes depending on
the player count) names every section; the table in ``docs/pilipili.md`` is checked against it. Values are 0/1
flags except the counts and card values noted there.
"""

from __future__ import annotations

import numpy as np

from tableenvs.core import layout
from tableenvs.core.layout import float_entries, int_entries
from tableenvs.pilipili import rules
from tableenvs.pilipili.missions import EFFECTS, MAX_HAND_SIZE, Mission
from tableenvs.pilipili.rules import MAX_WILD_VALUE, NUM_CARDS, NUM_PHASES, WILD, PiliPiliGame, card_name

MAX_PLAYERS = 8
MAX_BID = MAX_HAND_SIZE

BID = 0
PLAY = BID + MAX_BID + 1  # 29: number card c at PLAY + c - 1
PLAY_WILD = PLAY + 55  # 84: wild as value v at PLAY_WILD + v
PICK = PLAY_WILD + MAX_WILD_VALUE + 1  # 141: card c at PICK + c
NAME = PICK + NUM_CARDS  # 197: offset k at NAME + k - 1
DECLINE = NAME + MAX_PLAYERS - 1  # 204
POSITION = DECLINE + 1  # 205: position p at POSITION + p
READY = POSITION + MAX_HAND_SIZE  # 233
NUM_ACTIONS = READY + 1  # 234

# Per-seat block fields (relative seat order); a one-hot "names" block of n entries follows them.
SEAT_FIELDS = (
    "dealer",
    "leader",
    "to_act",
    "has_bid",
    "bid",
    "tricks_won",
    "chilis",
    "hand_count",
    "trick_played",
    "trick_card_visible",
    "trick_value",
    "trick_is_wild",
    "last_trick_value",
    "last_trick_is_wild",
    "won_last_trick",
    "in_swap",
    "last_round_chilis",
)
S_DEALER, S_LEADER, S_TO_ACT, S_HAS_BID, S_BID, S_WON, S_CHILIS, S_HAND = range(8)
S_TPLAYED, S_TVISIBLE, S_TVALUE, S_TWILD, S_LVALUE, S_LWILD, S_LWON, S_SWAP, S_LAST = range(8, 17)

# Per-seat fields of the previous-round summary (relative seat order), after one "available" flag.
PREVIOUS_FIELDS = (
    "bid",
    "tricks_won",
    "chilis_taken",
    "chilis_discarded",
    "last_trick_value",
    "last_trick_is_wild",
    "won_last_trick",
)
P_BID, P_WON, P_TAKEN, P_DISCARDED, P_LVALUE, P_LWILD, P_LWON = range(7)

ROUND_FIELDS = ("hand_size", "tricks_played", "total_tricks", "rounds_completed", "cards_left_to_pick")
MISSION_FLAGS = (
    "pass_left_count",
    "pass_right_count",
    "pass_hand_left",
    "pass_hand_right",
    "forehead",
    "blind",
    "extra_draw",
    "reveal_hands",
    "exact_bid_reward",
    "simultaneous_play",
    "reversed_values",
    "timed_look",
    "first_last_trick",
    "memorise",
    "no_copy_bid",
    "designate",
    "highest_or_lowest",
    "swap_after_trick",
    "listed_each",
    "expert",
    "bid_start_left_of_dealer",
    "bid_start_right_of_dealer",
    "bid_counterclockwise",
)


#: The mission entries that are not simply one effect's flag (the others read ``EFFECTS[name].flag``).
_DERIVED_MISSION_ENTRIES = {
    "pass_left_count": lambda m: m.pass_count if m.pass_direction == 1 else 0,
    "pass_right_count": lambda m: m.pass_count if m.pass_direction == -1 else 0,
    "pass_hand_left": lambda m: m.pass_all and m.pass_direction == 1,
    "pass_hand_right": lambda m: m.pass_all and m.pass_direction == -1,
    "extra_draw": lambda m: m.extra_draw,
    "listed_each": lambda m: m.listed_each,
    "expert": lambda m: m.expert,
    "bid_start_left_of_dealer": lambda m: m.bid_start == 1,
    "bid_start_right_of_dealer": lambda m: m.bid_start == -1,
    "bid_counterclockwise": lambda m: m.bid_direction == -1,
}


def mission_vector(mission: Mission) -> np.ndarray:
    """The mission section: effect flags/parameters (:data:`MISSION_FLAGS`), forbidden bids (29), listed numbers
    (56)."""
    m = mission
    flags = [
        _DERIVED_MISSION_ENTRIES[name](m) if name in _DERIVED_MISSION_ENTRIES else getattr(m, EFFECTS[name].flag)
        for name in MISSION_FLAGS
    ]
    vector = np.zeros(len(MISSION_FLAGS) + MAX_BID + 1 + NUM_CARDS, np.float32)
    vector[: len(flags)] = flags
    for bid in m.forbidden_bids:
        vector[len(MISSION_FLAGS) + bid] = 1
    for number in m.listed_numbers:
        vector[len(MISSION_FLAGS) + MAX_BID + 1 + number] = 1
    return vector


class Encoder:
    """Action ids and observations for ``num_players`` seats."""

    #: Raise when an observation entry changes meaning (saved models record it; tableenvs.core.layout.layout_version).
    LAYOUT_VERSION = 1
    #: The number of action ids (tableenvs.core.layout.Encoder).
    num_actions = NUM_ACTIONS

    def __init__(self, num_players: int):
        n = self.n = num_players
        self.seat_size = len(SEAT_FIELDS) + n
        self.observation_layout = layout.Layout(
            [
                ("phase", NUM_PHASES, "one-hot phase (all 0 once the game is over)"),
                ("sees_own_hand", 1, "1 if the own-hand section shows the hand now"),
                ("sees_other_hands", 1, "1 if the other-hands section shows the hands now"),
                ("own_hand", NUM_CARDS, "card id c at +c, when the player may see its hand"),
                ("own_staged", NUM_CARDS, "cards picked to pass or give, not yet moved"),
                ("cards_played_this_round", NUM_CARDS, "cards of this round's tricks the player has seen"),
                ("other_hands", (n - 1, NUM_CARDS), "by relative seat 1..n-1: that hand, when shown"),
                ("seats", (n, self.seat_size), "by relative seat: the per-seat block (SEAT_FIELDS, then names)"),
                ("round", len(ROUND_FIELDS), "ROUND_FIELDS: counts of the round"),
                ("mission", len(MISSION_FLAGS) + MAX_BID + 1 + NUM_CARDS, "MISSION_FLAGS, forbidden bids, listed"),
                ("positions_in_hand", MAX_HAND_SIZE, "memorise: 1 for each hand position not yet played"),
                ("previous_round", 1 + n * len(PREVIOUS_FIELDS), "the last scored round: 1 flag, then per seat"),
            ]
        )
        self.size = self.observation_layout.size
        self.offsets: dict[str, int] = self.observation_layout.offsets()
        o = self.offsets
        self.o_phase, self.o_hand, self.o_staged = o["phase"], o["own_hand"], o["own_staged"]
        self.o_played, self.o_others, self.o_seats = o["cards_played_this_round"], o["other_hands"], o["seats"]
        self.o_round, self.o_mission, self.o_positions = o["round"], o["mission"], o["positions_in_hand"]
        self.o_previous = o["previous_round"]
        self._mission_cache: dict[int, tuple[Mission, np.ndarray]] = {}
        # hot-path tables: relative <-> absolute seats, block starts, count entries of the seat blocks
        self._absolute = [[(seat + r) % n for r in range(n)] for seat in range(n)]  # [me][r]: seat at relative r
        self._relative = [[(s - seat) % n for s in range(n)] for seat in range(n)]  # [me][s]: relative seat of s
        self._seat_base = [self.o_seats + r * self.seat_size for r in range(n)]
        self._previous_base = [self.o_previous + 1 + r * len(PREVIOUS_FIELDS) for r in range(n)]
        # previous-round section per observing seat, built once per scored round (keyed on the summary object)
        self._previous_of: object = None
        self._previous_blocks: list[np.ndarray | None] = [None] * n

        # observation bounds
        self.low = np.zeros(self.size, np.float32)
        self.high = np.ones(self.size, np.float32)
        for r in range(n):
            base = self.o_seats + r * self.seat_size
            self.high[base + S_BID] = MAX_BID
            self.high[base + S_WON] = MAX_HAND_SIZE
            self.high[base + S_CHILIS] = np.inf
            self.high[base + S_HAND] = MAX_HAND_SIZE
            self.high[base + S_TVALUE] = MAX_WILD_VALUE
            self.high[base + S_LVALUE] = MAX_WILD_VALUE
            self.low[base + S_LAST] = -np.inf
            self.high[base + S_LAST] = np.inf
        for b in self._previous_base:
            self.high[b + P_BID] = MAX_BID
            self.high[b + P_WON] = MAX_HAND_SIZE
            self.high[b + P_TAKEN] = np.inf
            self.high[b + P_DISCARDED] = np.inf
            self.high[b + P_LVALUE] = MAX_WILD_VALUE
        self.high[self.o_round : self.o_round + 3] = MAX_HAND_SIZE
        self.high[self.o_round + 3] = np.inf
        self.high[self.o_round + 4] = MAX_HAND_SIZE
        self.high[self.o_mission : self.o_mission + 2] = MAX_HAND_SIZE
        self.high[self.o_mission + MISSION_FLAGS.index("extra_draw")] = MAX_HAND_SIZE

    def copy(self) -> Encoder:
        """An encoder for a cloned game: the tables and mission vectors shared, the previous-round cache empty."""
        new = object.__new__(Encoder)
        new.__dict__.update(self.__dict__)
        new._previous_of = None
        new._previous_blocks = [None] * self.n
        return new

    def layout(self) -> list[tuple[str, int, int]]:
        """``(section name, start index, size)`` of every observation section, in order (of
        :attr:`observation_layout`)."""
        return [(section.name, section.start, section.size) for section in self.observation_layout]

    # ------------------------------------------------------------------ mask

    def fill_mask(self, game: PiliPiliGame, mask: np.ndarray) -> None:
        """Set 1 at every legal action id of the player to act (``mask`` arrives zeroed, contiguous int8).

        Hot path: single entries are written through a ``memoryview`` (cheaper than numpy scalar writes).
        """
        phase = game.phase
        v = int_entries(mask)
        if phase == rules.PLAY:
            if game.mission.memorise:
                for p in game.legal_positions():
                    v[POSITION + p] = 1
                return
            for card in game.legal_play_cards():
                if card == WILD:
                    mask[PLAY_WILD : PLAY_WILD + MAX_WILD_VALUE + 1] = 1
                else:
                    v[PLAY - 1 + card] = 1
        elif phase == rules.BID:
            for bid in game.legal_bids():
                v[bid] = 1
        elif phase == rules.PASS:
            for card in game.legal_pass_picks():
                v[PICK + card] = 1
        elif phase == rules.SWAP_GIVE:
            for card in game.hands[game.to_act]:
                v[PICK + card] = 1
        elif phase == rules.SWAP_NAME:
            mask[NAME : NAME + self.n - 1] = 1
            v[DECLINE] = 1
        elif phase == rules.DESIGNATE:
            mask[NAME : NAME + self.n - 1] = 1
        elif phase == rules.DECLARE:
            mask[PLAY_WILD : PLAY_WILD + MAX_WILD_VALUE + 1] = 1
        elif phase == rules.LOOK:
            v[READY] = 1

    # ------------------------------------------------------------------ actions

    def apply(self, game: PiliPiliGame, action: int) -> None:
        """Apply a legal action id to ``game``."""
        if action < PLAY:
            game.bid(action)
        elif action < PLAY_WILD:
            game.play(action - PLAY + 1)
        elif action < PICK:
            if game.phase == rules.DECLARE:
                game.declare(action - PLAY_WILD)
            else:
                game.play(WILD, action - PLAY_WILD)
        elif action < NAME:
            game.pick(action - PICK)
        elif action < DECLINE:
            target = (game.to_act + action - NAME + 1) % self.n
            if game.phase == rules.DESIGNATE:
                game.designate(target)
            else:
                game.name_swap(target)
        elif action == DECLINE:
            game.name_swap(None)
        elif action < READY:
            game.play_position(action - POSITION)
        else:
            game.ready()

    def describe(self, game: PiliPiliGame, action: int) -> str:
        """Human text for an action id (as the player to act in ``game`` would take it)."""
        if not 0 <= action < NUM_ACTIONS:
            return f"action {action} (out of range)"
        if action < PLAY:
            return f"bid {action}"
        if action < PLAY_WILD:
            return f"play {action - PLAY + 1}"
        if action < PICK:
            verb = "declare the wild as" if game.phase == rules.DECLARE else "play the wild as"
            return f"{verb} {action - PLAY_WILD}"
        if action < NAME:
            verb = "give" if game.phase == rules.SWAP_GIVE else "pass"
            return f"{verb} {card_name(action - PICK)}"
        if action < DECLINE:
            target = (game.to_act + action - NAME + 1) % self.n
            verb = "designate" if game.phase == rules.DESIGNATE else "swap with"
            return f"{verb} player_{target}"
        if action == DECLINE:
            return "decline the swap"
        if action < READY:
            return f"play hand position {action - POSITION}"
        return "ready (look at the hand)"

    # ------------------------------------------------------------------ observation

    def _mission_section(self, mission: Mission) -> np.ndarray:
        cached = self._mission_cache.get(id(mission))
        if cached is None or cached[0] is not mission:
            cached = self._mission_cache[id(mission)] = (mission, mission_vector(mission))
        return cached[1]

    def fill_observation(self, game: PiliPiliGame, seat: int, out: np.ndarray) -> None:
        """Write ``seat``'s observation into the zeroed, contiguous float32 vector ``out``.

        Hot path: entries are written one by one through a ``memoryview`` (cheaper than numpy scalar
        writes or fancy indexing for the few dozen nonzero entries), plus one slice copy for the mission.
        """
        v = float_entries(out)
        n = self.n
        phase = game.phase
        rel = self._absolute[seat]  # absolute seat of each relative seat
        base = self._seat_base  # start of each relative seat's block
        to_rel = self._relative[seat]  # relative seat of each absolute seat
        m = game.mission
        hands = game.hands
        if phase != rules.GAME_OVER:
            v[self.o_phase + game.phase_seen_by(seat)] = 1.0  # the visibility rules: PiliPiliGame.seen_by
            v[base[to_rel[game.leader]] + S_LEADER] = 1.0
            v[base[to_rel[game.to_act]] + S_TO_ACT] = 1.0
        if game.sees_own_hand(seat):
            v[self.o_phase + NUM_PHASES] = 1.0
            o = self.o_hand
            for card in hands[seat]:
                v[o + card] = 1.0
            o = self.o_staged
            for card in game.staged[seat]:
                v[o + card] = 1.0
        if game.sees_other_hands():
            v[self.o_phase + NUM_PHASES + 1] = 1.0
            for r in range(1, n):
                o = self.o_others + (r - 1) * NUM_CARDS
                for card in hands[rel[r]]:
                    v[o + card] = 1.0
        played = self.o_played
        for card in game.played_cards:
            v[played + card] = 1.0
        v[base[to_rel[game.dealer]] + S_DEALER] = 1.0
        bids, won, chilis, last = game.bids, game.tricks_won, game.chilis, game.last_round_change
        for r in range(n):
            s = rel[r]
            b = base[r]
            if bids[s] >= 0:
                v[b + S_HAS_BID] = 1.0
                v[b + S_BID] = bids[s]
            v[b + S_WON] = won[s]
            v[b + S_CHILIS] = chilis[s]
            v[b + S_HAND] = len(hands[s])
            v[b + S_LAST] = last[s]
        if game.trick:
            face_down = game.trick_face_down
            for play_seat, card, value in game.trick:
                b = base[to_rel[play_seat]]
                v[b + S_TPLAYED] = 1.0
                if not face_down or play_seat == seat:
                    v[b + S_TVISIBLE] = 1.0
                    v[played + card] = 1.0
                    v[b + S_TVALUE] = value
                    if card == WILD:
                        v[b + S_TWILD] = 1.0
        if game.last_trick:
            for play_seat, card, value in game.last_trick:
                b = base[to_rel[play_seat]]
                v[b + S_LVALUE] = value
                if card == WILD:
                    v[b + S_LWILD] = 1.0
            v[base[to_rel[game.last_winner]] + S_LWON] = 1.0
        if m.designate:
            names = len(SEAT_FIELDS)
            for s, target in enumerate(game.designations):
                if target >= 0:
                    v[base[to_rel[s]] + names + to_rel[target]] = 1.0
        if phase == rules.SWAP_GIVE:
            v[base[to_rel[game.swap_winner]] + S_SWAP] = 1.0
            v[base[to_rel[game.swap_target]] + S_SWAP] = 1.0
        if m.memorise:
            o = self.o_positions
            for p, used in enumerate(game.position_used[seat]):
                if not used:
                    v[o + p] = 1.0
        o = self.o_round
        v[o] = game.hand_size
        v[o + 1] = game.tricks_played
        v[o + 2] = game.total_tricks
        v[o + 3] = game.rounds_completed
        if phase == rules.PASS and game.to_act == seat:
            v[o + 4] = game.pass_count() - len(game.staged[seat])
        vector = self._mission_section(m)
        out[self.o_mission : self.o_mission + vector.size] = vector
        summary = game.last_scored
        if summary is not None:  # the last scored round, all public: bids, tricks, chilis, its last trick
            if summary is not self._previous_of:
                self._previous_of = summary
                self._previous_blocks = [None] * n
            block = self._previous_blocks[seat]
            if block is None:
                block = self._previous_blocks[seat] = self._previous_section(summary, seat)
            out[self.o_previous : self.o_previous + block.size] = block

    def _previous_section(self, summary: rules.RoundSummary, seat: int) -> np.ndarray:
        """The ``previous_round`` section of ``seat``'s observation (see ``docs/pilipili.md``)."""
        n = self.n
        width = len(PREVIOUS_FIELDS)
        block = np.zeros(1 + n * width, np.float32)
        block[0] = 1.0
        to_rel = self._relative[seat]
        for s in range(n):
            b = 1 + to_rel[s] * width
            block[b + P_BID] = summary.bids[s]
            block[b + P_WON] = summary.tricks_won[s]
            block[b + P_TAKEN] = summary.taken[s]
            block[b + P_DISCARDED] = summary.discarded[s]
        for play_seat, card, value in summary.last_trick:
            b = 1 + to_rel[play_seat] * width
            block[b + P_LVALUE] = value
            block[b + P_LWILD] = card == WILD
        block[1 + to_rel[summary.last_winner] * width + P_LWON] = 1.0
        return block
