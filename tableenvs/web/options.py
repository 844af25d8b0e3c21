"""A web request's game options as data only: no option may name a file, and no number option is unbounded.

Where you are: part of :mod:`tableenvs.web`, used by :meth:`tableenvs.web.manager.TableManager.build`. A game's
options may take built-in names (``"standard"``) or data sent inline (a list or an object, e.g. a deck), and some
games also accept a file path for the same option. A web request never may:

* :func:`check_options` refuses, before the game sees them, any text option that is not a plain name (letters,
  digits, ``_`` and ``-``: no ``/``, ``.``, ``~`` or ``\\``, so no absolute path, no file extension, no parent
  folder), and any number option above the server's cap (``max_option``);
* :func:`build_without_files` builds the env while an audit hook refuses to open any file whose name is one of the
  request's texts (so a bare name that happens to be a file in the server's working folder is not read either);
* if the game refuses the options and a text option is to blame (the game builds once the texts are left out), the
  answer is one fixed sentence naming the option, never the game's message: that message might say whether such a
  file exists. Otherwise the game's message is for the options with the texts left out, which cannot involve any
  file either.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")

_guard = threading.local()
_hook_added = False
_hook_lock = threading.Lock()

T = TypeVar("T")


class OptionError(ValueError):
    """An option refused: ``field`` is ``options.NAME`` (or ``options``)."""

    def __init__(self, message: str, field: str):
        super().__init__(message)
        self.field = field


def check_options(game: str, options: dict[str, Any], max_option: int) -> None:
    """:class:`OptionError` for a text option that is not a plain name, or a number option above ``max_option``."""
    for key, value in options.items():
        if isinstance(value, str) and not NAME.fullmatch(value):
            raise OptionError(
                f"options.{key}: {_short(value)} is not a name: a web request chooses built-in names (letters, digits, "
                "_ and -) or sends the data inline (a list or an object), never a file",
                f"options.{key}",
            )
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > max_option:
            raise OptionError(
                f"options.{key}: {value!r} is above this server's cap of {max_option} for a number option "
                "(every game here must end)",
                f"options.{key}",
            )


def build_without_files(game: str, options: dict[str, Any], build: Callable[[dict[str, Any]], T]) -> T:
    """``build(options)`` while no file named by one of ``options``' texts may be opened by this thread.

    If it raises ``ValueError``/``TypeError`` (the game refused the options): :class:`OptionError` with a fixed
    sentence when a text option is to blame, else with the game's message for the options without their texts."""
    texts = {key: value for key, value in options.items() if isinstance(value, str)}
    try:
        return _guarded(set(texts.values()), build, options)
    except (ValueError, TypeError, PermissionError) as error:
        first = error
    plain = {key: value for key, value in options.items() if key not in texts}
    try:
        _guarded(set(), build, plain)
    except (ValueError, TypeError) as error:
        raise OptionError(f"options: the game cannot be set up: {' '.join(str(error).split())}", "options") from None
    for key, value in texts.items():  # the game builds without the texts: name the first text it refuses
        try:
            _guarded({value}, build, {**plain, key: value})
        except (ValueError, TypeError, PermissionError):
            raise OptionError(_not_a_name(game, key, value), f"options.{key}") from None
    keys = ", ".join(texts)
    raise OptionError(
        f"options: {game} refuses these texts together ({keys}): each is a built-in name, but not with the others",
        "options",
    ) from first


def _not_a_name(game: str, key: str, value: str) -> str:
    return (
        f"options.{key}: {_short(value)} is not one of {game}'s built-in names for {key} (a web request chooses "
        "built-in names or sends the data inline, never a file)"
    )


def _guarded(names: set[str], build: Callable[[dict[str, Any]], T], options: dict[str, Any]) -> T:
    _add_hook()
    _guard.names = names
    try:
        return build(options)
    finally:
        _guard.names = None


def _add_hook() -> None:
    global _hook_added
    with _hook_lock:
        if not _hook_added:
            sys.addaudithook(_refuse_named_files)
            _hook_added = True


def _refuse_named_files(event: str, args: tuple[Any, ...]) -> None:
    """Audit hook: in a thread building a game from a request, opening a file whose name is one of the request's
    texts raises ``PermissionError`` (every other thread, and every other file, is left alone)."""
    names = getattr(_guard, "names", None)
    if not names or event != "open":
        return
    path = args[0] if args else None
    if isinstance(path, int) or path is None:
        return
    try:
        text = os.fsdecode(os.fspath(path))
    except TypeError:
        return
    if os.path.basename(text) in names or text in names:
        raise PermissionError("a web request may not name a file")


def _short(value: str, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 4] + "...'"


__all__ = ["NAME", "OptionError", "build_without_files", "check_options"]
