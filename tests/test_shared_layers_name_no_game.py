"""The spec is the only front door: no shared layer names a built-in game in code or imports a game package.

Everything a layer above the games needs of a game hangs off its ``GameSpec`` (or the ``"module:attr"`` objects it
names). Read from the source with :mod:`ast` (nothing is imported): a string constant that is a built-in game's name
or contains a game package's name, or an import of a game package, in ``core``, ``policies``, ``training``,
``evaluation``, ``play``, ``web``, ``openspiel``, ``commands`` or ``cli.py``. Docstrings may name a game as an example.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import tableenvs

PACKAGE = Path(__file__).resolve().parent.parent / "tableenvs"
LAYERS = ("core", "policies", "training", "evaluation", "play", "web", "openspiel", "commands", "cli.py")


def _builtin() -> tuple[set[str], set[str]]:
    """The built-in games' names and their packages' names (``tableenvs.<package>.env`` -> ``<package>``)."""
    games = [tableenvs.spec(name) for name in tableenvs.names() if tableenvs.spec(name).builtin]
    return {game.name for game in games}, {game.module.split(".")[1] for game in games}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def game_mentions(source: str, names: set[str], packages: set[str]) -> list[tuple[int, str]]:
    """(line, what) of each game name in code and each game-package import in ``source``."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            if node.value in names or any(package in node.value for package in packages):
                found.append((node.lineno, f"string {node.value[:60]!r}"))
        modules = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        games = [m for m in modules if any(m == f"tableenvs.{p}" or m.startswith(f"tableenvs.{p}.") for p in packages)]
        if games:
            found.append((node.lineno, f"import of {games[0]}"))
    return found


def _sources() -> list[Path]:
    paths = []
    for layer in LAYERS:
        path = PACKAGE / layer
        paths += [path] if path.suffix == ".py" else sorted(path.rglob("*.py"))
    return paths


def test_the_built_in_games_are_known():
    names, packages = _builtin()
    assert len(names) >= 3 and len(packages) == len(names)


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_no_shared_module_names_a_built_in_game(path):
    names, packages = _builtin()
    found = game_mentions(path.read_text(), names, packages)
    assert found == [], f"{path.relative_to(PACKAGE.parent)}: " + "; ".join(f"line {n}: {w}" for n, w in found)


def test_the_scan_finds_what_it_looks_for():
    names, packages = _builtin()
    name, package = sorted(names)[0], sorted(packages)[0]
    source = f'''"""Docstrings may say {name}."""
import tableenvs.{package}.rules
from tableenvs.{package} import env
from tableenvs import {package}

DEFAULTS = {{"{name}": 1}}
TARGET = "tableenvs.{package}.features:Thing"


def f():
    """Nor is {name} here."""
    return "{name}"
'''
    found = [what for _, what in game_mentions(source, names, packages)]
    assert found.count(f"string '{name}'") == 2 and f"import of tableenvs.{package}.rules" in found
    assert f"import of tableenvs.{package}" in found and "string 'tableenvs." + package + ".features:Thing'" in found
    assert len(found) == 6, found  # one per import statement
