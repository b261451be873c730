"""Constants and plain helpers shared by the BPE test files."""

from __future__ import annotations

from toklab.bpe import ByteBPE, reference_encode
from toklab.pre_tokenizers import patterns

SLICES = [("en", "gpt2", 40_000), ("zh", "cl100k", 20_000), ("code", "o200k", 40_000), ("mixed", "gpt2", 40_000)]
NUM_MERGES = 250
EOT = "<|endoftext|>"
PAD = "<|pad|>"


def byte_words(counts) -> dict[tuple[bytes, ...], int]:
    """Pre-token counts as words of single-byte symbols, for the reference trainer."""
    return {tuple(bytes([b]) for b in piece.encode("utf-8")): c for piece, c in counts.items()}


def reference_ids(tok: ByteBPE, text: str) -> list[int]:
    """Encode with the textbook encoder: split, then apply merges in learned order."""
    encoder = {t: i for i, t in tok.vocab.items()}
    merges = tok.merges
    memo: dict[str, list[int]] = {}
    out: list[int] = []
    for piece in patterns.split(text, tok.pattern):
        if piece not in memo:
            syms = reference_encode([bytes([b]) for b in piece.encode("utf-8")], merges)
            memo[piece] = [encoder[s] for s in syms]
        out.extend(memo[piece])
    return out
