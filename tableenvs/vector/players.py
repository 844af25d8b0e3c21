"""Players for a whole batch of a batched game: numpy policy files in one forward, uniform random, the game's
heuristic, behind one front door, :func:`batched_policy`.

Where you are: :mod:`tableenvs.vector` (no game here). Every player is a :class:`tableenvs.vector.BatchedPolicy`
(``act(obs, mask, envs) -> int64 (k,)``), so opponent seats, rollouts and evaluations never leave the engine.

* :class:`BatchedNumpyPolicy` — a numpy policy file (``.npz``, ``"trained"``) for ``k`` rows at once: the input
  transform, the named input features, every layer as one product over all rows (the first, compiled, summing only
  each row's nonzero inputs; with an input offset, a matrix product), then the masked argmax (greedy, compiled, the
  output layer computed for the legal actions only; a row with one legal action plays it without a forward pass: about
  15% of Pili Pili's) or a sample from the masked softmax. Greedy, it chooses exactly as
  :class:`~tableenvs.policies.numpy_policy.NumpyPolicy` row by row: a batched product may round differently from one
  row's, so a row whose two best legal logits are closer than :data:`TIE_MARGIN` (relative) is decided again by
  ``NumpyPolicy``'s own one-row forward pass. Sampled, each row draws one uniform number from the player's generator
  (``numpy.random.default_rng(seed)``, in row order) and takes the action where the cumulative masked softmax passes
  it: a different stream from ``NumpyPolicy``'s ``rng.choice`` (a tournament's sampled games differ from the AEC
  path's). A candidate-scoring model is refused here (:func:`check_batchable_model`): :func:`batched_policy` plays
  it with :class:`tableenvs.vector.candidates.BatchedCandidatePolicy` (the game's batched candidates).
* :class:`BatchedRandomPolicy` — uniform over the legal actions, drawn from one generator per env and seat
  (:meth:`~BatchedRandomPolicy.seat_generators`): ``legal[rng.integers(len(legal))]``, compiled with numpy's exact
  draws (:mod:`tableenvs.vector.draws`), so with the generators the AEC path gives each seat it draws exactly as
  :class:`~tableenvs.policies.RandomPolicy` does there.
* :func:`batched_policy` — ``"random"``, ``"heuristic"`` (the game's batched heuristic, through its spec),
  ``"trained"``, ``"trained:path=FILE.npz"`` or a ``.npz`` path, for a :class:`~tableenvs.vector.BatchedGame`;
  anything else is a one-line ``ValueError`` naming why it cannot be batched.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

import numpy as np

from tableenvs.core.registry import make_raw, names
from tableenvs.core.registry import spec as game_spec
from tableenvs.policies.input_features import features_of_rows
from tableenvs.vector.compile import kernels_once
from tableenvs.vector.contract import BatchedGame, BatchedPolicy
from tableenvs.vector.draws import GENERATOR_WORDS, integers, load_state
from tableenvs.vector.model_kernels import TIE_MARGIN, model_kernels

__all__ = [
    "BATCHED_POLICIES",
    "TIE_MARGIN",
    "BatchedNumpyPolicy",
    "blas_threads",
    "BatchedRandomPolicy",
    "batched_policy",
    "check_batchable_model",
    "not_batchable",
]

#: What :func:`batched_policy` takes, for messages.
BATCHED_POLICIES = "random, heuristic, trained, trained:path=FILE.npz or a .npz path"


#: The thread-count functions of the OpenBLAS builds numpy ships or links (``(get, set)`` symbol names).
_OPENBLAS_SYMBOLS = (
    ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
    ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
    ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
    ("openblas_get_num_threads", "openblas_set_num_threads"),
)


def _openblas_controls() -> list[tuple[Any, Any]]:
    """``(get, set)`` thread-count functions of every OpenBLAS loaded in this process (Linux: read from
    ``/proc/self/maps``); empty where none is found (another BLAS, another OS)."""
    import ctypes
    import re

    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return []
    controls = []
    for library in sorted(set(re.findall(r"(/\S*openblas\S*\.so\S*)", maps))):
        try:
            handle = ctypes.CDLL(library)
        except OSError:
            continue
        for get_name, set_name in _OPENBLAS_SYMBOLS:
            if hasattr(handle, get_name) and hasattr(handle, set_name):
                controls.append((getattr(handle, get_name), getattr(handle, set_name)))
                break
    return controls


class blas_threads:
    """Within the block, numpy's OpenBLAS runs matrix products on ``threads`` threads (restored after). A batch's
    forward pass is a few small products: on a busy machine OpenBLAS's own threads (one per core, spinning while
    they wait) cost about ten times the CPU time of one thread and are no faster. Nothing happens where numpy uses
    another BLAS."""

    def __init__(self, threads: int = 1):
        self.threads = int(threads)
        self._saved: list[tuple[Any, int]] = []

    def __enter__(self) -> blas_threads:
        for get, set_ in _openblas_controls():
            self._saved.append((set_, int(get())))
            set_(self.threads)
        return self

    def __exit__(self, *exc_info: object) -> None:
        for set_, threads in self._saved:
            set_(threads)
        self._saved = []


#: With an input offset (nothing is zero after it), the first layer's product leaves out the inputs that are zero
#: in every row when the batch has at least ``UNION_ROWS`` rows and the others are fewer than ``UNION_SHARE`` of
#: them. Without one, the first layer sums each row's nonzero inputs only (``model_kernels.sparse_layer_kernel``).
UNION_ROWS = 16
UNION_SHARE = 0.8


#: A model of at least this many actions computes its output layer for the legal actions only (greedy); below it,
#: one matrix product for all actions is faster (a row has a few legal actions: Pili Pili about 5 of 234).
LEGAL_ONLY_ACTIONS = 128


def check_batchable_model(model: Any) -> None:
    """Refuse (one-line ``ValueError``) a model file :class:`BatchedNumpyPolicy` cannot play: a candidate-scoring
    model (:func:`batched_policy` plays it with :class:`tableenvs.vector.candidates.BatchedCandidatePolicy`)."""
    if model.candidates:
        raise ValueError(
            f"{model.name!r} is a candidate-scoring model ({model.candidates!r}): BatchedNumpyPolicy plays models "
            "that read the observation; batched_policy plays this one with BatchedCandidatePolicy"
        )


class BatchedNumpyPolicy:
    """A numpy policy file (path, :class:`~tableenvs.policies.numpy_policy.NumpyModel` or ``NumpyPolicy``) for
    many rows at once (module docstring). ``env`` is an AEC env of the game and options it plays (the model is
    checked against it, and its input features built for it); ``seed`` seeds the sampling generator
    (``deterministic=False``)."""

    def __init__(self, model: Any, env: Any = None, *, deterministic: bool = True, seed: int | None = 0):
        from tableenvs.policies.numpy_policy import NumpyPolicy

        # NumpyPolicy checks the model against the env and builds its input features; greedy rows near a tie use it
        reference = model if isinstance(model, NumpyPolicy) else NumpyPolicy(model, env, deterministic=True)
        check_batchable_model(reference.model)
        self.reference = reference
        self.model = reference.model
        self.name = reference.name
        self.deterministic = bool(deterministic)
        self.rng = np.random.default_rng(seed)
        self._features = reference._features
        self._weights = reference._weights  # float32, C-contiguous (NumpyPolicy converted them once)
        self._relu = reference._relu
        self._offset, self._scale = reference._offset, reference._scale
        scale = np.zeros(0, np.float32) if self._scale is None else self._scale
        self._scale32 = np.ascontiguousarray(scale, np.float32)
        self._buffers: list[np.ndarray] = []  # one per layer, grown to the largest batch seen
        self._sparse, self._greedy, self._greedy_output, self._only_legal = model_kernels()
        self._output_t = np.ascontiguousarray(self._weights[-1][0].T)  # (actions, hidden): each action's weights

    def __repr__(self) -> str:
        return f"BatchedNumpyPolicy({self.name!r}, deterministic={self.deterministic})"

    def inputs(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The network's input rows: each observation with its input features appended (float32 ``(k, inputs)``)."""
        if self._features is None:
            return obs
        extra = features_of_rows(self._features, obs, mask)
        return np.concatenate([obs, extra], axis=1)

    def _out(self, index: int, rows: int) -> np.ndarray:
        """Layer ``index``'s output buffer for ``rows`` rows (valid until the next call)."""
        width = self._weights[index][1].shape[0]
        while len(self._buffers) <= index:
            self._buffers.append(np.empty((0, 0), np.float32))
        if self._buffers[index].shape[0] < rows:
            self._buffers[index] = np.empty((max(rows, 2 * self._buffers[index].shape[0]), width), np.float32)
        return self._buffers[index][:rows]

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """float32 ``(k, num_actions)``: the network's logits of every row, one matrix product per layer (the first,
        without an input offset, over each row's nonzero inputs only)."""
        obs = np.asarray(obs)
        return self._logits(obs, np.asarray(mask), np.arange(len(obs))).copy()

    def _logits(self, obs: np.ndarray, mask: np.ndarray, rows: np.ndarray, layers: int | None = None) -> np.ndarray:
        """The logits of rows ``rows`` of ``obs`` in this player's own buffer (valid until its next call); with
        ``layers``, the output of the first ``layers`` layers (activated)."""
        if self._features is not None:  # the features of those rows appended: a new array of them alone
            x = self.inputs(obs[rows], mask[rows])
            rows = np.arange(len(x))
        else:
            x = obs
        last = len(self._weights) - 1
        for index, (weight, bias) in enumerate(self._weights[:layers]):
            out = self._out(index, len(rows))
            if index == 0 and self._offset is None:
                if x.dtype != np.float32 or not x.flags.c_contiguous:
                    x = np.ascontiguousarray(x, np.float32)
                self._sparse(x, np.ascontiguousarray(rows, np.int64), self._scale32, weight, bias, out)
            else:
                if index == 0:  # an input offset: the dense product
                    x = x[rows].astype(np.float32)
                    x -= self._offset
                    if self._scale is not None:
                        x *= self._scale
                    if len(x) >= UNION_ROWS:
                        used = np.flatnonzero(x.any(axis=0))  # inputs zero in every row add nothing: left out
                        if used.size < UNION_SHARE * x.shape[1]:
                            x, weight = x[:, used], weight[used]
                np.matmul(x, weight, out=out)
                out += bias
            if index < last:
                if self._relu:
                    np.maximum(out, 0, out=out)
                else:
                    np.tanh(out, out=out)
            x = out
        return x

    def act(self, obs: np.ndarray, mask: np.ndarray, envs: np.ndarray | None = None) -> np.ndarray:
        """One action per row: the most likely legal action, or a sample of the masked softmax."""
        obs = np.asarray(obs)
        return self.act_rows(obs, np.asarray(mask), np.arange(len(obs)))

    def act_rows(self, obs: np.ndarray, mask: np.ndarray, rows: np.ndarray, envs: Any = None) -> np.ndarray:
        """:meth:`act` for rows ``rows`` (int64) of ``obs`` and ``mask`` (an engine's whole buffers), read in place
        rather than copied out: one action per entry of ``rows``."""
        if len(rows) == 0:
            return np.zeros(0, np.int64)
        if not self.deterministic:
            legal = mask[rows] != 0
            if not legal.any(axis=1).all():
                row = int(np.flatnonzero(~legal.any(axis=1))[0])
                raise ValueError(f"{self.name}: row {row}'s action mask has no legal action")
            return self._sample(np.where(legal, self._logits(obs, mask, rows), -np.inf))
        flags = mask if mask.dtype == np.int8 else (mask != 0).view(np.int8)
        rows = np.ascontiguousarray(rows, np.int64)
        flags = np.ascontiguousarray(flags)
        best = np.empty(len(rows), np.int64)
        self._only_legal(flags, rows, best)  # a row with one legal action plays it (NumpyPolicy's argmax does)
        if (best == -2).any():
            raise ValueError(f"{self.name}: row {int(np.flatnonzero(best == -2)[0])}'s action mask has no legal action")
        asked = np.flatnonzero(best == -1)
        if len(asked) == 0:
            return best
        rows = rows[asked]
        chosen = np.empty(len(rows), np.int64)
        close = np.empty(len(rows), np.bool_)
        if len(self._weights) > 1 and flags.shape[1] >= LEGAL_ONLY_ACTIONS:  # the output layer for the legal actions
            hidden = self._logits(obs, mask, rows, layers=len(self._weights) - 1)
            output = self._output_t, self._weights[-1][1]
            row = self._greedy_output(hidden, *output, flags, rows, TIE_MARGIN, chosen, close)
        else:
            row = self._greedy(self._logits(obs, mask, rows), flags, rows, TIE_MARGIN, chosen, close)
        if row >= 0:
            raise ValueError(f"{self.name}: row {int(asked[row])}'s action mask has no legal action")
        for near in np.flatnonzero(close).tolist():  # a near tie (or not finite): decided as NumpyPolicy decides it
            chosen[near] = self.reference.act(obs[rows[near]], mask[rows[near]], self.rng)
        best[asked] = chosen
        return best

    def _sample(self, masked: np.ndarray) -> np.ndarray:
        wide = masked.astype(np.float64)
        wide -= wide.max(axis=1, keepdims=True)
        weights = np.exp(wide)
        cumulative = np.cumsum(weights, axis=1)
        draws = self.rng.random(len(wide)) * cumulative[:, -1]
        chosen = (cumulative <= draws[:, None]).sum(axis=1)
        chosen = np.minimum(chosen, wide.shape[1] - 1)
        # a draw landing exactly on an illegal action's flat step moves to the next legal one
        bad = np.flatnonzero(weights[np.arange(len(chosen)), chosen] == 0)
        for row in bad:
            chosen[row] = int(np.flatnonzero(weights[row, chosen[row] :] > 0)[0]) + chosen[row]
        return chosen.astype(np.int64)


def random_kernel(mask, envs, seats, generators, out):
    """``out[i]``: the ``integers(count)``-th legal action of row ``i``, drawn from generator ``(envs[i],
    seats[i])``."""
    for i in range(mask.shape[0]):
        count = 0
        for a in range(mask.shape[1]):
            if mask[i, a] != 0:
                count += 1
        pick = integers(generators[envs[i], seats[i]], count)
        for a in range(mask.shape[1]):
            if mask[i, a] != 0:
                if pick == 0:
                    out[i] = a
                    break
                pick -= 1


class BatchedRandomPolicy:
    """Uniform over the legal actions, for the rows of ``games`` (module docstring). Env ``e``'s seat ``s`` draws
    from its own generator, by default ``numpy.random.default_rng(SeedSequence(seed, spawn_key=(e, s)))``;
    :meth:`seat_generators` sets those of one env (the tournament gives each game's seats theirs)."""

    name = "random"

    def __init__(self, games: BatchedGame, seed: int = 0):
        self.games = games
        self.generators = np.zeros((games.num_envs, games.num_players, GENERATOR_WORDS), np.uint64)
        for env in range(games.num_envs):
            for seat in range(games.num_players):
                sequence = np.random.SeedSequence(seed, spawn_key=(env, seat))
                load_state(self.generators[env, seat], np.random.default_rng(sequence))
        (self._kernel,) = kernels_once((random_kernel,), "the batched random player", __file__, "about 2 s")

    def seat_generators(self, env: int, generators: Any) -> None:
        """Env ``env``'s seats draw from now on as ``generators[s]`` (numpy ``Generator`` objects, PCG64) would."""
        for seat, generator in enumerate(generators):
            load_state(self.generators[env, seat], generator)

    def seat_states(self, env: int, states: np.ndarray) -> None:
        """:meth:`seat_generators` given the generators' states (uint64 ``(num_players, GENERATOR_WORDS)``, rows as
        :func:`tableenvs.vector.draws.load_state` writes them)."""
        self.generators[env] = states

    def act(self, obs: np.ndarray, mask: np.ndarray, envs: np.ndarray) -> np.ndarray:
        envs = np.ascontiguousarray(envs, np.int64)
        seats = np.ascontiguousarray(self.games.to_act[envs], np.int64)
        mask = np.ascontiguousarray(mask)
        if len(envs) and not (mask != 0).any(axis=1).all():
            row = int(np.flatnonzero(~(mask != 0).any(axis=1))[0])
            raise ValueError(f"random: row {row}'s action mask has no legal action")
        out = np.zeros(len(envs), np.int64)
        self._kernel(mask, envs, seats, self.generators, out)
        return out


def not_batchable(spec: Any) -> str | None:
    """Why the policy spec ``spec`` has no batched player (a short phrase), or None when its kind has one (the
    spec may still be refused when built: a candidate-scoring model whose game names no batched candidates for it, a
    game without a batched heuristic)."""
    if isinstance(spec, (str, Path)):
        text = str(spec)
        if text in ("random", "heuristic") or text == "trained" or text.startswith("trained:") or text.endswith(".npz"):
            return None
        return f"{text!r} has no batched player (batched players: {BATCHED_POLICIES})"
    return f"a {type(spec).__name__} object has no batched player (batched players: {BATCHED_POLICIES})"


def batched_policy(
    spec: Any, games: BatchedGame, *, env: Any = None, deterministic: bool = True, seed: int = 0
) -> BatchedPolicy:
    """The player of policy ``spec`` for the rows of ``games``: ``"random"`` (:class:`BatchedRandomPolicy`, seeded
    by ``seed``), ``"heuristic"`` (:func:`tableenvs.vector.batched_heuristic`), ``"trained"`` (the model shipped
    for the env's setting), ``"trained:path=FILE.npz"`` or a ``.npz`` path (:class:`BatchedNumpyPolicy`, greedy
    or, with ``deterministic=False``, sampled from ``default_rng(seed)``; a candidate-scoring model:
    :class:`tableenvs.vector.candidates.BatchedCandidatePolicy`, where the game's spec names batched candidates).
    ``env``: an AEC env of the same game and options (models are checked against it); None makes one from
    ``games.get_state(0)["options"]`` (the games must have been reset). Anything else is a one-line ``ValueError``."""
    reason = not_batchable(spec)
    if reason is not None:
        raise ValueError(reason)
    text = str(spec)
    if text == "random":
        return BatchedRandomPolicy(games, seed)
    if text == "heuristic":
        return batched_heuristic(games)
    raw = _env_of(games, env)
    from tableenvs.policies.numpy_policy import load_numpy_policy, trained_file

    if text == "trained" or text.startswith("trained:"):
        path = trained_file(text, raw)
    else:
        path = Path(os.fspath(spec))
    model = load_numpy_policy(path)
    if model.candidates:  # a candidate-scoring model: the game's batched candidates, through its spec
        from tableenvs.vector.candidates import BatchedCandidatePolicy

        return BatchedCandidatePolicy(model, games, raw, deterministic=deterministic, seed=seed)
    return BatchedNumpyPolicy(model, raw, deterministic=deterministic, seed=seed)


def batched_heuristic(games: BatchedGame) -> BatchedPolicy:
    """The game's heuristic for the rows of ``games`` (its spec's ``batched_heuristic``, ``"module:factory"``, called
    with the games), or a one-line ``ValueError`` naming the games that have one."""
    game = game_spec(games.name)
    if game.batched_heuristic is None:
        have = ", ".join(n for n in names() if game_spec(n).batched_heuristic is not None) or "none"
        raise ValueError(
            f"{games.name} has no batched heuristic (its GameSpec names none in 'batched_heuristic'); games that have "
            f"one: {have}"
        )
    module, _, factory = game.batched_heuristic.partition(":")
    return getattr(importlib.import_module(module), factory)(games)


def _env_of(games: BatchedGame, env: Any) -> Any:
    """The raw AEC env a model is checked against: ``env``'s, or one made with the games' own options."""
    if env is not None:
        raw = getattr(env, "unwrapped", env)
        if raw.metadata["name"] != games.name:
            raise ValueError(f"env plays {raw.metadata['name']}, the batched games {games.name}")
        return raw
    try:
        options = games.get_state(0)["options"]
    except RuntimeError:
        raise ValueError(
            f"{games.name}: give env= (an AEC env with the games' options) or reset the games before making a "
            "model player"
        ) from None
    return make_raw(games.name, **options)
