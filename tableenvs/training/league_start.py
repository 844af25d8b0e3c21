"""How a ``league`` run starts: the batched heuristic's clone, or a model file given with ``--init``.

Where you are: beside :mod:`tableenvs.training.league` (the recipe, its trainer and its population), which starts
PPO from what this module returns; :mod:`tableenvs.training.best_response` starts its learner from the same clone.
No game is named here: the engine and the batched heuristic come from the game's spec.

* :func:`clone_heuristic_batched`: ``label_games`` games of the batched heuristic against itself in the batched
  engine, every decision with a choice labelled with the heuristic's pick (:func:`heuristic_labels`), a ReLU MLP
  fitted to them, saved as ``clone.npz``.
* :func:`start_from_init`: a numpy policy file of the same game and player count (checked by
  :func:`tableenvs.training.model_start.check_init`), copied to ``init.npz`` so that a rerun continues the same run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tableenvs.core.validation import check_at_least
from tableenvs.training.model_start import check_init


def engine_for(game: str, num_envs: int, options: dict[str, Any]) -> Any:
    """``num_envs`` games of ``game`` in its batched engine, trusted (the league's actions come from masks)."""
    import tableenvs.vector

    return tableenvs.vector.make(game, num_envs, trusted=True, **options)


def heuristic_labels(
    game: str, options: dict[str, Any], *, games: int, seed: int, num_envs: int = 256, say: Any = print
) -> dict[str, np.ndarray]:
    """Decisions of the batched heuristic in every seat with more than one legal action, played in the batched
    engine until ``games`` games have ended (the games in progress then are kept too):
    :mod:`tableenvs.training.distill`'s label fields, the target the heuristic's one-hot choice, ``game`` an id per
    game."""
    import tableenvs.vector

    check_at_least("games", games, 1)
    engine = engine_for(game, min(num_envs, games), options)
    heuristic = tableenvs.vector.batched_heuristic(engine)
    rng = np.random.default_rng(seed)
    obs, mask = engine.reset([int(s) for s in rng.integers(2**62, size=engine.num_envs)])
    envs = np.arange(engine.num_envs)
    game_id = envs.copy()
    next_id = engine.num_envs
    parts: dict[str, list[np.ndarray]] = {"observation": [], "mask": [], "action": [], "game": []}
    ended = 0
    while ended < games:
        actions = heuristic.act(obs, mask, envs)
        parts["observation"].append(obs.copy())
        parts["mask"].append(mask.copy())
        parts["action"].append(np.asarray(actions, np.int64).copy())
        parts["game"].append(game_id.copy())
        obs, mask, _, terminated, truncated = engine.step(actions)
        finished = np.flatnonzero(terminated | truncated)
        ended += len(finished)
        game_id[finished] = next_id + np.arange(len(finished))
        next_id += len(finished)
    data = {name: np.concatenate(arrays) for name, arrays in parts.items()}
    choice = data["mask"].astype(bool).sum(axis=1) > 1  # a forced move teaches nothing
    data = {name: array[choice] for name, array in data.items()}
    data["target"] = np.eye(engine.num_actions, dtype=np.float32)[data["action"]]
    data["value"] = np.zeros(len(data["action"]), np.float32)
    say(f"labelled {len(data['action']):,} heuristic decisions from {ended:,} games in the batched engine")
    return data


def start_from_init(game: str, out_dir: str | Path, options: dict[str, Any], init: str | Path) -> Path:
    """``out_dir/init.npz``: a copy of the checked model file ``init`` (the league's start). A one-line
    ``ValueError`` when ``out_dir`` holds a run started otherwise: from the heuristic's clone, or another ``init``."""
    check_init(game, options, init, derived_inputs=True)
    out = Path(out_dir)
    copied = out / "init.npz"
    data = Path(init).read_bytes()
    if (out / "clone.npz").exists():
        raise ValueError(f"--out {str(out)!r} holds a league run started from the heuristic's clone, not --init")
    if copied.exists():
        if copied.read_bytes() != data:
            raise ValueError(f"--out {str(out)!r} holds a league run started from another --init than {str(init)!r}")
        return copied
    out.mkdir(parents=True, exist_ok=True)
    copied.write_bytes(data)
    return copied


def clone_heuristic_batched(
    game: str,
    out_dir: str | Path,
    *,
    options: dict[str, Any] | None = None,
    label_games: int = 3000,
    epochs: int = 15,
    hidden: tuple[int, ...] = (256, 256),
    seed: int = 0,
    say: Any = print,
) -> Path:
    """``out_dir/clone.npz``: a ReLU MLP fitted to the batched heuristic's choices in ``label_games`` games played
    in the batched engine (made once: a rerun returns the file there).

    The league's and the best response's clone. :func:`tableenvs.training.recipe.clone_heuristic_aec` (the strong
    recipe's) does the same job with the game's Python heuristic in AEC games: other deals (there ``seed + i`` per
    game, here drawn from ``default_rng(seed)``), labels kept on disk (resumable, ``workers`` processes), so the two
    give different clones for the same seed. The labels here stay in memory (:func:`heuristic_labels`); the fit and
    export are the same code (:func:`tableenvs.training.distill.fit_and_export`, one torch thread here)."""
    from tableenvs.training import distill

    options = dict(options or {})
    out = Path(out_dir)
    clone = out / "clone.npz"
    if clone.exists():
        return clone
    out.mkdir(parents=True, exist_ok=True)
    data = heuristic_labels(game, options, games=label_games, seed=seed, say=say)
    return distill.fit_and_export(
        data, clone, game, options, "league: clone of the batched heuristic", hidden=hidden, epochs=epochs, seed=seed,
        threads=1, say=say,
    )  # fmt: skip
