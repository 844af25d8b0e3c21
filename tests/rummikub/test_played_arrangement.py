"""The arrangement published at a commit, read off the decision's walk, against a fresh sweep.

At a commit that is not an opening, the engine takes the arrangement of the table after the play from the walk that
answered the commit check (``TurnSweep.played_arrangement``: ``kernel.exact_choices`` follows the first exact path in
sweep order) instead of sweeping the whole table again. It must be exactly ``arrange(table)`` of a fresh sweep, meld
for meld and in the same order, at every commit; openings (and copies, which keep no walk) still sweep the table.
"""

from __future__ import annotations

import numpy as np
import pytest

import tableenvs.rummikub.solver as solver_module
from tableenvs.rummikub.rules import Rummikub

OPTIONS = [
    (4, {}),
    (2, {}),
    (3, {"strict_commit": False}),
    (4, {"draw_after_play": True, "min_initial": 0}),
]


@pytest.mark.parametrize(("num_players", "options"), OPTIONS)
def test_commit_arrangement_equals_a_fresh_sweep(monkeypatch, num_players, options):
    from_walk = []
    original = solver_module.TurnSweep.played_arrangement

    def counted(self, *args):
        melds = original(self, *args)
        from_walk.append(melds is not None)
        return melds

    monkeypatch.setattr(solver_module.TurnSweep, "played_arrangement", counted)
    rng = np.random.default_rng(31 + num_players)
    commits = 0
    for _ in range(10):
        game = Rummikub(num_players, **options)
        game.start(np.random.default_rng(int(rng.integers(1 << 30))))
        while not (game.over or game.truncated):
            stage_mask, can_commit, can_draw = game.legal()
            legal = np.flatnonzero(np.append(stage_mask, [can_commit, can_draw]))
            action = int(rng.choice(legal))
            if action < 53:
                game.stage(action)
                continue
            before = game.commits
            game.commit() if action == 53 else game.draw()
            if game.commits != before:
                commits += 1
                solver_module._arrangement.cache_clear()  # a fresh sweep of the table, not a cached one
                expected = solver_module.arrange(game.table)
                assert [str(m) for m in game.arrangement] == [str(m) for m in expected]
    assert commits > 50 and sum(from_walk) > commits // 2 and not all(from_walk)
