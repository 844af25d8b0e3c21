"""The Pili Pili rules engine: the moves, trick resolution and round scoring, over the table (no RL concepts).

Where you are: the Pili Pili package. This module is the game itself, like OpenSpiel's game/state split:
:class:`PiliPiliGame` holds a whole game (rounds until someone holds 6 chilis). What is on the table and what
it allows (the state, the deal, what each seat sees, the legal moves ``legal_bids``, ``legal_play_cards``...) is
its base :class:`~tableenvs.pilipili.table.PiliPiliTable` (``table.py``); this module adds the moves (``bid``,
``play``...) and what they lead to: trick resolution, round scoring, the next round or the end. Every name of
``table.py`` is importable from here. ``encoder.py`` turns the game into action ids and observation vectors,
``env.py`` into a PettingZoo env. The rules and every decision taken where the write-up is silent are in
``docs/pilipili.md``.

A round runs through these phases (``Phase``), some only under a mission effect:
``LOOK`` (timed look / memorise: each player takes one ``ready``) -> ``BID`` -> ``DESIGNATE`` ->
``PASS`` -> [whole-hand pass, extra draw, reveal: automatic] -> tricks of ``PLAY`` (``DECLARE`` after a
memorised wild, ``SWAP_NAME`` / ``SWAP_GIVE`` after a trick under the swap effect) -> scoring -> next
round or ``GAME_OVER``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tableenvs.core.engine import RestorableEngine, RulesError, ViewedEngine
from tableenvs.pilipili.table import (
    BID,
    CHILI_LIMIT,
    DECLARE,
    DESIGNATE,
    FLAT_LIST_FIELDS,
    GAME_OVER,
    LOOK,
    MAX_WILD_VALUE,
    NESTED_LIST_FIELDS,
    NUM_CARDS,
    NUM_PHASES,
    PASS,
    PLAY,
    SCALAR_FIELDS,
    SWAP_GIVE,
    SWAP_NAME,
    WILD,
    Phase,
    PiliPiliTable,
    RoundSummary,
    SeatView,
    card_name,
    effective_hand_size,
    mission_record,
)

__all__ = [
    "BID",
    "CHILI_LIMIT",
    "DECLARE",
    "DESIGNATE",
    "FLAT_LIST_FIELDS",
    "GAME_OVER",
    "LOOK",
    "MAX_WILD_VALUE",
    "NESTED_LIST_FIELDS",
    "NUM_CARDS",
    "NUM_PHASES",
    "PASS",
    "PLAY",
    "SCALAR_FIELDS",
    "SWAP_GIVE",
    "SWAP_NAME",
    "WILD",
    "Phase",
    "PiliPiliGame",
    "PiliPiliTable",
    "RoundSummary",
    "RulesError",
    "SeatView",
    "card_name",
    "effective_hand_size",
    "mission_record",
]


class PiliPiliGame(PiliPiliTable):
    """A whole game of Pili Pili: the table (:class:`~tableenvs.pilipili.table.PiliPiliTable`, whose constructor it
    takes) and the moves. Each move checks it is legal (``RulesError`` if not), changes the table, resolves a full
    trick and scores a round after its last trick, then deals the next round or ends the game.
    """

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

    def strength(self, card: int, value: int) -> int:
        """Comparison key of a played card: higher wins; a wild tying a number card loses the tie."""
        v = MAX_WILD_VALUE - value if self.mission.reversed else value
        return 2 * v + (card != WILD)

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


if TYPE_CHECKING:  # the type checker holds the engine to the contract of tableenvs.core.engine
    _contract: type[RestorableEngine] = PiliPiliGame
    _views: type[ViewedEngine] = PiliPiliGame
