"""Llama Party cards: the card model, the deck's JSON Schema and the loader.

Where you are: the data layer of ``tableenvs/llama_party``. A deck is exactly 32 cards. Each card has

* ``id`` — a short unique name (the standard deck uses ``A1`` .. ``H4``);
* ``letter`` — what the card counts as in a hand, one of ``A`` .. ``H``;
* ``top`` — the single-letter rule when the card is a goal: ``points`` for each card of ``letter`` in the hand;
* ``bottom`` — the combination rule when the card is a goal: ``points`` for each complete copy of ``combo``
  (e.g. ``"DF"``, ``"AABB"``) that the hand's letters can form, each card used at most once per copy.

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

CARD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["id", "letter", "top", "bottom"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "minLength": 1, "maxLength": 16},
        "letter": {"type": "string", "pattern": "^[A-H]$"},
        "top": {
            "type": "object",
            "required": ["letter", "points"],
            "additionalProperties": False,
            "properties": {"letter": {"type": "string", "pattern": "^[A-H]$"}, "points": _RULE_POINTS},
        },
        "bottom": {
            "type": "object",
            "required": ["combo", "points"],
            "additionalProperties": False,
            "properties": {"combo": {"type": "string", "pattern": "^[A-H]{2,7}$"}, "points": _RULE_POINTS},
        },
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
    """One llama card; letters are stored as indices 0..7 (A..H)."""

    index: int  # position in the deck, 0..31: the integer id used by the rules and as action id
    id: str
    letter: int
    top_letter: int
    top_points: int
    combo: str
    combo_need: tuple[int, ...]  # how many of each letter A..H one copy of the combo needs
    combo_points: int

    @property
    def letter_name(self) -> str:
        return LETTERS[self.letter]

    def rules_text(self) -> str:
        """E.g. ``"+2/A, DF +5"``."""
        return f"{self.top_points:+d}/{LETTERS[self.top_letter]}, {self.combo} {self.combo_points:+d}"

    def __str__(self) -> str:
        return f"{self.id}({self.letter_name}: {self.rules_text()})"


Deck = tuple[Card, ...]


def _card_from_data(index: int, data: dict[str, Any]) -> Card:
    combo = data["bottom"]["combo"]
    return Card(
        index=index,
        id=data["id"],
        letter=LETTERS.index(data["letter"]),
        top_letter=LETTERS.index(data["top"]["letter"]),
        top_points=int(data["top"]["points"]),
        combo="".join(sorted(combo)),
        combo_need=tuple(combo.count(letter) for letter in LETTERS),
        combo_points=int(data["bottom"]["points"]),
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
