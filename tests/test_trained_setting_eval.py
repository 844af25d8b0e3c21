"""Eval's helpers that resolve ``"trained"`` pick the shipped file made for the tournament's setting.

With a default (4-player) Llama Party file and a ``-2p`` one in the models directory, a 2-player tournament must see
the ``-2p`` file: its training record (player count), the refusal check and ``--resume``'s model digests.
"""

from __future__ import annotations

import hashlib

import pytest

from tableenvs.commands.eval_resume import EVAL_DEFAULTS, tournament
from tableenvs.core.registry import make_raw
from tableenvs.evaluation import evaluate
from tableenvs.evaluation.models import check_training_record, trained_players, training_config
from tableenvs.policies.model_env import model_options
from tableenvs.policies.numpy_policy import random_numpy_policy

GAME = "llama_party_v0"


@pytest.fixture
def models(tmp_path, monkeypatch):
    """A models directory with the default-setting file (4 players) and a 2-player one; their paths."""
    monkeypatch.setenv("TABLEENVS_MODELS", str(tmp_path))
    default = random_numpy_policy(tmp_path / f"{GAME}.npz", make_raw(GAME), seed=1)
    two = random_numpy_policy(tmp_path / f"{GAME}-2p.npz", make_raw(GAME, num_players=2), seed=2)
    return default, two


def test_training_record_of_trained_is_the_settings_file(models):
    default, two = models
    raw = make_raw(GAME, num_players=2)
    found = training_config("trained", GAME, model_options(raw))
    assert found is not None and found[0] == two
    assert trained_players("trained", type(raw), GAME, model_options(raw)) == 2
    check_training_record("trained", raw)  # the 4-player default file would be refused here
    assert training_config("trained", GAME)[0] == default  # no setting: the default file


def test_evaluate_plays_the_settings_file(models):
    result = evaluate(GAME, ["trained", "heuristic"], 2, num_players=2, seed=3)
    assert result is not None


def test_resume_digest_is_the_settings_file(models):
    default, two = models
    arguments = {**EVAL_DEFAULTS, "env": GAME, "players": 2, "policies": ["trained", "heuristic"]}
    digest = tournament(arguments)["models"]["trained"]
    assert digest == hashlib.sha256(two.read_bytes()).hexdigest()
    arguments["players"] = None
    assert tournament(arguments)["models"]["trained"] == hashlib.sha256(default.read_bytes()).hexdigest()
