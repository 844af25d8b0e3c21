"""The built-in Pili Pili heuristic (``make_policy("heuristic", env)``).

Where you are: the Pili Pili package. :class:`HeuristicPolicy` reads only the observation vector and the
action mask (decoded through :class:`tableenvs.pilipili.encoder.Encoder`'s layout), never the env's state.

* Bid: the expected number of tricks of the visible hand, each number card counting the chance that it
  beats every other player's card (``((v - 1) / 54) ** (n - 1)`` on the round's value scale) and the wild
  counting 1; hidden hand: ``hand size / players``. The legal bid closest to it.
* Play: while it still needs tricks it plays to win (the cheapest winning card when it plays last, its
  strongest card otherwise; the wild as the strongest value when nothing else wins); once its bid is met
  it plays to lose (the strongest card that does not beat the trick so far, the wild as the weakest value
  when everything would win).
* Pass / give: its strongest cards if it bid fewer tricks than its hand is worth, else its weakest.
* Swap: declines. Designation and memorised positions: random among the legal choices.
"""

from __future__ import annotations

import numpy as np

from tableenvs.pilipili.encoder import (
    MISSION_FLAGS,
    PICK,
    PLAY,
    PLAY_WILD,
    S_BID,
    S_TPLAYED,
    S_TVALUE,
    S_TVISIBLE,
    S_TWILD,
    S_WON,
    Encoder,
)
from tableenvs.pilipili.rules import MAX_WILD_VALUE, NUM_CARDS, NUM_PHASES, WILD, Phase

_REVERSED = MISSION_FLAGS.index("reversed_values")


class HeuristicPolicy:
    """Bids from card strength and plays to hit its bid.

    :meth:`act` decodes the observation; :meth:`act_in_world` reads the same facts from a (sampled) world's rules
    state, for fast search rollouts (:mod:`tableenvs.policies.search`); both make the same choice through
    :meth:`choose`.
    """

    name = "heuristic"

    def __init__(self, env):
        self.n = env.num_players
        self.encoder = Encoder(self.n)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 1:
            return int(legal[0])
        enc = self.encoder
        phase = int(np.argmax(observation[enc.o_phase : enc.o_phase + NUM_PHASES]))
        me = enc.o_seats
        trick = []  # (visible, value, is_wild) of each card played to the trick so far
        if phase == Phase.PLAY:
            size = enc.seat_size
            for r in range(self.n):
                b = me + r * size
                if observation[b + S_TPLAYED]:
                    trick.append(
                        (bool(observation[b + S_TVISIBLE]), observation[b + S_TVALUE], bool(observation[b + S_TWILD]))
                    )
        return self.choose(
            legal,
            phase,
            bool(observation[enc.o_mission + _REVERSED] > 0),
            np.flatnonzero(observation[enc.o_hand : enc.o_hand + NUM_CARDS]).tolist(),
            int(observation[enc.o_round]),
            bool(observation[enc.o_phase + NUM_PHASES] > 0),
            int(observation[me + S_BID]),
            int(observation[me + S_WON]),
            trick,
            rng,
        )

    def act_in_world(self, world, rng: np.random.Generator) -> int:
        """:meth:`act` for the seat to act in ``world`` (a raw env, e.g. a sampled world), read from its rules
        state instead of its observation: the same choice (and the same draws from ``rng``), without encoding and
        decoding the observation."""
        legal = np.flatnonzero(world._current_mask())
        if legal.size == 1:
            return int(legal[0])
        game = world.game
        seat = game.to_act
        m = game.mission
        sees_own = game.sees_own_hand(seat)
        trick = []
        if game.phase == Phase.PLAY:
            simultaneous = m.simultaneous
            trick = [(not simultaneous or s == seat, value, card == WILD) for s, card, value in game.trick]
        bid = game.bids[seat]
        return self.choose(
            legal,
            int(game.phase),
            bool(m.reversed),
            sorted(game.hands[seat]) if sees_own else [],
            game.hand_size,
            sees_own,
            bid if bid >= 0 else 0,
            game.tricks_won[seat],
            trick,
            rng,
        )

    def choose(
        self,
        legal: np.ndarray,
        phase: int,
        reversed_values: bool,
        hand: list[int],
        hand_size: int,
        sees_own: bool,
        bid: int,
        won: int,
        trick: list[tuple[bool, float, bool]],
        rng: np.random.Generator,
    ) -> int:
        """The action among ``legal`` (ascending ids): the rule of the module docstring. ``hand`` is the own hand
        (ascending; empty when not seen), ``bid`` the own bid (0 before it), ``won`` the tricks won, ``trick`` the
        cards played to the current trick as ``(visible, value, is_wild)``."""
        if legal.size == 1:
            return int(legal[0])

        def strength(value: float, is_wild: bool = False) -> float:
            v = MAX_WILD_VALUE - value if reversed_values else value
            return 2 * v + (not is_wild)

        def card_power(card: int) -> float:
            return 2 * MAX_WILD_VALUE + 2 if card == WILD else strength(card)

        def trick_chance(card: int) -> float:
            if card == WILD:
                return 1.0
            v = MAX_WILD_VALUE - card if reversed_values else card
            return ((v - 1) / 54) ** (self.n - 1)

        if phase == Phase.BID:
            expected = sum(map(trick_chance, hand)) if sees_own else hand_size / self.n
            return int(legal[np.argmin(np.abs(legal - expected) + 1e-3 * legal)])

        need = bid - won
        if phase in (Phase.PASS, Phase.SWAP_GIVE):
            cards = (legal - PICK).tolist()
            expected = sum(map(trick_chance, hand))
            strongest_first = bid < expected if phase == Phase.PASS else need <= 0
            cards.sort(key=card_power, reverse=bool(strongest_first))
            return PICK + cards[0]
        if phase == Phase.SWAP_NAME:
            return int(legal[-1])  # decline
        if phase == Phase.DECLARE:
            return PLAY_WILD + (self._wild_value(need > 0, reversed_values))
        if phase == Phase.PLAY and legal[-1] < PICK:  # playing by card (not by memorised position)
            best = max((strength(value, wild) for visible, value, wild in trick if visible), default=-1.0)
            return self._play(legal, need > 0, strength, reversed_values, best, len(trick) == self.n - 1)
        return int(rng.choice(legal))  # designation, memorised positions

    @staticmethod
    def _wild_value(win: bool, reversed_values: bool) -> int:
        return MAX_WILD_VALUE if win != reversed_values else 0

    def _play(self, legal, want_win, strength, reversed_values, best, last) -> int:
        numbers = sorted((int(a) - PLAY + 1 for a in legal if a < PLAY_WILD), key=strength)
        has_wild = legal[-1] >= PLAY_WILD
        winners = [c for c in numbers if strength(c) > best]
        losers = [c for c in numbers if strength(c) <= best]
        if want_win:
            if last and winners:
                return PLAY - 1 + winners[0]
            if winners and (not has_wild or not last):
                return PLAY - 1 + numbers[-1]
            if has_wild:
                return PLAY_WILD + self._wild_value(True, reversed_values)
            return PLAY - 1 + numbers[0]
        if losers:
            return PLAY - 1 + losers[-1]
        if has_wild:
            return PLAY_WILD + self._wild_value(False, reversed_values)
        return PLAY - 1 + numbers[0]
