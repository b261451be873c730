"""``python -m toklab sanity``: the eight invariants of `toklab.teaching.sanity`, one PASS/FAIL line each.

Exit status 0 when every invariant holds, 1 when any fails (2 for bad arguments).
"""

from __future__ import annotations

import argparse
import sys
import time

from ..teaching import sanity
from .base import Command, CommandError

__all__ = ["COMMANDS", "HELP", "EPILOG", "configure", "run"]

HELP = "check the eight invariants of the book's demos D01-D08 (PASS/FAIL per line)"
EPILOG = "examples:\n  python -m toklab sanity\n  python -m toklab sanity D02 D06"


def configure(p: argparse.ArgumentParser) -> None:
    """Add the command's arguments to ``p``, the ``sanity`` subparser `toklab.cli` builds."""
    p.add_argument("labels", nargs="*", metavar="LABEL",
                   help="only these checks, e.g. D02 D06 (default: all eight)")


def run(args: argparse.Namespace) -> int:
    """Run the chosen checks (all eight by default); 0 if all hold, 1 if any fails, 2 for an unknown label."""
    known = {inv.label: inv for inv in sanity.INVARIANTS}
    wanted = [label.upper() for label in args.labels]
    unknown = [label for label in wanted if label not in known]
    if unknown:
        raise CommandError(f"unknown check {', '.join(unknown)}; checks: {', '.join(known)}", status=2)
    chosen = tuple(known[label] for label in wanted) if wanted else sanity.INVARIANTS
    start = time.perf_counter()
    results = sanity.run(chosen)
    print(sanity.report(results))
    print(f"({time.perf_counter() - start:.1f} s)", file=sys.stderr)
    return 0 if all(r.ok for r in results) else 1


COMMANDS = (Command("sanity", HELP, configure, run, description=HELP + "; exit status 1 if any fails.",
                    epilog=EPILOG),)
