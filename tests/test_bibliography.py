"""The appendix's list of the works behind the book's plan agrees with ``book/references.bib``.

Each row of the appendix's bibliography table cites a work by its key and shows its arXiv
identifier (or a dash); the key must be in the .bib file with that ``eprint``, so the
page and the references page cannot disagree about which paper a row means.
"""

from __future__ import annotations

import re
from pathlib import Path

BOOK = Path(__file__).resolve().parents[1] / "book"
ROW = re.compile(r"^\| .*\{cite:p\}`(\w+)` \| ([\d.]+|—) \|$", re.M)


def bib_eprints() -> dict[str, str]:
    """Every key of references.bib with its eprint, or a dash when it has none."""
    bib = (BOOK / "references.bib").read_text(encoding="utf-8")
    out = {}
    for m in re.finditer(r"@\w+\{([^,]+),(.*?)\n\}", bib, re.S):
        eprint = re.search(r"eprint\s*=\s*\{([^}]*)\}", m[2])
        out[m[1].strip()] = eprint[1] if eprint else "—"
    return out


def appendix_rows() -> list[tuple[str, str]]:
    page = (BOOK / "ch09_appendix.md").read_text(encoding="utf-8")
    section = page[page.index("(ch09-bibliography)="):page.index("(ch09-summary)=")]
    return ROW.findall(section)


def test_every_row_of_the_appendix_bibliography_is_in_the_bib_with_its_arxiv_id():
    rows, entries = appendix_rows(), bib_eprints()
    assert len(rows) == 23
    assert len({key for key, _ in rows}) == len(rows), "a work listed twice"
    for key, arxiv in rows:
        assert key in entries, f"{key} is not in references.bib"
        assert entries[key] == arxiv, f"{key}: the page says {arxiv}, references.bib {entries[key]}"
