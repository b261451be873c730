"""The full and student editions in a real browser (headless Chromium), network blocked.

One browser for the whole run, and each page loaded once per way of looking at it, with
every check run on that load:

* the full edition at desktop width (1280 px) over HTTP, as `make serve` serves it:
  errors, requests, math, images, dropdowns and hidden code, copy buttons, width, the top
  of the page, ☰ collapsing the sidebar, and a screenshot;
* the full edition at phone size (390 x 844, touch) from disk (file://): errors,
  requests, math, images, width, the top of the page, the "Contents" drawer, and a
  screenshot; then ☰ opens the table of contents and a tap on the next page's entry is
  that page's load;
* the student edition at desktop width from disk: errors, requests, math, images.

So both schemes cover every page of the full edition. The search page is one of those
pages: loaded once per scheme, it runs every chapter's query in that page. A page counts
as loaded when its load event has fired, MathJax has typeset, its images are decoded,
its fonts have loaded and no request it sent is pending (``siteutil.Tab``); nothing
waits for a fixed time or for the network to stay idle.

Screenshots of every page at both widths go to ``_build/screenshots/`` for a person to
look at.
"""

from __future__ import annotations

import base64
import json
import re
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from siteutil import SCREENSHOTS, Tab, chapter_pages, pages, parsed, tab

DESKTOP = {"viewport": {"width": 1280, "height": 900}}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
# A URL outside the site that one page per scheme asks for after its checks: the request
# must be refused and recorded, or the "nothing outside the site" checks prove nothing.
PROBE = "https://example.org/toklab-site-test-probe"

# Facts about a loaded page, read in the browser after MathJax has run.
PAGE_FACTS = r"""
async () => {
  const math = [...document.querySelectorAll('span.math, div.math')];
  const skip = 'pre, code, script, style, textarea, mjx-container, .highlight';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const raw = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (el.closest(skip)) continue;
    const m = n.textContent.match(/.{0,30}(\\\(|\\\[|\$\$).{0,30}/s);
    if (m) raw.push(m[0]);
  }
  const images = await Promise.all([...document.images].map(async img => {
    try { await img.decode(); } catch (e) {}
    return {src: img.getAttribute('src'), alt: img.getAttribute('alt'),
            loaded: img.complete && img.naturalWidth > 0};
  }));
  return {
    math: math.length,
    typeset: math.filter(e => e.querySelector('mjx-container')).length,
    merror: [...document.querySelectorAll('mjx-merror')].map(e => e.textContent).slice(0, 5),
    raw: raw.slice(0, 5),
    images,
  };
}
"""


# The outermost elements that stick out past the right edge of the screen without a
# scrolling box around them (for the failure message).
WIDEST = r"""
() => {
  const w = document.documentElement.clientWidth;
  const clipped = el => {
    for (let p = el.parentElement; p; p = p.parentElement) {
      if (['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(p).overflowX)
          && p.getBoundingClientRect().right <= w + 1) return true;
    }
    return false;
  };
  const sticksOut = el => el.getBoundingClientRect().right > w + 1 && !clipped(el);
  const out = [];
  for (const el of document.querySelectorAll('body *')) {
    if (!el.getBoundingClientRect().width || !sticksOut(el)) continue;
    if (el.parentElement && sticksOut(el.parentElement)) continue;
    if (getComputedStyle(el).visibility === 'hidden') continue;
    out.push(`${el.tagName.toLowerCase()}.${[...el.classList].join('.')}: `
             + el.textContent.slice(0, 40).replace(/\s+/g, ' '));
  }
  return out.slice(0, 8);
}
"""


# How wide the page is against the screen (the outermost elements sticking out, when it
# is wider).
LAYOUT = r"""
() => {
  const root = document.documentElement;
  const overflow = root.scrollWidth - root.clientWidth;
  // laidOut: a phone browser widens the layout viewport to the page's minimum width (a
  // long unbreakable word), and then nothing sticks out of it: the width says so.
  return {overflow, laidOut: window.innerWidth, widest: overflow > 1 ? (WIDEST)() : []};
}
""".replace("WIDEST", WIDEST)


def _shot_name(rel: str) -> str:
    """book/ch01_measure.html -> ch01_measure.png; index.html -> _index.png (the site's root)."""
    path = Path(rel)
    return (path.stem if path.parts[0] == "book" else "_" + path.stem) + ".png"


def _screenshot(t: Tab, width: str, rel: str) -> dict:
    """The whole page as a PNG. Chromium's own capture (DevTools protocol) with
    optimizeForSpeed: its faster PNG encoder takes about half the time of Playwright's
    full-page screenshot for the same pixels (files about a third larger). The pages are
    up to 45,000 px tall, and encoding was most of what these tests spent."""
    shot = SCREENSHOTS / width / _shot_name(rel)
    shot.parent.mkdir(parents=True, exist_ok=True)
    w, h = t.page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
    png = t.cdp().send(
        "Page.captureScreenshot",
        {
            "format": "png",
            "optimizeForSpeed": True,
            "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": w, "height": h, "scale": 1},
        },
    )
    shot.write_bytes(base64.b64decode(png["data"]))
    return {"path": str(shot), "bytes": shot.stat().st_size}


def _order(site: Path) -> list[str]:
    """Every page, the site's root first: index.html redirects to book/index.html, and that
    one load is the visit of both."""
    rest = [rel for rel in pages(site) if rel not in ("index.html", "book/index.html")]
    assert (site / "index.html").is_file() and (site / "book" / "index.html").is_file()
    return ["index.html", *rest]


def _arrive(t: Tab, rel: str, terms: dict[str, str]) -> str:
    """Open ``rel`` in ``t``; the path it was opened with."""
    if rel == "index.html":
        t.follow(lambda: t.page.goto(t.base + rel, wait_until="commit"), "book/index.html")
        return rel
    path = f"search.html?q={_first_term(terms)}" if rel == "search.html" and terms else rel
    t.goto(path)
    return path


def _first_term(terms: dict[str, str]) -> str:
    return terms[min(terms)]


def _finish(t: Tab, visit: dict, probe: bool = False) -> dict:
    """Wait for what the checks set off, then file the document's record in ``visit``."""
    t.drain()
    visit["problems"] = t.record.problems()
    visit["requested"] = list(t.record.requested)
    if probe:
        # Read after the problems above: the refused probe is not one of the page's own.
        t.page.evaluate("url => fetch(url).then(() => 'fetched', () => 'refused')", PROBE)
        t.drain()
        visit["probe"] = PROBE in t.record.outside
    return visit


def _look(t: Tab, width: str, rel: str) -> dict:
    """The checks every load gets: facts, width, screenshot."""
    page = t.page
    visit = {"url": page.url, "facts": page.evaluate(PAGE_FACTS), "layout": page.evaluate(LAYOUT)}
    visit["header"] = page.evaluate(HEADER)
    visit["shot"] = _screenshot(t, width, rel)
    return visit


# ---------------------------------------------------------------------------- navigation
#
# The theme's buttons in the article header: ☰ (.primary-toggle: the book's table of
# contents) and "Contents" (.secondary-toggle: the page's own sections). On a phone each
# opens a drawer (<dialog>); at desktop width ☰ collapses and expands the left sidebar.

# The top of a page as loaded: the theme's top navbar (#pst-header) must take no room
# (it once held an empty strip with a second search box), the article header with the
# buttons must be the first thing on the page, and there must be one way to search.
HEADER = r"""
() => {
  const shown = el => el.checkVisibility({visibilityProperty: true})
                      && el.getBoundingClientRect().width > 0;
  const navbar = document.querySelector('#pst-header');
  const buttons = document.querySelector('.bd-header-article');
  // (The search page's own search form is part of its content.)
  const search = [...document.querySelectorAll('.search-button-field, .search-button, form.bd-search')]
    .filter(el => shown(el) && !(el.closest('#main-content') && !el.closest('.bd-header-article')));
  return {
    navbar: navbar ? navbar.getBoundingClientRect().height : 0,
    buttons: buttons ? buttons.getBoundingClientRect().top + window.scrollY : null,
    search: search.map(el => el.className),
    menus: [...document.querySelectorAll('.primary-toggle')].filter(shown).length,
    contents: [...document.querySelectorAll('.secondary-toggle')].filter(shown).length,
    sections: document.querySelectorAll('#pst-secondary-sidebar a[href^="#"]').length,
  };
}
"""

# Resolves when no CSS transition is running in the document (one that is cancelled and
# replaced by another is waited for in turn).
TRANSITIONS_DONE = r"""
async () => {
  for (;;) {
    const running = document.getAnimations().filter(a => a instanceof CSSTransition
                                                    && a.playState !== 'finished');
    if (!running.length) return;
    await Promise.all(running.map(a => a.finished.catch(() => null)));
  }
}
"""

# A drawer after its button was tapped: open, on screen, and the links it shows.
DRAWER = r"""
async (id) => {
  const d = document.getElementById(id);
  await (TRANSITIONS_DONE)();
  const r = d.getBoundingClientRect();
  const links = [...d.querySelectorAll('a[href]')].map((a, i) => ({a, i}))
    .filter(({a}) => a.checkVisibility({visibilityProperty: true}));
  return {open: d.open, width: r.width, height: r.height,
          links: links.map(({a, i}) => ({i, href: a.href, text: a.textContent.trim()}))};
}
""".replace("TRANSITIONS_DONE", TRANSITIONS_DONE)

# The left sidebar at desktop width: shown, and where the article starts, after every
# transition has finished.
SIDEBAR = r"""
async () => {
  const bar = document.getElementById('pst-primary-sidebar');
  await (TRANSITIONS_DONE)();
  const r = bar.getBoundingClientRect();
  return {shown: bar.checkVisibility({visibilityProperty: true}) && r.width > 0 && r.right > 0,
          article: Math.round(document.getElementById('main-content').getBoundingClientRect().left)};
}
""".replace("TRANSITIONS_DONE", TRANSITIONS_DONE)


def _rel(t: Tab, url: str) -> str:
    """A URL of the site as a page path (no fragment, no query)."""
    return urlsplit(url)._replace(fragment="", query="").geturl().removeprefix(t.base)


def _desktop_menu(t: Tab) -> dict:
    """Click the visible ☰ twice: the sidebar goes and comes back."""
    page = t.page
    menu = page.locator(".primary-toggle").filter(visible=True)
    if menu.count() != 1:
        return {"menus": menu.count()}
    states = [page.evaluate(SIDEBAR)]
    for _ in range(2):
        menu.click(timeout=5000)
        states.append(page.evaluate(SIDEBAR))
    return {"menus": 1, "states": states}


def _failure(e: Exception) -> str:
    return f"{type(e).__name__}: {str(e).splitlines()[0]}"


def _phone_contents(t: Tab) -> dict | None:
    """Tap "Contents", then a section in it (not the first): the drawer opens, and after
    the tap it has closed with that section's heading at the top of the screen. None when
    the page shows no "Contents" button."""
    page = t.page
    button = page.locator(".secondary-toggle").filter(visible=True)
    if button.count() != 1:
        return None
    try:
        button.tap(timeout=5000)
    except Exception as e:  # noqa: BLE001 - the test reports it; the run goes on
        return {"drawer": {"open": False, "tap": _failure(e)}}
    drawer = page.evaluate(DRAWER, "pst-secondary-sidebar-modal")
    result = {"drawer": drawer}
    here = [a for a in drawer["links"] if _rel(t, a["href"]) == _rel(t, page.url) and "#" in a["href"]]
    if drawer["open"] and len(here) > 1:
        target = here[len(here) // 2]
        result["target"] = target["text"]
        result["hash"] = "#" + target["href"].split("#", 1)[1]
        try:
            page.locator("#pst-secondary-sidebar-modal a[href]").nth(target["i"]).tap(timeout=5000)
        except Exception as e:  # noqa: BLE001 - the test reports it; the run goes on
            result["after"] = {"open": True, "hash": None, "top": None, "tap": _failure(e)}
            page.evaluate("() => document.getElementById('pst-secondary-sidebar-modal')?.close()")
            return result
        result["after"] = page.evaluate(
            """async (hash) => {
                 const d = document.getElementById('pst-secondary-sidebar-modal');
                 await new Promise(r => setTimeout(r));  // the close is queued after the jump
                 const h = document.getElementById(decodeURIComponent(hash.slice(1)));
                 return {open: d.open, hash: location.hash,
                         top: h ? Math.round(h.getBoundingClientRect().top) : null};
               }""",
            result["hash"],
        )
    # Whatever happened, the drawer is closed for what comes next.
    page.evaluate("() => document.getElementById('pst-secondary-sidebar-modal')?.close()")
    return result


def _phone_menu(t: Tab, remaining: list[str]) -> tuple[dict, object]:
    """Tap ☰: the book's table of contents opens. (result, a tap on the entry of the first
    page in ``remaining`` that it lists, or None)."""
    page = t.page
    menu = page.locator(".primary-toggle").filter(visible=True)
    result = {"menus": menu.count()}
    if result["menus"] != 1:
        return result, None
    try:
        menu.tap(timeout=5000)
    except Exception as e:  # noqa: BLE001 - the test reports it; the run goes on
        result["drawer"] = {"open": False, "tap": _failure(e)}
        return result, None
    drawer = result["drawer"] = page.evaluate(DRAWER, "pst-primary-sidebar-modal")
    listed = {_rel(t, a["href"]): a for a in drawer["links"]}
    result["chapters"] = sorted(rel for rel in listed if Path(rel).name.startswith("ch"))
    nxt = next((rel for rel in remaining if rel in listed), None)
    if not drawer["open"] or nxt is None:
        return result, None
    link = page.locator("#pst-primary-sidebar-modal a[href]").nth(listed[nxt]["i"])
    result["tapped"] = nxt
    return result, lambda: link.tap(timeout=5000)


def _phone_go(t: Tab, menu: dict, tap) -> str | None:
    """Tap the entry ``_phone_menu`` chose; it must open that page, whose load this is.
    The page, or None (the reason in ``menu["went"]``)."""
    try:
        t.follow(tap, menu["tapped"])
    except Exception as e:  # noqa: BLE001 - the test reports it; the run goes on
        menu["went"] = _failure(e)
        return None
    menu["went"] = menu["tapped"]
    return menu["tapped"]


@pytest.fixture(scope="module")
def desktop_visits(browser, http_base, site, chapter_terms) -> dict[str, dict]:
    """Every page of the full edition at desktop width over HTTP, each loaded once:
    {page: visit}. index.html's visit is its redirect; book/index.html is where it lands."""
    out = {}
    with tab(browser, http_base, **DESKTOP) as t:
        t.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=http_base.rstrip("/"))
        for rel in _order(site):
            _arrive(t, rel, chapter_terms)
            landed = "book/index.html" if rel == "index.html" else rel
            visit = _look(t, "desktop", landed)
            if rel == "search.html":
                visit["search"] = _search_all(t.page, t.base, chapter_terms)
            visit.update(_copy_button(t.page))
            visit.update(t.page.evaluate(TOGGLE_EVERYTHING))
            visit["menu"] = _desktop_menu(t)
            out[landed] = _finish(t, visit, probe=rel == "genindex.html")
            if rel == "index.html":
                out[rel] = {"url": visit["url"], "problems": []}
    return out


@pytest.fixture(scope="module")
def phone_visits(browser, site, chapter_terms) -> dict[str, dict]:
    """Every page of the full edition at phone size from disk, each loaded once.

    The pages are visited the way a reader on a phone moves through the book: each page
    opens the table of contents with ☰ and taps the entry of the next page not yet
    visited, and that tap is the next page's load. A page the menu does not list (the
    index, the search page), or the next one after a tap that failed, is opened directly.
    """
    out = {}
    with tab(browser, site.as_uri() + "/", **PHONE) as t:
        todo = _order(site)
        came_by_tap = None
        while todo:
            rel = came_by_tap or todo[0]
            if came_by_tap is None:
                _arrive(t, rel, chapter_terms)
            landed = "book/index.html" if rel == "index.html" else rel
            todo = [r for r in todo if r not in (rel, landed)]
            visit = _look(t, "phone", landed)
            visit["came_by_tap"] = came_by_tap is not None
            if rel == "search.html":
                visit["search"] = _search_all(t.page, t.base, chapter_terms)
            visit["contents"] = _phone_contents(t)
            visit["menu"], tap = _phone_menu(t, todo)
            # The page's record closes before the tap that loads the next page.
            out[landed] = _finish(t, visit, probe=rel == "genindex.html")
            if rel == "index.html":
                out[rel] = {"url": visit["url"], "problems": []}
            came_by_tap = _phone_go(t, visit["menu"], tap) if tap else None
    return out


@pytest.fixture(scope="module")
def student_visits(browser, student_site) -> dict[str, dict]:
    """Every page of the student edition at desktop width from disk, each loaded once.
    It shares the theme and the assets with the full edition, hence one scheme."""
    out = {}
    with tab(browser, student_site.as_uri() + "/", **DESKTOP) as t:
        for rel in _order(student_site):
            _arrive(t, rel, {})
            landed = "book/index.html" if rel == "index.html" else rel
            visit = {"url": t.page.url, "facts": t.page.evaluate(PAGE_FACTS)}
            visit.update(t.page.evaluate(TOGGLE_EVERYTHING))
            out[landed] = _finish(t, visit)
            if rel == "index.html":
                out[rel] = {"url": visit["url"], "problems": []}
    return out


# The three ways every page is loaded: (visits fixture, the edition's site fixture).
LOADS = {
    "full, HTTP, desktop": ("desktop_visits", "site"),
    "full, file://, phone": ("phone_visits", "site"),
    "student, file://, desktop": ("student_visits", "student_site"),
}


@pytest.fixture(scope="module", params=sorted(LOADS))
def load(request) -> tuple[Path, dict[str, dict]]:
    """(the edition's root, its visits), for each of LOADS."""
    visits, built = LOADS[request.param]
    return request.getfixturevalue(built), request.getfixturevalue(visits)


def test_every_page_loads_without_errors_or_network(load):
    built, visits = load
    assert sorted(visits) == pages(built), "not every page was opened"
    problems = [f"{rel}: {p}" for rel, v in visits.items() for p in v["problems"]]
    root = visits["index.html"]["url"]
    if not root.endswith("/book/index.html"):
        problems.append(f"index.html did not lead to book/index.html but to {root}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("which", ["desktop_visits", "phone_visits"])
def test_requests_outside_the_site_are_refused_and_recorded(which, request):
    """The guard the other checks rely on: a page's request to another host is refused
    and shows up in its record."""
    probed = [rel for rel, v in request.getfixturevalue(which).items() if "probe" in v]
    assert probed, "no page made the probe request"
    assert all(request.getfixturevalue(which)[rel]["probe"] for rel in probed), f"{PROBE} was not refused and recorded"


def test_math_is_typeset_with_mathjax_and_fonts_from_the_site(load):
    visits = {rel: v for rel, v in load[1].items() if "facts" in v}
    math_pages = {rel: v for rel, v in visits.items() if v["facts"]["math"]}
    assert len(math_pages) >= 3, "fewer than three pages with math: the check tests little"
    problems = []
    for rel, v in math_pages.items():
        facts = v["facts"]
        if facts["typeset"] != facts["math"]:
            problems.append(f"{rel}: {facts['math'] - facts['typeset']} of {facts['math']} formulas not typeset")
        if facts["merror"]:
            problems.append(f"{rel}: TeX errors {facts['merror']}")
        if facts["raw"]:
            problems.append(f"{rel}: raw TeX left in the text: {facts['raw']}")
        fonts = [u for u in v["requested"] if "/_static/mathjax/output/chtml/fonts/" in u]
        if not fonts:
            problems.append(f"{rel}: MathJax loaded no font from the site")
    problems += [
        f"{rel}: raw TeX in a page without typeset math: {v['facts']['raw']}"
        for rel, v in visits.items()
        if not v["facts"]["math"] and v["facts"]["raw"]
    ]
    assert not problems, "\n".join(problems)


FILE_NAME = re.compile(r"(^|/)[^\s/]+\.(png|jpe?g|gif|svg|webp)$", re.I)


def test_every_image_loads_and_has_alt_text(load):
    problems, seen = [], 0
    for rel, v in load[1].items():
        for img in v.get("facts", {}).get("images", []):
            seen += 1
            alt = (img["alt"] or "").strip()
            if not img["loaded"]:
                problems.append(f"{rel}: image {img['src']} did not load")
            if not alt or FILE_NAME.search(alt):
                problems.append(f"{rel}: image {img['src']} has no alt text (alt={img['alt']!r})")
    assert seen >= 10, f"only {seen} images in the whole edition"
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------------------- interaction

# Open and close every dropdown of a page by clicking it, the way a reader does: each
# solution box (sphinx-togglebutton: the button in its title) and each <details> (hidden
# code cells and the playground's step-by-step box: its summary). Shown means rendered, not visibility:hidden and not squashed
# to no height (the toggle also fades in, so opacity is not read).
TOGGLE_EVERYTHING = r"""
() => {
  const shown = el => el.checkVisibility({visibilityProperty: true})
                      && el.getBoundingClientRect().height > 0;
  const out = {toggles: [], details: []};
  for (const box of document.querySelectorAll('.admonition.toggle')) {
    const content = box.querySelector(':scope > .admonition-title ~ *');
    const button = box.querySelector(':scope > .admonition-title .toggle-button');
    const states = [shown(content)];
    for (let k = 0; k < 2; k++) { button.click(); states.push(shown(content)); }
    out.toggles.push({id: box.id, solution: box.classList.contains('solution'), states});
  }
  for (const [i, box] of [...document.querySelectorAll('details')].entries()) {
    const summary = box.querySelector(':scope > summary');
    const content = box.querySelector(':scope > :not(summary)');
    const states = [box.open && shown(content)];
    for (let k = 0; k < 2; k++) { summary.click(); states.push(box.open && shown(content)); }
    out.details.push({i, summary: summary.textContent.trim(), states,
                      playground: box.classList.contains('tp-watch')});
  }
  return out;
}
"""

COPY_BUTTONS = r"""
() => [...document.querySelectorAll('div.highlight')]
        .filter(h => h.querySelector('pre') && !h.querySelector('button.copybtn')).length
"""


def _copy_button(page) -> dict:
    """Hover a visible code cell so that its copy button shows, click it (a real click),
    read the clipboard."""
    result = {"missing_copy": page.evaluate(COPY_BUTTONS)}
    cells = page.locator("div.cell_input div.highlight")
    result["cells"] = cells.count()
    if result["cells"]:
        # Emptied first: a copy that fails must not find an earlier page's text there.
        page.evaluate("() => navigator.clipboard.writeText('')")
        cell = cells.filter(has=page.locator("pre:visible")).first
        result["expected"] = cell.locator("pre").inner_text().strip()
        cell.hover()
        cell.locator("button.copybtn").click()
        result["copied"] = page.evaluate("() => navigator.clipboard.readText()").strip()
    return result


def _toggle_problems(rel: str, v: dict) -> list[str]:
    problems = []
    for t in v["toggles"]:
        if t["states"] != [False, True, False]:
            problems.append(f"{rel}: dropdown {t['id']}: visible before/after two clicks {t['states']}")
    for d in v["details"]:
        # A hidden code cell starts closed; the playground's "watch BPE" box may start open
        # (on the playground page it does): either way two clicks must flip it and back.
        start = d["states"][0] if d.get("playground") else False
        if d["states"] != [start, not start, start]:
            problems.append(f"{rel}: <details> #{d['i']} ({d['summary']!r}): open {d['states']}")
    return problems


def test_dropdowns_open_and_close(desktop_visits, site):
    """Every solution dropdown and every <details> (hidden code) on every page."""
    chapters = chapter_pages(site)
    v = {rel: desktop_visits[rel] for rel in pages(site) if "toggles" in desktop_visits[rel]}
    solutions = sum(t["solution"] for rel in chapters for t in v[rel]["toggles"])
    details = sum(len(v[rel]["details"]) for rel in chapters)
    problems = [p for rel in v for p in _toggle_problems(rel, v[rel])]
    assert solutions >= len(chapters), f"only {solutions} solution dropdowns in the chapters"
    assert details > 0, "no <details> (hidden code cells) in any chapter"
    assert not problems, "\n".join(problems)


def test_student_edition_hidden_code_opens_and_closes(student_visits, student_site):
    chapters = chapter_pages(student_site)
    details = sum(len(student_visits[rel]["details"]) for rel in chapters)
    solutions = sum(t["solution"] for v in student_visits.values() for t in v.get("toggles", []))
    problems = [p for rel, v in student_visits.items() if "toggles" in v for p in _toggle_problems(rel, v)]
    assert details > 0, "no <details> (hidden code cells) in any student chapter"
    assert solutions == 0, f"{solutions} solution dropdowns in the student edition"
    assert not problems, "\n".join(problems)


def test_code_cells_have_working_copy_buttons(desktop_visits, site):
    problems, blocks = [], 0
    for rel in pages(site):
        r = desktop_visits[rel]
        if "cells" not in r:
            continue
        blocks += r["cells"]
        if r["missing_copy"]:
            problems.append(f"{rel}: {r['missing_copy']} code blocks without a copy button")
        if not r["cells"]:
            if rel in chapter_pages(site):
                problems.append(f"{rel}: no code cells")
        elif r["copied"] != r["expected"]:
            problems.append(f"{rel}: the copy button copied {r['copied'][:60]!r}, not {r['expected'][:60]!r}")
    assert blocks >= 50, f"only {blocks} code cells in the chapters"
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------------------- search


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _search_index(site: Path) -> dict:
    """The site's Sphinx search index (``searchindex.js``), as a dict."""
    text = (site / "searchindex.js").read_text(encoding="utf-8")
    match = re.search(r"Search\.setIndex\((.*)\)\s*;?\s*$", text, re.S)
    assert match, "searchindex.js does not hold Search.setIndex(...)"
    return json.loads(match.group(1))


def unique_terms(site: Path) -> dict[str, str]:
    """For each chapter, a word of its prose that the search index holds for that page only.

    Read off the index Sphinx's search uses (stems, as its English stemmer makes
    them), so the choice agrees with what the search will match: the stem is
    indexed for this chapter alone, and no other page's index term contains it
    (the search also matches index terms that contain the query). Picks the word
    the chapter uses most often among those, so the term is one a reader could
    plausibly search for.
    """
    import snowballstemmer

    stem = snowballstemmer.stemmer("porter").stemWord
    index = _search_index(site)
    docs = {name + ".html": k for k, name in enumerate(index["docnames"])}
    owners: dict[str, set[int]] = {}
    for table in ("terms", "titleterms"):
        for term, where in index[table].items():
            owners.setdefault(term, set()).update([where] if isinstance(where, int) else where)
    terms = {}
    for rel in chapter_pages(site):
        me = docs[rel]
        others = " ".join(t for t, where in owners.items() if where - {me})
        article = parsed(site / rel).find("article") or parsed(site / rel)
        prose = Counter(w for p in article.find_all("p") for w in re.findall(r"[a-z]{8,}", p.get_text(" ").lower()))
        candidates = [(-n, w) for w, n in prose.items() if owners.get(stem(w)) == {me} and stem(w) not in others]
        if candidates:
            terms[rel] = min(candidates)[1]
    return terms


@pytest.fixture(scope="module")
def chapter_terms(site) -> dict[str, str]:
    return unique_terms(site)


# Runs each query in the search page that is already open, through Sphinx 7.4's own
# searchtools (Search.performSearch, which renders the hits into #search-results as a
# reader's query does); the first query is the one in the page's URL (?q=), run by the
# page itself when it loaded. {term: [href of each hit]}.
SEARCH_ALL = r"""
async (terms) => {
  const box = document.getElementById('search-results');
  const done = () => /finished|did not match/.test(Search.status ? Search.status.textContent : '');
  const found = {};
  for (const [k, term] of terms.entries()) {
    if (k > 0) {
      box.replaceChildren();
      Search.performSearch(term);
    }
    const start = performance.now();
    while (!done()) {
      if (performance.now() - start > 15000) throw new Error(`search for ${term} did not finish`);
      await new Promise(r => setTimeout(r, 10));
    }
    found[term] = [...box.querySelectorAll('ul.search li > a')].map(a => a.href);
  }
  return found;
}
"""


def _search_all(page, base: str, terms: dict[str, str]) -> dict[str, tuple[str, list[str]]]:
    """{chapter: (its term, the pages the search found for it)}; the page's own query
    (?q=) must be the first term."""
    order = sorted(terms.items())
    found = page.evaluate(SEARCH_ALL, [term for _, term in order])
    root = urlsplit(base).path
    return {rel: (term, sorted({urlsplit(h).path.removeprefix(root) for h in found[term]})) for rel, term in order}


@pytest.mark.parametrize("which", ["desktop_visits", "phone_visits"])
def test_search_finds_a_word_only_one_chapter_has(which, request, site, chapter_terms):
    """For each chapter, search for a word that no other page has: only that chapter.
    Over HTTP (desktop) and from disk (phone), all queries in one load of the search page."""
    assert len(chapter_terms) == len(chapter_pages(site)), (
        f"no chapter-only word found for {set(chapter_pages(site)) - set(chapter_terms)}"
    )
    results = request.getfixturevalue(which)["search.html"]["search"]
    assert sorted(results) == sorted(chapter_terms)
    problems = [
        f"search for {term!r} (only in {rel}) found {found}" for rel, (term, found) in results.items() if found != [rel]
    ]
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------------------- links


def _ids(html_path: Path, cache: dict) -> set[str]:
    if html_path not in cache:
        soup = parsed(html_path)
        cache[html_path] = {e["id"] for e in soup.find_all(id=True)} | {e["name"] for e in soup.find_all("a", attrs={"name": True})}
    return cache[html_path]


@pytest.mark.parametrize("edition", ["full", "student"])
def test_every_internal_link_and_anchor_resolves(edition, request):
    built = request.getfixturevalue("site" if edition == "full" else "student_site")
    root = built.resolve()
    cache: dict = {}
    problems, links = [], 0
    for rel in pages(built):
        path = (built / rel).resolve()
        soup = parsed(path)
        for a in soup.find_all("a", href=True):
            href = a["href"].strip()
            parts = urlsplit(href)
            if parts.scheme or href.startswith("//") or href.startswith(("mailto:", "javascript:")):
                continue
            links += 1
            target = path if not parts.path else (path.parent / parts.path).resolve()
            if target.is_dir():
                target = target / "index.html"
            if root not in target.parents or not target.is_file():
                problems.append(f"{rel}: link {href!r} names a missing file")
                continue
            if parts.fragment and target.suffix == ".html" and parts.fragment not in _ids(target, cache):
                problems.append(f"{rel}: link {href!r}: no element with id {parts.fragment!r} in {target.relative_to(root)}")
    assert links > 200, f"only {links} internal links"
    assert not problems, "\n".join(problems)


def test_bibliography_shows_no_raw_latex(site, student_site):
    """pybtex renders braces and accents, not LaTeX commands or math: an entry with
    \\texttt{…} or $…$ showed it raw."""
    problems = []
    for built in (site, student_site):
        article = parsed(built / "book" / "references.html").find("article")
        entries = article.select("div.citation")
        assert len(entries) >= 20, f"only {len(entries)} bibliography entries in {built}"
        for entry in entries:
            text = entry.get_text(" ", strip=True)
            raw = re.findall(r"\\[A-Za-z]+|\$|[{}]", text)
            if raw:
                problems.append(f"{built.name}: {text[:80]!r}: raw {sorted(set(raw))}")
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------------------- width, screenshots


@pytest.mark.parametrize("which", ["desktop_visits", "phone_visits"])
def test_no_page_is_wider_than_the_screen(which, request, site):
    """Wide tables and code scroll inside their own boxes, and long URLs break: the page
    itself never scrolls sideways."""
    visits = request.getfixturevalue(which)
    problems = []
    for rel in pages(site):
        if rel == "index.html":
            continue
        layout = visits[rel]["layout"]
        if layout["overflow"] > 1:
            problems.append(
                f"{rel}: page is {layout['overflow']}px wider than the screen (laid out at "
                f"{layout['laidOut']}px); widest: {layout['widest']}"
            )
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("which", ["desktop_visits", "phone_visits"])
def test_screenshots_of_every_page(which, request, site):
    """_build/screenshots/<desktop|phone>/<page>.png (full page), for review."""
    visits = request.getfixturevalue(which)
    shots = {rel: v["shot"] for rel, v in visits.items() if "shot" in v}
    assert set(shots) == set(pages(site)) - {"index.html"}
    problems = [f"{rel}: screenshot {s['path']} is nearly empty" for rel, s in shots.items() if s["bytes"] < 10_000]
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------------------- navigation


@pytest.mark.parametrize("which", ["desktop_visits", "phone_visits"])
def test_the_top_of_every_page_is_the_article_header_with_one_search(which, request, site):
    """No empty strip above the article header (the theme's top navbar takes no room),
    one visible ☰, and one way to search outside the page's own text."""
    visits = request.getfixturevalue(which)
    problems = []
    for rel in pages(site):
        if rel == "index.html":
            continue
        h = visits[rel]["header"]
        if h["navbar"] > 0:
            problems.append(f"{rel}: the top navbar takes {h['navbar']}px")
        if h["buttons"] is None or h["buttons"] > 1:
            problems.append(f"{rel}: the article header starts at {h['buttons']}px, not at the top")
        if len(h["search"]) != 1:
            problems.append(f"{rel}: {len(h['search'])} search boxes or buttons: {h['search']}")
        if h["menus"] != 1:
            problems.append(f"{rel}: {h['menus']} visible ☰ buttons")
    assert not problems, "\n".join(problems)


def test_desktop_menu_collapses_and_expands_the_sidebar(desktop_visits, site):
    problems = []
    for rel in pages(site):
        if rel == "index.html":
            continue
        menu = desktop_visits[rel]["menu"]
        if menu["menus"] != 1:
            problems.append(f"{rel}: {menu['menus']} visible ☰ buttons")
            continue
        shown, hidden, again = menu["states"]
        if not shown["shown"] or hidden["shown"] or again != shown:
            problems.append(f"{rel}: sidebar shown before, after one and after two clicks of ☰: {menu['states']}")
        elif hidden["article"] >= shown["article"]:
            problems.append(f"{rel}: the article did not take the sidebar's room: {menu['states']}")
    assert not problems, "\n".join(problems)


def test_phone_menu_opens_the_table_of_contents_and_goes_to_another_chapter(phone_visits, site):
    """On a phone, ☰ opens the book's table of contents on every page, listing every
    chapter; tapping an entry opens that page. Every chapter is reached that way, and
    from every chapter the next page is."""
    chapters = chapter_pages(site)
    problems = []
    for rel in pages(site):
        if rel == "index.html":
            continue
        v = phone_visits[rel]
        menu = v["menu"]
        if menu["menus"] != 1:
            problems.append(f"{rel}: {menu['menus']} visible ☰ buttons")
            continue
        drawer = menu["drawer"]
        if not (drawer["open"] and drawer.get("width") and drawer.get("height")):
            problems.append(f"{rel}: tapping ☰ did not open the table of contents: {drawer}")
        elif menu["chapters"] != chapters:
            problems.append(f"{rel}: the table of contents lists {menu['chapters']}")
        if "tapped" in menu and menu["went"] != menu["tapped"]:
            problems.append(f"{rel}: tapping the entry of {menu['tapped']} did not open it: {menu['went']}")
        if rel in chapters and not v["came_by_tap"]:
            problems.append(f"{rel}: not reached by tapping its entry in the table of contents")
        if rel in chapters and "tapped" not in menu:
            problems.append(f"{rel}: no other page's entry was tapped from here")
    assert not problems, "\n".join(problems)


def test_phone_contents_button_opens_the_page_sections(phone_visits, site):
    """On a phone, "Contents" opens the page's sections; tapping one closes the drawer
    with that section at the top of the screen."""
    problems = []
    for rel in pages(site):
        if rel == "index.html":
            continue
        v = phone_visits[rel]
        contents = v["contents"]
        if contents is None:
            if v["header"]["sections"] or rel in chapter_pages(site):
                problems.append(f"{rel}: no visible Contents button ({v['header']['sections']} sections)")
            continue
        drawer = contents["drawer"]
        if not (drawer["open"] and drawer.get("width") and drawer.get("height")):
            problems.append(f"{rel}: tapping Contents did not open the page's sections: {drawer}")
            continue
        if "after" not in contents:
            if rel in chapter_pages(site):
                problems.append(f"{rel}: the Contents drawer shows fewer than two sections of the page")
            continue
        after = contents["after"]
        if after.get("tap"):
            problems.append(f"{rel}: tapping {contents['target']!r} in Contents failed: {after['tap']}")
        elif after["hash"] != contents["hash"]:
            problems.append(f"{rel}: tapping {contents['target']!r} went to {after['hash']!r}, not {contents['hash']!r}")
        if after["open"]:
            problems.append(f"{rel}: the Contents drawer stayed open over {contents['target']!r}")
        if after["top"] is None or not 0 <= after["top"] <= PHONE["viewport"]["height"] // 4:
            problems.append(f"{rel}: section {contents['target']!r} is at {after['top']}px, not at the top")
    assert not problems, "\n".join(problems)
