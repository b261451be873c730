"""Side-by-side training benchmark for WordPiece and Unigram: toklab against the real libraries.

Run from the repository root (``make bench`` runs it after ``run.py``)::

    python benchmarks/models.py            # full run, writes benchmarks/results_models.json + .md
    python benchmarks/models.py --quick    # smoke run on small inputs (under benchmarks/out/quick/)
    python benchmarks/models.py --out PATH # write PATH (JSON) and PATH with suffix .md

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
  of ``toklab.unigram.compare_with_sentencepiece``). Each model then encodes the
  corpus with its own encoder (tokens per byte) and is scored with toklab's
  lattice (Viterbi and marginal bits per byte); piece overlap (Jaccard).

The method is ``run.py``'s, and its helpers are imported from it: every
(workload, implementation) pair runs in its own fresh Python process (this file
re-invoked with ``--worker``), which loads its inputs, resets the kernel's
peak-RSS mark, runs the job several times and reports wall times (median
reported) and the peak RSS of the first run above the RSS just before it. The
quality measurements are made afterwards, untimed, on the model each worker
saved from its first run.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import importlib.util
import io
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _load_run_module():
    """benchmarks/run.py as a module (it is a script, not a package member); its helpers are reused."""
    spec = importlib.util.spec_from_file_location("toklab_bench_run", HERE / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _load_run_module()
log, PeakMeter, nbytes, kb, num, fmt_row = bench.log, bench.PeakMeter, bench.nbytes, bench.kb, bench.num, bench.fmt_row
CORPUS_ORDER = bench.CORPUS_ORDER

WP_SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")  # BERT's, as toklab.wordpiece.BERT_SPECIAL_TOKENS
UG_SPECIALS = ("<unk>", "<s>", "</s>")  # the unknown piece + the two control pieces sentencepiece adds
MAX_PIECE_LENGTH = 16  # all three Unigram trainers' default
SPM_THREADS = 2  # this machine has 2 cores; run.py's sentencepiece rows use 2 as well
HF_DOC_CHARS = 1 << 16  # HF WordPiece gets the corpus as ~64K-character documents cut after a newline


# ----------------------------------------------------------------------------
# Configuration (full and --quick)
# ----------------------------------------------------------------------------


def config(quick: bool) -> dict:
    if quick:
        return {"quick": True, "big_bytes_each": 60_000, "wp_vocab": 2_000, "ug_vocab": 2_000,
                "runs_short": 1, "runs_long": 1}
    return {"quick": False, "big_bytes_each": None, "wp_vocab": 8_000, "ug_vocab": 8_000,
            "runs_short": 5, "runs_long": 3}


def corpus_text(cfg: dict) -> str:
    return bench.big_text(cfg)  # the four corpus files concatenated in CORPUS_ORDER


def corpus_lines(cfg: dict) -> list[str]:
    """Non-empty lines: what the Unigram trainers see (as in compare_with_sentencepiece)."""
    return [ln for ln in corpus_text(cfg).split("\n") if ln]


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
    return {
        "wordpiece": f"WordPiece vocab {cfg['wp_vocab']:,}, lowercase, whole corpus {kb(b)}",
        "unigram": f"Unigram vocab {cfg['ug_vocab']:,}, whole corpus {kb(b)}",
    }


# Each case: (key, task, implementation label, runs kind)
CASES = [
    ("wordpiece/toklab_freq", "wordpiece", "toklab wordpiece.train (frequency)", "short"),
    ("wordpiece/toklab_lik", "wordpiece", "toklab wordpiece.train (likelihood)", "short"),
    ("wordpiece/hf", "wordpiece", "HF WordPieceTrainer", "short"),
    ("unigram/toklab", "unigram", "toklab unigram.train", "long"),
    ("unigram/spm", "unigram", f"sentencepiece (num_threads={SPM_THREADS})", "long"),
    ("unigram/hf", "unigram", "HF UnigramTrainer", "long"),
]
BASELINE = {"wordpiece": "wordpiece/hf", "unigram": "unigram/hf"}


# ----------------------------------------------------------------------------
# Building the HF objects (shared by the workers and the evaluation)
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
# Workers: one per case, each in a fresh process
# ----------------------------------------------------------------------------


def run_worker(case: str, cfg: dict, workdir: Path) -> dict:
    kind = {c[0]: c[3] for c in CASES}[case]
    runs = cfg["runs_long"] if kind == "long" else cfg["runs_short"]
    task, impl = case.split("/")
    result: dict = {"extra": {}}
    times: list[float] = []
    meter = None

    def timed(fn):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        return out

    if task == "wordpiece":
        vocab_size = cfg["wp_vocab"]
        if impl in ("toklab_freq", "toklab_lik"):
            from toklab import wordpiece

            text = corpus_text(cfg)
            score = "frequency" if impl == "toklab_freq" else "likelihood"
            meter = PeakMeter()
            for k in range(runs):
                tok = timed(lambda: wordpiece.train(text, vocab_size, special_tokens=WP_SPECIALS, score=score,
                                                    lowercase=True))
                if k == 0:
                    result["peak_mib"] = meter.peak_mib()
                    vocab = [tok.id_to_token(i) for i in range(len(tok))]
                del tok
        else:
            from tokenizers import trainers

            docs = newline_docs(corpus_text(cfg))

            def job():
                tk = hf_bert_wordpiece()
                trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=list(WP_SPECIALS),
                                                    show_progress=False)
                tk.train_from_iterator(docs, trainer=trainer)
                return tk

            meter = PeakMeter()
            for k in range(runs):
                tk = timed(job)
                if k == 0:
                    result["peak_mib"] = meter.peak_mib()
                    vocab = hf_vocab_list(tk)
                    tk.save(str(workdir / "wp_hf_tokenizer.json"))
                del tk
            result["extra"]["documents"] = len(docs)
        (workdir / f"wp_{impl}.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
        result["vocab_size"] = len(vocab)

    else:  # unigram
        vocab_size = cfg["ug_vocab"]
        lines = corpus_lines(cfg)
        if impl == "toklab":
            from toklab import unigram
            from toklab.pre_tokenizers.metaspace import escape

            def job():
                escaped = [escape(ln) for ln in lines]
                return unigram.train(escaped, vocab_size, special_tokens=UG_SPECIALS[1:],
                                     unk_piece=UG_SPECIALS[0], max_piece_length=MAX_PIECE_LENGTH)

            meter = PeakMeter()
            for k in range(runs):
                model = timed(job)
                if k == 0:
                    result["peak_mib"] = meter.peak_mib()
                    saved = {"vocab": model.get_vocab(), "pieces": list(model.pieces.items())}
                    (workdir / "ug_toklab.json").write_text(json.dumps(saved, ensure_ascii=False), encoding="utf-8")
                    result["vocab_size"] = len(model)
                del model
        elif impl == "spm":
            import sentencepiece as spm

            from toklab.unigram import SENTENCEPIECE_OPTIONS

            def job():
                buf = io.BytesIO()
                spm.SentencePieceTrainer.train(
                    sentence_iterator=iter(lines), model_writer=buf, vocab_size=vocab_size,
                    max_sentencepiece_length=MAX_PIECE_LENGTH, num_threads=SPM_THREADS, **SENTENCEPIECE_OPTIONS,
                )
                return buf.getvalue()

            meter = PeakMeter()
            for k in range(runs):
                proto = timed(job)
                if k == 0:
                    result["peak_mib"] = meter.peak_mib()
                    (workdir / "ug_spm.model").write_bytes(proto)
                    result["vocab_size"] = spm.SentencePieceProcessor(model_proto=proto).get_piece_size()
                del proto
        else:
            from tokenizers import Tokenizer, models, trainers

            def job():
                tk = Tokenizer(models.Unigram())
                tk.pre_tokenizer = hf_metaspace()
                trainer = trainers.UnigramTrainer(
                    vocab_size=vocab_size, special_tokens=list(UG_SPECIALS), unk_token=UG_SPECIALS[0],
                    max_piece_length=MAX_PIECE_LENGTH, show_progress=False,
                )
                tk.train_from_iterator(lines, trainer=trainer)
                return tk

            meter = PeakMeter()
            for k in range(runs):
                tk = timed(job)
                if k == 0:
                    result["peak_mib"] = meter.peak_mib()
                    tk.save(str(workdir / "ug_hf_tokenizer.json"))
                    result["vocab_size"] = tk.get_vocab_size()
                del tk
        result["extra"]["lines"] = len(lines)

    result["times"] = times
    result["memory_method"] = meter.method
    return result


def _busy_cpu_seconds() -> float | None:
    """CPU time all processes on the machine have used since boot (non-idle jiffies in /proc/stat)."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    # cpu user nice system idle iowait irq softirq steal [guest guest_nice: already in user/nice]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _children_cpu_seconds() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def spawn_worker(case: str, cfg: dict, workdir: Path) -> dict:
    env = dict(os.environ, PYTHONHASHSEED="0")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", case, "--workdir", str(workdir)]
    if cfg["quick"]:
        cmd.append("--quick")
    busy0, own0, t0 = _busy_cpu_seconds(), _children_cpu_seconds(), time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - t0
    busy1, own1 = _busy_cpu_seconds(), _children_cpu_seconds()
    if proc.returncode != 0:
        raise RuntimeError(f"worker {case} failed with exit code {proc.returncode}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    # Other work on the machine while this row ran, in cores (machine-wide busy CPU time minus the
    # worker's own); the driver itself only waits. Near 0 means the row had the machine to itself.
    out["other_cpu_cores"] = (
        None if busy0 is None or busy1 is None else max(0.0, ((busy1 - busy0) - (own1 - own0)) / wall)
    )
    log(f"  {case}: median {statistics.median(out['times']):.3f} s over {len(out['times'])} runs "
        f"(process took {wall:.1f} s; other processes used {out['other_cpu_cores'] or 0:.2f} cores meanwhile)")
    return out


# ----------------------------------------------------------------------------
# Input checks and quality measurements (untimed, after the workers)
# ----------------------------------------------------------------------------


def check_inputs(cfg: dict) -> dict:
    """The claims the setup rests on: HF sees the same words as toklab in both tasks."""
    from toklab import unigram, wordpiece
    from toklab.pre_tokenizers.metaspace import escape, split_words

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
        div = bench.first_divergence(mine, vocabs["hf"])
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
        out["toklab_freq"]["hf_order_first_difference"] = bench.first_divergence(rebuilt, vocabs["hf"])
    return out


def evaluate_unigram(cfg: dict, workdir: Path) -> dict:
    import sentencepiece as spm
    from tokenizers import Tokenizer

    from toklab import unigram
    from toklab.unigram.compare import normalised_log_likelihood
    from toklab.pre_tokenizers.metaspace import escape, split_words
    from toklab.unigram import Unigram

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
    theirs = Unigram.from_sentencepiece(proto)
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
# Rows, targets, output
# ----------------------------------------------------------------------------


def build_rows(cfg: dict, results: dict, wp_q: dict, ug_q: dict, inputs: dict) -> list[dict]:
    names = workload_names(cfg)
    rows = []
    for key, task, impl, _ in CASES:
        r = results[key]
        rows.append({"task": task, "workload": names[task], "impl": impl, "_key": key,
                     "median_s": round(statistics.median(r["times"]), 6), "runs": len(r["times"]),
                     "times_s": [round(t, 4) for t in r["times"]],
                     "peak_mib": round(r["peak_mib"], 1) if r.get("peak_mib") is not None else None,
                     "ratio": None, "ratio_to": None,
                     "other_cpu_cores": None if r.get("other_cpu_cores") is None else round(r["other_cpu_cores"], 2),
                     "quality": {}, "note": ""})
    by_key = {r["_key"]: r for r in rows}
    for row in rows:
        base = by_key[BASELINE[row["task"]]]
        row["ratio"] = round(row["median_s"] / base["median_s"], 3)
        row["ratio_to"] = base["impl"]

    # ---- WordPiece
    for impl in ("toklab_freq", "toklab_lik", "hf"):
        q = dict(wp_q[impl])
        q["tokens_per_byte"] = round(q["tokens_per_byte"], 5)
        by_key[f"wordpiece/{impl}"]["quality"] = q
    f, lik, h = wp_q["toklab_freq"], wp_q["toklab_lik"], wp_q["hf"]
    v = cfg["wp_vocab"]
    by_key["wordpiece/toklab_freq"]["note"] = (
        f"score=\"frequency\" (pair count, HF's objective), min_frequency=1, BERT's 5 specials; pure Python; "
        f"time includes normalization and word counting; {f['shared_with_hf']:,} of {v:,} entries shared with "
        f"this run's HF vocabulary, {f['same_id_as_hf']:,} at the same ID. HF numbers the {f['initial_entries']:,} "
        "initial entries' ## forms in Rust HashMap order, which is seeded randomly per process, so ties and IDs "
        "differ from run to run and exact equality across processes is not expected; re-trained untimed with "
        f"HF's initial order, toklab's vocabulary is {'identical to' if f['hf_order_identical'] else 'NOT identical to'} "
        "HF's, ID for ID"
    )
    by_key["wordpiece/toklab_lik"]["note"] = (
        f"score=\"likelihood\" (f(xy)/(f(x)f(y)), the textbook WordPiece score: a different objective, so a "
        f"different vocabulary; {lik['shared_with_hf']:,} of {v:,} entries shared with HF's), min_frequency=1; "
        "with min_frequency=1 many merges go to pairs of rare symbols that only occur together, hence more tokens"
    )
    by_key["wordpiece/hf"]["note"] = (
        f"Tokenizer(models.WordPiece) + BertNormalizer(lowercase) + BertPreTokenizer, WordPieceTrainer("
        f"vocab_size={v:,}, BERT's 5 specials, show_progress=False); Rust, multi-threaded (both cores); text fed "
        f"as {results['wordpiece/hf']['extra']['documents']} documents cut after newlines "
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
        by_key[f"unigram/{impl}"]["quality"] = q
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
    by_key["unigram/toklab"]["note"] = (
        f"unigram.train on the lines with ' ' escaped to U+2581 (escaping inside the timed call), words cut before "
        f"U+2581, em_iters=2, shrink=0.75, digamma M-step; Python + numpy, single thread; {common}; {uncovered('toklab')}"
    )
    by_key["unigram/spm"]["note"] = (
        f"SentencePieceTrainer.train(model_type=unigram, num_threads={SPM_THREADS}, identity normalization, "
        "add_dummy_prefix=False, remove_extra_whitespaces=False, split_by_whitespace=True, split_by_unicode_script="
        "False, split_by_number=False, character_coverage=1.0, shuffle_input_sentence=False) from a sentence "
        f"iterator (toklab.unigram.SENTENCEPIECE_OPTIONS, as compare_with_sentencepiece but with "
        f"{SPM_THREADS} threads instead of 1); C++; {common}; {uncovered('spm')}"
    )
    by_key["unigram/hf"]["note"] = (
        "Tokenizer(models.Unigram) + Metaspace(prepend_scheme=never, split=True), no normalizer, "
        f"UnigramTrainer(shrinking_factor 0.75, n_sub_iterations 2: defaults, show_progress=False); Rust, "
        f"multi-threaded (both cores); {common}; its word split equals toklab's on "
        f"{'every' if inputs['unigram_hf_split_same_words'] else 'NOT every'} line; {uncovered('hf')}"
    )
    for row in rows:
        row.pop("_key")
    return rows


def evaluate_targets(rows: list[dict], ug_q: dict) -> list[dict]:
    by = {(r["task"], r["impl"]): r for r in rows}
    ug_ours = by[("unigram", "toklab unigram.train")]
    ug_spm = by[("unigram", f"sentencepiece (num_threads={SPM_THREADS})")]
    ug_hf = by[("unigram", "HF UnigramTrainer")]
    wp_f = by[("wordpiece", "toklab wordpiece.train (frequency)")]
    wp_l = by[("wordpiece", "toklab wordpiece.train (likelihood)")]
    wp_hf = by[("wordpiece", "HF WordPieceTrainer")]
    t_ours, t_sp = ug_q["toklab"]["tokens"], ug_q["spm"]["tokens"]
    gap = t_ours / t_sp
    bpb_ours, bpb_sp = ug_q["toklab"]["viterbi_bits_per_byte"], ug_q["spm"]["viterbi_bits_per_byte"]
    return [
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
        {
            "name": "Unigram training no slower than HF UnigramTrainer",
            "workload": ug_ours["workload"],
            "measured": ug_ours["ratio"],
            "threshold": 1.0,
            "unit": "x HF wall time",
            "pass": ug_ours["ratio"] <= 1.0,
            "note": f"toklab {ug_ours['median_s']:.2f} s vs HF {ug_hf['median_s']:.2f} s (medians of "
            f"{ug_ours['runs']} and {ug_hf['runs']} runs); sentencepiece {ug_spm['median_s']:.2f} s "
            f"({ug_spm['ratio']:.2f}x HF)",
        },
        {
            "name": "WordPiece training time vs HF WordPieceTrainer (reported, no threshold)",
            "workload": wp_f["workload"],
            "measured": wp_f["ratio"],
            "threshold": None,
            "unit": "x HF wall time",
            "pass": None,
            "note": f"frequency (HF's objective) {wp_f['median_s']:.2f} s vs HF {wp_hf['median_s']:.2f} s; "
            f"likelihood {wp_l['median_s']:.2f} s ({wp_l['ratio']:.2f}x HF, a different objective)",
        },
    ]


WP_HEAD = ["implementation", "median s", "runs", "peak MiB", "ratio", "vocab", "tokens", "tokens/byte", "[UNK]",
           "shared with HF"]
UG_HEAD = ["implementation", "median s", "runs", "peak MiB", "ratio", "pieces", "tokens", "tokens/byte",
           "Viterbi bits/byte", "marginal bits/byte", "Jaccard vs spm"]


def _table(head: list[str], body: list[list[str]]) -> list[str]:
    aligns = ["l"] + ["r"] * (len(head) - 1)
    widths = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]
    lines = [fmt_row(head, widths, aligns)]
    lines.append("|" + "|".join(("-" * (w + 1) + ":") if a == "r" else ("-" * (w + 2))
                                for w, a in zip(widths, aligns)) + "|")
    return lines + [fmt_row(b, widths, aligns) for b in body]


def table_lines(rows: list[dict], task: str) -> list[str]:
    body = []
    for r in rows:
        if r["task"] != task:
            continue
        q = r["quality"]
        cells = [r["impl"], num(r["median_s"]), str(r["runs"]),
                 "—" if r["peak_mib"] is None else f"{r['peak_mib']:.1f}", f"{num(r['ratio'])}x HF"]
        if task == "wordpiece":
            shared = "—" if "shared_with_hf" not in q else f"{q['shared_with_hf']:,}"
            cells += [f"{q['vocab_size']:,}", f"{q['tokens']:,}", f"{q['tokens_per_byte']:.4f}",
                      f"{q['unk_tokens']:,}", shared]
        else:
            cells += [f"{q['pieces']:,}", f"{q['tokens']:,}", f"{q['tokens_per_byte']:.4f}",
                      f"{q['viterbi_bits_per_byte']:.4f}", f"{q['marginal_bits_per_byte']:.4f}",
                      f"{q['jaccard_with_spm']:.3f}"]
        body.append(cells)
    return _table(WP_HEAD if task == "wordpiece" else UG_HEAD, body)


def target_lines(targets: list[dict]) -> list[str]:
    lines = ["| target | measured | threshold | result |", "|---|--:|--:|---|"]
    for t in targets:
        meas = "—" if t["measured"] is None else f"{t['measured']:.3f}"
        thr = "—" if t["threshold"] is None else f"≤ {t['threshold']:.2f}"
        verdict = "REPORTED" if t["pass"] is None else ("PASS" if t["pass"] else "FAIL")
        lines.append(f"| {t['name']} | {meas} {t['unit']} | {thr} | {verdict} — {t['note']} |")
    return lines


def write_markdown(path: Path, data: dict) -> None:
    meta = data["meta"]
    m = meta["machine"]
    ug = meta["unigram_eval"]
    lines = [
        "# toklab model-training benchmark results (WordPiece, Unigram)",
        "",
        f"Recorded {meta['date']} by `benchmarks/models.py`{' --quick (smoke run, small inputs)' if meta['quick'] else ''}. "
        "Regenerate with `make bench`.",
        "",
        "## Machine",
        "",
        f"- CPU: {m['cpu']}, {m['cores']} logical cores ({m['cores_available']} available to this process)",
        f"- Memory: {m['memory_gib']} GiB; {m['platform']}",
        f"- Python {m['python']} ({m['python_implementation']})",
        "- Packages: " + ", ".join(f"{k} {val}" for k, val in m["versions"].items()),
        f"- toklab commit {m['git_commit'] or 'unknown'} (wordpiece.py sha256 "
        f"{(meta['source_sha256']['wordpiece.py'] or '?')[:12]}…, unigram.py sha256 "
        f"{(meta['source_sha256']['unigram.py'] or '?')[:12]}…)",
        f"- Corpus: {', '.join(f'{k} {n:,} B' for k, n in meta['corpus_bytes'].items())}; whole corpus "
        f"{meta['whole_corpus_bytes']:,} bytes (the four files concatenated in that order)",
        "",
        f"## WordPiece: {data['rows'][0]['workload']}",
        "",
        *table_lines(data["rows"], "wordpiece"),
        "",
        "ratio = median time / HF WordPieceTrainer's median time in this run. tokens = the whole corpus encoded "
        "with each vocabulary (toklab's WordPiece encoder, BERT clean-up, lowercase, no [CLS]/[SEP]); tokens/byte "
        "per UTF-8 byte of the raw corpus. shared with HF = entries also in this run's HF vocabulary.",
        "",
        f"## Unigram: {next(r for r in data['rows'] if r['task'] == 'unigram')['workload']}",
        "",
        *table_lines(data["rows"], "unigram"),
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
        "",
        "## Notes",
        "",
        f"- Timing: `time.perf_counter` wall time; the median of the runs in the `runs` column ({meta['runs_short']} "
        f"for WordPiece, {meta['runs_long']} for the slower Unigram trainers). Each row runs in its own fresh "
        "Python process, one row at a time, so libraries that use threads have both cores to themselves.",
        f"- Memory: {meta['memory_method']}",
        f"- Machine load (1/5/15-minute load averages) was {', '.join(map(str, meta['load_average_start']))} at the "
        f"start and {', '.join(map(str, meta['load_average_end']))} at the end of the timed rows "
        f"({meta['timed_wall_s']:.0f} s; {meta['total_wall_s']:.0f} s with the untimed evaluation); other work on the "
        "machine slows every row, multi-threaded ones most.",
        "- Other work during each row (machine-wide busy CPU time from /proc/stat minus the row's own process "
        "tree's, per second of the row; 0 = the row had both cores to itself): "
        + "; ".join(f"{r['impl']} {r['other_cpu_cores']:.2f}" if r["other_cpu_cores"] is not None
                    else f"{r['impl']} not measured" for r in data["rows"]) + " cores.",
        "- Quality numbers are measured after all timed rows, untimed, on the model each row saved from its first run.",
    ]
    for r in data["rows"]:
        if r["note"]:
            lines.append(f"- *{r['impl']}*: {r['note']}.")
    lines += ["", "## Targets", "", *target_lines(data["targets"])]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run on small inputs, one run each")
    ap.add_argument("--out", type=Path, help="results JSON path (a .md with the same stem is written beside it)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    cfg = config(args.quick)

    if args.worker:
        print(json.dumps(run_worker(args.worker, cfg, args.workdir)))
        return 0

    out = args.out or (HERE / "out" / "quick" / "results_models.json" if args.quick else HERE / "results_models.json")
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    load_start = os.getloadavg()
    from toklab import corpus

    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="toklab-bench-models-") as tmp:
        workdir = Path(tmp)
        for key, *_ in CASES:
            log(f"running {key} ...")
            results[key] = spawn_worker(key, cfg, workdir)
        load_end = os.getloadavg()  # the timed part ends here; the rest is untimed evaluation
        timed_wall = time.perf_counter() - started
        log("evaluating the trained models (untimed) ...")
        inputs = check_inputs(cfg)
        wp_q = evaluate_wordpiece(cfg, workdir)
        ug_q = evaluate_unigram(cfg, workdir)

    rows = build_rows(cfg, results, wp_q, ug_q, inputs)
    targets = evaluate_targets(rows, ug_q)
    methods = {r["memory_method"] for r in results.values()}
    memory_method = (
        "peak resident set size (VmHWM from /proc/self/status, after resetting it through /proc/self/clear_refs) "
        "of the row's own process during the first measured call, minus its RSS just before that call (after "
        "imports and data loading). RSS includes Rust and C++ allocations and all threads."
        if methods == {"VmHWM"}
        else "peak RSS (getrusage ru_maxrss) of the row's own process minus its ru_maxrss after imports and data "
        "loading; a setup step that peaked higher than the job hides part of the job's memory."
    )
    src = ROOT / "src" / "toklab"
    data = {
        "meta": {
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "quick": cfg["quick"],
            "machine": bench.machine_info(),
            "source_sha256": {
                name: hashlib.sha256((src / name).read_bytes()).hexdigest() if (src / name).is_file() else None
                for name in ("wordpiece.py", "unigram.py")
            },
            "corpus_bytes": {name: nbytes(corpus.load(name, max_bytes=cfg["big_bytes_each"])) for name in CORPUS_ORDER},
            "whole_corpus_bytes": nbytes(corpus_text(cfg)),
            "wordpiece_vocab": cfg["wp_vocab"],
            "unigram_vocab": cfg["ug_vocab"],
            "runs_short": cfg["runs_short"],
            "runs_long": cfg["runs_long"],
            "sentencepiece_threads": SPM_THREADS,
            "memory_method": memory_method,
            "timing_method": "time.perf_counter wall time, median of the runs, each row in a fresh process",
            "timed_wall_s": round(timed_wall, 1),
            "total_wall_s": None,
            "load_average_start": [round(x, 2) for x in load_start],
            "load_average_end": [round(x, 2) for x in load_end],
            "input_checks": inputs,
            "wordpiece_eval": wp_q,
            "unigram_eval": ug_q,
        },
        "rows": rows,
        "targets": targets,
    }
    data["meta"]["total_wall_s"] = round(time.perf_counter() - started, 1)
    out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    md = out.with_suffix(".md")
    write_markdown(md, data)
    print("\n".join(table_lines(rows, "wordpiece")))
    print()
    print("\n".join(table_lines(rows, "unigram")))
    print()
    for t in targets:
        verdict = "REPORTED" if t["pass"] is None else ("PASS" if t["pass"] else "FAIL")
        thr = "" if t["threshold"] is None else f" (threshold {t['threshold']})"
        print(f"{verdict}  {t['name']}: {t['measured']} {t['unit']}{thr} — {t['note']}")
    log(f"wrote {out} and {md} in {data['meta']['total_wall_s']:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
