"""Whether an optional dependency (an extra: train, eval, ray, web) is installed, found without importing it.

Where you are: used by the sub-commands (:mod:`tableenvs.commands`) to refuse in one line, before any game or
training starts, when an extra they need is missing. It only looks modules up (``importlib.util.find_spec``).
"""

from __future__ import annotations

import importlib.util


def missing_module(modules: tuple[str, ...]) -> str | None:
    """The first of ``modules`` that cannot be imported (found without importing it), or None."""
    for module in modules:
        try:
            if importlib.util.find_spec(module) is None:
                return module
        except (ImportError, ValueError):  # a blocked import, or a module left as None in sys.modules
            return module
    return None
