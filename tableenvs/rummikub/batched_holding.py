"""Rummikub's candidate plays for a whole batch: what :class:`~tableenvs.rummikub.holding.HoldingChoices` (and
:class:`~tableenvs.rummikub.openings.OpeningChoices`) give each row, for the batched candidate-scoring player.

Where you are: ``tableenvs/rummikub``'s batched twin of its candidate classes (the game's spec names it in
``GameSpec.batched_candidates``; :class:`tableenvs.vector.candidates.BatchedCandidatePolicy` scores what it returns).
A candidate-scoring model file (``rummikub_holding_v1``, ``rummikub_openings_v1``) then plays on the batched
engine, choosing at every row what ``NumpyPolicy`` chooses there.

Row by row, as ``HoldingChoices`` decides (``holding.py``):

* **Before the opening meld**, a row whose mask allows staging a tile: the env's own ``OpeningChoices`` (one per env,
  kept as the AEC player keeps its one: the candidate openings worked out once per turn) gives the openings that hold
  the staged tiles, each with the action towards it. Two or more: the row has a choice (the model scores them; as
  the same candidate stays the first best through the turn, the row follows the opening it chose). One: its
  action. None: the heuristic's action (below).
* **Once opened**, and every other row: the compiled batched heuristic
  (:class:`~tableenvs.rummikub.batched_heuristic.BatchedHeuristic`, its plans kept per env as the AEC player's
  ``HeuristicPolicy`` keeps its one). A row at a turn's start (nothing staged) whose draw is legal and whose plan
  does not empty the rack has a choice of two (``holding_v1`` only): the heuristic's action, with the play's
  ``play_tiles`` feature, and the draw, with the hold features. Otherwise the heuristic's action.

The heuristic is asked exactly for the rows where the AEC player asks its ``HeuristicPolicy`` (never for a row
following an opening candidate), so the plans kept per env are the same as the AEC player's: a row that follows a
smaller opening is never driven by a heuristic plan. State per env: the kept plans and openings; :meth:`forget`
drops them (new games, loaded rows).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .batched_heuristic import BatchedHeuristic
from .encoder import DRAW, LAYOUT
from .holding import _OPENING, _PLAY, hold_features
from .holding import FEATURES as HOLDING_FEATURES
from .openings import FEATURES as OPENING_FEATURES
from .openings import OpeningChoices
from .tiles import TILE_TYPES


class BatchedCandidates:
    """The candidates of ``HoldingChoices`` (``holding=True``) or ``OpeningChoices`` (``holding=False``) for the
    rows of ``num_envs`` envs of ``env``'s game and options (module docstring)."""

    def __init__(self, env: Any, num_envs: int, *, holding: bool = True):
        self.raw = getattr(env, "unwrapped", env)
        self.num_envs = int(num_envs)
        self.holding = bool(holding)
        self.size = len(HOLDING_FEATURES if holding else OPENING_FEATURES)
        self.heuristic = BatchedHeuristic(self.num_envs, int(self.raw.game.min_initial))
        self._openings: list[OpeningChoices | None] = [None] * self.num_envs

    def forget(self, envs: Any = None) -> None:
        """Drop what ``envs`` (default: every env) kept: the heuristic's plans and the turn's opening candidates."""
        self.heuristic.forget(envs)
        for e in range(self.num_envs) if envs is None else np.asarray(envs, np.int64).ravel().tolist():
            self._openings[int(e)] = None

    def choices(
        self, obs: np.ndarray, mask: np.ndarray, envs: np.ndarray
    ) -> tuple[np.ndarray, list[tuple[int, np.ndarray, np.ndarray]]]:
        """``(actions, choices)``: int64 ``actions[i]``, row ``i``'s action where it has one candidate (-1 where it
        has a choice); ``choices``, per row with two or more candidates, ``(i, features float32 (K, size), actions
        int64 (K,))``, the arrays ``HoldingChoices`` (``OpeningChoices``) returns there."""
        rows = len(obs)
        actions = np.full(rows, -1, np.int64)
        chosen: list[tuple[int, np.ndarray, np.ndarray]] = []
        opened = obs[:, LAYOUT.OPENED] != 0
        ask = np.ones(rows, bool)  # rows the heuristic decides (or offers its play in)
        for i in np.flatnonzero(~opened & (mask[:, :TILE_TYPES] != 0).any(axis=1)).tolist():
            e = int(envs[i])
            openings = self._openings[e]
            if openings is None:
                openings = self._openings[e] = OpeningChoices(self.raw)
            found = openings.opening_candidates(obs[i], mask[i])
            if found is None:
                continue
            ask[i] = False
            features, candidate_actions = found
            if len(candidate_actions) == 1:
                actions[i] = candidate_actions[0]
                continue
            if self.holding:  # HoldingChoices pads the opening features to its own
                padded = np.zeros((len(candidate_actions), self.size), np.float32)
                padded[:, :_OPENING] = features
                features = padded
            chosen.append((i, features, candidate_actions))
        asked = np.flatnonzero(ask)
        if asked.size:
            decided = self.heuristic.act(obs[asked], mask[asked], envs[asked])
            actions[asked] = decided
            if self.holding:
                chosen += self._holds(obs, mask, envs, asked, decided)
        if chosen:
            actions[[i for i, _, _ in chosen]] = -1
            chosen.sort(key=lambda choice: choice[0])
        return actions, chosen

    def _holds(
        self, obs: np.ndarray, mask: np.ndarray, envs: np.ndarray, asked: np.ndarray, decided: np.ndarray
    ) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """The rows of ``asked`` (the heuristic chose ``decided``) where ``HoldingChoices`` offers play or hold: opened,
        nothing staged, the draw legal, and the heuristic's plan (kept for the row's env) plays towards a play that
        does not empty the rack (its action then is ``next_action`` of the plan, not the draw)."""
        staged = obs[asked, LAYOUT.STAGED : LAYOUT.STAGED + TILE_TYPES].any(axis=1)
        offer = (obs[asked, LAYOUT.OPENED] != 0) & ~staged & (mask[asked, DRAW] != 0) & (decided != DRAW)
        out = []
        for q in np.flatnonzero(offer).tolist():
            i, e = int(asked[q]), int(envs[asked[q]])
            if not self.heuristic._has_plan[e]:
                continue
            play = self.heuristic._plan[e]
            rack = obs[i, LAYOUT.RACK : LAYOUT.RACK + TILE_TYPES].astype(np.int64)
            if play.sum() >= rack.sum():  # the play goes out: no holding
                continue
            rows = np.zeros((2, self.size), np.float32)
            rows[0, _PLAY] = play.sum() / 14.0
            hold_features(obs[i], rack, rows[1])
            out.append((i, rows, np.array([decided[q], DRAW], np.int64)))
        return out


def batched_holding(games: Any, env: Any) -> BatchedCandidates:
    """``GameSpec.batched_candidates["rummikub_holding_v1"]``: :class:`BatchedCandidates` of ``HoldingChoices``."""
    return BatchedCandidates(env, games.num_envs, holding=True)


def batched_openings(games: Any, env: Any) -> BatchedCandidates:
    """``GameSpec.batched_candidates["rummikub_openings_v1"]``: :class:`BatchedCandidates` of ``OpeningChoices``."""
    return BatchedCandidates(env, games.num_envs, holding=False)
