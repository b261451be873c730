"""The tokenizer pipeline: everything between a string and the IDs a model sees.

A tokenizer is not one algorithm but a chain of stages. Hugging Face
`tokenizers` gives the stages names, and toklab uses the same ones, each in a
module of that name, so that what a reader learns here carries over:

upstream
    A *chat template* (`toklab.base.special.chatml`) renders messages into segments,
    and registered *special tokens* (``<|endoftext|>``) are cut out whole before
    any stage below sees the text, so no later stage can split or alter them.
1. normalizer (`toklab.normalizers`)
    Unicode normalization, BERT's clean-up, sentencepiece's table, or nothing.
2. pre_tokenizer (`toklab.pre_tokenizers`)
    Cuts the text into chunks (a regex, BERT's punctuation rule); no token
    crosses a chunk boundary.
3. model (`toklab.bpe`, `toklab.wordpiece`, `toklab.unigram`)
    Segments each chunk into tokens: BPE ranks, longest match, or Viterbi.
4. ids
    Each token becomes its integer ID (a row of the embedding matrix).
5. post_processor (`toklab.post_processors`)
    Template tokens around the whole sequence: BOS/EOS, or [CLS] ... [SEP].

Decoding runs backwards (`toklab.decoders`): undo the template, IDs to
tokens, tokens to text. Normalization has no inverse, so
``decode(encode(x)) == x`` holds only when the normalizer leaves ``x``
unchanged (and the text is valid Unicode).

Every model offers the same narrow interface (`Model`): ``segment(chunk)``
returns the IDs of one pre-tokenized chunk, ``token_to_id``/``id_to_token``
map between tokens and IDs, ``len()`` counts the vocabulary. `Pipeline`
composes any model with any stages, and `trace` shows every stage's output for
one string, for every tokenizer toklab offers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..base import special
from ..base.checks import check_ids, check_str
from ..base.special import ChatTemplate, Messages, SpecialSet
from ..base.unicode import replace_surrogates, to_proxy
from ..normalizers.forms import UnicodeNormalizer
from ..post_processors import bos_eos
from .offsets import OffsetsMixin

__all__ = ["STAGES", "Model", "Stage", "Pipeline", "trace"]

#: The stage names `trace` reports, in pipeline order.
STAGES: tuple[str, ...] = ("input", "specials", "normalizer", "pre_tokenizer", "model", "ids", "post_processor")


class Model(Protocol):
    """What a pipeline needs from a model (HF's ``Model`` trait, sentencepiece's ``ModelInterface``)."""

    def segment(self, chunk: str) -> list[int]:
        """The IDs of one pre-tokenized, normalized chunk."""

    def token_to_id(self, token: Any) -> int:
        """KeyError naming the token if it is not in the vocabulary."""

    def id_to_token(self, token_id: int) -> Any:
        """ValueError naming the ID and the valid range if there is no such ID."""

    def __len__(self) -> int: ...


@dataclass(frozen=True)
class Stage:
    """One stage's output in a trace.

    ``output`` is, by stage: ``input`` and ``normalizer`` a str; ``specials``
    a list of ``(piece, is_special)``; ``pre_tokenizer`` a list of str;
    ``model`` a list (one per pre-token) of lists of tokens (``bytes`` for
    byte-level BPE, ``str`` otherwise); ``ids`` and ``post_processor`` a list of int.
    """

    name: str
    output: Any

    def __len__(self) -> int:
        """Length of the output: characters, segments, pre-tokens, tokens or IDs."""
        if self.name == "model":
            return sum(len(pieces) for pieces in self.output)
        return len(self.output)

    def show(self) -> str:
        """The output on one line; byte tokens in GPT-2's proxy alphabet."""
        out = self.output
        if self.name == "model":
            return " | ".join(" ".join(_shown(p) for p in pieces) for pieces in out)
        if self.name == "specials":
            return repr([(p, "special") if s else p for p, s in out])
        return repr(out)


def _shown(token: Any) -> str:
    return to_proxy(token) if isinstance(token, bytes) else str(token)


@dataclass
class Pipeline(OffsetsMixin):
    """A tokenizer assembled from stages around any model.

    ``normalizer`` is a normalizer object (`toklab.normalizers`), one of the
    names ``"NFC"``, ``"NFD"``, ``"NFKC"``, ``"NFKD"``, or None. A stage left
    None is taken from the model when it has one (``model.pre_tokenizer``,
    ``model.decoder``, ``model.special_tokens``): a `toklab.bpe.ByteBPE` brings
    its regex, its byte-level decoder and its specials. Without a pre-tokenizer
    each normalized piece goes to the model whole. ``bos`` and ``eos`` name
    registered special tokens put around every encoded text (a shortcut for a
    `toklab.post_processors.TemplateProcessing`); ``chat_template`` turns
    messages into `toklab.base.special.Segment` lists for `encode_chat`.

    ``non_special_tokens`` names registered tokens that are cut out of text
    like special tokens but are not special: ``decode(skip_special_tokens=True)``
    keeps them, and `to_hf` writes them as added tokens with ``special=false``
    (Hugging Face's distinction, e.g. a tool-call marker).
    """

    model: Model
    normalizer: Any = None
    bos: str | None = None
    eos: str | None = None
    chat_template: ChatTemplate | None = None
    pre_tokenizer: Any = None
    post_processor: Any = None
    decoder: Any = None
    special_tokens: Mapping[str, int] | None = None
    non_special_tokens: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        missing = [m for m in ("segment", "token_to_id", "id_to_token", "__len__") if not hasattr(self.model, m)]
        if missing:
            raise TypeError(f"model must implement the Model interface; {type(self.model).__name__} lacks {missing}")
        if isinstance(self.normalizer, str):
            self.normalizer = UnicodeNormalizer(self.normalizer)
        for stage, method in (("normalizer", "normalize"), ("pre_tokenizer", "pre_tokenize"), ("decoder", "decode"),
                              ("post_processor", "process")):
            value = getattr(self, stage)
            if value is not None and not hasattr(value, method):
                raise TypeError(f"{stage} must have a {method}() method (or be None), got {type(value).__name__}")
        # The model's own split and its cached encode_ordinary give the same IDs
        # as segmenting each chunk, faster (tests check trace == encode).
        self._model_splits = self.pre_tokenizer is None and hasattr(self.model, "encode_ordinary")
        for stage in ("pre_tokenizer", "decoder", "special_tokens"):
            if getattr(self, stage) is None:
                setattr(self, stage, getattr(self.model, stage, None))
        self.special_tokens = dict(self.special_tokens or {})
        self.non_special_tokens = frozenset(self.non_special_tokens)
        stray = sorted(self.non_special_tokens - set(self.special_tokens))
        if stray:
            raise ValueError(f"non_special_tokens {stray} are not registered tokens of this pipeline")
        for role in ("bos", "eos"):
            token = getattr(self, role)
            if token is not None and token not in self.special_tokens:
                raise ValueError(
                    f"{role}={token!r} is not a special token of the model; register "
                    f"it first (registered: {sorted(self.special_tokens)})"
                )
        if self.post_processor is None:
            self.post_processor = bos_eos(self.special_tokens, self.bos, self.eos)

    # -- the stages, one method each ------------------------------------------

    def split_specials(
        self, text: str, allowed_special: SpecialSet = frozenset(), disallowed_special: SpecialSet = "all"
    ) -> list[tuple[str, bool]]:
        """Upstream: cut registered specials out of raw text, tiktoken's contract.

        This runs *before* normalization on purpose. Were specials matched
        after NFKC, a lookalike such as ``＜|im_end|＞`` (fullwidth brackets)
        would be normalized into a real control token.
        """
        allowed, disallowed = special.resolve_special_sets(self.special_tokens, allowed_special, disallowed_special)
        special.check_disallowed(text, disallowed)
        return list(special.split_on_specials(text, allowed))

    def normalize(self, text: str) -> str:
        """Stage 1 (identity without a normalizer).

        Lone surrogates, which have no UTF-8 form, become U+FFFD first, as
        tiktoken and `ByteBPE.encode` do; for valid text this changes nothing.
        """
        text = replace_surrogates(text)
        return text if self.normalizer is None else self.normalizer.normalize(text)

    def pre_tokenize(self, text: str, *, first: bool = True) -> list[str]:
        """Stage 2 on normalized text (``"".join`` of the chunks is ``text`` for a regex split).

        ``first`` says whether ``text`` starts the input (no special token before it);
        a pre-tokenizer whose output depends on that (``positional``, HF's
        ``Metaspace`` with ``prepend_scheme="first"``) is told.
        """
        if self.pre_tokenizer is None:
            return [text] if text else []
        if getattr(self.pre_tokenizer, "positional", False):
            return self.pre_tokenizer.pre_tokenize(text, first=first)
        return self.pre_tokenizer.pre_tokenize(text)

    def words(self, text: str, *, first: bool = True) -> list[str]:
        """Stages 1 and 2: the chunks the model sees for ``text`` (no specials in it)."""
        return self.pre_tokenize(self.normalize(text), first=first)

    def post_process(self, ids: Sequence[int]) -> list[int]:
        """Stage 5: the template's special tokens around ``ids`` (none without a post-processor)."""
        return list(ids) if self.post_processor is None else self.post_processor.process(ids)

    # -- encode / decode ------------------------------------------------------

    def encode(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
        add_special_tokens: bool = True,
    ) -> list[int]:
        """Run every stage and return the IDs the model sees.

        ``allowed_special``/``disallowed_special`` follow tiktoken (a
        disallowed special in ``text`` raises ValueError; pass
        ``disallowed_special=()`` to encode it as ordinary text).
        ``add_special_tokens=False`` skips the post-processor (no BOS/EOS),
        as Hugging Face's option of that name does.
        """
        check_str(text)
        ids: list[int] = []
        segments = self.split_specials(text, allowed_special, disallowed_special)
        for k, (piece, is_special) in enumerate(segments):
            if is_special:
                ids.append(self.special_tokens[piece])
            elif self._model_splits:
                # Stages 2-4 in one call: encode_ordinary splits with the model's
                # pattern and segments each chunk (`trace` runs them one at a time).
                ids.extend(self.model.encode_ordinary(self.normalize(piece)))
            else:
                for word in self.words(piece, first=k == 0):
                    ids.extend(self.model.segment(word))
        return self.post_process(ids) if add_special_tokens else ids

    def decode(self, ids: Iterable[int], *, skip_special_tokens: bool = False, errors: str = "replace") -> str:
        """Run the pipeline backwards: undo the post-processor, IDs -> tokens -> text.

        Undoing the post-processor means dropping its leading and trailing
        tokens where present (one BOS, one EOS); other special tokens decode to
        their text (so a chat transcript stays readable) unless
        ``skip_special_tokens`` drops them all. ``errors`` applies to byte-level
        decoding (a token may hold part of a character). Normalization is not
        undone: it cannot be, which is why decode is not an exact inverse of encode.
        """
        ids = self.decodable(ids, skip_special_tokens=skip_special_tokens)
        decoder = self.decoder
        if decoder is None:
            raise ValueError("this pipeline has no decoder (pass decoder=...)")
        if any(f.name == "errors" for f in dataclasses.fields(decoder)):
            decoder = dataclasses.replace(decoder, errors=errors)
        return decoder.decode(self.tokens(ids))

    def decodable(self, ids: Iterable[int], *, skip_special_tokens: bool = False) -> list[int]:
        """The IDs `decode` hands to the decoder: the post-processor undone, specials dropped if asked."""
        ids = check_ids(ids)
        if self.post_processor is not None:
            ids = self.post_processor.strip(ids)
        if skip_special_tokens:
            special_ids = {i for s, i in self.special_tokens.items() if s not in self.non_special_tokens}
            ids = [i for i in ids if i not in special_ids]
        return ids

    def tokens(self, ids: Iterable[int]) -> list[Any]:
        """The model's token for each ID (a special token as the model spells it).

        An unknown ID raises the model's ValueError, with its position added.
        """
        out = []
        id_to_token = self.model.id_to_token
        for pos, i in enumerate(ids):
            try:
                out.append(id_to_token(i))
            except ValueError as exc:
                raise ValueError(f"{exc} (at position {pos})") from None
        return out

    def token_to_id(self, token: Any) -> int:
        return self.model.token_to_id(token)

    def id_to_token(self, token_id: int) -> Any:
        return self.model.id_to_token(token_id)

    @property
    def vocab(self) -> dict[int, Any]:
        """ID -> token, the model's."""
        return self.model.vocab

    def get_vocab(self) -> dict[Any, int]:
        """Token -> ID, the model's."""
        return self.model.get_vocab()

    def __len__(self) -> int:
        return len(self.model)

    # -- chat -----------------------------------------------------------------

    def render_chat(self, messages: Messages, add_generation_prompt: bool = False) -> str:
        """The chat as one string (what a template engine would print)."""
        return "".join(text for text, _ in self._template()(messages, add_generation_prompt))

    def encode_chat(self, messages: Messages, add_generation_prompt: bool = False) -> list[int]:
        """Encode a chat in two channels; message content never yields specials.

        Trusted segments are encoded with every registered special allowed;
        message content with ``disallowed_special=()``, so a literal
        ``<|im_end|>`` typed by a user becomes ordinary bytes instead of a
        control token (or an exception). Each segment is encoded on its own,
        so no token spans a segment boundary. The post-processor does not
        run: the template already writes the sequence's control tokens, and
        adding BOS/EOS again is the classic duplicate-BOS bug.
        """
        ids: list[int] = []
        for text, trusted in self._template()(messages, add_generation_prompt):
            if trusted:  # template text: its special tokens are meant
                options = {"allowed_special": "all"}
            else:  # user content: a special token in it is just text
                options = {"disallowed_special": ()}
            ids += self.encode(text, add_special_tokens=False, **options)
        return ids

    def _template(self) -> ChatTemplate:
        if self.chat_template is None:
            raise ValueError("this pipeline has no chat_template (pass e.g. chat_template=toklab.base.special.chatml)")
        return self.chat_template

    def fingerprint(self) -> str:
        """SHA-256 of every component that decides the IDs, library versions included (`toklab.pipeline.versioning`)."""
        from . import versioning

        return versioning.fingerprint(self)

    # -- trace ----------------------------------------------------------------

    def trace(
        self, text: str, *, allowed_special: SpecialSet = frozenset(), disallowed_special: SpecialSet = "all"
    ) -> list[Stage]:
        """Every stage's output for ``text`` (see `STAGES`); the last equals `encode`.

        A special token passes through each stage as a single unit: one
        pre-token, one token, one ID.
        """
        check_str(text)
        segments = self.split_specials(text, allowed_special, disallowed_special)
        normalized: list[str] = []
        pretokens: list[str] = []
        pieces: list[list[Any]] = []
        ids: list[int] = []
        model = self.model
        for k, (piece, is_special) in enumerate(segments):
            if is_special:
                tid = self.special_tokens[piece]
                normalized.append(piece)
                pretokens.append(piece)
                pieces.append([model.id_to_token(tid)])
                ids.append(tid)
                continue
            norm = self.normalize(piece)
            normalized.append(norm)
            for chunk in self.pre_tokenize(norm, first=k == 0):
                chunk_ids = model.segment(chunk)
                pretokens.append(chunk)
                pieces.append([model.id_to_token(i) for i in chunk_ids])
                ids.extend(chunk_ids)
        return [
            Stage("input", text),
            Stage("specials", segments),
            Stage("normalizer", "".join(normalized)),
            Stage("pre_tokenizer", pretokens),
            Stage("model", pieces),
            Stage("ids", ids),
            Stage("post_processor", self.post_process(ids)),
        ]

    # -- Hugging Face tokenizers ----------------------------------------------

    def to_hf(self):
        """The same pipeline built from Hugging Face `tokenizers` components.

        Stage for stage: the normalizer's and pre-tokenizer's ``to_hf()``
        (for a regex, ``Split`` with the pattern rewritten by
        `toklab.pre_tokenizers.onig_pattern`, then ``ByteLevel`` with its own
        regex off); the model's ``to_hf()`` (for byte-level BPE ``models.BPE``
        with ``ignore_merges=True``: a chunk that is already a token is taken
        whole, as tiktoken does); special tokens added with their IDs; the
        post-processor's ``TemplateProcessing``; the decoder's ``to_hf()``.
        """
        from tokenizers import AddedToken, Tokenizer

        hf = Tokenizer(self.model.to_hf())
        if self.normalizer is not None:
            hf.normalizer = self.normalizer.to_hf()
        if self.pre_tokenizer is not None:
            hf.pre_tokenizer = self.pre_tokenizer.to_hf()
        # Template tokens ([CLS], [SEP]) are special to HF too, so its decode
        # skips them as ours does.
        template = dict(getattr(self.post_processor, "special_tokens", {}) or {})
        specials = {**template, **self.special_tokens}
        for token in sorted(specials, key=specials.__getitem__):
            # toklab cuts registered tokens out of the raw text, before the
            # normalizer, whole: normalized=False, no stripping, no word rule.
            ordinary = token in self.non_special_tokens
            added = AddedToken(token, special=not ordinary, normalized=False)
            if ordinary:
                hf.add_tokens([added])
            else:
                hf.add_special_tokens([added])
            got = hf.token_to_id(token)
            if got != specials[token]:
                raise ValueError(
                    f"HF gave {token!r} the ID {got}, not {specials[token]}: the "
                    "model's vocabulary must hold each registered token at its ID"
                )
        if self.post_processor is not None:
            hf.post_processor = self.post_processor.to_hf()
        if self.decoder is not None:
            hf.decoder = self.decoder.to_hf()
        return hf

    def to_hf_json(self) -> str:
        """`to_hf` as the text of a ``tokenizer.json``: ``tokenizers.Tokenizer.from_str`` gives the same IDs.

        HF always recognises the registered tokens in text, so compare with
        ``encode(text, allowed_special="all")``; `toklab.formats.hf_json.from_hf_json`
        reads the file back.
        """
        return self.to_hf().to_str(pretty=True)


def trace(tokenizer: Any, text: str, **options) -> list[Stage]:
    """The stages of ``tokenizer`` on ``text``, in order, each with ``name`` and ``output``.

    Works for every tokenizer toklab offers: a `Pipeline` (`toklab.WordPiece` is
    one), a `toklab.ByteBPE`, a `toklab.SentencePieceTokenizer`. The stage named
    ``ids`` holds the IDs before the post-processor; the last stage,
    ``post_processor``, equals ``tokenizer.encode(text)``. For a tokenizer without
    a post-processor (as all three are by default) the two are the same.
    """
    method = getattr(tokenizer, "trace", None)
    if method is None:
        raise TypeError(f"{type(tokenizer).__name__} has no pipeline to trace")
    return method(text, **options)
