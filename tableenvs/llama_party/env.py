"""Llama Party (《羊驼派对》) as a PettingZoo AEC environment: ``llama_party_v0``.

Where you are: the thin AEC adapter of ``tableenvs/llama_party`` (rules in ``rules.py``, vectors in
``encoder.py``, cards in ``cards.py``). Rules and every rules decision: ``docs/llama_party.md``.

====================  ===========================================================================================
Import                ``tableenvs.make("llama_party_v0")`` or ``from tableenvs import llama_party_v0``
Agents                ``player_0 .. player_{n-1}``, n = ``num_players`` (2..4); 2 and 3 players add dummy hands
Action space          ``Discrete(32)``: action ``c`` picks card ``c`` of the deck from the actor's hand, as its
                      secret goal (goal step) or as one of the 4 / 3 / 2 / 1 cards to pass (pass steps 1..4)
Observation space     ``Dict(observation=Box(float32, (469,)), action_mask=Box(int8, (32,)))`` seen from the
                      agent's seat: own hand, picks, own goal, revealed goals by position, step, cards passed and
                      received this round, totals and round scores of all players, dummy positions in the ring,
                      the hands every player showed at the last scoring (layout: ``tableenvs.llama_party.encoder``)
Action mask           1 for every card in the actor's hand not yet picked; all 0 for agents not to act
Agent order           each step (goal choice, pass 1..4) asks ``player_0``, then ``player_1``, ..., for all their
                      picks; nothing moves until every player has picked
Rewards               ``reward="score"`` (default): each player's round score when a round ends (sums to the
                      game total); ``reward="win"``: at the end the winners share +1 equally, -1 to each other
                      player (``tableenvs.core.engine.win_rewards``, as Pili Pili); an illegal move ends the game with
                      -1 to the mover (wrapped env)
Termination           after round 4, or after a round in which a total reaches 100
Options               ``num_players`` (2..4, default 4), ``deck`` (None = standard deck, a .toml/.json path, or a
                      list of 32 card tables), ``reward`` ("score"/"win"), ``render_mode`` (None, "ansi", "human",
                      "rgb_array")
Reset options         ``hands`` (4 lists of 8 card indices or ids: seats 0..n-1, then dummies), ``totals``
                      (starting totals by seat), ``round`` (first round number 1..4), ``dummy_feeds`` (3 players:
                      the seat the dummy feeds in the first round); they script the first round only
====================  ===========================================================================================
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np

from tableenvs.core.engine import win_rewards
from tableenvs.core.outcome import EndReason
from tableenvs.core.table_env import TableEnv
from tableenvs.core.validation import check_choice, check_int
from tableenvs.core.wrappers import wrap
from tableenvs.llama_party.cards import DECK_SIZE, STANDARD_DECK, Deck, card_record, load_cards
from tableenvs.llama_party.encoder import (
    MAX_START_TOTAL,
    Encoder,
)
from tableenvs.llama_party.picture import table_svg
from tableenvs.llama_party.rules import DEAL_SIZE, END_SCORE, GOAL_STEP, NUM_ROUNDS, NUM_SLOTS, PASS_COUNTS, LlamaParty
from tableenvs.llama_party.state import LlamaPartyReader
from tableenvs.llama_party.worlds import resample_hidden, world_event_log

REWARDS = ("score", "win")


class LlamaPartyEnv(TableEnv, name="llama_party_v0"):
    """PettingZoo AEC env of Llama Party; see the module docstring."""

    reset_option_keys = ("hands", "totals", "round", "dummy_feeds")

    def __init__(
        self,
        num_players: int = 4,
        deck: str | Path | list[dict[str, Any]] | None = None,
        reward: str = "score",
        render_mode: str | None = None,
    ):
        num_players = check_int("num_players", num_players, 2, 4)
        self.reward_mode = check_choice("reward", reward, REWARDS)
        self.deck: Deck = load_cards(deck)
        super().__init__(num_players, encoder=Encoder(self.deck, num_players), render_mode=render_mode)
        self.game = LlamaParty(self.deck, num_players)
        self._card_index = {card.id: card.index for card in self.deck}

    # ------------------------------------------------------------------ hooks

    def _start(self, rng: np.random.Generator, options: dict[str, Any]) -> None:
        n = self.num_players
        hands = options.get("hands")
        if hands is not None:
            hands = self._check_hands(hands)
        totals = options.get("totals")
        if totals is not None:
            if not isinstance(totals, (list, tuple, np.ndarray)) or len(totals) != n:
                raise ValueError(f"reset option totals must list {n} integers (one per seat), got {totals!r}")
            totals = [check_int(f"totals[{s}]", t, -MAX_START_TOTAL, MAX_START_TOTAL) for s, t in enumerate(totals)]
        first_round = check_int("round", options.get("round", 1), 1, NUM_ROUNDS)
        dummy_feeds = options.get("dummy_feeds")
        if dummy_feeds is not None:
            if n != 3:
                raise ValueError(f"reset option dummy_feeds applies to 3 players only; this env has {n}")
            dummy_feeds = check_int("dummy_feeds", dummy_feeds, 0, 2)
        self.game.start(rng, hands=hands, totals=totals, first_round=first_round, dummy_feeds=dummy_feeds)
        self._drain_log()

    def _apply(self, action: int) -> list[float] | None:
        game = self.game
        scores = self.encoder.apply(game, action)
        self._drain_log()
        if scores is None:
            return None
        if self.reward_mode == "score":
            return scores
        if not game.over:
            return None
        return win_rewards(self.num_players, game.winners)

    score_name = "points"
    higher_is_better = True

    def _final_scores(self) -> list[float]:
        return [float(x) for x in self.game.totals]

    end_reasons = (
        EndReason("last_round", f"round {NUM_ROUNDS} was played"),
        EndReason("score_limit", f"a player's total reached {END_SCORE} before round {NUM_ROUNDS}"),
    )

    def _end_reason(self, truncated: bool) -> str:
        return "last_round" if self.game.round_number >= NUM_ROUNDS else "score_limit"

    def _describe_action_public(self, action: int) -> str:
        """Goal choices and passes are secret: only that a card was picked (it becomes the mover's goal or one of
        its picks, which ``LlamaParty.seen_by`` shows to the mover alone)."""
        game = self.game
        if game.over or game.step == GOAL_STEP:
            return "chooses a goal" if not game.over else "picks a card"
        count = PASS_COUNTS[game.step - 1]
        return f"picks a card to pass ({count - game.picks_left + 1} of {count})"

    def _cards_text(self, hand: list[int]) -> str:
        return " ".join(str(self.deck[card]) for card in sorted(hand)) or "-"

    def _shown_hands_lines(self) -> list[str]:
        """The hands shown at the last scoring (public until the next scoring), or nothing."""
        game = self.game
        if not game.shown_hands:
            return []
        goals = " ".join(self.deck[goal].id for goal in game.shown_display)
        lines = [f"shown at the last scoring (goals {goals}):"]
        lines += [f"  player_{seat}: {self._cards_text(hand)}" for seat, hand in enumerate(game.shown_hands)]
        return lines

    def _status_text(self, picks_left: bool) -> str:
        """Where the game stands (public): over, the goal choice, or which pass and who picks."""
        game = self.game
        if game.over:
            return "game over; winner(s): " + ", ".join(f"player_{s}" for s in game.winners)
        if game.step == GOAL_STEP:
            return f"goal choice, player_{game.to_act} to choose"
        status = f"pass {game.step} ({PASS_COUNTS[game.step - 1]} cards each), player_{game.to_act} to pick"
        return status + (f" {game.picks_left} more" if picks_left else "")

    def _slot_names(self) -> list[str]:
        n = self.num_players
        return [f"player_{slot}" if slot < n else f"D{slot - n}" for slot in range(NUM_SLOTS)]

    def _display_lines(self, revealed: list[int]) -> list[str]:
        """The goal display (``revealed`` face up, the rest face down or not yet placed) and the passing ring."""
        game = self.game
        shown = [str(self.deck[card]) for card in revealed]
        shown += ["(face down)" if game.display else "(not placed)"] * (NUM_SLOTS - len(shown))
        names = self._slot_names()
        return [
            "goals: " + "  ".join(f"[{p + 1}] {text}" for p, text in enumerate(shown)),
            "passing: " + " -> ".join(names[slot] for slot in (*game.ring, game.ring[0])),
        ]

    def _render_text(self) -> str:
        game = self.game
        n = self.num_players
        deck = self.deck
        cards = self._cards_text
        status = self._status_text(picks_left=True)
        lines = [f"Llama Party, {n} players, round {game.round_number}/{NUM_ROUNDS}: {status}"]
        lines += self._display_lines(game.revealed)
        names = self._slot_names()
        for slot in range(NUM_SLOTS):
            goal = game.goal_of_slot[slot]
            goal_text = deck[goal].id if goal >= 0 else "-"
            if slot < n:
                rounds = ", ".join(f"{scores[slot]:+d}" for scores in game.round_scores) or "-"
                picks = f" | picked: {cards(game.staged[slot])}" if game.staged[slot] else ""
                lines.append(
                    f"{names[slot]}: total {game.totals[slot]} (rounds {rounds}), goal {goal_text}, "
                    f"hand: {cards(game.hands[slot])}{picks}"
                )
            else:
                lines.append(f"{names[slot]} (dummy): goal {goal_text}, hand: {cards(game.hands[slot])}")
        lines += self._shown_hands_lines()
        return "\n".join(lines)

    # ------------------------------------------------------------------ state API hooks (see TableEnv.clone)

    def _clone_game(self, new: TableEnv) -> None:
        new.game = self.game.copy(new._started_rng())
        new.encoder = copy.copy(self.encoder)  # __getstate__: the version-keyed table cache starts empty

    def _resample_hidden(self, world: TableEnv, seat: int, rng: np.random.Generator) -> None:
        # What is resampled and why it is uniform: tableenvs/llama_party/worlds.py.
        world.game = resample_hidden(world.game, seat, rng)

    def _world_event_log(self, seat: int) -> list[str]:
        return world_event_log(self.event_log, seat, self.num_players)

    def _state_options(self) -> dict[str, Any]:
        deck = None if self.deck == STANDARD_DECK else [card_record(card) for card in self.deck]
        return {"num_players": self.num_players, "deck": deck, "reward": self.reward_mode}

    def _state_reader(self) -> LlamaPartyReader:
        return LlamaPartyReader(self.deck, self.num_players)

    def _rules_from_state(self, rules: Any, rng: np.random.Generator) -> dict[str, Any]:
        encoder = copy.copy(self.encoder)  # __getstate__: an empty table cache
        return {**super()._rules_from_state(rules, rng), "encoder": encoder}  # __getstate__: an empty table cache

    def _picture_svg(self, seat: int | None) -> str:
        return table_svg(self, seat)

    def _public_picture_svg(self) -> str:
        return table_svg(self, None, public=True)

    def _render_view_text(self, seat: int) -> str:
        """The table as ``seat`` sees it (``LlamaParty.seen_by``): its own hand, picks and goal, the goals revealed
        so far (the others' goals and the face-down display stay hidden), the cards it passed and received, every
        total, and the hands shown at the last scoring. The others' hands (and the dummies') are never shown while a
        round runs."""
        game = self.game
        n = self.num_players
        cards = self._cards_text
        view = game.seen_by(seat)  # the one visibility decision (rules.SeatView)
        status = self._status_text(picks_left=False)
        if game.to_act == seat and not game.over:
            status += f" ({game.picks_left} more)"

        lines = [f"player_{seat}'s view", f"Llama Party, {n} players, round {game.round_number}/{NUM_ROUNDS}: {status}"]
        lines += self._display_lines(view.revealed)
        lines.append(f"your goal: {self.deck[view.goal] if view.goal >= 0 else '-'}")
        lines.append(f"your hand: {cards(view.hand)}")
        if view.picks:
            lines.append(f"your picks: {cards(view.picks)}")
        if view.passed or view.received:
            lines.append(f"passed this round: {cards(view.passed)}; received: {cards(view.received)}")
        for s in range(n):
            rounds = ", ".join(f"{scores[s]:+d}" for scores in game.round_scores) or "-"
            you = " (you)" if s == seat else ""
            lines.append(f"player_{s}{you}: total {game.totals[s]} (rounds {rounds})")
        lines += self._shown_hands_lines()
        return "\n".join(lines)

    # ------------------------------------------------------------------ helpers

    def _check_hands(self, hands: Any) -> list[list[int]]:
        """Reset option ``hands``: 4 lists of 8 cards (indices or ids), every card of the deck exactly once."""
        if not isinstance(hands, (list, tuple)) or len(hands) != NUM_SLOTS:
            raise ValueError(
                f"reset option hands must be {NUM_SLOTS} lists of {DEAL_SIZE} cards (seats 0..{self.num_players - 1}, "
                f"then dummies), got {hands!r}"
            )
        result = []
        for slot, hand in enumerate(hands):
            if not isinstance(hand, (list, tuple)) or len(hand) != DEAL_SIZE:
                raise ValueError(f"reset option hands[{slot}] must list {DEAL_SIZE} cards, got {hand!r}")
            result.append([self._card(card, f"hands[{slot}]") for card in hand])
        dealt = sorted(card for hand in result for card in hand)
        if dealt != list(range(DECK_SIZE)):
            repeated = sorted({card for card in dealt if dealt.count(card) > 1})
            raise ValueError(
                "reset option hands must deal every card exactly once; repeated: "
                + ", ".join(self.deck[card].id for card in repeated)
            )
        return result

    def _card(self, card: Any, where: str) -> int:
        if isinstance(card, str):
            if card not in self._card_index:
                raise ValueError(f"reset option {where}: unknown card id {card!r}")
            return self._card_index[card]
        return check_int(f"reset option {where} card", card, 0, DECK_SIZE - 1)


raw_env = LlamaPartyEnv


def env(**options: Any):
    """The wrapped env (illegal move ends the game with -1 to the mover), as PettingZoo classic envs are."""
    return wrap(raw_env(**options))
