"""What is on a Pili Pili table and what it allows: the state, the deal, visibility and legal moves (no RL concepts).

Where you are: the Pili Pili package, under the rules engine. :class:`PiliPiliTable` holds a whole game (the
chilis, the round's mission, hands, bids and trick) and answers questions about it: who acts, what each seat may
see (``seen_by`` and its four rules), which moves are legal (``legal_bids``, ``legal_play_cards``...); it deals a
round (``start_round``) and copies and writes itself as a state record. :class:`~tableenvs.pilipili.rules.PiliPiliGame`
(``rules.py``) adds the moves and what they lead to (tricks, scoring, the next round); everything here is
importable from there too. The rules and every decision taken where the write-up is silent: ``docs/pilipili.md``.

Cards are integers: ``0`` is the wild card, ``1..55`` the number cards (id = face value). Seats are
``0..n-1`` clockwise; "left" is the next seat clockwise (+1), "right" the previous one (-1).
"""

from __future__ import annotations

import json
from enum import IntEnum
from typing import Any, NamedTuple, Self

import numpy as np

from tableenvs.core.engine import RulesError
from tableenvs.pilipili.missions import BASIC_MISSION, Mission

WILD = 0
NUM_CARDS = 56
MAX_WILD_VALUE = 56
CHILI_LIMIT = 6


class Phase(IntEnum):
    LOOK = 0
    BID = 1
    DESIGNATE = 2
    PASS = 3
    PLAY = 4
    DECLARE = 5
    SWAP_NAME = 6
    SWAP_GIVE = 7
    GAME_OVER = 8


NUM_PHASES = 8  # phases in which someone acts (GAME_OVER excluded)
# Module-level aliases of the members: hot paths use these (a ``Phase.X`` lookup costs ~0.4 us).
LOOK, BID, DESIGNATE, PASS, PLAY, DECLARE, SWAP_NAME, SWAP_GIVE, GAME_OVER = Phase


class RoundSummary(NamedTuple):
    """What every player saw of the last scored round (all of it was public when it happened).

    ``taken``: chilis each seat took (bid error, mission extras and designation) before the exact-bid
    discard; ``discarded``: chilis it then discarded; ``last_trick``: ``(seat, card, value)`` of the round's
    last trick, in play order (played face up, so public), won by ``last_winner``.
    """

    bids: list[int]
    tricks_won: list[int]
    taken: list[int]
    discarded: list[int]
    last_trick: list[tuple[int, int, int]]
    last_winner: int


def effective_hand_size(mission: Mission, num_players: int) -> int:
    """The mission's hand size, capped so every deal and extra draw fits in the 56 cards."""
    return min(mission.hand_size, NUM_CARDS // num_players - mission.extra_draw)


def card_name(card: int) -> str:
    return "W" if card == WILD else str(card)


class SeatView(NamedTuple):
    """What one seat may see now: Pili Pili's one visibility decision (:meth:`PiliPiliGame.seen_by`), read alike by
    the encoder (the observation), the text view, the picture and the world sampler (``docs/pilipili.md``). Each
    field is one rule of the engine: ``phase_seen_by``, ``sees_own_hand``, ``sees_other_hands``, ``trick_face_down``."""

    phase: Phase
    own_hand: bool
    other_hands: bool
    trick_face_down: bool


class PiliPiliTable:
    """A whole game of Pili Pili between moves: the state, the deal, and what it allows (the moves:
    :class:`~tableenvs.pilipili.rules.PiliPiliGame`).

    ``missions``: the mission deck (``None`` for the basic variant: 5 cards, no effects). ``rng`` is the only
    source of randomness (shuffles and the first dealer). ``max_rounds`` (or ``None``) stops the game after
    that many rounds without a winner (``truncated`` is then set). ``log``, if a list, receives one line per
    outcome (round start, trick won, round scored, game over).
    """

    def __init__(
        self,
        num_players: int,
        missions: list[Mission] | None,
        rng: np.random.Generator,
        *,
        max_rounds: int | None = None,
        log: list[str] | None = None,
    ):
        self.n = num_players
        self.missions = missions
        self.rng = rng
        self.max_rounds = max_rounds
        self.log = log
        self.chilis = [0] * num_players
        self.rounds_completed = 0
        self.round_history: list[dict[str, Any]] = []
        self.truncated = False
        self.winners: list[int] = []
        self.round_scored = False  # set when a move ends a round; the caller clears it
        self.last_round_change = [0] * num_players
        # Public summary of the last scored round (None before the first): see :class:`RoundSummary`.
        self.last_scored: RoundSummary | None = None
        self._mission_pile: list[Mission] = []

    # ------------------------------------------------------------------ setup

    def start(
        self,
        *,
        dealer: int | None = None,
        chilis: list[int] | None = None,
        mission: Mission | None = None,
        hands: list[list[int]] | None = None,
        deck_order: list[int] | None = None,
    ) -> None:
        """Begin the game. Every argument scripts the first round (``None``: random as in the rules)."""
        n = self.n
        self.dealer = int(self.rng.integers(n)) if dealer is None else dealer
        if chilis is not None:
            self.chilis = list(chilis)
        self.start_round(mission=mission, hands=hands, deck_order=deck_order)

    def _draw_mission(self) -> Mission:
        if self.missions is None:
            return BASIC_MISSION
        if not self._mission_pile:
            order = self.rng.permutation(len(self.missions))
            self._mission_pile = [self.missions[i] for i in order[::-1]]
        return self._mission_pile.pop()

    def start_round(
        self,
        *,
        mission: Mission | None = None,
        hands: list[list[int]] | None = None,
        deck_order: list[int] | None = None,
    ) -> None:
        """Reveal a mission, deal, and open the first decision of the round."""
        n = self.n
        m = self.mission = self._draw_mission() if mission is None else mission
        h = self.hand_size = effective_hand_size(m, n)
        if hands is not None:
            dealt = [list(hand) for hand in hands]
            if len(dealt) != n or any(len(hand) != h for hand in dealt):
                raise RulesError(f"hands must be {n} lists of {h} cards each (mission {m.id}), got {hands!r}")
            used = [card for hand in dealt for card in hand]
            in_hands = set(used)
            rest = [card for card in (deck_order or range(NUM_CARDS)) if card not in in_hands]
            if deck_order is None:
                rest = [rest[i] for i in self.rng.permutation(len(rest))]
            order = used + rest
        elif deck_order is not None:
            order = list(deck_order)
        else:
            order = self.rng.permutation(NUM_CARDS).tolist()
        if sorted(order) != list(range(NUM_CARDS)):
            raise RulesError("the cards of a scripted deal must be 0..55 (0 = wild), each exactly once")
        self.hands = [order[s * h : (s + 1) * h] for s in range(n)]
        self.stock = order[n * h :]
        self.bids = [-1] * n
        self.bids_made = 0
        self.last_bid = -1
        self.tricks_won = [0] * n
        self.extras = [0] * n
        self.designations = [-1] * n
        self.staged: list[list[int]] = [[] for _ in range(n)]
        # Cards each seat handed over this round (passing, whole-hand passing, swaps), in order.
        self.given: list[list[int]] = [[] for _ in range(n)]
        self.position_cards: list[list[int]] = [[] for _ in range(n)]
        self.position_used: list[list[bool]] = [[] for _ in range(n)]
        self.revealed = False
        self.trick: list[tuple[int, int, int]] = []  # (seat, card, value) in play order
        self.last_trick: list[tuple[int, int, int]] = []
        self.last_winner = -1
        self.played_cards: list[int] = []  # cards of completed tricks this round
        self.round_tricks: list[tuple[list[tuple[int, int, int]], int]] = []  # (plays, winner) per trick
        self.tricks_played = 0
        self.total_tricks = h + m.extra_draw
        self.leader = self.dealer
        self.swap_winner = -1
        self.swap_target = -1
        self.acted = 0  # decisions taken in the current multi-player phase
        if self.log is not None:
            self.log.append(
                f"round {self.rounds_completed + 1}: dealer player_{self.dealer}, mission {m.id}"
                f"{' ' + repr(m.name) if m.name else ''} (hand {h}): {m.describe()}"
            )
        self.phase = LOOK if m.has_look else BID
        self.to_act = self.dealer if m.has_look else self.first_bidder()

    # ------------------------------------------------------------------ queries

    @property
    def over(self) -> bool:
        return self.phase == GAME_OVER

    def next_seat(self, seat: int) -> int:
        return (seat + 1) % self.n

    def first_bidder(self) -> int:
        """The dealer, unless the mission changes the bidding order (``bidding_order``)."""
        return (self.dealer + self.mission.bid_start) % self.n

    def seen_by(self, seat: int) -> SeatView:
        """What ``seat`` may see now; the observation encoder calls the four rules one by one (no tuple per step)."""
        own, others = self.sees_own_hand(seat), self.sees_other_hands()
        return SeatView(self.phase_seen_by(seat), own, others, self.trick_face_down)

    def phase_seen_by(self, seat: int) -> Phase:
        """The phase as ``seat`` knows it: a wild being declared is, to all but the declarer, still being played
        (under simultaneous play the others must not learn that it is the wild)."""
        phase = self.phase
        return PLAY if phase == DECLARE and seat != self.to_act else phase

    @property
    def trick_face_down(self) -> bool:
        """The others' cards in the current trick are face down to each seat (simultaneous play)."""
        return self.mission.simultaneous

    def sees_own_hand(self, seat: int) -> bool:
        """Whether ``seat`` may look at its own hand now (the forehead, blind, look and memorise rules)."""
        m = self.mission
        phase = self.phase
        if m.memorise:
            return phase == LOOK and self.to_act == seat
        if m.timed_look:
            return self.to_act == seat if phase == LOOK else phase != BID
        if m.forehead or m.blind:
            return phase != BID
        return True

    def sees_other_hands(self) -> bool:
        """Whether every player sees the others' hands now (forehead while bidding; revealed hands in play)."""
        if self.phase == BID:
            return self.mission.forehead
        return self.revealed

    def legal_bids(self) -> list[int]:
        """Bids open to the bidder; restrictions are lifted in order (hook, no-copy, forbidden) if none is legal."""
        m = self.mission
        h = self.hand_size
        hook = h - sum(b for b in self.bids if b >= 0) if self.bids_made == self.n - 1 else -1
        copy = self.last_bid if m.no_copy_bid and self.bids_made > 0 else -1
        forbidden = m.forbidden_bids
        if not forbidden:  # the common case: at most two excluded values
            legal = [b for b in range(h + 1) if b != hook and b != copy]
            if legal:
                return legal
        for use_hook, use_copy, use_forbidden in ((1, 1, 1), (0, 1, 1), (0, 0, 1), (0, 0, 0)):
            legal = [
                b
                for b in range(h + 1)
                if not (use_hook and b == hook)
                and not (use_copy and b == copy)
                and not (use_forbidden and b in forbidden)
            ]
            if legal:
                return legal
        raise AssertionError("unreachable: with no restriction every bid is legal")

    def legal_play_cards(self) -> list[int]:
        """Cards the player to act may play (hand by card, not memorise)."""
        hand = self.hands[self.to_act]
        if not self.mission.highest_or_lowest:
            return hand
        numbers = [card for card in hand if card != WILD]
        legal = [min(numbers), max(numbers)] if numbers else []
        if len(legal) == 2 and legal[0] == legal[1]:
            legal.pop()
        if len(numbers) != len(hand):
            legal.append(WILD)
        return legal

    def legal_positions(self) -> list[int]:
        used = self.position_used[self.to_act]
        return [p for p in range(len(used)) if not used[p]]

    def legal_pass_picks(self) -> list[int]:
        staged = self.staged[self.to_act]
        return [card for card in self.hands[self.to_act] if card not in staged]

    def pass_count(self) -> int:
        return min(self.mission.pass_count, self.hand_size)

    # ------------------------------------------------------------------ checks

    def card_count(self) -> int:
        """Cards in hands, stock, the current trick and completed tricks (always 56; staged cards stay in hands)."""
        return sum(map(len, self.hands)) + len(self.stock) + len(self.trick) + len(self.played_cards)

    # ------------------------------------------------------------------ copies and records (the state API)

    def copy(self, rng: np.random.Generator) -> Self:
        """An independent copy (of the same class) drawing from ``rng``. Every list the rules change in place is
        copied (the log too, when there is one); missions, the mission, the last scored round and finished tricks
        are shared (never changed)."""
        new = type(self).__new__(type(self))
        d = self.__dict__.copy()
        d["rng"] = rng
        d["log"] = None if self.log is None else self.log[:]
        for key in FLAT_LIST_FIELDS:
            d[key] = d[key][:]
        for key in NESTED_LIST_FIELDS:
            d[key] = [inner[:] for inner in d[key]]
        new.__dict__ = d
        return new

    def to_record(self) -> dict[str, Any]:
        """The game as plain JSON values (the options ``n``, ``missions``, ``max_rounds`` are the env's)."""
        index = {id(mission): i for i, mission in enumerate(self.missions or ())}
        record = {key: getattr(self, key) for key in SCALAR_FIELDS}
        record["phase"] = int(self.phase)
        record.update({key: list(getattr(self, key)) for key in FLAT_LIST_FIELDS if key != "_mission_pile"})
        record.update({key: [list(inner) for inner in getattr(self, key)] for key in NESTED_LIST_FIELDS})
        record["mission"] = mission_record(self.mission)
        record["mission_pile"] = [index[id(mission)] for mission in self._mission_pile]
        record["last_trick"] = [list(play) for play in self.last_trick]
        summary = self.last_scored
        record["last_scored"] = None if summary is None else summary._replace(last_trick=list(summary.last_trick))
        record["round_history"] = self.round_history
        return json.loads(json.dumps(record))


SCALAR_FIELDS = (
    *("dealer", "hand_size", "bids_made", "last_bid", "last_winner", "tricks_played", "total_tricks", "leader"),
    *("swap_winner", "swap_target", "acted", "to_act", "revealed", "rounds_completed", "truncated", "round_scored"),
)
FLAT_LIST_FIELDS = (
    *("chilis", "winners", "last_round_change", "bids", "tricks_won", "extras", "designations", "stock", "trick"),
    *("played_cards", "round_tricks", "round_history", "_mission_pile"),
)
NESTED_LIST_FIELDS = ("hands", "staged", "given", "position_cards", "position_used")


def mission_record(mission: Mission) -> dict[str, Any]:
    """A mission as the ``[[mission]]`` table it was read from (``load_missions`` reads it back)."""
    record = {
        "id": mission.id,
        "hand_size": mission.hand_size,
        "expert": mission.expert,
        "effects": list(mission.effects),
    }
    if mission.name:
        record["name"] = mission.name
    return record
