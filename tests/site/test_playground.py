"""The tokenizer playground (``book/_static/playground.js``) in Chromium: tiktoken's IDs.

The script encodes in the browser with the vocabularies and Unicode classes that
``toklab.teaching.playground`` wrote into the site. Here it encodes a fixed sample, for each of the
three vocabularies, from disk and over HTTP, and its chunks and IDs must equal toklab's
``ByteBPE.encode_ordinary`` (and so tiktoken's, checked in the same test). The sample has
natural text in some fifty scripts, every code point of Unicode's first two planes (the
ones assigned after the Unicode version of tiktoken's tables too), emoji sequences,
whitespace runs, digits, code and special-token strings.

Then the page as a reader uses it: typing and showing IDs with the keyboard, stepping
through BPE's merges, the embedded playgrounds of the chapters in both editions, a phone
screen, and how long the first tokens take.
"""

from __future__ import annotations

import functools

import pytest

from siteutil import SCREENSHOTS, opened

NAMES = ("r50k_base", "cl100k_base", "o200k_base")
PAGE = "book/playground.html"

# Natural text first: what a reader types, in every kind the patterns treat differently.
WRITTEN = "\n".join([
    "Tokenizers don't see words: it's, I'M, we'll, THEY'VE, you're, he'd, 'ſ 'Ś 'S 'ſt we'Ll",
    "getHTTPResponseCode XMLHttpRequest iPhone CamelCaseWords ALLCAPS ǅungla ǈ ǋ ʕAb ʕab AʕB ꟸ",
    "Ελληνικά γράμματα, Русский текст, Հայերեն, ქართული ენა, Ⴀჽ, Српски, Українська мова",
    "עברית שלום, العربية مرحبا بالعالم, ܣܘܪܝܝܐ, ދިވެހި, ߒߞߏ, ࠀࠁ, ࡀࡁ, ࢠ, مَرْحَبًا",
    "हिन्दी नमस्ते, বাংলা, ਪੰਜਾਬੀ, ગુજરાતી, ଓଡ଼ିଆ, தமிழ், తెలుగు, ಕನ್ನಡ, മലയാളം, සිංහල",
    "ภาษาไทย สวัสดี, ພາສາລາວ, བོད་ཡིག, မြန်မာ, ខ្មែរ, ᠮᠣᠩᠭᠣᠯ, ᮞᮥᮔ᮪ᮓ, ꦗꦮ, ᬩᬮᬶ, ᨅᨔ",
    "中文注意力机制，繁體中文，日本語のテキスト、カタカナ ひらがな，한국어 문장, ꆈꌠ, ㄅㄆㄇ",
    "አማርኛ ግዕዝ, ᏣᎳᎩ, ᐃᓄᒃᑎᑐᑦ, ᚛ᚑᚌᚐᚋ᚜, ᚱᚢᚾᚨ, ⵜⴰⵎⴰⵣⵉⵖⵜ, ꕙꔤ, 𞤀𞤣𞤤𞤢𞤥, ꤰꥍ, ᥖᥭᥰ",
    "𐌲𐌿𐍄𐌹𐍃𐌺, 𐐔𐐯𐑅𐐨𐑉𐐯𐐻, 𐌀𐌁𐌂, 𒀀𒀁, 𓀀𓁐, 𝐀𝐁𝐂 𝑎𝑏𝑐 𝟏𝟐𝟑, ℝ ℕ, Ⅻ ⅻ, ①②, ㊀",
    "Tiếng Việt có dấu, cafe\u0301 café e\u0301\u0301\u0301, Å Å, ﬁ ﬀ, ＡＢＣ１２３！, ｶﾀｶﾅ",
    "1 22 333 4444 55555 666666 1234567890 3.14159e-10 0x1F 1,234,567.89 ١٢٣٤ ۱۲۳ १२३ ๑๒๓ ½ ²",
    "👨‍👩‍👧‍👦 👩🏽‍💻 🏳️‍🌈 👁️‍🗨️ 🇫🇷🇯🇵🇺🇸 🏴󠁧󠁢󠁳󠁣󠁴󠁿 👍🏻👍🏿 1️⃣ #️⃣ ❤️ ❤ 🙂🙂🙂",
    "<|endoftext|> <|fim_prefix|>x<|fim_middle|>y<|fim_suffix|> <|endofprompt|> <|endoftext |>",
    "def f(x):  \n\treturn x**2  # ok\n\n    if a != b:\n        pass\r\n",
    "for (let i = 0; i < n; i++) { s += a[i] >>> 1; } // JS /* block */ => {} \\\\ |||",
    "https://example.com/a/b?c=d&e=f#g \"quoted\" 'single' `tick` !!! ??? ... --- *** ///",
    "spaces   between    words  \t\ttabs\t\t here \r\n\r\ncrlf\r\rcr\n\n\n\nnewlines \n \n",
    "unicode spaces a\u00a0b\u2003c\u3000d\u2028e\u2029f\u0085g\ufeffh\u200bi\u200dj\u180ek \x1c\x1d",
    "controls a\x00b\x01\x7f\x1b[0m\x0b\x0c end",
])


def sweep() -> str:
    """Every code point of planes 0 and 1 but surrogates and most private use, then samples
    of planes 2, 3, 14, 15 and 16: sixteen to a word, sixty-four words to a line."""
    points = [c for c in range(0x20000) if not (0xD800 <= c < 0xE000 or 0xE020 <= c < 0xF900)]
    points += [*range(0x20000, 0x40000, 61), *range(0xE0000, 0xE0200), *range(0xF0000, 0x110000, 4093)]
    words = ["".join(map(chr, points[i : i + 16])) for i in range(0, len(points), 16)]
    return "\n".join(" ".join(words[i : i + 64]) for i in range(0, len(words), 64))


# It ends in a run of spaces: the \s+$ alternatives match only at the very end.
SAMPLE = WRITTEN + "\n" + sweep() + "\n   "


@functools.lru_cache(maxsize=None)
def reference(name: str):
    """toklab's tokenizer and a tiktoken Encoding from the same hash-checked rank file."""
    import tiktoken

    from toklab import ByteBPE
    from toklab.data import vocabs
    from toklab.pre_tokenizers import patterns

    spec = vocabs.load(name)
    enc = tiktoken.Encoding(name, pat_str=patterns.resolve(spec.pattern), mergeable_ranks=spec.ranks,
                            special_tokens=spec.special_tokens)
    return ByteBPE.from_tiktoken(name), enc


@functools.lru_cache(maxsize=None)
def expected(name: str, text: str) -> tuple[list[str], list[int]]:
    from toklab.pre_tokenizers import patterns

    tok, enc = reference(name)
    ids = tok.encode_ordinary(text)
    assert ids == enc.encode_ordinary(text), f"{name}: toklab and tiktoken differ on the sample"
    return patterns.split(text, tok.pattern), ids


def first_difference(ours: list, theirs: list, what: str) -> str:
    """Where two lists part, with a few items around it, for the failure message."""
    k = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    show = lambda xs: [f"{x!r}" + (f" {[f'U+{ord(c):04X}' for c in x][:6]}" if isinstance(x, str) else "")
                       for x in xs[max(0, k - 2) : k + 3]]
    return (f"{what} differ from item {k} (browser has {len(ours)}, toklab {len(theirs)}):\n"
            f"  browser: {show(ours)}\n  toklab:  {show(theirs)}")


def wait_done(page, selector: str = ".toklab-playground") -> None:
    page.wait_for_function(
        "s => [...document.querySelectorAll(s)].every(b => b.dataset.state === 'done')", arg=selector, timeout=20_000)


# ---------------------------------------------------------------------------- parity


def test_the_sample_covers_what_the_playground_must_get_right():
    assert len(SAMPLE) > 120_000 and SAMPLE.endswith("   ")
    for needle in ("\r\n", "\t\t", "  \n", "\u200d", "<|endoftext|>", "<|fim_middle|>", "1234567890", "    pass",
                   "\u0295", "\u017f", "\ufeff", "\u0085", "\U0001F3F4\U000E0067"):
        assert needle in SAMPLE, needle


@pytest.mark.parametrize("name", NAMES)
def test_the_browser_gives_tiktokens_ids_on_the_sample(name, browser, base):
    """Chunks and IDs of the whole sample, then of a text with a lone surrogate."""
    want_chunks, want_ids = expected(name, SAMPLE)
    with opened(browser, base, PAGE) as (page, record):
        got = page.evaluate("([n, t]) => toklabPlayground.encodeOrdinary(n, t)", [name, SAMPLE])
        lone = page.evaluate(
            "n => toklabPlayground.encodeOrdinary(n, 'a' + String.fromCharCode(0xD800) + 'b \\uDFFF')", name)
        problems = record.problems()
    assert got["chunks"] == want_chunks, first_difference(got["chunks"], want_chunks, f"{name}: chunks")
    assert got["ids"] == want_ids, first_difference(got["ids"], want_ids, f"{name}: IDs")
    tok, enc = reference(name)
    assert lone["ids"] == tok.encode_ordinary("a\ud800b \udfff") == enc.encode_ordinary("a\ud800b \udfff")
    assert not problems, "\n".join(problems)


def bpe_steps(chunk: bytes, ranks) -> list[tuple[int, int]]:
    """(position, rank) of each merge BPE makes on a chunk: the lowest-ranked adjacent
    concatenation, leftmost on ties, until none is a token."""
    parts, steps = [chunk[i : i + 1] for i in range(len(chunk))], []
    while True:
        found = [(ranks[a + b], i) for i, (a, b) in enumerate(zip(parts, parts[1:])) if a + b in ranks]
        if not found:
            return steps
        rank, i = min(found)
        steps.append((i, rank))
        parts[i : i + 2] = [parts[i] + parts[i + 1]]


@pytest.mark.parametrize("name", NAMES)
def test_watch_bpe_makes_toklabs_merges(name, browser, site):
    """Every merge of every chunk of the written part, in order, and the parts it ends with."""
    from toklab.bpe import merge_chunk

    tok, _ = reference(name)
    ranks = tok.get_vocab()
    chunks = sorted(set(expected(name, WRITTEN)[0]))
    with opened(browser, site.as_uri() + "/", PAGE) as (page, record):
        got = page.evaluate(
            """async ([n, chunks]) => {
                 const out = [];
                 for (const c of chunks) {
                   const w = await toklabPlayground.watchMerges(n, c);
                   out.push({steps: w.steps.map(s => [s.i, s.rank]), end: w.end.map(p => p.length)});
                 }
                 return out;
               }""", [name, chunks])
        problems = record.problems()
    assert len(got) == len(chunks) > 250
    for chunk, watched in zip(chunks, got):
        data = chunk.encode("utf-8")
        steps = bpe_steps(data, ranks)
        assert [tuple(s) for s in watched["steps"]] == steps, f"{name}: merges of {chunk!r}"
        assert watched["end"] == [len(p) for p in merge_chunk(data, ranks)], f"{name}: parts of {chunk!r}"
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------------------- as a reader


def rows(page) -> dict:
    """Each row of the first playground: its stats, token labels, IDs, and whether IDs show."""
    return page.evaluate("""() => Object.fromEntries([...document.querySelector('.toklab-playground')
        .querySelectorAll('.tp-row')].map(r => [r.querySelector('.tp-name').textContent, {
          stats: r.querySelector('.tp-stats').textContent,
          labels: [...r.querySelectorAll('.tp-label')].map(e => e.textContent),
          ids: [...r.querySelectorAll('.tp-id')].map(e => Number(e.textContent)),
          shown: [...r.querySelectorAll('.tp-id')].every(e => e.checkVisibility()),
        }]))""")


def check_rows(shown: dict, text: str) -> list[str]:
    from toklab.measure import viz

    problems = []
    for name in NAMES:
        tok, _ = reference(name)
        ids = tok.encode_ordinary(text)
        row = shown.get(name)
        if row is None:
            problems.append(f"no row for {name}")
            continue
        if row["ids"] != ids:
            problems.append(f"{name}: {first_difference(row['ids'], ids, 'IDs')}")
        if row["labels"] != [viz.token_label(t) for t in tok.tokens(ids)]:
            problems.append(f"{name}: labels {row['labels'][:8]} are not toklab.measure.viz's")
        per = len(text.encode("utf-8")) / len(ids)
        if not row["stats"].startswith(f"{len(ids):,} tokens · {per:.2f} bytes and {len(text) / len(ids):.2f} characters"):
            problems.append(f"{name}: stats {row['stats']!r}")
    return problems


TYPED = "Hello wörld, 注意 👩🏽‍💻 12345 <|endoftext|>\n    def f(x): return x  "


def test_a_reader_types_and_shows_ids_with_the_keyboard(browser, site):
    with opened(browser, site.as_uri() + "/", PAGE) as (page, record):
        wait_done(page)
        box = page.get_by_label("Text to tokenize")
        box.focus()
        page.keyboard.press("Control+A")
        page.keyboard.press("Delete")
        page.keyboard.type(TYPED)
        wait_done(page)
        assert box.input_value() == TYPED
        hidden = rows(page)
        page.keyboard.press("Tab")
        focused = page.evaluate("() => document.activeElement.labels?.[0]?.textContent.trim()")
        page.keyboard.press("Space")
        shown = rows(page)
        problems = record.problems()
    assert focused == "Show token IDs", f"Tab from the text box went to {focused!r}"
    assert not any(r["shown"] for r in hidden.values()) and all(r["shown"] for r in shown.values())
    problems += check_rows(shown, TYPED)
    assert not problems, "\n".join(problems)


def test_a_reader_steps_through_the_merges_with_the_keyboard(browser, site):
    from toklab.measure import viz
    from toklab.bpe import merge_chunk

    tok, _ = reference("cl100k_base")
    chunk = " tokenization"
    steps = bpe_steps(chunk.encode("utf-8"), tok.get_vocab())
    end = [viz.token_label(p) for p in merge_chunk(chunk.encode("utf-8"), tok.get_vocab())]
    with opened(browser, site.as_uri() + "/", PAGE) as (page, record):
        wait_done(page)
        page.get_by_label("Text to tokenize").fill("Watch tokenization merge")
        page.get_by_label("Vocabulary").select_option("cl100k_base")
        wait_done(page)
        page.get_by_role("button", name="chunk 2: ␣tokenization", exact=False).focus()
        page.keyboard.press("Enter")
        wait_done(page)
        seen = []
        page.get_by_role("button", name="Next step").focus()
        while True:
            seen.append(page.locator(".tp-parts .tp-label").all_inner_texts())
            if page.get_by_role("button", name="Next step").is_disabled():
                break
            page.keyboard.press("Enter")
            wait_done(page)
        merges = page.locator(".tp-merges li").all_inner_texts()
        problems = record.problems()
    assert len(seen) == len(steps) + 1 and len(merges) == len(steps) >= 3
    assert seen[0] == list("␣tokenization") and seen[-1] == end == ["␣token", "ization"]
    assert all(f"(rank {rank:,})" in m for (_, rank), m in zip(steps, merges))
    assert not problems, "\n".join(problems)


# The chapters' playgrounds: page, starting text, chunk picked for "watch BPE".
EMBEDDED = {
    "book/ch00_pipeline.html": ("Ｈｅｌｌｏ① world: 12345 tokens, 注意 🙂", "Ｈｅｌｌｏ"),
    "book/ch02_1_bpe.html": ("lowest newer widest", " widest"),
    "book/ch03_1_byte_level.html": ("world! Hello world. World 2024: 12345 people, 注意 🙂", " 注意"),
    "book/ch05_3_token_healing.html": ("Install the Debian packa", " packa"),
}


@pytest.mark.parametrize("edition", ["full", "student"])
def test_the_chapters_embed_a_playground_with_their_example(edition, browser, request):
    built = request.getfixturevalue("site" if edition == "full" else "student_site")
    problems = []
    for rel, (text, chunk) in EMBEDDED.items():
        with opened(browser, built.as_uri() + "/", rel) as (page, record):
            wait_done(page)
            found = page.evaluate("""() => [...document.querySelectorAll('.toklab-playground')].map(b => ({
                text: b.querySelector('textarea').value,
                open: b.querySelector('details').open,
                chunk: b.querySelector('.tp-chunks [aria-pressed=true] .tp-label')?.textContent}))""")
            if len(found) != 1:
                problems.append(f"{rel}: {len(found)} playgrounds")
                continue
            from toklab.measure import viz

            want = {"text": text, "open": False, "chunk": viz.token_label(chunk.encode("utf-8"))}
            if found[0] != want:
                problems.append(f"{rel}: {found[0]} instead of {want}")
            problems += [f"{rel}: {p}" for p in check_rows(rows(page), text) + record.problems()]
    assert not problems, "\n".join(problems)


PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
DESKTOP = {"viewport": {"width": 1280, "height": 900}}
# A long token (o200k has runs of spaces as tokens), a long word, and a long line.
WIDE = "x" + " " * 120 + "y " + "Pneumonoultramicroscopicsilicovolcanoconiosis" * 3 + " " + "=" * 200


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_the_page_fits_the_screen_and_every_control_has_a_label(width, browser, http_base):
    with opened(browser, http_base, PAGE, **(PHONE if width == "phone" else DESKTOP)) as (page, record):
        wait_done(page)
        page.screenshot(path=str(_shot(width, "playground")), full_page=False)
        page.get_by_label("Text to tokenize").fill(WIDE)
        page.get_by_label("Show token IDs").check()
        wait_done(page)
        overflow = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
        unlabeled = page.evaluate("""() => [...document.querySelectorAll(
            '.toklab-playground :is(textarea, input, select, button, summary)')]
            .filter(e => !(e.labels?.length || e.getAttribute('aria-label') || e.textContent.trim()))
            .map(e => e.outerHTML.slice(0, 80))""")
        page.screenshot(path=str(_shot(width, "playground-wide")), full_page=True)
        problems = record.problems()
    assert overflow <= 1, f"the page is {overflow}px wider than the {width} screen"
    assert not unlabeled, f"controls without a label: {unlabeled}"
    assert not problems, "\n".join(problems)


def _shot(width: str, name: str):
    folder = SCREENSHOTS / width
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{name}.png"


def test_first_tokens_appear_quickly(browser, site):
    """From the start of navigation to the first row of tokens, on a desktop, from disk."""
    times = []
    for _ in range(3):
        with opened(browser, site.as_uri() + "/", PAGE, **DESKTOP) as (page, record):
            wait_done(page)
            times.append(page.evaluate("() => toklabPlayground.firstTokens"))
            assert not record.problems(), record.problems()
    print(f"first tokens after {sorted(times)} ms")
    assert 0 < min(times) < 1500, f"the first tokens took {times} ms"


@pytest.mark.parametrize("edition", ["full", "student"])
def test_the_playground_adds_at_most_ten_megabytes(edition, request):
    built = request.getfixturevalue("site" if edition == "full" else "student_site")
    files = [*(built / "_static" / "playground").glob("*.js"), built / "_static" / "playground.js",
             built / "_static" / "playground.css"]
    assert len(files) == 6 and all(f.is_file() for f in files), files
    size = sum(f.stat().st_size for f in files)
    print(f"{edition}: the playground's files take {size / 1e6:.2f} MB")
    assert size < 10e6
