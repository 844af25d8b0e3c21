"""Moved to :mod:`tableenvs.training.selfplay`; this import path keeps working until tableenvs 0.2.

It is the same module object, so every name (private ones too) reads and patches alike.
"""

import sys

from tableenvs.training import selfplay as _moved

sys.modules[__name__] = _moved
