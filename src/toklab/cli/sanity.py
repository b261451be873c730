"""``python -m toklab sanity``: the eight invariants of `toklab.teaching.sanity`, one PASS/FAIL line each.

With ``--impl FILE`` the invariants check the functions of a Python file of one's own
(the names and signatures in `toklab.teaching.sanity.IMPL_SIGNATURES`) instead of toklab's.
Exit status 0 when every invariant holds, 1 when any fails (2 for bad arguments, a file
that cannot be imported, or one that lacks a function a chosen check calls).
"""

from __future__ import annotations

import argparse
import sys
import time

from ..teaching import sanity
from .base import Command, CommandError

__all__ = ["COMMANDS", "HELP", "EPILOG", "configure", "run"]

HELP = "check the eight invariants of the book's demos D01-D08 (PASS/FAIL per line)"
EPILOG = ("examples:\n  python -m toklab sanity\n  python -m toklab sanity D02 D06\n"
          "  python -m toklab sanity --impl my_tokenization.py\n\n"
          "functions --impl FILE must define (each check needs only its own):\n"
          + "\n".join(f"  {line}" for line in sanity.IMPL_SIGNATURES.values())
          + "\nranks maps each token, a string of GPT-2's characters, to its ID, which is also its rank:\n"
            "the 256 bytes in the order of GPT-2's table, then the merges in order.")


def configure(p: argparse.ArgumentParser) -> None:
    """Add the command's arguments to ``p``, the ``sanity`` subparser `toklab.cli` builds."""
    p.add_argument("labels", nargs="*", metavar="LABEL",
                   help="only these checks, e.g. D02 D06 (default: all eight)")
    p.add_argument("--impl", metavar="FILE",
                   help="check the functions of this Python file (see below) instead of toklab's")


def run(args: argparse.Namespace) -> int:
    """Run the chosen checks (all eight by default); 0 if all hold, 1 if any fails, 2 for an unknown label."""
    known = {inv.label: inv for inv in sanity.INVARIANTS}
    wanted = [label.upper() for label in args.labels]
    unknown = [label for label in wanted if label not in known]
    if unknown:
        raise CommandError(f"unknown check {', '.join(unknown)}; checks: {', '.join(known)}", status=2)
    chosen = tuple(known[label] for label in wanted) if wanted else sanity.INVARIANTS
    if args.impl is not None:
        chosen = _impl_checks(args.impl, tuple(inv.label for inv in chosen))
    start = time.perf_counter()
    results = sanity.run(chosen)
    print(sanity.report(results))
    print(f"({time.perf_counter() - start:.1f} s)", file=sys.stderr)
    return 0 if all(r.ok for r in results) else 1


def _impl_checks(path: str, labels: tuple[str, ...]) -> tuple[sanity.Invariant, ...]:
    try:
        module = sanity.load_impl(path)
    except ValueError as exc:
        raise CommandError(str(exc), status=2) from None
    missing = sanity.missing_names(module, labels)
    if missing:
        users = [label for label in labels if set(sanity.IMPL_NAMES[label]) & set(missing)]
        raise CommandError(f"{path} does not define {', '.join(missing)}, which {', '.join(users)} "
                           f"call{'s' if len(users) == 1 else ''} (see sanity --help)", status=2)
    return sanity.impl_invariants(module, labels)


COMMANDS = (Command("sanity", HELP, configure, run, description=HELP + "; exit status 1 if any fails.",
                    epilog=EPILOG),)
