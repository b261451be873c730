"""The eight invariants of the book's from-scratch demos (D01-D08), as one runnable check.

Each check calls the package's own functions, the ones the chapters print, and raises
AssertionError (with what it expected) when an invariant does not hold; on success it
returns one line saying what it verified. `run` runs all eight and never stops at a
failure; ``python -m toklab sanity`` prints one PASS or FAIL line per check and exits
non-zero if any failed.

The checks look their functions up through the modules at call time
(``unicode.bytes_to_unicode()``, not a name imported once), so that a function that
breaks, or is replaced, makes its check fail.

The same eight invariants also run on an implementation of one's own, such as the
book's single-file ``tokenization_from_scratch.py`` (§7): `load_impl` imports a Python
file, `impl_invariants` checks its functions against toklab's on the classic cases and
on many more (``python -m toklab sanity --impl FILE``). `IMPL_NAMES` lists the functions
each check calls and `IMPL_SIGNATURES` what each must do.

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

import functools
import importlib.util
import math
import random
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np

from .. import bpe, normalizers, unigram, wordpiece
from ..base import unicode
from ..base.pieces import byte_piece
from ..bpe import ByteBPE
from ..data import corpus, vocabs
from ..lab import extension
from ..measure import metrics
from ..pre_tokenizers import patterns
from ..sentencepiece import SentencePieceTokenizer
from ..sentencepiece.model_file import SPConfig

__all__ = ["Invariant", "Result", "INVARIANTS", "run", "report", "IMPL_SIGNATURES", "IMPL_NAMES", "load_impl",
           "missing_names", "impl_invariants"]


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
    assert count == 7 and merges[0] == ("a", "b"), (
        f"first merge {merges[:1]} with count {count}, not (a, b) with 7")
    by_rank = bpe.reference_encode(list("abc"), [("a", "b"), ("b", "c")])
    reversed_ = bpe.reference_encode(list("abc"), [("b", "c"), ("a", "b")])
    assert (by_rank, reversed_) == (["ab", "c"], ["a", "bc"]), (
        f"rank conflict gave {by_rank} and {reversed_}")
    fast = ByteBPE([(b"a", b"b"), (b"b", b"c")])
    assert fast.tokens(fast.encode("abc")) == [b"ab", b"c"], (
        "ByteBPE does not follow the ranks")
    overlap = bpe.reference_encode(list("aaa"), [("a", "a")])
    assert overlap == ["aa", "a"], f"'aaa' gave {overlap}, not ['aa', 'a']"
    tok = ByteBPE([(a.encode(), b.encode()) for a, b in merges])
    for text in ("ababac", ROUND_TRIP, "abab abac 注 🙂"):
        ids = tok.encode(text)
        back = tok.decode(ids)
        assert back == text, f"decode(encode({text!r})) = {back!r}"
        stable = ids == tok.encode(text)
        assert stable and len(ids) <= len(text.encode("utf-8")), (
            f"encoding of {text!r} unstable")
    return (f"merges {merges}; 'abc' -> {by_rank} by rank, {reversed_} reversed; "
            f"'aaa' -> {overlap}")


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


# ---------------------------------------------------------------------------- an implementation of one's own

#: What each function of an implementation (``sanity --impl FILE``) takes and returns. Tokens of a byte-level
#: vocabulary are strings of GPT-2's characters (`toklab.base.unicode.bytes_to_unicode`), and ``ranks`` maps each token
#: to its ID, which is also its rank: the 256 single bytes first, in the order of GPT-2's table, then the merges.
IMPL_SIGNATURES: dict[str, str] = {
    "bytes_to_unicode": "bytes_to_unicode() -> {byte: char}, GPT-2's table",
    "train": "train({tuple of symbols: count}, num_merges) -> [(left, right), ...]; ties go to the smallest pair",
    "encode_word": "encode_word(symbols, ranks) -> tokens: join the adjacent pair whose join ranks lowest, repeat",
    "encode": "encode(text, ranks) -> IDs: GPT-2's chunks, their UTF-8 bytes as characters, encode_word",
    "decode": "decode(ids, ranks) -> text",
    "wordpiece": "wordpiece(word, vocab, unk='[UNK]') -> pieces, longest first, '##' after the first",
    "viterbi": "viterbi(text, logp) -> (pieces, log probability); ties keep the earliest start of the last piece",
    "forward": "forward(text, logp) -> log P(text), summed over every segmentation",
    "segment": "segment(text, logp) -> pieces, with '<0xXX>' byte pieces for characters that are not pieces",
    "decode_pieces": "decode_pieces(pieces) -> text",
    "fertility": "fertility(n_tokens, text, unit) -> tokens per unit, unit 'bytes' or 'chars'",
    "bits_per_byte": "bits_per_byte(nll_nats, text) -> bits per UTF-8 byte",
    "extend": "extend(ranks, tokens) -> new ranks, each new token after every old ID",
    "regression": "regression(old_ranks, new_ranks, texts) -> list of problems, [] if none",
    "grow_rows": "grow_rows(rows, {new_id: [old_id, ...]}) -> None: append mean rows in place",
}

#: The functions each invariant calls, by label.
IMPL_NAMES: dict[str, tuple[str, ...]] = {
    "D01": ("bytes_to_unicode", "encode", "decode"),
    "D02": ("train", "encode_word", "encode"),
    "D03": ("wordpiece",),
    "D04": ("viterbi", "forward"),
    "D05": ("segment", "decode_pieces"),
    "D06": ("encode",),
    "D07": ("fertility", "bits_per_byte"),
    "D08": ("extend", "regression", "grow_rows", "encode"),
}


def load_impl(path: str | Path) -> ModuleType:
    """Import the Python file at ``path`` as a module; ValueError with one line if it cannot be imported."""
    path = Path(path)
    if path.suffix != ".py" or not path.is_file():
        raise ValueError(f"{path} is not a Python file")
    name = f"toklab_impl_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # as an import would: dataclasses and pickle look the module up there
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - whatever the reader's file raises, in one line
        del sys.modules[name]
        raise ValueError(f"importing {path} raised {type(exc).__name__}: {exc}") from None
    return module


def missing_names(module: ModuleType, labels: tuple[str, ...] = tuple(IMPL_NAMES)) -> list[str]:
    """The functions the checks ``labels`` call that ``module`` does not define, in `IMPL_SIGNATURES` order."""
    needed = {name for label in labels for name in IMPL_NAMES[label]}
    return [name for name in IMPL_SIGNATURES if name in needed and not callable(getattr(module, name, None))]


def _gpt2_ranks(merges=()) -> dict[str, int]:
    ranks = {char: i for i, char in enumerate(unicode.bytes_to_unicode().values())}
    for left, right in merges:
        ranks.setdefault(left + right, len(ranks))
    return ranks


def _gpt2_words(text: str) -> Counter:
    return Counter(tuple(unicode.to_proxy(chunk.encode("utf-8"))) for chunk in patterns.split(text, "gpt2"))


def _plain_lines(text: str) -> list[str]:
    """Lines every faithful GPT-2 chunker splits alike (no ², no U+001C-U+001F, nothing newer than Python's Unicode)."""
    def plain(char: str) -> bool:
        return unicodedata.category(char) not in ("No", "Nl", "Cn") and not "\x1c" <= char <= "\x1f"
    return [line for line in text.splitlines(keepends=True) if all(map(plain, line))]


def _expect(what: str, got, expected) -> None:
    assert got == expected, f"{what} gave {got!r}, expected {expected!r}"


def impl_bijection(impl: _Calls) -> str:
    table, want = dict(impl.bytes_to_unicode()), unicode.bytes_to_unicode()
    wrong = next((b for b in range(256) if table.get(b) != want[b]), None)
    assert wrong is None, f"bytes_to_unicode()[{wrong}] is {table.get(wrong)!r}; in GPT-2's table it is {want[wrong]!r}"
    assert len(table) == 256, f"bytes_to_unicode() has {len(table)} entries, not 256"
    ranks = _gpt2_ranks()
    for text in (ROUND_TRIP, corpus.held_out("mixed", 20_000, 3_000)):
        ids = impl.encode(text, ranks)
        _expect(f"with no merges, len(encode({text[:20]!r}...))", len(ids), len(text.encode("utf-8")))
        _expect(f"decode(encode({text[:20]!r}...))", impl.decode(ids, ranks), text)
    return "GPT-2's table; with no merges one token a byte, and texts round-trip"


def impl_train_vs_encode(impl: _Calls) -> str:
    words = {tuple("abab"): 3, tuple("abac"): 1}
    _expect("train({abab: 3, abac: 1}, 3)", impl.train(words, 3), [("a", "b"), ("ab", "ab"), ("a", "c")])
    for symbols, merges, tokens in (("abcbc", [("a", "b"), ("b", "c")], ["ab", "c", "bc"]),
                                    ("abc", [("b", "c"), ("a", "b")], ["a", "bc"]), ("aaa", [("a", "a")], ["aa", "a"])):
        _expect(f"encode_word({symbols!r}) with merges {merges}", impl.encode_word(list(symbols), _gpt2_ranks(merges)),
                tokens)
    words = _gpt2_words("\n".join(corpus.load(name, 4_000) for name in ("en", "zh", "code")))
    _expect("train on 12 kB of English, Chinese and code (40 merges)", impl.train(words, 40),
            bpe.reference_train(words, 40))
    spec = vocabs.load("r50k_base")
    ranks, real = {unicode.to_proxy(t): i for t, i in spec.ranks.items()}, ByteBPE.from_tiktoken("r50k_base")
    lines = _plain_lines(corpus.held_out("en", 30_000, 3_000) + corpus.held_out("code", 30_000, 3_000))
    for line in lines:
        _expect(f"encode({line!r}) with r50k_base's ranks", impl.encode(line, ranks), real.encode_ordinary(line))
    return f"abcbc -> ab c bc; merges as toklab's; {len(lines)} lines as r50k_base encodes them"


def impl_wordpiece(impl: _Calls) -> str:
    for vocab, expected in (({"a", "##b", "##bc"}, ["a", "##bc"]), ({"a", "##b"}, ["[UNK]"]),
                            ({"a", "ab", "##bc"}, ["[UNK]"])):
        _expect(f"wordpiece('abc', {sorted(vocab)})", impl.wordpiece("abc", vocab), expected)
    rng = random.Random(2007)
    for _ in range(300):
        vocab = {"".join(rng.choice("ab") for _ in range(rng.randint(1, 3))) for _ in range(4)}
        vocab |= {"##" + "".join(rng.choice("ab") for _ in range(rng.randint(1, 3))) for _ in range(4)}
        word = "".join(rng.choice("ab") for _ in range(rng.randint(1, 7)))
        _expect(f"wordpiece({word!r}, {sorted(vocab)})", impl.wordpiece(word, vocab),
                wordpiece.reference.encode_word(word, vocab))
    return "abc -> a ##bc, or [UNK] twice; 300 random words as toklab's"


def impl_unigram(impl: _Calls) -> str:
    probs = {"a": 0.15, "b": 0.15, "ab": 0.40, "aba": 0.20, "bab": 0.10}
    logp = {p: math.log(v) for p, v in probs.items()}
    pieces, score = impl.viterbi("abab", logp)
    assert pieces == ["ab", "ab"] and math.isclose(score, math.log(0.16)), f"viterbi('abab') gave {pieces}, {score}"
    total = impl.forward("abab", logp)
    assert math.isclose(total, math.log(0.22350625)), f"forward('abab') gave {total}, expected log 0.22350625"
    rng = random.Random(2008)
    for _ in range(200):
        table = {"a": 0.2, "b": 0.2} | {"".join(rng.choice("ab") for _ in range(rng.randint(2, 4))): rng.random()
                                        for _ in range(4)}
        logp = {p: math.log(v) for p, v in table.items()}
        text = "".join(rng.choice("ab") for _ in range(rng.randint(1, 9)))
        best = unigram.reference_viterbi(text, logp)
        got = impl.viterbi(text, logp)
        assert got[0] == best and math.isclose(got[1], sum(logp[p] for p in best)), f"viterbi({text!r}) gave {got}"
        want = math.log(unigram.reference_forward(text, table)[-1])
        assert math.isclose(impl.forward(text, logp), want), f"forward({text!r}) is not log {math.exp(want)}"
    logp = {"a": math.log(0.01), "b": math.log(0.01), "ab": math.log(0.001)}
    want = unigram.Unigram(logp).marginal_likelihood("ab" * 150)  # about e^-1020: 0.0 as a float
    got = impl.forward("ab" * 150, logp)
    assert math.isclose(got, want), f"forward('abab...', 300 characters) gave {got}, expected {want:.6g}: log space?"
    return f"0.16 and 0.22350625; 200 random texts as toklab's; log P = {want:.0f}, no underflow"


def impl_coverage_vs_fidelity(impl: _Calls) -> str:
    logp = {char: math.log(1 / 3) for char in "A1 "}
    _expect("segment('A 龘')", impl.segment("A 龘", logp), ["A", " ", "<0xE9>", "<0xBE>", "<0x98>"])
    lost = impl.decode_pieces(impl.segment(unicodedata.normalize("NFKC", "Ａ①"), logp))
    _expect("decode_pieces(segment(NFKC('Ａ①')))", lost, "A1")
    rng = random.Random(2009)
    logp = {p: math.log(v) for p, v in {"a": 0.3, "b": 0.3, "ab": 0.2, " ": 0.1, "é": 0.1}.items()}
    model = unigram.Unigram(logp, byte_fallback=True)
    for _ in range(200):
        text = "".join(rng.choice("ab é龘🙂\x00") for _ in range(rng.randint(1, 8)))
        pieces = impl.segment(text, logp)
        _expect(f"segment({text!r})", pieces, model.viterbi(text))
        _expect(f"decode_pieces(segment({text!r}))", impl.decode_pieces(pieces), text)
    return "龘 -> 3 byte pieces and back, Ａ① -> A1; 200 random texts as toklab's, round-tripping"


def impl_prefix_instability(impl: _Calls) -> str:
    ranks = _gpt2_ranks([("a", "b"), ("ab", "c")])
    short, full = impl.encode("ab", ranks), impl.encode("abc", ranks)
    _expect("encode('ab'), encode('abc') with merges a+b, ab+c", (short, full), ([256], [257]))
    return "encode('ab') = [ab] does not start encode('abc') = [abc]"


def impl_measures(impl: _Calls) -> str:
    for name in ("en", "zh", "mixed"):
        text = corpus.held_out(name, 20_000, 2_000)
        for unit in ("bytes", "chars"):
            want = 1000 / metrics.count_units(text, unit)
            assert math.isclose(impl.fertility(1000, text, unit), want), f"fertility per {unit} on {name} is off"
        want = metrics.bits_per_byte(1234.5, metrics.count_units(text, "bytes"))
        assert math.isclose(impl.bits_per_byte(1234.5, text), want), f"bits_per_byte on {name} is not {want:.4f}"
    bpb = impl.bits_per_byte(4.0, "8 bytes!")
    assert math.isclose(bpb, 4.0 / (8 * math.log(2))), f"bits_per_byte(4.0, 8 bytes) gave {bpb}, expected 0.7213"
    return "per byte, per character and BPB as toklab.measure.metrics; 4.0 nats / 8 bytes = 0.7213"


def impl_extension(impl: _Calls) -> str:
    sample = corpus.load("en", 6_000)
    merges = bpe.reference_train(_gpt2_words(sample), 81)
    old = _gpt2_ranks(merges[:80])
    word, special = "".join(merges[80]), "<|tool|>"
    new = impl.extend(old, [word, special])
    _expect("extend(...) for two new tokens", new, old | {word: len(old), special: len(old) + 1})
    texts = sample.splitlines()[:60] + [special + " as text", ROUND_TRIP]
    _expect("regression of a good extension", impl.regression(old, new, texts), [])
    assert new[word] in [i for t in texts for i in impl.encode(t, new)], f"the new token {word!r} is never used"
    moved = {t: i + (i >= 300) for t, i in old.items()} | {special: 300}
    assert impl.regression(old, moved, texts), "regression did not notice that every ID from 300 on moved"
    rows = head = [[float(i), float(i % 7)] for i in range(len(old))]
    source = impl.encode(" call a tool", old)
    impl.grow_rows(rows, {len(old): source})
    mean = [sum(rows[i][k] for i in source) / len(source) for k in (0, 1)]
    assert rows is head and len(rows) == len(old) + 1 and rows[-1] == mean, "grow_rows: not one mean row, in place"
    return f"{len(texts)} texts as before with {word!r} added; moved IDs caught; mean row, tied head"


_IMPL_CHECKS = (impl_bijection, impl_train_vs_encode, impl_wordpiece, impl_unigram, impl_coverage_vs_fidelity,
                impl_prefix_instability, impl_measures, impl_extension)


class _Calls:
    """A module whose functions, when they raise, say which call raised (the check's failure then names it)."""

    def __init__(self, module: ModuleType) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Callable:
        function = getattr(self._module, name)

        def call(*args):
            try:
                return function(*args)
            except Exception as exc:  # noqa: BLE001 - the reader's code may raise anything
                shown = ", ".join(r if len(r := repr(a)) <= 40 else r[:37] + "..." for a in args)
                raise AssertionError(f"{name}({shown}) raised {type(exc).__name__}: {exc}") from exc

        return call


def impl_invariants(module: ModuleType, labels: tuple[str, ...] | None = None) -> tuple[Invariant, ...]:
    """The eight invariants (or those in ``labels``, in that order) as checks of ``module``'s functions."""
    pairs = {inv.label: (inv, check) for inv, check in zip(INVARIANTS, _IMPL_CHECKS)}
    return tuple(Invariant(label, pairs[label][0].title, functools.partial(pairs[label][1], _Calls(module)))
                 for label in (labels or tuple(pairs)))
