"""The trick-taking encoder: the observation's layout, the action ids (id ``c`` plays card ``c``) and their text.

Where you are: ``trick_taking/encoder.py``, between the engine (:mod:`trick_taking.rules`) and the adapter; it keeps
``tableenvs.core.layout.Encoder``. Seats are relative to the observer (relative seat ``r`` is ``r`` places after
it). What a seat may know: its own hand, every card played (tricks are face up) and the tricks won.
"""

from __future__ import annotations

import numpy as np

from tableenvs.core.layout import Layout
from trick_taking.rules import DECK, TrickGame, card_name


class TrickEncoder:
    num_actions = DECK

    def __init__(self, num_players: int):
        self.num_players = num_players
        self.observation_layout = Layout(
            [
                ("hand", DECK, "1 for each card in the observer's hand"),
                ("played", DECK, "1 for each card of a finished trick"),
                ("trick", (num_players, DECK), "the current trick: the card each relative seat played"),
                ("won", num_players, "tricks won by relative seat, divided by 52 // n (the largest hand)"),
                ("to_act", num_players, "one-hot relative seat of the player to act (0 = the observer)"),
            ]
        )
        self.size = self.observation_layout.size
        self.low = np.zeros(self.size, np.float32)
        self.high = np.ones(self.size, np.float32)

    def fill_observation(self, game: TrickGame, seat: int, out: np.ndarray) -> None:
        layout, n = self.observation_layout, self.num_players
        out[[layout.HAND + card for card in game.hands[seat]]] = 1.0
        out[[layout.PLAYED + card for each in game.played for card in each[1:]]] = 1.0
        for i, card in enumerate(game.trick):
            out[layout.TRICK + (game.leader + i - seat) % n * DECK + card] = 1.0
        for other in range(n):
            out[layout.WON + (other - seat) % n] = game.won[other] / (DECK // n)
        out[layout.TO_ACT + (game.to_act - seat) % n] = 1.0

    def fill_mask(self, game: TrickGame, mask: np.ndarray) -> None:
        mask[game.legal_cards()] = 1

    def apply(self, game: TrickGame, action: int) -> list[float] | None:
        return game.play(action)

    def describe(self, game: TrickGame, action: int) -> str:
        return f"play {card_name(action)}"
