"""The batched Rummikub engine's action masks: the solver's answers per env, as ``Rummikub.legal`` gives them.

Where you are: between the batched engine (``batched.py``) and the solver's per-turn cache
(:class:`tableenvs.rummikub.turn_sweep.TurnSweep`, one per env). Within a turn only the staged tiles grow, so each
env's ``TurnSweep`` answers the turn's later questions from the sweep it recorded at the turn's first (``reach`` on
a play onto the table, an incremental ``walk`` for an opening; big tables by searches): the masks are incremental
across a turn exactly as the AEC env's are, and equal to them (the same questions to the same solver).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tableenvs.rummikub import batched_kernels as k
from tableenvs.rummikub.melds import opening_bound
from tableenvs.rummikub.turn_sweep import TurnSweep

if TYPE_CHECKING:
    from tableenvs.rummikub.batched import RummikubBatched

_COMMIT, _DRAW = 53, 54


class MaskSolver:
    """Fills the engine's ``mask`` rows and each env's verdict on its staged tiles (``g[e, STAGED_IS_PLAY]``)."""

    def __init__(self, engine: RummikubBatched):
        self.engine = engine
        self.sweeps = [TurnSweep() for _ in range(engine.num_envs)]
        self.need = max(engine._env_options["min_initial"], 1)

    def fill_all(self) -> None:
        engine = self.engine
        g = engine._g
        mask = engine.mask
        strict = engine._env_options["strict_commit"]
        min_initial = engine._env_options["min_initial"]
        need = self.need
        for e in range(engine.num_envs):
            seat = int(g[e, k.TO_ACT])
            rack = engine._racks[e, seat]
            staged = engine._staged[e]
            table = engine._table[e]
            opening = not engine._opened[e, seat]
            row = mask[e]
            staged_is_play = None
            if opening and opening_bound(rack) < need:
                row[:] = 0
                stage_mask = row[:_COMMIT]
            else:
                stage_mask, staged_is_play = self.sweeps[e].legal(table, rack, staged, opening, min_initial)
                row[:_COMMIT] = stage_mask
            anything_staged = bool(np.count_nonzero(staged))
            if not anything_staged:
                can_commit = False
            elif not strict or not np.count_nonzero(stage_mask):
                can_commit = True
            elif opening and opening_bound(staged) < need:
                can_commit = False
            else:
                if staged_is_play is None:
                    raise RuntimeError("batched Rummikub: playable tiles without the solver's verdict on the staged")
                can_commit = staged_is_play
            row[_COMMIT] = can_commit
            row[_DRAW] = not anything_staged
            g[e, k.STAGED_IS_PLAY] = -1 if staged_is_play is None or not anything_staged else int(staged_is_play)
