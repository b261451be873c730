"""Helpers shared by the built-site tests: where the sites are, their pages, and a browser
page that can reach nothing but the site.

The browser is the machine's Chromium (Debian's ``chromium`` package, or the executable
named by ``$CHROMIUM``), driven by Playwright. Every request for a URL outside the site is
refused and recorded, so a page that needs the network fails the tests.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import threading
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(os.environ.get("TOKLAB_SITE", ROOT / "_build" / "html"))
STUDENT_SITE = Path(os.environ.get("TOKLAB_STUDENT_SITE", ROOT / "_build" / "student" / "_build" / "html"))
SCREENSHOTS = ROOT / "_build" / "screenshots"

# Headless Chromium as root in a container, with nothing that phones home on its own.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    # No host name resolves: a request for another host fails even if it slipped past
    # the request filter of opened().
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]
INSTALL_HINT = "apt-get install chromium (Debian/Ubuntu), or set CHROMIUM=/path/to/chromium"


def pages(site: Path) -> list[str]:
    """Every HTML page of a built site, as paths relative to its root."""
    return sorted(
        p.relative_to(site).as_posix()
        for p in site.rglob("*.html")
        if p.relative_to(site).parts[0] not in ("_static", "_sources", "_images")
    )


@functools.lru_cache(maxsize=None)
def _parsed(path: str):
    from bs4 import BeautifulSoup

    return BeautifulSoup(Path(path).read_text(encoding="utf-8"), "html.parser")


def parsed(path: Path):
    """The parsed HTML of ``path``, parsed once per test session: do not modify it."""
    return _parsed(str(Path(path).resolve()))


def chapter_pages(site: Path) -> list[str]:
    """The chapters' pages (``book/ch*.html``)."""
    return [p for p in pages(site) if Path(p).name.startswith("ch")]


def find_chromium() -> str | None:
    names = [os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"]
    for name in filter(None, names):
        found = shutil.which(name)
        if found:
            return found
    return None


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


def serve(root: Path) -> tuple[ThreadingHTTPServer, str]:
    """Serve ``root`` on 127.0.0.1 as `make serve` does (http.server), on a free port."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(root)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/"


@dataclass
class Record:
    """What happened while a page was open."""

    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    bad_status: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)
    requested: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        return (
            [f"console error: {m}" for m in self.console_errors]
            + [f"uncaught exception: {m}" for m in self.page_errors]
            + [f"failed request: {m}" for m in self.failed]
            + [f"HTTP error: {m}" for m in self.bad_status]
            + [f"request outside the site (refused): {m}" for m in self.outside]
        )


@contextlib.contextmanager
def opened(browser, base: str, path: str, **context_options):
    """Open ``base + path`` in a new browser context that can reach only the site.

    Yields ``(page, record)`` and closes the context afterwards. A request for any URL
    outside ``base`` (another host, a CDN) is aborted and listed in ``record.outside``.
    """
    context = browser.new_context(service_workers="block", **context_options)
    try:
        record = Record()

        def gate(route):
            url = route.request.url
            if url.startswith(base) or url.startswith(("data:", "blob:")):
                route.continue_()
            else:
                record.outside.append(url)
                route.abort("blockedbyclient")

        context.route("**/*", gate)
        page = context.new_page()
        page.on("console", lambda m: m.type == "error" and record.console_errors.append(m.text))
        page.on("pageerror", lambda e: record.page_errors.append(str(e)))
        page.on("request", lambda r: record.requested.append(r.url))
        page.on("requestfailed", lambda r: record.failed.append(f"{r.url} ({r.failure})"))
        page.on("response", lambda r: r.status >= 400 and record.bad_status.append(f"{r.status} {r.url}"))
        page.goto(base + path, wait_until="load")
        settle(page)
        yield page, record
    finally:
        context.close()


def settle(page) -> None:
    """Wait until the network is idle and MathJax (where the page loads it) has typeset."""
    page.wait_for_load_state("networkidle")
    page.evaluate(
        "() => (window.MathJax && MathJax.startup && MathJax.startup.promise)"
        " ? MathJax.startup.promise.then(() => true) : null"
    )
    page.wait_for_load_state("networkidle")
