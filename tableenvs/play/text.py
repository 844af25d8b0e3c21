"""Text from records and games made safe to print on a terminal (:func:`printable`).

Where you are: ``tableenvs/play/``. A game record's text (policy names, step descriptions, error messages quoting
them) can hold anything a file holds; everything that prints it (``tableenvs play``, ``replay``, ``export``, the
CLI's error lines) goes through :func:`printable` first, so an escape sequence in a record is shown, not obeyed.
"""

from __future__ import annotations

import re
from typing import Any

#: What :func:`printable` escapes: the C0 controls but the newline, DEL, the C1 controls (``\\x9b`` is a one-byte
#: escape sequence introducer on some terminals), the bidirectional marks, embeddings, overrides and isolates, and
#: the line and paragraph separators (they move, hide or reorder the text shown).
_UNPRINTABLE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED_ESCAPES = {"\t": "\\t", "\r": "\\r"}


def printable(text: Any) -> str:
    """``str(text)`` safe to print on a terminal: every control character but the newline written as an escape
    (``\\x1b``, ``\\t``, ``\\r``, ``\\x9b``, ...), and so are the bidirectional controls and the line and
    paragraph separators; everything else (accents, CJK, emoji) is left as it is. A record's text (policy names, step
    descriptions, error messages quoting them) goes through this before it reaches a terminal, so an ANSI escape in
    a record is shown, not obeyed."""
    return _UNPRINTABLE.sub(_escape, str(text))


def _escape(match: re.Match) -> str:
    char = match.group()
    code = ord(char)
    return _NAMED_ESCAPES.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
