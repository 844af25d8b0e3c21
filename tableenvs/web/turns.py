"""A human seat's turn at a web table: the tentative moves it may take back, and the table's news after each move.

Where you are: part of :mod:`tableenvs.web`, used by :class:`tableenvs.web.tables.GameTable` (two hooks: before a
move is applied, and a take-back) and free of Starlette. Nothing here names a game: a game says which of its actions
only prepare a move (``env.is_tentative(action)``: private, drawing nothing until the turn's closing move; Rummikub's
staged tiles) and, with the ``state`` capability, can be cloned.

* :class:`TurnDraft`: while a human seat makes tentative moves, the env as it was before the first of them and the
  actions since. Taking one back (or all of them) replays the turn from that copy without it: the env, the move
  log and the game record then read as if it had never been made. Nothing is revealed by taking back: the moves
  were the seat's own and private, and replaying draws nothing.
* :func:`news`: the lines the rules wrote after a move (a trick won, a round scored, tiles played); they are public
  (the same lines every seat's sampled world keeps), so every seat's move list shows them.
"""

from __future__ import annotations

from typing import Any


def news(env: Any, before: int) -> list[str]:
    """The rules' lines ``env`` logged by the move just made, ``before`` being the log's length before it (the
    log's first new line is the move itself, in the mover's words: left out)."""
    return list(env.event_log[before + 1 :])


class TurnDraft:
    """The tentative moves of the seat to act since its last closing move, and the env before the first of them."""

    def __init__(self, can_clone: bool):
        self.can_clone = can_clone  # the game has the state capability: without it nothing can be taken back
        self.clear()

    def clear(self) -> None:
        self.agent: str | None = None
        self.start: Any = None  # a clone of the env before the first tentative move
        self.actions: list[int] = []
        self.moves_before = 0  # the table's move count then
        self.steps_before = 0  # the record's step count then

    def before_move(self, env: Any, agent: str, action: int, moves: int, steps: int) -> None:
        """Note the move ``agent`` is about to make (``moves``, ``steps``: the move log's and the record's lengths)."""
        if not (self.can_clone and env.is_tentative(action)):
            self.clear()
            return
        if self.start is None or self.agent != agent:
            self.clear()
            self.agent, self.start = agent, env.clone()
            self.moves_before, self.steps_before = moves, steps
        self.actions.append(int(action))

    def offers(self, agent: str | None) -> dict[str, Any] | None:
        """What ``agent`` may take back now, for its view: ``{"take_back": [{"action", "text"}], "instead":
        [{"action", "text"}]}`` (``instead``: the closing moves it could make once all is taken back, e.g. a draw),
        or None."""
        if agent is None or agent != self.agent or not self.actions:
            return None
        start = self.start
        take_back = [{"action": a, "text": start.describe_action(a)} for a in dict.fromkeys(self.actions)]
        instead = [
            {"action": int(a), "text": start.describe_action(a)}
            for a in start.legal_actions()
            if not start.is_tentative(a)
        ]
        return {"take_back": take_back, "instead": instead}

    def replay(self, action: int | None) -> tuple[Any, list[int]]:
        """The env at the turn's start (a fresh copy) and the tentative actions to replay on it: all but the last
        ``action`` taken (``None``: none of them). ``ValueError`` naming the moves if ``action`` is not one."""
        if action is not None and action not in self.actions:
            raise ValueError(f"action {action} is none of your tentative moves this turn: {self.actions}")
        keep = list(self.actions)
        if action is None:
            keep = []
        else:
            del keep[len(keep) - 1 - keep[::-1].index(action)]
        return self.start.clone(), keep
