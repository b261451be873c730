#!/usr/bin/env python3
"""Rebuild the bundled toklab corpus (data/*.txt) byte-for-byte from installed packages.

Usage::

    python data/build_corpus.py            # (re)write en.txt, zh.txt, code.py.txt, mixed.txt
    python data/build_corpus.py --check    # rebuild in memory, compare with the files on disk
    python data/build_corpus.py --out DIR  # write somewhere else
    python data/build_corpus.py --bench FILE  # the larger benchmark corpus (not bundled; see BENCH_BUDGET)

Standard library only.  Every output is a pure function of the installed
sources listed in SOURCES below (Debian packages + the running CPython's
stdlib), read in a fixed order and cut at a fixed byte budget, so running the
script twice on the same machine gives identical files.  See data/README.md
for sources, versions, licences and what each file contains.

Processing applied to every source text (and nothing else -- in particular no
Unicode normalisation):

* CRLF -> LF (none of the current sources actually contain CR);
* C0 control characters other than TAB and LF are dropped (this removes NUL,
  stray CR, form feeds, ...);
* a leading U+FEFF (BOM) of a source file is dropped.

HTML sources are reduced to the text of their <p>, <h1>..<h6> and
<div class="para"> elements
(tags stripped, character references decoded, <pre>/<script>/<style> content
dropped, runs of ASCII whitespace collapsed to one space as a browser does,
and removed where a source line break falls between two East-Asian wide
characters, per CSS Text 3 segment-break rules).  One paragraph per line,
paragraphs separated by a blank line.

The one deliberate exception: in mixed.txt the block marked CRLF_BLOCK is
written with CRLF line endings so that tokenizer tests have real CRLF input.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import html.parser
import os
import re
import sys
import sysconfig
import unicodedata
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent

# --------------------------------------------------------------------------
# Sources and budgets
# --------------------------------------------------------------------------

DREF = Path("/usr/share/debian-reference")
HANDBOOK = Path("/usr/share/doc/debian-handbook/html")
IGUIDE = Path("/usr/share/doc/installation-guide-amd64")
MAINT_ZH = Path("/usr/share/doc/maint-guide-zh-cn/html")
EMOJI_TEST = Path("/usr/share/unicode/emoji/emoji-test.txt")
CLDR = Path("/usr/share/unicode/cldr/common")
STDLIB = Path(sysconfig.get_paths()["stdlib"])

# path that must exist -> Debian package that provides it
REQUIRED: dict[Path, str] = {
    DREF / "index.zh-cn.html": "debian-reference-zh-cn",
    HANDBOOK / "en-US" / "index.html": "debian-handbook",
    MAINT_ZH / "index.zh-cn.html": "maint-guide-zh-cn",
    IGUIDE / "zh_CN" / "index.html": "installation-guide-amd64",
    EMOJI_TEST: "unicode-data",
    CLDR / "annotations" / "ru.xml": "unicode-cldr-core",
}

EXPECTED_PYTHON = "3.11.7"  # pydoc_data.topics and the stdlib modules come from it

BUDGET = {
    "en.txt": 1_000_000,
    "zh.txt": 1_000_000,
    "code.py.txt": 1_000_000,
    "mixed.txt": 450_000,
}

# Python modules for code.py.txt, relative to the stdlib directory, in this order.
CODE_MODULES = [
    "textwrap.py", "string.py", "shlex.py", "keyword.py", "token.py", "tokenize.py",
    "heapq.py", "bisect.py", "functools.py", "operator.py", "copy.py",
    "collections/__init__.py", "dataclasses.py", "enum.py", "abc.py", "contextlib.py",
    "reprlib.py", "pprint.py", "json/__init__.py", "json/decoder.py",
    "json/encoder.py", "json/scanner.py", "json/tool.py", "csv.py", "configparser.py",
    "fnmatch.py", "glob.py", "pathlib.py", "shutil.py", "tempfile.py", "difflib.py",
    "fractions.py", "statistics.py", "random.py", "base64.py", "gzip.py",
    "queue.py", "sched.py", "calendar.py", "asyncio/tasks.py",
]

# mixed.txt ---------------------------------------------------------------
# emoji-test.txt subgroups copied verbatim, as (subgroup, n, base): the first n
# lines (None = all), plus, if base, every later line not mentioning "skin tone".
EMOJI_SUBGROUPS: list[tuple[str, int | None, bool]] = [
    ("face-smiling", None, False), ("face-affection", None, False),
    ("heart", None, False), ("hand-fingers-open", None, False), ("family", 13, True),
    ("keycap", None, False), ("flag", None, False), ("country-flag", 80, False),
    ("subdivision-flag", None, False),
]
# CLDR languages whose emoji names are listed (one block each)
CLDR_LANGS = ["fr", "de", "vi", "ru", "el", "ja", "ko", "ar", "he", "hi", "th"]
# emoji named in every CLDR block: the fully-qualified entries among these
# (same (subgroup, n, base) selection as above)
CLDR_SUBGROUPS: list[tuple[str, int | None, bool]] = [
    ("face-smiling", None, False), ("heart", None, False),
    ("hand-fingers-open", 12, False), ("family", 0, True), ("keycap", 8, False),
    ("country-flag", 12, False), ("subdivision-flag", None, False),
]
# installation-guide chapter 1 ("Welcome to Debian") in these languages
PROSE_LANGS = ["fr", "de", "es", "vi", "ru", "el", "ja", "ko"]
PROSE_BLOCK_BUDGET = 24_000  # bytes per prose block (whole paragraphs)
CRLF_BLOCK = "installation-guide-amd64 ko/ch01"  # written with CRLF line endings

# --------------------------------------------------------------------------
# Generic helpers
# --------------------------------------------------------------------------

_C0_DROP = re.compile(r"[\x00-\x08\x0b-\x1f]")


def clean(text: str) -> str:
    """CRLF -> LF, drop C0 controls except TAB/LF, drop a leading BOM."""
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n")
    return _C0_DROP.sub("", text)


def read_text(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return clean(data.decode("utf-8"))


def is_wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in ("W", "F")


_WS = re.compile(r"[ \t\n\r\f]+")  # HTML "ASCII whitespace" only, not NBSP/U+3000


def collapse_ws(s: str) -> str:
    def repl(m: re.Match[str]) -> str:
        run = m.group(0)
        a = s[m.start() - 1] if m.start() > 0 else ""
        b = s[m.end()] if m.end() < len(s) else ""
        if "\n" in run and a and b and is_wide(a) and is_wide(b):
            return ""
        return " "

    return _WS.sub(repl, s).strip(" ")


class _ParaExtractor(html.parser.HTMLParser):
    """Collect the text of <p>, <h1>..<h6> and <div class="para"> elements, in document order."""

    CAPTURE = {"p", "h1", "h2", "h3", "h4", "h5", "h6"}
    SKIP = {"pre", "script", "style", "head", "title"}
    BREAK = {"div", "table", "ul", "ol", "dl", "blockquote", "pre"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.paras: list[str] = []
        self._buf: list[str] | None = None
        self._tag = ""
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        capture = tag in self.CAPTURE or (tag == "div" and "para" in classes)
        if capture or tag in self.BREAK:
            self._flush()
        if capture:
            self._buf, self._tag = [], tag
        if tag in self.SKIP:
            self._skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self._skip = max(0, self._skip - 1)
        if tag == self._tag:
            self._flush()

    def handle_data(self, data: str) -> None:
        if self._buf is not None and not self._skip:
            self._buf.append(data)

    def _flush(self) -> None:
        if self._buf is not None:
            text = clean(collapse_ws("".join(self._buf)))
            if text:
                self.paras.append(text)
        self._buf, self._tag = None, ""

    def close(self) -> None:
        super().close()
        self._flush()


def html_paragraphs(path: Path) -> list[str]:
    p = _ParaExtractor()
    p.feed(read_text(path))
    p.close()
    return p.paras


def linked_order(index: Path) -> list[Path]:
    """index file, then local .html files in order of first link from the index."""
    out = [index]
    for href in re.findall(r'href="([^"#:]+\.html)', read_text(index)):
        f = index.parent / href
        if f.is_file() and f not in out:
            out.append(f)
    return out


def docbook_order(folder: Path) -> list[Path]:
    """index.html, pr*, ch*, ap* (chunked DocBook file names sort correctly within a kind)."""
    rank = {"index": 0, "pr": 1, "ch": 2, "ap": 3}

    def key(f: Path) -> tuple[int, str]:
        for prefix, r in rank.items():
            if f.name.startswith(prefix):
                return r, f.name
        return 9, f.name

    return sorted(folder.glob("*.html"), key=key)


def take(units: list[str], budget: int, sep: str = "\n\n") -> list[str]:
    """Whole units in order while the joined text stays within budget (stop at the first misfit)."""
    out: list[str] = []
    size = 0
    for u in units:
        cost = len(u.encode("utf-8")) + (len(sep.encode()) if out else 0)
        if size + cost + 1 > budget:  # +1 for the final newline
            break
        out.append(u)
        size += cost
    return out


# --------------------------------------------------------------------------
# en.txt
# --------------------------------------------------------------------------

_UNDERLINE = re.compile(r"^[*=\-~^]{3,}$")
_BULLET = re.compile(r"^ {0,8}[*+-] ")


def pydoc_prose() -> list[str]:
    """Prose blocks of the Language Reference topics shipped in pydoc_data.topics.

    A block (lines between blank lines) is kept if it starts at column 0 or is a
    bullet item; indented blocks (code examples, grammar, doctests) are dropped,
    and reST heading underlines are removed.
    """
    from pydoc_data.topics import topics

    blocks: list[str] = []
    for name in sorted(topics):
        cur: list[str] = []
        for line in clean(topics[name]).split("\n") + [""]:
            if line.strip():
                cur.append(line)
                continue
            if cur:
                first = cur[0]
                if not first.startswith(" ") or _BULLET.match(first):
                    kept = [ln for ln in cur if not _UNDERLINE.match(ln.strip())]
                    if kept:
                        blocks.append("\n".join(kept))
                cur = []
    return blocks


def dedupe(units: list[str], min_chars: int = 80) -> list[str]:
    """Drop exact repeats of units of at least min_chars characters (keep the first)."""
    seen: set[str] = set()
    out = []
    for u in units:
        if len(u) >= min_chars:
            if u in seen:
                continue
            seen.add(u)
        out.append(u)
    return out


def build_en() -> str:
    units = pydoc_prose()
    for f in linked_order(HANDBOOK / "en-US" / "index.html"):
        units += html_paragraphs(f)
    return "\n\n".join(take(dedupe(units), BUDGET["en.txt"])) + "\n"


# --------------------------------------------------------------------------
# zh.txt
# --------------------------------------------------------------------------

def mostly_chinese(p: str) -> bool:
    """At least 30% of the non-space characters are Han (or other wide CJK) characters."""
    chars = [c for c in p if not c.isspace()]
    if not chars:
        return False
    han = sum(1 for c in chars if is_wide(c))
    return han >= 4 and han / len(chars) >= 0.30


def build_zh() -> str:
    files = (
        linked_order(DREF / "index.zh-cn.html")
        + linked_order(HANDBOOK / "zh-CN" / "index.html")
        + linked_order(MAINT_ZH / "index.zh-cn.html")
        + docbook_order(IGUIDE / "zh_CN")
    )
    units = [p for f in files for p in html_paragraphs(f) if mostly_chinese(p)]
    return "\n\n".join(take(dedupe(units), BUDGET["zh.txt"])) + "\n"


# --------------------------------------------------------------------------
# code.py.txt
# --------------------------------------------------------------------------

def build_code() -> str:
    units = []
    for rel in CODE_MODULES:
        src = read_text(STDLIB / rel)
        if not src.endswith("\n"):
            src += "\n"
        units.append(f"# ==> Lib/{rel} <==\n{src}")
    return "\n".join(take(units, BUDGET["code.py.txt"], sep="\n"))


# --------------------------------------------------------------------------
# mixed.txt
# --------------------------------------------------------------------------

def emoji_test_subgroups() -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    cur: list[str] | None = None
    for line in read_text(EMOJI_TEST).split("\n"):
        if line.startswith("# subgroup:"):
            cur = groups.setdefault(line.split(":", 1)[1].strip(), [])
        elif line.startswith("# group:") or (line.startswith("#") and "subtotal" in line):
            cur = None
        elif cur is not None and line.strip():
            cur.append(line)
    return groups


def pick(lines: list[str], n: int | None, base: bool) -> list[str]:
    if n is None:
        return list(lines)
    return lines[:n] + [ln for ln in lines[n:] if base and "skin tone" not in ln]


def emoji_of(line: str) -> str:
    # "1F600  ; fully-qualified  # 😀 E1.0 grinning face"
    return "".join(chr(int(h, 16)) for h in line.split(";")[0].split())


def cldr_names(lang: str) -> dict[str, str]:
    """cp (without U+FE0F) -> 'tts name | keywords' from annotations + annotationsDerived."""
    tts: dict[str, str] = {}
    kw: dict[str, str] = {}
    for sub in ("annotations", "annotationsDerived"):
        path = CLDR / sub / f"{lang}.xml"
        if not path.is_file():
            continue
        root = ET.fromstring(read_text(path))
        for a in root.iter("annotation"):
            cp, text = a.get("cp"), (a.text or "").strip()
            if not cp or not text or text == "↑↑↑":
                continue
            (tts if a.get("type") == "tts" else kw).setdefault(cp, text)
    return {cp: (t + (" | " + kw[cp] if cp in kw else "")) for cp, t in tts.items()}


def mostly_arabic(p: str) -> bool:
    """At least 60% of the letters are Arabic-script letters."""
    letters = [c for c in p if c.isalpha()]
    arabic = sum(1 for c in letters if "\u0600" <= c <= "\u06ff" or "\u0750" <= c <= "\u077f")
    return arabic >= 20 and arabic / len(letters) >= 0.60


def build_mixed() -> str:
    blocks: list[tuple[str, str]] = []  # (label, text without trailing newline)
    groups = emoji_test_subgroups()

    # 1. emoji-test.txt excerpt (verbatim lines, incl. its copyright header)
    head = read_text(EMOJI_TEST).split("\n")[:10]
    lines = list(head)
    for sub, n, base in EMOJI_SUBGROUPS:
        lines.append(f"# subgroup: {sub}")
        lines += pick(groups[sub], n, base)
    blocks.append(("unicode-data emoji/emoji-test.txt (excerpt)", "\n".join(lines)))

    # 2. CLDR emoji names, one block per language, same emoji in every block
    sample: list[str] = []
    for sub, n, base in CLDR_SUBGROUPS:
        fq = [ln for ln in pick(groups[sub], n, base) if "; fully-qualified" in ln]
        sample += [emoji_of(ln) for ln in fq]
    for lang in CLDR_LANGS:
        names = cldr_names(lang)
        rows = []
        for e in sample:
            name = names.get(e.replace("\ufe0f", ""))
            if name:
                rows.append(f"{e}\t{name}")
        blocks.append((f"unicode-cldr-core annotations {lang}", "\n".join(rows)))

    # 3. real prose: installation guide chapter 1 in several languages, then the
    #    Arabic-script paragraphs of the Arabic Debian Administrator's Handbook
    for lang in PROSE_LANGS:
        files = [f for f in docbook_order(IGUIDE / lang) if f.name.startswith("ch01")]
        paras = [p for f in files for p in html_paragraphs(f)]
        paras = take(paras, PROSE_BLOCK_BUDGET)
        blocks.append((f"installation-guide-amd64 {lang}/ch01", "\n\n".join(paras)))
    files = linked_order(HANDBOOK / "ar-MA" / "index.html")
    paras = [p for f in files for p in html_paragraphs(f) if mostly_arabic(p)]
    paras = take(paras, PROSE_BLOCK_BUDGET)
    blocks.append(("debian-handbook ar-MA (Arabic paragraphs)", "\n\n".join(paras)))

    out: list[str] = []
    size = 0
    for label, text in blocks:
        nl = "\r\n" if label == CRLF_BLOCK else "\n"
        chunk = f"==> {label} <=={nl}{text.replace(chr(10), nl)}{nl}{nl}"
        if size + len(chunk.encode()) > BUDGET["mixed.txt"]:
            break
        out.append(chunk)
        size += len(chunk.encode())
    return "".join(out).rstrip("\r\n") + "\n"



# --------------------------------------------------------------------------
# The benchmark corpus (--bench): larger and more varied, built at bench time
# --------------------------------------------------------------------------

# Bytes of each part, in this order. Not bundled: `make bench` builds it from the same
# installed sources plus the rest of the running CPython's standard library.
BENCH_BUDGET = {"en": 3_000_000, "code": 3_500_000, "zh": 1_400_000, "other": 1_100_000}
BENCH_SKIP_DIRS = {"test", "tests", "idlelib", "site-packages", "lib2to3", "turtledemo", "__pycache__"}
BENCH_OTHER_LANGS = ["de-DE", "fr-FR", "es-ES", "ru-RU", "ja-JP", "ko-KR", "ar-MA", "el-GR", "vi-VN"]


def stdlib_modules() -> list[Path]:
    """Every .py file of the stdlib outside tests and tools, in path order."""
    return sorted(
        f for f in STDLIB.rglob("*.py") if not BENCH_SKIP_DIRS & set(f.relative_to(STDLIB).parts[:-1])
    )


def stdlib_docstrings(files: list[Path]) -> list[str]:
    """Module, class and function docstrings (English prose written for readers), in file order."""
    import ast

    out = []
    for f in files:
        try:
            tree = ast.parse(read_text(f))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc and len(doc) >= 80:
                    out.append(clean(doc))
    return out


def build_bench() -> str:
    """English docs, Python code, Chinese and other languages' prose, about 9 MB."""
    modules = stdlib_modules()
    en = pydoc_prose()
    for f in linked_order(HANDBOOK / "en-US" / "index.html") + docbook_order(IGUIDE / "en"):
        en += html_paragraphs(f)
    en += stdlib_docstrings(modules)
    code = []
    for f in modules:
        src = read_text(f)
        code.append(f"# ==> Lib/{f.relative_to(STDLIB).as_posix()} <==\n{src}{'' if src.endswith(chr(10)) else chr(10)}")
    zh_files = (
        linked_order(DREF / "index.zh-cn.html")
        + linked_order(HANDBOOK / "zh-CN" / "index.html")
        + linked_order(HANDBOOK / "zh-TW" / "index.html")
        + linked_order(MAINT_ZH / "index.zh-cn.html")
        + docbook_order(IGUIDE / "zh_CN")
    )
    zh = [q for f in zh_files for q in html_paragraphs(f) if mostly_chinese(q)]
    other = []
    for lang in BENCH_OTHER_LANGS:
        paras = [q for f in linked_order(HANDBOOK / lang / "index.html") for q in html_paragraphs(f)]
        other += take(dedupe(paras), BENCH_BUDGET["other"] // len(BENCH_OTHER_LANGS))
    parts = [
        "\n\n".join(take(dedupe(en), BENCH_BUDGET["en"])) + "\n",
        "\n".join(take(code, BENCH_BUDGET["code"], sep="\n")),
        "\n\n".join(take(dedupe(zh), BENCH_BUDGET["zh"])) + "\n",
        "\n\n".join(other) + "\n",
    ]
    return "\n".join(parts)

# --------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------

BUILDERS = {
    "en.txt": build_en,
    "zh.txt": build_zh,
    "code.py.txt": build_code,
    "mixed.txt": build_mixed,
}


def missing_sources() -> list[str]:
    return sorted({pkg for path, pkg in REQUIRED.items() if not path.exists()})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--out", type=Path, default=HERE, help="output folder (default: data/)")
    ap.add_argument("--check", action="store_true",
                    help="compare a rebuild with the files in --out")
    ap.add_argument("--bench", type=Path, metavar="FILE",
                    help="write the larger benchmark corpus (not bundled) to FILE instead")
    args = ap.parse_args(argv)

    missing = missing_sources()
    if missing:
        print("missing sources; install them with:", file=sys.stderr)
        print("  apt-get update && apt-get install -y --no-install-recommends "
              + " ".join(missing), file=sys.stderr)
        return 2
    if args.bench:
        data = build_bench().encode("utf-8")
        args.bench.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.bench.with_suffix(args.bench.suffix + ".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, args.bench)
        print(f"{args.bench} {len(data):>9} {hashlib.sha256(data).hexdigest()}")
        return 0
    py = ".".join(str(n) for n in sys.version_info[:3])
    if py != EXPECTED_PYTHON:
        print(f"warning: Python {py}, corpus was built with {EXPECTED_PYTHON}; "
              "en.txt and code.py.txt will differ", file=sys.stderr)

    outputs = {}
    for name, build in BUILDERS.items():
        outputs[name] = build().encode("utf-8")
        assert b"\x00" not in outputs[name]
    return write_or_check(outputs, args.out, args.check)


def write_or_check(outputs: dict[str, bytes], out: Path, check: bool) -> int:
    """Write each output atomically (or, with ``check``, compare it with the file); print
    name, size and SHA-256 of each. Returns 1 if a check found a difference, else 0."""
    bad = 0
    for name, data in outputs.items():
        digest = hashlib.sha256(data).hexdigest()
        target = out / name
        if check:
            ok = target.is_file() and target.read_bytes() == data
            bad += not ok
            print(f"{'ok  ' if ok else 'DIFF'} {name:12} {len(data):>9} {digest}")
        else:
            out.mkdir(parents=True, exist_ok=True)
            tmp = target.with_suffix(target.suffix + ".tmp")
            tmp.write_bytes(data)
            os.replace(tmp, target)
            print(f"{name:12} {len(data):>9} {digest}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
