"""Who may sit in a seat of a web game, and how an agent's move is thought out off the live game.

Where you are: part of :mod:`tableenvs.web`. A seat is named by text, checked before any game exists:

* ``human`` — a person with the seat's token;
* ``random``, ``heuristic`` — the built-in policies (:func:`tableenvs.policies.make_policy`);
* ``trained`` — the model shipped in the package for the game, where there is one (``tableenvs/models/GAME.npz``,
  played by numpy; it fits one player count and options, and a table of another is refused when it is set up);
* ``search`` / ``search:sims=N:...`` — the built-in search, its budget capped by the server (``max_search_sims``
  simulations, ``max_search_ms`` milliseconds per decision) so no request can start an endless search;
* ``model:NAME`` — a saved model (``.npz``, ``.pt``, or a ``.zip`` with ``--trust-models``) the server was started
  with (``--model NAME=PATH``): a request names the model, never a path, so no request makes the server read a file
  it chooses. The server's configuration refused a ``.zip`` unless trusted, so a model seat loads as trusted.

:func:`think` computes one agent action from copies (the observation arrays; for ``search`` a clone of the env, with
the policy made for that clone), so it can run in a worker thread while the live game is read by requests.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from tableenvs.core.registry import spec as game_spec
from tableenvs.policies import make_policy
from tableenvs.policies.numpy_policy import shipped_models

HUMAN = "human"
BUILTIN = ("random", "heuristic")
TRAINED = "trained"


class SeatError(ValueError):
    """A seat name that cannot be seated here (the message names it and what is valid)."""


@dataclass(frozen=True)
class Seat:
    """A checked seat: ``kind`` is ``human``, ``random``, ``heuristic``, ``trained``, ``search`` or ``model``;
    ``spec`` the text given; ``policy_spec`` what :func:`make_policy` is given (a model's path for a model seat)."""

    kind: str
    spec: str
    policy_spec: str | None

    @property
    def human(self) -> bool:
        return self.kind == HUMAN


def seat_choices(game: str, models: Mapping[str, str]) -> list[str]:
    """The seat names offered for ``game`` (the page lists them; any ``search:...`` within the caps also works)."""
    choices = [HUMAN, "random"]
    if game_spec(game).heuristic is not None:
        choices += ["heuristic", "search:sims=50", "search:ms=200"]
    if game in shipped_models():
        choices.append(TRAINED)
    return choices + [f"model:{name}" for name in models]


def parse_seat(text: Any, game: str, models: Mapping[str, str], max_search_sims: int, max_search_ms: float) -> Seat:
    """``text`` as a :class:`Seat` of ``game``; :class:`SeatError` naming the problem and the valid names."""
    valid = ", ".join([*seat_choices(game, models), "search:sims=N", "search:ms=T"])
    if not isinstance(text, str):
        raise SeatError(f"a seat is a name ({valid}), got {_show(text)}")
    if text == HUMAN:
        return Seat(HUMAN, text, None)
    if text in BUILTIN:
        if text == "heuristic" and game_spec(game).heuristic is None:
            raise SeatError(f"{game} has no heuristic player; seats: {valid}")
        return Seat(text, text, text)
    if text == TRAINED:
        if game not in shipped_models():
            raise SeatError(
                f"{game} has no shipped model ('trained' is for {', '.join(shipped_models())}); seats: {valid}"
            )
        return Seat(TRAINED, text, text)
    if text == "search" or text.startswith("search:"):
        from tableenvs.policies.search import parse_search_spec

        try:
            options = parse_search_spec(text)
        except ValueError as error:
            raise SeatError(str(error)) from None
        if options.ms is not None and options.ms > max_search_ms:
            raise SeatError(f"{text!r}: this server allows at most ms={max_search_ms:g} per decision")
        if options.simulations is not None and options.simulations > max_search_sims:
            raise SeatError(f"{text!r}: this server allows at most sims={max_search_sims} per decision")
        if game_spec(game).heuristic is None and options.rollout == "heuristic":
            raise SeatError(f"{text!r}: {game} has no heuristic for the rollouts; add :rollout=random")
        return Seat("search", text, text)
    if text.startswith("model:"):
        name = text[len("model:") :]
        if name not in models:
            known = ", ".join(models) or "none (start the server with --model NAME=PATH)"
            raise SeatError(f"no model named {name!r} on this server; models: {known}")
        return Seat("model", text, models[name])
    raise SeatError(f"unknown seat {_show(text)}; seats: {valid}")


def build_policy(seat: Seat, env: Any) -> Any:
    """The policy of an agent seat for ``env`` (None for a human or a search seat: search is made per decision on a
    clone, see :func:`think`)."""
    if seat.human or seat.kind == "search":
        return None
    # a model seat's file is one the operator gave (ServerConfig refused an SB3 .zip without trust_models)
    return make_policy(seat.policy_spec, env, trust_models=seat.kind == "model")


def think(seat: Seat, policy: Any, clone: Any, observation: np.ndarray, mask: np.ndarray, rng: np.random.Generator):
    """One agent action, computed only from copies: ``observation`` and ``mask`` (the seat's own, copied), and for a
    search seat ``clone`` (``env.clone()`` of the live game, the search policy made for it). Safe in a worker thread
    while the live env is read or written elsewhere."""
    if seat.kind == "search":
        policy = make_policy(seat.policy_spec, clone)
    return int(policy.act(observation, mask, rng))


def _show(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
