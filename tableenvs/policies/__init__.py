"""Policies: anything that picks a legal action from an observation.

Where you are: shared plumbing used by the CLI, the tournaments and the single-agent wrappers.
A policy sees exactly what its seat's agent sees (the observation vector and the action mask), never
the env's hidden state, so heuristics cannot cheat. The ``"search"`` policy also keeps the env it was made with,
and reads it only through ``sample_world`` (hidden parts resampled, the agent's observation unchanged).

* :class:`Policy` — the protocol: ``act(observation, action_mask, rng) -> int``.
* :class:`RandomPolicy` — uniform over the legal actions.
* :class:`CallablePolicy` — a plain function ``fn(observation, action_mask, rng) -> int`` as a policy.
* :func:`make_policy` — a policy for a given env from a name (``"random"``, ``"heuristic"``, ``"search"`` with
  options such as ``"search:sims=200"``: :mod:`tableenvs.policies.search`; ``"trained"``, the model shipped for the
  game), a numpy policy file (``.npz``, see :mod:`tableenvs.policies.numpy_policy`), a torch policy file (``.pt``, see
  :mod:`tableenvs.policies.torch_policy`), a saved Stable-Baselines3 model (a ``.zip`` path, only with
  ``trust_models=True``, or a loaded model, see :mod:`tableenvs.policies.sb3_policy`), a callable, or a :class:`Policy`
  object (returned as is).
* :func:`play_game` — one whole game on a raw env with one policy per seat, and an optional per-step hook
  (evaluation, records, ``tableenvs play``, distillation, benchmarks).

Trust: a ``.npz`` file is plain arrays and a ``.pt`` file is read with ``torch.load(weights_only=True)``; neither
runs code when loaded. An SB3 ``.zip`` holds pickles, which can run any code when loaded, so :func:`make_policy`
refuses one (:class:`UntrustedModelError`, one line) unless given ``trust_models=True`` (the command line's
``--trust-models``); ``tableenvs export MODEL.zip MODEL.npz`` converts one without running its pickles.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from tableenvs.core.actions import check_action
from tableenvs.core.registry import spec as game_spec
from tableenvs.core.table_env import TableEnv
from tableenvs.paths import is_model_path


@runtime_checkable
class Policy(Protocol):
    """Chooses an action id for the agent to act.

    ``observation`` is the agent's ``observe(agent)["observation"]`` vector, ``action_mask`` the matching
    int8 mask (1 = legal); ``rng`` is the caller's generator, the only source of randomness allowed.
    The returned id must be legal.
    """

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int: ...


class RandomPolicy:
    """Uniformly random legal action."""

    name = "random"

    def __init__(self, env: Any = None):
        del env  # accepted so every built-in policy is constructed the same way

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("RandomPolicy.act: the action mask has no legal action")
        return int(legal[rng.integers(legal.size)])


class CallablePolicy:
    """A function ``fn(observation, action_mask, rng) -> int`` used as a :class:`Policy`."""

    def __init__(self, fn: Callable[[np.ndarray, np.ndarray, np.random.Generator], int]):
        self.fn = fn
        self.name = getattr(fn, "__name__", "callable")

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        # Checked as an env checks an action (no silent int(3.7) == 3), naming the function that returned it.
        return check_action(self.fn(observation, action_mask, rng), len(action_mask), f"policy {self.name!r}")


BUILTIN_POLICIES = ("random", "heuristic", "search", "trained")


class UntrustedModelError(ValueError):
    """A saved model file that can run code when loaded (an SB3 ``.zip``), given without ``trust_models=True``."""


def needs_trust(spec: Any) -> bool:
    """Whether :func:`make_policy` loads ``spec`` through pickles (an SB3 ``.zip`` path): only with ``trust_models``."""
    return is_model_path(spec) and not str(spec).endswith((".pt", ".npz"))


def check_trusted(spec: Any, trust_models: bool) -> None:
    """Raise :class:`UntrustedModelError` for an existing SB3 model file unless ``trust_models``."""
    if trust_models or not needs_trust(spec) or not Path(spec).is_file():
        return  # a missing file is reported by the loader (FileNotFoundError), as before
    raise UntrustedModelError(
        f"{str(spec)!r} is a Stable-Baselines3 .zip: it holds pickles that can run code when loaded; convert it "
        f"with tableenvs export {str(spec)} {_npz_name(spec)} (runs no code), or, if you trust the file, pass "
        "--trust-models (in Python make_policy(..., trust_models=True))"
    )


def _npz_name(spec: Any) -> str:
    path = Path(spec)
    return str(path.with_suffix(".npz")) if path.suffix == ".zip" else f"{path}.npz"


#: What :func:`make_policy` accepts, for type hints: a name, a ``.zip`` path, a Policy, an SB3 model or a callable.
PolicySpec = Any


#: Policy specs that a module above this one makes, by prefix: ``"module:function"`` entry points, imported only when
#: such a spec is made (so this module imports none of them, as the registry stores games). The function is called
#: as ``function(spec, env)``. ``openspiel:`` needs open_spiel (the openspiel extra).
SPEC_PREFIXES = {"openspiel:": "tableenvs.openspiel:make_bot_policy"}


def make_policy(spec: PolicySpec, env: Any, *, deterministic: bool = True, trust_models: bool = False) -> Policy:
    """A policy for ``env`` (a raw or wrapped tableenvs env) from ``spec``:

    * ``"random"`` or ``"heuristic"`` (the game's built-in heuristic);
    * ``"search"`` or ``"search:sims=200"``, ``"search:ms=50:rollout=random"``, ``"search:mode=ismcts:sims=100"``,
      ...: determinised Monte Carlo search over ``env.sample_world`` (:mod:`tableenvs.policies.search`, IS-MCTS
      :mod:`tableenvs.policies.ismcts`); the bare ``"search"`` is the game's default setting
      (its spec's ``search_default``); it searches from ``env``'s current state, so make it with the env
      it will play;
    * ``"trained"``: the model shipped for the game (``tableenvs/models/<game>.npz``, or ``$TABLEENVS_MODELS``:
      :func:`tableenvs.policies.numpy_policy.trained_model_path`), ``"trained:path=FILE.npz"`` another file; a one-line
      error names the games that have one when this game has none;
    * a path to a numpy policy file (``str`` ending in ``.npz``, or such a ``pathlib.Path``, as ``tableenvs train``
      and ``tableenvs export`` write): a :class:`tableenvs.policies.numpy_policy.NumpyPolicy`, masked, ``deterministic``
      or sampled; needs only numpy and runs no code when loaded;
    * a path to a saved Stable-Baselines3 model (``str`` ending in ``.zip`` or a ``pathlib.Path``) with
      ``trust_models=True`` (its pickles can run code; without it :class:`UntrustedModelError`), or a loaded
      model: an :class:`tableenvs.policies.sb3_policy.SB3Policy` with masked prediction, ``deterministic`` (argmax over
      the legal actions) or sampled; needs the ``train`` extra;
    * ``"openspiel:random"``, ``"openspiel:mcts:sims=50"``, ``"openspiel:ismcts:sims=50"``: an OpenSpiel bot playing
      through :mod:`tableenvs.openspiel` on a world sampled from what the seat knows (needs the ``openspiel`` extra);
    * a path to a torch policy file (``str`` ending in ``.pt``, as ``tableenvs train --backend rllib`` writes):
      a :class:`tableenvs.policies.torch_policy.TorchPolicy`, masked in the same way; needs only torch;
    * an object with ``act(observation, action_mask, rng)`` (returned as is);
    * a callable ``fn(observation, action_mask, rng) -> int``.
    """
    raw = getattr(env, "unwrapped", None)
    if not isinstance(raw, TableEnv):
        raise TypeError(
            f"make_policy: env must be a tableenvs env (tableenvs.make(...) or make_raw(...)), got {env!r} "
            f"({type(env).__name__})"
        )
    if isinstance(spec, (str, Path)):
        text = str(spec)
        if text == "random":
            return RandomPolicy(raw)
        if text == "heuristic":
            return _heuristic(raw)
        if text == "search" or text.startswith("search:"):
            from tableenvs.policies.search import SearchPolicy, default_spec, parse_search_spec

            options = parse_search_spec(default_spec(raw.metadata["name"]) if text == "search" else text)
            heuristic = _heuristic(raw) if game_spec(raw.metadata["name"]).heuristic is not None else None

            def shipped_model(option: str) -> Any:
                """The game's shipped model for ``option=trained``, or the one-line refusal naming the option."""
                try:
                    return make_policy("trained", raw)
                except ValueError as error:
                    raise ValueError(f"search policy {text!r}: {option}=trained: {error}") from None

            rollout = heuristic if options.rollout == "heuristic" else None
            if options.rollout == "trained":  # the game's shipped model plays the rollouts
                rollout = shipped_model("rollout")
            # lead=trained: the shipped model's own turn leads the candidates (mode=turns)
            lead = shipped_model("lead") if options.lead == "trained" else None
            return SearchPolicy(
                raw, options, rollout, getattr(heuristic, "estimate", None), heuristic=heuristic, lead_policy=lead
            )
        for prefix, entry_point in SPEC_PREFIXES.items():
            if text.startswith(prefix):
                module, function = entry_point.split(":")
                return getattr(importlib.import_module(module), function)(text, raw)
        if text == "trained" or text.startswith("trained:"):
            from tableenvs.policies.numpy_policy import NumpyPolicy, trained_file

            return NumpyPolicy(trained_file(text, raw), raw, deterministic=deterministic)
        if text.endswith(".npz"):
            from tableenvs.policies.numpy_policy import NumpyPolicy

            return NumpyPolicy(text, raw, deterministic=deterministic)
        if text.endswith(".pt"):
            from tableenvs.policies.torch_policy import TorchPolicy

            return TorchPolicy(text, env=raw, deterministic=deterministic)
        if is_model_path(spec):
            check_trusted(spec, trust_models)
            from tableenvs.policies.sb3_policy import SB3Policy

            return SB3Policy(text, env=raw, deterministic=deterministic)
        raise ValueError(
            f"unknown policy {text!r}; built-in policies: {', '.join(BUILTIN_POLICIES)}; "
            "an OpenSpiel bot (openspiel:random, openspiel:mcts:sims=50, openspiel:ismcts:sims=50; the openspiel "
            "extra); or give the path of a numpy policy file (.npz), a torch policy file (.pt) or a saved SB3 model "
            "(.zip, with trust_models)"
        )
    if isinstance(spec, Policy):
        return spec
    if hasattr(spec, "policy") and hasattr(spec, "predict"):  # a loaded Stable-Baselines3 model
        from tableenvs.policies.sb3_policy import SB3Policy

        return SB3Policy(spec, env=raw, deterministic=deterministic)
    if callable(spec):
        return CallablePolicy(spec)
    raise TypeError(
        f"cannot make a policy from {spec!r} ({type(spec).__name__}); expected 'random', 'heuristic', 'search', "
        "'trained', a .npz, .pt or .zip path, an SB3 model, an object with act(observation, action_mask, rng) or such "
        "a callable"
    )


def _heuristic(raw: TableEnv) -> Policy:
    """The game's built-in heuristic policy for ``raw``."""
    game = game_spec(raw.metadata["name"])
    if game.heuristic is None:
        raise ValueError(f"{game.name} has no heuristic policy; use 'random'")
    module, cls = game.heuristic.split(":")
    return getattr(importlib.import_module(module), cls)(raw)


#: What :func:`play_game` calls before each step: ``on_step(raw_env, agent, observation, action)``.
StepHook = Callable[[Any, str, dict[str, np.ndarray], int], None]


def play_game(
    raw_env: Any,
    seat_policies: Any,
    *,
    seed: int | None,
    rng: np.random.Generator,
    on_step: StepHook | None = None,
) -> tuple[np.ndarray, int]:
    """Play one whole game on a raw tableenvs env: ``seat_policies[seat]`` acts for each seat.

    The env is reset with ``seed`` (the deal); the policies draw from ``rng``. ``on_step``, if given, is called
    before each step with the env, the agent to act, its observation (``observe(agent)``) and the action its policy
    chose; it may read the env but not step it, and an exception it raises ends the game there. Returns every seat's
    total reward and the number of decisions. The game's final state stays in ``raw_env`` for the caller to read.

    The game loops of the package that play a whole game with one policy per seat run here: the tournaments
    (:mod:`tableenvs.evaluation`), game records (:mod:`tableenvs.play.records`: ``on_step`` records each action),
    ``tableenvs play`` (``on_step`` prints, records and paces; a human seat is a policy that asks), distillation's
    labelling (:mod:`tableenvs.training.distill`: ``on_step`` keeps each searched decision) and the benchmarks that
    play whole games. Others step the env themselves on purpose: the browser's tables (:mod:`tableenvs.web.tables`)
    step when a request arrives, not in a loop; the conformance checks (:mod:`tableenvs.testing`) and the
    OpenSpiel bridge test stepping itself; the example in ``tableenvs/__init__`` and the README shows PettingZoo's own
    ``agent_iter`` loop, and the benchmarks that time that loop (or stop mid-game) keep it.
    """
    raw_env.reset(seed=seed)
    names = raw_env.possible_agents
    seat_of = raw_env.agent_name_mapping
    totals = np.zeros(len(names))
    decisions = 0
    while True:
        agent = raw_env.agent_selection
        if raw_env.terminations[agent] or raw_env.truncations[agent]:
            return totals, decisions
        observation = raw_env.observe(agent)
        action = seat_policies[seat_of[agent]].act(observation["observation"], observation["action_mask"], rng)
        if on_step is not None:
            on_step(raw_env, agent, observation, action)
        raw_env.step(action)
        decisions += 1
        rewards = raw_env.rewards
        for seat, name in enumerate(names):
            totals[seat] += rewards[name]
