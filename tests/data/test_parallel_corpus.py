"""The parallel slice: every locale has the same number of paragraphs, none untranslated, as documented."""

from __future__ import annotations

import re
import unicodedata

import pytest

from toklab.data import corpus

LOCALES = corpus.parallel_locales()


def test_locales_and_table_agree():
    rows = [line.split("\t") for line in
            (corpus.data_dir() / "parallel" / "locales.tsv").read_text(encoding="utf-8").splitlines()[1:]]
    kept = sorted(loc for loc, _, inc in rows if inc == "yes")
    assert LOCALES == ["en-US", *kept] and len(LOCALES) == 21
    files = sorted(p.stem for p in (corpus.data_dir() / "parallel").glob("*.txt"))
    assert files == sorted(LOCALES)
    for loc, share, inc in rows:  # the exclusion rule the README states
        assert (float(share) >= 0.25) == (inc == "yes"), loc


def test_readme_states_each_size():
    text = (corpus.data_dir() / "README.md").read_text(encoding="utf-8")
    sizes = dict(re.findall(r"\| ([a-z]{2}-[A-Z]{2}) \| ([\d,]+) ", text))
    for loc in LOCALES:
        raw = (corpus.data_dir() / "parallel" / f"{loc}.txt").read_bytes()
        assert int(sizes[loc].replace(",", "")) == len(raw), loc


@pytest.mark.parametrize("locale", LOCALES)
def test_parallel_and_translated(locale):
    english = corpus.parallel("en-US")
    paras = corpus.parallel(locale)
    assert len(paras) == len(english) == 122
    assert all(p.strip() and "\n" not in p for p in paras)
    if locale != "en-US":
        assert not any(a == b for a, b in zip(paras, english))
    raw = (corpus.data_dir() / "parallel" / f"{locale}.txt").read_bytes()
    assert raw.endswith(b"\n") and not raw.startswith(b"\xef\xbb\xbf")
    assert not any(unicodedata.category(c) == "Cc" and c != "\n" for c in raw.decode("utf-8"))


def test_scripts_are_what_the_locale_says():
    def share(loc, prefix):
        letters = [c for c in "".join(corpus.parallel(loc)) if c.isalpha()]
        return sum(unicodedata.name(c, "").startswith(prefix) for c in letters) / len(letters)

    assert share("ru-RU", "CYRILLIC") > 0.8
    assert share("ar-MA", "ARABIC") > 0.8 and share("fa-IR", "ARABIC") > 0.8
    assert share("zh-CN", "CJK") > 0.6 and share("ja-JP", ("CJK", "HIRAGANA", "KATAKANA")) > 0.6


def test_unknown_locale_is_a_clear_error():
    with pytest.raises(ValueError, match="no parallel text for locale 'ko-KR'"):
        corpus.parallel("ko-KR")
