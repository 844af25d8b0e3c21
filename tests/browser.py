"""Debian's Chromium driven by Playwright for Python, for the HTML viewer test and ``examples/viewer_pictures.py``.

The browser is the system's ``/usr/bin/chromium`` (``.ci/run`` installs Debian's ``chromium`` package); Playwright
never downloads one. A fresh profile directory per launch; the flags keep it off the network and quiet.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",  # CI runs as root
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def missing() -> str | None:
    """What is missing to drive the browser here, or None."""
    if not os.path.exists(CHROMIUM):
        return f"{CHROMIUM} (Debian's chromium package; .ci/run installs it)"
    try:
        import playwright.sync_api  # noqa: F401
    except ModuleNotFoundError:
        return "playwright (pip install playwright; the dev extra has it)"
    return None


@contextlib.contextmanager
def chromium_page(width: int = 1280, height: int = 800) -> Iterator:
    """A page of a headless Chromium with a fresh profile, closed on exit."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="tableenvs-chromium-") as profile, sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=True,
            args=FLAGS,
            viewport={"width": width, "height": height},
        )
        try:
            yield context.new_page()
        finally:
            context.close()


@contextlib.contextmanager
def page_or_skip(width: int = 1280, height: int = 800) -> Iterator:
    """:func:`chromium_page`, or the test skipped naming what is missing (failed instead when ``CI`` is set)."""
    import pytest

    reason = missing()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"the browser test needs {reason}")
        pytest.skip(f"needs {reason}")
    with chromium_page(width, height) as page:
        yield page
