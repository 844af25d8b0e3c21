"""Shared pytest setup: the repository root on sys.path so tests can import ``tests.*`` helpers."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
