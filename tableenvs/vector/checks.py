"""Argument checks every batched engine shares: seeds, actions, env indices, the illegal-action message.

Where you are: :mod:`tableenvs.vector` (no game here). Each check raises a one-line ``ValueError`` before anything
changes.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from tableenvs.core.validation import check_seed


def seeds_for(seed: int | Sequence[int], num_envs: int) -> list[int]:
    """The seed of every env: ``seed + i`` for an int, else the ``num_envs`` ints given."""
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        first = check_seed(seed)
        assert first is not None
        return [first + i for i in range(num_envs)]
    if isinstance(seed, (str, bytes)) or not isinstance(seed, (Sequence, np.ndarray)):
        raise ValueError(f"seed must be a non-negative int or a sequence of {num_envs} of them, got {seed!r}")
    if len(seed) != num_envs:
        raise ValueError(f"seed lists {len(seed)} seeds for {num_envs} envs; give one per env (or one int)")
    seeds = []
    for i, value in enumerate(seed):
        checked = check_seed(value, f"seed[{i}]")
        if checked is None:
            raise ValueError(f"seed[{i}] must be a non-negative integer, got None")
        seeds.append(checked)
    return seeds


def actions_array(actions: Any, num_envs: int, num_actions: int) -> np.ndarray:
    """``actions`` as a contiguous int64 array of shape ``(num_envs,)``; ``ValueError`` for another shape or kind, or
    an action outside ``0 .. num_actions - 1`` (checked even for a trusted engine: compiled code indexes with it)."""
    array = np.asarray(actions)
    if array.shape != (num_envs,):
        raise ValueError(f"actions must have shape ({num_envs},) (one per env), got shape {array.shape}")
    if array.dtype.kind not in "iu":
        raise ValueError(f"actions must be integers, got dtype {array.dtype}")
    array = np.ascontiguousarray(array, np.int64)
    if array.min() < 0 or array.max() >= num_actions:
        env = int(np.flatnonzero((array < 0) | (array >= num_actions))[0])
        raise ValueError(f"env {env}: action {int(array[env])} is not an action id (0..{num_actions - 1})")
    return array


def rows_array(rows: Any, num_envs: int) -> np.ndarray:
    """``rows`` (``step_rows``'s env indices) as a contiguous int64 array; ``ValueError`` unless a 1-D array of
    integers naming distinct envs in ``0 .. num_envs - 1``."""
    array = np.asarray(rows)
    if array.ndim != 1 or (array.size and array.dtype.kind not in "iu"):
        raise ValueError(f"rows must be a 1-D array of env indices, got shape {array.shape} dtype {array.dtype}")
    array = np.ascontiguousarray(array, np.int64)
    if array.size and (array.min() < 0 or array.max() >= num_envs or not _distinct(array)):
        raise ValueError(f"rows must be distinct env indices in 0..{num_envs - 1}, got {array.tolist()[:12]}")
    return array


def _distinct(array: np.ndarray) -> bool:
    """Whether the int64 ``array`` holds no value twice: at once when it increases (what ``flatnonzero`` gives, as
    the batched evaluation's rows are), else by sorting."""
    if array.size < 2 or bool((array[1:] > array[:-1]).all()):
        return True
    return bool(np.unique(array).size == array.size)


def row_actions(actions: Any, rows: np.ndarray, num_actions: int) -> np.ndarray:
    """``step_rows``'s ``actions`` (one per env of ``rows``) as a contiguous int64 array; ``ValueError`` naming the
    env for another shape or kind, or an action outside ``0 .. num_actions - 1``."""
    array = np.asarray(actions)
    if array.shape != rows.shape:
        raise ValueError(f"actions must have shape {rows.shape} (one per row), got shape {array.shape}")
    if array.size and array.dtype.kind not in "iu":
        raise ValueError(f"actions must be integers, got dtype {array.dtype}")
    array = np.ascontiguousarray(array, np.int64)
    if array.size and (array.min() < 0 or array.max() >= num_actions):
        i = int(np.flatnonzero((array < 0) | (array >= num_actions))[0])
        raise ValueError(f"env {int(rows[i])}: action {int(array[i])} is not an action id (0..{num_actions - 1})")
    return array


def env_index(index: Any, num_envs: int) -> int:
    """``index`` as an int in ``0 .. num_envs - 1``."""
    if isinstance(index, bool) or not isinstance(index, numbers.Integral) or not 0 <= int(index) < num_envs:
        raise ValueError(f"env index must be an int in 0..{num_envs - 1}, got {index!r}")
    return int(index)


def illegal_action(game: str, env: int, action: int, seat: int, legal: Sequence[int]) -> ValueError:
    """The error for an illegal action: the env index, the action, the seat and its legal actions."""
    shown = ", ".join(str(a) for a in legal)
    return ValueError(f"{game}: env {env}: illegal action {action} for player_{seat}; legal actions: {shown}")
