"""Stage 5 of the pipeline, post-processing: special tokens around the whole sequence.

GPT-style models put BOS (and sometimes EOS) around a text; BERT puts
``[CLS] A [SEP]`` around one sequence and ``[CLS] A [SEP] B [SEP]`` around a
pair. `TemplateProcessing` writes such a rule in HF's template notation
(``"[CLS] $A [SEP]"``): ``$A`` and ``$B`` are the two sequences, every other
word names a special token. Decoding undoes the template with `strip`.

The template is the one place where a tokenizer adds IDs that no text produced,
which is why a chat template that writes its own BOS on top of a tokenizer that
adds one gives the classic duplicate-BOS sequence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["TemplateProcessing", "bos_eos"]


@dataclass(frozen=True)
class TemplateProcessing:
    """Special tokens placed around one sequence (``single``) or a pair (``pair``).

    ``special_tokens`` maps every name the templates use to its ID.
    """

    single: str
    special_tokens: Mapping[str, int] = field(default_factory=dict)
    pair: str | None = None

    def __post_init__(self) -> None:
        for name, template in (("single", self.single), ("pair", self.pair)):
            if template is None:
                continue
            words = template.split()
            if words.count("$A") != 1 or (name == "single") == ("$B" in words):
                raise ValueError(f"{name} template {template!r} must hold $A once{' and $B once' if name == 'pair' else ''}")
            unknown = [w for w in words if w not in ("$A", "$B") and w not in self.special_tokens]
            if unknown:
                raise ValueError(f"template {template!r} names {unknown[0]!r}, which is not in special_tokens")

    def process(self, ids: Sequence[int], pair: Sequence[int] | None = None) -> list[int]:
        """``ids`` (and ``pair``) with the template's special tokens around them."""
        if pair is not None and self.pair is None:
            raise ValueError("this post-processor has no pair template")
        out: list[int] = []
        for word in (self.single if pair is None else self.pair).split():
            if word == "$A":
                out.extend(ids)
            elif word == "$B":
                out.extend(pair)
            else:
                out.append(self.special_tokens[word])
        return out

    def strip(self, ids: Sequence[int]) -> list[int]:
        """Undo `process` for one sequence: drop the template's leading and trailing IDs where present."""
        words = self.single.split()
        k = words.index("$A")
        head = [self.special_tokens[w] for w in words[:k]]
        tail = [self.special_tokens[w] for w in words[k + 1 :]]
        ids = list(ids)
        if head and ids[: len(head)] == head:
            ids = ids[len(head) :]
        if tail and len(ids) >= len(tail) and ids[len(ids) - len(tail) :] == tail:
            ids = ids[: len(ids) - len(tail)]
        return ids

    def to_hf(self):
        """The same rule as HF's ``processors.TemplateProcessing``."""
        from tokenizers import processors

        used = [w for t in (self.single, self.pair or "") for w in t.split() if w not in ("$A", "$B")]
        options = {"pair": self.pair} if self.pair else {}
        return processors.TemplateProcessing(
            single=self.single,
            special_tokens=[(w, self.special_tokens[w]) for w in dict.fromkeys(used)],
            **options,
        )


def bos_eos(special_tokens: Mapping[str, int], bos: str | None = None, eos: str | None = None) -> TemplateProcessing | None:
    """``bos $A eos`` (either may be None); None when neither is set."""
    words = [w for w in (bos, "$A", eos) if w is not None]
    if len(words) == 1:
        return None
    return TemplateProcessing(" ".join(words), {w: special_tokens[w] for w in (bos, eos) if w is not None})
