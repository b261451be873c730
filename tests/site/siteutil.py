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
import re
import shutil
import threading
import time
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
    # the request filter of Tab.
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
    """What happened while one document was open in a tab."""

    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    bad_status: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)
    requested: list[str] = field(default_factory=list)
    # Requests sent and not yet finished or failed (Playwright request -> URL).
    pending: dict = field(default_factory=dict)

    def problems(self) -> list[str]:
        return (
            [f"console error: {m}" for m in self.console_errors]
            + [f"uncaught exception: {m}" for m in self.page_errors]
            + [f"failed request: {m}" for m in self.failed]
            + [f"HTTP error: {m}" for m in self.bad_status]
            + [f"request outside the site (refused): {m}" for m in self.outside]
        )


def outside_of(base: str) -> re.Pattern:
    """URLs that are not part of the site at ``base`` (nor ``data:``/``blob:`` URLs).

    A regular expression rather than a Python predicate: Playwright matches it inside the
    browser's driver, so only the requests it matches (the ones to refuse) make a round
    trip to this process, not every file of the site.
    """
    return re.compile("^(?!" + re.escape(base) + "|data:|blob:)")


# Resolves once the page is ready to be read: its load event has fired, MathJax (where
# the page loads it) has typeset the math (MathJax.startup.promise settles after the first
# typeset), every image is decoded (decode() rejects for a broken image: the image checks
# read that from the element), and the fonts the laid-out page uses have loaded (a
# forced layout first, so that fonts the typeset math needs have started loading).
READY = r"""
async () => {
  if (document.readyState !== 'complete')
    await new Promise(r => window.addEventListener('load', r, {once: true}));
  if (window.MathJax && MathJax.startup && MathJax.startup.promise)
    await MathJax.startup.promise;
  await Promise.all([...document.images].map(img => img.decode().catch(() => null)));
  document.body.getBoundingClientRect();
  await document.fonts.ready;
}
"""


class Tab:
    """A browser tab in its own context (``context_options``: viewport, touch…) that can
    reach only the site at ``base``; each document it shows gets a fresh ``Record``.

    A request for any URL outside ``base`` (another host, a CDN) is aborted and listed in
    ``record.outside``. Routing also turns the browser's cache off, so every document
    fetches what it uses and its ``record.requested`` lists all of it.
    """

    def __init__(self, browser, base: str, **context_options):
        self.base = base
        self.context = browser.new_context(service_workers="block", **context_options)
        self.record = Record()
        self._cdp = None
        self.outside = outside_of(base)
        self.context.route(self.outside, self._refuse)
        page = self.page = self.context.new_page()
        # The handlers read self.record when the event arrives: after a navigation the
        # new document's events go to its own record.
        page.on("console", lambda m: m.type == "error" and self.record.console_errors.append(m.text))
        page.on("pageerror", lambda e: self.record.page_errors.append(str(e)))
        page.on("request", self._sent)
        page.on("requestfinished", lambda r: self.record.pending.pop(r, None))
        page.on("requestfailed", self._failed)
        page.on("response", lambda r: r.status >= 400 and self.record.bad_status.append(f"{r.status} {r.url}"))
        # CSS transitions and animations run 50 times faster (for every document this tab
        # shows): the checks wait for a transition to end and read the end state, so
        # this changes no result, only the time (the sidebar's slide took 0.6 s a page).
        self.cdp().send("Animation.setPlaybackRate", {"playbackRate": 50})

    def cdp(self):
        """A DevTools protocol session on the tab (Chromium only), made once."""
        if self._cdp is None:
            self._cdp = self.context.new_cdp_session(self.page)
        return self._cdp

    def _refuse(self, route):
        self.record.outside.append(route.request.url)
        route.abort("blockedbyclient")

    def _sent(self, request):
        self.record.requested.append(request.url)
        self.record.pending[request] = request.url

    def _failed(self, request):
        self.record.pending.pop(request, None)
        if self.outside.match(request.url):
            return  # refused by _refuse, and listed as outside
        self.record.failed.append(f"{request.url} ({request.failure})")

    def goto(self, path: str) -> Record:
        """Open ``base + path`` and wait until it is ready; the new document's record."""
        self.record = Record()
        self.page.goto(self.base + path, wait_until="load")
        self.ready()
        return self.record

    def follow(self, action, path: str, timeout: float = 10_000) -> Record:
        """Run ``action`` (a tap, a click), which must open ``base + path``; wait until
        that document is ready and return its record."""
        self.record = Record()
        with self.page.expect_navigation(url=self.base + path, wait_until="load", timeout=timeout):
            action()
        self.ready()
        return self.record

    def ready(self, timeout: float = 15.0) -> None:
        """Wait until the document is ready (READY) and no request it sent is pending."""
        self.page.evaluate(READY)
        self.drain(timeout)

    def drain(self, timeout: float = 15.0) -> None:
        """Wait until every request the document sent has finished or failed."""
        deadline = time.monotonic() + timeout
        while self.record.pending:
            if time.monotonic() > deadline:
                raise TimeoutError(f"requests still pending after {timeout}s: {sorted(self.record.pending.values())}")
            # Lets Playwright deliver the events that empty ``pending``.
            self.page.wait_for_timeout(10)

    def close(self) -> None:
        self.context.close()


@contextlib.contextmanager
def tab(browser, base: str, **context_options):
    """A ``Tab``, closed afterwards."""
    t = Tab(browser, base, **context_options)
    try:
        yield t
    finally:
        t.close()


@contextlib.contextmanager
def opened(browser, base: str, path: str, **context_options):
    """``base + path`` open and ready in a new ``Tab``: yields ``(page, record)``; the
    record keeps collecting while the caller works on the page."""
    with tab(browser, base, **context_options) as t:
        record = t.goto(path)
        yield t.page, record
