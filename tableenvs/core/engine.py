"""The rules-engine contract: the protocols :class:`Engine`, :class:`RestorableEngine`, :class:`StateReader` and
:class:`ViewedEngine`, the illegal-move error, the event log convention, a move's rewards and the win reward.

Where you are: :mod:`tableenvs.core`, for the pure rules engines (``tableenvs/<game>/rules.py``), which know nothing
of PettingZoo. Each engine keeps the same contract, so the base class (:class:`tableenvs.core.table_env.TableEnv`)
reads every game alike:

* **moves**: the engine's move methods (Pili Pili's ``bid``/``play``/..., Llama Party's ``act``, Rummikub's
  ``stage``/``commit``/``draw``) raise :class:`RulesError` for a move the rules forbid in the current state; the
  game's encoder turns an action id into one of these calls (``Encoder.apply(game, action)``);
* **rewards**: a move that scores returns the per-seat score changes (:data:`StepRewards`, one number per seat;
  ``None`` for a move that scores nothing), passed through ``Encoder.apply`` to the adapter's ``_apply``, which
  returns them as the step's rewards or turns them into its reward mode's (e.g. :func:`win_rewards` at the end);
* **outcome**: ``over`` (the game ended by its rules) and ``winners`` (the seats the rules name, tie-breaks
  included), read by ``TableEnv.outcome()``;
* **event log**: ``log``, a list the engine appends one readable line to per outcome (trick won, round scored,
  game over, ...); the adapter moves the lines into its event log after each move (``TableEnv._drain_log``);
* **state** (games with the ``state`` capability, :class:`RestorableEngine`): ``copy(rng)``, ``to_record()`` and
  one generator at ``rng``, which the state API re-points in a clone and in a sampled world. How a record is read
  back needs the game's options (decks, missions), so the reader is an object of the game's ``state`` module that
  holds them (:class:`StateReader`: ``read(record, rng)``), which the adapter names (``_state_reader()``): the
  engine module never imports its reader;
* **visibility** (games with the ``views`` capability, :class:`ViewedEngine`): ``seen_by(seat)``, the game's one
  decision of what a seat may see, read alike by the text view, the picture, the world sampler and the public move
  text.

The type checker holds each engine to its protocols (``_contract: type[RestorableEngine] = PiliPiliGame`` under
``TYPE_CHECKING`` in each engine module; ``_reader: type[StateReader[PiliPiliGame]] = PiliPiliReader`` in each state
module), and ``tableenvs.testing.check_game``'s ``engine`` check holds a started
game of any registered game to them at run time (and a reader to reading back its engine's records exactly).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from typing import Self


class RulesError(ValueError):
    """A move the rules do not allow in the current state (or a scripted deal the rules cannot start from).

    A ``ValueError``, so code that caught the engines' earlier ``ValueError`` still does.
    """


#: What a move returns for its rewards: one number per seat (the score changes of the move), or ``None`` when the move
#: pays nothing.
StepRewards = Sequence[float] | None


def win_rewards(num_players: int, winners: Collection[int]) -> list[float]:
    """The ``reward="win"`` payout at a game's end, the same rule in every game: the winners share +1 equally
    (each gets ``1 / len(winners)``; a sole winner +1) and every other player gets -1.

    A shared win is worth a share, as in the tournaments' win rates (:mod:`tableenvs.evaluation`), so a tie is
    never as good as winning alone; when every player shares the win, each gets ``1 / num_players``.
    """
    share = 1.0 / len(winners)
    return [share if seat in winners else -1.0 for seat in range(num_players)]


@runtime_checkable
class Engine(Protocol):
    """What :class:`tableenvs.core.table_env.TableEnv`'s defaults read of the rules engine in ``self.game``.

    Attributes or properties alike (read-only here). ``winners`` (the seats the rules name once ``over``) is read only
    by the default ``_rules_winners``, so it is not required: Rummikub's engine names each game's winners in its
    results, and its adapter says who won the episode. Each engine module holds its class to the protocol for the type
    checker (``_contract: type[RestorableEngine] = PiliPiliGame`` under ``TYPE_CHECKING``), and
    ``tests/test_core_contract.py`` checks a started game of every registered game with ``isinstance``.
    """

    @property
    def to_act(self) -> int:
        """The seat that must act now."""
        ...

    @property
    def over(self) -> bool:
        """The game has ended by its rules."""
        ...

    @property
    def log(self) -> list[str] | None:
        """Lines the engine appends per outcome, moved to the env's event log after each move (None: no log)."""
        ...


@runtime_checkable
class RestorableEngine(Engine, Protocol):
    """An engine of a game with the ``state`` capability: it copies itself, writes its state as plain values, and
    draws from one generator at ``rng``, which the state API re-points in a clone or a sampled world."""

    rng: Any  # a numpy.random.Generator (or a stand-in with its integers and permutation)

    def copy(self, rng: np.random.Generator) -> Self:
        """An independent copy drawing from ``rng`` (its log copied too)."""
        ...

    def to_record(self) -> dict[str, Any]:
        """The engine's state as plain JSON values (``TableEnv.get_state``'s ``rules``)."""
        ...


EngineT_co = TypeVar("EngineT_co", bound=RestorableEngine, covariant=True)


@runtime_checkable
class StateReader(Protocol[EngineT_co]):
    """Reads an engine back from its record (``RestorableEngine.to_record``'s dict, also one read back from JSON),
    with the options of the env that wrote it (decks, missions, ...), which the reader holds.

    A game's ``state`` module defines it (it imports the engine, never the other way round); the adapter returns one
    from ``_state_reader()``, and the state API's default ``_rules_from_state`` calls it.
    """

    def read(self, record: Any, rng: np.random.Generator) -> EngineT_co:
        """The engine in the state ``record`` gives, drawing from ``rng`` (its ``rng`` attribute); raises
        :class:`tableenvs.core.state.StateError` naming the field for a record the rules could not have reached."""
        ...


@runtime_checkable
class ViewedEngine(Engine, Protocol):
    """An engine of a game with the ``views`` capability: one decision of what each seat may see."""

    def seen_by(self, seat: int) -> Any:
        """What ``seat`` may see now (the game's own view type); reading it changes nothing."""
        ...
