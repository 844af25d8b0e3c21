"""``evaluate`` with ``"trained"`` at a player count whose shipped file is ``<game>-<N>p.npz``: the training-record
check reads the file ``trained`` plays at that setting, not the default one."""

import numpy as np
import pytest

import tableenvs
from tableenvs.evaluation import evaluate
from tableenvs.policies.model_file import load_numpy_policy, save_for_env
from tableenvs.policies.numpy_policy import MODELS_DIR


def test_trained_at_a_count_with_its_own_file_evaluates(tmp_path, monkeypatch):
    shipped = load_numpy_policy(MODELS_DIR / "rummikub_v0.npz")  # the default count's (4 players)
    (tmp_path / "rummikub_v0.npz").write_bytes((MODELS_DIR / "rummikub_v0.npz").read_bytes())
    save_for_env(
        tmp_path / "rummikub_v0-2p.npz",
        tableenvs.make_raw("rummikub_v0", num_players=2),
        weights=[(w.astype(np.float32), b.astype(np.float32)) for w, b in shipped.weights],
        activation=shipped.activation,
        candidates=shipped.candidates,
    )
    monkeypatch.setenv("TABLEENVS_MODELS", str(tmp_path))
    result = evaluate("rummikub_v0", ["trained", "heuristic"], 2, num_players=2, seed=3)
    assert result.games == 2
    with pytest.raises(ValueError, match="'trained' has no model for rummikub_v0 with num_players=3"):
        evaluate("rummikub_v0", ["trained", "heuristic"], 2, num_players=3, seed=3)
