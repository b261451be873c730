"""`SentencePieceTokenizer`: a sentencepiece model reimplemented from toklab's stages.

SentencePiece (Kudo & Richardson, 2018) is a framework, not an algorithm: the
same front end feeds a Unigram or a BPE model. `SentencePieceTokenizer` composes
the stages from their modules and checks, ID for ID, against the real
``sentencepiece`` library (``tests/sentencepiece/``):

1. **Normalization** (`toklab.normalizers.spm.SentencePieceNormalizer`): the
   model's compiled table (`toklab.normalizers.precompiled.Charsmap`) or a
   named rule (`toklab.normalizers.nmt`); user-defined symbols are never
   normalized. Then the whitespace rules and ``▁`` escaping
   (`toklab.normalizers.spm.whitespace_rules`). There is no pre-tokenization at
   encode time: the normalized text goes to the model whole.
2. **Model**: `toklab.unigram.Unigram` (Viterbi over piece scores) or
   `toklab.sentencepiece.bpe.SentencePieceBPE` (merge the adjacent pair whose
   concatenation is the highest-scoring piece, leftmost on ties). User-defined
   symbols are cut out first and never split or merged away; control symbols
   (``<s>``, ``</s>``) never come from text.
3. **Unknowns**: a run of characters no piece covers becomes one ``<unk>``; with
   ``byte_fallback`` it becomes the UTF-8 bytes of the run as ``<0xXX>`` pieces.
4. **Decoding** (`toklab.decoders.SentencePieceDecoder`) runs backwards.

`load` reads a ``.model`` file (`toklab.sentencepiece.model_file`) as a tokenizer,
`load_unigram` as a bare `toklab.unigram.Unigram`; `train` returns the model of
`toklab.sentencepiece.trainer` as a tokenizer.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..base.checks import check_ids
from ..base.files import atomic_write
from ..base.pieces import KINDS, byte_piece
from ..decoders import SentencePieceDecoder
from ..normalizers.spm import SentencePieceNormalizer
from ..pipeline.compose import Stage
from ..unigram.model import Unigram
from . import hf, sampling, trainer
from .bpe import SentencePieceBPE
from .model_file import SPConfig, SPPiece, model_bytes, parse_model_proto, serialize_model_proto

__all__ = ["SentencePieceTokenizer", "load", "load_unigram", "train"]


class SentencePieceTokenizer:
    """A sentencepiece model reimplemented: normalize, escape, segment, map to IDs, and back.

    ``model_pieces`` lists the vocabulary in ID order, each entry a
    `SPPiece` or a ``(piece, score, kind)`` triple (a ``(piece, score)`` pair
    means an ordinary piece). Exactly one entry must be ``"unknown"``;
    ``"control"`` entries (``<s>``, ``</s>``) get IDs but never come from
    text; ``"user"`` entries are user-defined symbols, cut out of the input
    before normalization and kept whole; ``"byte"`` entries are the 256
    ``<0xXX>`` pieces byte fallback needs. ``config`` holds the front-end
    settings (`SPConfig`).

    ``encode`` returns IDs, ``encode_as_pieces`` the piece strings
    (sentencepiece's ``out_type=str``: an unknown run shows its own text),
    ``decode`` turns IDs back into text. ``nbest_encode`` gives a Unigram
    model's n best segmentations, and ``encode(..., enable_sampling=True)``
    samples one (Unigram, or BPE-dropout), both as sentencepiece does
    (`toklab.sentencepiece.sampling`). Build one from the real library
    with `from_sentencepiece`, or from a ``.model`` file with `load`.
    """

    def __init__(self, model_pieces: Sequence[SPPiece | tuple], config: SPConfig | None = None) -> None:
        self.config = config if config is not None else SPConfig()
        self._entries = entries = _checked_entries(model_pieces)
        self._ids: dict[str, int] = {}
        for i, e in enumerate(entries):
            if e.piece in self._ids:
                raise ValueError(f"piece {e.piece!r} appears twice (IDs {self._ids[e.piece]} and {i})")
            self._ids[e.piece] = i
        unks = [i for i, e in enumerate(entries) if e.kind == "unknown"]
        if len(unks) != 1:
            raise ValueError(f"the vocabulary needs exactly one unknown piece, found {len(unks)}")
        self.unk_id = unks[0]
        self._byte_ids = [self._ids.get(byte_piece(b), -1) for b in range(256)]
        if self.config.byte_fallback and any(i < 0 or entries[i].kind != "byte" for i in self._byte_ids):
            raise ValueError("byte_fallback needs the 256 byte pieces <0x00>..<0xFF> (kind 'byte') in the vocabulary")
        self.normalizer = SentencePieceNormalizer(self.config, [e.piece for e in entries if e.kind == "user"])
        if self.config.model_type == "unigram":
            # Unigram's lattice knows the piece kinds (user-defined pieces get
            # sentencepiece's bonus score; control, byte and unused pieces
            # never match text) and adds path scores in float32 like the C++.
            # Byte fallback is left to `pieces`, so the lattice reports unknown runs.
            self.model: Unigram | SentencePieceBPE = Unigram.from_entries(
                [tuple(e) for e in entries], byte_fallback=False, float32=self.config.engine == "sentencepiece"
            )
        else:
            self.model = SentencePieceBPE(entries, self.normalizer)
        self.decoder = SentencePieceDecoder(
            {e.piece: e.kind for e in entries},
            add_dummy_prefix=self.config.add_dummy_prefix,
            remove_extra_whitespaces=self.config.remove_extra_whitespaces,
            unk_surface=self.config.unk_surface,
        )

    @classmethod
    def from_sentencepiece(cls, processor: Any, config: SPConfig | None = None) -> "SentencePieceTokenizer":
        """Build from a ``sentencepiece.SentencePieceProcessor``.

        Pieces, scores and the unknown/control/unused/byte types are read with
        the processor's plain API (``id_to_piece``, ``get_score``,
        ``is_unknown``, ...). That API cannot tell a user-defined symbol from an
        ordinary piece, so the types are checked against the serialized model,
        which is also where the settings come from when ``config`` is None
        (including the compiled normalization table). Pass ``config`` to run
        the model under settings of your own (for instance a rule-based
        normalizer, to measure it against sentencepiece's table).
        """
        proto_pieces, proto_config = parse_model_proto(processor.serialized_model_proto())
        pieces = []
        for i in range(processor.get_piece_size()):
            piece = processor.id_to_piece(i)
            kind = next((k for k in ("unknown", "control", "unused", "byte") if getattr(processor, f"is_{k}")(i)), None)
            kind = kind or ("user" if proto_pieces[i].kind == "user" else "normal")
            if proto_pieces[i].piece != piece or proto_pieces[i].kind != kind:
                raise ValueError(f"piece {i}: the API says {piece!r}/{kind}, the model file {proto_pieces[i]}")
            pieces.append(SPPiece(piece, processor.get_score(i), kind))
        return cls(pieces, config if config is not None else proto_config)

    @classmethod
    def from_model_proto(cls, blob: bytes, config: SPConfig | None = None) -> "SentencePieceTokenizer":
        """Build from the bytes of a ``.model`` file (no sentencepiece library needed)."""
        if not isinstance(blob, (bytes, bytearray, memoryview)):
            raise TypeError(f"expected a .model file's bytes, got {type(blob).__name__} (a path: toklab.sentencepiece.load)")
        pieces, proto_config = parse_model_proto(bytes(blob))
        return cls(pieces, config if config is not None else proto_config)

    def to_model_proto(self) -> bytes:
        """This model as the bytes of a sentencepiece ``.model`` file (see `serialize_model_proto`).

        ``sentencepiece.SentencePieceProcessor(model_proto=...)`` loads it and
        encodes and decodes as this tokenizer does; `from_model_proto` reads it back.
        """
        return serialize_model_proto(self._entries, self.config)

    def save(self, path: str | os.PathLike) -> None:
        """Write `to_model_proto` to ``path`` (a ``.model`` file the ``sentencepiece`` library loads), all or nothing."""
        atomic_write(path, self.to_model_proto())

    def to_hf(self):
        """This model as a Hugging Face ``tokenizers.Tokenizer``, stage for stage (`toklab.sentencepiece.hf`).

        IDs agree on text without the reserved pieces' spellings, except where
        the two libraries' arithmetic differs (listed in `toklab.sentencepiece.hf`;
        none with ``engine="tokenizers"``). Decode with ``skip_special_tokens=True``.
        """
        return hf.hf_tokenizer(self._entries, self.config, self.normalizer, self.decoder)

    def to_hf_json(self) -> str:
        """`to_hf` as the text of a ``tokenizer.json`` (``tokenizers.Tokenizer.from_str`` reads it)."""
        return self.to_hf().to_str(pretty=True)

    # ---- vocabulary ---------------------------------------------------------

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        c = self.config
        return (
            f"SentencePieceTokenizer({c.model_type}, {len(self)} pieces, normalization={c.normalization!r}"
            f"{' (compiled table)' if c.charsmap else ''}, add_dummy_prefix={c.add_dummy_prefix}, "
            f"remove_extra_whitespaces={c.remove_extra_whitespaces}, byte_fallback={c.byte_fallback})"
        )

    @property
    def pieces(self) -> list[SPPiece]:
        """All vocabulary entries, index = ID."""
        return list(self._entries)

    @property
    def vocab(self) -> dict[int, str]:
        """ID -> piece."""
        return {i: e.piece for i, e in enumerate(self._entries)}

    def get_vocab(self) -> dict[str, int]:
        """Piece -> ID."""
        return dict(self._ids)

    def token_to_id(self, piece: str) -> int:
        """The ID of ``piece``; KeyError for a string that is not in the vocabulary."""
        try:
            return self._ids[piece]
        except (KeyError, TypeError):
            raise KeyError(f"{piece!r} is not a piece of this vocabulary ({len(self)} entries)") from None

    def piece_to_id(self, piece: str) -> int:
        """sentencepiece's lookup: the ID of ``piece``, or the unknown ID for any other string.

        That is what the real library does; use `token_to_id` for a KeyError.
        """
        return self._ids.get(piece, self.unk_id)

    def id_to_token(self, i: int) -> str:
        """The piece with ID ``i``; ValueError naming the ID and the valid range if there is none."""
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(self._entries):
            raise ValueError(f"unknown token ID {i!r}: valid IDs are 0..{len(self._entries) - 1}")
        return self._entries[i].piece

    id_to_piece = id_to_token

    def kind(self, i: int) -> str:
        """``"normal"``, ``"unknown"``, ``"control"``, ``"user"``, ``"byte"`` or ``"unused"``."""
        self.id_to_token(i)
        return self._entries[i].kind

    # ---- the stages -------------------------------------------------------------

    def normalize(self, text: str) -> str:
        """``text`` as the model sees it (sentencepiece's ``normalize``; see `SentencePieceNormalizer`)."""
        return self.normalizer.normalize(text)

    def segment(self, normalized: str) -> list[tuple[str, int]]:
        """The model stage: ``(surface, id)`` of each piece of normalized text, byte fallback applied.

        Adjacent unknown pieces are one ``<unk>``; with byte fallback an unknown
        run becomes the ``<0xXX>`` pieces of its UTF-8 bytes.
        """
        if isinstance(self.model, Unigram):
            # Viterbi surfaces; an unknown run is never itself an ordinary or
            # user-defined piece (that piece would have scored better).
            found = [(surface, self._matchable_id(surface)) for surface in self.model.viterbi(normalized)]
        else:
            found = self.model.pieces(normalized)
        return self._finish(found)

    def _finish(self, found: list[tuple[str, int]]) -> list[tuple[str, int]]:
        """What sentencepiece does to a segmentation: unknown runs merged, or spelled as bytes."""
        merged: list[tuple[str, int]] = []
        for surface, pid in found:
            if pid == self.unk_id and merged and merged[-1][1] == self.unk_id:
                merged[-1] = (merged[-1][0] + surface, pid)
            else:
                merged.append((surface, pid))
        if not self.config.byte_fallback:
            return merged
        out = []
        for surface, pid in merged:
            if pid == self.unk_id:
                out.extend((byte_piece(b), self._byte_ids[b]) for b in surface.encode("utf-8"))
            else:
                out.append((surface, pid))
        return out

    def _matchable_id(self, piece: str) -> int:
        pid = self._ids.get(piece, -1)
        return pid if pid >= 0 and self._entries[pid].kind in ("normal", "user") else self.unk_id

    def _control_id(self, piece: str) -> int:
        pid = self._ids.get(piece)
        if pid is None or self._entries[pid].kind != "control":
            raise ValueError(f"this vocabulary has no control piece {piece!r}")
        return pid

    # ---- encode / decode / trace ------------------------------------------------

    def encode(self, text: str, *, add_bos: bool = False, add_eos: bool = False, enable_sampling: bool = False,
               alpha: float = 0.1, nbest_size: int = -1, seed: int | random.Random | None = None) -> list[int]:
        """IDs of ``text`` (sentencepiece's ``encode(text, out_type=int)``).

        ``add_bos``/``add_eos`` put the ``<s>``/``</s>`` control IDs around the
        result: control symbols only ever come from the caller, never from
        text (``"<s>"`` typed in the input is three ordinary characters).

        ``enable_sampling`` draws a segmentation instead of taking the best one
        (subword regularization, with sentencepiece's ``alpha`` and ``nbest_size``:
        `toklab.sentencepiece.sampling`); ``seed`` is an int or a `random.Random`.
        """
        return self._post_process([pid for _, pid in self._pieces(text, enable_sampling, alpha, nbest_size, seed)],
                                  add_bos, add_eos)

    def _pieces(self, text: str, enable_sampling: bool, alpha: float, nbest_size: int, seed) -> list[tuple[str, int]]:
        normalized = self.normalize(text)
        if not enable_sampling:
            return self.segment(normalized)
        sampling.check_sampling(nbest_size, alpha)
        return self._finish(sampling.sample_segment(self, normalized, nbest_size, alpha, sampling.rng_of(seed)))

    def sample_encode_as_ids(self, text: str, nbest_size: int = -1, alpha: float = 0.1,
                             seed: int | random.Random | None = None) -> list[int]:
        """sentencepiece's ``SampleEncodeAsIds``: `encode` with ``enable_sampling=True``."""
        return self.encode(text, enable_sampling=True, alpha=alpha, nbest_size=nbest_size, seed=seed)

    def sample_encode_as_pieces(self, text: str, nbest_size: int = -1, alpha: float = 0.1,
                                seed: int | random.Random | None = None) -> list[str]:
        """sentencepiece's ``SampleEncodeAsPieces``: `encode_as_pieces` with ``enable_sampling=True``."""
        return self.encode_as_pieces(text, enable_sampling=True, alpha=alpha, nbest_size=nbest_size, seed=seed)

    def nbest_encode_with_scores(self, text: str, nbest_size: int) -> list[tuple[list[int], float]]:
        """The ``nbest_size`` best segmentations' IDs with their scores, best first (Unigram models only)."""
        found = sampling.nbest_segments(self, self.normalize(text), nbest_size)
        return [([pid for _, pid in self._finish(seg)], score) for seg, score in found]

    def nbest_encode(self, text: str, nbest_size: int, *, add_bos: bool = False, add_eos: bool = False) -> list[list[int]]:
        """sentencepiece's ``nbest_encode_as_ids``: the IDs of the ``nbest_size`` best segmentations, in its order.

        ValueError for a BPE model, which has no n-best (in sentencepiece either).
        """
        return [self._post_process(ids, add_bos, add_eos) for ids, _ in self.nbest_encode_with_scores(text, nbest_size)]

    nbest_encode_as_ids = nbest_encode

    def nbest_encode_as_pieces(self, text: str, nbest_size: int) -> list[list[str]]:
        """The pieces of the ``nbest_size`` best segmentations (sentencepiece's ``nbest_encode_as_pieces``)."""
        found = sampling.nbest_segments(self, self.normalize(text), nbest_size)
        return [[surface for surface, _ in self._finish(seg)] for seg, _ in found]

    def _post_process(self, ids: list[int], add_bos: bool, add_eos: bool) -> list[int]:
        head = [self._control_id("<s>")] if add_bos else []
        tail = [self._control_id("</s>")] if add_eos else []
        return head + ids + tail

    def encode_as_pieces(self, text: str, *, enable_sampling: bool = False, alpha: float = 0.1, nbest_size: int = -1,
                         seed: int | random.Random | None = None) -> list[str]:
        """Piece strings of ``text`` (``out_type=str``); an unknown run shows its own text. Sampling as in `encode`."""
        return [surface for surface, _ in self._pieces(text, enable_sampling, alpha, nbest_size, seed)]

    def decode(self, ids: Iterable[int]) -> str:
        """Text of ``ids``, following sentencepiece's decoder (`toklab.decoders.SentencePieceDecoder`).

        An unknown ID raises ValueError naming it and the valid range.
        """
        return self.decoder.decode([self.id_to_token(i) for i in check_ids(ids)])

    def decode_pieces(self, pieces: Iterable[str]) -> str:
        """`decode` for piece strings; KeyError for a string that is not a piece."""
        return self.decode([self.token_to_id(p) for p in pieces])

    def encode_with_offsets(self, text: str, *, add_bos: bool = False, add_eos: bool = False):
        """IDs and each piece's span in ``text`` (code points and UTF-8 bytes), as sentencepiece
        reports them (`toklab.sentencepiece.alignment.sentencepiece_offsets`)."""
        from .alignment import sentencepiece_offsets

        return sentencepiece_offsets(self, text, add_bos=add_bos, add_eos=add_eos)

    def fingerprint(self) -> str:
        """SHA-256 of the pieces, the settings and the library versions (`toklab.pipeline.versioning`)."""
        from ..pipeline import versioning

        return versioning.fingerprint(self)

    def trace(self, text: str, *, add_bos: bool = False, add_eos: bool = False) -> list[Stage]:
        """Every stage's output for ``text``, as `toklab.pipeline.trace` reports it.

        No specials are cut out of text (control symbols never come from text)
        and there is no pre-tokenization at encode time: the normalized text is
        the single chunk the model segments.
        """
        normalized = self.normalize(text)
        found = self.segment(normalized) if normalized else []
        ids = [pid for _, pid in found]
        return [
            Stage("input", text),
            Stage("specials", [(text, False)] if text else []),
            Stage("normalizer", normalized),
            Stage("pre_tokenizer", [normalized] if normalized else []),
            Stage("model", [[self.id_to_token(pid) for _, pid in found]] if normalized else []),
            Stage("ids", ids),
            Stage("post_processor", self._post_process(ids, add_bos, add_eos)),
        ]


def _checked_entries(model_pieces: Sequence[SPPiece | tuple]) -> list[SPPiece]:
    entries: list[SPPiece] = []
    for i, item in enumerate(model_pieces):
        if isinstance(item, tuple) and len(item) == 2:
            item = SPPiece(item[0], item[1], "normal")
        elif isinstance(item, tuple) and len(item) == 3:
            item = SPPiece(*item)
        else:
            raise TypeError(f"entry {i}: expected (piece, score[, kind]), got {item!r}")
        if not isinstance(item.piece, str) or not item.piece:
            raise ValueError(f"entry {i}: a piece must be a non-empty string, got {item.piece!r}")
        if item.kind not in KINDS:
            raise ValueError(f"entry {i} ({item.piece!r}): unknown kind {item.kind!r}; known: {', '.join(KINDS)}")
        entries.append(SPPiece(item.piece, float(item.score), item.kind))
    return entries


def load(path: str | os.PathLike) -> SentencePieceTokenizer:
    """Read a sentencepiece ``.model`` file. Raises ValueError naming the file if it does not parse."""
    blob = Path(path).read_bytes()
    try:
        return SentencePieceTokenizer.from_model_proto(blob)
    except ValueError as exc:
        raise ValueError(f"{path}: not a usable sentencepiece model ({exc})") from None


def load_unigram(model: Any) -> Unigram:
    """A sentencepiece Unigram model as a bare `toklab.unigram.Unigram`: from a ``SentencePieceProcessor``,
    a ``.model`` path, or its bytes.

    Pieces, scores (float32, exactly as stored), IDs and piece types are
    read from the serialized model, so user-defined pieces are recognised
    (the Python API cannot tell them from ordinary ones), and path scores are
    added in float32 (``float32=True``), as sentencepiece's encoder adds them, so
    that exact ties break the same way. Raises ValueError for a BPE/char/word model.
    """
    pieces, config = parse_model_proto(model_bytes(model))
    if config.model_type != "unigram":
        raise ValueError(f"not a Unigram model (model_type={config.model_type})")
    return Unigram.from_entries([tuple(p) for p in pieces], byte_fallback=config.byte_fallback, float32=True)


def train(source: str | os.PathLike | Iterable[str], vocab_size: int, **options: Any) -> SentencePieceTokenizer:
    """Train a sentencepiece model from raw text, as the ``sentencepiece`` trainer does, and return it as a tokenizer.

    ``toklab.sentencepiece.train(text, 8000, model_type="bpe", byte_fallback=True)``
    normalizes and escapes the text itself; the options (``model_type``,
    ``normalization``, ``add_dummy_prefix``, ``remove_extra_whitespaces``,
    ``byte_fallback``, ``split_digits``, ``character_coverage``,
    ``control_symbols``, ``user_defined_symbols``, ...) are those of
    `toklab.sentencepiece.trainer.train_model`, which documents each step.
    ``save`` the result and ``sentencepiece.SentencePieceProcessor`` loads it.
    """
    return SentencePieceTokenizer(*trainer.train_model(source, vocab_size, **options))
