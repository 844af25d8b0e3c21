"""Moved to :mod:`tableenvs.training.distill`; this import path keeps working until tableenvs 0.2.

It is the same module object, so every name (private ones too) reads and patches alike.
"""

import sys

if __name__ == "__main__":  # python -m tableenvs.distill runs the moved module
    import runpy

    runpy.run_module("tableenvs.training.distill", run_name="__main__", alter_sys=True)
else:
    from tableenvs.training import distill as _moved

    sys.modules[__name__] = _moved
