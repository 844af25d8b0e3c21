"""Moved to :mod:`tableenvs.policies.numpy_policy`; this import path keeps working until tableenvs 0.2.

It is the same module object, so every name (private ones too) reads and patches alike.
"""

import sys

from tableenvs.policies import numpy_policy as _moved

sys.modules[__name__] = _moved
