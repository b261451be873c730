"""A time limit for regular expressions that come from outside toklab: `run_limited`, `PatternTimeout`.

A regex can need exponential time on a short string: ``(a|aa)+$`` runs for minutes on
forty ``a`` followed by a ``b``, because the engine tries every way of splitting the
run before it gives up. toklab's own patterns (the catalogue in
`toklab.pre_tokenizers.patterns`) are measured to run in linear time; a pattern read
from a tokenizer file or handed over by a user is not toklab's to vouch for, so it runs
under a wall-clock limit (`limit_for`: a couple of seconds plus a little per
character) and a match that takes longer raises `PatternTimeout`, a ValueError that
names the pattern, instead of hanging.

Two ways to stop the `regex` module mid-match, both measured on the bundled corpus:

- its ``timeout=`` argument works in any thread, but it reads the process clock (a
  system call) at every match, which makes a split three to four times slower;
- it also checks for signals while it matches, so on the main thread an interval timer
  (``SIGALRM``) stops it at no cost per match, for about 4 µs per call.

`run_limited` uses the timer when it can (main thread, ``SIGALRM`` left to its
default or already toklab's, no other interval timer running) and ``timeout=``
otherwise. toklab's handler, once installed, behaves like the default action
(the process ends) for an alarm that is not its own.

Such a pattern is usually written for Hugging Face ``tokenizers``, whose regex engine
(Oniguruma) lists matches slightly differently from Python's ``findall`` where a
pattern matches the empty string; `find_matches` lists them HF's way.
"""

from __future__ import annotations

import _signal
import os
import signal
import threading
import time
from collections.abc import Callable
from typing import TypeVar

import regex

__all__ = ["BASE_SECONDS", "SECONDS_PER_CHAR", "PatternTimeout", "Stretch", "limit_for", "run_limited", "find_matches"]

#: The time limit is this many seconds ...
BASE_SECONDS = 2.0
#: ... plus this many per character of the text.
SECONDS_PER_CHAR = 2e-6
#: An alarm that arrives this soon after a limited call ended is that call's (a late delivery), not someone else's.
_GRACE = 0.5

T = TypeVar("T")
Stretch = tuple[int, int, bool]  # (start, end, is a match)


class PatternTimeout(ValueError):
    """A regular expression from a file or a user ran longer than its time limit and was stopped."""


class _Expired(Exception):
    """Raised by the alarm handler inside the match; turned into `PatternTimeout` by `run_limited`."""


_state = {"armed": False, "ended": 0.0}


def limit_for(n_chars: int) -> float:
    """Seconds a match over ``n_chars`` characters may take."""
    return BASE_SECONDS + SECONDS_PER_CHAR * n_chars


def _on_alarm(signum, frame) -> None:
    if _state["armed"]:
        raise _Expired()
    if time.monotonic() - _state["ended"] < _GRACE:
        return
    # Someone else's alarm, with no handler of their own: do what the default would have done.
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGALRM)


_HAS_TIMER = hasattr(signal, "setitimer")
_SIGALRM = int(getattr(signal, "SIGALRM", 0))


def _timer_available() -> bool:
    if not _HAS_TIMER or threading.get_ident() != threading.main_thread().ident:
        return False
    # The C-level getsignal: the module's own wraps an int in an enum, which costs more than the match of a short text.
    handler = _signal.getsignal(_SIGALRM)
    if handler is _on_alarm:
        return True
    if handler == signal.SIG_DFL:
        signal.signal(signal.SIGALRM, _on_alarm)
        return True
    return False


def run_limited(match: Callable[[float | None], T], seconds: float, message: Callable[[], str]) -> T:
    """``match(timeout)`` stopped after ``seconds``; `PatternTimeout` with ``message()`` if it had to be.

    ``match`` runs the `regex` calls and passes ``timeout`` on to them as their
    ``timeout=`` argument: None when the interval timer guards the call, ``seconds``
    when it cannot.
    """
    try:
        if _timer_available():
            _state["armed"] = True  # before the timer starts, so that even an early alarm counts as ours
            try:
                previous = signal.setitimer(signal.ITIMER_REAL, seconds)
                if previous[0] == 0:
                    try:
                        return match(None)
                    finally:
                        signal.setitimer(signal.ITIMER_REAL, 0)
                signal.setitimer(signal.ITIMER_REAL, *previous)  # another timer runs: leave it to its owner
            finally:
                _state["armed"] = False
                _state["ended"] = time.monotonic()
        try:
            return match(seconds)
        except TimeoutError:
            raise _Expired() from None
    except _Expired:
        raise PatternTimeout(message()) from None


def find_matches(rx: regex.Pattern, text: str, timeout: float | None = None) -> list[Stretch]:
    """The text as ordered, contiguous stretches ``(start, end, is_match)``, HF's ``find_matches``.

    Matches are searched for as Oniguruma's iterator searches: from where the last
    match ended, except that an empty match right there does not count and the
    search moves on one character. Empty matches are listed (HF's merging split
    behaviours and ``Replace`` see them). ``timeout`` goes to the `regex` calls; run
    this inside `run_limited`.
    """
    if not text:
        return [(0, 0, False)]
    if not rx.groups:
        found = rx.findall(text, timeout=timeout)
        if "" not in found and len("".join(found)) == len(text):  # the usual case: the matches tile the text
            out, pos = [], 0
            for piece in found:
                out.append((pos, pos + len(piece), True))
                pos += len(piece)
            return out
    out = []
    prev = pos = 0
    last_end = -1
    while pos <= len(text):
        m = rx.search(text, pos, timeout=timeout)
        if m is None:
            break
        start, end = m.span()
        if start == end and end == last_end:
            pos = end + 1
            continue
        if start > prev:
            out.append((prev, start, False))
        out.append((start, end, True))
        prev = pos = last_end = end
    if prev < len(text):
        out.append((prev, len(text), False))
    return out
