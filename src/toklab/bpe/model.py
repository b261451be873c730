"""`ByteBPE`: a byte-level BPE tokenizer (pattern + merges + special tokens), tiktoken-compatible.

Unlike the textbook functions in `toklab.bpe.reference`, this object encodes
whole texts: it cuts specials out first (tiktoken's allowed/disallowed
contract), splits the rest with its pre-tokenizer pattern, and merges inside
each chunk with `toklab.bpe.encode.merge_chunk`, caching each chunk's IDs. On
the real r50k/cl100k/o200k files it gives tiktoken's IDs, ID for ID.

As a *model* in a `toklab.pipeline.Pipeline` it offers the narrow interface
every model does: `segment` (one pre-tokenized chunk to IDs), `token_to_id`,
`id_to_token` and ``len``. Tokens are ``bytes``; ``vocab`` maps ID to bytes.
"""

from __future__ import annotations

import os
import random
from types import MappingProxyType
from collections.abc import Iterable, Iterator, Mapping, Sequence

from ..base import special
from ..base.checks import check_id, check_ids, check_str, type_name
from ..base.special import SpecialSet
from ..base.unicode import replace_surrogates
from ..decoders import ByteLevelDecoder
from ..pipeline.offsets import OffsetsMixin
from ..pre_tokenizers import patterns
from . import files
from .encode import CUT_BYTES, Cuts, PieceCache, merge_chunk, merge_dropout, recover_split

__all__ = ["CACHE_LIMIT", "CACHE_PIECE_CHARS", "ByteBPE"]

#: The chunk cache is emptied when it holds more than this many chunks.
CACHE_LIMIT = 500_000
#: Chunks of up to this many characters are cached (longer ones are rare and mostly unique).
CACHE_PIECE_CHARS = 200


class _ChunkCache(dict):
    """Chunk -> IDs (a tuple); looking up a chunk that is not there segments it (and keeps it if short)."""

    __slots__ = ("segment", "pieces")

    def __init__(self, segment, pieces: PieceCache) -> None:
        super().__init__()
        self.segment, self.pieces = segment, pieces

    def __missing__(self, chunk: str) -> tuple[int, ...]:
        # Tuples, not lists: the garbage collector stops tracking a tuple of ints,
        # so a first call that fills the cache does not make each collection slower
        # (measured: about a tenth of a first encode on the benchmark corpus).
        ids = tuple(self.segment(chunk))
        if len(chunk) <= CACHE_PIECE_CHARS:
            self[chunk] = ids
        return ids

    def encode(self, chunks: Iterable[str]) -> list[int]:
        """The chunks' IDs, concatenated; a chunk that repeats is segmented once."""
        if len(self) > CACHE_LIMIT or len(self.pieces) > CACHE_LIMIT:
            self.clear()
            self.pieces.clear()
        out: list[int] = []
        extend = out.extend
        for ids in map(self.__getitem__, chunks):
            extend(ids)
        return out


class ByteBPE(OffsetsMixin):
    """A byte-level BPE tokenizer: pattern + merges (+ IDs) + special tokens.

    ``merges`` are byte pairs in learning order. ``vocab`` maps IDs to bytes;
    left out, byte b gets ID b and merge k gets ID 256 + k. ``special_tokens``
    is a dict of explicit IDs, or a list of strings whose IDs are taken from
    ``vocab`` when it holds their UTF-8 bytes and appended after the largest
    ID otherwise.
    """

    def __init__(
        self,
        merges: Sequence[tuple[bytes, bytes]],
        *,
        vocab: Mapping[int, bytes] | None = None,
        pattern: str = "gpt2",
        special_tokens: Mapping[str, int] | Sequence[str] | None = None,
    ) -> None:
        merges = _checked_merges(merges, pattern, special_tokens)
        if vocab is None:
            vocab = {i: bytes([i]) for i in range(256)}
            for k, (a, b) in enumerate(merges):
                vocab[256 + k] = a + b
        vocab = {int(i): bytes(t) for i, t in vocab.items()}
        encoder = _invert(vocab, "vocab maps both IDs {0} and {1} to the bytes {2!r}")
        _check_bytes(encoder, "vocab")
        ranks: dict[bytes, int] = {}
        for k, (a, b) in enumerate(merges):
            for part in (a, b):
                if part not in encoder:
                    raise ValueError(f"merge {k} uses {part!r}, which is not in the vocabulary")
            tok = a + b
            if tok not in encoder:
                raise ValueError(f"merge {k} makes {tok!r}, which is not in the vocabulary")
            if tok in ranks:
                raise ValueError(f"merges {ranks[tok]} and {k} both make {tok!r}")
            ranks[tok] = k
        self._init_tables(pattern, vocab, encoder, ranks, special_tokens)
        self._merges: list[tuple[bytes, bytes]] | None = merges

    @classmethod
    def from_ranks(
        cls,
        ranks: Mapping[bytes, int],
        *,
        pattern: str,
        special_tokens: Mapping[str, int] | None = None,
    ) -> "ByteBPE":
        """Build from tiktoken-style mergeable ranks (token bytes -> rank = ID).

        The merge list is not stored in such files; it is recovered on first
        use of `merges` by re-running BPE on each token's bytes.
        """
        _checked_merges((), pattern, special_tokens, ranks)
        self = cls.__new__(cls)
        encoder = {bytes(t): int(r) for t, r in ranks.items()}
        vocab = {r: t for t, r in encoder.items()}
        if len(vocab) != len(encoder):
            raise ValueError("two tokens share a rank in the rank table")
        _check_bytes(encoder, "rank table")
        merge_ranks = {t: r for t, r in encoder.items() if len(t) > 1}
        self._init_tables(pattern, vocab, encoder, merge_ranks, special_tokens or {})
        self._merges = None
        return self

    @classmethod
    def from_tiktoken(cls, name_or_path: str | os.PathLike) -> "ByteBPE":
        """Load ``r50k_base``, ``cl100k_base`` or ``o200k_base`` (SHA-256 checked), or a rank file."""
        from ..data import vocabs

        spec = vocabs.load(name_or_path)
        return cls.from_ranks(spec.ranks, pattern=spec.pattern, special_tokens=spec.special_tokens)

    def _init_tables(self, pattern, vocab, encoder, ranks, special_tokens) -> None:
        self.pattern = pattern
        self._split = patterns.splitter(pattern)
        self.vocab: dict[int, bytes] = dict(vocab)
        self._encoder = encoder
        self._ranks = ranks
        self.special_tokens: dict[str, int] = _special_ids(special_tokens, vocab, encoder)
        self._decoder: dict[int, bytes] = dict(vocab)
        for s, i in self.special_tokens.items():
            self._decoder[i] = s.encode("utf-8")
        self._pieces = PieceCache(encoder, ranks, CACHE_PIECE_CHARS)
        self._cache = _ChunkCache(self._segment, self._pieces)

    @property
    def merge_ranks(self) -> Mapping[bytes, int]:
        """Multi-byte token -> its rank, read-only: BPE joins the adjacent pair whose
        concatenation has the lowest rank (the table `merge_chunk` takes)."""
        return MappingProxyType(self._ranks)

    @property
    def merges(self) -> list[tuple[bytes, bytes]]:
        """Merges in rank order. For rank tables this recovers each token's two parts."""
        if self._merges is None:
            order = sorted(self._ranks.items(), key=lambda kv: kv[1])
            self._merges = [recover_split(tok, self._ranks, r) for tok, r in order]
        return list(self._merges)

    # -- sizes and lookups ------------------------------------------------------

    @property
    def n_vocab(self) -> int:
        """Largest ID + 1: the number of embedding rows this tokenizer needs."""
        return max(self._decoder) + 1

    def __len__(self) -> int:
        """Number of distinct tokens, specials included (may be < n_vocab if IDs have gaps)."""
        return len(self._decoder)

    def __repr__(self) -> str:
        name = patterns.pattern_name(self.pattern) or "custom"
        return (
            f"ByteBPE(pattern={name!r}, tokens={len(self.vocab)}, merges={len(self._ranks)}, "
            f"special_tokens={len(self.special_tokens)})"
        )

    def get_vocab(self) -> dict[bytes, int]:
        """Token bytes -> ID for every ordinary token (specials are in ``special_tokens``)."""
        return dict(self._encoder)

    def token_to_id(self, token: bytes) -> int:
        """The ID of a token given as bytes (ordinary or special); KeyError names it if absent."""
        token = _token_bytes(token)
        tid = self._encoder.get(token)
        if tid is None:
            tid = next((i for s, i in self.special_tokens.items() if s.encode("utf-8") == token), None)
        if tid is None:
            raise KeyError(f"{token!r} is not a token of this vocabulary")
        return tid

    def id_to_token(self, token_id: int) -> bytes:
        """The bytes of one token; ValueError names an unknown ID and the valid range."""
        return self.decode_bytes([_token_id(token_id)])

    # -- encoding -------------------------------------------------------------

    def segment(self, chunk: str) -> list[int]:
        """The model stage alone: BPE on one pre-tokenized chunk, no chunk cache, no specials.

        ``encode_ordinary(text)`` is ``segment`` applied to each chunk of the pattern's
        split, concatenated. A chunk with a lone surrogate must be cleaned first.
        A chunk that is a token is that token, whatever BPE would do (tiktoken's
        order). Otherwise the result equals `merge_chunk` on the chunk's bytes; a
        longer chunk with non-ASCII text gets it faster by being cut where no
        token spans it (`toklab.bpe.encode.Cuts`), each piece merged once and cached.
        """
        return self._segment(check_str(chunk, "chunk"))

    def _segment(self, chunk: str) -> list[int]:
        # `segment` for chunks of a split of checked text (the chunk cache's path)
        data = chunk.encode("utf-8")
        tid = self._encoder.get(data)
        if tid is not None:
            return [tid]
        if len(data) < CUT_BYTES or chunk.isascii():
            return [self._encoder[p] for p in merge_chunk(data, self._ranks)]
        return self._pieces.encode(chunk)

    @property
    def cuts(self) -> Cuts:
        """Where no token spans a chunk (`toklab.bpe.encode.Cuts`), indexed on first use."""
        return self._pieces.cuts

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode text with no special-token handling at all (specials are plain text)."""
        text = replace_surrogates(check_str(text))
        return self._cache.encode(self._split(text))

    def encode(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
        dropout: float = 0.0,
        seed: int | random.Random | None = None,
    ) -> list[int]:
        """Encode text to IDs, with tiktoken's special-token contract.

        A special token is encoded as its ID only if it is in
        ``allowed_special``. If text contains one that is in
        ``disallowed_special`` (by default: every special not allowed), this
        raises ValueError rather than guess; ``disallowed_special=()`` encodes
        such text as ordinary bytes. Lone surrogates, which have no UTF-8
        form, become U+FFFD as in tiktoken.

        ``dropout`` > 0 turns on BPE-dropout: each merge is skipped with that
        probability at every step, giving a random, longer segmentation that
        still decodes to the same text. ``seed`` (an int, or a `random.Random`
        to continue an existing stream) makes it repeatable.
        """
        allowed, disallowed = special.resolve_special_sets(self.special_tokens, allowed_special, disallowed_special)
        special.check_disallowed(check_str(text), disallowed)
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"dropout must be a probability in [0, 1], got {dropout}")
        out: list[int] = []
        rng = None
        if dropout > 0:
            rng = seed if isinstance(seed, random.Random) else random.Random(seed)
        for piece, is_special in special.split_on_specials(text, allowed):
            if is_special:
                out.append(self.special_tokens[piece])
            elif rng is None:
                out.extend(self.encode_ordinary(piece))
            else:
                for chunk in self._split(replace_surrogates(piece)):
                    out.extend(self._encoder[t] for t in merge_dropout(chunk.encode("utf-8"), self._ranks, dropout, rng))
        return out

    def encode_batch(self, texts: Iterable[str], **options) -> list[list[int]]:
        """`encode` each text (same options)."""
        return [self.encode(t, **options) for t in _texts(texts, "encode_batch")]

    def encode_iterable(self, texts: Iterable[str], **options) -> Iterator[int]:
        """Encode a stream of text pieces lazily; the IDs equal ``encode("".join(texts))``.

        Text is buffered only up to the last position where a cut cannot
        change the result (a pattern safe cut that does not fall inside a
        special token), so memory stays bounded for ordinary text. With a
        custom pattern there are no safe cuts and the whole input is buffered.
        """
        tokens = list(self.special_tokens)
        if options.get("dropout", 0.0) > 0 and not isinstance(options.get("seed"), random.Random):
            # One random stream for the whole input, as a single encode() call would use.
            options = {**options, "seed": random.Random(options.get("seed"))}
        buffer = ""
        for text in _texts(texts, "encode_iterable"):
            buffer += check_str(text, "each piece")
            if len(buffer) < 4096:
                continue
            cut = patterns.last_safe_cut(buffer, self.pattern, avoid=tokens)
            if cut:
                yield from self.encode(buffer[:cut], **options)
                buffer = buffer[cut:]
        if buffer:
            yield from self.encode(buffer, **options)

    # -- decoding -------------------------------------------------------------

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """Concatenate the tokens' bytes. Raises ValueError on an unknown ID."""
        decoder = self._decoder
        ids = check_ids(ids)
        try:
            return b"".join([decoder[i] for i in ids])
        except (KeyError, TypeError):
            raise _bad_id(ids, decoder) from None

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """Decode IDs to text; bytes that are not valid UTF-8 become U+FFFD by default.

        A token sequence can end in the middle of a character (byte-level
        tokens split multi-byte characters), so ``errors`` matters; pass
        ``"strict"`` to get an exception instead.
        """
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    token_bytes = id_to_token

    def tokens(self, ids: Iterable[int]) -> list[bytes]:
        """The bytes of each token, e.g. for showing token boundaries."""
        ids = check_ids(ids)
        self.decode_bytes(ids)
        return [self._decoder[i] for i in ids]

    # -- the pipeline view ------------------------------------------------------

    @property
    def pre_tokenizer(self) -> patterns.RegexSplit:
        """This tokenizer's pre-tokenizer stage (its regex)."""
        return patterns.RegexSplit(self.pattern)

    @property
    def decoder(self) -> ByteLevelDecoder:
        return ByteLevelDecoder()

    def as_pipeline(self):
        """This tokenizer as a `toklab.pipeline.Pipeline` with no normalizer (same IDs)."""
        from ..pipeline.compose import Pipeline

        return Pipeline(self)

    def trace(self, text: str, **options):
        """Every stage's output for ``text`` (see `toklab.pipeline.trace`)."""
        return self.as_pipeline().trace(text, **options)

    # -- files and interop ------------------------------------------------------

    def _content(self) -> dict:
        return files.payload(self.pattern, self.merges, self.vocab, self.special_tokens)

    def fingerprint(self) -> str:
        """SHA-256 of everything that determines this tokenizer's output (see `toklab.bpe.files`)."""
        return files.fingerprint(self._content())

    def save(self, path: str | os.PathLike) -> None:
        """Write a readable JSON file: pattern, specials, merges (GPT-2 proxy alphabet), sha256."""
        files.write(path, self._content())

    @classmethod
    def load(cls, path: str | os.PathLike) -> "ByteBPE":
        """Read a file written by `save`, verifying its SHA-256 fingerprint; ValueError naming the file otherwise."""
        args = files.read(path)
        try:
            return cls(args.pop("merges"), **args)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path}: {exc}") from None

    def mergeable_ranks(self) -> dict[bytes, int]:
        """Token bytes -> ID, the table tiktoken calls ``mergeable_ranks``.

        Valid only when IDs are ranks (merges get increasing IDs), which holds
        for trained tokenizers and for tiktoken's own files.
        """
        return dict(self._encoder)

    def to_tiktoken(self, name: str = "toklab"):
        """A `tiktoken.Encoding` that encodes exactly as this tokenizer does.

        tiktoken drops the text a pattern does not match; a custom pattern is
        therefore handed over with a second branch for its gaps
        (`toklab.pre_tokenizers.patterns.gap_keeping`), so that tiktoken keeps them
        as toklab does.
        """
        import tiktoken

        # tiktoken merges by rank = ID, so the merge order must agree with ID order.
        ids = [self._encoder[t] for t in sorted(self._ranks, key=self._ranks.__getitem__)]
        if ids != sorted(ids):
            raise ValueError("this tokenizer's IDs are not in merge order, so tiktoken cannot represent it")
        source = patterns.resolve(self.pattern)
        if patterns.pattern_name(self.pattern) is None:
            source = patterns.gap_keeping(source)
        return tiktoken.Encoding(
            name, pat_str=source, mergeable_ranks=self.mergeable_ranks(), special_tokens=dict(self.special_tokens),
        )

    def to_hf(self):
        """This model as HF ``tokenizers.models.BPE`` (tokens in GPT-2's proxy alphabet)."""
        return files.hf_model(self)

    def to_hf_json(self) -> str:
        """This tokenizer as a ``tokenizer.json`` (its pipeline's `toklab.pipeline.Pipeline.to_hf_json`)."""
        return self.as_pipeline().to_hf_json()


def _bad_id(ids: list, decoder: Mapping[int, bytes]) -> Exception:
    """The error for the first ID in ``ids`` that ``decoder`` does not know."""
    for pos, i in enumerate(ids):
        if i not in decoder:
            return ValueError(
                f"unknown token ID {i!r} at position {pos}: not in this vocabulary "
                f"(IDs range over 0..{max(decoder)}, {len(decoder)} assigned)"
            )
    return TypeError(f"token IDs must be integers, got {ids!r}")


def _token_id(token_id) -> int:
    if isinstance(token_id, bool):
        raise ValueError(f"unknown token ID {token_id!r}: a token ID is an int, not a bool")
    return check_id(token_id)


def _token_bytes(token) -> bytes:
    if isinstance(token, str):
        raise TypeError(f"ByteBPE tokens are bytes, got the str {token!r}: pass {token!r}.encode('utf-8')")
    return bytes(token)


def _texts(texts, method: str):
    if isinstance(texts, (str, bytes)):
        raise TypeError(f"{method} takes an iterable of texts, got a {type(texts).__name__}: use encode for one text")
    return texts


def _checked_merges(merges, pattern, special_tokens, ranks=None) -> list[tuple[bytes, bytes]]:
    """The constructors' arguments checked (TypeError naming what came); merges as pairs of bytes."""
    check_str(pattern, "pattern")
    if isinstance(special_tokens, str):
        raise TypeError(f"special_tokens must be a dict or a list of str, got the str {special_tokens!r}")
    if ranks is not None and not isinstance(ranks, Mapping):
        raise TypeError(f"ranks must be a mapping token bytes -> rank, got {type_name(ranks)}")
    if isinstance(merges, (str, bytes)) or not hasattr(merges, "__iter__"):
        raise TypeError(f"merges must be a list of (bytes, bytes) pairs, got {type_name(merges)}")
    out = []
    for k, merge in enumerate(merges):
        if not (isinstance(merge, (tuple, list)) and len(merge) == 2
                and all(isinstance(part, (bytes, bytearray)) for part in merge)):
            raise TypeError(f"merge {k} must be a pair of bytes, got {type_name(merge)}")
        out.append((bytes(merge[0]), bytes(merge[1])))
    return out


def _check_bytes(encoder: Mapping[bytes, int], what: str) -> None:
    missing = [b for b in range(256) if bytes([b]) not in encoder]
    if missing:
        raise ValueError(f"{what} lacks single-byte tokens for bytes {missing[:8]} ({len(missing)} missing)")


def _invert(vocab: Mapping[int, bytes], message: str) -> dict[bytes, int]:
    encoder: dict[bytes, int] = {}
    for i, tok in vocab.items():
        if tok in encoder:
            raise ValueError(message.format(encoder[tok], i, tok))
        encoder[tok] = i
    return encoder


def _special_ids(
    special_tokens: Mapping[str, int] | Sequence[str] | None, vocab: Mapping[int, bytes], encoder: Mapping[bytes, int]
) -> dict[str, int]:
    """Explicit special IDs, or IDs for a list of specials (reusing a token that spells one)."""
    specials: dict[str, int] = {}
    if isinstance(special_tokens, Mapping):
        specials = {str(s): int(i) for s, i in special_tokens.items()}
    else:
        next_id = max(vocab) + 1
        for s in special_tokens or ():
            if s in specials:
                continue
            tok = s.encode("utf-8")
            if tok in encoder:
                specials[s] = encoder[tok]
            else:
                specials[s] = next_id
                next_id += 1
    for s, i in specials.items():
        if not s:
            raise ValueError("a special token cannot be the empty string")
        if i in vocab and vocab[i] != s.encode("utf-8"):
            raise ValueError(f"special token {s!r} has ID {i}, which the vocab already uses for {vocab[i]!r}")
    if len(set(specials.values())) != len(specials):
        raise ValueError(f"two special tokens share an ID: {specials}")
    return specials
