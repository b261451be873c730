"""The built HTML loads nothing from outside the site (read from the files, no browser).

Every script, stylesheet, font, icon and image a page or a stylesheet refers to must be a
relative URL (or ``data:``) naming a file that exists in the built site. The browser
tests check the same at run time, for what scripts load by themselves (MathJax's fonts).
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from bs4 import BeautifulSoup

from siteutil import pages, parsed

# <link rel=…> values that make the browser fetch the target.
LOADING_RELS = {"stylesheet", "preload", "modulepreload", "prefetch", "icon", "shortcut", "apple-touch-icon", "manifest"}
# Attributes that fetch what they name, by element.
FETCHING = {
    "script": ["src"],
    "img": ["src", "srcset"],
    "source": ["src", "srcset"],
    "iframe": ["src"],
    "embed": ["src"],
    "object": ["data"],
    "video": ["src", "poster"],
    "audio": ["src"],
    "track": ["src"],
    "input": ["src"],
}
CSS_URL = re.compile(r"""url\(\s*(?P<q>['"]?)(?P<url>[^'")]+)(?P=q)\s*\)|@import\s+(?P<q2>['"])(?P<url2>[^'"]+)(?P=q2)""")


def _urls_in_srcset(value: str) -> list[str]:
    return [part.strip().split()[0] for part in value.split(",") if part.strip()]


def _check(url: str, base_file: Path, site: Path) -> str | None:
    """Why ``url`` (found in ``base_file``) is not a file of the site, or None when it is."""
    url = url.strip()
    if url.startswith("data:"):
        return None
    parts = urlsplit(url)
    if parts.scheme or url.startswith("//"):
        return f"{url} is outside the site"
    if not parts.path:
        return None  # "#fragment" or "?query" only: the page itself
    target = (site / unquote(parts.path).lstrip("/")) if parts.path.startswith("/") else (
        base_file.parent / unquote(parts.path)
    )
    target = target.resolve()
    if site.resolve() not in target.parents and target != site.resolve():
        return f"{url} points outside the built site"
    if not target.is_file():
        return f"{url} names a file the site does not have"
    return None


def resource_urls(soup: BeautifulSoup) -> list[tuple[str, str]]:
    """(what, url) for everything a page makes the browser fetch, from its markup alone."""
    found = []
    for link in soup.find_all("link"):
        rels = {r.lower() for r in (link.get("rel") or [])}
        if rels & LOADING_RELS and link.get("href"):
            found.append((f"<link rel={' '.join(sorted(rels))}>", link["href"]))
    for tag, attrs in FETCHING.items():
        for element in soup.find_all(tag):
            for attr in attrs:
                value = element.get(attr)
                if not value:
                    continue
                urls = _urls_in_srcset(value) if attr == "srcset" else [value]
                found += [(f"<{tag} {attr}>", u) for u in urls]
    for style in soup.find_all("style"):
        found += [("<style>", m["url"] or m["url2"]) for m in CSS_URL.finditer(style.get_text())]
    for element in soup.find_all(style=True):
        found += [("style=", m["url"] or m["url2"]) for m in CSS_URL.finditer(element["style"])]
    return found


@pytest.fixture(scope="module", params=["full", "student"])
def built(request):
    return request.getfixturevalue("site" if request.param == "full" else "student_site")


def test_pages_fetch_only_files_of_the_site(built):
    problems = []
    checked = 0
    for rel in pages(built):
        path = built / rel
        for what, url in resource_urls(parsed(path)):
            checked += 1
            why = _check(url, path, built)
            if why:
                problems.append(f"{rel}: {what} {why}")
    assert checked > 100, f"only {checked} resource references found: is {built} a built book?"
    assert not problems, "\n".join(problems)


def test_stylesheets_fetch_only_files_of_the_site(built):
    problems = []
    sheets = sorted(built.rglob("*.css"))
    assert sheets, f"no stylesheets under {built}"
    fonts = 0
    for css in sheets:
        for m in CSS_URL.finditer(css.read_text(encoding="utf-8", errors="replace")):
            url = m["url"] or m["url2"]
            fonts += bool(re.search(r"\.(woff2?|ttf|otf|eot)(\?|#|$)", url))
            why = _check(url, css, built)
            if why:
                problems.append(f"{css.relative_to(built)}: {why}")
    assert fonts, "no stylesheet names a font file: the theme's icon font should be one"
    assert not problems, "\n".join(problems)


def test_mathjax_and_its_fonts_are_part_of_the_site(built):
    math_pages = [rel for rel in pages(built) if 'class="math' in (built / rel).read_text(encoding="utf-8")]
    assert math_pages, "no page has math: the check below would test nothing"
    for rel in math_pages:
        soup = parsed(built / rel)
        sources = [s["src"] for s in soup.find_all("script", src=True) if "mathjax" in s["src"].lower()]
        assert sources, f"{rel} has math but loads no MathJax"
        for src in sources:
            assert _check(src, built / rel, built) is None, f"{rel}: MathJax from {src}"
    fonts = sorted((built / "_static" / "mathjax" / "output" / "chtml" / "fonts").rglob("*.woff"))
    assert any(f.name == "MathJax_Main-Regular.woff" for f in fonts), "MathJax's CHTML fonts are missing"
