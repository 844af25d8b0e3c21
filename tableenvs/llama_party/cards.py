"""Llama Party cards: the card model, the deck's JSON Schema and the loader.

Where you are: the data layer of ``tableenvs/llama_party``. A deck is exactly 32 cards. Each card has

* ``id`` — a short unique name (the standard deck uses ``A1`` .. ``H4``);
* ``letter`` — what the card counts as in a hand, one of ``A`` .. ``H``;
* ``top`` — the single-letter rule when the card is a goal: ``points`` for each card of ``letter`` in the hand;
* ``bottom`` — the combination rule when the card is a goal: ``points`` for each complete copy of ``combo``
  (e.g. ``"DF"``, ``"AABB"``) that the hand's letters can form, each card used at most once per copy.

``top`` and ``bottom`` may each also be a list of 1..4 such rules (the write-up scores a hand that meets both AABB
and AA for both); every rule of a goal is scored, each combination independently of the others.

Points are integers and may be negative. The standard deck is ``standard_deck.toml`` next to this file;
users pass their own as a ``.toml``/``.json`` path (``{"cards": [...]}``) or as a list of card tables.
Card *indices* (0..31, the order in the deck) are the integer ids used everywhere else (rules, actions).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tableenvs.decks import DeckError, load_deck, read_package_data

LETTERS = "ABCDEFGH"
NUM_LETTERS = len(LETTERS)
DECK_SIZE = 32
MAX_POINTS = 50  # bound on |points| of a rule, so observations stay bounded

_RULE_POINTS = {"type": "integer", "minimum": -MAX_POINTS, "maximum": MAX_POINTS}
MAX_RULES = 4  # rules of one kind (letter rules, combinations) on one card

_TOP_RULE = {
    "type": "object",
    "required": ["letter", "points"],
    "additionalProperties": False,
    "properties": {"letter": {"type": "string", "pattern": "^[A-H]$"}, "points": _RULE_POINTS},
}
_BOTTOM_RULE = {
    "type": "object",
    "required": ["combo", "points"],
    "additionalProperties": False,
    "properties": {"combo": {"type": "string", "pattern": "^[A-H]{2,7}$"}, "points": _RULE_POINTS},
}


def _one_or_list(rule: dict[str, Any]) -> dict[str, Any]:
    """A rule table, or a list of 1..MAX_RULES of them (``if``/``then``, so errors name the failing field)."""
    return {
        "type": ["object", "array"],
        "if": {"type": "object"},
        "then": rule,
        "else": {"type": "array", "minItems": 1, "maxItems": MAX_RULES, "items": rule},
    }


CARD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["id", "letter", "top", "bottom"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "minLength": 1, "maxLength": 16},
        "letter": {"type": "string", "pattern": "^[A-H]$"},
        "top": _one_or_list(_TOP_RULE),
        "bottom": _one_or_list(_BOTTOM_RULE),
    },
}

DECK_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Llama Party deck",
    "type": "object",
    "required": ["cards"],
    "properties": {
        "name": {"type": "string"},
        "cards": {"type": "array", "minItems": DECK_SIZE, "maxItems": DECK_SIZE, "items": CARD_SCHEMA},
    },
}


@dataclass(frozen=True)
class Card:
    """One llama card; letters are stored as indices 0..7 (A..H).

    ``tops`` lists every letter rule ``(letter, points)`` and ``bottoms`` every combination rule
    ``(combo, need, points)``; ``top_letter`` .. ``combo_points`` repeat the first of each (a card with one rule
    of each kind, as in the standard deck, is fully described by them). ``letter_points[l]`` sums the points
    of the letter rules on letter ``l`` (letter rules are linear, so several add up).
    """

    index: int  # position in the deck, 0..31: the integer id used by the rules and as action id
    id: str
    letter: int
    top_letter: int
    top_points: int
    combo: str
    combo_need: tuple[int, ...]  # how many of each letter A..H one copy of the combo needs
    combo_points: int
    tops: tuple[tuple[int, int], ...] = ()
    bottoms: tuple[tuple[str, tuple[int, ...], int], ...] = ()
    letter_points: tuple[int, ...] = (0,) * NUM_LETTERS

    @property
    def letter_name(self) -> str:
        return LETTERS[self.letter]

    def rules_text(self) -> str:
        """E.g. ``"+2/A, DF +5"``; several rules: ``"+2/A +1/B, AABB +12, AA +3"``."""
        tops = " ".join(f"{points:+d}/{LETTERS[letter]}" for letter, points in self.tops)
        bottoms = ", ".join(f"{combo} {points:+d}" for combo, _, points in self.bottoms)
        return f"{tops}, {bottoms}"

    def __str__(self) -> str:
        return f"{self.id}({self.letter_name}: {self.rules_text()})"


Deck = tuple[Card, ...]


def _rules(value: dict[str, Any] | list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [value] if isinstance(value, dict) else list(value)


def _card_from_data(index: int, data: dict[str, Any]) -> Card:
    tops = tuple((LETTERS.index(rule["letter"]), int(rule["points"])) for rule in _rules(data["top"]))
    bottoms = tuple(
        (
            "".join(sorted(rule["combo"])),
            tuple(rule["combo"].count(letter) for letter in LETTERS),
            int(rule["points"]),
        )
        for rule in _rules(data["bottom"])
    )
    letter_points = [0] * NUM_LETTERS
    for letter, points in tops:
        letter_points[letter] += points
    return Card(
        index=index,
        id=data["id"],
        letter=LETTERS.index(data["letter"]),
        top_letter=tops[0][0],
        top_points=tops[0][1],
        combo=bottoms[0][0],
        combo_need=bottoms[0][1],
        combo_points=bottoms[0][2],
        tops=tops,
        bottoms=bottoms,
        letter_points=tuple(letter_points),
    )


def load_cards(deck: str | Path | Sequence[dict[str, Any]] | dict[str, Any] | None = None) -> Deck:
    """A validated deck: ``None`` for the standard deck, a ``.toml``/``.json`` path, a ``{"cards": [...]}``
    dict, or a list of 32 card tables. Raises :class:`tableenvs.decks.DeckError` naming the problem."""
    if deck is None:
        return STANDARD_DECK
    if isinstance(deck, (list, tuple)):
        data = load_deck({"cards": list(deck)}, DECK_SCHEMA, source="deck list")
    elif isinstance(deck, (str, Path, dict)):
        data = load_deck(deck, DECK_SCHEMA, source="deck")
    else:
        raise DeckError(
            f"deck must be None (standard deck), a path to a .toml/.json file or a list of 32 card tables; "
            f"got {type(deck).__name__}"
        )
    return _build(data["cards"], "deck")


def _build(cards_data: list[dict[str, Any]], source: str) -> Deck:
    seen: dict[str, int] = {}
    for index, data in enumerate(cards_data):
        if data["id"] in seen:
            raise DeckError(f"{source}: cards[{index}].id {data['id']!r} repeats cards[{seen[data['id']]}].id")
        seen[data["id"]] = index
    return tuple(_card_from_data(index, data) for index, data in enumerate(cards_data))


_STANDARD_DATA = load_deck(
    read_package_data("tableenvs.llama_party", "standard_deck.toml"), DECK_SCHEMA, source="standard deck"
)
STANDARD_DECK: Deck = _build(_STANDARD_DATA["cards"], "standard deck")


def card_record(card: Card) -> dict[str, Any]:
    """``card`` as a deck table (``load_cards`` reads a list of them back into equal cards)."""
    return {
        "id": card.id,
        "letter": LETTERS[card.letter],
        "top": [{"letter": LETTERS[letter], "points": points} for letter, points in card.tops],
        "bottom": [{"combo": combo, "points": points} for combo, _, points in card.bottoms],
    }
