"""The trick-taking adapter: ``TrickTakingEnv``, a ``tableenvs.core.table_env.TableEnv`` (PettingZoo AEC).

Where you are: ``trick_taking/env.py``, the top layer; ``tableenvs.register_game(trick_taking.SPEC)`` makes it
``trick_taking_v0``. Options: ``num_players`` (3..5, default 4) and ``hand_size`` (1..52 // num_players, default
52 // num_players). Each trick pays +1 to its winner; the outcome's score is the tricks won.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tableenvs.core.svg import Svg
from tableenvs.core.table_env import TableEnv
from tableenvs.core.validation import check_int
from tableenvs.core.wrappers import wrap
from trick_taking.encoder import TrickEncoder
from trick_taking.rules import DECK, TrickGame, card_name
from trick_taking.state import TrickReader
from trick_taking.worlds import deal_world


class TrickTakingEnv(TableEnv, name="trick_taking_v0"):
    score_name = "tricks"
    game: TrickGame

    def __init__(self, num_players: int = 4, hand_size: int | None = None, render_mode: str | None = None):
        num_players = check_int("num_players", num_players, 3, 5)
        most = DECK // num_players
        self.hand_size = check_int("hand_size", most if hand_size is None else hand_size, 1, most)
        super().__init__(num_players, encoder=TrickEncoder(num_players), render_mode=render_mode)

    def _start(self, rng: np.random.Generator, options: dict[str, Any]) -> None:
        self.game = TrickGame.deal(self.num_players, self.hand_size, rng)

    def _apply(self, action: int) -> list[float] | None:
        rewards = self.encoder.apply(self.game, action)
        self._drain_log()
        return rewards

    def _lines(self, seat: int | None) -> list[str]:
        """The table as lines of text: every hand (``seat`` None) or ``seat``'s own and the others' sizes."""
        game = self.game
        lines = [f"trick: {' '.join(map(card_name, game.trick)) or '-'} (led by player_{game.leader})"]
        hands = game.hands if seat is None else game.seen_by(seat)  # the god view, or what the seat may see
        for s, hand in enumerate(hands):
            shown = " ".join(map(card_name, hand)) if isinstance(hand, list) else f"{hand} cards"
            lines.append(f"player_{s}: {shown}; tricks {game.won[s]}{' <- to act' if s == game.to_act else ''}")
        return lines

    def _render_text(self) -> str:
        return "\n".join(self._lines(None))

    def _render_view_text(self, seat: int) -> str:
        return "\n".join(self._lines(seat))

    def _describe_action_public(self, action: int) -> str:
        return self._describe_action(action)  # a played card is seen by all

    def _picture_svg(self, seat: int | None) -> str:
        """The table's text lines, then the current trick as cards."""
        picture = Svg(width=720)
        lines = self._lines(seat)
        for i, line in enumerate(lines):
            picture.text(12, 28 + 24 * i, line)
        for i, card in enumerate(self.game.trick):
            picture.card(12 + 36 * i, 24 * len(lines) + 16, card_name(card))
        return picture.text_of()

    def _final_scores(self) -> list[int]:
        return self.game.won

    def _state_options(self) -> dict[str, Any]:
        return {"num_players": self.num_players, "hand_size": self.hand_size}

    def _state_reader(self) -> TrickReader:
        return TrickReader(self.num_players, self.hand_size)

    def _resample_hidden(self, world: TrickTakingEnv, seat: int, rng: np.random.Generator) -> None:
        deal_world(world.game, seat, rng)

    def _world_event_log(self, seat: int) -> list[str]:
        return self.event_log[:]  # every move and trick is public


raw_env = TrickTakingEnv


def env(**options: Any) -> Any:
    return wrap(TrickTakingEnv(**options))
