"""Pili Pili as a PettingZoo AEC environment (``pilipili_v0``).

Where you are: the Pili Pili package's thin adapter. The rules live in ``rules.py``, action ids and the
observation in ``encoder.py``; this module only wires them to :class:`tableenvs.core.table_env.TableEnv`. Full rules,
decisions, the 36 missions, the action table and the observation layout: ``docs/pilipili.md``.

====================  =======================================================================================
Import                ``tableenvs.make("pilipili_v0")`` or ``from tableenvs import pilipili_v0; pilipili_v0.env()``
Agents                ``player_0 .. player_{n-1}`` (``num_players`` 2..8, default 5); seats clockwise
Actions               ``Discrete(234)``, one table for every decision: bid 0..28, play a number card, play the
                      wild as 0..56, pick a card to pass/give, name a player, decline a swap, play a hand
                      position, ready (see ``tableenvs.pilipili.encoder``)
Action mask           exact: 1 = legal for the agent to act; all zeros for the others
Observation           ``{"observation": float32 vector, "action_mask": int8 (234,)}``; the vector is seen from
                      the agent's seat (itself first): phase, own hand (when it may see it), own staged cards,
                      cards played this round, others' hands (forehead bidding / revealed hands), per-seat
                      dealer, leader, bids, tricks, chilis, hand sizes, current and last trick, designations;
                      round counters; the mission's effects; memorised hand positions; the last scored
                      round (bids, tricks, chilis, its last trick). Size
                      ``8 + 2 + 3*56 + (n-1)*56 + n*(17+n) + 5 + 108 + 28 + 1 + 7n`` (689 for 5 players)
Rewards               ``reward="penalty"`` (default): at each round's end, minus the chilis taken that round
                      (exact-bid discards counted back, so it can be positive); ``"win"``: at the game's end
                      +1 shared equally by the players with the fewest chilis, -1 to every other player
Episode end           terminated after the round in which someone holds >= 6 chilis; truncated after
                      ``max_rounds`` rounds (default 100)
Options               ``num_players`` (2..8), ``missions`` ("standard", "none", a deck file path, or a list of
                      mission tables), ``expert`` (bool, default True; False drops expert cards), ``reward``
                      ("penalty", "win"), ``max_rounds`` (int >= 1 or None), ``render_mode`` ("ansi", "human",
                      "rgb_array")
Reset options         scripted first round: ``dealer`` (seat), ``mission`` (mission id, or a mission table),
                      ``hands`` (n lists of card ids, 0 = wild), ``deck_order`` (the 56 card ids, dealt seat 0
                      first, the rest is the stock), ``chilis`` (n starting counts)
====================  =======================================================================================
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tableenvs.core.engine import win_rewards
from tableenvs.core.outcome import EndReason
from tableenvs.core.table_env import TableEnv
from tableenvs.core.validation import check_bool, check_choice, check_int, check_int_list
from tableenvs.core.wrappers import wrap
from tableenvs.decks import DeckError
from tableenvs.pilipili.encoder import Encoder
from tableenvs.pilipili.missions import BASIC_MISSION, Mission, load_missions, standard_missions
from tableenvs.pilipili.picture import table_svg
from tableenvs.pilipili.rules import CHILI_LIMIT, NUM_CARDS, Phase, PiliPiliGame, card_name, mission_record
from tableenvs.pilipili.state import PiliPiliReader
from tableenvs.pilipili.worlds import resample_hidden, world_event_log

REWARDS = ("penalty", "win")


class PiliPiliEnv(TableEnv, name="pilipili_v0"):
    """Pili Pili for 2..8 players; see the module docstring."""

    reset_option_keys = ("dealer", "mission", "hands", "deck_order", "chilis")

    def __init__(
        self,
        num_players: int = 5,
        missions: str | Path | list | None = "standard",
        expert: bool = True,
        reward: str = "penalty",
        max_rounds: int | None = 100,
        render_mode: str | None = None,
    ):
        num_players = check_int("num_players", num_players, 2, 8)
        self.expert = check_bool("expert", expert)
        self.reward_mode = check_choice("reward", reward, REWARDS)
        self.max_rounds = None if max_rounds is None else check_int("max_rounds", max_rounds, 1)
        self.missions = _resolve_missions(missions, self.expert)
        super().__init__(num_players, encoder=Encoder(num_players), render_mode=render_mode)
        self.game: PiliPiliGame | None = None

    # ------------------------------------------------------------------ hooks

    def _start(self, rng: np.random.Generator, options: dict[str, Any]) -> None:
        # Every option is checked before the game is built; the new game replaces the old one only once started.
        n = self.num_players
        dealer = options.get("dealer")
        if dealer is not None:
            dealer = check_int("dealer", dealer, 0, n - 1)
        chilis = options.get("chilis")
        if chilis is not None:
            chilis = check_int_list("chilis", chilis, 0, 5, length=n)
        mission = self._scripted_mission(options.get("mission"))
        hands = options.get("hands")
        if hands is not None:
            if isinstance(hands, np.ndarray):
                hands = hands.tolist()
            if not isinstance(hands, (list, tuple)) or len(hands) != n:
                raise ValueError(f"hands must be {n} lists of card ids (one per seat), got {hands!r}")
            hands = [check_int_list(f"hands[{s}]", hand, 0, NUM_CARDS - 1) for s, hand in enumerate(hands)]
        deck_order = options.get("deck_order")
        if deck_order is not None:
            deck_order = check_int_list("deck_order", deck_order, 0, NUM_CARDS - 1)
            repeated = sorted({card for card in deck_order if deck_order.count(card) > 1})
            if repeated or (hands is None and len(deck_order) != NUM_CARDS):
                raise ValueError(
                    f"deck_order must list the card ids 0..{NUM_CARDS - 1} (0 = wild) each exactly once; got "
                    f"{len(deck_order)} ids" + (f", repeating {repeated}" if repeated else "")
                )
        game = PiliPiliGame(n, self.missions, rng, max_rounds=self.max_rounds, log=[])
        try:
            game.start(dealer=dealer, chilis=chilis, mission=mission, hands=hands, deck_order=deck_order)
        except ValueError as error:
            raise ValueError(f"pilipili_v0 reset options: {error}") from None
        self.game = game
        self._drain_log()

    def _scripted_mission(self, mission: Any) -> Mission | None:
        if mission is None or isinstance(mission, Mission):
            return mission
        if isinstance(mission, dict):
            try:
                return load_missions([mission])[0]
            except DeckError as error:
                raise ValueError(f"reset option mission: {error}") from None
        is_id = isinstance(mission, (int, np.integer)) and not isinstance(mission, bool)
        if mission == "none" or (is_id and mission == 0):
            return BASIC_MISSION
        known = self.missions or standard_missions()
        if is_id:
            for card in known:
                if card.id == mission:
                    return card
        raise ValueError(
            f"reset option mission must be a mission id of the deck ({known[0].id}..{known[-1].id}), 0 or 'none' "
            f"(no mission) or a mission table; got {mission!r} ({type(mission).__name__})"
        )

    def _started_game(self) -> PiliPiliGame:
        """The game of the last ``reset()``. TableEnv runs no hook before the first one, so None here is a bug."""
        game = self.game
        if game is None:
            raise RuntimeError("pilipili_v0: no game yet (call reset() first)")
        return game

    def _apply(self, action: int):
        game = self._started_game()
        self.encoder.apply(game, action)
        self._drain_log()
        if not game.round_scored:
            return None
        game.round_scored = False
        if self.reward_mode == "penalty":
            return [-change for change in game.last_round_change]
        if game.over and not game.truncated:
            return win_rewards(self.num_players, game.winners)
        return None

    def _is_over(self) -> bool:
        game = self._started_game()
        return game.over and not game.truncated

    def _is_truncated(self) -> bool:
        return self._started_game().truncated

    score_name = "chilis"
    higher_is_better = False
    end_reasons = (
        EndReason("chili_limit", f"a player holds {CHILI_LIMIT} or more chilis after a round"),
        EndReason("max_rounds", "cut short after max_rounds rounds", truncated=True),
    )

    def _final_scores(self) -> list[float]:
        return [float(x) for x in self._started_game().chilis]

    def _render_text(self) -> str:
        game = self._started_game()
        m = game.mission
        lines = [
            f"round {game.rounds_completed + (0 if game.over else 1)} | mission {m.id} "
            f"{m.name!r} (hand {game.hand_size}): {m.describe()}",
            f"phase {game.phase.name.lower()}"
            + ("" if game.over else f", to act: player_{game.to_act}")
            + f", tricks played {game.tricks_played}/{game.total_tricks}",
        ]
        for s in range(self.num_players):
            marks = ("D" if s == game.dealer else " ") + (">" if s == game.to_act and not game.over else " ")
            bid = "-" if game.bids[s] < 0 else str(game.bids[s])
            hand = " ".join(card_name(c) for c in sorted(game.hands[s]))
            named = f" names player_{game.designations[s]}" if game.designations[s] >= 0 else ""
            lines.append(
                f"{marks} player_{s}: chilis {game.chilis[s]:2d} | bid {bid:>2} won {game.tricks_won[s]}{named} | "
                f"hand [{hand}]"
            )
        if game.trick:
            lines.append("trick: " + ", ".join(f"player_{s} {_played(c, v)}" for s, c, v in game.trick))
        lines += self._public_ending_lines()
        return "\n".join(lines)

    # ------------------------------------------------------------------ state API hooks (see TableEnv.clone)

    def _clone_game(self, new: TableEnv) -> None:
        new.game = self._started_game().copy(new._started_rng())
        new.encoder = self.encoder.copy()

    def _resample_hidden(self, world: TableEnv, seat: int, rng: np.random.Generator) -> None:
        # What is relabelled and how far from uniform that is: tableenvs/pilipili/worlds.py.
        resample_hidden(world.game, seat, rng)

    def _world_event_log(self, seat: int) -> list[str]:
        return world_event_log(self._started_game(), self.event_log, seat)

    def _state_options(self) -> dict[str, Any]:
        if self.missions is None:
            missions: Any = "none"
        elif self.missions == standard_missions(expert=self.expert):
            missions = "standard"
        else:
            missions = [mission_record(mission) for mission in self.missions]
        return {
            "num_players": self.num_players,
            "missions": missions,
            "expert": self.expert,
            "reward": self.reward_mode,
            "max_rounds": self.max_rounds,
        }

    def _state_reader(self) -> PiliPiliReader:
        return PiliPiliReader(self.num_players, self.missions, self.max_rounds)

    def _rules_from_state(self, rules: Any, rng: np.random.Generator) -> dict[str, Any]:
        return {**super()._rules_from_state(rules, rng), "encoder": self.encoder.copy()}

    def _describe_action_public(self, action: int) -> str:
        """Bids, plays (face down under simultaneous play), names, declines and ready are public; which card is
        passed or given is not, nor (to the others) the value a memorised wild is declared as."""
        game = self._started_game()
        text = self.encoder.describe(game, action)
        if game.phase in (Phase.PASS, Phase.SWAP_GIVE):
            return f"{text.split()[0]} a card"
        if game.phase == Phase.DECLARE:
            return "moves"
        if game.phase == Phase.PLAY and game.mission.simultaneous:
            return "plays a card face down"
        return text

    def _picture_svg(self, seat: int | None) -> str:
        return table_svg(self, seat)

    def _public_picture_svg(self) -> str:
        return table_svg(self, None, public=True)

    def _public_ending_lines(self) -> list[str]:
        """The previous round's summary and the result: public, the same in the god view and every seat's view."""
        game, lines = self._started_game(), []
        summary = game.last_scored
        if summary is not None:
            seats = "; ".join(
                f"player_{s} bid {summary.bids[s]} won {summary.tricks_won[s]} took {summary.taken[s]}"
                + (f" discarded {summary.discarded[s]}" if summary.discarded[s] else "")
                for s in range(self.num_players)
            )
            last = ", ".join(f"player_{s} {_played(c, v)}" for s, c, v in summary.last_trick)
            lines.append(f"previous round: {seats}")
            lines.append(f"previous round's last trick: {last} (won by player_{summary.last_winner})")
        if game.over:
            if game.truncated:
                lines.append(f"cut short after {game.rounds_completed} rounds")
            else:
                lines.append("winner(s): " + ", ".join(f"player_{s}" for s in game.winners))
        return lines

    def _render_view_text(self, seat: int) -> str:
        """The table as ``seat`` sees it: what its observation encodes, in words (``docs/pilipili.md``).

        Its own hand only when it may look at it (forehead, blind, timed look and memorise rules); the others'
        hands only when forehead-visible (bidding) or revealed (play); under simultaneous play the others' cards
        in the current trick stay face down; everything public (bids, tricks, chilis, hand sizes, played cards,
        the mission, the previous round) as in ``render()``.
        """
        game = self._started_game()
        m = game.mission
        view = game.seen_by(seat)  # the one visibility decision (rules.SeatView)
        phase = view.phase
        lines = [
            f"player_{seat}'s view",
            f"round {game.rounds_completed + (0 if game.over else 1)} | mission {m.id} "
            f"{m.name!r} (hand {game.hand_size}): {m.describe()}",
            f"phase {phase.name.lower()}"
            + ("" if game.over else f", to act: player_{game.to_act}")
            + f", tricks played {game.tricks_played}/{game.total_tricks}",
        ]
        own_visible, others_visible = view.own_hand, view.other_hands
        for s in range(self.num_players):
            marks = ("D" if s == game.dealer else " ") + (">" if s == game.to_act and not game.over else " ")
            bid = "-" if game.bids[s] < 0 else str(game.bids[s])
            named = f" names player_{game.designations[s]}" if m.designate and game.designations[s] >= 0 else ""
            swap = " (swap)" if phase == Phase.SWAP_GIVE and s in (game.swap_winner, game.swap_target) else ""
            count = len(game.hands[s])
            if (s == seat and own_visible) or (s != seat and others_visible):
                hand = "hand [" + " ".join(card_name(c) for c in sorted(game.hands[s])) + "]"
            else:
                hand = f"hand {count} card(s) face down"
            you = " (you)" if s == seat else ""
            lines.append(
                f"{marks} player_{s}{you}: chilis {game.chilis[s]:2d} | bid {bid:>2} won {game.tricks_won[s]}"
                f"{named}{swap} | {hand}"
            )
        if own_visible and game.staged[seat]:
            lines.append("your picks: " + " ".join(card_name(c) for c in sorted(game.staged[seat])))
        if m.memorise and game.position_used[seat]:
            free = [str(p) for p, used in enumerate(game.position_used[seat]) if not used]
            lines.append("your unplayed hand positions: " + (" ".join(free) or "-"))
        if phase == Phase.PASS and game.to_act == seat and not game.over:
            lines.append(f"cards left to pick: {game.pass_count() - len(game.staged[seat])}")
        if game.played_cards:
            lines.append("played this round: " + " ".join(card_name(c) for c in sorted(game.played_cards)))
        if game.trick:
            shown = [
                f"player_{s} {_played(c, v)}" if not view.trick_face_down or s == seat else f"player_{s} (face down)"
                for s, c, v in game.trick
            ]
            lines.append("trick: " + ", ".join(shown))
        if game.last_trick:
            last = ", ".join(f"player_{s} {_played(c, v)}" for s, c, v in game.last_trick)
            lines.append(f"last trick: {last} (won by player_{game.last_winner})")
        if any(game.last_round_change):
            lines.append("last change in chilis: " + ", ".join(f"{x:+d}" for x in game.last_round_change))
        lines += self._public_ending_lines()
        return "\n".join(lines)


def _played(card: int, value: int) -> str:
    return f"W={value}" if card == 0 else str(card)


_MISSIONS_ALLOWED = "'standard', 'none', a deck file path (.toml or .json), a list of mission tables or None"


def _resolve_missions(missions: Any, expert: bool) -> list[Mission] | None:
    if missions is None or (isinstance(missions, str) and missions == "none"):
        return None
    if isinstance(missions, str) and missions == "standard":
        return standard_missions(expert=expert)
    if isinstance(missions, (str, Path)) and not Path(missions).is_file():
        raise ValueError(
            f"missions must be {_MISSIONS_ALLOWED}; got {str(missions)!r}: "
            "no such name, and that deck file does not exist"
        )
    if isinstance(missions, (str, Path, list)):
        try:
            return load_missions(missions, expert=expert)
        except DeckError as error:
            raise ValueError(f"missions: {error}") from None
    raise ValueError(f"missions must be {_MISSIONS_ALLOWED}; got {missions!r} ({type(missions).__name__})")


raw_env = PiliPiliEnv


def env(**options: Any):
    """The wrapped env (illegal move ends the game with -1 to the mover), as PettingZoo classic ``env()``."""
    return wrap(raw_env(**options))


__all__ = ["PiliPiliEnv", "Phase", "env", "raw_env"]
