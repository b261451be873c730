"""WordPiece and Unigram training, side by side: toklab against the real libraries.

Run from the repository root (``make bench`` runs it after ``benchmarks.run``)::

    python -m benchmarks.models            # full run, writes benchmarks/results_models.json + .md
    python -m benchmarks.models --quick    # smoke run on small inputs (under benchmarks/out/quick/)
    python -m benchmarks.models --out DIR  # write DIR/results_models.json and .md instead
    python -m benchmarks.models --list     # the rows, one case each

What is measured
----------------
* WordPiece training to vocab 8,000 on the whole bundled corpus (the four
  corpus files concatenated in the order en, zh, code, mixed), BERT clean-up
  with lowercasing: toklab ``wordpiece.train`` with ``score="frequency"`` (the
  objective HF's trainer uses) and with ``score="likelihood"`` (the textbook
  WordPiece score, a different objective), and Hugging Face ``tokenizers``'
  ``WordPieceTrainer`` (BertNormalizer + BertPreTokenizer). Each vocabulary
  then encodes the whole corpus (toklab's encoder, checked ID for ID against
  HF's own on HF's vocabulary).
* Unigram training to vocab 8,000 on the same corpus: toklab ``unigram.train``,
  ``sentencepiece`` (model_type unigram, num_threads=2) and HF's
  ``UnigramTrainer``, all three seeing the same words: no normalization, no
  dummy prefix, spaces escaped to U+2581 and words cut before it (the settings
  of ``toklab.sentencepiece.compare_with_sentencepiece``). Each model then encodes the
  corpus with its own encoder (tokens per byte) and is scored with toklab's
  lattice (Viterbi and marginal bits per byte); piece overlap (Jaccard).

Every row runs in its own fresh Python process, timed and measured by
``benchmarks/harness.py`` (see its docstring), as ``benchmarks.run``'s rows are.
The quality measurements are made afterwards, untimed, on the model each row
saved from its first run.
"""

from __future__ import annotations

import io
import json
import math
import sys
from collections import Counter
from functools import partial
from pathlib import Path

if not __package__:  # started as `python benchmarks/models.py`: make the `benchmarks` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import harness  # noqa: E402
from benchmarks.harness import Case, first_divergence, kb, nbytes  # noqa: E402

WP_SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")  # BERT's, as toklab.wordpiece.BERT_SPECIAL_TOKENS
UG_SPECIALS = ("<unk>", "<s>", "</s>")  # the unknown piece + the two control pieces sentencepiece adds
MAX_PIECE_LENGTH = 16  # all three Unigram trainers' default
SPM_THREADS = 2  # this machine has 2 cores; benchmarks.run's sentencepiece rows use 2 as well
HF_DOC_CHARS = 1 << 16  # HF WordPiece gets the corpus as ~64K-character documents cut after a newline


# ----------------------------------------------------------------------------
# Configuration and inputs (full and --quick)
# ----------------------------------------------------------------------------


def config(quick: bool) -> dict:
    if quick:
        return {"quick": True, "big_bytes_each": 60_000, "wp_vocab": 2_000, "ug_vocab": 2_000,
                "bench_bytes": 300_000, "runs_short": 1, "runs_long": 1}
    return {"quick": False, "big_bytes_each": None, "wp_vocab": 8_000, "ug_vocab": 8_000,
            "bench_bytes": None, "runs_short": 6, "runs_long": 3, "rounds": 3}


BENCH = ("wordpiece_bench", "unigram_bench")  # the same tasks on the larger benchmark corpus
UG_BENCH_EVERY = 3  # Unigram on the benchmark corpus: every 3rd block of 100 lines (about 3 MB)


def corpus_text(cfg: dict, group: str = "") -> str:
    """The bundled corpus (the four files concatenated), or for a bench group the larger benchmark corpus."""
    if group == "wordpiece_bench":
        return harness.bench_corpus(cfg["bench_bytes"])
    if group == "unigram_bench":
        return harness.bench_corpus(cfg["bench_bytes"], every=UG_BENCH_EVERY)
    return harness.whole_corpus(cfg["big_bytes_each"])


def corpus_lines(cfg: dict, group: str = "") -> list[str]:
    """Non-empty lines: what the Unigram trainers see (as in compare_with_sentencepiece)."""
    return [ln for ln in corpus_text(cfg, group).split("\n") if ln]


def saved_path(ctx: harness.Context, name: str) -> Path:
    """Where a row saves its model: bench groups get their own files (only the bundled ones are evaluated)."""
    return ctx.workdir / (f"bench_{name}" if ctx.case.group in BENCH else name)


def newline_docs(text: str, size: int = HF_DOC_CHARS) -> list[str]:
    """Cut text into ~size-character documents just after a newline (whitespace: the words cannot change)."""
    out, start = [], 0
    while start < len(text):
        cut = text.find("\n", start + size)
        cut = len(text) if cut < 0 else cut + 1
        out.append(text[start:cut])
        start = cut
    assert "".join(out) == text
    return out


def workload_names(cfg: dict) -> dict[str, str]:
    b = nbytes(corpus_text(cfg))
    wb, ub = nbytes(corpus_text(cfg, "wordpiece_bench")), nbytes(corpus_text(cfg, "unigram_bench"))
    return {
        "wordpiece": f"WordPiece vocab {cfg['wp_vocab']:,}, lowercase, whole corpus {kb(b)}",
        "unigram": f"Unigram vocab {cfg['ug_vocab']:,}, whole corpus {kb(b)}",
        "wordpiece_bench": f"WordPiece vocab {cfg['wp_vocab']:,}, lowercase, benchmark corpus {kb(wb)}",
        "unigram_bench": f"Unigram vocab {cfg['ug_vocab']:,}, benchmark corpus slice {kb(ub)}",
    }


# ----------------------------------------------------------------------------
# Building the HF objects (shared by the workloads and the evaluation)
# ----------------------------------------------------------------------------


def hf_bert_wordpiece():
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    tk = Tokenizer(models.WordPiece({"[UNK]": 0}, unk_token="[UNK]"))
    tk.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=None, handle_chinese_chars=True,
                                               clean_text=True)
    tk.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return tk


def hf_metaspace():
    """Spaces -> U+2581, words cut before it, no dummy prefix: sentencepiece's split under our options."""
    from tokenizers import pre_tokenizers

    return pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="never", split=True)


def hf_vocab_list(tk) -> list[str]:
    items = sorted(tk.get_vocab().items(), key=lambda kv: kv[1])
    assert [i for _, i in items] == list(range(len(items))), "HF vocabulary IDs are not 0..n-1"
    return [t for t, _ in items]


# ----------------------------------------------------------------------------
# Workloads: one function per kind of row, run in the row's own process; each saves
# the model of its first run into the work directory for the untimed evaluation
# ----------------------------------------------------------------------------


def wordpiece_toklab(ctx: harness.Context, score: str) -> dict:
    from toklab import wordpiece

    text, size = corpus_text(ctx.cfg, ctx.case.group), ctx.cfg["wp_vocab"]
    vocab = ctx.measure(
        lambda: wordpiece.train(text, size, special_tokens=WP_SPECIALS, score=score, lowercase=True),
        check=lambda tok: [tok.id_to_token(i) for i in range(len(tok))],
    )
    impl = ctx.case.name.split("/")[1]
    saved_path(ctx, f"wp_{impl}.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    return {"vocab_size": len(vocab)}


def wordpiece_hf(ctx: harness.Context) -> dict:
    from tokenizers import trainers

    docs, size = newline_docs(corpus_text(ctx.cfg, ctx.case.group)), ctx.cfg["wp_vocab"]

    def job():
        tk = hf_bert_wordpiece()
        trainer = trainers.WordPieceTrainer(vocab_size=size, special_tokens=list(WP_SPECIALS), show_progress=False)
        tk.train_from_iterator(docs, trainer=trainer)
        return tk

    def save(tk):
        tk.save(str(saved_path(ctx, "wp_hf_tokenizer.json")))
        return hf_vocab_list(tk)

    vocab = ctx.measure(job, check=save)
    saved_path(ctx, "wp_hf.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    return {"vocab_size": len(vocab), "documents": len(docs)}


def unigram_toklab(ctx: harness.Context) -> dict:
    from toklab import unigram
    from toklab.base.pieces import escape

    lines, size = corpus_lines(ctx.cfg, ctx.case.group), ctx.cfg["ug_vocab"]

    def job():
        escaped = [escape(ln) for ln in lines]
        return unigram.train(escaped, size, special_tokens=UG_SPECIALS[1:], unk_piece=UG_SPECIALS[0],
                             max_piece_length=MAX_PIECE_LENGTH)

    def save(model):
        saved = {"vocab": model.get_vocab(), "pieces": list(model.pieces.items())}
        saved_path(ctx, "ug_toklab.json").write_text(json.dumps(saved, ensure_ascii=False), encoding="utf-8")
        return len(model)

    return {"vocab_size": ctx.measure(job, check=save), "lines": len(lines)}


def unigram_spm(ctx: harness.Context) -> dict:
    import sentencepiece as spm

    from toklab.sentencepiece import SENTENCEPIECE_OPTIONS

    lines, size = corpus_lines(ctx.cfg, ctx.case.group), ctx.cfg["ug_vocab"]

    def job():
        buf = io.BytesIO()
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines), model_writer=buf, vocab_size=size,
            max_sentencepiece_length=MAX_PIECE_LENGTH, num_threads=SPM_THREADS, **SENTENCEPIECE_OPTIONS,
        )
        return buf.getvalue()

    def save(proto):
        saved_path(ctx, "ug_spm.model").write_bytes(proto)
        return spm.SentencePieceProcessor(model_proto=proto).get_piece_size()

    return {"vocab_size": ctx.measure(job, check=save), "lines": len(lines)}


def unigram_hf(ctx: harness.Context) -> dict:
    from tokenizers import Tokenizer, models, trainers

    lines, size = corpus_lines(ctx.cfg, ctx.case.group), ctx.cfg["ug_vocab"]

    def job():
        tk = Tokenizer(models.Unigram())
        tk.pre_tokenizer = hf_metaspace()
        trainer = trainers.UnigramTrainer(
            vocab_size=size, special_tokens=list(UG_SPECIALS), unk_token=UG_SPECIALS[0],
            max_piece_length=MAX_PIECE_LENGTH, show_progress=False,
        )
        tk.train_from_iterator(lines, trainer=trainer)
        return tk

    def save(tk):
        tk.save(str(saved_path(ctx, "ug_hf_tokenizer.json")))
        return tk.get_vocab_size()

    return {"vocab_size": ctx.measure(job, check=save), "lines": len(lines)}


# ----------------------------------------------------------------------------
# The rows
# ----------------------------------------------------------------------------

WP, UG = ("toklab.wordpiece",), ("toklab.unigram",)
SPM_LABEL = f"sentencepiece (num_threads={SPM_THREADS})"
CASES = [
    Case("wordpiece/toklab_freq", "wordpiece", "toklab wordpiece.train (frequency)", "wordpiece.train, "
         "score=frequency (HF's objective), from raw text", partial(wordpiece_toklab, score="frequency"),
         runs="short", sources=WP),
    Case("wordpiece/toklab_lik", "wordpiece", "toklab wordpiece.train (likelihood)", "wordpiece.train, "
         "score=likelihood (the textbook score), from raw text", partial(wordpiece_toklab, score="likelihood"),
         runs="short", sources=WP),
    Case("wordpiece/hf", "wordpiece", "HF WordPieceTrainer", "WordPieceTrainer with BertNormalizer and "
         "BertPreTokenizer", wordpiece_hf, runs="short", baseline=True),
    Case("unigram/toklab", "unigram", "toklab unigram.train", "escape + unigram.train on the lines",
         unigram_toklab, runs="long", sources=UG),
    Case("unigram/spm", "unigram", SPM_LABEL, "SentencePieceTrainer, model_type=unigram, from a sentence iterator",
         unigram_spm, runs="long"),
    Case("unigram/hf", "unigram", "HF UnigramTrainer", "UnigramTrainer with Metaspace pre-tokenization",
         unigram_hf, runs="long", baseline=True),
    Case("wordpiece_bench/toklab_freq", "wordpiece_bench", "toklab wordpiece.train (frequency)", "wordpiece.train, "
         "score=frequency (HF's objective), from raw text", partial(wordpiece_toklab, score="frequency"),
         runs="short", sources=WP),
    Case("wordpiece_bench/hf", "wordpiece_bench", "HF WordPieceTrainer", "WordPieceTrainer with BertNormalizer and "
         "BertPreTokenizer", wordpiece_hf, runs="short", baseline=True),
    Case("unigram_bench/toklab", "unigram_bench", "toklab unigram.train", "escape + unigram.train on the lines",
         unigram_toklab, runs="long", sources=UG),
    Case("unigram_bench/spm", "unigram_bench", SPM_LABEL, "SentencePieceTrainer, model_type=unigram, from a "
         "sentence iterator", unigram_spm, runs="long"),
    Case("unigram_bench/hf", "unigram_bench", "HF UnigramTrainer", "UnigramTrainer with Metaspace pre-tokenization",
         unigram_hf, runs="long", baseline=True),
]


# ----------------------------------------------------------------------------
# Input checks and quality measurements (untimed, after the rows)
# ----------------------------------------------------------------------------


def check_inputs(cfg: dict) -> dict:
    """The claims the setup rests on: HF sees the same words as toklab in both tasks."""
    from toklab import wordpiece
    from toklab.base.pieces import escape
    from toklab.pre_tokenizers import split_words

    text = corpus_text(cfg)
    same_wp = wordpiece.word_counts(newline_docs(text)) == wordpiece.word_counts(text)
    split = hf_metaspace()
    lines = corpus_lines(cfg)
    same_ug = all(
        [w for w, _ in split.pre_tokenize_str(ln)] == split_words(escape(ln))
        for ln in lines
    )
    return {"wordpiece_docs_same_words": same_wp, "unigram_hf_split_same_words": same_ug}


def evaluate_wordpiece(cfg: dict, workdir: Path) -> dict:
    from tokenizers import Tokenizer

    from toklab import wordpiece

    text = corpus_text(cfg)
    size = nbytes(text)
    vocabs = {impl: json.loads((workdir / f"wp_{impl}.json").read_text("utf-8"))
              for impl in ("toklab_freq", "toklab_lik", "hf")}
    out: dict = {"bytes": size}
    ids_of: dict[str, list[int]] = {}
    for impl, vocab in vocabs.items():
        tok = wordpiece.WordPiece(vocab, unk_token="[UNK]", lowercase=True)
        ids = ids_of[impl] = tok.encode(text)
        out[impl] = {"vocab_size": len(vocab), "tokens": len(ids), "tokens_per_byte": len(ids) / size,
                     "unk_tokens": sum(i == tok.unk_id for i in ids)}
    hf_vocab = set(vocabs["hf"])
    for impl in ("toklab_freq", "toklab_lik"):
        mine = vocabs[impl]
        out[impl]["shared_with_hf"] = len(set(mine) & hf_vocab)
        out[impl]["same_id_as_hf"] = sum(a == b for a, b in zip(mine, vocabs["hf"]))
        div = first_divergence(mine, vocabs["hf"])
        out[impl]["first_id_differing_from_hf"] = div
    # HF's own encoder on its own vocabulary: toklab's encoder must give the same IDs.
    hf_tok = Tokenizer.from_file(str(workdir / "wp_hf_tokenizer.json"))
    hf_ids = hf_tok.encode(text, add_special_tokens=False).ids
    out["hf"]["tokens_hf_encoder"] = len(hf_ids)
    out["hf"]["toklab_encoder_identical"] = hf_ids == ids_of["hf"]
    # HF numbers its ## characters in Rust HashMap order (seeded per process). Given HF's initial
    # order, toklab's frequency trainer must rebuild HF's vocabulary exactly.
    counts = wordpiece.word_counts(text, lowercase=True)
    n_initial = len(wordpiece.initial_vocab(counts, WP_SPECIALS))
    rebuilt = wordpiece.train_vocab(counts, cfg["wp_vocab"], special_tokens=WP_SPECIALS, score="frequency",
                                    initial=vocabs["hf"][:n_initial])
    out["toklab_freq"]["initial_entries"] = n_initial
    out["toklab_freq"]["hf_order_identical"] = rebuilt == vocabs["hf"]
    if rebuilt != vocabs["hf"]:
        out["toklab_freq"]["hf_order_first_difference"] = first_divergence(rebuilt, vocabs["hf"])
    return out


def evaluate_unigram(cfg: dict, workdir: Path) -> dict:
    import sentencepiece as spm
    from tokenizers import Tokenizer

    from toklab import Unigram
    from toklab.base.pieces import escape
    from toklab.pre_tokenizers import split_words
    from toklab.sentencepiece import load_unigram
    from toklab.sentencepiece.compare import normalised_log_likelihood

    lines = corpus_lines(cfg)
    escaped = [escape(ln) for ln in lines]
    words = Counter(w for ln in escaped for w in split_words(ln))
    size = sum(nbytes(ln) for ln in lines)
    bits = size * math.log(2)

    saved = json.loads((workdir / "ug_toklab.json").read_text("utf-8"))
    ours = Unigram([tuple(p) for p in saved["pieces"]], unk_piece=UG_SPECIALS[0], special_tokens=UG_SPECIALS[1:])
    assert ours.get_vocab() == saved["vocab"], "reloaded toklab model differs from the trained one"
    proto = (workdir / "ug_spm.model").read_bytes()
    sp = spm.SentencePieceProcessor(model_proto=proto)
    theirs = load_unigram(proto)
    hf_tok = Tokenizer.from_file(str(workdir / "ug_hf_tokenizer.json"))
    hf_json = json.loads(hf_tok.to_str())["model"]
    hf_model = Unigram([(p, s) for p, s in hf_json["vocab"] if p not in UG_SPECIALS],
                       unk_piece=UG_SPECIALS[0], special_tokens=UG_SPECIALS[1:])

    encoded = {
        "toklab": ([ours.encode(ln) for ln in escaped], ours.unk_id),
        "spm": (sp.encode(lines), sp.unk_id()),
        "hf": ([e.ids for e in hf_tok.encode_batch(lines, add_special_tokens=False)], hf_json["unk_id"]),
    }
    tokens = {impl: sum(map(len, seqs)) for impl, (seqs, _) in encoded.items()}
    unk = {impl: sum(ids.count(u) for ids in seqs) for impl, (seqs, u) in encoded.items()}
    del encoded
    models = {"toklab": ours, "spm": theirs, "hf": hf_model}
    out: dict = {"bytes": size, "lines": len(lines), "distinct_words": len(words)}
    for impl, model in models.items():
        # toklab's scorer: scores renormalised over each model's ordinary pieces, natural logs.
        v_ll, m_ll = normalised_log_likelihood(model, words)
        out[impl] = {
            "entries": len(model),
            "pieces": len(model.pieces),
            "tokens": tokens[impl],
            "tokens_per_byte": tokens[impl] / size,
            "unk_tokens": unk[impl],
            "viterbi_bits_per_byte": -v_ll / bits,
            "marginal_bits_per_byte": -m_ll / bits,
        }
    # Characters of the lines that a model has no piece for (its encoder emits the unknown piece there).
    chars = Counter(ch for ln in escaped for ch in ln)
    line_end = Counter(ln[-1] for ln in escaped)
    for impl, model in models.items():
        missing = sorted((ch for ch in chars if ch not in model.pieces), key=lambda ch: (-chars[ch], ch))
        out[impl]["uncovered_chars"] = [
            {"char": f"U+{ord(ch):04X}", "count": chars[ch], "at_line_end": line_end[ch]} for ch in missing
        ]
    sets = {impl: set(m.pieces) for impl, m in models.items()}
    for a, b in (("toklab", "spm"), ("hf", "spm"), ("toklab", "hf")):
        shared = len(sets[a] & sets[b])
        out[f"overlap_{a}_{b}"] = {"shared": shared, "jaccard": shared / len(sets[a] | sets[b])}
    return out


# ----------------------------------------------------------------------------
# Report: quality columns, notes, targets, the two tables
# ----------------------------------------------------------------------------


def report(cfg: dict, rows: list[dict], results: dict[str, harness.Result], workdir: Path) -> harness.Report:
    harness.log("evaluating the trained models (untimed) ...")
    inputs = check_inputs(cfg)
    wp_q = evaluate_wordpiece(cfg, workdir)
    ug_q = evaluate_unigram(cfg, workdir)
    by = {r["case"]: r for r in rows}
    for row in rows:
        row["quality"] = {}

    # ---- WordPiece
    for impl in ("toklab_freq", "toklab_lik", "hf"):
        q = dict(wp_q[impl])
        q["tokens_per_byte"] = round(q["tokens_per_byte"], 5)
        by[f"wordpiece/{impl}"]["quality"] = q
    f, lik, h = wp_q["toklab_freq"], wp_q["toklab_lik"], wp_q["hf"]
    v = cfg["wp_vocab"]
    by["wordpiece/toklab_freq"]["note"] = (
        f"score=\"frequency\" (pair count, HF's objective), min_frequency=1, BERT's 5 specials; pure Python; "
        f"time includes normalization and word counting; {f['shared_with_hf']:,} of {v:,} entries shared with "
        f"this run's HF vocabulary, {f['same_id_as_hf']:,} at the same ID. HF numbers the {f['initial_entries']:,} "
        "initial entries' ## forms in Rust HashMap order, which is seeded randomly per process, so ties and IDs "
        "differ from run to run and exact equality across processes is not expected; re-trained untimed with "
        f"HF's initial order, toklab's vocabulary is {'identical to' if f['hf_order_identical'] else 'NOT identical to'} "
        "HF's, ID for ID"
    )
    by["wordpiece/toklab_lik"]["note"] = (
        f"score=\"likelihood\" (f(xy)/(f(x)f(y)), the textbook WordPiece score: a different objective, so a "
        f"different vocabulary; {lik['shared_with_hf']:,} of {v:,} entries shared with HF's), min_frequency=1; "
        "with min_frequency=1 many merges go to pairs of rare symbols that only occur together, hence more tokens"
    )
    by["wordpiece/hf"]["note"] = (
        f"Tokenizer(models.WordPiece) + BertNormalizer(lowercase) + BertPreTokenizer, WordPieceTrainer("
        f"vocab_size={v:,}, BERT's 5 specials, show_progress=False); Rust, multi-threaded (both cores); text fed "
        f"as {results['wordpiece/hf'].facts['documents']} documents cut after newlines "
        f"({'same word counts as the whole text' if inputs['wordpiece_docs_same_words'] else 'WORD COUNTS DIFFER from the whole text'}); "
        f"tokens counted with toklab's WordPiece encoder, which gives "
        f"{'the same IDs as' if h['toklab_encoder_identical'] else 'DIFFERENT IDs from'} HF's own encoder on this vocabulary"
    )

    # ---- Unigram
    for impl in ("toklab", "spm", "hf"):
        q = {k: (round(x, 5) if isinstance(x, float) else x) for k, x in ug_q[impl].items()}
        q["jaccard_with_spm"] = (1.0 if impl == "spm" else
                                 round(ug_q[f"overlap_{impl}_spm"]["jaccard"], 4))
        q["shared_with_spm"] = (ug_q["spm"]["pieces"] if impl == "spm" else ug_q[f"overlap_{impl}_spm"]["shared"])
        by[f"unigram/{impl}"]["quality"] = q
    uv = cfg["ug_vocab"]

    def uncovered(impl: str) -> str:
        miss = ug_q[impl]["uncovered_chars"]
        if not miss:
            return "every character of the lines has a piece"
        shown = ", ".join(f"{m['char']} {m['count']:,} times, {m['at_line_end']:,} of them at the end of a line"
                          for m in miss[:5])
        return (f"{len(miss)} character(s) of the lines have no piece, so its encoder emits <unk> there ({shown}"
                f"{', ...' if len(miss) > 5 else ''}); toklab's bits/byte scores them at the model's unknown score "
                f"(lowest piece score - 10, sentencepiece's rule)")

    common = (f"vocab_size={uv:,} = <unk> + <s> + </s> + ordinary pieces; max piece length {MAX_PIECE_LENGTH}")
    by["unigram/toklab"]["note"] = (
        f"unigram.train on the lines with ' ' escaped to U+2581 (escaping inside the timed call), words cut before "
        f"U+2581, em_iters=2, shrink=0.75, digamma M-step; Python + numpy, single thread; {common}; {uncovered('toklab')}"
    )
    by["unigram/spm"]["note"] = (
        f"SentencePieceTrainer.train(model_type=unigram, num_threads={SPM_THREADS}, identity normalization, "
        "add_dummy_prefix=False, remove_extra_whitespaces=False, split_by_whitespace=True, split_by_unicode_script="
        "False, split_by_number=False, character_coverage=1.0, shuffle_input_sentence=False) from a sentence "
        f"iterator (toklab.sentencepiece.SENTENCEPIECE_OPTIONS, as compare_with_sentencepiece but with "
        f"{SPM_THREADS} threads instead of 1); C++; {common}; {uncovered('spm')}"
    )
    by["unigram/hf"]["note"] = (
        "Tokenizer(models.Unigram) + Metaspace(prepend_scheme=never, split=True), no normalizer, "
        f"UnigramTrainer(shrinking_factor 0.75, n_sub_iterations 2: defaults, show_progress=False); Rust, "
        f"multi-threaded (both cores); {common}; its word split equals toklab's on "
        f"{'every' if inputs['unigram_hf_split_same_words'] else 'NOT every'} line; {uncovered('hf')}"
    )
    for group in BENCH:
        for case in (c for c in CASES if c.group == group):
            bundled = by[case.name.replace("_bench/", "/")]["note"]
            by[case.name]["note"] = f"as on the whole corpus ({bundled.split(';')[0]}); not evaluated for quality"
    ug = ug_q  # the Unigram evaluation, shown under the table
    sections = [
        f"## WordPiece: {by['wordpiece/hf']['workload']}",
        "",
        *table_lines(rows, "wordpiece"),
        "",
        "ratio = median time / HF WordPieceTrainer's median time in this run. tokens = the whole corpus encoded "
        "with each vocabulary (toklab's WordPiece encoder, BERT clean-up, lowercase, no [CLS]/[SEP]); tokens/byte "
        "per UTF-8 byte of the raw corpus. shared with HF = entries also in this run's HF vocabulary.",
        "",
        f"## Unigram: {by['unigram/hf']['workload']}",
        "",
        *table_lines(rows, "unigram"),
        "",
        f"ratio = median time / HF UnigramTrainer's median time in this run. tokens = the {ug['lines']:,} non-empty "
        f"training lines ({ug['bytes']:,} UTF-8 bytes, newlines excluded) encoded by each model's own encoder "
        "(toklab `Unigram.encode`, `SentencePieceProcessor.encode`, HF `encode_batch`). bits/byte = minus the log2 "
        "likelihood of those lines per byte under each model's scores renormalised over its ordinary pieces, "
        "computed by toklab's lattice for all three (Viterbi: the best segmentation; marginal: summed over all "
        "segmentations). Jaccard = |A∩B| / |A∪B| of the ordinary pieces with sentencepiece's. "
        f"Other overlaps: toklab vs HF Jaccard {ug['overlap_toklab_hf']['jaccard']:.3f} "
        f"({ug['overlap_toklab_hf']['shared']:,} shared), HF vs sentencepiece "
        f"{ug['overlap_hf_spm']['jaccard']:.3f} ({ug['overlap_hf_spm']['shared']:,} shared).",
    ]
    sections += [
        "",
        "## The same tasks on the benchmark corpus",
        "",
        *bench_lines(rows),
        "",
        f"The benchmark corpus ({harness.bench_corpus_meta()['bytes']:,} bytes, built by `data/build_corpus.py "
        "--bench`): English docs, CPython standard-library source, Chinese and prose in nine other languages. "
        f"WordPiece trains on all of it, Unigram on every {UG_BENCH_EVERY}rd block of 100 lines. ratio = median "
        "time / the HF trainer's median time in this run.",
    ]
    notes = ["- Quality numbers are measured after all timed rows, untimed, on the model each row saved from its "
             "first run."]
    notes += [f"- *{r['impl']}*: {r['note']}." for r in rows if r["note"]]
    meta = {**harness.corpus_meta(cfg["big_bytes_each"]), "bench_corpus": harness.bench_corpus_meta(),
            "wordpiece_vocab": cfg["wp_vocab"],
            "unigram_vocab": cfg["ug_vocab"], "sentencepiece_threads": SPM_THREADS, "input_checks": inputs,
            "wordpiece_eval": wp_q, "unigram_eval": ug_q}
    return harness.Report(targets(rows, ug_q), meta, sections, notes)


def targets(rows: list[dict], ug_q: dict) -> list[dict]:
    by = {r["case"]: r for r in rows}
    ug_ours, ug_spm = by["unigram/toklab"], by["unigram/spm"]
    t_ours, t_sp = ug_q["toklab"]["tokens"], ug_q["spm"]["tokens"]
    gap = t_ours / t_sp
    bpb_ours, bpb_sp = ug_q["toklab"]["viterbi_bits_per_byte"], ug_q["spm"]["viterbi_bits_per_byte"]
    out = [
        {
            "name": "Unigram compression within 1% of sentencepiece",
            "workload": ug_ours["workload"],
            "measured": round(gap, 4),
            "threshold": 1.01,
            "unit": "x sentencepiece's token count",
            "pass": gap <= 1.01,
            "note": f"{t_ours:,} vs {t_sp:,} tokens on the training lines ({gap - 1:+.2%}; fewer is better); "
            f"Viterbi bits per byte {bpb_ours:.4f} vs {bpb_sp:.4f}; piece Jaccard "
            f"{ug_q['overlap_toklab_spm']['jaccard']:.3f}",
        },
    ]
    for suffix, corpus_name in (("", "whole corpus"), ("_bench", "benchmark corpus")):
        ours, hf, sp = by[f"unigram{suffix}/toklab"], by[f"unigram{suffix}/hf"], by[f"unigram{suffix}/spm"]
        mem = ours["peak_mib"] / hf["peak_mib"]
        wp, wp_hf = by[f"wordpiece{suffix}/toklab_freq"], by[f"wordpiece{suffix}/hf"]
        out += [
            {"name": f"Unigram training no slower than HF UnigramTrainer ({corpus_name})", "workload": ours["workload"],
             "measured": ours["ratio"], "threshold": 1.0, "unit": "x HF wall time", "pass": ours["ratio"] <= 1.0,
             "note": f"toklab {ours['median_s']:.2f} s vs HF {hf['median_s']:.2f} s (medians of {ours['runs']} and "
                     f"{hf['runs']} runs); sentencepiece {sp['median_s']:.2f} s ({sp['ratio']:.2f}x HF)"},
            {"name": f"Unigram training memory within 1.5x of HF UnigramTrainer ({corpus_name})",
             "workload": ours["workload"], "measured": round(mem, 3), "threshold": 1.5,
             "unit": "x HF peak RSS increase", "pass": mem <= 1.5,
             "note": f"toklab {ours['peak_mib']:.0f} MiB vs HF {hf['peak_mib']:.0f} MiB above baseline"},
            {"name": f"WordPiece training no slower than HF WordPieceTrainer ({corpus_name})",
             "workload": wp["workload"], "measured": wp["ratio"], "threshold": 1.0, "unit": "x HF wall time",
             "pass": wp["ratio"] <= 1.0,
             "note": f"frequency (HF's objective) {wp['median_s']:.2f} s vs HF {wp_hf['median_s']:.2f} s"
                     + ("" if suffix else f"; likelihood {by['wordpiece/toklab_lik']['median_s']:.2f} s "
                        f"({by['wordpiece/toklab_lik']['ratio']:.2f}x HF, a different objective)")},
        ]
    return out


def bench_lines(rows: list[dict]) -> list[str]:
    body = [[r["workload"], r["impl"], harness.num(r["median_s"]), str(r["runs"]),
             "—" if r["peak_mib"] is None else f"{r['peak_mib']:.1f}", f"{harness.num(r['ratio'])}x HF"]
            for r in rows if r["task"] in BENCH]
    return harness.md_table(["workload", "implementation", "median s", "runs", "peak MiB", "ratio"], body, "llrrrr")


WP_HEAD = ["implementation", "median s", "runs", "peak MiB", "ratio", "vocab", "tokens", "tokens/byte", "[UNK]",
           "shared with HF"]
UG_HEAD = ["implementation", "median s", "runs", "peak MiB", "ratio", "pieces", "tokens", "tokens/byte",
           "Viterbi bits/byte", "marginal bits/byte", "Jaccard vs spm"]


def table_lines(rows: list[dict], task: str) -> list[str]:
    body = []
    for r in rows:
        if r["task"] != task:
            continue
        q = r["quality"]
        cells = [r["impl"], harness.num(r["median_s"]), str(r["runs"]),
                 "—" if r["peak_mib"] is None else f"{r['peak_mib']:.1f}", f"{harness.num(r['ratio'])}x HF"]
        if task == "wordpiece":
            shared = "—" if "shared_with_hf" not in q else f"{q['shared_with_hf']:,}"
            cells += [f"{q['vocab_size']:,}", f"{q['tokens']:,}", f"{q['tokens_per_byte']:.4f}",
                      f"{q['unk_tokens']:,}", shared]
        else:
            cells += [f"{q['pieces']:,}", f"{q['tokens']:,}", f"{q['tokens_per_byte']:.4f}",
                      f"{q['viterbi_bits_per_byte']:.4f}", f"{q['marginal_bits_per_byte']:.4f}",
                      f"{q['jaccard_with_spm']:.3f}"]
        body.append(cells)
    head = WP_HEAD if task == "wordpiece" else UG_HEAD
    return harness.md_table(head, body, "l" + "r" * (len(head) - 1))


SUITE = harness.Suite(
    module="benchmarks.models",
    output="results_models",
    title="toklab model-training benchmark results (WordPiece, Unigram)",
    description="WordPiece and Unigram training: toklab against HF tokenizers and sentencepiece, each row in a "
                "fresh process, then an untimed evaluation of the trained models.",
    cases=CASES,
    config=config,
    workloads=workload_names,
    report=report,
)

if __name__ == "__main__":
    raise SystemExit(harness.main(SUITE))
