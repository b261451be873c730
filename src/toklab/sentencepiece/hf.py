"""A sentencepiece model in Hugging Face ``tokenizers``' terms, both ways.

HF has no sentencepiece component; it rebuilds one from its own parts. This
module says which parts reproduce which sentencepiece step, writes them
(`hf_tokenizer`: `hf_model`, `hf_added_tokens`, and the ``to_hf`` of the
normalizer, `toklab.normalizers.SentencePieceNormalizer`, and of the decoder,
`toklab.decoders.SentencePieceDecoder`; the ``tokenizers`` objects, so
``Tokenizer.to_str()`` writes the JSON) and reads them back from a
``tokenizer.json`` (`sentencepiece_from_hf`), refusing any part it cannot map
exactly, by name.

The normalizer carries the whole front end, as sentencepiece's does: the
compiled table (``Precompiled``), then with ``remove_extra_whitespaces`` two
``Replace`` steps (spaces at either end, runs of spaces), the dummy prefix
(``Prepend``), the escaping (``Replace`` of ``" "`` by ``▁``) and, with
``remove_extra_whitespaces``, a trailing-``▁`` strip. No pre-tokenizer: the
model sees the normalized text whole. The model is ``Unigram`` or ``BPE``
with its byte fallback; sentencepiece's BPE has no merge list, so the merges
are every pair of pieces that concatenates to a piece, ranked by that piece's
score. The decoder is ``Metaspace`` (``▁`` to space, the first one dropped),
``ByteFallback``, and a ``Replace`` printing the unknown piece as
sentencepiece does. Control pieces become special added tokens; for Unigram,
whose HF lattice would otherwise match their spelling in text, the unknown and
byte pieces become (non-special) added tokens too.

Where the two libraries still differ, measured (``tests/formats``):

- HF cuts added tokens out of the text before normalizing; sentencepiece never
  makes a control piece from text. Text that contains ``<s>`` (or, for Unigram,
  ``<unk>``, ``<0x41>``) therefore encodes differently: HF encodes the parts
  between them separately, as `toklab.Pipeline` does with special tokens.
- Unigram: HF adds path scores in float64, sentencepiece in float32; where two
  segmentations tie exactly (``[--, -]`` and ``[-, --]``), rounding decides in
  sentencepiece and the earliest start in HF. And HF reads each score from the
  JSON with serde_json's fast float parser, which misses the nearest double by
  one unit in the last place for about one score in eight (`hf_float`
  reproduces it, measured on 3,000 random float32 scores); in an exact tie that
  unit decides too.
- ``Precompiled`` applies the table per grapheme cluster (it drops the marks
  after a mapped character, ``"ᶺ\\u036f"`` -> ``"ʌ"``), sentencepiece by
  longest match.
- Without ``remove_extra_whitespaces``, a text that normalizes to nothing (only
  deleted control characters) gets the dummy prefix ``▁`` in sentencepiece and
  nothing in HF.

A model read back from HF (``engine="tokenizers"`` in `SPConfig`) follows HF on
the last three points, so `toklab.formats.hf_json.from_hf_json` reproduces HF's IDs.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

from ..base.pieces import SPACE, byte_piece
from ..normalizers.spm import HF_COLLAPSE, HF_STRIP_ENDS, HF_TRAILING
from .model_file import SPConfig, SPPiece

__all__ = [
    "flat_steps",
    "hf_float",
    "JsonFloat",
    "hf_model",
    "hf_merges",
    "hf_tokenizer",
    "hf_added_tokens",
    "sentencepiece_from_hf",
    "hf_pieces",
]

_POW10 = [float(f"1e{k}") for k in range(309)]


def hf_float(text: str) -> float:
    """A JSON number as HF ``tokenizers`` reads it (serde_json without ``float_roundtrip``).

    The digits are gathered into a 64-bit integer (digits that no longer fit are
    dropped, raising the exponent), converted to a double, then multiplied or
    divided once by a power of ten: two roundings, so a 16- or 17-digit number
    can land one unit away from the nearest double. ``hf_float("-16.888437271118164")``
    is ``-16.888437271118168``.
    """
    negative = text.startswith("-")
    mantissa, _, exponent = text.lstrip("-").lower().partition("e")
    whole, _, fraction = mantissa.partition(".")
    exp = (int(exponent) if exponent else 0) - len(fraction)
    significand = 0
    for ch in whole + fraction:
        digit = ord(ch) - 48
        if significand > (2**64 - 1 - digit) // 10:
            exp += 1
        else:
            significand = significand * 10 + digit
    value = float(significand)
    value = value * _POW10[exp] if exp >= 0 else value / _POW10[-exp] if -exp < len(_POW10) else 0.0
    return -value if negative else value


class JsonFloat(float):
    """A float parsed from JSON that remembers its digits (``json.loads(text, parse_float=JsonFloat)``)."""

    def __new__(cls, text: str) -> "JsonFloat":
        self = super().__new__(cls, text)
        self.text = text
        return self


def _hf_score(score: Any) -> float:
    return hf_float(getattr(score, "text", None) or repr(float(score)))


def _matchable(pieces: Sequence[SPPiece]) -> None:
    odd = [p for p in pieces if p.kind in ("user", "unused")]
    if odd:
        raise ValueError(
            f"{odd[0].kind} piece {odd[0].piece!r}: HF tokenizers has no equivalent (it matches every vocabulary "
            "entry as an ordinary piece), so this model cannot be written as a tokenizer.json"
        )


def hf_merges(pieces: Sequence[SPPiece]) -> list[tuple[str, str]]:
    """Every pair of ordinary pieces whose concatenation is an ordinary piece, best result first.

    sentencepiece merges the adjacent pair whose concatenation scores highest;
    HF merges by rank, so pairs are ranked by their result's score (then ID),
    and the pairs that make the same piece by the IDs of their parts, as HF's
    own converter orders them.
    """
    ids = {p.piece: i for i, p in enumerate(pieces) if p.kind == "normal"}
    score = {p.piece: p.score for p in pieces if p.kind == "normal"}
    merges = []
    for piece in ids:
        for k in range(1, len(piece)):
            left, right = piece[:k], piece[k:]
            if left in ids and right in ids:
                merges.append((-score[piece], ids[piece], ids[left], ids[right], left, right))
    merges.sort()
    return [(m[4], m[5]) for m in merges]


def hf_model(pieces: Sequence[SPPiece], config: SPConfig):
    """``models.Unigram`` or ``models.BPE`` with the model's pieces, IDs and byte fallback."""
    from tokenizers import models

    _matchable(pieces)
    unk = next(i for i, p in enumerate(pieces) if p.kind == "unknown")
    if config.model_type == "unigram":
        normal = [p.score for p in pieces if p.kind == "normal"]
        low = min((p for p in pieces if p.kind != "normal"), key=lambda p: p.score, default=None)
        if normal and low is not None and low.score < min(normal):
            raise ValueError(
                f"{low.kind} piece {low.piece!r} scores {low.score}, below every ordinary piece: HF's Unigram would "
                "take it as its minimum score and price unknown characters differently"
            )
        return models.Unigram([(p.piece, float(p.score)) for p in pieces], unk, config.byte_fallback)
    _chars_are_pieces({p.piece for p in pieces if p.kind == "normal"})
    vocab = {p.piece: i for i, p in enumerate(pieces)}
    return models.BPE(vocab, hf_merges(pieces), unk_token=pieces[unk].piece, fuse_unk=True,
                      byte_fallback=config.byte_fallback)


def _chars_are_pieces(normal: set[str]) -> None:
    """sentencepiece's BPE starts from characters and merges any two symbols that make a piece; HF merges
    only listed pairs of vocabulary entries. They agree when every character of a piece is a piece."""
    for piece in normal:
        missing = next((ch for ch in piece if ch not in normal), None)
        if missing is not None:
            raise ValueError(f"piece {piece!r} holds {missing!r}, which is not a piece: sentencepiece's BPE can still "
                             "merge it, HF's cannot")


def hf_tokenizer(pieces: Sequence[SPPiece], config: SPConfig, normalizer, decoder):
    """A sentencepiece model as a whole ``tokenizers.Tokenizer``.

    `hf_model`, the normalizer's and decoder's ``to_hf()``, and `hf_added_tokens`
    (special for control pieces)."""
    from tokenizers import Tokenizer

    hf = Tokenizer(hf_model(pieces, config))
    hf.normalizer = normalizer.to_hf()
    hf.decoder = decoder.to_hf()
    added = hf_added_tokens(pieces, config)
    hf.add_special_tokens([t for t in added if t.special])
    hf.add_tokens([t for t in added if not t.special])
    return hf


def hf_added_tokens(pieces: Sequence[SPPiece], config: SPConfig) -> list:
    """``AddedToken``s for the pieces HF must not match as text: control (special), and for Unigram unknown and bytes."""
    from tokenizers import AddedToken

    reserved = {"control"} | ({"unknown", "byte"} if config.model_type == "unigram" else set())
    return [AddedToken(p.piece, special=p.kind == "control", normalized=False) for p in pieces if p.kind in reserved]


# ----------------------------------------------------------------------------- reading tokenizer.json


class Unsupported(ValueError):
    """A ``tokenizer.json`` component that toklab does not reproduce exactly (its message names it)."""


def flat_steps(component: Any, key: str) -> list[dict]:
    """The steps of a tokenizer.json component, ``Sequence``s flattened (``key``: e.g. ``"normalizers"``)."""
    if component is None:
        return []
    if component.get("type") == "Sequence":
        return [step for sub in component[key] for step in flat_steps(sub, key)]
    return [component]


def _pattern(step: dict) -> tuple[str, str]:
    kind, value = next(iter(step["pattern"].items()))
    return kind, value


def _describe(step: dict) -> str:
    fields = {k: v for k, v in step.items() if k != "type" and k != "precompiled_charsmap"}
    return f"{step.get('type')}({', '.join(f'{k}={v!r}' for k, v in fields.items())})"


def _read_normalizer(component: Any) -> dict[str, Any]:
    """SPConfig fields from the normalizer chain toklab writes (or Llama's ``Prepend`` + ``Replace``)."""
    steps = flat_steps(component, "normalizers")
    found: dict[str, Any] = {"charsmap": None, "remove_extra_whitespaces": False, "add_dummy_prefix": False,
                             "escape_whitespaces": False}
    expected = ["Precompiled", "strip", "collapse", "Prepend", "escape", "trailing"]
    position = 0
    for step in steps:
        kind = step.get("type")
        if kind == "Precompiled":
            name = "Precompiled"
        elif kind == "Prepend" and step.get("prepend") in (SPACE, " "):
            name = "Prepend"
        elif kind == "Replace" and _pattern(step) == ("Regex", HF_STRIP_ENDS) and step["content"] == "":
            name = "strip"
        elif kind == "Replace" and _pattern(step) == ("Regex", HF_COLLAPSE) and step["content"] == " ":
            name = "collapse"
        elif kind == "Replace" and _pattern(step) == ("String", " ") and step["content"] == SPACE:
            name = "escape"
        elif kind == "Replace" and _pattern(step) == ("Regex", HF_TRAILING) and step["content"] == "":
            name = "trailing"
        else:
            raise Unsupported(f"normalizer {_describe(step)} is not implemented (toklab reads sentencepiece's "
                              "front end as Precompiled, whitespace Replace steps, Prepend('▁') and Replace(' ', '▁'))")
        if name not in expected[position:]:
            raise Unsupported(f"normalizer step {_describe(step)} comes out of sentencepiece's order")
        position = expected.index(name) + 1
        if name == "Precompiled":
            found["charsmap"] = base64.b64decode(step["precompiled_charsmap"])
        elif name == "Prepend":
            found["add_dummy_prefix"] = True
            found["prefix"] = step["prepend"]
        elif name == "escape":
            found["escape_whitespaces"] = True
        else:
            found.setdefault("whitespace_steps", set()).add(name)
    spaces = found.pop("whitespace_steps", set())
    if spaces:
        needed = {"strip", "collapse"} | ({"trailing"} if found["escape_whitespaces"] else set())
        if spaces != needed:
            raise Unsupported(f"normalizer: the whitespace steps {sorted(spaces)} are not sentencepiece's "
                              f"remove_extra_whitespaces (which needs {sorted(needed)})")
        found["remove_extra_whitespaces"] = True
    prefix = found.pop("prefix", None)
    if prefix is not None and prefix != (SPACE if found["escape_whitespaces"] else " "):
        raise Unsupported(f"normalizer Prepend({prefix!r}) does not match the escaping")
    return found


def _read_decoder(component: Any, fields: dict[str, Any], unk: str) -> str:
    """Check the decoder against the normalizer; return the unknown piece's surface."""
    steps = flat_steps(component, "decoders")
    names = [s.get("type") for s in steps]
    strips = False
    surface = unk
    if names and names[0] == "Metaspace":
        ms = steps[0]
        if ms.get("replacement") != SPACE or ms.get("prepend_scheme") not in ("always", "first", "never"):
            raise Unsupported(f"decoder {_describe(ms)} is not implemented")
        strips = ms.get("prepend_scheme") != "never"
        rest = steps[1:]
    elif names[:1] == ["Replace"] and _pattern(steps[0]) == ("String", SPACE) and steps[0]["content"] == " ":
        rest = steps[1:]
    else:
        raise Unsupported(f"decoder {_describe(steps[0]) if steps else 'None'} is not implemented (toklab reads "
                          "Metaspace or Replace('▁', ' ') followed by ByteFallback, Fuse, Strip)")
    for step in rest:
        kind = step.get("type")
        if kind in ("ByteFallback", "Fuse"):
            continue
        if kind == "Strip" and (step.get("content"), step.get("start"), step.get("stop")) == (" ", 1, 0):
            strips = True
        elif kind == "Replace" and _pattern(step) == ("String", unk) and (
                step is rest[-1] or [t.get("type") for t in rest[rest.index(step) + 1:]] == ["Fuse", "Strip"]):
            surface = step["content"]
        else:
            raise Unsupported(f"decoder {_describe(step)} is not implemented")
    if strips != (fields["add_dummy_prefix"] or fields["remove_extra_whitespaces"]):
        raise Unsupported("the decoder " + ("drops" if strips else "keeps") + " the first space but the normalizer "
                          + ("adds no dummy prefix" if strips else "adds one") + ": sentencepiece's decoder cannot do that")
    return surface


def _read_pieces(model: dict, added: Mapping[str, dict]) -> tuple[list[SPPiece], str]:
    """Pieces in ID order (kinds from the added tokens) and the model type."""
    kind = model.get("type")
    if kind == "Unigram":
        vocab = [(str(piece), _hf_score(score)) for piece, score in model["vocab"]]
        unk_id = model.get("unk_id")
        if unk_id is None:
            raise Unsupported("Unigram model without unk_id is not implemented (sentencepiece always has one)")
        pieces = []
        for i, (piece, score) in enumerate(vocab):
            token = added.get(piece)
            if i == unk_id:
                pieces.append(SPPiece(piece, score, "unknown"))
            elif token is not None:
                pieces.append(SPPiece(piece, score, "byte" if _is_byte(piece) else "control"))
            elif model.get("byte_fallback") and _is_byte(piece):
                raise Unsupported(f"Unigram byte piece {piece!r} is not an added token: HF would match its "
                                  "spelling in text, sentencepiece's byte pieces never match")
            else:
                pieces.append(SPPiece(piece, score, "normal"))
        if pieces[unk_id].piece not in added:
            raise Unsupported(f"the unknown piece {pieces[unk_id].piece!r} is not an added token: HF's Unigram "
                              "would match its spelling in text")
        normal = [p.score for p in pieces if p.kind == "normal"]
        if normal and min(p.score for p in pieces) < min(normal):
            raise Unsupported("a reserved piece scores below every ordinary piece: HF's Unigram prices unknown "
                              "characters from it, sentencepiece's does not")
        return pieces, "unigram"
    if kind == "BPE":
        return _read_bpe(model, added), "bpe"
    raise Unsupported(f"model {kind} is not implemented for a sentencepiece-style tokenizer (Unigram or BPE)")


def _is_byte(piece: str) -> bool:
    return len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">") and \
        all(c in "0123456789ABCDEF" for c in piece[3:5])


def _read_bpe(model: dict, added: Mapping[str, dict]) -> list[SPPiece]:
    for option, ok in (("dropout", (None, 0, 0.0)), ("continuing_subword_prefix", (None, "")),
                       ("end_of_word_suffix", (None, "")), ("ignore_merges", (False,))):
        if model.get(option) not in ok:
            raise Unsupported(f"BPE option {option}={model.get(option)!r} is not implemented for sentencepiece's BPE")
    unk = model.get("unk_token")
    if unk is None or not model.get("fuse_unk", False):
        raise Unsupported("BPE without unk_token or without fuse_unk: sentencepiece fuses unknown characters into one "
                          "<unk>")
    vocab = {str(p): int(i) for p, i in model["vocab"].items()}
    if sorted(vocab.values()) != list(range(len(vocab))):
        raise Unsupported("BPE vocabulary IDs are not 0..n-1 without gaps")
    by_id = sorted(vocab, key=vocab.__getitem__)
    byte_fallback = bool(model.get("byte_fallback"))
    kinds = {}
    for piece in by_id:
        kinds[piece] = ("unknown" if piece == unk else "byte" if byte_fallback and _is_byte(piece)
                        else "control" if piece in added else "normal")
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ", 1)) for m in model["merges"]]
    # The merges must be sentencepiece's implied ones: every pair of ordinary pieces that makes an ordinary piece,
    # the pairs making one piece next to each other. Their order gives the scores.
    rank: dict[str, int] = {}
    last = None
    for left, right in merges:
        piece = left + right
        if any(kinds.get(p) != "normal" for p in (left, right, piece)):
            raise Unsupported(f"BPE merge ({left!r}, {right!r}) involves a piece that is not an ordinary piece")
        if piece != last:
            if piece in rank:
                raise Unsupported(f"BPE merges making {piece!r} are not next to each other: HF ranks pairs, "
                                  "sentencepiece ranks the piece they make")
            rank[piece] = len(rank)
            last = piece
    implied = {(p[:k], p[k:]) for p in kinds if kinds[p] == "normal" for k in range(1, len(p))
               if kinds.get(p[:k]) == "normal" and kinds.get(p[k:]) == "normal"}
    missing = implied - set(merges)
    if missing:
        left, right = min(missing)
        raise Unsupported(f"BPE merges lack ({left!r}, {right!r}): sentencepiece merges any two pieces that make a "
                          "piece, HF only the listed pairs")
    try:
        _chars_are_pieces({p for p in kinds if kinds[p] == "normal"})
    except ValueError as exc:
        raise Unsupported(f"BPE vocabulary: {exc}") from None
    floor = len(rank)
    return [SPPiece(p, -float(rank[p]) if p in rank else -float(floor + vocab[p]) if kinds[p] == "normal" else 0.0,
                    kinds[p]) for p in by_id]


def hf_pieces(document: Mapping[str, Any]) -> tuple[list[SPPiece], str]:
    """The model of a sentencepiece-style ``tokenizer.json`` alone: its pieces in ID order (kinds from the added
    tokens) and ``"unigram"`` or ``"bpe"``; `Unsupported` for what sentencepiece's models cannot be."""
    added = {t["content"]: t for t in document.get("added_tokens", [])}
    return _read_pieces(document["model"], added)


def sentencepiece_from_hf(document: Mapping[str, Any]) -> tuple[list[SPPiece], SPConfig]:
    """The pieces and settings of a sentencepiece-style ``tokenizer.json`` (``engine="tokenizers"``).

    Added tokens are not handled here: the caller registers them around the
    model (they are cut out of text before the normalizer, as in HF).
    """
    added = {t["content"]: t for t in document.get("added_tokens", [])}
    fields = _read_normalizer(document.get("normalizer"))
    pre = flat_steps(document.get("pre_tokenizer"), "pretokenizers")
    for step in pre:
        if step.get("type") == "Metaspace" and step.get("replacement") == SPACE and \
                step.get("prepend_scheme") == "never" and not step.get("split") and not fields["escape_whitespaces"]:
            fields["escape_whitespaces"] = True
        else:
            raise Unsupported(
                f"pre-tokenizer {_describe(step)} is not implemented: Metaspace adds its prefix only where the text "
                "does not start with ▁ (with prepend_scheme 'first', only before the first segment), which "
                "sentencepiece's dummy prefix does not; toklab writes the prefix as a Prepend normalizer"
            )
    if not fields["escape_whitespaces"] and (fields["add_dummy_prefix"] or fields["remove_extra_whitespaces"]):
        raise Unsupported("a dummy prefix or whitespace rules without escaping spaces to ▁ is not sentencepiece")
    pieces, model_type = _read_pieces(document["model"], added)
    unk = next(p.piece for p in pieces if p.kind == "unknown")
    surface = _read_decoder(document.get("decoder"), fields, unk)
    byte_fallback = bool(document["model"].get("byte_fallback"))
    if byte_fallback and any(byte_piece(b) not in {p.piece for p in pieces} for b in range(256)):
        raise Unsupported("byte_fallback without all 256 byte pieces <0x00>..<0xFF>")
    config = SPConfig(
        model_type=model_type, normalization="identity" if fields["charsmap"] is None else "precompiled",
        add_dummy_prefix=fields["add_dummy_prefix"], remove_extra_whitespaces=fields["remove_extra_whitespaces"],
        escape_whitespaces=fields["escape_whitespaces"], byte_fallback=byte_fallback, unk_surface=surface,
        charsmap=fields["charsmap"], engine="tokenizers",
    )
    return pieces, config
