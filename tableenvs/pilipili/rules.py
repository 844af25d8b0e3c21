"""The Pili Pili rules engine: state, legal moves, transitions and scoring (no RL concepts).

Where you are: the Pili Pili package. This module is the game itself, like OpenSpiel's game/state split:
:class:`PiliPiliGame` holds a whole game (rounds until someone holds 6 chilis) and exposes its legal moves
(``legal_bids``, ``legal_play_cards``...) and the moves (``bid``, ``play``...). ``encoder.py`` turns it
into action ids and observation vectors, ``env.py`` into a PettingZoo env. The rules and every decision
taken where the write-up is silent are in ``docs/pilipili.md``.

Cards are integers: ``0`` is the wild card, ``1..55`` the number cards (id = face value). Seats are
``0..n-1`` clockwise; "left" is the next seat clockwise (+1), "right" the previous one (-1).

A round runs through these phases (``Phase``), some only under a mission effect:
``LOOK`` (timed look / memorise: each player takes one ``ready``) -> ``BID`` -> ``DESIGNATE`` ->
``PASS`` -> [whole-hand pass, extra draw, reveal: automatic] -> tricks of ``PLAY`` (``DECLARE`` after a
memorised wild, ``SWAP_NAME`` / ``SWAP_GIVE`` after a trick under the swap effect) -> scoring -> next
round or ``GAME_OVER``.
"""

from __future__ import annotations

import json
from enum import IntEnum
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from tableenvs.core import state
from tableenvs.core.engine import RestorableEngine, RulesError  # noqa: F401  (RulesError: also this module's name)
from tableenvs.decks import DeckError
from tableenvs.pilipili.missions import BASIC_MISSION, MAX_HAND_SIZE, Mission, load_missions

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
    the encoder (the observation), the text view, the picture and the world sampler (``docs/pilipili.md``)."""

    #: the phase as the seat knows it: a wild being declared (``DECLARE``) is, to all but the declarer, a card
    #: still being played (under simultaneous play the others must not learn that it is the wild)
    phase: Phase
    #: its own hand is open to it (the forehead, blind, timed look and memorise rules)
    own_hand: bool
    #: the others' hands are open to it (forehead while bidding, revealed hands in play)
    other_hands: bool
    #: the others' cards in the current trick are face down to it (simultaneous play)
    trick_face_down: bool


class PiliPiliGame:
    """A whole game of Pili Pili.

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
        """What ``seat`` may see now (:class:`SeatView`)."""
        phase = self.phase
        return SeatView(
            PLAY if phase == DECLARE and seat != self.to_act else phase,
            self.sees_own_hand(seat),
            self.sees_other_hands(),
            self.mission.simultaneous,
        )

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

    def strength(self, card: int, value: int) -> int:
        """Comparison key of a played card: higher wins; a wild tying a number card loses the tie."""
        v = MAX_WILD_VALUE - value if self.mission.reversed else value
        return 2 * v + (card != WILD)

    # ------------------------------------------------------------------ moves

    def _require(self, phase: Phase) -> None:
        if self.phase != phase:
            raise RulesError(f"not the {phase.name} phase (phase is {self.phase.name})")

    def ready(self) -> None:
        """LOOK phase: the player to act looks at its hand (its observation shows it during this decision)."""
        self._require(LOOK)
        seat = self.to_act
        if self.mission.memorise:
            self.position_cards[seat] = sorted(self.hands[seat])
            self.position_used[seat] = [False] * len(self.hands[seat])
        self.acted += 1
        self.to_act = self.next_seat(seat)
        if self.acted == self.n:
            self.acted = 0
            self.phase = BID
            self.to_act = self.first_bidder()

    def bid(self, bid: int) -> None:
        self._require(BID)
        if bid not in self.legal_bids():
            raise RulesError(f"bid {bid} is not legal; legal bids: {self.legal_bids()}")
        seat = self.to_act
        self.bids[seat] = bid
        self.last_bid = bid
        self.bids_made += 1
        self.to_act = (seat + self.mission.bid_direction) % self.n
        if self.bids_made == self.n:
            self.to_act = self.dealer
            if self.mission.designate:
                self.phase = DESIGNATE
            else:
                self._after_designation()

    def designate(self, target: int) -> None:
        """DESIGNATE phase: name another player (public, in order from the dealer)."""
        self._require(DESIGNATE)
        seat = self.to_act
        if not (0 <= target < self.n) or target == seat:
            raise RulesError(f"player_{seat} must name another player, got {target}")
        self.designations[seat] = target
        self.acted += 1
        self.to_act = self.next_seat(seat)
        if self.acted == self.n:
            self.acted = 0
            self._after_designation()

    def _after_designation(self) -> None:
        m = self.mission
        if m.pass_count:
            self.phase = PASS
            self.to_act = self.dealer
            return
        if m.pass_all:
            n, d = self.n, m.pass_direction
            for s in range(n):
                self.given[s].extend(self.hands[s])
            self.hands = [self.hands[(s - d) % n] for s in range(n)]
            if self.log is not None:
                self.log.append(f"everyone passes the whole hand {'left' if d == 1 else 'right'}")
        self._after_pass()

    def pick(self, card: int) -> None:
        """PASS: pick one more card to pass; SWAP_GIVE: pick the card to give."""
        seat = self.to_act
        if self.phase == PASS:
            if card not in self.hands[seat] or card in self.staged[seat]:
                raise RulesError(f"player_{seat} cannot pick card {card_name(card)} to pass")
            self.staged[seat].append(card)
            if len(self.staged[seat]) < self.pass_count():
                return
            self.acted += 1
            self.to_act = self.next_seat(seat)
            if self.acted < self.n:
                return
            self.acted = 0
            n, d = self.n, self.mission.pass_direction
            for s in range(n):
                hand = self.hands[s]
                for c in self.staged[s]:
                    hand.remove(c)
            for s in range(n):
                self.hands[(s + d) % n].extend(self.staged[s])
                self.given[s].extend(self.staged[s])
                self.staged[s] = []
            if self.log is not None:
                self.log.append(f"everyone passes {self.pass_count()} card(s) {'left' if d == 1 else 'right'}")
            self._after_pass()
        elif self.phase == SWAP_GIVE:
            if card not in self.hands[seat]:
                raise RulesError(f"player_{seat} cannot give card {card_name(card)}: not in hand")
            self.staged[seat] = [card]
            if seat == self.swap_winner:
                self.to_act = self.swap_target
                return
            a, b = self.swap_winner, self.swap_target
            ca, cb = self.staged[a][0], self.staged[b][0]
            self.hands[a].remove(ca)
            self.hands[b].remove(cb)
            self.hands[a].append(cb)
            self.hands[b].append(ca)
            self.given[a].append(ca)
            self.given[b].append(cb)
            self.staged[a] = []
            self.staged[b] = []
            if self.log is not None:
                self.log.append(f"player_{a} and player_{b} swap one card")
            self.phase = PLAY
            self.to_act = a
        else:
            raise RulesError(f"no card is picked in the {self.phase.name} phase")

    def _after_pass(self) -> None:
        m = self.mission
        if m.extra_draw:
            for i in range(self.n):
                seat = (self.dealer + i) % self.n
                self.hands[seat].extend(self.stock[: m.extra_draw])
                del self.stock[: m.extra_draw]
        self.revealed = m.reveal
        self.phase = PLAY
        self.leader = self.to_act = self.dealer

    def play(self, card: int, value: int | None = None) -> None:
        """Play ``card`` (the wild needs its declared ``value`` 0..56)."""
        self._require(PLAY)
        if self.mission.memorise:
            raise RulesError("under the memorise mission cards are played by hand position")
        if card not in self.legal_play_cards():
            raise RulesError(f"player_{self.to_act} cannot play {card_name(card)}; legal: {self.legal_play_cards()}")
        if card == WILD:
            if value is None or not 0 <= value <= MAX_WILD_VALUE:
                raise RulesError(f"the wild needs a declared value in 0..{MAX_WILD_VALUE}, got {value!r}")
        else:
            value = card
        self.hands[self.to_act].remove(card)
        self._add_to_trick(card, value)

    def play_position(self, position: int) -> None:
        """Memorise: play the card at ``position`` of the hand as seen at the look."""
        self._require(PLAY)
        seat = self.to_act
        if not self.mission.memorise or position not in self.legal_positions():
            raise RulesError(f"player_{seat} cannot play hand position {position}")
        self.position_used[seat][position] = True
        card = self.position_cards[seat][position]
        if card == WILD:  # the wild stays in hand until its value is declared
            self.phase = DECLARE
            return
        self.hands[seat].remove(card)
        self._add_to_trick(card, card)

    def declare(self, value: int) -> None:
        """Memorise: the position played held the wild; declare its value 0..56."""
        self._require(DECLARE)
        if not 0 <= value <= MAX_WILD_VALUE:
            raise RulesError(f"the wild's value must be in 0..{MAX_WILD_VALUE}, got {value}")
        self.phase = PLAY
        self.hands[self.to_act].remove(WILD)
        self._add_to_trick(WILD, value)

    def name_swap(self, target: int | None) -> None:
        """SWAP_NAME: the trick winner names a player to swap one card with, or declines (``None``)."""
        self._require(SWAP_NAME)
        seat = self.to_act
        if target is None:
            self.phase = PLAY
            return
        if not (0 <= target < self.n) or target == seat:
            raise RulesError(f"player_{seat} must name another player to swap with, got {target}")
        self.swap_winner, self.swap_target = seat, target
        self.phase = SWAP_GIVE

    # ------------------------------------------------------------------ tricks and scoring

    def _add_to_trick(self, card: int, value: int) -> None:
        trick = self.trick
        trick.append((self.to_act, card, value))
        if len(trick) < self.n:
            self.to_act = self.next_seat(self.to_act)
            return
        m = self.mission
        strength = self.strength
        winner = max(trick, key=lambda play: strength(play[1], play[2]))[0]
        self.tricks_won[winner] += 1
        self.tricks_played += 1
        cards = [play[1] for play in trick]
        self.played_cards.extend(cards)
        extra = 0
        if m.first_last_trick:
            extra += (self.tricks_played == 1) + (self.tricks_played == self.total_tricks)
        if m.listed_numbers:
            hits = sum(card in m.listed_numbers for card in cards)
            extra += hits if m.listed_each else min(hits, 1)
        self.extras[winner] += extra
        self.last_trick = trick
        self.last_winner = winner
        self.round_tricks.append((trick, winner))
        self.trick = []
        self.leader = self.to_act = winner
        if self.log is not None:
            shown = " ".join(
                f"{card_name(c)}{'=' + str(v) if c == WILD else ''}" for _, c, v in sorted(self.last_trick)
            )
            more = f" (+{extra} chili)" if extra else ""
            self.log.append(f"trick {self.tricks_played}: [{shown}] won by player_{winner}{more}")
        if self.tricks_played == self.total_tricks:
            self._score_round()
        elif m.swap:
            self.phase = SWAP_NAME

    def _score_round(self) -> None:
        n = self.n
        m = self.mission
        own = [abs(self.bids[s] - self.tricks_won[s]) + self.extras[s] for s in range(n)]
        taken = own[:]
        if m.designate:
            for s in range(n):
                taken[s] += own[self.designations[s]]
        before = self.chilis[:]
        chilis = [before[s] + taken[s] for s in range(n)]
        discarded = [0] * n
        if m.exact_bid_reward:
            for s in range(n):
                if self.bids[s] == self.tricks_won[s]:
                    discarded[s] = min(self.bids[s], chilis[s])
                    chilis[s] -= discarded[s]
        self.chilis = chilis
        self.last_round_change = [chilis[s] - before[s] for s in range(n)]
        self.last_scored = RoundSummary(
            self.bids[:], self.tricks_won[:], taken, discarded, list(self.last_trick), self.last_winner
        )
        self.round_history.append(
            {
                "mission": m.id,
                "dealer": self.dealer,
                "hand_size": self.hand_size,
                "bids": self.bids[:],
                "tricks_won": self.tricks_won[:],
                "extras": self.extras[:],
                "designations": self.designations[:],
                "tricks": self.round_tricks,
                "discarded": discarded,
                "chilis_before": before,
                "chilis_after": chilis[:],
            }
        )
        self.rounds_completed += 1
        self.round_scored = True
        if self.log is not None:
            parts = [
                f"player_{s} bid {self.bids[s]} won {self.tricks_won[s]}: {self.last_round_change[s]:+d} -> {chilis[s]}"
                for s in range(n)
            ]
            self.log.append("round scored: " + "; ".join(parts))
        if max(chilis) >= CHILI_LIMIT:
            low = min(chilis)
            self.winners = [s for s in range(n) if chilis[s] == low]
            self.phase = GAME_OVER
            if self.log is not None:
                self.log.append(
                    f"game over: {', '.join(f'player_{s}' for s in self.winners)} win(s) with {low} chili(s)"
                )
        elif self.max_rounds is not None and self.rounds_completed >= self.max_rounds:
            self.truncated = True
            self.phase = GAME_OVER
            if self.log is not None:
                self.log.append(f"game cut short after {self.rounds_completed} rounds (max_rounds)")
        else:
            self.dealer = self.next_seat(self.dealer)
            self.start_round()

    # ------------------------------------------------------------------ checks

    def card_count(self) -> int:
        """Cards in hands, stock, the current trick and completed tricks (always 56; staged cards stay in hands)."""
        return sum(map(len, self.hands)) + len(self.stock) + len(self.trick) + len(self.played_cards)

    # ------------------------------------------------------------------ copies and records (the state API)

    def copy(self, rng: np.random.Generator) -> PiliPiliGame:
        """An independent copy drawing from ``rng``. Every list the rules change in place is copied (the log too,
        when there is one); missions, the mission, the last scored round and finished tricks are shared (never
        changed)."""
        new = PiliPiliGame.__new__(PiliPiliGame)
        d = self.__dict__.copy()
        d["rng"] = rng
        d["log"] = None if self.log is None else self.log[:]
        for key in _FLAT_LISTS:
            d[key] = d[key][:]
        for key in _NESTED_LISTS:
            d[key] = [inner[:] for inner in d[key]]
        new.__dict__ = d
        return new

    def to_record(self) -> dict[str, Any]:
        """The game as plain JSON values (the options ``n``, ``missions``, ``max_rounds`` are the env's)."""
        index = {id(mission): i for i, mission in enumerate(self.missions or ())}
        record = {key: getattr(self, key) for key in _SCALARS}
        record["phase"] = int(self.phase)
        record.update({key: list(getattr(self, key)) for key in _FLAT_LISTS if key != "_mission_pile"})
        record.update({key: [list(inner) for inner in getattr(self, key)] for key in _NESTED_LISTS})
        record["mission"] = mission_record(self.mission)
        record["mission_pile"] = [index[id(mission)] for mission in self._mission_pile]
        record["last_trick"] = [list(play) for play in self.last_trick]
        summary = self.last_scored
        record["last_scored"] = None if summary is None else summary._replace(last_trick=list(summary.last_trick))
        record["round_history"] = self.round_history
        return json.loads(json.dumps(record))

    @classmethod
    def from_record(
        cls,
        record: dict[str, Any],
        *,
        num_players: int,
        missions: list[Mission] | None,
        max_rounds: int | None,
        rng: np.random.Generator,
        log: list[str] | None,
    ) -> PiliPiliGame:
        """A game from :meth:`to_record`'s dict; :class:`~tableenvs.core.state.StateError` naming a bad field.

        Besides each field's type and range, the record must be consistent (``docs/pilipili.md``, State API): every
        card once; the phase one the mission has, and the counters, bids, picks, hands, tricks, hand positions and
        the seat to act what that phase and the round so far give; the round history, the last scored round, chilis,
        winners and the end agreeing with each other (:func:`_check_round`).
        """
        n = num_players
        game = cls(n, missions, rng, max_rounds=max_rounds, log=log)
        where = "rules"

        def get(key: str) -> Any:
            return state.field(record, key, where)

        value: int  # a bool for the flags
        for key in _SCALARS:
            if key in ("revealed", "truncated", "round_scored"):
                value = state.as_bool(get(key), f"{where}.{key}")
            else:
                high = max_rounds if key == "rounds_completed" and max_rounds is not None else NUM_CARDS
                if key == "rounds_completed" and max_rounds is None:
                    high = state.MAX_ITEMS
                value = state.as_int(get(key), f"{where}.{key}", -1, high)
            setattr(game, key, value)
        game.phase = Phase(state.as_int(get("phase"), f"{where}.phase", 0, GAME_OVER))
        for key in ("chilis", "winners", "bids", "tricks_won", "extras", "designations", "stock", "played_cards"):
            most = n if key == "winners" else NUM_CARDS
            setattr(game, key, state.int_list(get(key), f"{where}.{key}", -1, NUM_CARDS, most=most))
        game.last_round_change = state.int_list(
            get("last_round_change"), f"{where}.last_round_change", -NUM_CARDS, 4 * NUM_CARDS, n
        )
        for key in ("bids", "tricks_won", "extras", "designations", "chilis"):
            if len(getattr(game, key)) != n:
                raise state.StateError(f"{where}.{key} must have {n} items")
        for key in ("hands", "staged", "position_cards"):
            lists = state.int_lists(get(key), f"{where}.{key}", 0, NUM_CARDS - 1, n, inner_most=NUM_CARDS)
            setattr(game, key, lists)
        # ``given`` came with sample_world (records saved before it have none: nothing known to be given)
        game.given = state.int_lists(
            record.get("given", [[]] * n), f"{where}.given", 0, NUM_CARDS - 1, n, inner_most=2 * NUM_CARDS
        )
        game.position_used = [
            state.bool_list(used, f"{where}.position_used[{s}]", most=MAX_HAND_SIZE)
            for s, used in enumerate(state.as_list(get("position_used"), f"{where}.position_used", n))
        ]
        game.trick = _plays(get("trick"), f"{where}.trick", n)
        game.last_trick = _plays(get("last_trick"), f"{where}.last_trick", n)
        game.round_tricks = [
            _trick(entry, f"{where}.round_tricks[{i}]", n)
            for i, entry in enumerate(state.as_list(get("round_tricks"), f"{where}.round_tricks", most=MAX_HAND_SIZE))
        ]
        game.mission = _mission_from_record(get("mission"), missions)
        deck = missions or []
        game._mission_pile = [
            deck[i]
            for i in state.int_list(get("mission_pile"), f"{where}.mission_pile", 0, len(deck) - 1, most=len(deck))
        ]
        state.distinct([id(mission) for mission in game._mission_pile], f"{where}.mission_pile")
        summary = get("last_scored")
        if summary is not None:
            bids, won, taken, discarded, last_trick, last_winner = state.as_list(summary, f"{where}.last_scored", 6)
            bid_list, won_list, taken_list, discarded_list = (
                state.int_list(x, f"{where}.last_scored.{name}", 0, 4 * NUM_CARDS, n)
                for name, x in (("bids", bids), ("tricks_won", won), ("taken", taken), ("discarded", discarded))
            )
            summary = RoundSummary(
                bid_list,
                won_list,
                taken_list,
                discarded_list,
                _plays(last_trick, f"{where}.last_scored.last_trick", n),
                state.as_int(last_winner, f"{where}.last_scored.last_winner", 0, n - 1),
            )
        game.last_scored = summary
        most = state.MAX_ITEMS if max_rounds is None else max_rounds
        history = state.as_list(get("round_history"), f"{where}.round_history", most=most)
        game.round_history = [
            _history_entry(entry, f"{where}.round_history[{i}]", n) for i, entry in enumerate(history)
        ]
        if not (0 <= game.to_act < n and 0 <= game.dealer < n and 0 <= game.leader < n):
            raise state.StateError(f"{where}: to_act, dealer and leader must be seats 0..{n - 1}")
        cards = sorted([c for hand in game.hands for c in hand] + game.stock + game.played_cards)
        cards = sorted(cards + [card for _, card, _ in game.trick])
        if cards != list(range(NUM_CARDS)):
            raise state.StateError(f"{where}: hands, stock, trick and played cards must hold every card 0..55 once")
        _check_round(game, where)
        return game


# Fields of the game by kind, for copies and records.
_SCALARS = (
    *("dealer", "hand_size", "bids_made", "last_bid", "last_winner", "tricks_played", "total_tricks", "leader"),
    *("swap_winner", "swap_target", "acted", "to_act", "revealed", "rounds_completed", "truncated", "round_scored"),
)
_FLAT_LISTS = (
    *("chilis", "winners", "last_round_change", "bids", "tricks_won", "extras", "designations", "stock", "trick"),
    *("played_cards", "round_tricks", "round_history", "_mission_pile"),
)
_NESTED_LISTS = ("hands", "staged", "given", "position_cards", "position_used")
_HISTORY_KEYS = (
    *("mission", "dealer", "hand_size", "bids", "tricks_won", "extras", "designations", "tricks", "discarded"),
    *("chilis_before", "chilis_after"),
)


def _plays(value: object, where: str, n: int) -> list[tuple[int, int, int]]:
    """A list of at most ``n`` ``(seat, card, value)`` plays from a record (seats distinct, a number card's value its
    own number, the wild's 0..56)."""
    plays = []
    for i, play in enumerate(state.as_list(value, where, most=n)):
        seat, card, worth = state.int_list(play, f"{where}[{i}]", 0, MAX_WILD_VALUE, length=3)
        if seat >= n or card >= NUM_CARDS or (card != WILD and worth != card):
            raise state.StateError(
                f"{where}[{i}] must be [seat 0..{n - 1}, card 0..{NUM_CARDS - 1}, its value], got {[seat, card, worth]}"
            )
        plays.append((seat, card, worth))
    state.distinct([play[0] for play in plays], f"{where}: the seats")
    return plays


def _trick(value: object, where: str, n: int) -> tuple[list[tuple[int, int, int]], int]:
    """A finished trick ``(plays, winner)`` from a record."""
    plays, winner = state.as_list(value, where, 2)
    return _plays(plays, f"{where}[0]", n), state.as_int(winner, f"{where}[1]", 0, n - 1)


def _history_entry(value: object, where: str, n: int) -> dict[str, Any]:
    """One ``round_history`` entry (its keys, types and sizes checked; a copy: the record stays as it was)."""
    if not isinstance(value, dict) or sorted(value) != sorted(_HISTORY_KEYS):
        raise state.StateError(f"{where} must be a dict with the keys {', '.join(_HISTORY_KEYS)}")
    entry: dict[str, Any] = {}
    for key in _HISTORY_KEYS:
        item = value[key]
        if key in ("mission", "dealer", "hand_size"):
            high = {"mission": state.MAX_INT, "dealer": n - 1, "hand_size": MAX_HAND_SIZE}[key]
            entry[key] = state.as_int(item, f"{where}.{key}", 0, high)
        elif key == "tricks":
            tricks = state.as_list(item, f"{where}.tricks", most=MAX_HAND_SIZE)
            entry[key] = [_trick(trick, f"{where}.tricks[{i}]", n) for i, trick in enumerate(tricks)]
        else:
            low = -1 if key == "designations" else 0
            entry[key] = state.int_list(item, f"{where}.{key}", low, 4 * NUM_CARDS, n)
    return entry


def _check_round(game: PiliPiliGame, where: str) -> None:
    """:class:`~tableenvs.core.state.StateError` unless ``game`` (its fields read and typed) is a consistent position:
    one that the rules can reach, as far as it matters to playing on and to what the observations show."""
    require = state.require
    n, m, phase = game.n, game.mission, game.phase
    h = game.hand_size
    total = game.total_tricks
    seats = range(n)
    over = phase == GAME_OVER
    require(h == effective_hand_size(m, n), f"{where}.hand_size", f"mission {m.id} deals {effective_hand_size(m, n)}")
    require(total == h + m.extra_draw, f"{where}.total_tricks", "a round has one trick per card in hand")
    require(phase != LOOK or m.has_look, f"{where}.phase", f"mission {m.id} has no look")
    require(phase != DESIGNATE or m.designate, f"{where}.phase", f"mission {m.id} has no designation")
    require(phase != PASS or m.pass_count, f"{where}.phase", f"mission {m.id} passes no cards")
    require(phase != DECLARE or m.memorise, f"{where}.phase", "a wild is declared apart only under memorise")
    require(phase not in (SWAP_NAME, SWAP_GIVE) or m.swap, f"{where}.phase", f"mission {m.id} has no swap")
    require(not game.round_scored, f"{where}.round_scored", "the env clears it after each move")
    # ---- the scored rounds: history, chilis, the last scored round, the end
    history = game.round_history
    rounds = game.rounds_completed
    require(len(history) == rounds, f"{where}.round_history", f"must hold one entry per round completed ({rounds})")
    for i, entry in enumerate(history):
        after = history[i + 1]["chilis_before"] if i + 1 < len(history) else game.chilis
        require(entry["chilis_after"] == after, f"{where}.round_history[{i}]", "chilis_after is the next round's start")
        require(max(entry["chilis_before"]) < CHILI_LIMIT, f"{where}.round_history[{i}]", "chilis_before are below 6")
    change = (
        [after - before for after, before in zip(game.chilis, history[-1]["chilis_before"], strict=True)]
        if history
        else None
    )
    require(
        game.last_round_change == (change or [0] * n),
        f"{where}.last_round_change",
        "the chilis the last scored round changed (0 before the first)",
    )
    summary = game.last_scored
    require((summary is None) == (not history), f"{where}.last_scored", "None exactly until a round is scored")
    if summary is not None:
        last = history[-1]
        plays, winner = last["tricks"][-1] if last["tricks"] else ([], -1)
        require(
            summary.bids == last["bids"]
            and summary.tricks_won == last["tricks_won"]
            and summary.discarded == last["discarded"]
            and summary.taken == [c + d for c, d in zip(game.last_round_change, last["discarded"], strict=True)]
            and summary.last_trick == plays
            and summary.last_winner == winner,
            f"{where}.last_scored",
            "must summarise the last round of round_history",
        )
    chilis = game.chilis
    require(min(chilis) >= 0, f"{where}.chilis", "chilis are never negative")
    if over:
        require(rounds >= 1, f"{where}.phase", "a game ends when a round is scored")
        ended_by_chilis = max(chilis) >= CHILI_LIMIT
        require(
            game.truncated == (not ended_by_chilis),
            f"{where}.truncated",
            f"a game over ends by {CHILI_LIMIT} chilis or, short of them, is cut short by max_rounds",
        )
        require(
            ended_by_chilis or (game.max_rounds is not None and rounds >= game.max_rounds),
            f"{where}.rounds_completed",
            "a game is cut short only after max_rounds rounds",
        )
        low = min(chilis)
        expected = [s for s in seats if chilis[s] == low] if ended_by_chilis else []
        require(game.winners == expected, f"{where}.winners", "the fewest chilis win a game that ends by chilis")
        last = history[-1]
        require(
            last["bids"] == game.bids
            and last["tricks_won"] == game.tricks_won
            and last["extras"] == game.extras
            and last["designations"] == game.designations
            and last["tricks"] == game.round_tricks
            and last["dealer"] == game.dealer
            and last["hand_size"] == h
            and last["mission"] == m.id,
            f"{where}.round_history",
            "the game is over: the last entry is the round on the table",
        )
    else:
        require(not game.truncated and not game.winners, f"{where}.truncated", "the game is running")
        require(max(chilis) < CHILI_LIMIT, f"{where}.chilis", f"{CHILI_LIMIT} chilis after a round end the game")
        require(
            game.max_rounds is None or rounds < game.max_rounds,
            f"{where}.rounds_completed",
            "max_rounds rounds end the game",
        )
        if history:
            require(
                history[-1]["dealer"] == (game.dealer - 1) % n,
                f"{where}.dealer",
                "the deal passes to the left after each round",
            )
    # ---- the round on the table
    playing = phase in (PLAY, DECLARE, SWAP_NAME, SWAP_GIVE) or over
    bidding_done = phase not in (LOOK, BID)
    order = [(game.first_bidder() + k * m.bid_direction) % n for k in seats]
    made = game.bids_made
    if bidding_done:
        require(made == n, f"{where}.bids_made", "every player has bid")
    else:
        require(0 <= made < n if phase == BID else made == 0, f"{where}.bids_made", f"not in 0..{n - 1} when bidding")
        require(phase != BID or game.to_act == order[made], f"{where}.to_act", "bids go round from the first bidder")
    for k, s in enumerate(order):
        bid = game.bids[s]
        require(
            (0 <= bid <= h) if k < made else bid == -1,
            f"{where}.bids[{s}]",
            f"player_{s} has {'bid 0..' + str(h) if k < made else 'not bid'}",
        )
    require(
        game.last_bid == (game.bids[order[made - 1]] if made else -1),
        f"{where}.last_bid",
        "the last bid made (-1 before the first)",
    )
    in_turns = phase in (LOOK, DESIGNATE, PASS)
    require(0 <= game.acted < n if in_turns else game.acted == 0, f"{where}.acted", "decisions taken in this phase")
    done = [(game.dealer + i) % n for i in range(game.acted)] if in_turns else []
    if in_turns:
        require(game.to_act == (game.dealer + game.acted) % n, f"{where}.to_act", "turns go round from the dealer")
    designated = phase not in (LOOK, BID, DESIGNATE) and m.designate
    for s in seats:
        target = game.designations[s]
        named = designated or (phase == DESIGNATE and s in done)
        require(
            (0 <= target < n and target != s) if named else target == -1,
            f"{where}.designations[{s}]",
            "another player once named, else -1",
        )
    # tricks, cards played, the seat to act in play
    tricks = game.round_tricks
    played = game.tricks_played
    require(len(tricks) == played, f"{where}.round_tricks", f"one entry per trick played ({played})")
    require(played <= total and (played < total or over), f"{where}.tricks_played", f"at most {total}, fewer in play")
    require(playing or not tricks, f"{where}.tricks_played", "no trick is played before the play")
    require(
        game.played_cards == [card for plays, _ in tricks for _, card, _ in plays],
        f"{where}.played_cards",
        "the cards of the round's finished tricks, in order",
    )
    lead = game.dealer
    extras = [0] * n
    won = [0] * n
    for i, (plays, winner) in enumerate(tricks):
        require(
            len(plays) == n and all(s == (lead + j) % n for j, (s, _, _) in enumerate(plays)),
            f"{where}.round_tricks[{i}]",
            "every player plays once, in turn from the leader (the last trick's winner)",
        )
        best = max(plays, key=lambda play: game.strength(play[1], play[2]))[0]
        require(winner == best, f"{where}.round_tricks[{i}]", f"player_{best} wins this trick")
        cards = [card for _, card, _ in plays]
        extra = (i == 0) + (i + 1 == total) if m.first_last_trick else 0
        if m.listed_numbers:
            hits = sum(card in m.listed_numbers for card in cards)
            extra += hits if m.listed_each else min(hits, 1)
        extras[winner] += extra
        won[winner] += 1
        lead = winner
    require(game.tricks_won == won, f"{where}.tricks_won", "the tricks each player won this round")
    require(game.extras == extras, f"{where}.extras", "the chilis the mission adds for the tricks won")
    require(
        game.leader == lead, f"{where}.leader", "the dealer leads the first trick, the last trick's winner the next"
    )
    last_plays, last_winner = tricks[-1] if tricks else ([], -1)
    require(game.last_trick == last_plays, f"{where}.last_trick", "the round's last finished trick")
    require(game.last_winner == last_winner, f"{where}.last_winner", "the winner of the last trick (-1 before)")
    trick = game.trick
    require(
        all(s == (lead + j) % n for j, (s, _, _) in enumerate(trick)),
        f"{where}.trick",
        "plays go in turn from the leader",
    )
    require(phase in (PLAY, DECLARE) or not trick, f"{where}.trick", "a trick is played only in the play")
    if phase in (PLAY, DECLARE):
        require(game.to_act == (lead + len(trick)) % n, f"{where}.to_act", "the next player of the trick")
    if phase in (SWAP_NAME, SWAP_GIVE, GAME_OVER):
        require(played >= 1, f"{where}.tricks_played", "a trick has been played")
        require(phase == SWAP_GIVE or game.to_act == lead, f"{where}.to_act", "the last trick's winner")
    swapping = phase == SWAP_GIVE
    pair = (game.swap_winner, game.swap_target)
    if swapping:
        require(
            game.swap_winner == lead and 0 <= game.swap_target < n and game.swap_target != lead,
            f"{where}.swap_target",
            "the trick's winner swaps with another player",
        )
        require(game.to_act in pair, f"{where}.to_act", "one of the swapping players gives")
    elif playing and m.swap:
        require(
            pair == (-1, -1) or (0 <= pair[0] < n and 0 <= pair[1] < n and pair[0] != pair[1]),
            f"{where}.swap_winner",
            "the last swap's players, or -1",
        )
    else:
        require(pair == (-1, -1), f"{where}.swap_winner", "no swap this round: -1")
    require(game.revealed == (playing and m.reveal), f"{where}.revealed", "hands are revealed after the passing")
    # hands, picks, stock, given cards
    in_trick = {s for s, _, _ in trick}
    pass_count = game.pass_count()
    for s in seats:
        hand, staged = game.hands[s], game.staged[s]
        size = total - played - (s in in_trick) if playing else h
        require(len(hand) == size, f"{where}.hands[{s}]", f"player_{s} must hold {size} cards now")
        if phase == PASS:
            picks = pass_count if s in done else 0 if s != game.to_act else None
            require(
                len(staged) == picks if picks is not None else len(staged) < pass_count,
                f"{where}.staged[{s}]",
                f"the cards player_{s} picked to pass so far",
            )
        elif swapping and game.to_act == game.swap_target and s == game.swap_winner:
            require(len(staged) == 1, f"{where}.staged[{s}]", "the card the trick's winner gives")
        else:
            require(not staged, f"{where}.staged[{s}]", "no card is picked now")
        require(
            len(set(staged)) == len(staged) and set(staged) <= set(hand),
            f"{where}.staged[{s}]",
            "picks are distinct cards of the hand",
        )
        given = len(game.given[s])
        base = (h if m.pass_all else pass_count) if playing else 0
        require(
            base <= given <= base + (played if m.swap else 0),
            f"{where}.given[{s}]",
            "the cards player_{s} passed and swapped away this round",
        )
    stock = NUM_CARDS - n * (total if playing else h)
    require(len(game.stock) == stock, f"{where}.stock", f"{stock} cards are left in the stock")
    # memorise: the hand positions seen at the look
    for s in seats:
        cards, used = game.position_cards[s], game.position_used[s]
        looked = m.memorise and (phase != LOOK or s in done)
        if not looked:
            require(not cards and not used, f"{where}.position_cards[{s}]", "hand positions only after a memorise look")
            continue
        require(
            len(cards) == h and len(used) == h and cards == sorted(cards),
            f"{where}.position_cards[{s}]",
            f"the {h} cards seen at the look, sorted",
        )
        left = sorted(card for card, gone in zip(cards, used, strict=True) if not gone)
        if phase == DECLARE and s == game.to_act:
            left = sorted([*left, WILD])
        require(sorted(game.hands[s]) == left, f"{where}.position_used[{s}]", "the hand is the positions not played")


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


def _mission_from_record(record: object, missions: list[Mission] | None) -> Mission:
    """The deck's (or the basic) mission with this table, else the table read as a new mission."""
    for mission in (*(missions or ()), BASIC_MISSION):
        if state.plain(mission_record(mission)) == state.plain(record):
            return mission
    try:
        return load_missions([record])[0]
    except (DeckError, TypeError, KeyError) as error:
        raise state.StateError(f"rules.mission: not a valid mission table: {error}") from None


if TYPE_CHECKING:  # the type checker holds the engine to the contract of tableenvs.core.engine
    _contract: type[RestorableEngine] = PiliPiliGame
