"""`toklab.teaching.sanity` in process: every invariant holds, a failing or raising check is reported, not raised."""

from __future__ import annotations

from toklab.teaching import sanity


def test_every_invariant_holds_and_says_what_it_checked():
    results = sanity.run()
    assert [r.label for r in results] == [f"D0{k}" for k in range(1, 9)]
    assert all(r.ok for r in results), sanity.report(results)
    assert all(r.detail and "\n" not in r.detail for r in results)
    assert sanity.report(results).endswith("all 8 invariants hold")


def test_a_failing_and_a_raising_check_are_reported_and_the_rest_still_run():
    def fails():
        raise AssertionError("expected 7, got 6")

    def raises():
        return {}["missing"]

    checks = (sanity.Invariant("X1", "fails", fails), sanity.Invariant("X2", "raises", raises),
              sanity.INVARIANTS[5])
    results = sanity.run(checks)
    assert [r.ok for r in results] == [False, False, True]
    assert results[0].line() == "FAIL  [X1] fails: AssertionError: expected 7, got 6"
    assert results[1].detail == "KeyError: 'missing'"
    assert sanity.report(results).splitlines()[-1] == "2 of 3 invariants FAILED: X1, X2"
