"""A tiny game used to test the shared AEC base class without any real game: Nim.

Players in turn take 1..3 counters from a pile of ``pile`` (default 10); who takes the last counter
loses (-1, the others +1/(n-1)). Action id ``k`` takes ``k+1`` counters.
"""

from __future__ import annotations

import numpy as np

from tableenvs.aec import TableEnv
from tableenvs.validation import check_int


class NimEnv(TableEnv):
    metadata = {**TableEnv.metadata, "name": "nim_v0"}
    num_actions = 3
    reset_option_keys = ("pile",)

    def __init__(self, num_players: int = 2, pile: int = 10, render_mode: str | None = None):
        self.pile_size = check_int("pile", pile, 1, 100)
        super().__init__(
            check_int("num_players", num_players, 2, 4),
            2 + num_players,
            render_mode=render_mode,
            observation_high=100.0,
        )

    def _start(self, rng, options):
        self.pile = check_int("pile", options.get("pile", self.pile_size), 1, 100)
        self.seat = int(rng.integers(self.num_players))
        self.loser = None

    def _current_seat(self):
        return self.seat

    def _fill_mask(self, mask):
        mask[: min(3, self.pile)] = 1

    def _fill_observation(self, seat, out):
        out[0] = self.pile
        out[1] = float(seat == self.seat)
        out[2 + (self.seat - seat) % self.num_players] = 1.0

    def _apply(self, action):
        self.pile -= action + 1
        if self.pile == 0:
            self.loser = self.seat
            self._log(f"player_{self.seat} took the last counter and loses")
            rewards = np.full(self.num_players, 1.0 / (self.num_players - 1))
            rewards[self.seat] = -1.0
            return rewards
        self.seat = (self.seat + 1) % self.num_players
        return None

    def _is_over(self):
        return self.loser is not None

    def _describe_action(self, action):
        return f"take {action + 1}"

    def _render_text(self):
        return f"pile {self.pile}, to act: player_{self.seat}"


raw_env = NimEnv


def env(**options):
    from tableenvs.aec import wrap

    return wrap(NimEnv(**options))
