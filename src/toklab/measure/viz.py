"""Seeing tokens: boundary views as HTML, and small plotting helpers.

Token boundaries are drawn as HTML rather than with matplotlib because the
browser has fonts for every script (matplotlib's default font has no CJK or
emoji glyphs). Whitespace is made visible (``␣`` for a space, ``↵`` for a
newline, ``→`` for a tab) since where spaces go is half the story, and a
token that holds only part of a UTF-8 character is shown as its hex bytes.

A terminal obeys some characters instead of showing them: ESC starts a command
(colours, cursor moves, a new window title), BEL rings, a right-to-left override
reorders the line. `terminal_safe` shows each of them as a picture (``␛``, ``␇``) or
as ``<U+202E>``, so text printed from a file can neither hide nor change anything.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

__all__ = ["token_label", "token_labels", "terminal_safe", "boundaries_html", "BoundaryView", "show_boundaries"]

_VISIBLE = {" ": "␣", "\n": "↵", "\t": "→", "\r": "␍"}
# C0 controls and DEL have pictures (U+2400 block); C1 controls and the bidirectional
# formatting characters are spelled out.
_PICTURES = {chr(c): chr(0x2400 + c) for c in range(0x20)} | {"\x7f": "\u2421"}
_SPELLED = [*range(0x80, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_TERMINAL = str.maketrans(_PICTURES | {chr(c): f"<U+{c:04X}>" for c in _SPELLED})
_COLORS = ("#dbeafe", "#fde68a", "#bbf7d0", "#fecaca", "#e9d5ff", "#fed7aa")


def token_label(data: bytes) -> str:
    """A printable label for one token's bytes.

    Valid UTF-8 is shown as text with visible whitespace; anything else (a
    token that starts or ends inside a multi-byte character) as ``<E6 B3>``.
    """
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(f"token_label takes a token's bytes, got {type(data).__name__}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "<" + " ".join(f"{b:02X}" for b in data) + ">"
    return "".join(_VISIBLE.get(ch, ch) for ch in text)


def terminal_safe(text: str) -> str:
    """``text`` with every character a terminal would act on made visible: ``␛`` for ESC, ``<U+202E>`` ..."""
    return text.translate(_TERMINAL)


def token_labels(tokenizer, text: str, **encode_options) -> list[str]:
    """Labels of the tokens that ``tokenizer.encode(text)`` produces."""
    ids = tokenizer.encode(text, **encode_options)
    return [token_label(t) for t in tokenizer.tokens(ids)]


def boundaries_html(rows: Mapping[str, Sequence[str]]) -> str:
    """An HTML table: one row per tokenizer, each token a coloured box, with a count."""
    out = ['<table class="toklab-boundaries" style="border-collapse:collapse">']
    for name, labels in rows.items():
        cells = []
        for k, label in enumerate(labels):
            color = _COLORS[k % len(_COLORS)]
            cells.append(
                f'<span style="background:{color};border:1px solid #9ca3af;border-radius:3px;'
                f'padding:1px 2px;margin:1px;display:inline-block;font-family:monospace;'
                f'white-space:pre">{html.escape(label)}</span>'
            )
        out.append(
            '<tr><td style="padding:4px 8px;vertical-align:top;white-space:nowrap">'
            f"<b>{html.escape(name)}</b><br><small>{len(labels)} tokens</small></td>"
            f'<td style="padding:4px 0">{"".join(cells)}</td></tr>'
        )
    out.append("</table>")
    return "".join(out)


class BoundaryView:
    """Token boundaries that render as HTML in a notebook and as plain text elsewhere."""

    def __init__(self, rows: Mapping[str, Sequence[str]]) -> None:
        self.rows = {name: list(labels) for name, labels in rows.items()}

    def _repr_html_(self) -> str:
        return boundaries_html(self.rows)

    def __repr__(self) -> str:
        width = max(len(n) for n in self.rows) if self.rows else 0
        return "\n".join(f"{name:<{width}}  {len(labels):>4}  " + "|".join(labels) for name, labels in self.rows.items())


def show_boundaries(tokenizers: Mapping[str, object], text: str, **encode_options) -> BoundaryView:
    """Encode ``text`` with each tokenizer and show where each puts its token boundaries."""
    return BoundaryView({name: token_labels(tok, text, **encode_options) for name, tok in tokenizers.items()})
