"""What every rules engine shares: the illegal-move error, the event log convention and the win reward.

Where you are: shared plumbing for the pure rules engines (``tableenvs/<game>/rules.py``), which know nothing of
PettingZoo. Each engine keeps the same contract, so an adapter (:class:`tableenvs.core.table_env.TableEnv`) reads every
game alike:

* **moves**: the engine's move methods (Pili Pili's ``bid``/``play``/..., Llama Party's ``act``, Rummikub's
  ``stage``/``commit``/``draw``) raise :class:`RulesError` for a move the rules forbid in the current state; the
  game's encoder turns an action id into one of these calls (``Encoder.apply(game, action)``);
* **outcome**: ``over`` (the game ended by its rules) and ``winners`` (the seats the rules name, tie-breaks
  included), read by ``TableEnv.outcome()``;
* **event log**: ``log``, a list the engine appends one readable line to per outcome (trick won, round scored,
  game over, ...); the adapter moves the lines into its event log after each move (``TableEnv._drain_log``).
"""

from __future__ import annotations

from collections.abc import Collection


class RulesError(ValueError):
    """A move the rules do not allow in the current state (or a scripted deal the rules cannot start from).

    A ``ValueError``, so code that caught the engines' earlier ``ValueError`` still does.
    """


def win_rewards(num_players: int, winners: Collection[int]) -> list[float]:
    """The ``reward="win"`` payout at a game's end, the same rule in every game: the winners share +1 equally
    (each gets ``1 / len(winners)``; a sole winner +1) and every other player gets -1.

    A shared win is worth a share, as in the tournaments' win rates (:mod:`tableenvs.evaluation`), so a tie is
    never as good as winning alone; when every player shares the win, each gets ``1 / num_players``.
    """
    share = 1.0 / len(winners)
    return [share if seat in winners else -1.0 for seat in range(num_players)]
