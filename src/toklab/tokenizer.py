"""The tokenizer pipeline: everything between a string and the IDs a model sees.

A tokenizer is not one algorithm but a chain of stages. Hugging Face
`tokenizers` gives the stages names, and we use the same ones so that what a
reader learns here carries over to that library:

upstream
    A *chat template* renders a list of messages into segments of text, and
    registered *special tokens* (``<|endoftext|>``) are cut out whole before any
    stage below sees the text, so no later stage can split or alter them.
1. normalizer
    Unicode normalization (NFC, NFKC, NFD, NFKD) or nothing. NFKC is lossy:
    ``"Ａ①"`` becomes ``"A1"`` and nothing downstream can undo it.
2. pre_tokenizer
    The model's regex cuts the text into chunks; no token crosses a chunk
    boundary.
3. model
    Byte-level BPE merges the UTF-8 bytes of each chunk into pieces.
4. ids
    Each piece becomes its integer ID (a row of the embedding matrix).
5. post_processor
    Template tokens around the whole sequence, here BOS and EOS.

Decoding runs backwards: drop what the post-processor added, turn IDs into
bytes, join them, decode UTF-8. Normalization has no inverse, so
``decode(encode(x)) == x`` holds only when the normalizer leaves ``x``
unchanged (and the text is valid Unicode).

`Pipeline` assembles these stages around a `toklab.bpe.ByteBPE`; the
algorithms themselves live in `toklab.bpe`, `toklab.pretokenize` and
`toklab.special`. `Pipeline.trace` records every stage's output for one
string, and `Pipeline.to_hf` builds the same pipeline out of Hugging Face
`tokenizers` components, which the tests use to check the IDs agree.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import regex

from . import pretokenize, special
from .bpe import ByteBPE, _replace_surrogates
from .special import SpecialSet
from .unicode import to_proxy

__all__ = [
    "NORMALIZERS",
    "STAGES",
    "Stage",
    "Segment",
    "ChatTemplate",
    "chatml",
    "Pipeline",
    "onig_pattern",
]

#: The normalizer names a `Pipeline` accepts (None means: leave text alone).
NORMALIZERS: tuple[str, ...] = ("NFC", "NFKC", "NFD", "NFKD")

#: The stage names `Pipeline.trace` reports, in pipeline order.
STAGES: tuple[str, ...] = (
    "input",
    "specials",
    "normalizer",
    "pre_tokenizer",
    "model",
    "ids",
    "post_processor",
)

#: One piece of rendered chat: ``(text, trusted)``. Trusted text was written by
#: the template (role headers, control tokens) and may contain special tokens;
#: untrusted text (message content) is encoded with special-token recognition
#: switched off.
Segment = tuple[str, bool]
ChatTemplate = Callable[..., list[Segment]]
Messages = Sequence[Mapping[str, str]]


@dataclass(frozen=True)
class Stage:
    """One stage's output in a `Pipeline.trace`.

    ``output`` is, by stage: ``input`` and ``normalizer`` a str; ``specials``
    a list of ``(piece, is_special)``; ``pre_tokenizer`` a list of str;
    ``model`` a list (one per pre-token) of lists of token bytes; ``ids`` and
    ``post_processor`` a list of int.
    """

    name: str
    output: Any

    def __len__(self) -> int:
        """Length of the output: characters, segments, pre-tokens, pieces or IDs."""
        if self.name == "model":
            return sum(len(pieces) for pieces in self.output)
        return len(self.output)

    def show(self) -> str:
        """The output on one line; byte pieces in GPT-2's proxy alphabet."""
        out = self.output
        if self.name == "model":
            return " | ".join(" ".join(to_proxy(p) for p in pieces) for pieces in out)
        if self.name == "specials":
            return repr([(p, "special") if s else p for p, s in out])
        return repr(out)


def chatml(messages: Messages, add_generation_prompt: bool = False) -> list[Segment]:
    """A ChatML-style template: ``<|im_start|>role\\ncontent<|im_end|>\\n`` per message.

    Returns segments, not one string, so that message content stays a
    separate, untrusted channel (see `Segment`). Roles are checked because
    they are template text: a role must not smuggle text into the trusted
    channel. With ``add_generation_prompt`` the rendering ends with the
    header of an assistant turn, ready for the model to continue.
    """
    out: list[Segment] = []
    for k, message in enumerate(messages):
        role, content = message.get("role"), message.get("content")
        if role not in ("system", "user", "assistant"):
            raise ValueError(
                f"message {k} has role {role!r}; expected 'system', 'user' or 'assistant'"
            )
        if not isinstance(content, str):
            raise ValueError(
                f"message {k} content must be a str, got {type(content).__name__}"
            )
        out += [
            (f"<|im_start|>{role}\n", True),
            (content, False),
            ("<|im_end|>\n", True),
        ]
    if add_generation_prompt:
        out.append(("<|im_start|>assistant\n", True))
    return out


def onig_pattern(pattern: str) -> str:
    """Rewrite a regex so Oniguruma (inside HF `tokenizers`) reads it as `regex` does.

    The catalogue patterns are written for Python's `regex` module. One
    construct means something else in Oniguruma's default (Ruby) syntax: a
    possessive bounded quantifier. cl100k's ``\\p{N}{1,3}+`` is "1 to 3
    digits, possessively" to `regex` but "(1 to 3 digits) repeated one or
    more times" to Oniguruma, which would keep ``12345`` in one chunk. An
    atomic group, ``(?>\\p{N}{1,3})``, means the same in both engines.
    Other possessive forms (``?+``, ``*+``, ``++``) agree already.
    """
    atom = r"(\\p\{\w+\}|\\.|\[(?:\\.|[^\]\\])*\]|[^\\()\[\]{}|])"
    out = regex.sub(atom + r"\{(\d+(?:,\d*)?)\}\+", r"(?>\1{\2})", pattern)
    left = regex.search(r"(?<!\\)\{\d+(?:,\d*)?\}\+", out)
    if left:
        raise ValueError(
            f"cannot rewrite the possessive quantifier {left.group()!r} at "
            f"{left.start()} for Oniguruma (only a single character, escape, class "
            "or \\p{...} before it is supported)"
        )
    return out


@dataclass
class Pipeline:
    """A tokenizer pipeline around a byte-level BPE model.

    ``normalizer`` is one of `NORMALIZERS` or None. ``bos`` and ``eos`` name
    registered special tokens of ``model`` that the post-processor puts around
    every encoded text (or None). ``chat_template`` turns messages into
    `Segment` lists (e.g. `chatml`); it is used by `encode_chat`.
    """

    model: ByteBPE
    normalizer: str | None = None
    bos: str | None = None
    eos: str | None = None
    chat_template: ChatTemplate | None = None

    def __post_init__(self) -> None:
        if self.normalizer is not None and self.normalizer not in NORMALIZERS:
            raise ValueError(
                f"normalizer must be one of {NORMALIZERS} or None, got {self.normalizer!r}"
            )
        for role in ("bos", "eos"):
            token = getattr(self, role)
            if token is not None and token not in self.model.special_tokens:
                raise ValueError(
                    f"{role}={token!r} is not a special token of the model; register "
                    f"it first (registered: {sorted(self.model.special_tokens)})"
                )

    # -- the stages, one method each ------------------------------------------

    def split_specials(
        self,
        text: str,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
    ) -> list[tuple[str, bool]]:
        """Upstream: cut registered specials out of raw text, tiktoken's contract.

        This runs *before* normalization on purpose. Were specials matched
        after NFKC, a lookalike such as ``＜|im_end|＞`` (fullwidth brackets)
        would be normalized into a real control token.
        """
        allowed, disallowed = special.resolve_special_sets(
            self.model.special_tokens, allowed_special, disallowed_special
        )
        special.check_disallowed(text, disallowed)
        return list(special.split_on_specials(text, allowed))

    def normalize(self, text: str) -> str:
        """Stage 1: Unicode normalization (identity when ``normalizer`` is None).

        Lone surrogates, which have no UTF-8 form, become U+FFFD first, as
        tiktoken and `ByteBPE.encode` do; for valid text this changes nothing.
        """
        text = _replace_surrogates(text)
        if self.normalizer is None:
            return text
        return unicodedata.normalize(self.normalizer, text)

    def pre_tokenize(self, text: str) -> list[str]:
        """Stage 2: the model's regex chunks (``"".join`` of them is ``text``)."""
        return pretokenize.split(text, self.model.pattern)

    def post_process(self, ids: Sequence[int]) -> list[int]:
        """Stage 5: add BOS in front and EOS at the end (those that are set)."""
        specials = self.model.special_tokens
        head = [specials[self.bos]] if self.bos is not None else []
        tail = [specials[self.eos]] if self.eos is not None else []
        return head + list(ids) + tail

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
        ids: list[int] = []
        for piece, is_special in self.split_specials(
            text, allowed_special, disallowed_special
        ):
            if is_special:
                ids.append(self.model.special_tokens[piece])
            else:
                # Stages 2-4 in one call: encode_ordinary splits with the
                # model's pattern and merges inside each chunk (`trace`
                # runs the same steps one at a time).
                ids.extend(self.model.encode_ordinary(self.normalize(piece)))
        return self.post_process(ids) if add_special_tokens else ids

    def decode(
        self,
        ids: Iterable[int],
        *,
        skip_special_tokens: bool = False,
        errors: str = "replace",
    ) -> str:
        """Run the pipeline backwards: undo the post-processor, IDs -> bytes, UTF-8.

        Undoing the post-processor means dropping one BOS at the start and one
        EOS at the end when present; other special tokens decode to their text
        (so a chat transcript stays readable) unless ``skip_special_tokens``
        drops them all. Bytes are joined *before* UTF-8 decoding because a
        token may hold part of a character. Normalization is not undone: it
        cannot be, which is why decode is not an exact inverse of encode.
        """
        ids = list(ids)
        specials = self.model.special_tokens
        if self.bos is not None and ids[:1] == [specials[self.bos]]:
            ids = ids[1:]
        if self.eos is not None and ids[-1:] == [specials[self.eos]]:
            ids = ids[:-1]
        if skip_special_tokens:
            special_ids = set(specials.values())
            ids = [i for i in ids if i not in special_ids]
        return self.model.decode(ids, errors=errors)

    def tokens(self, ids: Iterable[int]) -> list[bytes]:
        """The bytes of each ID (a special token as its text), e.g. for `toklab.viz`."""
        return self.model.tokens(ids)

    # -- chat -----------------------------------------------------------------

    def render_chat(
        self, messages: Messages, add_generation_prompt: bool = False
    ) -> str:
        """The chat as one string (what a template engine would print)."""
        segments = self._template()(messages, add_generation_prompt)
        return "".join(text for text, _ in segments)

    def encode_chat(
        self, messages: Messages, add_generation_prompt: bool = False
    ) -> list[int]:
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
            raise ValueError(
                "this pipeline has no chat_template "
                "(pass e.g. chat_template=toklab.tokenizer.chatml)"
            )
        return self.chat_template

    # -- trace ----------------------------------------------------------------

    def trace(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
    ) -> list[Stage]:
        """Every stage's output for ``text`` (see `STAGES`); the last equals `encode`.

        A special token passes through each stage as a single unit: one
        pre-token, one piece, one ID.
        """
        segments = self.split_specials(text, allowed_special, disallowed_special)
        normalized: list[str] = []
        pretokens: list[str] = []
        pieces: list[list[bytes]] = []
        ids: list[int] = []
        model = self.model
        for piece, is_special in segments:
            if is_special:
                normalized.append(piece)
                pretokens.append(piece)
                pieces.append([piece.encode("utf-8")])
                ids.append(model.special_tokens[piece])
                continue
            norm = self.normalize(piece)
            normalized.append(norm)
            for chunk in self.pre_tokenize(norm):
                # The model stage for one chunk: the same call encode_ordinary
                # makes for each chunk (tests check trace == encode).
                chunk_ids = model.segment(chunk)
                pretokens.append(chunk)
                pieces.append(model.tokens(chunk_ids))
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

        Stage for stage: ``normalizers.NFKC`` (etc.); ``pre_tokenizers.Split``
        with the model's regex (rewritten by `onig_pattern`), then
        ``ByteLevel`` with its own regex off, which maps bytes to GPT-2's
        proxy alphabet; ``models.BPE`` with our vocabulary and merges in that
        alphabet (``ignore_merges=True``: a chunk that is already a token is
        taken whole, as tiktoken and `ByteBPE` do); special tokens added with
        their IDs; ``TemplateProcessing`` for BOS/EOS; ``decoders.ByteLevel``.
        """
        from tokenizers import Regex, Tokenizer, decoders, models, normalizers
        from tokenizers import pre_tokenizers, processors

        model = self.model
        specials = model.special_tokens
        vocab = {to_proxy(token): i for i, token in model.vocab.items()}
        vocab.update(specials)  # so each special token keeps its own ID
        merges = [(to_proxy(a), to_proxy(b)) for a, b in model.merges]
        hf = Tokenizer(models.BPE(vocab, merges, ignore_merges=True))

        if self.normalizer is not None:
            hf.normalizer = getattr(normalizers, self.normalizer)()
        regex_source = onig_pattern(pretokenize.resolve(model.pattern))
        hf.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(regex_source), behavior="isolated"),
                pre_tokenizers.ByteLevel(
                    add_prefix_space=False, use_regex=False
                ),
            ]
        )
        hf.add_special_tokens(sorted(specials, key=specials.__getitem__))
        template = [t for t in (self.bos, "$A", self.eos) if t is not None]
        if len(template) > 1:
            used = [t for t in dict.fromkeys([self.bos, self.eos]) if t]
            hf.post_processor = processors.TemplateProcessing(
                single=" ".join(template),
                special_tokens=[(t, specials[t]) for t in used],
            )
        hf.decoder = decoders.ByteLevel()
        return hf
