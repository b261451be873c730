"""The benchmark harness (benchmarks/harness.py) runs end to end, so `make bench` cannot rot unnoticed.

A tiny suite of two BPE-training rows on a 3 KB text (the textbook trainer as the
baseline, the fast one against it) runs through the harness's real driver: one
fresh process per row, median of several runs, peak RSS, same-run ratios, JSON
and Markdown, source hashes. Seconds, not minutes. The real suites are only
imported and listed here; `make bench` runs them.
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

TINY_SUITE = '''
"""A two-row suite for the harness test."""

from benchmarks import harness
from benchmarks.harness import Case


def config(quick):
    return {"quick": quick, "text_bytes": 3_000, "vocab": 290, "runs_short": 3, "runs_long": 2, "rounds": 2}


def text(cfg):
    from toklab.data import corpus

    return corpus.load("en", max_bytes=cfg["text_bytes"])


def hexed(merges):
    return [[a.hex(), b.hex()] for a, b in merges]


def train_reference(ctx):
    from toklab import bpe

    counts = bpe.pretoken_counts(text(ctx.cfg))
    words = {tuple(bytes([b]) for b in p.encode("utf-8")): c for p, c in counts.items()}
    return {"merges": ctx.measure(lambda: bpe.reference_train(words, ctx.cfg["vocab"] - 256), check=hexed)}


def train_fast(ctx):
    from toklab import bpe

    t = text(ctx.cfg)
    return {"merges": ctx.measure(lambda: bpe.train(t, ctx.cfg["vocab"]), check=lambda tok: hexed(tok.merges))}


CASES = [
    Case("tiny/reference", "tiny", "toklab reference_train", "the textbook trainer on 3 KB", train_reference,
         runs="long", baseline=True, sources=("toklab.bpe",)),
    Case("tiny/fast", "tiny", "toklab bpe.train", "the fast trainer on 3 KB", train_fast, runs="short",
         sources=("toklab.bpe",)),
    Case("turns/reference", "turns", "toklab reference_train", "the textbook trainer on 3 KB", train_reference,
         runs="short", baseline=True),
    Case("turns/fast", "turns", "toklab bpe.train", "the fast trainer on 3 KB", train_fast, runs="short"),
]


def report(cfg, rows, results, workdir):
    same = results["tiny/fast"].facts["merges"] == results["tiny/reference"].facts["merges"]
    for row in rows:
        row["identical"] = same if row["case"] == "tiny/fast" else None
    fast = harness.row_of(rows, "tiny/fast")
    body = [[r["impl"], harness.num(r["median_s"]), str(r["runs"]), f"{r['ratio']}x"] for r in rows]
    return harness.Report(
        targets=[{"name": "fast trainer beats the textbook one", "workload": fast["workload"],
                  "measured": fast["ratio"], "threshold": 1.0, "unit": "x reference time",
                  "pass": fast["ratio"] <= 1.0, "note": "tiny"}],
        meta={"tiny_merges": len(results["tiny/fast"].facts["merges"])},
        sections=["## Tiny", "", *harness.md_table(["implementation", "median s", "runs", "ratio"], body, "lrrr")],
        notes=["- a tiny suite."],
    )


SUITE = harness.Suite(module="tiny_bench", output="results_tiny", title="tiny benchmark",
                      description="two rows", cases=CASES, config=config,
                      workloads=lambda cfg: {"tiny": f"train vocab {cfg['vocab']}, 3 KB",
                                             "turns": "the same, rows taking turns"}, report=report)

if __name__ == "__main__":
    raise SystemExit(harness.main(SUITE))
'''


@pytest.fixture(scope="module")
def harness():
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks import harness as module

        yield module
    finally:
        sys.path.remove(str(ROOT))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The tiny suite's module on disk and an environment in which children can import it."""
    folder = tmp_path_factory.mktemp("tiny_suite")
    (folder / "tiny_bench.py").write_text(textwrap.dedent(TINY_SUITE), encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(folder)]))
    return folder, env


@pytest.fixture(scope="module")
def tiny_run(tiny):
    folder, env = tiny
    out = folder / "out"
    proc = subprocess.run([sys.executable, "-m", "tiny_bench", "--out", str(out)], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    data = json.loads((out / "results_tiny.json").read_text("utf-8"))
    return data, (out / "results_tiny.md").read_text("utf-8"), proc


def test_each_row_ran_in_its_own_process_with_its_run_count(tiny_run):
    data, _, proc = tiny_run
    rows = {r["case"]: r for r in data["rows"]}
    assert list(rows) == ["tiny/reference", "tiny/fast", "turns/reference", "turns/fast"]
    # a group with a long row runs once: runs_long, runs_short
    assert rows["tiny/reference"]["runs"] == 2 and rows["tiny/fast"]["runs"] == 3
    for r in rows.values():
        assert len(r["times_s"]) == r["runs"] and all(t > 0 for t in r["times_s"])
        assert r["median_s"] == pytest.approx(statistics.median(r["times_s"]), abs=1e-4)
    assert "running tiny/reference" in proc.stderr and "running tiny/fast" in proc.stderr


def test_a_group_of_short_rows_takes_turns_in_rounds_and_pools_the_runs(tiny_run):
    data, md, proc = tiny_run
    rows = {r["case"]: r for r in data["rows"]}
    # rounds=2: two processes per row, each timing ceil(3 / 2) = 2 calls
    assert rows["turns/reference"]["runs"] == rows["turns/fast"]["runs"] == 4
    started = [line.removeprefix("running ") for line in proc.stderr.splitlines() if line.startswith("running turns/")]
    assert started == [f"turns/{row} (round {k} of 2) ..." for k in (1, 2) for row in ("reference", "fast")]
    assert rows["turns/fast"]["identical"] is None  # the report only compares the tiny group
    assert data["meta"]["rounds"] == 2 and "taking turns round after round" in md


def test_pooled_rounds_must_agree_on_their_facts(harness):
    def result(facts, times, peak):
        return harness.Result(times, peak, "VmHWM", None, facts, 1.0, 50.0, None, 0.5, 0.1)

    pooled = harness.Result.pooled("g/a", [result({"n": 1}, [0.2, 0.3], 10.0), result({"n": 1}, [0.1], 12.0)])
    assert pooled.times == [0.2, 0.3, 0.1] and pooled.median_s == 0.2
    assert pooled.peak_mib == 12.0 and pooled.wall_s == 2.0 and pooled.cpu_s == 1.0
    assert pooled.other_cpu_cores == pytest.approx(0.1)
    with pytest.raises(RuntimeError, match="'g/a' reported different facts in round 2"):
        harness.Result.pooled("g/a", [result({"n": 1}, [0.2], 10.0), result({"n": 2}, [0.2], 10.0)])


def test_ratios_are_against_the_groups_baseline_in_the_same_run(tiny_run):
    data, _, _ = tiny_run
    ref, fast = data["rows"][:2]
    assert ref["ratio"] == 1.0 and ref["ratio_to"] == fast["ratio_to"] == "toklab reference_train"
    # the ratio is stored to 3 decimals (the medians to 6): within about half a unit of the last one
    assert fast["ratio"] == pytest.approx(fast["median_s"] / ref["median_s"], abs=6e-4)


def test_memory_is_measured_in_the_row_process(tiny_run):
    data, _, _ = tiny_run
    for r in data["rows"]:
        assert r["peak_mib"] is not None and r["peak_mib"] >= 0
        # the whole process: an interpreter with toklab imported is far above the job's own increase
        assert r["process_peak_mib"] > max(10.0, r["peak_mib"])
        assert r["children_peak_mib"] is None  # no worker processes were watched
    assert data["meta"]["memory_method"]


def test_correctness_check_and_suite_report_reach_the_output(tiny_run):
    data, md, _ = tiny_run
    fast = data["rows"][1]
    assert fast["identical"] is True  # the fast trainer's merges equal the reference's
    assert data["meta"]["tiny_merges"] == 290 - 256
    assert data["targets"][0]["name"] == "fast trainer beats the textbook one"
    assert md.startswith("# tiny benchmark\n")
    for part in ("## Machine", "## Tiny", "| toklab bpe.train", "## Notes", "- a tiny suite.", "## Targets",
                 "| fast trainer beats the textbook one |", "python -m tiny_bench"):
        assert part in md, part


def test_sources_are_hashed_by_module_through_the_package_file(tiny_run):
    import toklab.bpe

    data, _, _ = tiny_run
    entry = data["meta"]["source_sha256"]["toklab.bpe"]
    package = Path(toklab.bpe.__file__).resolve().parent
    src = package.parent.parent
    for path in package.glob("*.py"):
        rel = str(path.relative_to(src))
        assert entry["files"][rel] == hashlib.sha256(path.read_bytes()).hexdigest(), rel
    assert "toklab/__init__.py" not in entry["files"]  # it re-exports everything; only named imports count
    joint = "".join(f"{rel}\0{h}\n" for rel, h in sorted(entry["files"].items()))
    assert entry["sha256"] == hashlib.sha256(joint.encode()).hexdigest()
    assert data["rows"][1]["sources"] == {"toklab.bpe": entry["sha256"]}


def test_machine_and_commit_metadata(tiny_run):
    meta = tiny_run[0]["meta"]
    machine = meta["machine"]
    assert machine["cores"] >= 1 and machine["python"] == ".".join(map(str, sys.version_info[:3]))
    assert machine["versions"]["toklab"]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    if head.returncode == 0:
        assert machine["git_commit"] == head.stdout.strip()
    assert meta["timed_wall_s"] <= meta["total_wall_s"]


def test_exercised_files_follow_imports_but_not_the_root_package(harness):
    files = harness.exercised_files(["toklab.bpe"])
    assert {"toklab/bpe/trainer.py", "toklab/bpe/model.py", "toklab/pre_tokenizers/patterns.py"} <= set(files)
    assert not any(rel.startswith(("toklab/teaching/", "toklab/measure/", "toklab/wordpiece/")) for rel in files)
    assert harness.exercised_files(["toklab.data.vocabs"]).keys() >= {"toklab/data/vocabs.py"}


def test_a_failing_row_stops_the_run_with_its_name(harness, tiny, tmp_path, monkeypatch):
    folder, env = tiny
    monkeypatch.setenv("PYTHONPATH", env["PYTHONPATH"])
    suite = harness.Suite(module="tiny_bench", output="x", title="x", description="x", cases=[
        harness.Case("tiny/missing", "tiny", "x", "x", lambda ctx: {}, baseline=True)],
        config=lambda quick: {}, workloads=lambda cfg: {}, report=lambda *a: harness.Report())
    with pytest.raises(RuntimeError, match="tiny/missing"):
        harness.spawn(suite, "tiny/missing", tmp_path, quick=False)  # the child has no such case


def test_a_workload_must_measure(harness, tmp_path):
    case = harness.Case("g/lazy", "g", "lazy", "nothing", lambda ctx: {"done": True}, baseline=True)
    suite = harness.Suite(module="m", output="x", title="x", description="x", cases=[case],
                          config=lambda quick: {"runs_short": 1, "runs_long": 1}, workloads=lambda cfg: {},
                          report=lambda *a: harness.Report())
    with pytest.raises(RuntimeError, match="never called Context.measure"):
        harness.run_in_child(suite, "g/lazy", False, tmp_path)


def test_suites_are_checked_when_built(harness):
    def case(name, group, baseline=False):
        return harness.Case(name, group, name, "x", lambda ctx: {}, baseline=baseline)

    kwargs = dict(module="m", output="x", title="x", description="x", config=dict, workloads=dict,
                  report=lambda *a: harness.Report())
    with pytest.raises(ValueError, match="exactly one baseline"):
        harness.Suite(cases=[case("g/a", "g"), case("g/b", "g")], **kwargs)
    with pytest.raises(ValueError, match="duplicate"):
        harness.Suite(cases=[case("g/a", "g", True), case("g/a", "g")], **kwargs)
    with pytest.raises(ValueError, match="runs must be"):
        harness.Case("g/a", "g", "a", "x", lambda ctx: {}, runs="medium")


@pytest.mark.parametrize("name, rows", [("run", 26), ("models", 11)])
def test_the_real_suites_import_and_list_their_rows(harness, name, rows):
    proc = subprocess.run([sys.executable, "-m", f"benchmarks.{name}", "--list"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == rows
    groups = {line.split("\t")[0].split("/")[0] for line in lines}
    assert sum("(baseline)" in line for line in lines) == len(groups)
