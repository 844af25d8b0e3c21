"""A Llama Party env pickled mid-game and continued in a fresh process observes exactly what the original does.

The encoder caches the table block (totals, round scores, ring) under ``game.version``, which comes from a
per-process counter. Before the fix, a game pickled in one process and continued in another could meet its
cached version again when the next round was dealt, and show round 1's table all through round 2 (totals
``[0, 0, 0, 0]`` against the engine's ``[16, 3, -2, -3]``). Here the first process resets twice (as a training
loop does), so the pickled cache holds version 1; the fresh second process scores round 1 as its version 0 and
deals round 2 as its version 1. Both sides run in fresh subprocesses, so their counters start alike.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import pickle, sys
from pathlib import Path
import numpy as np
import tableenvs

mode, folder = sys.argv[1], Path(sys.argv[2])
if mode == "first":
    env = tableenvs.make_raw("llama_party_v0", num_players=4)
    env.reset(seed=3)  # an earlier episode
    env.reset(seed=7)
    for agent in env.possible_agents:  # fill the encoder's cache before pickling
        env.observe(agent)
    (folder / "env.pkl").write_bytes(pickle.dumps(env))
else:
    env = pickle.loads((folder / "env.pkl").read_bytes())
rows, totals = [], []
for _ in range(120):  # past the first round's end (44 picks with 4 players) and on into the second
    if env.game.over:
        break
    rows.append(np.stack([env.observe(agent)["observation"] for agent in env.possible_agents]))
    totals.append(list(env.game.totals))
    agent = env.agent_selection
    env.step(int(np.flatnonzero(env.observe(agent)["action_mask"])[0]))
np.save(folder / f"{mode}.npy", np.stack(rows))
np.save(folder / f"{mode}_totals.npy", np.array(totals))
"""


def _run(mode: str, folder: Path) -> None:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, "-c", SCRIPT, mode, str(folder)], check=True, env=environment, cwd=ROOT)


def test_pickled_env_continued_in_a_fresh_process_observes_the_same(tmp_path):
    _run("first", tmp_path)  # pickles right after its second reset, then plays on in that process
    _run("second", tmp_path)  # unpickles in a fresh process and plays the same moves
    first, second = np.load(tmp_path / "first.npy"), np.load(tmp_path / "second.npy")
    totals = np.load(tmp_path / "first_totals.npy")
    assert np.any(totals[-1] != 0), "the moves played must reach a round end with non-zero totals"
    np.testing.assert_array_equal(np.load(tmp_path / "second_totals.npy"), totals)
    assert first.shape == second.shape
    np.testing.assert_array_equal(second, first)


def test_copies_and_unpickled_games_take_fresh_versions_and_empty_caches():
    import copy
    import pickle

    import tableenvs

    env = tableenvs.make_raw("llama_party_v0", num_players=3)
    env.reset(seed=1)
    env.observe("player_0")
    for clone in (copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        assert clone.game.version != env.game.version
        assert clone.encoder._table_version == -1
        np.testing.assert_array_equal(clone.observe("player_1")["observation"], env.observe("player_1")["observation"])
