"""Hugging Face ``tokenizer.json`` into toklab: `from_hf_json` (the other way is each tokenizer's ``to_hf_json``).

A ``tokenizer.json`` is a pipeline written as data: added tokens, normalizer,
pre-tokenizer, model, post-processor, decoder. `from_hf_json` maps the three
families toklab implements onto the matching toklab tokenizer, component by
component, and refuses everything else with `Unsupported`, a ValueError whose
message names the component (``pre-tokenizer Whitespace(...) is not
implemented``): a tokenizer that gives other IDs than the file would be worse
than none.

- **Byte-level BPE** (GPT-2, RoBERTa, Llama 3, Qwen): a ``ByteLevel``
  pre-tokenizer with its own GPT-2 regex, or ``Split`` on a regex or a string (any
  behaviour, inverted or not, `toklab.pre_tokenizers.behaviors`: the text a regex leaves
  between matches is kept as HF keeps it) then ``ByteLevel`` without one; ``BPE`` over GPT-2's byte alphabet; ``ByteLevel``
  decoder. Gives a `toklab.ByteBPE`, or a `toklab.Pipeline` around one when the
  file adds a Unicode normal form, a template or non-special added tokens.
  toklab merges by the rank of the concatenation (tiktoken's rule), HF by the
  rank of the pair; the two agree when each merge is the split that lower ranks
  reach, which training guarantees, and that is checked merge by merge.
- **BERT WordPiece**: ``BertNormalizer``, ``BertPreTokenizer``, ``WordPiece``
  model and decoder. Gives a `toklab.WordPiece`.
- **sentencepiece-style** (``Unigram``, or ``BPE`` with byte fallback, ``▁``):
  read by `toklab.sentencepiece.hf.sentencepiece_from_hf` into a
  `toklab.SentencePieceTokenizer` that follows HF's arithmetic
  (``engine="tokenizers"``), wrapped in a `toklab.Pipeline` through
  `SentencePieceSegmenter` so that added tokens are cut out of text first, as HF does.
  When the spaces are escaped by a ``Metaspace`` pre-tokenizer (any prepend scheme,
  split or not, after ``WhitespaceSplit`` or alone: files from HF's own trainers, T5,
  ALBERT, XLNet, mT5, Llama 2), the pipeline runs HF's stages as HF runs them: the
  normalizer steps (`toklab.normalizers.hf.HFNormalizer`), `toklab.pre_tokenizers.metaspace.Metaspace`,
  the model on each piece, and the decoder steps (`toklab.decoders.DecoderChain`).

Added tokens: ``special`` is carried (a non-special one is kept by
``decode(skip_special_tokens=True)``: `toklab.Pipeline`'s ``non_special_tokens``);
``normalized`` is carried where it makes no difference (no normalizer) and
refused elsewhere, as are ``lstrip``, ``rstrip`` and ``single_word``. HF
recognises added tokens in any text, so the toklab tokenizer reproduces HF's IDs
with ``encode(text, allowed_special="all")``; `toklab.ByteBPE` and
`toklab.Pipeline` raise by default when text holds a special token.
``truncation`` and ``padding`` change HF's output and are refused.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import regex

from ..base.checks import type_name
from ..base.unicode import from_proxy
from ..bpe.encode import recover_split
from ..bpe.files import parse_json
from ..bpe.model import ByteBPE
from ..decoders import DecoderChain
from ..normalizers.hf import HFNormalizer
from ..pipeline.compose import Pipeline
from ..post_processors import TemplateProcessing
from ..pre_tokenizers.metaspace import Metaspace
from ..pre_tokenizers.patterns import PATTERNS, RegexSplit, onig_pattern
from ..sentencepiece.hf import JsonFloat, Unsupported, flat_steps, hf_pieces, sentencepiece_from_hf
from ..sentencepiece.model_file import SPConfig
from ..sentencepiece.hf import hf_model as sentencepiece_hf_model
from ..sentencepiece.tokenizer import SentencePieceTokenizer
from ..wordpiece.model import WordPiece

__all__ = ["Unsupported", "SentencePieceSegmenter", "read_document", "from_hf_json"]

_GPT2_REGEX = PATTERNS["gpt2-2019"]  # what HF's ByteLevel pre-tokenizer runs with use_regex=True
#: HF's Split behaviours as its JSON spells them -> as toklab's RegexSplit (and HF's Python API) spell them.
_BEHAVIORS = {"Isolated": "isolated", "Removed": "removed", "MergedWithPrevious": "merged_with_previous",
              "MergedWithNext": "merged_with_next", "Contiguous": "contiguous"}


class SentencePieceSegmenter:
    """The model stage of a `toklab.SentencePieceTokenizer`, for a `toklab.Pipeline`.

    ``segment(normalized)`` returns the IDs the tokenizer's model gives a
    normalized string; the pipeline around it supplies what HF adds (added
    tokens cut out of the text first, a template), its normalizer and decoder are
    the tokenizer's own. ``tokenizer`` is the whole sentencepiece model (``.save``
    writes it as a ``.model`` file).
    """

    def __init__(self, tokenizer: SentencePieceTokenizer) -> None:
        self.tokenizer = tokenizer

    def segment(self, chunk: str) -> list[int]:
        return [pid for _, pid in self.tokenizer.segment(chunk)]

    def token_to_id(self, token: str) -> int:
        return self.tokenizer.token_to_id(token)

    def id_to_token(self, token_id: int) -> str:
        return self.tokenizer.id_to_token(token_id)

    def __len__(self) -> int:
        return len(self.tokenizer)

    @property
    def vocab(self) -> dict[int, str]:
        return self.tokenizer.vocab

    def to_hf(self):
        return sentencepiece_hf_model(self.tokenizer.pieces, self.tokenizer.config)


def read_document(text_or_path: str | os.PathLike | Mapping) -> dict[str, Any]:
    """The parsed JSON of a ``tokenizer.json``: its text, a path to it, or an already parsed dict."""
    if isinstance(text_or_path, Mapping):
        return dict(text_or_path)
    if isinstance(text_or_path, (bytes, bytearray)):
        raise TypeError("from_hf_json takes the JSON text (str), a path or a dict, got bytes: decode it first")
    if isinstance(text_or_path, str) and not text_or_path.strip():
        raise ValueError("from_hf_json got an empty string: pass the JSON text or a path")
    if isinstance(text_or_path, str) and text_or_path.lstrip().startswith("{"):
        source, text = "the tokenizer.json text", text_or_path
    elif isinstance(text_or_path, (str, os.PathLike)):
        source = os.fspath(text_or_path)
        try:
            with open(source, encoding="utf-8") as fh:
                text = fh.read()
        except UnicodeDecodeError as exc:
            raise ValueError(f"{source} is not UTF-8 text: {exc}") from None
    else:
        raise TypeError(f"from_hf_json takes the JSON text (str), a path or a dict, got {type_name(text_or_path)}")
    # Keep each number's digits: HF's Unigram scores are read the way HF reads them (`hf_float`).
    document = parse_json(text, source, "tokenizer.json", parse_float=JsonFloat)
    if not isinstance(document, dict) or not isinstance(document.get("model"), dict):
        raise ValueError(f"{source} is not a tokenizer.json (no model object)")
    return document


def _name(step: Any) -> str:
    if not isinstance(step, dict):
        return repr(step)
    fields = {k: v for k, v in step.items() if k not in ("type", "vocab", "merges", "precompiled_charsmap")}
    return f"{step.get('type')}({', '.join(f'{k}={v!r}' for k, v in fields.items())})"


def _added_tokens(document: dict, normalizer_present: bool) -> tuple[dict[str, int], frozenset[str]]:
    tokens: dict[str, int] = {}
    plain = set()
    for token in document.get("added_tokens") or []:
        content = token["content"]
        for flag in ("lstrip", "rstrip", "single_word"):
            if token.get(flag):
                raise Unsupported(f"added token {content!r} has {flag}=true, which toklab does not implement "
                                  "(its registered tokens match exactly the text they spell)")
        if token.get("normalized") and normalizer_present:
            raise Unsupported(f"added token {content!r} has normalized=true: HF matches it after the normalizer, "
                              "toklab cuts registered tokens out of the raw text")
        tokens[content] = int(token["id"])
        if not token.get("special"):
            plain.add(content)
    return tokens, frozenset(plain)


def _post_processor(component: Any, family: str) -> TemplateProcessing | None:
    template = None
    for step in flat_steps(component, "processors"):
        kind = step.get("type")
        if kind == "ByteLevel" and family == "byte-level":
            continue  # it only adjusts offsets, which toklab's encode does not return
        if template is not None:
            raise Unsupported(f"post-processor {_name(step)}: toklab keeps one template")
        if kind == "TemplateProcessing":
            ids = {}
            for name, spec in step["special_tokens"].items():
                if len(spec["ids"]) != 1:
                    raise Unsupported(f"template token {name!r} stands for {len(spec['ids'])} IDs; toklab's "
                                      "templates put one ID per name")
                ids[name] = spec["ids"][0]
            single, pair = (" ".join(_template_word(w) for w in step[key]) for key in ("single", "pair"))
            template = TemplateProcessing(single, ids, pair or None)
        elif kind in ("BertProcessing", "RobertaProcessing"):
            (sep, sep_id), (cls, cls_id) = step["sep"], step["cls"]
            pair = f"{cls} $A {sep} $B {sep}" if kind == "BertProcessing" else f"{cls} $A {sep} {sep} $B {sep}"
            template = TemplateProcessing(f"{cls} $A {sep}", {cls: cls_id, sep: sep_id}, pair)
        else:
            raise Unsupported(f"post-processor {_name(step)} is not implemented")
    return template


def _template_word(item: dict) -> str:
    (kind, spec), = item.items()
    return f"${spec['id']}" if kind == "Sequence" else spec["id"]


def _unicode_normalizer(component: Any) -> str | None:
    steps = flat_steps(component, "normalizers")
    if not steps:
        return None
    if len(steps) == 1 and steps[0].get("type") in ("NFC", "NFD", "NFKC", "NFKD"):
        return steps[0]["type"]
    raise Unsupported(f"normalizer {_name(steps[0])} is not implemented for byte-level BPE (toklab has the "
                      "Unicode normal forms NFC, NFD, NFKC, NFKD)")


def _python_regex(pattern: str) -> str:
    """An Oniguruma pattern from a tokenizer.json as Python's ``regex`` reads it (`onig_pattern` backwards)."""
    for name, source in PATTERNS.items():
        if onig_pattern(source) == pattern:
            return name
    atom = r"(\\p\{\w+\}|\\.|\[(?:\\.|[^\]\\])*\]|[^\\()\[\]{}|])"
    rewritten = regex.sub(atom + r"\{(\d+(?:,\d*)?)\}\+", r"(?:\1{\2})+", pattern)
    try:
        regex.compile(rewritten)
    except regex.error as exc:
        raise Unsupported(f"pre-tokenizer Split pattern {pattern!r} does not compile in Python's regex: {exc}") from None
    return _not_a_name(rewritten)


def _not_a_name(pattern: str) -> str:
    """``pattern``, grouped if it could pass for a catalogue name: ``o`` or ``gpt2`` here are literal text."""
    return f"(?:{pattern})" if regex.fullmatch(r"[\w.-]+", pattern) else pattern


def _byte_level_pattern(component: Any) -> RegexSplit:
    """The regex split of a byte-level file: ByteLevel's own GPT-2 regex, or a Split (any behaviour) before it."""
    steps = flat_steps(component, "pretokenizers")
    kinds = [s.get("type") for s in steps]
    if kinds == ["ByteLevel"] and steps[0].get("use_regex", True):
        split, level = RegexSplit("gpt2-2019"), steps[0]
    elif kinds == ["Split", "ByteLevel"] and not steps[1].get("use_regex", True):
        step, level = steps
        behavior = _BEHAVIORS.get(step.get("behavior"))
        if behavior is None:
            raise Unsupported(f"pre-tokenizer {_name(step)}: unknown behavior (HF has {', '.join(_BEHAVIORS)})")
        kind, source = next(iter(step["pattern"].items()))
        if kind == "Regex":
            pattern = _python_regex(source)
        elif kind == "String" and source:
            pattern = _not_a_name(regex.escape(source))
        else:
            raise Unsupported(f"pre-tokenizer {_name(step)}: a Split on an empty string matches nothing")
        split = RegexSplit(pattern, behavior, bool(step.get("invert", False)))
    else:
        raise Unsupported("pre-tokenizer " + " + ".join(_name(s) for s in steps) + " is not implemented for "
                          "byte-level BPE (toklab reads ByteLevel, or Split(Regex or String) + ByteLevel)")
    if level.get("add_prefix_space"):
        raise Unsupported("pre-tokenizer ByteLevel(add_prefix_space=true) is not implemented (it puts a space "
                          "before the text)")
    return split


def _byte_level(document: dict) -> ByteBPE | Pipeline:
    model = document["model"]
    for option, ok in (("dropout", (None, 0, 0.0)), ("continuing_subword_prefix", (None, "")),
                       ("end_of_word_suffix", (None, "")), ("byte_fallback", (False, None))):
        if model.get(option) not in ok:
            raise Unsupported(f"BPE option {option}={model.get(option)!r} is not implemented for byte-level BPE")
    if (flat_steps(document.get("decoder"), "decoders") or [{}])[0].get("type") != "ByteLevel" or \
            len(flat_steps(document.get("decoder"), "decoders")) != 1:
        raise Unsupported(f"decoder {_name(document.get('decoder'))} is not implemented for byte-level BPE "
                          "(toklab decodes with ByteLevel)")
    normal_form = _unicode_normalizer(document.get("normalizer"))
    specials, plain = _added_tokens(document, normal_form is not None)
    split = _byte_level_pattern(document.get("pre_tokenizer"))
    pattern = split.pattern
    try:
        vocab = {int(i): from_proxy(t) for t, i in model["vocab"].items() if t not in specials}
        merges = [tuple(from_proxy(p) for p in (m if isinstance(m, list) else m.split(" ", 1))) for m in model["merges"]]
    except ValueError as exc:
        raise Unsupported(f"BPE vocabulary is not byte-level: {exc}") from None
    made = {a + b for a, b in merges}
    if model.get("unk_token") is not None and len({t for t in vocab.values() if len(t) == 1}) < 256:
        raise Unsupported("BPE with an unk_token and without all 256 bytes: toklab's byte-level BPE has no unknown")
    if not model.get("ignore_merges"):
        unreachable = next((t for t in vocab.values() if len(t) > 1 and t not in made), None)
        if unreachable is not None:
            raise Unsupported(f"BPE with ignore_merges=false and a token no merge makes ({unreachable!r}): toklab, "
                              "like tiktoken, takes a chunk that is a token whole")
    tok = ByteBPE(merges, vocab=vocab, pattern=pattern, special_tokens=specials)
    ranks = {a + b: k for k, (a, b) in enumerate(merges)}
    for k, (a, b) in enumerate(merges):
        if recover_split(a + b, ranks, k) != (a, b):
            raise Unsupported(
                f"BPE merge {k} ({a!r}, {b!r}) is not the split that lower-ranked merges reach: HF merges listed "
                "pairs, toklab merges by the rank of what a pair makes, and here the two can differ"
            )
    template = _post_processor(document.get("post_processor"), "byte-level")
    if normal_form is None and template is None and not plain and split.plain:
        return tok
    return Pipeline(tok, normalizer=normal_form, post_processor=template, non_special_tokens=plain,
                    pre_tokenizer=None if split.plain else split)


def _wordpiece(document: dict) -> WordPiece:
    model = document["model"]
    norm = flat_steps(document.get("normalizer"), "normalizers")
    if len(norm) > 1 or (norm and norm[0].get("type") != "BertNormalizer"):
        raise Unsupported(f"normalizer {_name(norm[0])} is not implemented for WordPiece (toklab has BertNormalizer)")
    options = norm[0] if norm else {"clean_text": False, "handle_chinese_chars": False, "strip_accents": False,
                                    "lowercase": False}
    pre = flat_steps(document.get("pre_tokenizer"), "pretokenizers")
    if [s.get("type") for s in pre] != ["BertPreTokenizer"]:
        raise Unsupported("pre-tokenizer " + (" + ".join(_name(s) for s in pre) or "None") + " is not implemented for "
                          "WordPiece (toklab has BertPreTokenizer)")
    decoder = flat_steps(document.get("decoder"), "decoders")
    prefix = model.get("continuing_subword_prefix") or "##"
    if len(decoder) != 1 or decoder[0].get("type") != "WordPiece" or decoder[0].get("prefix") != prefix:
        raise Unsupported(f"decoder {_name(document.get('decoder'))} is not implemented for WordPiece (toklab "
                          f"decodes with WordPiece(prefix={prefix!r}))")
    specials, plain = _added_tokens(document, bool(norm))
    vocab = {str(t): int(i) for t, i in model["vocab"].items()}
    for token, i in specials.items():
        if vocab.get(token) != i:
            raise Unsupported(f"added token {token!r} (ID {i}) is not in the WordPiece vocabulary at that ID")
    return WordPiece(
        vocab, unk_token=model["unk_token"], prefix=prefix,
        max_input_chars_per_word=model.get("max_input_chars_per_word", 100),
        lowercase=options["lowercase"], strip_accents=options.get("strip_accents"),
        handle_chinese_chars=options["handle_chinese_chars"], clean_text=options["clean_text"],
        cleanup=decoder[0].get("cleanup", True), special_tokens=specials, non_special_tokens=plain,
        post_processor=_post_processor(document.get("post_processor"), "wordpiece"),
    )


def _metaspace_family(document: dict) -> Pipeline:
    """A sentencepiece-style file whose escaping is a ``Metaspace`` pre-tokenizer (HF's trainers, T5, ALBERT, Llama 2).

    Its stages run as HF runs them: the normalizer steps (`HFNormalizer`), `Metaspace`,
    the model on each piece, the decoder steps (`DecoderChain`).
    """
    steps = flat_steps(document.get("pre_tokenizer"), "pretokenizers")
    kinds = [s.get("type") for s in steps]
    if kinds not in (["Metaspace"], ["WhitespaceSplit", "Metaspace"]):
        raise Unsupported("pre-tokenizer " + " + ".join(_name(s) for s in steps) + " is not implemented for a "
                          "sentencepiece-style model (toklab reads Metaspace, alone or after WhitespaceSplit)")
    ms = steps[-1]
    scheme = "never" if ms.get("add_prefix_space") is False else ms.get("prepend_scheme", "always")
    try:
        metaspace = Metaspace(ms.get("replacement", "\u2581"), scheme, bool(ms.get("split", True)), len(steps) == 2)
        norm_steps = flat_steps(document.get("normalizer"), "normalizers")
        normalizer = HFNormalizer.from_steps(norm_steps) if norm_steps else None
        decoder = DecoderChain(tuple(flat_steps(document.get("decoder"), "decoders")))
    except ValueError as exc:
        raise Unsupported(str(exc)) from None
    pieces, model_type = hf_pieces(document)
    byte_fallback = bool(document["model"].get("byte_fallback"))
    config = SPConfig(model_type=model_type, normalization="identity", add_dummy_prefix=False,
                      remove_extra_whitespaces=False, escape_whitespaces=False, byte_fallback=byte_fallback,
                      engine="tokenizers")
    try:
        tok = SentencePieceTokenizer(pieces, config)
    except ValueError as exc:
        raise Unsupported(f"model: {exc}") from None
    specials, plain = _added_tokens(document, normalizer is not None)
    for token, i in specials.items():
        if i >= len(tok) or tok.id_to_token(i) != token:
            raise Unsupported(f"added token {token!r} (ID {i}) is not the model's piece with that ID")
    return Pipeline(SentencePieceSegmenter(tok), normalizer=normalizer, pre_tokenizer=metaspace, decoder=decoder,
                    special_tokens=specials, non_special_tokens=plain,
                    post_processor=_post_processor(document.get("post_processor"), "spm"))


def _sentencepiece(document: dict) -> Pipeline:
    pre = flat_steps(document.get("pre_tokenizer"), "pretokenizers")
    # sentencepiece's own front end written as HF steps has no pre-tokenizer, or (Llama's older files) a
    # Metaspace that only escapes; any other pre-tokenizer belongs to the Metaspace family.
    escape_only = len(pre) == 1 and pre[0].get("type") == "Metaspace" and not pre[0].get("split") and \
        pre[0].get("prepend_scheme") == "never"
    if pre and not escape_only:
        return _metaspace_family(document)
    try:
        pieces, config = sentencepiece_from_hf(document)
    except Unsupported:
        if escape_only:  # not sentencepiece's own chain around it: run HF's stages as they are
            return _metaspace_family(document)
        raise
    tok = SentencePieceTokenizer(pieces, config)
    specials, plain = _added_tokens(document, document.get("normalizer") is not None)
    for token, i in specials.items():
        if i >= len(tok) or tok.id_to_token(i) != token:
            raise Unsupported(f"added token {token!r} (ID {i}) is not the model's piece with that ID")
    return Pipeline(SentencePieceSegmenter(tok), normalizer=tok.normalizer, decoder=tok.decoder, special_tokens=specials,
                    non_special_tokens=plain, post_processor=_post_processor(document.get("post_processor"), "spm"))


def from_hf_json(text_or_path: str | os.PathLike | Mapping) -> ByteBPE | WordPiece | Pipeline:
    """Load a Hugging Face ``tokenizer.json`` into the toklab tokenizer that gives the same IDs.

    ``text_or_path`` is the file's text, its path, or the parsed dict. Returns
    a `toklab.ByteBPE` (or a `toklab.Pipeline` around one), a `toklab.WordPiece`,
    or for a sentencepiece-style file a `toklab.Pipeline` whose ``model.tokenizer``
    is the `toklab.SentencePieceTokenizer`. ``encode(text, allowed_special="all")``
    then equals HF's ``Tokenizer.encode(text).ids`` (HF recognises added tokens
    everywhere), and ``decode(ids, skip_special_tokens=True)`` HF's decode.
    Raises `Unsupported` (a ValueError) naming any component toklab does not
    implement exactly, ValueError for a file that is not a tokenizer.json.
    """
    document = read_document(text_or_path)
    try:
        return _from_document(document)
    except KeyError as exc:
        key = exc.args[0] if exc.args else exc
        raise ValueError(f"a malformed tokenizer.json: it lacks the field {key!r} where one is required") from None
    except (TypeError, AttributeError, IndexError) as exc:
        raise ValueError(f"a malformed tokenizer.json: a field holds a value of the wrong type or shape ({exc})") from None


def _from_document(document: dict) -> ByteBPE | WordPiece | Pipeline:
    for option in ("truncation", "padding"):
        if document.get(option) is not None:
            raise Unsupported(f"{option}={document[option]!r}: it changes HF's output and toklab does not implement it")
    model = document["model"].get("type")
    pre = [s.get("type") for s in flat_steps(document.get("pre_tokenizer"), "pretokenizers")]
    decoder = [s.get("type") for s in flat_steps(document.get("decoder"), "decoders")]
    if model == "BPE" and ("ByteLevel" in pre or decoder == ["ByteLevel"]):
        return _byte_level(document)
    if model == "WordPiece":
        return _wordpiece(document)
    if model in ("Unigram", "BPE"):
        return _sentencepiece(document)
    raise Unsupported(f"model {model} is not implemented (toklab reads BPE, WordPiece and Unigram)")
