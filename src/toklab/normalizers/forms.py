"""Unicode's four normal forms as a pipeline stage (HF ``normalizers.NFC`` and friends)."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from .offsets import NORMAL_FORMS, normalize_with_offsets

__all__ = ["NORMAL_FORMS", "UnicodeNormalizer"]


@dataclass(frozen=True)
class UnicodeNormalizer:
    """One normal form (``"NFC"``, ``"NFD"``, ``"NFKC"`` or ``"NFKD"``), applied to the whole text."""

    form: str

    def __post_init__(self) -> None:
        if self.form not in NORMAL_FORMS:
            raise ValueError(f"normalizer must be one of the normal forms {NORMAL_FORMS}, got {self.form!r}")

    def normalize(self, text: str) -> str:
        return unicodedata.normalize(self.form, text)

    def normalize_with_offsets(self, text: str) -> tuple[str, list[tuple[int, int]]]:
        """The normalized text and, per output character, its span in ``text`` (see `normalize_with_offsets`)."""
        return normalize_with_offsets(text, self.form)

    def to_hf(self):
        """The same normalizer as a Hugging Face ``tokenizers`` component."""
        from tokenizers import normalizers

        return getattr(normalizers, self.form)()
