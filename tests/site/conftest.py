"""Fixtures for the tests of the built site (``make test``'s last stage, ``make test-site``).

These tests read what ``make book`` and ``make student`` wrote, so they run after both:
the full edition in ``_build/html``, the student edition in ``_build/student/_build/html``
(``$TOKLAB_SITE`` and ``$TOKLAB_STUDENT_SITE`` point elsewhere). The unit-test stage
(``pytest tests``) does not collect this folder (``norecursedirs`` in ``pyproject.toml``);
name it to run it: ``.venv/bin/python -m pytest tests/site``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from siteutil import CHROMIUM_ARGS, INSTALL_HINT, SITE, STUDENT_SITE, find_chromium, serve


def _require(site: Path, command: str) -> Path:
    if not (site / "index.html").is_file():
        pytest.fail(f"no built site at {site}: run `{command}` first", pytrace=False)
    return site


@pytest.fixture(scope="session")
def site() -> Path:
    return _require(SITE, "make book")


@pytest.fixture(scope="session")
def student_site() -> Path:
    return _require(STUDENT_SITE, "make student")


@pytest.fixture(scope="session")
def browser():
    executable = find_chromium()
    if executable is None:
        pytest.fail(f"the browser tests need Chromium: {INSTALL_HINT}", pytrace=False)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        # launch() gives Chromium a fresh temporary profile (--user-data-dir) and
        # deletes it on close.
        b = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def http_base(site):
    httpd, base = serve(site)
    yield base
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="session", params=["file", "http"])
def base(request, site) -> str:
    """The site's root URL, from disk (file://) and served over HTTP (as by `make serve`)."""
    if request.param == "file":
        return site.as_uri() + "/"
    return request.getfixturevalue("http_base")
