"""Pili Pili mission cards: the data model, the deck file's JSON Schema and the loader.

Where you are: the Pili Pili package (``tableenvs/pilipili/``). A deck is a data file (TOML or JSON) with
one ``[[mission]]`` table per card; ``missions.toml`` next to this module is the standard 36-card deck.
:func:`load_missions` validates a deck (schema first, then the cross-field rules below) and returns
:class:`Mission` objects the rules engine reads. Nothing here knows about RL.

A mission card has an ``id`` (unique positive integer), a ``hand_size`` (the number in its corner, 1..28),
an ``expert`` flag, an optional ``name`` and a list of ``effects``; each effect is a table with a ``type``
and that type's parameters:

=============================  ===========================  ================================================
type                           parameters                   effect
=============================  ===========================  ================================================
``pass_left``                  ``count`` (1..27)            after bidding, pass ``count`` cards to the left
``pass_right``                 ``count`` (1..27)            after bidding, pass ``count`` cards to the right
``pass_hand``                  ``direction`` (left/right)   after bidding, pass the whole hand
``forbid_bid``                 ``bid`` (0..28)              nobody may bid this number (0 or 1 in the deck)
``forehead``                   --                           bid seeing the others' hands but not your own
``blind``                      --                           bid seeing no hand at all
``extra_draw``                 ``count`` (1..3, default 1)  after bidding, everyone draws ``count`` cards
``reveal_hands``               --                           after bidding, all hands are face up
``exact_bid_reward`` (expert)  --                           hit your bid exactly: discard chilis = your bid
``simultaneous_play`` (expert) --                           a trick's cards are hidden until all have chosen
``reversed_values`` (expert)   --                           the lowest value wins each trick
``timed_look`` (expert)        --                           look at your hand once, then bid without it
``first_last_trick`` (expert)  --                           +1 chili for winning the first and the last trick
``memorise`` (expert)          --                           look once; bid and play blind, by hand position
``no_copy_bid`` (expert)       --                           you may not bid what the previous bidder bid
``designate`` (expert)         --                           name a player; also take its round penalty
``highest_or_lowest`` (expert) --                           play only your highest or lowest card
``listed_numbers`` (expert)    ``numbers``, ``each``        +1 chili per won trick holding a listed number
``swap_after_trick`` (expert)  --                           a trick's winner may swap one card with a player
``bidding_order``              ``start``, ``direction``     bidding starts at ``start`` (``dealer``,
                                                            ``left_of_dealer``, ``right_of_dealer``) and goes
                                                            ``clockwise`` or ``counterclockwise``
=============================  ===========================  ================================================

The "(expert)" column is descriptive only: a card's ``expert`` flag decides whether ``expert=False``
removes it. Cross-field rules checked by the loader: ids are unique; an effect type appears at most once
per card; at most one passing effect; at most one of ``forehead``, ``blind``, ``timed_look``,
``memorise``; ``memorise`` combines with none of the passing effects, ``extra_draw``, ``reveal_hands``,
``highest_or_lowest`` or ``swap_after_trick`` (each would make a face-down hand change or be seen);
a passed ``count`` is below the card's hand size; ``hand_size + extra_draw`` is at most 28.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tableenvs.decks import DeckError, load_deck, read_package_data

NUM_NUMBER_CARDS = 55
MAX_HAND_SIZE = 28  # 56 cards between at least 2 players
MAX_EXTRA_DRAW = 3

_COUNT = {"type": "integer", "minimum": 1, "maximum": MAX_HAND_SIZE - 1}


@dataclass(frozen=True)
class EffectType:
    """One mission effect type: its deck-file parameters and how the loader and ``describe`` read it.

    ``parameters``: JSON Schema of each parameter; ``required``: the ones a card must give; ``flag``: the
    :class:`Mission` field set to True by an effect without parameters (those with parameters are read in
    :func:`mission_from_dict`); ``text``: the short English text, a format string over the parameters.
    """

    parameters: dict[str, Any] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    flag: str = ""
    text: str = ""


#: Every mission effect type, the one list the schema, the loader and the texts are built from (the module
#: docstring and ``docs/pilipili.md`` describe the same list; tests check them against it).
EFFECTS: dict[str, EffectType] = {
    "pass_left": EffectType({"count": _COUNT}, ("count",), text="pass {count} card(s) left after bidding"),
    "pass_right": EffectType({"count": _COUNT}, ("count",), text="pass {count} card(s) right after bidding"),
    "pass_hand": EffectType(
        {"direction": {"enum": ["left", "right"]}}, ("direction",), text="pass the whole hand {direction} after bidding"
    ),
    "forbid_bid": EffectType(
        {"bid": {"type": "integer", "minimum": 0, "maximum": MAX_HAND_SIZE}},
        ("bid",),
        text="bidding {bid} is forbidden",
    ),
    "extra_draw": EffectType(
        {"count": {"type": "integer", "minimum": 1, "maximum": MAX_EXTRA_DRAW}},
        text="everyone draws {count} card(s) after bidding",
    ),
    "bidding_order": EffectType(
        {
            "start": {"enum": ["dealer", "left_of_dealer", "right_of_dealer"]},
            "direction": {"enum": ["clockwise", "counterclockwise"]},
        },
        text="bidding starts at {start} and goes {direction}",
    ),
    "listed_numbers": EffectType(
        {
            "numbers": {
                "type": "array",
                "items": {"type": "integer", "minimum": 1, "maximum": NUM_NUMBER_CARDS},
                "minItems": 1,
                "uniqueItems": True,
            },
            "each": {"type": "boolean"},
        },
        ("numbers",),
        text="+1 chili per won trick holding {numbers} ({each})",
    ),
    "forehead": EffectType(flag="forehead", text="forehead bidding: see the others' hands, not your own"),
    "blind": EffectType(flag="blind", text="blind bidding: see no hand until bids are done"),
    "reveal_hands": EffectType(flag="reveal", text="hands face up after bidding"),
    "exact_bid_reward": EffectType(flag="exact_bid_reward", text="exact bid: discard chilis equal to your bid"),
    "simultaneous_play": EffectType(flag="simultaneous", text="simultaneous play"),
    "reversed_values": EffectType(flag="reversed", text="reversed values: lowest wins"),
    "timed_look": EffectType(flag="timed_look", text="3-second look: hand hidden while bidding"),
    "first_last_trick": EffectType(flag="first_last_trick", text="+1 chili for the first and for the last trick"),
    "memorise": EffectType(flag="memorise", text="5-second memorise: bid and play blind, by hand position"),
    "no_copy_bid": EffectType(flag="no_copy_bid", text="no copying the previous bid"),
    "designate": EffectType(flag="designate", text="name a player: also take its round penalty"),
    "highest_or_lowest": EffectType(flag="highest_or_lowest", text="play only your highest or lowest card"),
    "swap_after_trick": EffectType(flag="swap", text="trick winner may swap one card with a player"),
}

#: Effects only custom decks use (the standard deck has no card with them).
EXTRA_EFFECT_TYPES = ("bidding_order",)
#: Effects of the standard deck (it covers each at least once).
EFFECT_TYPES = tuple(name for name in EFFECTS if name not in EXTRA_EFFECT_TYPES)
ALL_EFFECT_TYPES = tuple(EFFECTS)

#: JSON Schema of a mission deck (a table with a ``mission`` array).
DECK_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Pili Pili mission deck",
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "mission": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "integer", "minimum": 1},
                    "name": {"type": "string"},
                    "hand_size": {"type": "integer", "minimum": 1, "maximum": MAX_HAND_SIZE},
                    "expert": {"type": "boolean"},
                    "effects": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"type": {"enum": list(ALL_EFFECT_TYPES)}},
                            "required": ["type"],
                            "allOf": [
                                {
                                    "if": {"properties": {"type": {"const": name}}},
                                    "then": {
                                        "properties": {"type": {"const": name}, **effect.parameters},
                                        "required": ["type", *effect.required],
                                        "additionalProperties": False,
                                    },
                                }
                                for name, effect in EFFECTS.items()
                            ],
                        },
                    },
                },
                "required": ["id", "hand_size", "expert", "effects"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["mission"],
    "additionalProperties": False,
}

_VIEW_EFFECTS = ("forehead", "blind", "timed_look", "memorise")
_PASS_EFFECTS = ("pass_left", "pass_right", "pass_hand")
_NOT_WITH_MEMORISE = (*_PASS_EFFECTS, "extra_draw", "reveal_hands", "highest_or_lowest", "swap_after_trick")


@dataclass(frozen=True)
class Mission:
    """One mission card, as the rules engine reads it.

    ``pass_direction`` is +1 (to the left, i.e. the next seat clockwise), -1 (to the right) or 0;
    ``pass_count`` is the number of cards passed (0: none; ``pass_all`` passes the whole hand instead).
    ``bid_start`` / ``bid_direction``: the first bidder's offset from the dealer (0, +1 or -1) and the
    bidding direction (+1 clockwise, -1 counterclockwise).
    """

    id: int
    hand_size: int
    expert: bool = False
    name: str = ""
    pass_direction: int = 0
    pass_count: int = 0
    pass_all: bool = False
    forbidden_bids: frozenset[int] = frozenset()
    forehead: bool = False
    blind: bool = False
    extra_draw: int = 0
    reveal: bool = False
    exact_bid_reward: bool = False
    simultaneous: bool = False
    reversed: bool = False
    timed_look: bool = False
    first_last_trick: bool = False
    memorise: bool = False
    no_copy_bid: bool = False
    designate: bool = False
    highest_or_lowest: bool = False
    listed_numbers: tuple[int, ...] = ()
    listed_each: bool = False
    swap: bool = False
    bid_start: int = 0  # first bidder: the dealer (0), left of the dealer (+1) or right of it (-1)
    bid_direction: int = 1  # bidding goes clockwise (+1) or counterclockwise (-1)
    effects: tuple[dict[str, Any], ...] = field(default=(), compare=False)

    @property
    def has_look(self) -> bool:
        """Every player first takes one ``ready`` decision to look at its hand."""
        return self.timed_look or self.memorise

    def describe(self) -> str:
        """Short English text of the card's effects (``"no effect"`` if none)."""
        return "; ".join(describe_effect(effect) for effect in self.effects) or "no effect"


#: The first-game mode (``missions="none"``): five cards, no effect.
BASIC_MISSION = Mission(id=0, hand_size=5, name="basic game (no mission)")


_BID_START_TEXT = {
    "dealer": "the dealer",
    "left_of_dealer": "the dealer's left",
    "right_of_dealer": "the dealer's right",
}


def describe_effect(effect: dict[str, Any]) -> str:
    """Short English text of one effect table (``{"type": "pass_left", "count": 2}``), from :data:`EFFECTS`."""
    kind = effect["type"]
    values = {
        "count": effect.get("count", 1),
        "direction": effect.get("direction", "clockwise"),
        "bid": effect.get("bid"),
        "start": _BID_START_TEXT[effect.get("start", "dealer")],
        "numbers": ", ".join(map(str, effect.get("numbers", ()))),
        "each": "each listed card" if effect.get("each", False) else "once per trick",
    }
    return EFFECTS[kind].text.format(**values)


def mission_from_dict(data: dict[str, Any]) -> Mission:
    """A :class:`Mission` from one schema-valid ``[[mission]]`` table (cross-field rules checked here)."""
    where = f"mission id {data['id']}"
    effects = tuple(dict(effect) for effect in data["effects"])
    kinds = [effect["type"] for effect in effects]
    duplicates = sorted(kind for kind, times in Counter(kinds).items() if times > 1)
    if duplicates:
        raise DeckError(f"{where}: effect type(s) {', '.join(duplicates)} appear more than once")
    for group, label in ((_PASS_EFFECTS, "passing"), (_VIEW_EFFECTS, "hand-viewing")):
        present = [kind for kind in kinds if kind in group]
        if len(present) > 1:
            raise DeckError(f"{where}: at most one {label} effect per card, got {', '.join(present)}")
    if "memorise" in kinds:
        clash = [kind for kind in kinds if kind in _NOT_WITH_MEMORISE]
        if clash:
            raise DeckError(f"{where}: memorise cannot be combined with {', '.join(clash)}")
    fields: dict[str, Any] = {}
    forbidden: set[int] = set()
    for effect in effects:
        kind = effect["type"]
        if kind in ("pass_left", "pass_right"):
            if effect["count"] >= data["hand_size"]:
                raise DeckError(
                    f"{where}: {kind} count {effect['count']} must be below the hand size {data['hand_size']} "
                    f"(use pass_hand to pass everything)"
                )
            fields.update(pass_direction=1 if kind == "pass_left" else -1, pass_count=effect["count"])
        elif kind == "pass_hand":
            fields.update(pass_direction=1 if effect["direction"] == "left" else -1, pass_all=True)
        elif kind == "forbid_bid":
            forbidden.add(effect["bid"])
        elif kind == "extra_draw":
            fields["extra_draw"] = effect.get("count", 1)
        elif kind == "bidding_order":
            start = {"dealer": 0, "left_of_dealer": 1, "right_of_dealer": -1}[effect.get("start", "dealer")]
            direction = 1 if effect.get("direction", "clockwise") == "clockwise" else -1
            if (start, direction) == (0, 1):
                raise DeckError(f"{where}: bidding_order must change the order (start or direction)")
            fields.update(bid_start=start, bid_direction=direction)
        elif kind == "listed_numbers":
            fields.update(listed_numbers=tuple(sorted(effect["numbers"])), listed_each=effect.get("each", False))
        else:
            fields[EFFECTS[kind].flag] = True
    if data["hand_size"] + fields.get("extra_draw", 0) > MAX_HAND_SIZE:
        raise DeckError(f"{where}: hand_size + extra_draw must be at most {MAX_HAND_SIZE}")
    return Mission(
        id=data["id"],
        hand_size=data["hand_size"],
        expert=data["expert"],
        name=data.get("name", ""),
        forbidden_bids=frozenset(forbidden),
        effects=effects,
        **fields,
    )


def load_missions(deck: str | Path | list | dict, *, expert: bool = True) -> list[Mission]:
    """Validated missions from a deck file path, a parsed deck table, or a list of mission tables.

    ``expert=False`` drops the cards whose ``expert`` flag is set. Raises :class:`DeckError` naming the
    problem.
    """
    if isinstance(deck, list):
        deck = {"mission": deck}
    data = load_deck(deck, DECK_SCHEMA, source="mission deck")
    missions = [mission_from_dict(entry) for entry in data["mission"]]
    repeated = sorted(i for i, times in Counter(mission.id for mission in missions).items() if times > 1)
    if repeated:
        raise DeckError(f"mission deck: duplicate mission id(s) {', '.join(map(str, repeated))}")
    if not expert:
        missions = [mission for mission in missions if not mission.expert]
        if not missions:
            raise DeckError("mission deck: expert=False leaves no mission (every card is an expert card)")
    return missions


_STANDARD: list[Mission] = []


def standard_missions(*, expert: bool = True) -> list[Mission]:
    """The standard 36-card deck shipped in ``missions.toml`` (read and validated once, then cached)."""
    if not _STANDARD:
        _STANDARD.extend(load_missions(read_package_data("tableenvs.pilipili", "missions.toml")))
    return [mission for mission in _STANDARD if expert or not mission.expert]
