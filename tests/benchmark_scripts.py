"""Load a script of ``benchmarks/`` as a module for a test (the scripts are not a package: each imports its neighbours,
such as ``common.py``, from its own folder)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_benchmark(script: str, module_name: str) -> ModuleType:
    """``benchmarks/<script>`` loaded as ``module_name``, with ``benchmarks/`` on the import path while it loads."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location(module_name, BENCHMARKS / script)
        assert spec is not None and spec.loader is not None, script
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCHMARKS))
    return module
