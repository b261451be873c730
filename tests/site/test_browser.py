"""The full edition in a real browser (headless Chromium), with the network blocked.

Every page is opened twice, from disk (file://) and over HTTP as `make serve` serves it,
in a browser that can reach nothing outside the site. Then: no console errors, no
uncaught exceptions, no failed requests; math typeset by MathJax from the site; images
loaded with alt text; dropdowns that open and close; copy buttons on code; a search that
finds a word only one chapter has; and screenshots of every chapter at desktop and phone
widths in ``_build/screenshots/`` for a person to look at.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from siteutil import SCREENSHOTS, chapter_pages, opened, pages, parsed, serve

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


@pytest.fixture(scope="module", params=["full, file://", "full, HTTP", "student, file://"])
def visits(request, browser, site, student_site):
    """Open every page of an edition once, from disk or served: {page: (record, facts)}.

    The student edition shares the theme and the assets, so it is opened from disk only.
    """
    edition, scheme = request.param.split(", ")
    built = site if edition == "full" else student_site
    server = None
    if scheme == "HTTP":
        server, base = serve(built)
    else:
        base = built.as_uri() + "/"
    out = {}
    try:
        for rel in pages(built):
            with opened(browser, base, rel) as (page, record):
                out[rel] = (record, page.evaluate(PAGE_FACTS))
    finally:
        if server:
            server.shutdown()
            server.server_close()
    return out


def test_every_page_loads_without_errors_or_network(visits):
    assert len(visits) >= 10, f"only {len(visits)} pages: {sorted(visits)}"
    problems = [f"{rel}: {p}" for rel, (record, _) in visits.items() for p in record.problems()]
    assert not problems, "\n".join(problems)


def test_math_is_typeset_with_mathjax_and_fonts_from_the_site(visits):
    math_pages = {rel: v for rel, v in visits.items() if v[1]["math"]}
    assert len(math_pages) >= 3, "fewer than three pages with math: the check tests little"
    problems = []
    for rel, (record, facts) in math_pages.items():
        if facts["typeset"] != facts["math"]:
            problems.append(f"{rel}: {facts['math'] - facts['typeset']} of {facts['math']} formulas not typeset")
        if facts["merror"]:
            problems.append(f"{rel}: TeX errors {facts['merror']}")
        if facts["raw"]:
            problems.append(f"{rel}: raw TeX left in the text: {facts['raw']}")
        fonts = [u for u in record.requested if "/_static/mathjax/output/chtml/fonts/" in u]
        if not fonts:
            problems.append(f"{rel}: MathJax loaded no font from the site")
    no_math = [rel for rel, (_, facts) in visits.items() if not facts["math"] and facts["raw"]]
    problems += [f"{rel}: raw TeX in a page without typeset math: {visits[rel][1]['raw']}" for rel in no_math]
    assert not problems, "\n".join(problems)


FILE_NAME = re.compile(r"(^|/)[^\s/]+\.(png|jpe?g|gif|svg|webp)$", re.I)


def test_every_image_loads_and_has_alt_text(visits):
    problems, seen = [], 0
    for rel, (_, facts) in visits.items():
        for img in facts["images"]:
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
# code cells: its summary). Shown means rendered, not visibility:hidden and not squashed
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
    out.details.push({i, summary: summary.textContent.trim(), states});
  }
  return out;
}
"""

COPY_BUTTONS = r"""
() => [...document.querySelectorAll('div.highlight')]
        .filter(h => h.querySelector('pre') && !h.querySelector('button.copybtn')).length
"""


@pytest.fixture(scope="module")
def chapter_interactions(browser, http_base, site):
    """Load every chapter once over HTTP; toggle its dropdowns and try a copy button."""
    out = {}
    for rel in chapter_pages(site):
        with opened(browser, http_base, rel) as (page, record):
            page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=http_base.rstrip("/"))
            result = {"missing_copy": page.evaluate(COPY_BUTTONS)}
            cells = page.locator("div.cell_input div.highlight")
            result["cells"] = cells.count()
            if result["cells"]:
                # A visible code cell: hover shows its copy button, a real click copies.
                cell = cells.filter(has=page.locator("pre:visible")).first
                result["expected"] = cell.locator("pre").inner_text().strip()
                cell.hover()
                cell.locator("button.copybtn").click()
                result["copied"] = page.evaluate("() => navigator.clipboard.readText()").strip()
            result.update(page.evaluate(TOGGLE_EVERYTHING))
            result["problems"] = record.problems()
            out[rel] = result
    return out


def test_dropdowns_open_and_close(chapter_interactions):
    """Every solution dropdown and every <details> (hidden code) on every chapter."""
    problems, solutions, details = [], 0, 0
    for rel, r in chapter_interactions.items():
        for t in r["toggles"]:
            solutions += t["solution"]
            if t["states"] != [False, True, False]:
                problems.append(f"{rel}: dropdown {t['id']}: visible before/after two clicks {t['states']}")
        for d in r["details"]:
            details += 1
            if d["states"] != [False, True, False]:
                problems.append(f"{rel}: <details> #{d['i']} ({d['summary']!r}): open {d['states']}")
        problems += [f"{rel}: {p}" for p in r["problems"]]
    assert solutions >= len(chapter_interactions), f"only {solutions} solution dropdowns in the chapters"
    assert details > 0, "no <details> (hidden code cells) in any chapter"
    assert not problems, "\n".join(problems)


def test_code_cells_have_working_copy_buttons(chapter_interactions):
    problems, blocks = [], 0
    for rel, r in chapter_interactions.items():
        blocks += r["cells"]
        if r["missing_copy"]:
            problems.append(f"{rel}: {r['missing_copy']} code blocks without a copy button")
        if not r["cells"]:
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


def test_search_finds_a_word_only_one_chapter_has(browser, base, site, chapter_terms):
    """For each chapter, search for a word that no other page has: only that chapter."""
    terms = chapter_terms
    assert len(terms) == len(chapter_pages(site)), f"no chapter-only word found for {set(chapter_pages(site)) - set(terms)}"
    problems = []
    for rel, term in sorted(terms.items()):
        with opened(browser, base, f"search.html?q={term}") as (page, record):
            page.wait_for_function(
                "() => /finished|did not match/.test(document.querySelector('#search-results')?.textContent || '')",
                timeout=15000,
            )
            hrefs = page.eval_on_selector_all("#search-results ul.search li > a", "as => as.map(a => a.href)")
            root = urlsplit(base).path
            found = sorted({urlsplit(h).path.removeprefix(root) for h in hrefs})
            if found != [rel]:
                problems.append(f"search for {term!r} (only in {rel}) found {found}")
            problems += [f"search {term!r}: {p}" for p in record.problems()]
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


# ---------------------------------------------------------------------------- screenshots

VIEWPORTS = {
    "desktop": {"viewport": {"width": 1280, "height": 900}},
    "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True},
}


@pytest.mark.parametrize("width", sorted(VIEWPORTS))
def test_screenshots_of_every_chapter(browser, http_base, site, width):
    """Write _build/screenshots/<width>/<chapter>.png (full page) for review; the page must
    not be wider than the screen (wide tables and code scroll inside their own boxes)."""
    out = SCREENSHOTS / width
    out.mkdir(parents=True, exist_ok=True)
    problems = []
    for rel in chapter_pages(site):
        with opened(browser, http_base, rel, **VIEWPORTS[width]) as (page, record):
            overflow = page.evaluate(
                "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            if overflow > 1:
                wide = page.evaluate(WIDEST)
                problems.append(f"{rel}: page is {overflow}px wider than the {width} screen; widest: {wide}")
            shot = out / (Path(rel).stem + ".png")
            page.screenshot(path=str(shot), full_page=True)
            if shot.stat().st_size < 10_000:
                problems.append(f"{rel}: screenshot {shot} is nearly empty")
            problems += [f"{rel}: {p}" for p in record.problems()]
    assert not problems, "\n".join(problems)


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
