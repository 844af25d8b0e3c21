"""The engine's fast paths against fresh solves, and seeded games against digests of the code before.

The rules engine answers each decision from sweeps it keeps: the sweep recorded at a turn's first decision, walked
between cuts for plays onto the table and, for openings, pruned to the plays still accepted once tiles are staged
(``solver._TurnSweep``). Every answer must equal a
fresh, unchecked solve of the same position (``_playable_and_exact``), which the ILP differential tests tie to
the oracle. The digests are of whole seeded random games through the wrapped API (observations, masks, rewards,
arrangements in the infos, actions), recorded on commit de69bda, before the fast paths: the games must be the
same, step by step.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from rummikub_support import random_rack, random_table

import tableenvs
import tableenvs.rummikub.turn_sweep as turn_sweep_module
from tableenvs.rummikub.rules import Rummikub
from tableenvs.rummikub.solver import _playable_and_exact, _TurnSweep

# (num_players, seed, options) -> sha256 prefix of the trajectory, recorded on commit de69bda
DIGESTS = [
    (4, 0, {}, "dfa812d578c9b2e5"),
    (4, 1, {}, "228cbbd3cef5ef2d"),
    (4, 190, {}, "98ac5aea73246da1"),  # the benchmark's slowest game: 68..89-tile tables with both jokers
    (3, 7, {}, "88129c92092235d4"),
    (2, 11, {}, "1a7640671e3ac231"),
    (4, 3, {"strict_commit": False}, "011ac0e920505560"),
    (2, 5, {"draw_after_play": True}, "e73bce10c0db7cd3"),
]


def trajectory_digest(num_players: int, seed: int, **options) -> str:
    env = tableenvs.make("rummikub_v0", num_players=num_players, **options)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    digest = hashlib.sha256()
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        digest.update(obs["observation"].tobytes())
        digest.update(obs["action_mask"].tobytes())
        arrangement = [str(meld) for meld in info.get("arrangement", ())]
        digest.update(repr((agent, float(reward), terminated, truncated, arrangement)).encode())
        if terminated or truncated:
            env.step(None)
            continue
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        digest.update(str(action).encode())
        env.step(action)
    return digest.hexdigest()[:16]


@pytest.mark.parametrize(("num_players", "seed", "options", "expected"), DIGESTS)
def test_seeded_games_are_unchanged(num_players, seed, options, expected):
    assert trajectory_digest(num_players, seed, **options) == expected


@pytest.mark.parametrize("num_players", [2, 4])
def test_engine_answers_equal_fresh_solves_over_random_games(num_players):
    """At every decision of random games, the engine's (reused, pruned) answer equals a fresh solve."""
    rng = np.random.default_rng(17 + num_players)
    decisions = staged_decisions = 0
    for _ in range(12 if num_players == 4 else 8):
        game = Rummikub(num_players)
        game.start(np.random.default_rng(int(rng.integers(1 << 30))))
        while not (game.over or game.truncated) and decisions < 4000:
            stage_mask, can_commit, can_draw = game.legal()
            seat = game.to_act
            opening = not game.opened[seat]
            if game._staged_is_play is not None or not opening or stage_mask.any():
                fresh_mask, fresh_is_play = _playable_and_exact(
                    game.table, game.racks[seat], game.staged, opening, game.min_initial
                )
                assert np.array_equal(stage_mask, fresh_mask)
                if game._staged_is_play is not None:
                    assert game._staged_is_play == fresh_is_play
            decisions += 1
            staged_decisions += bool(game.staged.any())
            legal = np.flatnonzero(np.append(stage_mask, [can_commit, can_draw]))
            action = int(rng.choice(legal))
            if action < 53:
                game.stage(action)
            elif action == 53:
                game.commit()
            else:
                game.draw()
    assert decisions > 300 and staged_decisions > 100


@pytest.mark.parametrize("prune_edges", [0, turn_sweep_module._PRUNE_EDGES])
def test_pruned_turn_sweep_equals_fresh_solves_on_big_tables(monkeypatch, prune_edges):
    """Big tables and a few small ones, one ``_TurnSweep`` for all (buffers reused): growing staged sets, now and
    then one the mask refuses, equal fresh solves; with openings pruned at every question (0) and at the engine's
    threshold, and plays onto the table answered from the words ``kernel.reach`` keeps between questions."""
    monkeypatch.setattr(turn_sweep_module, "_PRUNE_EDGES", prune_edges)
    monkeypatch.setattr(turn_sweep_module, "_SEARCH_STATES", 1 << 40)  # the sweep's paths (searches: test_witness.py)
    rng = np.random.default_rng(1717)
    from_words = 0
    turn = _TurnSweep()  # one for every position: each new sweep reuses the buffers of the one before
    for _ in range(40):
        table = random_table(rng, int(rng.integers(40, 90)) if rng.random() < 0.8 else int(rng.integers(0, 20)))
        rack = random_rack(rng, table, int(rng.integers(6, 22)))
        opening = bool(rng.random() < 0.2)
        staged = np.zeros(53, dtype=np.int64)
        while True:
            mask, staged_is_play = turn.legal(table, rack, staged, opening, 30)
            fresh_mask, fresh_is_play = _playable_and_exact(table, rack, staged, opening, 30)
            assert np.array_equal(mask, fresh_mask)
            if staged.any():
                assert staged_is_play == fresh_is_play
            from_words += turn._bounds is not None and bool(staged.any())  # a table play from the kept words
            choices = np.flatnonzero(mask) if rng.random() < 0.9 else np.flatnonzero(rack > staged)
            if choices.size == 0:
                break
            staged[rng.choice(choices)] += 1
    assert from_words > 200  # (plays onto the table are no longer pruned: ``kernel.reach`` walks between cuts)


def test_pruned_opening_sweeps_equal_fresh_solves(monkeypatch):
    """Openings keep pruning (points make each walk a forward and a backward pass): big racks, growing staged sets,
    pruned at every question that stages more, equal fresh solves."""
    monkeypatch.setattr(turn_sweep_module, "_PRUNE_EDGES", 0)
    rng = np.random.default_rng(1718)
    empty = np.zeros(53, dtype=np.int64)
    pruned = 0
    turn = _TurnSweep()
    for _ in range(20):
        rack = random_rack(rng, empty, int(rng.integers(20, 40)))
        min_initial = int(rng.choice([30, 60, 120]))
        staged = np.zeros(53, dtype=np.int64)
        while True:
            mask, staged_is_play = turn.legal(empty, rack, staged, True, min_initial)
            fresh_mask, fresh_is_play = _playable_and_exact(empty, rack, staged, True, min_initial)
            assert np.array_equal(mask, fresh_mask)
            if staged.any():
                assert staged_is_play == fresh_is_play
            pruned += turn._recorded[2][3] is None
            choices = np.flatnonzero(mask)
            if choices.size == 0:
                break
            staged[rng.choice(choices)] += 1
    assert pruned > 30
