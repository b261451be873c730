"""The eight invariants of the book's from-scratch demos (D01-D08), as one runnable check.

Each check calls the package's own functions, the ones the chapters print, and raises
AssertionError (with what it expected) when an invariant does not hold; on success it
returns one line saying what it verified. `run` runs all eight and never stops at a
failure; ``python -m toklab sanity`` prints one PASS or FAIL line per check and exits
non-zero if any failed.

The checks look their functions up through the modules at call time
(``unicode.bytes_to_unicode()``, not a name imported once), so that a function that
breaks, or is replaced, makes its check fail.

1. D01 GPT-2's byte-to-character table is a bijection 256 -> 256 with 188 bytes kept
   and 68 shifted, in order, to U+0100 onwards; UTF-8 text survives the round trip.
2. D02 training merges the most frequent pair; encoding follows the frozen ranks, not
   frequencies; overlaps merge left to right; decode(encode(x)) == x.
3. D03 WordPiece: longest match first, a failure anywhere makes the whole word [UNK],
   and there is no backtracking.
4. D04 Unigram: Viterbi's best path and the forward marginal are different numbers,
   and the marginal is at least the best path's probability.
5. D05 coverage is not fidelity: NFKC loses information, byte fallback does not.
6. D06 prefix instability: encode("ab") is not a prefix of encode("abc").
7. D07 measures: a byte tokenizer has 1 token per byte; BPE < chars < bytes on a mixed
   corpus; equal total NLL gives equal BPB whatever the token count.
8. D08 vocabulary extension: old IDs, encodings and specials unchanged; new row = mean
   of its description's rows; a tied head is still the same array.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .. import bpe, normalizers, unigram, wordpiece
from ..base import unicode
from ..base.pieces import byte_piece
from ..bpe import ByteBPE
from ..data import corpus
from ..lab import extension
from ..measure import metrics
from ..sentencepiece import SentencePieceTokenizer
from ..sentencepiece.model_file import SPConfig

__all__ = ["Invariant", "Result", "INVARIANTS", "run", "report"]


@dataclass(frozen=True)
class Invariant:
    """One check: its demo label (``"D01"``), a title, and the function that checks it."""

    label: str
    title: str
    check: Callable[[], str]


@dataclass(frozen=True)
class Result:
    label: str
    title: str
    ok: bool
    detail: str

    def line(self) -> str:
        return f"{'PASS' if self.ok else 'FAIL'}  [{self.label}] {self.title}: {self.detail}"


ROUND_TRIP = " A\n中文🙂\x00"


def check_bijection() -> str:
    table = unicode.bytes_to_unicode()
    assert sorted(table) == list(range(256)) and len(set(table.values())) == 256, "not a bijection of 256 bytes"
    kept = [b for b in range(256) if table[b] == chr(b)]
    shifted = [b for b in range(256) if table[b] != chr(b)]
    assert (len(kept), len(shifted)) == (188, 68), f"{len(kept)} bytes kept and {len(shifted)} shifted, not 188 and 68"
    assert [table[b] for b in shifted] == [chr(0x100 + n) for n in range(68)], "shifted bytes not in order from U+0100"
    assert (table[0x00], table[0x0A], table[0x20]) == ("\u0100", "\u010a", "\u0120"), "0x00, 0x0A, 0x20 not Ā, Ċ, Ġ"
    back = unicode.from_proxy(unicode.to_proxy(ROUND_TRIP.encode("utf-8"))).decode("utf-8")
    assert back == ROUND_TRIP, f"round trip gave {back!r}"
    return f"256 -> 256, 188 kept, 68 shifted to U+0100-U+0143, 0x20 -> 'Ġ', {ROUND_TRIP!r} round-trips"


def check_train_vs_encode() -> str:
    words = {tuple("abab"): 3, tuple("abac"): 1}
    count = bpe.pair_counts(words)[("a", "b")]
    merges = bpe.reference_train(words, 3)
    assert count == 7 and merges[0] == ("a", "b"), f"first merge {merges[:1]} with count {count}, not (a, b) with 7"
    by_rank = bpe.reference_encode(list("abc"), [("a", "b"), ("b", "c")])
    reversed_ = bpe.reference_encode(list("abc"), [("b", "c"), ("a", "b")])
    assert (by_rank, reversed_) == (["ab", "c"], ["a", "bc"]), f"rank conflict gave {by_rank} and {reversed_}"
    fast = ByteBPE([(b"a", b"b"), (b"b", b"c")])
    assert fast.tokens(fast.encode("abc")) == [b"ab", b"c"], "ByteBPE does not follow the ranks"
    overlap = bpe.reference_encode(list("aaa"), [("a", "a")])
    assert overlap == ["aa", "a"], f"'aaa' gave {overlap}, not ['aa', 'a']"
    tok = ByteBPE([(a.encode(), b.encode()) for a, b in merges])
    for text in ("ababac", ROUND_TRIP, "abab abac 注 🙂"):
        ids = tok.encode(text)
        assert tok.decode(ids) == text, f"decode(encode({text!r})) = {tok.decode(ids)!r}"
        assert ids == tok.encode(text) and len(ids) <= len(text.encode("utf-8")), f"encoding of {text!r} unstable"
    return f"merges {merges}; 'abc' -> {by_rank} by rank, {reversed_} reversed; 'aaa' -> {overlap}"


def check_wordpiece() -> str:
    encode = wordpiece.reference.encode_word
    cases = [(["[UNK]", "a", "##b", "##bc"], ["a", "##bc"]), (["[UNK]", "a", "##b"], ["[UNK]"]),
             (["[UNK]", "a", "ab", "##bc"], ["[UNK]"])]
    for vocab, expected in cases:
        got, fast = encode("abc", vocab), wordpiece.WordPieceModel(vocab).encode_word("abc")
        assert got == fast == expected, f"vocab {vocab[1:]}: 'abc' -> {got} (model: {fast}), expected {expected}"
    return "'abc' -> [a, ##bc]; without ##bc -> [[UNK]], not [a, ##b, [UNK]]; {a, ab, ##bc} -> [[UNK]] (no backtracking)"


def check_unigram() -> str:
    probs = {"a": 0.15, "b": 0.15, "ab": 0.40, "aba": 0.20, "bab": 0.10}
    best = unigram.reference_viterbi("abab", {p: math.log(v) for p, v in probs.items()})
    p_best = math.prod(probs[p] for p in best)
    marginal = unigram.reference_forward("abab", probs)[-1]
    assert best == ["ab", "ab"] and math.isclose(p_best, 0.16), f"Viterbi gave {best} ({p_best})"
    assert math.isclose(marginal, 0.22350625, rel_tol=1e-12), f"forward gave {marginal}, not 0.22350625"
    model = unigram.Unigram.from_probs(probs)
    assert model.viterbi("abab") == best, f"Unigram.viterbi gave {model.viterbi('abab')}"
    assert math.isclose(model.marginal_likelihood("abab", log=False), marginal), "Unigram's forward disagrees"
    assert marginal >= p_best
    return f"Viterbi {best} (p = {p_best:.2f}); forward P(abab) = {marginal:.8f} >= best path"


def _byte_fallback_model() -> SentencePieceTokenizer:
    pieces = [("<unk>", 0.0, "unknown"), ("<s>", 0.0, "control"), ("</s>", 0.0, "control")]
    pieces += [(byte_piece(b), 0.0, "byte") for b in range(256)]
    pieces += [(p, -1.0 - k, "normal") for k, p in enumerate(["▁", "A", "1", "▁A"])]
    return SentencePieceTokenizer(pieces, SPConfig(byte_fallback=True))


def check_coverage_vs_fidelity() -> str:
    nfkc = normalizers.UnicodeNormalizer("NFKC").normalize
    assert nfkc("Ａ①") == nfkc("A1") == "A1", f"NFKC('Ａ①') = {nfkc('Ａ①')!r}"
    sp = _byte_fallback_model()
    pieces = sp.encode_as_pieces("龘")
    assert pieces[-3:] == ["<0xE9>", "<0xBE>", "<0x98>"], f"byte fallback gave {pieces}"
    assert sp.decode(sp.encode("龘")) == "龘", "byte fallback did not round-trip"
    assert sp.decode(sp.encode("Ａ①")) == "A1", "normalization should have rewritten 'Ａ①' before the model"
    return "NFKC('Ａ①') = 'A1' (lossy, 'A1' maps there too); '龘' -> <0xE9><0xBE><0x98> and back"


def check_prefix_instability() -> str:
    tok = ByteBPE([(b"a", b"b"), (b"ab", b"c")])
    short, long_ = tok.tokens(tok.encode("ab")), tok.tokens(tok.encode("abc"))
    assert short == [b"ab"] and long_ == [b"abc"], f"encode('ab') = {short}, encode('abc') = {long_}"
    assert long_[: len(short)] != short
    assert bpe.reference_encode(list("abc"), [("a", "b"), ("ab", "c")]) == ["abc"]
    return "encode('ab') = ['ab'] is not a prefix of encode('abc') = ['abc']"


def check_measures() -> str:
    mixed = ROUND_TRIP + " abab, 注音 🙂"
    no_merges = ByteBPE([])
    assert metrics.fertility(no_merges, mixed, "bytes").tokens_per_unit == 1.0, "a byte tokenizer is not 1 token/byte"
    names = ("en", "zh", "code")
    tok = bpe.train("\n".join(corpus.load(n, 30_000) for n in names), 256 + 300)
    held = [corpus.held_out(n, 30_000, 5_000) for n in names]
    n_bpe = sum(len(tok.encode(t)) for t in held)
    n_char = sum(metrics.count_units(t, "chars") for t in held)
    n_byte = sum(metrics.count_units(t, "bytes") for t in held)
    assert n_bpe < n_char < n_byte, f"BPE {n_bpe}, chars {n_char}, bytes {n_byte}: not BPE < chars < bytes"
    loss_a, loss_b = metrics.loss_per_token(4.0, 2), metrics.loss_per_token(4.0, 4)
    bpb_a, bpb_b = metrics.bits_per_byte(2 * loss_a, 8), metrics.bits_per_byte(4 * loss_b, 8)
    assert (loss_a, loss_b) == (2.0, 1.0) and bpb_a == bpb_b == 4.0 / (8 * math.log(2)), "BPB depends on tokens"
    return (f"1 token/byte for bytes; held-out en+zh+code: BPE {n_bpe:,} < chars {n_char:,} < bytes {n_byte:,}; "
            f"loss/token 2.0 vs 1.0, BPB {bpb_a:.4f} both")


def check_extension() -> str:
    old = bpe.train(corpus.load("en", 20_000), 256 + 200, special_tokens=["<|endoftext|>"])
    new = extension.extend(old, ["<|tool_call|>"], special=True)
    texts = corpus.load("en", 40_000).splitlines() + ["<|endoftext|> as text", "注 🙂"]
    report = extension.regression(old, new, texts)
    assert report.ok and not report.changed, report.summary()
    assert all(new.id_to_token(i) == old.id_to_token(i) for i in old.vocab), "an old ID changed its bytes"
    emb = np.random.default_rng(0).normal(size=(old.n_vocab, 4))
    grown = extension.resize_embeddings(old, new, emb, descriptions={"<|tool_call|>": " call a tool"})
    new_id = new.special_tokens["<|tool_call|>"]
    src = old.encode_ordinary(" call a tool")
    assert np.allclose(grown.embedding[new_id], emb[src].mean(axis=0)), "new row is not the mean of its description"
    assert np.array_equal(grown.embedding[: old.n_vocab], emb), "old rows changed"
    assert grown.lm_head is grown.embedding, "a tied head is no longer the same array"
    return (f"{report.n_texts} texts encode as before, specials unchanged; row {new_id} = mean of rows {src}; "
            "tied head intact")


INVARIANTS: tuple[Invariant, ...] = (
    Invariant("D01", "bytes_to_unicode is a bijection", check_bijection),
    Invariant("D02", "BPE training is not encoding", check_train_vs_encode),
    Invariant("D03", "WordPiece fails a whole word", check_wordpiece),
    Invariant("D04", "Viterbi is not forward", check_unigram),
    Invariant("D05", "coverage is not fidelity", check_coverage_vs_fidelity),
    Invariant("D06", "prefix instability", check_prefix_instability),
    Invariant("D07", "fertility and BPB", check_measures),
    Invariant("D08", "vocabulary extension regression", check_extension),
)


def run(invariants: tuple[Invariant, ...] = INVARIANTS) -> list[Result]:
    """Every check, in order; a check that raises (anything) is a failure with the error as its detail."""
    results = []
    for inv in invariants:
        try:
            detail, ok = inv.check(), True
        except Exception as exc:  # noqa: BLE001 - a broken invariant may fail in any way; report it, go on
            detail, ok = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__, False
        results.append(Result(inv.label, inv.title, ok, detail))
    return results


def report(results: list[Result]) -> str:
    """One line per check and a verdict line."""
    failed = [r.label for r in results if not r.ok]
    verdict = (f"all {len(results)} invariants hold" if not failed
               else f"{len(failed)} of {len(results)} invariants FAILED: {', '.join(failed)}")
    return "\n".join([r.line() for r in results] + [verdict])
