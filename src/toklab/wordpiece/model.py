"""`WordPieceModel`, the longest-match-first model, and `WordPiece`, BERT's tokenizer as a preset.

`WordPiece` is a `toklab.pipeline.Pipeline` of four named stages, as HF's
``BertWordPieceTokenizer`` is: `toklab.normalizers.BertNormalizer`,
`toklab.pre_tokenizers.BertPreTokenizer`, `WordPieceModel` and
`toklab.decoders.WordPieceDecoder`. No special tokens are recognised in the text
and none are added ([CLS]/[SEP] belong to a post-processor), so ``encode``
equals HF's ``Tokenizer.encode(text, add_special_tokens=False).ids`` for the
same vocabulary and options. Tokens are ``str``; ``vocab`` maps ID to token.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ..base.files import atomic_write
from ..base.unicode import replace_surrogates
from ..decoders import WordPieceDecoder
from ..normalizers.bert import BertNormalizer
from ..pipeline.compose import Pipeline
from ..pre_tokenizers.bert import BertPreTokenizer, bert_words

__all__ = ["BERT_SPECIAL_TOKENS", "WordPieceModel", "WordPiece"]

BERT_SPECIAL_TOKENS: tuple[str, ...] = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")

_CACHE_LIMIT = 200_000


class WordPieceModel:
    """The WordPiece model: a vocabulary and longest-match-first segmentation of one word.

    ``vocab`` is a list (ID = position) or a dict token -> ID. A word that
    cannot be cut, or is longer than ``max_input_chars_per_word`` characters,
    becomes the single ``unk_token``.
    """

    def __init__(
        self,
        vocab: Mapping[str, int] | Sequence[str],
        *,
        unk_token: str = "[UNK]",
        prefix: str = "##",
        max_input_chars_per_word: int = 100,
    ) -> None:
        token_to_id = _token_ids(vocab)
        id_to_token: dict[int, str] = {}
        for token, i in token_to_id.items():
            if i in id_to_token:
                raise ValueError(f"ID {i} is given to both {id_to_token[i]!r} and {token!r}")
            id_to_token[i] = token
        if unk_token not in token_to_id:
            raise ValueError(f"unk_token {unk_token!r} is not in the vocabulary")
        if not prefix:
            raise ValueError("prefix must be a non-empty string such as '##'")
        if max_input_chars_per_word < 1:
            raise ValueError(f"max_input_chars_per_word must be >= 1, got {max_input_chars_per_word}")
        self._ids = token_to_id
        self.vocab: dict[int, str] = id_to_token
        self.unk_token = unk_token
        self.unk_id = token_to_id[unk_token]
        self.prefix = prefix
        self.max_input_chars_per_word = max_input_chars_per_word
        # Longest candidates worth trying, in characters, at a word start and after it.
        self._max_first = max((len(t) for t in token_to_id if not t.startswith(prefix)), default=0)
        self._max_cont = max((len(t) - len(prefix) for t in token_to_id if t.startswith(prefix)), default=0)
        self._cache: dict[str, list[int]] = {}

    def encode_word(self, word: str) -> list[str]:
        """Longest-match-first pieces of one normalized word.

        Must equal `toklab.wordpiece.reference.encode_word`; candidates longer
        than the longest vocabulary entry are skipped because they cannot match.
        """
        vocab, prefix = self._ids, self.prefix
        n = len(word)
        if n > self.max_input_chars_per_word:
            return [self.unk_token]
        pieces: list[str] = []
        start = 0
        while start < n:
            if start == 0:
                end = min(n, self._max_first)
                while end > 0 and word[:end] not in vocab:
                    end -= 1
                piece = word[:end]
            else:
                end = min(n, start + self._max_cont)
                while end > start and prefix + word[start:end] not in vocab:
                    end -= 1
                piece = prefix + word[start:end]
            if end == start:
                return [self.unk_token]
            pieces.append(piece)
            start = end
        return pieces

    def segment(self, chunk: str) -> list[int]:
        """IDs of one word (cached)."""
        ids = self._cache.get(chunk)
        if ids is None:
            ids = [self._ids[p] for p in self.encode_word(chunk)]
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            self._cache[chunk] = ids
        return ids

    def get_vocab(self) -> dict[str, int]:
        """Token -> ID (HF's ``get_vocab``; the table ``vocab.txt`` and HF's model take)."""
        return dict(self._ids)

    def token_to_id(self, token: str) -> int:
        """The ID of ``token``; KeyError naming the token if it is not in the vocabulary."""
        try:
            return self._ids[token]
        except (KeyError, TypeError):
            raise KeyError(f"token {token!r} is not in the vocabulary ({len(self)} entries)") from None

    def id_to_token(self, token_id: int) -> str:
        """The token with ID ``token_id``; ValueError naming the ID and the valid range if there is none."""
        try:
            return self.vocab[token_id]
        except (KeyError, TypeError):
            raise ValueError(
                f"unknown token ID {token_id!r}: not in this vocabulary (IDs 0..{max(self.vocab)}, {len(self)} entries)"
            ) from None

    def __len__(self) -> int:
        return len(self._ids)

    def to_hf(self):
        from tokenizers import models

        return models.WordPiece(
            self.get_vocab(), unk_token=self.unk_token, continuing_subword_prefix=self.prefix,
            max_input_chars_per_word=self.max_input_chars_per_word,
        )

    def save(self, path: str | os.PathLike) -> None:
        """Write BERT's ``vocab.txt``: one token per line, line number = ID (from 0).

        Only the vocabulary is stored, as in BERT; IDs must therefore run from
        0 without gaps.
        """
        n = len(self.vocab)
        if set(self.vocab) != set(range(n)):
            raise ValueError("vocab.txt needs IDs 0..n-1 without gaps; this vocabulary has other IDs")
        for token in self._ids:
            if not token or "\n" in token or "\r" in token:
                raise ValueError(f"token {token!r} cannot be written as one line of vocab.txt")
        atomic_write(path, "".join(self.vocab[i] + "\n" for i in range(n)))


class WordPiece(Pipeline):
    """A BERT-style WordPiece tokenizer: BERT normalizer + BERT pre-tokenizer + WordPiece model + decoder.

    ``vocab`` is a list (ID = position) or a dict token -> ID. The normalizer
    options are `toklab.normalizers.BertNormalizer`'s; ``cleanup`` is the
    decoder's. ``words(text)`` runs normalizer and pre-tokenizer fused into one
    pass (`toklab.pre_tokenizers.bert.bert_words`), which ``encode`` uses.
    ``special_tokens`` (token -> ID, IDs of the vocabulary), ``post_processor``
    and ``non_special_tokens`` are `toklab.pipeline.Pipeline`'s: none by default,
    as above; `toklab.formats.hf_json.from_hf_json` sets them for a BERT ``tokenizer.json``.
    """

    def __init__(
        self,
        vocab: Mapping[str, int] | Sequence[str],
        *,
        unk_token: str = "[UNK]",
        prefix: str = "##",
        max_input_chars_per_word: int = 100,
        lowercase: bool = True,
        strip_accents: bool | None = None,
        handle_chinese_chars: bool = True,
        clean_text: bool = True,
        cleanup: bool = True,
        special_tokens: Mapping[str, int] | None = None,
        post_processor=None,
        non_special_tokens: frozenset[str] = frozenset(),
    ) -> None:
        model = WordPieceModel(vocab, unk_token=unk_token, prefix=prefix, max_input_chars_per_word=max_input_chars_per_word)
        for token, i in (special_tokens or {}).items():
            if model.vocab.get(i) != token:
                raise ValueError(f"special token {token!r} must be in the vocabulary at its ID {i}")
        super().__init__(
            model,
            normalizer=BertNormalizer(lowercase, strip_accents, handle_chinese_chars, clean_text),
            pre_tokenizer=BertPreTokenizer(),
            decoder=WordPieceDecoder(prefix, cleanup),
            special_tokens=special_tokens,
            post_processor=post_processor,
            non_special_tokens=non_special_tokens,
        )

    # The model's and normalizer's settings, readable where BERT users expect them.
    vocab = property(lambda self: self.model.vocab, doc="ID -> token.")
    unk_token = property(lambda self: self.model.unk_token)
    unk_id = property(lambda self: self.model.unk_id)
    prefix = property(lambda self: self.model.prefix)
    max_input_chars_per_word = property(lambda self: self.model.max_input_chars_per_word)
    lowercase = property(lambda self: self.normalizer.lowercase)
    strip_accents = property(lambda self: self.normalizer.strip_accents)
    handle_chinese_chars = property(lambda self: self.normalizer.handle_chinese_chars)
    clean_text = property(lambda self: self.normalizer.clean_text)

    def get_vocab(self) -> dict[str, int]:
        return self.model.get_vocab()

    def words(self, text: str, *, first: bool = True) -> list[str]:
        """Normalized words of ``text``: ``pre_tokenize(normalize(text))`` in one pass (``first`` changes nothing).

        A lone surrogate is U+FFFD first, as in every toklab tokenizer (`Pipeline.normalize`).
        """
        return bert_words(replace_surrogates(text), self.normalizer)

    def encode_word(self, word: str) -> list[str]:
        """Longest-match-first pieces of one already normalized word."""
        return self.model.encode_word(word)

    def tokenize(self, text: str) -> list[str]:
        """Token strings of ``text``: ``"unaffable"`` -> e.g. ``["una", "##ffa", "##ble"]``."""
        return [self.model.vocab[i] for i in self.encode(text)]

    def decode(self, ids: Iterable[int], *, cleanup: bool | None = None, skip_special_tokens: bool = False) -> str:
        """Join tokens as HF's ``decoders.WordPiece`` does (see `toklab.decoders.WordPieceDecoder`).

        ``cleanup`` overrides the decoder's setting for this call. Decoding is
        not an inverse: case, accents, the original spacing and every word that
        became [UNK] are gone. An unknown ID raises ValueError naming it. With a
        post-processor or special tokens, they are undone or dropped as
        `toklab.pipeline.Pipeline.decode` does.
        """
        decoder = self.decoder if cleanup is None else WordPieceDecoder(self.prefix, cleanup)
        return decoder.decode(self.tokens(self.decodable(ids, skip_special_tokens=skip_special_tokens)))

    def __repr__(self) -> str:
        return (
            f"WordPiece(vocab={len(self)} tokens, unk_token={self.unk_token!r}, "
            f"lowercase={self.lowercase}, strip_accents={self.strip_accents})"
        )

    def save(self, path: str | os.PathLike) -> None:
        """Write BERT's ``vocab.txt`` (pass the normalizer options again to `load`)."""
        self.model.save(path)

    @classmethod
    def load(cls, path: str | os.PathLike, **options) -> "WordPiece":
        """Read a ``vocab.txt`` (BERT format); ``options`` go to the constructor.

        Each line minus its line ending (LF or CRLF) is one token; HF's reader
        also trims trailing spaces, which no real vocabulary relies on.
        Raises ValueError naming the file and line for undecodable bytes, an
        empty line, or a token listed twice (BERT's and HF's loaders would
        silently keep only one of the two IDs).
        """
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as err:
            line = path.read_bytes()[: err.start].count(b"\n") + 1
            raise ValueError(f"{path}: line {line} is not valid UTF-8") from None
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        seen: dict[str, int] = {}
        for number, line in enumerate(lines, start=1):
            token = line[:-1] if line.endswith("\r") else line
            if not token:
                raise ValueError(f"{path}: line {number} is empty (every line must hold one token)")
            if token in seen:
                raise ValueError(f"{path}: line {number} repeats token {token!r} from line {seen[token] + 1}")
            seen[token] = number - 1
        if not seen:
            raise ValueError(f"{path}: the vocabulary file is empty")
        try:
            return cls(seen, **options)
        except ValueError as err:  # e.g. no unk token: say which file lacks it
            raise ValueError(f"{path}: {err}") from None


def _token_ids(vocab: Mapping[str, int] | Sequence[str]) -> dict[str, int]:
    """Token -> ID from a dict (checked) or a list (ID = position, no repeats)."""
    if isinstance(vocab, Mapping):
        for token, i in vocab.items():
            if not isinstance(token, str) or not isinstance(i, int) or isinstance(i, bool) or i < 0:
                raise ValueError(f"vocabulary entry {token!r}: {i!r} must map a str to an ID >= 0")
        return dict(vocab)
    if isinstance(vocab, str):
        raise TypeError("vocab must be a list of tokens or a dict token -> ID, not a str")
    out: dict[str, int] = {}
    for i, token in enumerate(vocab):
        if not isinstance(token, str):
            raise ValueError(f"vocabulary entry {i} is {token!r}, not a str")
        if token in out:
            raise ValueError(f"token {token!r} appears twice in the vocabulary (IDs {out[token]} and {i})")
        out[token] = i
    return out
