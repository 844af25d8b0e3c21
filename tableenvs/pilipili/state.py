"""Pili Pili's rules state read back from its record: :func:`game_from_record`, the inverse of
``PiliPiliGame.to_record``, checked in full (:func:`check_round`: a position the rules can reach).

Where you are: the Pili Pili package, beside the rules engine (``rules.py``, which writes the records and knows
nothing of this module); ``TableEnv.set_state`` and ``from_state`` reach it through the adapter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from tableenvs.core import state
from tableenvs.decks import DeckError
from tableenvs.pilipili.missions import BASIC_MISSION, MAX_HAND_SIZE, Mission, load_missions
from tableenvs.pilipili.rules import (
    BID,
    CHILI_LIMIT,
    DECLARE,
    DESIGNATE,
    GAME_OVER,
    LOOK,
    MAX_WILD_VALUE,
    NUM_CARDS,
    PASS,
    PLAY,
    SCALAR_FIELDS,
    SWAP_GIVE,
    SWAP_NAME,
    WILD,
    Phase,
    PiliPiliGame,
    RoundSummary,
    effective_hand_size,
    mission_record,
)

#: The keys of one entry of a record's round history
_HISTORY_KEYS = (
    *("mission", "dealer", "hand_size", "bids", "tricks_won", "extras", "designations", "tricks", "discarded"),
    *("chilis_before", "chilis_after"),
)


@dataclass(frozen=True)
class PiliPiliReader:
    """Reads a Pili Pili engine back from its record with an env's options (a
    :class:`~tableenvs.core.engine.StateReader`)."""

    num_players: int
    missions: list[Mission] | None
    max_rounds: int | None

    def read(self, record: Any, rng: np.random.Generator) -> PiliPiliGame:
        return game_from_record(
            record, num_players=self.num_players, missions=self.missions, max_rounds=self.max_rounds, rng=rng, log=[]
        )


if TYPE_CHECKING:
    from tableenvs.core.engine import StateReader

    _reader: type[StateReader[PiliPiliGame]] = PiliPiliReader


def game_from_record(
    record: dict[str, Any],
    *,
    num_players: int,
    missions: list[Mission] | None,
    max_rounds: int | None,
    rng: np.random.Generator,
    log: list[str] | None,
) -> PiliPiliGame:
    """A game from ``PiliPiliGame.to_record``'s dict; :class:`~tableenvs.core.state.StateError` naming a bad field.

    Besides each field's type and range, the record must be consistent (``docs/pilipili.md``, State API): every
    card once; the phase one the mission has, and the counters, bids, picks, hands, tricks, hand positions and
    the seat to act what that phase and the round so far give; the round history, the last scored round, chilis,
    winners and the end agreeing with each other (:func:`check_round`).
    """
    n = num_players
    game = PiliPiliGame(n, missions, rng, max_rounds=max_rounds, log=log)
    where = "rules"

    def get(key: str) -> Any:
        return state.field(record, key, where)

    value: int  # a bool for the flags
    for key in SCALAR_FIELDS:
        if key in ("revealed", "truncated", "round_scored"):
            value = state.as_bool(get(key), f"{where}.{key}")
        else:
            high = max_rounds if key == "rounds_completed" and max_rounds is not None else NUM_CARDS
            if key == "rounds_completed" and max_rounds is None:
                high = state.MAX_ITEMS
            value = state.as_int(get(key), f"{where}.{key}", -1, high)
        setattr(game, key, value)
    game.phase = Phase(state.as_int(get("phase"), f"{where}.phase", 0, GAME_OVER))
    for key in ("chilis", "winners", "bids", "tricks_won", "extras", "designations", "stock", "played_cards"):
        most = n if key == "winners" else NUM_CARDS
        setattr(game, key, state.int_list(get(key), f"{where}.{key}", -1, NUM_CARDS, most=most))
    game.last_round_change = state.int_list(
        get("last_round_change"), f"{where}.last_round_change", -NUM_CARDS, 4 * NUM_CARDS, n
    )
    for key in ("bids", "tricks_won", "extras", "designations", "chilis"):
        if len(getattr(game, key)) != n:
            raise state.StateError(f"{where}.{key} must have {n} items")
    for key in ("hands", "staged", "position_cards"):
        lists = state.int_lists(get(key), f"{where}.{key}", 0, NUM_CARDS - 1, n, inner_most=NUM_CARDS)
        setattr(game, key, lists)
    # ``given`` came with sample_world (records saved before it have none: nothing known to be given)
    game.given = state.int_lists(
        record.get("given", [[]] * n), f"{where}.given", 0, NUM_CARDS - 1, n, inner_most=2 * NUM_CARDS
    )
    game.position_used = [
        state.bool_list(used, f"{where}.position_used[{s}]", most=MAX_HAND_SIZE)
        for s, used in enumerate(state.as_list(get("position_used"), f"{where}.position_used", n))
    ]
    game.trick = _plays(get("trick"), f"{where}.trick", n)
    game.last_trick = _plays(get("last_trick"), f"{where}.last_trick", n)
    game.round_tricks = [
        _trick(entry, f"{where}.round_tricks[{i}]", n)
        for i, entry in enumerate(state.as_list(get("round_tricks"), f"{where}.round_tricks", most=MAX_HAND_SIZE))
    ]
    game.mission = mission_from_record(get("mission"), missions)
    deck = missions or []
    game._mission_pile = [
        deck[i] for i in state.int_list(get("mission_pile"), f"{where}.mission_pile", 0, len(deck) - 1, most=len(deck))
    ]
    state.distinct([id(mission) for mission in game._mission_pile], f"{where}.mission_pile")
    summary = get("last_scored")
    if summary is not None:
        bids, won, taken, discarded, last_trick, last_winner = state.as_list(summary, f"{where}.last_scored", 6)
        bid_list, won_list, taken_list, discarded_list = (
            state.int_list(x, f"{where}.last_scored.{name}", 0, 4 * NUM_CARDS, n)
            for name, x in (("bids", bids), ("tricks_won", won), ("taken", taken), ("discarded", discarded))
        )
        summary = RoundSummary(
            bid_list,
            won_list,
            taken_list,
            discarded_list,
            _plays(last_trick, f"{where}.last_scored.last_trick", n),
            state.as_int(last_winner, f"{where}.last_scored.last_winner", 0, n - 1),
        )
    game.last_scored = summary
    most = state.MAX_ITEMS if max_rounds is None else max_rounds
    history = state.as_list(get("round_history"), f"{where}.round_history", most=most)
    game.round_history = [_history_entry(entry, f"{where}.round_history[{i}]", n) for i, entry in enumerate(history)]
    if not (0 <= game.to_act < n and 0 <= game.dealer < n and 0 <= game.leader < n):
        raise state.StateError(f"{where}: to_act, dealer and leader must be seats 0..{n - 1}")
    cards = sorted([c for hand in game.hands for c in hand] + game.stock + game.played_cards)
    cards = sorted(cards + [card for _, card, _ in game.trick])
    if cards != list(range(NUM_CARDS)):
        raise state.StateError(f"{where}: hands, stock, trick and played cards must hold every card 0..55 once")
    check_round(game, where)
    return game


# Fields of the game by kind, for copies and records.


def _plays(value: object, where: str, n: int) -> list[tuple[int, int, int]]:
    """A list of at most ``n`` ``(seat, card, value)`` plays from a record (seats distinct, a number card's value its
    own number, the wild's 0..56)."""
    plays = []
    for i, play in enumerate(state.as_list(value, where, most=n)):
        seat, card, worth = state.int_list(play, f"{where}[{i}]", 0, MAX_WILD_VALUE, length=3)
        if seat >= n or card >= NUM_CARDS or (card != WILD and worth != card):
            raise state.StateError(
                f"{where}[{i}] must be [seat 0..{n - 1}, card 0..{NUM_CARDS - 1}, its value], got {[seat, card, worth]}"
            )
        plays.append((seat, card, worth))
    state.distinct([play[0] for play in plays], f"{where}: the seats")
    return plays


def _trick(value: object, where: str, n: int) -> tuple[list[tuple[int, int, int]], int]:
    """A finished trick ``(plays, winner)`` from a record."""
    plays, winner = state.as_list(value, where, 2)
    return _plays(plays, f"{where}[0]", n), state.as_int(winner, f"{where}[1]", 0, n - 1)


def _history_entry(value: object, where: str, n: int) -> dict[str, Any]:
    """One ``round_history`` entry (its keys, types and sizes checked; a copy: the record stays as it was)."""
    if not isinstance(value, dict) or sorted(value) != sorted(_HISTORY_KEYS):
        raise state.StateError(f"{where} must be a dict with the keys {', '.join(_HISTORY_KEYS)}")
    entry: dict[str, Any] = {}
    for key in _HISTORY_KEYS:
        item = value[key]
        if key in ("mission", "dealer", "hand_size"):
            high = {"mission": state.MAX_INT, "dealer": n - 1, "hand_size": MAX_HAND_SIZE}[key]
            entry[key] = state.as_int(item, f"{where}.{key}", 0, high)
        elif key == "tricks":
            tricks = state.as_list(item, f"{where}.tricks", most=MAX_HAND_SIZE)
            entry[key] = [_trick(trick, f"{where}.tricks[{i}]", n) for i, trick in enumerate(tricks)]
        else:
            low = -1 if key == "designations" else 0
            entry[key] = state.int_list(item, f"{where}.{key}", low, 4 * NUM_CARDS, n)
    return entry


def check_round(game: PiliPiliGame, where: str) -> None:
    """:class:`~tableenvs.core.state.StateError` unless ``game`` (its fields read and typed) is a consistent position:
    one that the rules can reach, as far as it matters to playing on and to what the observations show."""
    require = state.require
    n, m, phase = game.n, game.mission, game.phase
    h = game.hand_size
    total = game.total_tricks
    seats = range(n)
    over = phase == GAME_OVER
    require(h == effective_hand_size(m, n), f"{where}.hand_size", f"mission {m.id} deals {effective_hand_size(m, n)}")
    require(total == h + m.extra_draw, f"{where}.total_tricks", "a round has one trick per card in hand")
    require(phase != LOOK or m.has_look, f"{where}.phase", f"mission {m.id} has no look")
    require(phase != DESIGNATE or m.designate, f"{where}.phase", f"mission {m.id} has no designation")
    require(phase != PASS or m.pass_count, f"{where}.phase", f"mission {m.id} passes no cards")
    require(phase != DECLARE or m.memorise, f"{where}.phase", "a wild is declared apart only under memorise")
    require(phase not in (SWAP_NAME, SWAP_GIVE) or m.swap, f"{where}.phase", f"mission {m.id} has no swap")
    require(not game.round_scored, f"{where}.round_scored", "the env clears it after each move")
    # ---- the scored rounds: history, chilis, the last scored round, the end
    history = game.round_history
    rounds = game.rounds_completed
    require(len(history) == rounds, f"{where}.round_history", f"must hold one entry per round completed ({rounds})")
    for i, entry in enumerate(history):
        after = history[i + 1]["chilis_before"] if i + 1 < len(history) else game.chilis
        require(entry["chilis_after"] == after, f"{where}.round_history[{i}]", "chilis_after is the next round's start")
        require(max(entry["chilis_before"]) < CHILI_LIMIT, f"{where}.round_history[{i}]", "chilis_before are below 6")
    change = (
        [after - before for after, before in zip(game.chilis, history[-1]["chilis_before"], strict=True)]
        if history
        else None
    )
    require(
        game.last_round_change == (change or [0] * n),
        f"{where}.last_round_change",
        "the chilis the last scored round changed (0 before the first)",
    )
    summary = game.last_scored
    require((summary is None) == (not history), f"{where}.last_scored", "None exactly until a round is scored")
    if summary is not None:
        last = history[-1]
        plays, winner = last["tricks"][-1] if last["tricks"] else ([], -1)
        require(
            summary.bids == last["bids"]
            and summary.tricks_won == last["tricks_won"]
            and summary.discarded == last["discarded"]
            and summary.taken == [c + d for c, d in zip(game.last_round_change, last["discarded"], strict=True)]
            and summary.last_trick == plays
            and summary.last_winner == winner,
            f"{where}.last_scored",
            "must summarise the last round of round_history",
        )
    chilis = game.chilis
    require(min(chilis) >= 0, f"{where}.chilis", "chilis are never negative")
    if over:
        require(rounds >= 1, f"{where}.phase", "a game ends when a round is scored")
        ended_by_chilis = max(chilis) >= CHILI_LIMIT
        require(
            game.truncated == (not ended_by_chilis),
            f"{where}.truncated",
            f"a game over ends by {CHILI_LIMIT} chilis or, short of them, is cut short by max_rounds",
        )
        require(
            ended_by_chilis or (game.max_rounds is not None and rounds >= game.max_rounds),
            f"{where}.rounds_completed",
            "a game is cut short only after max_rounds rounds",
        )
        low = min(chilis)
        expected = [s for s in seats if chilis[s] == low] if ended_by_chilis else []
        require(game.winners == expected, f"{where}.winners", "the fewest chilis win a game that ends by chilis")
        last = history[-1]
        require(
            last["bids"] == game.bids
            and last["tricks_won"] == game.tricks_won
            and last["extras"] == game.extras
            and last["designations"] == game.designations
            and last["tricks"] == game.round_tricks
            and last["dealer"] == game.dealer
            and last["hand_size"] == h
            and last["mission"] == m.id,
            f"{where}.round_history",
            "the game is over: the last entry is the round on the table",
        )
    else:
        require(not game.truncated and not game.winners, f"{where}.truncated", "the game is running")
        require(max(chilis) < CHILI_LIMIT, f"{where}.chilis", f"{CHILI_LIMIT} chilis after a round end the game")
        require(
            game.max_rounds is None or rounds < game.max_rounds,
            f"{where}.rounds_completed",
            "max_rounds rounds end the game",
        )
        if history:
            require(
                history[-1]["dealer"] == (game.dealer - 1) % n,
                f"{where}.dealer",
                "the deal passes to the left after each round",
            )
    # ---- the round on the table
    playing = phase in (PLAY, DECLARE, SWAP_NAME, SWAP_GIVE) or over
    bidding_done = phase not in (LOOK, BID)
    order = [(game.first_bidder() + k * m.bid_direction) % n for k in seats]
    made = game.bids_made
    if bidding_done:
        require(made == n, f"{where}.bids_made", "every player has bid")
    else:
        require(0 <= made < n if phase == BID else made == 0, f"{where}.bids_made", f"not in 0..{n - 1} when bidding")
        require(phase != BID or game.to_act == order[made], f"{where}.to_act", "bids go round from the first bidder")
    for k, s in enumerate(order):
        bid = game.bids[s]
        require(
            (0 <= bid <= h) if k < made else bid == -1,
            f"{where}.bids[{s}]",
            f"player_{s} has {'bid 0..' + str(h) if k < made else 'not bid'}",
        )
    require(
        game.last_bid == (game.bids[order[made - 1]] if made else -1),
        f"{where}.last_bid",
        "the last bid made (-1 before the first)",
    )
    in_turns = phase in (LOOK, DESIGNATE, PASS)
    require(0 <= game.acted < n if in_turns else game.acted == 0, f"{where}.acted", "decisions taken in this phase")
    done = [(game.dealer + i) % n for i in range(game.acted)] if in_turns else []
    if in_turns:
        require(game.to_act == (game.dealer + game.acted) % n, f"{where}.to_act", "turns go round from the dealer")
    designated = phase not in (LOOK, BID, DESIGNATE) and m.designate
    for s in seats:
        target = game.designations[s]
        named = designated or (phase == DESIGNATE and s in done)
        require(
            (0 <= target < n and target != s) if named else target == -1,
            f"{where}.designations[{s}]",
            "another player once named, else -1",
        )
    # tricks, cards played, the seat to act in play
    tricks = game.round_tricks
    played = game.tricks_played
    require(len(tricks) == played, f"{where}.round_tricks", f"one entry per trick played ({played})")
    require(played <= total and (played < total or over), f"{where}.tricks_played", f"at most {total}, fewer in play")
    require(playing or not tricks, f"{where}.tricks_played", "no trick is played before the play")
    require(
        game.played_cards == [card for plays, _ in tricks for _, card, _ in plays],
        f"{where}.played_cards",
        "the cards of the round's finished tricks, in order",
    )
    lead = game.dealer
    extras = [0] * n
    won = [0] * n
    for i, (plays, winner) in enumerate(tricks):
        require(
            len(plays) == n and all(s == (lead + j) % n for j, (s, _, _) in enumerate(plays)),
            f"{where}.round_tricks[{i}]",
            "every player plays once, in turn from the leader (the last trick's winner)",
        )
        best = max(plays, key=lambda play: game.strength(play[1], play[2]))[0]
        require(winner == best, f"{where}.round_tricks[{i}]", f"player_{best} wins this trick")
        cards = [card for _, card, _ in plays]
        extra = (i == 0) + (i + 1 == total) if m.first_last_trick else 0
        if m.listed_numbers:
            hits = sum(card in m.listed_numbers for card in cards)
            extra += hits if m.listed_each else min(hits, 1)
        extras[winner] += extra
        won[winner] += 1
        lead = winner
    require(game.tricks_won == won, f"{where}.tricks_won", "the tricks each player won this round")
    require(game.extras == extras, f"{where}.extras", "the chilis the mission adds for the tricks won")
    require(
        game.leader == lead, f"{where}.leader", "the dealer leads the first trick, the last trick's winner the next"
    )
    last_plays, last_winner = tricks[-1] if tricks else ([], -1)
    require(game.last_trick == last_plays, f"{where}.last_trick", "the round's last finished trick")
    require(game.last_winner == last_winner, f"{where}.last_winner", "the winner of the last trick (-1 before)")
    trick = game.trick
    require(
        all(s == (lead + j) % n for j, (s, _, _) in enumerate(trick)),
        f"{where}.trick",
        "plays go in turn from the leader",
    )
    require(phase in (PLAY, DECLARE) or not trick, f"{where}.trick", "a trick is played only in the play")
    if phase in (PLAY, DECLARE):
        require(game.to_act == (lead + len(trick)) % n, f"{where}.to_act", "the next player of the trick")
    if phase in (SWAP_NAME, SWAP_GIVE, GAME_OVER):
        require(played >= 1, f"{where}.tricks_played", "a trick has been played")
        require(phase == SWAP_GIVE or game.to_act == lead, f"{where}.to_act", "the last trick's winner")
    swapping = phase == SWAP_GIVE
    pair = (game.swap_winner, game.swap_target)
    if swapping:
        require(
            game.swap_winner == lead and 0 <= game.swap_target < n and game.swap_target != lead,
            f"{where}.swap_target",
            "the trick's winner swaps with another player",
        )
        require(game.to_act in pair, f"{where}.to_act", "one of the swapping players gives")
    elif playing and m.swap:
        require(
            pair == (-1, -1) or (0 <= pair[0] < n and 0 <= pair[1] < n and pair[0] != pair[1]),
            f"{where}.swap_winner",
            "the last swap's players, or -1",
        )
    else:
        require(pair == (-1, -1), f"{where}.swap_winner", "no swap this round: -1")
    require(game.revealed == (playing and m.reveal), f"{where}.revealed", "hands are revealed after the passing")
    # hands, picks, stock, given cards
    in_trick = {s for s, _, _ in trick}
    pass_count = game.pass_count()
    for s in seats:
        hand, staged = game.hands[s], game.staged[s]
        size = total - played - (s in in_trick) if playing else h
        require(len(hand) == size, f"{where}.hands[{s}]", f"player_{s} must hold {size} cards now")
        if phase == PASS:
            picks = pass_count if s in done else 0 if s != game.to_act else None
            require(
                len(staged) == picks if picks is not None else len(staged) < pass_count,
                f"{where}.staged[{s}]",
                f"the cards player_{s} picked to pass so far",
            )
        elif swapping and game.to_act == game.swap_target and s == game.swap_winner:
            require(len(staged) == 1, f"{where}.staged[{s}]", "the card the trick's winner gives")
        else:
            require(not staged, f"{where}.staged[{s}]", "no card is picked now")
        require(
            len(set(staged)) == len(staged) and set(staged) <= set(hand),
            f"{where}.staged[{s}]",
            "picks are distinct cards of the hand",
        )
        given = len(game.given[s])
        base = (h if m.pass_all else pass_count) if playing else 0
        require(
            base <= given <= base + (played if m.swap else 0),
            f"{where}.given[{s}]",
            "the cards player_{s} passed and swapped away this round",
        )
    stock = NUM_CARDS - n * (total if playing else h)
    require(len(game.stock) == stock, f"{where}.stock", f"{stock} cards are left in the stock")
    # memorise: the hand positions seen at the look
    for s in seats:
        cards, used = game.position_cards[s], game.position_used[s]
        looked = m.memorise and (phase != LOOK or s in done)
        if not looked:
            require(not cards and not used, f"{where}.position_cards[{s}]", "hand positions only after a memorise look")
            continue
        require(
            len(cards) == h and len(used) == h and cards == sorted(cards),
            f"{where}.position_cards[{s}]",
            f"the {h} cards seen at the look, sorted",
        )
        left = sorted(card for card, gone in zip(cards, used, strict=True) if not gone)
        if phase == DECLARE and s == game.to_act:
            left = sorted([*left, WILD])
        require(sorted(game.hands[s]) == left, f"{where}.position_used[{s}]", "the hand is the positions not played")


def mission_from_record(record: object, missions: list[Mission] | None) -> Mission:
    """The deck's (or the basic) mission with this table, else the table read as a new mission."""
    for mission in (*(missions or ()), BASIC_MISSION):
        if state.plain(mission_record(mission)) == state.plain(record):
            return mission
    try:
        return load_missions([record])[0]
    except (DeckError, TypeError, KeyError) as error:
        raise state.StateError(f"rules.mission: not a valid mission table: {error}") from None
