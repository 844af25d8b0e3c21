"""One pipeline of population recipes runs for every built-in game: the league (PPO on the batched engine against
its past snapshots, the batched heuristic and itself, sampled by how much they still beat it) from a clone of the
batched heuristic, then a step of advantage iteration from the league's model (the model's own games replayed from
the true state, each legal action valued). Tiny budgets: each writes a model that fits the game and chooses a legal
action; the advantage step names its start. The shipped models came from longer chains of these recipes and others
(docs/training.md, "Which recipe made each shipped model")."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from tableenvs.core.registry import make_raw
from tableenvs.policies import make_policy
from tableenvs.policies.model_env import check_model_fits
from tableenvs.policies.numpy_policy import load_numpy_policy
from tableenvs.training.advantage_iteration import advantage_iteration
from tableenvs.training.league import league

TINY = {"rollout": 1024, "minibatch": 512, "hidden": (16,), "value_warmup": 0}


def _plays_a_legal_action(path, env) -> None:
    policy = make_policy(str(path), env)
    env.reset(seed=3)
    seen = env.observe(env.agent_selection)
    assert seen["action_mask"][policy.act(seen["observation"], seen["action_mask"], np.random.default_rng(0))]


@pytest.mark.parametrize("game, players", [("pilipili_v0", 3), ("llama_party_v0", 2), ("rummikub_v0", 2)])
def test_league_then_advantage_iteration_make_a_model_for_every_game(tmp_path, game, players):
    options = {"num_players": players}
    env = make_raw(game, **options)
    lines: list[str] = []
    made = league(
        game, tmp_path / "league", options=options, steps=1500, label_games=4, chunk=1000, settings=TINY,
        league_settings={"num_envs": 8, "snapshot_every": 1000}, say=lines.append,
    )  # fmt: skip
    model = load_numpy_policy(made)
    check_model_fits(model, env)
    assert model.meta["recipe"].startswith("league")
    _plays_a_legal_action(made, env)

    stepped = advantage_iteration(
        game, tmp_path / "advantage", start=made, options=options, steps=1, label_games=2, epochs=1, workers=1,
        say=lines.append,
    )  # fmt: skip
    assert stepped == tmp_path / "advantage" / "step-1" / "model.npz"
    model = load_numpy_policy(stepped)
    check_model_fits(model, env)
    assert model.meta["recipe"].startswith("advantage step from ")
    _plays_a_legal_action(stepped, env)
