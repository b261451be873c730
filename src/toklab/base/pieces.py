"""How sentencepiece-style vocabularies spell what is not plain text: ``▁``, ``<0xXX>``, ``<unk>``.

These conventions are shared by every layer that reads or writes such pieces (the
sentencepiece normalizer and decoder, the Unigram model and trainer, the ``.model`` file,
the Hugging Face mapping), so they live below all of them:

- a space is the ordinary symbol ``▁`` (`SPACE`, `escape`, `unescape`), so decoding can
  put every space back;
- with byte fallback, a byte no piece covers is the piece ``<0xXX>`` (`byte_piece`,
  `byte_of_piece`);
- every piece has a kind (`KINDS`), and the unknown piece prints as `UNK_SURFACE`.
"""

from __future__ import annotations

__all__ = ["SPACE", "escape", "unescape", "KINDS", "UNK_SURFACE", "byte_piece", "byte_of_piece"]

#: sentencepiece's meta symbol for a space (U+2581 LOWER ONE EIGHTH BLOCK).
SPACE = "\u2581"


def escape(text: str) -> str:
    """Every space as ``▁``: ``escape("a b") == "a▁b"``."""
    return text.replace(" ", SPACE)


def unescape(text: str) -> str:
    """Every ``▁`` as a space (a literal ``▁`` in the input comes back as a space too)."""
    return text.replace(SPACE, " ")


#: Piece kinds, named like sentencepiece's piece types. Only "normal" and
#: "user" pieces are ever matched against text; "control" pieces (``<s>``) get
#: IDs but come only from the caller; "byte" pieces are byte fallback's ``<0xXX>``.
KINDS = ("normal", "unknown", "control", "user", "byte", "unused")

#: What ``decode`` prints for ``<unk>``: sentencepiece's default ``unk_surface``
#: (U+2047 DOUBLE QUESTION MARK with a space on each side).
UNK_SURFACE = " \u2047 "


def byte_piece(b: int) -> str:
    """The spelling of byte ``b`` as a byte-fallback piece: ``byte_piece(0xE9) == "<0xE9>"``."""
    return f"<0x{b:02X}>"


def byte_of_piece(piece: str) -> int:
    """The byte a ``<0xXX>`` piece stands for (the inverse of `byte_piece`)."""
    return int(piece[3:5], 16)
