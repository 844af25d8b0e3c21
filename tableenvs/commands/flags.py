"""Flag values that several sub-commands read alike: ``--option KEY=VALUE``, a comma-separated policy list, a file
to write (``--record``, ``--html``).

Where you are: helpers of :mod:`tableenvs.commands`. They turn a flag's text into a value or raise ``ValueError``
naming the flag (the CLI prints it, exit code 2); :func:`check_output_file` also looks at the file system (it creates
nothing) and prints a note on stderr when the file will be replaced.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tableenvs.paths import check_output_dir


def parse_option(text: str) -> tuple[str, object]:
    """``--option KEY=VALUE``: the key and the value, read as JSON when it parses, else as text."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise ValueError(f"--option expects KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def policy_list(text: str, flag: str) -> list[str]:
    """The policies of a comma-separated list (``--policies``, ``--opponents``); refused if it names none."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise ValueError(f"{flag} lists no policy, got {text!r}")
    return names


def check_output_file(path: str, flag: str) -> None:
    """``flag FILE`` (``--record``, ``--html``) must be a file that can be written (checked before the game starts)."""
    file = Path(path).expanduser()
    if file.is_dir():
        raise ValueError(f"{flag} {path!r} is a directory, not a file")
    parent = file.parent
    if not parent.is_dir():
        raise ValueError(f"{flag} {path!r}: the directory {str(parent)!r} does not exist")
    check_output_dir(parent, f"{flag}'s directory")
    if file.exists():  # written whole at the end (atomically): until then the existing file is intact
        print(f"tableenvs: note: {flag} {path!r} exists and will be replaced", file=sys.stderr)
