"""Where the solver's compiled kernel is cached, and that Rummikub runs where no cache can be written.

The read-only test is real: a non-editable install of this tree in a temporary directory (``pip install --target``,
or a plain copy of the package when no setuptools >= 77 is at hand to build it offline: the same files a
pure-Python wheel installs), made read-only, then a whole random Rummikub game in a fresh interpreter with an
unwritable ``HOME`` and no ``NUMBA_CACHE_DIR``. As root (CI runs as root, and root ignores file modes) the child
runs as ``nobody`` through ``setpriv``, keeping only ``CAP_DAC_READ_SEARCH`` (read and search anywhere, write
nowhere it has no permission: the interpreter may live under ``/root``); as another user it runs as that user.
Each scenario starts a fresh interpreter that compiles the kernels (about 25 CPU-s each), but the second process of
the temporary-cache scenario, which loads them; the scenarios run in a background thread from the end of
collection (see ``start_early``), and each test asserts on its scenario's result.
"""

from __future__ import annotations

import ast
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace

import pytest
from load_bounds import HANG, HANG_COMPILE

ROOT = Path(__file__).resolve().parents[2]

GAME = r"""
import os, sys, tempfile, warnings
import numpy as np
if "TMPDIR" in os.environ:  # exactly this one (Python would fall back to a writable /tmp when it is unwritable)
    tempfile.tempdir = os.environ["TMPDIR"]
for place in (os.path.join(sys.argv[1], "tableenvs"), os.environ["HOME"], *sys.argv[2:]):  # the setting under test
    try:
        open(os.path.join(place, "probe"), "w").close()
    except PermissionError:
        continue
    raise SystemExit(f"{place} is writable: the test would prove nothing")
assert "NUMBA_CACHE_DIR" not in os.environ and "XDG_CACHE_HOME" not in os.environ
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    import tableenvs
    assert tableenvs.__file__.startswith(sys.argv[1]), tableenvs.__file__
    env = tableenvs.make("rummikub_v0", num_players=2)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    steps = 0
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        steps += 1
game = env.unwrapped.game
assert game.over and not game.truncated and game.results, "the game did not end"
cache_warnings = [w for w in caught if "no writable cache directory" in str(w.message)]
print("steps", steps, "end", game.results[-1].end, "cache warnings", len(cache_warnings))
"""

PROBE = r"""
import sys
import numpy as np
import tableenvs
from tableenvs.rummikub import playable, solve
assert tableenvs.__file__.startswith(sys.argv[1]), tableenvs.__file__
rack = np.zeros(53, np.int64)
rack[[0, 1, 2]] = 1
assert solve(np.zeros(53, np.int64), rack) is not None
print("ok")
"""


def _setuptools_builds() -> bool:
    try:
        return int(metadata.version("setuptools").split(".")[0]) >= 77
    except metadata.PackageNotFoundError:
        return False


def _install(target: Path, work: Path) -> str:
    """A non-editable install of this tree into ``target``; returns how it was made."""
    source = work / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc")
    shutil.copytree(ROOT / "tableenvs", source / "tableenvs", ignore=ignore)
    if _setuptools_builds():
        command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation"]
        command += ["--no-index", "--target", str(target), str(source)]
        # This runs in the background thread while tests in the main thread may change os.environ: with
        # env=None the child's exec reads libc's environ, which such a change can free under it (EFAULT,
        # "Bad address"; CPython drops the GIL around vfork). A copy taken here is the child's own.
        subprocess.run(command, check=True, cwd=work, timeout=HANG, env=dict(os.environ))
        return "pip install --target"
    shutil.copytree(source / "tableenvs", target / "tableenvs", ignore=ignore)
    return "copy of the package tree"


def _freeze(path: Path) -> None:
    """Remove every write permission below ``path`` (read and search stay open to all)."""
    for directory, _, files in os.walk(path):
        for name in files:
            os.chmod(os.path.join(directory, name), 0o444)
        os.chmod(directory, 0o555)


def _unfreeze(path: Path) -> None:
    for directory, _, files in os.walk(path):
        os.chmod(directory, 0o755)
        for name in files:
            os.chmod(os.path.join(directory, name), 0o644)


def _clean_env(**extra: str) -> dict[str, str]:
    keep = {key: os.environ[key] for key in ("PATH", "LANG", "LC_ALL", "SYSTEMROOT") if key in os.environ}
    return {**keep, "PYTHONDONTWRITEBYTECODE": "1", **extra}


def _run(command: list[str], env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=HANG_COMPILE)


def _cache_files(path: Path) -> list[Path]:
    return [p for p in path.rglob("*") if p.suffix in (".nbi", ".nbc")]


@contextlib.contextmanager
def _work() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="tableenvs-cache-"))
    os.chmod(path, 0o755)  # an unprivileged child must reach the install inside
    try:
        yield path
    finally:
        _unfreeze(path)
        shutil.rmtree(path, ignore_errors=True)


def _unprivileged(command: list[str]) -> list[str]:
    """``command`` as an unprivileged user when running as root (see the module docstring)."""
    if os.geteuid() != 0:
        return command
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.fail("running as root, the test needs setpriv (util-linux) to run the game as an unprivileged user")
    drop = [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    drop += ["--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"]
    return drop + command


def _read_only_setup(work: Path) -> tuple[Path, str, Path, Path]:
    """A frozen non-editable install with an unwritable home: ``(site, how, home, script)``."""
    site = work / "site"
    how = _install(site, work)
    home = work / "home"
    home.mkdir()
    script = work / "game.py"
    script.write_text(GAME)
    return site, how, home, script


# Each scenario below sets up its install, runs its child interpreters and returns what the test asserts on (the
# children's outputs and what they left on disk), then removes its directory. The scenarios run one at a time in a
# background thread started when collection ends (``start_early``, called from tests/conftest.py), so their
# compiles use the core the test process leaves idle; each test waits for its own scenario's result.


def _nothing_writable() -> SimpleNamespace:
    with _work() as work:
        site, how, home, script = _read_only_setup(work)
        temporary = work / "tmp"
        temporary.mkdir()
        _freeze(work)
        env = _clean_env(HOME=str(home), PYTHONPATH=str(site), TMPDIR=str(temporary))
        done = _run(_unprivileged([sys.executable, str(script), str(site), str(temporary)]), env, cwd=work)
        return SimpleNamespace(how=how, done=done, cache_written=bool(_cache_files(work)))


def _private_temporary_cache() -> SimpleNamespace:
    with _work() as work:
        site, how, home, script = _read_only_setup(work)
        temporary = work / "tmp"
        temporary.mkdir()
        _freeze(work)
        os.chmod(temporary, 0o1777)  # as /tmp is: writable by all, sticky
        env = _clean_env(HOME=str(home), PYTHONPATH=str(site), TMPDIR=str(temporary))
        command = _unprivileged([sys.executable, str(script), str(site)])
        first = _run(command, env, cwd=work)
        entries = [(p, p.stat().st_mode & 0o777, bool(_cache_files(p))) for p in temporary.iterdir()]
        in_site = bool(_cache_files(site))
        second = _run(command, env, cwd=work)
        return SimpleNamespace(how=how, first=first, entries=entries, in_site=in_site, second=second)


def _user_cache_directory() -> SimpleNamespace:
    with _work() as work:
        site = work / "site"
        _install(site, work)  # writable, as an editable install's source tree is
        cache = work / "xdg"
        script = work / "probe.py"
        script.write_text(PROBE)
        env = _clean_env(HOME=str(work / "home"), XDG_CACHE_HOME=str(cache), PYTHONPATH=str(site))
        done = _run([sys.executable, str(script), str(site)], env)
        return SimpleNamespace(
            done=done, in_cache=bool(_cache_files(cache / "tableenvs" / "numba")), in_site=bool(_cache_files(site))
        )


def _user_set_numba_cache_dir() -> SimpleNamespace:
    with _work() as work:
        site = work / "site"
        _install(site, work)
        chosen = work / "chosen"
        script = work / "probe.py"
        script.write_text(PROBE)
        env = _clean_env(
            HOME=str(work / "home"), XDG_CACHE_HOME=str(work / "xdg"), NUMBA_CACHE_DIR=str(chosen), PYTHONPATH=str(site)
        )
        done = _run([sys.executable, str(script), str(site)], env)
        return SimpleNamespace(
            done=done,
            in_chosen=bool(_cache_files(chosen)),
            elsewhere=bool(_cache_files(work / "xdg")) or bool(_cache_files(site)),
        )


#: Test name -> the scenario it asserts on.
SCENARIOS: dict[str, Callable[[], SimpleNamespace]] = {
    "test_read_only_install_plays_a_whole_game_where_nothing_is_writable": _nothing_writable,
    "test_read_only_install_compiles_once_into_a_private_temporary_cache": _private_temporary_cache,
    "test_cache_goes_to_the_user_cache_directory_not_the_package": _user_cache_directory,
    "test_a_user_set_numba_cache_dir_wins": _user_set_numba_cache_dir,
}
_BACKGROUND = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kernel-cache")
_STARTED: dict[str, Future] = {}


def start_early(test_names: list[str]) -> None:
    """Start the scenarios of the named (selected) tests in the background thread, in order."""
    for name in test_names:
        if name in SCENARIOS and name not in _STARTED:
            _STARTED[name] = _BACKGROUND.submit(SCENARIOS[name])


def _result(test_name: str) -> SimpleNamespace:
    start_early([test_name])  # when collection did not start it (e.g. the test run on its own)
    # no timeout of its own: the scenarios run one after another, each bounded by its subprocesses' timeouts
    return _STARTED[test_name].result()


def test_read_only_install_plays_a_whole_game_where_nothing_is_writable():
    r = _result("test_read_only_install_plays_a_whole_game_where_nothing_is_writable")
    done = r.done
    assert done.returncode == 0, f"install by {r.how}\n{done.stdout}\n{done.stderr}"
    assert "end out" in done.stdout or "end lowest_rack" in done.stdout, done.stdout
    assert done.stdout.strip().endswith("cache warnings 1"), done.stdout + done.stderr
    assert "compiling the Rummikub solver" not in done.stderr  # the warning says it instead
    assert not r.cache_written, "a cache file was written"


def test_read_only_install_compiles_once_into_a_private_temporary_cache():
    r = _result("test_read_only_install_compiles_once_into_a_private_temporary_cache")
    first, second = r.first, r.second
    assert first.returncode == 0, f"install by {r.how}\n{first.stdout}\n{first.stderr}"
    assert first.stdout.strip().endswith("cache warnings 0"), first.stdout + first.stderr
    ((private, mode, cached),) = r.entries
    assert private.name.startswith("tableenvs-numba-") and mode == 0o700
    assert cached and not r.in_site
    assert f"tableenvs: compiling the Rummikub solver, once: about 25 s (cached in {private}" in first.stderr
    assert second.returncode == 0 and second.stdout.strip().endswith("cache warnings 0"), second.stderr
    assert "compiling" not in second.stderr, "the second process compiled again"


def test_a_temporary_cache_that_is_not_this_users_own_is_not_used(tmp_path, monkeypatch):
    from tableenvs.rummikub import _solver_kernel as kernel

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    path = tmp_path / f"tableenvs-numba-{os.getuid()}"
    assert kernel.private_temporary_cache() == str(path) and path.stat().st_mode & 0o777 == 0o700
    os.chmod(path, 0o777)  # open to others: someone could plant a cache
    assert kernel.private_temporary_cache() is None
    path.rmdir()
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    path.symlink_to(tmp_path / "elsewhere")
    assert kernel.private_temporary_cache() is None


def test_cache_goes_to_the_user_cache_directory_not_the_package():
    r = _result("test_cache_goes_to_the_user_cache_directory_not_the_package")
    assert r.done.returncode == 0, r.done.stderr
    assert "no writable cache directory" not in r.done.stderr
    assert r.in_cache, "no cache in $XDG_CACHE_HOME/tableenvs/numba"
    assert not r.in_site, "the kernel was cached in the package directory"


def test_a_user_set_numba_cache_dir_wins():
    r = _result("test_a_user_set_numba_cache_dir_wins")
    assert r.done.returncode == 0, r.done.stderr
    assert r.in_chosen, "NUMBA_CACHE_DIR was not used"
    assert not r.elsewhere


def test_every_subprocess_here_gets_its_own_environment():
    """The scenarios run in a background thread: a child started with env=None reads libc's environ, which a test
    changing os.environ in the main thread can free while the child execs (CI saw "OSError: [Errno 14] Bad address")."""
    tree = ast.parse(Path(__file__).read_text())
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "subprocess"
    ]
    assert calls
    assert [node.lineno for node in calls if "env" not in {k.arg for k in node.keywords}] == []
