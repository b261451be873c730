"""The sentencepiece ``.model`` file: a serialized ``ModelProto``, read and written without the protobuf library.

The format belongs to none of its readers, so it has a module of its own (as
sentencepiece keeps ``sentencepiece_model.proto`` apart from its processor and
trainer): `toklab.sentencepiece.SentencePieceTokenizer` and
`toklab.sentencepiece.load_unigram` both read models with `parse_model_proto`, and
`serialize_model_proto` writes one that the ``sentencepiece`` library loads. A model
holds the vocabulary in ID order, each entry a piece, a float32 score and a kind
(`toklab.base.pieces.KINDS`), and the front-end settings this module gathers in
`SPConfig`, including the compiled normalization table.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..base.pieces import KINDS, UNK_SURFACE, byte_of_piece, byte_piece
from ..normalizers.nmt import NORMALIZATIONS

__all__ = [
    "ENGINES",
    "SPPiece",
    "SPConfig",
    "model_bytes",
    "read_varint",
    "iter_fields",
    "parse_model_proto",
    "encode_varint",
    "encode_field",
    "serialize_model_proto",
]

#: The libraries whose arithmetic a model can reproduce (see `SPConfig`).
ENGINES = ("sentencepiece", "tokenizers")


class SPPiece(NamedTuple):
    """One vocabulary entry: its string, score, and kind (one of ``KINDS``)."""

    piece: str
    score: float
    kind: str = "normal"


@dataclass(frozen=True)
class SPConfig:
    """The front-end settings of a sentencepiece model (its ``NormalizerSpec`` and trainer flags).

    ``normalization`` is one of `NORMALIZATIONS`. ``charsmap`` is the model's
    compiled normalization table; when present it is used instead of the
    named rule (that is what sentencepiece does, and what makes the output
    identical to sentencepiece's). `SentencePieceTokenizer.from_sentencepiece`
    and `load` fill it in from the model; leave it ``None`` to run the rule.

    ``split_by_whitespace`` and ``split_digits`` are trainer flags: they are
    recorded because they explain the vocabulary (`split_words`), but
    encoding ignores them, as sentencepiece's encoder does.

    ``engine`` names the library whose arithmetic this model reproduces where
    the two disagree (both measured): ``"sentencepiece"`` adds Unigram path
    scores in float32 and applies the compiled table by longest match;
    ``"tokenizers"`` (Hugging Face, what `toklab.formats.hf_json.from_hf_json` sets)
    adds them in float64, so exact ties go to the earliest start, and applies
    the table per grapheme cluster as its ``Precompiled`` normalizer does.
    Model files are written for sentencepiece, so a ``"tokenizers"`` model
    whose output depends on the difference (Unigram, or a table) is refused by
    `serialize_model_proto` until you convert it explicitly.
    """

    model_type: str = "unigram"
    normalization: str = "nmt_nfkc"
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True
    byte_fallback: bool = False
    split_digits: bool = False
    split_by_whitespace: bool = True
    unk_surface: str = UNK_SURFACE
    charsmap: bytes | None = field(default=None, repr=False)
    engine: str = "sentencepiece"

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {self.engine!r}")
        if self.model_type not in ("unigram", "bpe"):
            raise ValueError(f"model_type must be 'unigram' or 'bpe', got {self.model_type!r}")
        if self.normalization not in NORMALIZATIONS and self.charsmap is None:
            raise ValueError(
                f"normalization {self.normalization!r} is not implemented by rule "
                f"(known: {', '.join(NORMALIZATIONS)}); pass the model's compiled charsmap"
            )


def model_bytes(model: Any) -> bytes:
    """The serialized model of a ``SentencePieceProcessor``, a ``.model`` path, or bytes as they are."""
    if isinstance(model, (bytes, bytearray)):
        return bytes(model)
    if isinstance(model, (str, os.PathLike)):
        with open(model, "rb") as fh:
            return fh.read()
    if hasattr(model, "serialized_model_proto"):
        return model.serialized_model_proto()
    raise TypeError(f"expected a SentencePieceProcessor, a path or bytes, got {type(model).__name__}")


_TYPE_NAMES = {1: "normal", 2: "unknown", 3: "control", 4: "user", 5: "unused", 6: "byte"}
_MODEL_TYPES = {1: "unigram", 2: "bpe", 3: "word", 4: "char"}


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def iter_fields(buf: bytes) -> Iterator[tuple[int, int, Any]]:
    """``(field number, wire type, value)`` of one protobuf message (wire format only)."""
    pos = 0
    while pos < len(buf):
        key, pos = read_varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = read_varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos : pos + 8], pos + 8
        elif wire == 2:
            length, pos = read_varint(buf, pos)
            value, pos = buf[pos : pos + length], pos + length
        elif wire == 5:
            value, pos = buf[pos : pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        if pos > len(buf) or number == 0:
            raise ValueError("truncated protobuf message")
        yield number, wire, value


def parse_model_proto(blob: bytes) -> tuple[list[SPPiece], SPConfig]:
    """Pieces and front-end settings of a serialized sentencepiece ``ModelProto``.

    Field numbers from ``sentencepiece_model.proto``: ModelProto.pieces = 1
    (piece = 1, score = 2, type = 3), trainer_spec = 2 (model_type = 3,
    split_by_whitespace = 22, treat_whitespace_as_suffix = 24, split_digits = 25,
    byte_fallback = 35, unk_surface = 44), normalizer_spec = 3 (name = 1,
    precompiled_charsmap = 2, add_dummy_prefix = 3, remove_extra_whitespaces = 4,
    escape_whitespaces = 5), denormalizer_spec = 5. Absent fields take the
    proto's defaults. Raises ValueError when the bytes are not such a model.
    """
    pieces: list[SPPiece] = []
    trainer: dict[int, Any] | None = None
    norm: dict[int, Any] | None = None
    has_denormalizer = False
    try:
        for number, wire, value in iter_fields(blob):
            if number == 1 and wire == 2:
                piece, score, kind = None, 0.0, 1
                for n2, w2, v2 in iter_fields(value):
                    if n2 == 1 and w2 == 2:
                        piece = v2.decode("utf-8")
                    elif n2 == 2 and w2 == 5:
                        score = struct.unpack("<f", v2)[0]
                    elif n2 == 3 and w2 == 0:
                        kind = v2
                if piece is None or kind not in _TYPE_NAMES:
                    raise ValueError(f"piece {len(pieces)} has no string or an unknown type {kind}")
                pieces.append(SPPiece(piece, score, _TYPE_NAMES[kind]))
            elif number == 2 and wire == 2:
                trainer = {n2: v2 for n2, _w, v2 in iter_fields(value)}
            elif number == 3 and wire == 2:
                norm = {n2: v2 for n2, _w, v2 in iter_fields(value)}
            elif number == 5 and wire == 2:
                spec = {n2: v2 for n2, _w, v2 in iter_fields(value)}
                has_denormalizer = bool(spec.get(2) or spec.get(6))
    except (IndexError, UnicodeDecodeError, struct.error) as exc:
        raise ValueError(f"not a sentencepiece model: {exc}") from None
    if not pieces:
        raise ValueError("not a sentencepiece model: no pieces found")
    # sentencepiece always writes both specs after the pieces; a file cut
    # short at a field boundary would otherwise parse as a smaller model.
    if trainer is None or norm is None:
        raise ValueError("incomplete sentencepiece model: no trainer or normalizer spec (truncated file?)")
    if has_denormalizer:
        raise ValueError("models with a denormalization rule are not supported")
    model_type = _MODEL_TYPES.get(trainer.get(3, 1), str(trainer.get(3)))
    if model_type not in ("unigram", "bpe"):
        raise ValueError(f"model_type {model_type!r} is not supported (only unigram and bpe)")
    if trainer.get(24, 0):
        raise ValueError("treat_whitespace_as_suffix models are not supported")
    name = norm.get(1, b"nmt_nfkc").decode("utf-8")
    charsmap = norm.get(2) or None
    if name not in NORMALIZATIONS and charsmap is None:
        raise ValueError(f"normalization {name!r} has no compiled table in the model")
    config = SPConfig(
        model_type=model_type,
        normalization=name,
        add_dummy_prefix=bool(norm.get(3, 1)),
        remove_extra_whitespaces=bool(norm.get(4, 1)),
        escape_whitespaces=bool(norm.get(5, 1)),
        byte_fallback=bool(trainer.get(35, 0)),
        split_digits=bool(trainer.get(25, 0)),
        split_by_whitespace=bool(trainer.get(22, 1)),
        unk_surface=trainer[44].decode("utf-8") if 44 in trainer else UNK_SURFACE,
        charsmap=charsmap,
    )
    return pieces, config


# --------------------------------------------------------------------------- writing

_TYPE_NUMBERS = {name: number for number, name in _TYPE_NAMES.items()}
_MODEL_NUMBERS = {"unigram": 1, "bpe": 2}


def encode_varint(value: int) -> bytes:
    """A protobuf varint; a negative int32/int64 takes ten bytes (two's complement), as protobuf writes it."""
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def encode_field(number: int, value: int | float | bool | str | bytes) -> bytes:
    """One protobuf field: an int or bool as a varint, a float as fixed32, str/bytes length-delimited."""
    if isinstance(value, (bool, int)):
        return encode_varint(number << 3) + encode_varint(int(value))
    if isinstance(value, float):
        return encode_varint(number << 3 | 5) + struct.pack("<f", value)
    data = value.encode("utf-8") if isinstance(value, str) else bytes(value)
    return encode_varint(number << 3 | 2) + encode_varint(len(data)) + data


def serialize_model_proto(pieces: Sequence[SPPiece], config: SPConfig) -> bytes:
    """The bytes of a ``.model`` file holding ``pieces`` (in ID order) and ``config``.

    The inverse of `parse_model_proto`: ``parse_model_proto(serialize_model_proto(p, c)) == (p, c)``
    for float32 scores. The file holds what sentencepiece's encoder and
    decoder read: every piece with its score and type; in the trainer spec the
    model type, ``byte_fallback``, ``split_by_whitespace``, ``split_digits``,
    ``unk_surface``, the vocabulary size and the unknown piece; in the
    normalizer spec the rule's name, the compiled table and the three
    whitespace flags. Other trainer options (the corpus, coverage, seeds) are
    not part of a model's behaviour and are left at the proto's defaults.

    Raises ValueError for what sentencepiece would refuse to load or would
    run differently: no unknown piece or more than one, byte pieces without
    ``byte_fallback`` (or ``byte_fallback`` without all 256), a byte piece
    not spelled ``<0xXX>``, an empty or repeated piece, and a named
    normalization other than ``identity`` without its compiled table
    (sentencepiece runs tables only; `toklab.normalizers.tables.compile_rule`
    builds one).
    """
    if not isinstance(config, SPConfig):
        raise TypeError(f"config must be an SPConfig, got {type(config).__name__}")
    seen: dict[str, int] = {}
    kinds = []
    body = bytearray()
    for i, entry in enumerate(pieces):
        piece, score, kind = entry
        if not isinstance(piece, str) or not piece:
            raise ValueError(f"piece {i}: a piece must be a non-empty string, got {piece!r}")
        if piece in seen:
            raise ValueError(f"piece {piece!r} appears twice (IDs {seen[piece]} and {i})")
        if kind not in _TYPE_NUMBERS:
            raise ValueError(f"piece {i} ({piece!r}): unknown kind {kind!r}; known: {', '.join(KINDS)}")
        if kind == "byte" and piece != byte_piece(_byte_value(piece, i)):
            raise ValueError(f"piece {i}: a byte piece must be spelled <0xXX>, got {piece!r}")
        seen[piece] = i
        kinds.append(kind)
        entry_bytes = encode_field(1, piece) + encode_field(2, float(score))
        if kind != "normal":  # NORMAL is the proto default; sentencepiece does not write it either
            entry_bytes += encode_field(3, _TYPE_NUMBERS[kind])
        body += encode_field(1, entry_bytes)
    if kinds.count("unknown") != 1:
        raise ValueError(f"a sentencepiece model needs exactly one unknown piece, found {kinds.count('unknown')}")
    n_bytes = kinds.count("byte")
    if n_bytes and not config.byte_fallback:
        raise ValueError(f"the vocabulary has {n_bytes} byte pieces but byte_fallback is off; sentencepiece refuses such a model")
    if config.byte_fallback and any(byte_piece(b) not in seen or kinds[seen[byte_piece(b)]] != "byte" for b in range(256)):
        raise ValueError("byte_fallback needs the 256 byte pieces <0x00>..<0xFF> (kind 'byte') in the vocabulary")
    if config.engine != "sentencepiece" and (config.model_type == "unigram" or config.charsmap):
        raise ValueError(
            f"this model reproduces {config.engine}'s arithmetic (engine={config.engine!r}), which sentencepiece does "
            "not share for a Unigram model or a compiled table; convert it explicitly with "
            "dataclasses.replace(config, engine='sentencepiece') (exact ties and table lookups may then change)"
        )
    if config.charsmap is None and config.normalization != "identity":
        raise ValueError(
            f"normalization {config.normalization!r} is applied by rule here, but sentencepiece only runs compiled "
            "tables: compile it (toklab.normalizers.tables.compile_rule) and pass it as SPConfig(charsmap=...)"
        )
    unk = kinds.index("unknown")
    trainer = b"".join([
        encode_field(3, _MODEL_NUMBERS[config.model_type]),
        encode_field(4, len(kinds)),
        encode_field(22, config.split_by_whitespace),
        encode_field(25, config.split_digits),
        encode_field(35, config.byte_fallback),
        encode_field(40, unk),
        encode_field(44, config.unk_surface),
        encode_field(45, pieces[unk][0]),
    ])
    normalizer = b"".join([
        encode_field(1, config.normalization),
        encode_field(2, config.charsmap or b""),
        encode_field(3, config.add_dummy_prefix),
        encode_field(4, config.remove_extra_whitespaces),
        encode_field(5, config.escape_whitespaces),
    ])
    return bytes(body) + encode_field(2, trainer) + encode_field(3, normalizer)


def _byte_value(piece: str, i: int) -> int:
    try:
        return byte_of_piece(piece) if len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">") else -1
    except ValueError:
        return -1
