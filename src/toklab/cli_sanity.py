"""``python -m toklab sanity``: the eight invariants of `toklab.sanity`, one PASS/FAIL line each.

Exit status 0 when every invariant holds, 1 when any fails (2 for bad arguments).
"""

from __future__ import annotations

import argparse
import sys
import time

from . import sanity

__all__ = ["HELP", "parser", "main"]

HELP = "check the eight invariants of the book's demos D01-D08 (PASS/FAIL per line)"


def parser(prog: str = "python -m toklab sanity") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=HELP + "; exit status 1 if any fails.")
    p.add_argument("labels", nargs="*", metavar="LABEL",
                   help="only these checks, e.g. D02 D06 (default: all eight)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    known = {inv.label: inv for inv in sanity.INVARIANTS}
    wanted = [label.upper() for label in args.labels]
    unknown = [label for label in wanted if label not in known]
    if unknown:
        print(f"sanity: unknown check {', '.join(unknown)}; checks: {', '.join(known)}", file=sys.stderr)
        return 2
    chosen = tuple(known[label] for label in wanted) if wanted else sanity.INVARIANTS
    start = time.perf_counter()
    results = sanity.run(chosen)
    print(sanity.report(results))
    print(f"({time.perf_counter() - start:.1f} s)", file=sys.stderr)
    return 0 if all(r.ok for r in results) else 1
