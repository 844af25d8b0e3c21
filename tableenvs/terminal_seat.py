"""Moved to :mod:`tableenvs.play.terminal_seat`; this import path keeps working until tableenvs 0.2.

It is the same module object, so every name (private ones too) reads and patches alike.
"""

import sys

from tableenvs.play import terminal_seat as _moved

sys.modules[__name__] = _moved
