"""Llama Party: resampling what one seat cannot know, for ``LlamaPartyEnv.sample_world`` (determinised search).

Where you are: the Llama Party package, beside the rules engine (``rules.py``); the env's ``_resample_hidden`` hook
calls :func:`resample_hidden` on a copy of the game. Nothing here is reached by normal play.

What a player has seen this round: its own hand, picks and goal, the cards it passed and received (its dealt 8 are
among these), and the goals revealed so far. Every other card of the round it has never seen: they lie in the
other hands (dummies included), the others' picks and the face-down goals. A uniformly random permutation of those
cards is applied to the whole round (hands, picks, goals, display, the others' passed and received lists): the
observer cannot tell the result from the real round, since no rule before scoring depends on which card is which.
Its own goal's face-down position is hidden too: it is swapped with a uniformly random face-down position that the
placement rule allows (round 1: any; later rounds: a position of a player with its own total, dummies keeping
the rightmost ones).

How far from uniform: uniform among the consistent worlds conditional on where the cards the observer passed now
are (kept as they really are: a card passed at pass 1 may have travelled on by a later pass, which the observer
cannot know) and on which slot owns which other goal (never observed); like every determinised search it ignores
what the others' choices say about their cards.
"""

from __future__ import annotations

import numpy as np

from tableenvs.llama_party.rules import LlamaParty


def resample_hidden(game: LlamaParty, seat: int, rng: np.random.Generator) -> None:
    """Relabel in place (``game`` is the world's own copy) every card of the round ``seat`` has never seen."""
    if game.over:
        return
    _move_own_goal(game, seat, rng)
    seen = set(game.hands[seat]) | set(game.staged[seat]) | set(game.passed[seat]) | set(game.received[seat])
    seen.update(game.display[: game.step])
    seen.add(game.goal_of_slot[seat])
    unseen = [card for card in range(len(game.deck)) if card not in seen]
    mapping = dict(zip(unseen, rng.permutation(unseen).tolist(), strict=True))

    def relabel(cards: list[int]) -> list[int]:
        return [mapping.get(card, card) for card in cards]

    game.hands = [relabel(hand) for hand in game.hands]
    game.goal_of_slot = relabel(game.goal_of_slot)
    game.display = relabel(game.display)
    for key in ("staged", "passed", "received"):
        setattr(game, key, [relabel(cards) if s != seat else cards for s, cards in enumerate(getattr(game, key))])
    game.touch()


def _move_own_goal(game: LlamaParty, seat: int, rng: np.random.Generator) -> None:
    """Swap the observer's face-down goal with a random face-down position the placement rule allows it."""
    if not game.display:
        return
    position = game.display.index(game.goal_of_slot[seat])
    if position < game.step:
        return  # revealed
    owner = {goal: slot for slot, goal in enumerate(game.goal_of_slot)}
    n = game.num_players

    def allowed_here(position: int) -> bool:
        slot = owner[game.display[position]]
        return game.round_number == 1 or (slot < n and game.totals[slot] == game.totals[seat])

    allowed = [q for q in range(game.step, len(game.display)) if allowed_here(q)]
    target = allowed[int(rng.integers(len(allowed)))]
    game.display[position], game.display[target] = game.display[target], game.display[position]
