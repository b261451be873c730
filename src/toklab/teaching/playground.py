"""The tokenizer playground's data and directive: real vocabularies written into the site.

The playground (``book/_static/playground.js``) encodes the reader's text in the
browser with ``r50k_base``, ``cl100k_base`` and ``o200k_base`` and must give
tiktoken's IDs. It needs three things from this side, all written at build time
into ``_static/playground/`` of the HTML output (`write_site_files`):

* **The rank tables**, from the hash-checked files `toklab.data.vocabs` loads. Ranks
  are IDs 0, 1, 2, … in these files, so a table is its tokens in rank order:
  one byte per token for its length (no token is longer than 255 bytes; 0 would
  mark a rank with no token) and the tokens' bytes concatenated, each in
  base64. `compact` writes that form and `expand` reads it back as the browser
  does; o200k_base takes 2.1 MB, the three with the classes 3.6 MB.
* **The Unicode classes the patterns use.** ``\\p{L}`` in a browser means the
  browser's own Unicode tables, which may be newer or older than the ones
  tiktoken and the ``regex`` module use (Chromium 156's hold the 4,700 or so
  characters Unicode 17 added, and make U+0295 ``ʕ`` a Lo where theirs say Ll). So
  every class the patterns name is written out as code point ranges read from
  ``regex`` (`class_ranges`), and the script puts those in place of the
  browser's tables. ``\\s`` is ``\\p{White_Space}``: JavaScript's ``\\s`` also
  matches U+FEFF and misses U+0085.
* **Files a browser can load from ``file://``**, where ``fetch()`` is refused:
  each file is a script that stores its data under ``window.toklabPlaygroundData``.

The ``playground`` directive puts a playground on a page: its content is the text
it starts with; ``:watch:`` names the vocabulary and ``:chunk:`` the chunk whose
merges it shows first. Pages with one get the script and stylesheet
(`add_assets`).
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path

import regex

__all__ = [
    "NAMES", "FORMAT", "CLASSES", "compact", "expand", "class_ranges", "vocab_script", "unicode_script",
    "write_site_files", "playground_html", "setup",
]

#: The vocabularies a playground shows, side by side in this order.
NAMES = ("r50k_base", "cl100k_base", "o200k_base")
#: Written into every file; a file of another format is rewritten.
FORMAT = 1
#: Every Unicode property the patterns of `toklab.pre_tokenizers.patterns` use.
CLASSES = ("L", "N", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "White_Space")
#: Where the files go, under the site's ``_static``.
FOLDER = "playground"


def compact(ranks: Mapping[bytes, int]) -> dict[str, str]:
    """A rank table as ``{"lengths": base64, "bytes": base64}``: its tokens in rank order."""
    size = max(ranks.values()) + 1 if ranks else 0
    by_rank: list[bytes] = [b""] * size
    for token, rank in ranks.items():
        if not 1 <= len(token) <= 255:
            raise ValueError(f"token {token[:20]!r}… has {len(token)} bytes: the compact form holds 1 to 255")
        if rank < 0 or by_rank[rank]:
            raise ValueError(f"rank {rank} is negative or given to two tokens")
        by_rank[rank] = token
    return {
        "lengths": base64.b64encode(bytes(len(t) for t in by_rank)).decode("ascii"),
        "bytes": base64.b64encode(b"".join(by_rank)).decode("ascii"),
    }


def expand(data: Mapping[str, str]) -> dict[bytes, int]:
    """The rank table `compact` wrote, read back the way ``playground.js`` reads it."""
    lengths = base64.b64decode(data["lengths"], validate=True)
    blob = base64.b64decode(data["bytes"], validate=True)
    ranks: dict[bytes, int] = {}
    at = 0
    for rank, n in enumerate(lengths):
        if n:
            ranks[blob[at : at + n]] = rank
            at += n
    if at != len(blob):
        raise ValueError(f"the lengths cover {at} bytes of {len(blob)}")
    return ranks


@lru_cache(maxsize=1)
def _all_code_points() -> str:
    return "".join(map(chr, [*range(0xD800), *range(0xE000, 0x110000)]))


def class_ranges(name: str) -> list[tuple[int, int]]:
    """``(first, last)`` of each run of code points that ``\\p{name}`` matches, by the regex module."""
    out: list[tuple[int, int]] = []
    for m in regex.finditer(rf"\p{{{name}}}+", _all_code_points()):
        first, last = ord(m.group()[0]), ord(m.group()[-1])
        # a run can step over the surrogates, which the text leaves out
        if first < 0xD800 < last:
            out += [(first, 0xD7FF), (0xE000, last)]
        else:
            out.append((first, last))
    return out


def _delta_code(ranges: Iterable[tuple[int, int]]) -> str:
    # "gap,width,gap,width,…" in base 36: the gap from the end of the previous range,
    # the width less one. About a fifth of the size of the ranges written as \u{…}.
    out, end = [], -1
    for first, last in ranges:
        out += [_base36(first - end - 1), _base36(last - first)]
        end = last
    return ",".join(out)


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    s = ""
    while True:
        n, r = divmod(n, 36)
        s = digits[r] + s
        if not n:
            return s


def _script(key: str, comment: str, data: dict) -> str:
    body = json.dumps(data, ensure_ascii=True, separators=(",", ":"), sort_keys=True)
    return (
        f"/* {comment} */\n"
        f"(window.toklabPlaygroundData = window.toklabPlaygroundData || {{}})[{json.dumps(key)}] = {body};\n"
    )


def vocab_script(name: str) -> str:
    """The script that carries vocabulary ``name`` (rank table, pattern name, special tokens)."""
    from ..data import vocabs

    spec = vocabs.load(name)
    data = {"format": FORMAT, "name": name, "pattern": spec.pattern, "sha256": spec.sha256,
            "special_tokens": spec.special_tokens, **compact(spec.ranks)}
    return _script(name, _header(name, spec.sha256) + ": tokens in rank order (base64 lengths, base64 bytes)", data)


def unicode_script() -> str:
    """The script that carries `CLASSES` as code point ranges from the regex module."""
    data = {"format": FORMAT, "regex": regex.__version__,
            "classes": {name: _delta_code(class_ranges(name)) for name in CLASSES}}
    return _script("unicode", _header("unicode", "regex " + regex.__version__) + ": base-36 gap,width pairs", data)


def _header(key: str, source: str) -> str:
    return f"toklab playground data {key}, format {FORMAT}, from {source}"


def write_site_files(static_dir: str | Path) -> list[Path]:
    """Write the vocabularies and Unicode classes into ``static_dir/playground/``.

    A file whose first line names the same source and format is kept, so a
    rebuild does not load the rank files again.
    """
    from ..data import vocabs

    folder = Path(static_dir) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    sources = {name: (vocabs.VOCABS[name].sha256, lambda n=name: vocab_script(n)) for name in NAMES}
    sources["unicode"] = ("regex " + regex.__version__, unicode_script)
    written = []
    for key, (source, make) in sources.items():
        path = folder / f"{key}.js"
        if not (path.is_file() and _header(key, source) in path.read_text(encoding="utf-8")[:300]):
            path.write_text(make(), encoding="utf-8")
        written.append(path)
    return written


def playground_html(text: str, *, watch: str = "cl100k_base", chunk: str = "", page: bool = False) -> str:
    """The empty element ``playground.js`` builds a playground in: the starting text and
    options as data attributes."""
    if watch not in NAMES:
        raise ValueError(f"playground :watch: must be one of {', '.join(NAMES)}, got {watch!r}")
    attrs = {"data-text": text, "data-watch": watch, "data-chunk": chunk, "data-size": "page" if page else "embedded"}
    joined = " ".join(f'{k}="{html.escape(v, quote=True)}"' for k, v in attrs.items())
    return (
        f'<div class="toklab-playground" {joined}>'
        '<p class="tp-noscript">The tokenizer playground needs JavaScript.</p></div>\n'
    )


# ---------------------------------------------------------------------------- Sphinx


def _directive():
    from docutils import nodes
    from docutils.parsers.rst import Directive, directives

    class Playground(Directive):
        """``{playground}``: content = the starting text; ``:watch:``, ``:chunk:``, ``:page:``."""

        has_content = True
        option_spec = {"watch": directives.unchanged, "chunk": directives.unchanged, "page": directives.flag}

        def run(self):
            text = "\n".join(self.content)
            # a chunk with a leading space is written in quotes, ``" lowest"``: MyST reads
            # the options as YAML and passes the string on; plain docutils keeps the quotes
            chunk = self.options.get("chunk", "")
            if len(chunk.strip()) >= 2 and chunk.strip()[0] == chunk.strip()[-1] == '"':
                chunk = chunk.strip()[1:-1]
            try:
                markup = playground_html(text, watch=self.options.get("watch", "cl100k_base"), chunk=chunk,
                                         page="page" in self.options)
            except ValueError as exc:
                raise self.error(str(exc)) from None
            return [nodes.raw("", markup, format="html")]

    return Playground


def add_assets(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    """Give a page that holds a playground its script and stylesheet (that page only)."""
    if 'class="toklab-playground"' in (context.get("body") or ""):
        app.add_js_file("playground.js")
        app.add_css_file("playground.css")


def _write_files(app, exception) -> None:
    if exception is None and app.builder.format == "html":
        write_site_files(Path(app.outdir) / "_static")


def setup(app) -> None:
    """Register the directive and the two build steps (called by `toklab.teaching.sphinxext`)."""
    app.add_directive("playground", _directive())
    app.connect("html-page-context", add_assets)
    app.connect("build-finished", _write_files)
