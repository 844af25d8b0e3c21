"""The smallest complete tableenvs game, Nim: a rules engine, an encoder and an adapter (docs/adding-a-game.md).

Players in turn take 1..3 counters from a pile of ``pile`` (default 10); who takes the last counter
loses (-1, the others +1/(n-1)). Action id ``k`` takes ``k+1`` counters.

Where you are: an example shipped in the package (so the guide's snippets run from a pip install), never
registered by ``import tableenvs``: register it yourself as docs/adding-a-game.md shows. The tests use it to
exercise the shared plumbing (:class:`tableenvs.core.table_env.TableEnv`, the wrappers, the single-agent
view, training) without any real game. A real game keeps the three layers in three modules
(``rules.py``, ``encoder.py``, ``env.py``); here they share one file to stay small.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tableenvs.core.engine import Engine, RulesError
from tableenvs.core.layout import Layout
from tableenvs.core.table_env import TableEnv
from tableenvs.core.validation import check_int

MAX_TAKE = 3
MAX_PILE = 100


class NimGame:
    """The rules engine (no PettingZoo): the pile, whose turn it is, and the engine contract's ``over``,
    ``winners`` and ``log`` (``tableenvs.core.engine``)."""

    def __init__(self, num_players: int, pile: int, first: int):
        self.num_players = num_players
        self.pile = pile
        self.to_act = first
        self.over = False
        self.winners: list[int] = []
        self.log: list[str] = []

    def legal_takes(self) -> list[int]:
        return list(range(1, min(MAX_TAKE, self.pile) + 1)) if not self.over else []

    def take(self, count: int) -> list[float] | None:
        """The player to act takes ``count`` counters; the rewards by seat if that ended the game."""
        if count not in self.legal_takes():
            raise RulesError(f"player_{self.to_act} cannot take {count}; legal: {self.legal_takes()}")
        self.pile -= count
        if self.pile > 0:
            self.to_act = (self.to_act + 1) % self.num_players
            return None
        loser = self.to_act
        self.over = True
        self.winners = [seat for seat in range(self.num_players) if seat != loser]
        self.log.append(f"player_{loser} took the last counter and loses")
        rewards = np.full(self.num_players, 1.0 / (self.num_players - 1))
        rewards[loser] = -1.0
        return rewards.tolist()


class NimEncoder:
    """The encoder (``tableenvs.core.layout.Encoder``): the observation's layout and the action ids."""

    num_actions = MAX_TAKE

    def __init__(self, num_players: int):
        self.observation_layout = Layout(
            [
                ("pile", 1, "counters left"),
                ("my_turn", 1, "1 if the observer is to act"),
                ("to_act", num_players, "one-hot relative seat of the player to act (0 = the observer)"),
            ]
        )
        self.size = self.observation_layout.size
        self.low = np.zeros(self.size, np.float32)
        self.high = np.full(self.size, float(MAX_PILE), np.float32)

    def fill_observation(self, game: NimGame, seat: int, out: np.ndarray) -> None:
        layout = self.observation_layout
        out[layout.PILE] = game.pile
        out[layout.MY_TURN] = float(seat == game.to_act)
        out[layout.TO_ACT + (game.to_act - seat) % game.num_players] = 1.0

    def fill_mask(self, game: NimGame, mask: np.ndarray) -> None:
        for count in game.legal_takes():
            mask[count - 1] = 1

    def apply(self, game: NimGame, action: int) -> list[float] | None:
        return game.take(action + 1)

    def describe(self, game: NimGame, action: int) -> str:
        return f"take {action + 1}"


class NimEnv(TableEnv, name="nim_v0"):
    """The adapter: options, the reset, the rewards and the text; TableEnv's default hooks (the current seat,
    mask, observation, action text, ``over`` and ``winners``) read ``self.game`` and ``self.encoder``."""

    reset_option_keys = ("pile",)

    def __init__(self, num_players: int = 2, pile: int = 10, render_mode: str | None = None):
        self.pile_size = check_int("pile", pile, 1, MAX_PILE)
        num_players = check_int("num_players", num_players, 2, 4)
        super().__init__(num_players, encoder=NimEncoder(num_players), render_mode=render_mode)

    def _start(self, rng, options):
        pile = check_int("pile", options.get("pile", self.pile_size), 1, MAX_PILE)
        self.game = NimGame(self.num_players, pile, first=int(rng.integers(self.num_players)))

    def _apply(self, action):
        rewards = self.encoder.apply(self.game, action)
        self._drain_log()
        return rewards

    def _render_text(self):
        return f"pile {self.game.pile}, to act: player_{self.game.to_act}"

    def _picture_svg(self, seat):
        """The pile as a row of counters (Nim hides nothing, so every seat sees the god view)."""
        from tableenvs.core.svg import GOLD, INK, Svg

        picture = Svg(width=max(240, 24 * self.game.pile + 24))
        for i in range(self.game.pile):
            picture.circle(24 + 24 * i, 48, 10, GOLD, stroke=INK)
        picture.text(12, 110, f"pile {self.game.pile}, to act: player_{self.game.to_act}")
        return picture.text_of()


raw_env = NimEnv


def env(**options):
    from tableenvs.core.wrappers import wrap

    return wrap(NimEnv(**options))


if TYPE_CHECKING:  # the type checker holds the engine to the contract of tableenvs.core.engine
    _contract: type[Engine] = NimGame
