"""Shared pytest setup: the repository root on sys.path so tests can import ``tests.*`` helpers, Stable-Baselines3's
default log folder inside pytest's temporary directory (SB3 otherwise leaves an empty ``/tmp/SB3-<time>`` per
``learn()`` of a model without a logger), and the ``cli`` fixture that runs the command line in-process."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


@pytest.fixture(autouse=True, scope="session")
def _sb3_log_folder(tmp_path_factory: pytest.TempPathFactory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3-logs")))
        yield


@pytest.fixture
def cli(capsys):
    """``cli(argv) -> (exit code, stdout, stderr)`` of ``tableenvs`` run in this process."""
    from tableenvs.cli import main

    def run(argv: list[str]) -> tuple[int, str, str]:
        code = main(argv)
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the slow subprocess scenarios of the selected tests that can run beside the suite (today the
    solver-kernel cache tests, each a fresh ~25 CPU-s compile) in a background thread, so their compiles use the core
    the test process leaves idle; each such test then waits for its own result. Nothing starts under --collect-only.
    """
    if session.config.option.collectonly:
        return
    early: dict[object, list[str]] = {}
    for item in session.items:
        module = getattr(item, "module", None)
        if module is not None and hasattr(module, "start_early"):
            early.setdefault(module, []).append(item.originalname)
    for module, names in early.items():
        module.start_early(names)
