"""One format for every exercise checker, and the registry that names them.

A checker runs a reader's function on cases with known answers. It stops at
the first case that disagrees and raises `CheckFailure`, an AssertionError
that carries five fields, printed as one block in this order:

- ``case``: what was being checked (``"ranks reversed: rank 0 is (b, c)"``);
- ``input``: the call that went wrong, written so it can be pasted and re-run;
- ``expected``: toklab's answer;
- ``got``: the reader's answer, or ``raised ValueError: ...`` when the
  reader's function raised (the exception is chained as the failure's cause,
  so its traceback is printed too);
- ``hint``: the mistake that most likely explains the difference.

When every case passes a checker returns one line of the same shape for all
of them: ``"ch02_1-ex2: all 311 cases passed (my_encode agrees with ...)"``.

A checker is written as a function of a `Run` and the reader's function, and
registered with `exercise`, which turns it into ``check_x(fn) -> str``::

    @exercise("ch02_1-ex2", title="BPE encoding from ranks", function="my_encode",
              reference=reference_encode, against="toklab.bpe.reference_encode")
    def check_encode(run, fn):
        for symbols, merges, name in cases():
            case = run.case(name, expected=reference_encode(symbols, merges))
            got = case.call(fn, list(symbols), list(merges))
            if got != case.expected:
                case.fail(got, hint="...")

`Run.case` opens a case (and counts the previous one as passed); `Case.call`
calls the reader's function, turning any exception it raises into a
failure; `Case.expect_error` checks a call that must raise; `Case.fail`
reports. Each registered checker is an `Exercise` in `REGISTRY`, found by its
label with `get`: the label is the chapter's exercise label
(``<chapter file stem>-exN``), ``function`` is the name the exercise asks the
reader to define, and ``reference`` is toklab's own answer, which must pass.

Every checker ends with at least one *large* case, timed against toklab's own
code on the same input: `Run.timed` runs toklab's function and measures it, and
a case opened with ``seconds=`` fails as too slow when the reader's function
takes more than `SLOW_RATIO` times as long (and `SLOW_MARGIN` more). The limit
is a ratio measured in the same process at the same moment, never a fixed time,
so a busy or slow machine moves both sides. In the main thread the call is
interrupted (``SIGALRM``) when its budget runs out, so an exponential solution
fails in about a second instead of running for hours.

A checker may be handed a stand-in for the reader's function rather than the
function itself: `toklab.teaching.exercises.sandbox` passes one that runs the call in the
submission's own process. It has a ``call_within(budget, args, kwargs)`` method,
which `Case.call` uses, and it may raise `Interrupted` (the submission's process
is gone, or out of time), which ends the check. `derived` builds a function of
the reader's function that runs where the reader's function runs.
"""

from __future__ import annotations

import functools
import inspect
import re
import signal
import textwrap
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, NoReturn

__all__ = [
    "CheckFailure",
    "Case",
    "Exercise",
    "Interrupted",
    "Passed",
    "REGISTRY",
    "Run",
    "SLOW_MARGIN",
    "SLOW_RATIO",
    "Shown",
    "TooSlow",
    "checkers",
    "count_cases",
    "derived",
    "exercise",
    "get",
    "show",
]

#: A reader's function that takes more than this many times as long as toklab's on a large case fails it ...
SLOW_RATIO = 20.0
#: ... provided it is also this many seconds slower: on a busy machine a call can wait that long for a core
#: (a reference call of 17 ms once took over 0.3 s under load), and that is not slowness. The far-too-slow
#: solutions take many seconds (a quadratic BPE encoder 270x, an exponential Viterbi hours).
SLOW_MARGIN = 1.0

#: The fields of a failure, in the order they are printed.
FIELDS = ("case", "input", "expected", "got", "hint")

_WIDTH = 100  # hints are wrapped to this width; values are never wrapped
_VALUE_LIMIT = 400  # characters of an expected or received value shown
_INPUT_LIMIT = 800  # characters of an input shown
_LABEL = re.compile(r"(?P<chapter>ch\d\d(?:_\d+)?)-ex(?P<number>\d+)")


class Shown(str):
    """Text a checker has already written for display; `show` prints it as it is, without quotes."""


def show(value: object, limit: int = _VALUE_LIMIT) -> str:
    """``value`` for a failure message: its repr, cut at ``limit`` characters.

    Sets are sorted, so that the text is the same in every process; a `Shown`
    value is printed as it is.
    """
    if isinstance(value, Shown):
        text = str(value)
    elif isinstance(value, (set, frozenset)):
        inner = ", ".join(sorted(repr(v) for v in value))
        text = "{" + inner + "}" if value else f"{type(value).__name__}()"
    else:
        try:
            text = repr(value)
        except Exception as exc:  # noqa: BLE001 - a reader's object with a broken __repr__
            text = f"<a {type(value).__name__} whose repr raised {type(exc).__name__}>"
    if len(text) > limit:
        size = f"{len(value):,} items" if isinstance(value, (list, tuple, dict, set, frozenset)) else ""
        text = f"{text[:limit]}... ({size or f'{len(text):,} characters'} in all)"
    return text


def _call_text(function: str, args: tuple, kwargs: Mapping[str, Any]) -> str:
    parts = [show(a) for a in args] + [f"{k}={show(v)}" for k, v in kwargs.items()]
    return show(Shown(f"{function}({', '.join(parts)})"), _INPUT_LIMIT)


def _raised(exc: BaseException) -> Shown:
    """``raised ValueError: message``, on one line (the block keeps one line per field)."""
    try:
        message = " ".join(str(exc).split())
    except Exception:  # noqa: BLE001 - an exception whose __str__ fails
        message = ""
    text = f"raised {type(exc).__name__}: {message}" if message else f"raised {type(exc).__name__}"
    return Shown(show(Shown(text)))


def _error_names(errors: tuple[type[BaseException], ...]) -> str:
    return " or ".join(e.__name__ for e in errors)


# ---------------------------------------------------------------------------- calls


class Passed(str):
    """A checker's pass line; ``cases`` is how many cases passed."""

    def __new__(cls, text: str, cases: int) -> Passed:
        self = super().__new__(cls, text)
        self.cases = cases
        return self


class TooSlow(BaseException):
    """A timed call ran past its budget (raised inside the reader's code by ``SIGALRM``, or by a stand-in).

    A BaseException, so that the reader's own ``except Exception`` does not swallow it.
    """

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no answer within {seconds:.2f} s")
        self.seconds = seconds


class Interrupted(BaseException):
    """The reader's function cannot be called any more: its process ended, or ran out of time.

    Raised by a stand-in (see `toklab.teaching.exercises.sandbox`); ``status`` and ``summary``
    say what happened, ``case`` is the `Case` that was running (filled in by `Case.call`).
    """

    def __init__(self, status: str, summary: str, report: str = "") -> None:
        super().__init__(summary)
        self.status, self.summary, self.report = status, summary, report
        self.case: Case | None = None


def _invoke(fn: Callable, args: tuple, kwargs: Mapping[str, Any], budget: float | None) -> tuple[Any, float]:
    """``fn(*args, **kwargs)`` and its duration; `TooSlow` when it runs past ``budget`` seconds."""
    within = getattr(fn, "call_within", None)
    if within is not None:
        return within(budget, args, kwargs)
    alarm = (budget is not None and hasattr(signal, "setitimer")
             and threading.current_thread() is threading.main_thread())
    if alarm:
        def on_alarm(signum, frame):  # noqa: ARG001 - the signal handler's signature
            raise TooSlow(budget)

        previous = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, budget)
    start = time.perf_counter()
    try:
        value = fn(*args, **kwargs)
    finally:
        elapsed = time.perf_counter() - start
        if alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    return value, elapsed


def derived(fn: Callable, adapter: Callable[..., Any]) -> Callable[..., Any]:
    """``lambda *a, **k: adapter(fn, *a, **k)``, run where ``fn`` runs.

    For a function of the reader's function whose work must happen in the reader's
    process (running the regular expression it returned, say). ``adapter`` must be a
    module-level function (it is pickled by name).
    """
    derive = getattr(fn, "derive", None)
    return derive(adapter) if derive is not None else functools.partial(adapter, fn)


# ---------------------------------------------------------------------------- failures


class CheckFailure(AssertionError):
    """The first case where a reader's function disagrees with toklab.

    ``case``, ``input``, ``expected``, ``got`` and ``hint`` are display text
    (see the module docstring); ``label`` is the exercise, ``function`` the
    name the exercise asked for, ``number`` the case's position (1-based) in
    the checker's run. ``str()`` is the whole report as one block.
    """

    def __init__(
        self, *, label: str, function: str, number: int, case: str, input: str, expected: str, got: str, hint: str,
        slow: bool = False,
    ) -> None:
        self.label, self.function, self.number = label, function, number
        self.case, self.input, self.expected, self.got, self.hint = case, input, expected, got, hint
        #: True when the answer was too slow (or never came) rather than wrong.
        self.slow = slow
        super().__init__(self.report())

    def fields(self) -> dict[str, Any]:
        """Every field by name (for a grader's table, say)."""
        return {"label": self.label, "function": self.function, "number": self.number,
                **{name: getattr(self, name) for name in FIELDS}, "slow": self.slow}

    def report(self) -> str:
        """The block ``str()`` shows: a heading, then one field a line (case and hint wrapped)."""
        verb = "is too slow on" if self.slow else "fails"
        lines = [f"{self.label}: {self.function} {verb} case {self.number}"]
        for name in FIELDS:
            head = f"  {name + ':':<10}"
            value = getattr(self, name)
            if name in ("case", "hint"):
                wrapped = textwrap.fill(value, _WIDTH, initial_indent=head, subsequent_indent=" " * len(head),
                                        break_on_hyphens=False)
                lines.append(wrapped or head.rstrip())
            else:
                lines.append(head + " ".join(value.splitlines()))
        return "\n".join(lines)

    def __reduce__(self):  # keyword-only fields: rebuild from them (a grader may pickle a failure)
        return (_rebuild, (self.fields(),))


def _rebuild(fields: dict[str, Any]) -> CheckFailure:
    return CheckFailure(**fields)


# ---------------------------------------------------------------------------- one run of a checker


class Run:
    """The cases of one checker run: numbers them, counts the passes, writes the summary."""

    def __init__(self, label: str, function: str, against: str) -> None:
        self.label = label
        self.function = function
        #: What the reader's function is compared with; a checker may add to it while it runs.
        self.against = against
        self.passed = 0
        #: The case being checked, None between cases.
        self.current: Case | None = None

    def case(self, name: str, *, expected: object, input: str | None = None, seconds: float | None = None,
             slow_hint: str = "") -> Case:
        """Open the next case (the previous one, not having failed, counts as passed).

        ``expected`` is toklab's answer (a value, shown with `show`, or `Shown`
        text); ``input`` is display text, by default written by `Case.call`
        from the arguments it passes. ``seconds`` (from `timed`) makes it a
        timed case: the reader's function may take `SLOW_RATIO` times as long;
        ``slow_hint`` names the likely cause when it takes longer.
        """
        self._close()
        self.current = Case(self, self.passed + 1, name, expected, input)
        self.current.seconds, self.current.slow_hint = seconds, slow_hint
        return self.current

    def timed(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, float]:
        """``function(*args, **kwargs)`` (toklab's code) and the seconds it took: a large case's yardstick."""
        start = time.perf_counter()
        value = function(*args, **kwargs)
        return value, time.perf_counter() - start

    def summary(self) -> Passed:
        self._close()
        return Passed(f"{self.label}: all {self.passed:,} cases passed ({self.function} agrees with {self.against})",
                      self.passed)

    def _close(self) -> None:
        if self.current is not None:
            self.passed += 1
            self.current = None


class Case:
    """One case: its name, input and expected answer, and the ways it can fail."""

    def __init__(self, run: Run, number: int, name: str, expected: object, input: str | None) -> None:
        self.run = run
        self.number = number
        self.name = name
        self.expected = expected
        self.input = input
        self.seconds: float | None = None
        self.slow_hint = ""

    def call(
        self,
        fn: Callable,
        *args: Any,
        error_hint: str | Callable[[Exception], str] | None = None,
        **kwargs: Any,
    ) -> Any:
        """``fn(*args, **kwargs)``; an exception it raises becomes this case's failure.

        The input is written from the arguments before the call (the reader's
        function may change them). ``error_hint`` explains an exception (text,
        or a function of the exception); without it the hint says where to look.
        On a timed case (``seconds=`` in `Run.case`) a call that runs past its
        budget fails the case as too slow.
        """
        if self.input is None:
            self.input = _call_text(self.run.function, args, kwargs)
        budget = self.budget()
        try:
            value, elapsed = _invoke(fn, args, kwargs, budget)
        except TooSlow as slow:
            self._too_slow(slow.seconds, finished=False)
        except Interrupted as stop:
            stop.case = stop.case or self
            raise
        except Exception as exc:  # noqa: BLE001 - whatever the reader's code raises is reported, not propagated
            if callable(error_hint):
                hint = error_hint(exc)
            else:
                hint = error_hint or (
                    f"{self.run.function} raised {type(exc).__name__} on this input; call it with the input "
                    "above to see where (the exception is this failure's __cause__, with its traceback)"
                )
            self.fail(_raised(exc), hint, cause=exc)
        if budget is not None and elapsed > budget:
            self._too_slow(elapsed, finished=True)
        return value

    def budget(self) -> float | None:
        """The seconds the reader's function may take on this case (None: not a timed case)."""
        if self.seconds is None:
            return None
        return max(SLOW_RATIO * self.seconds, self.seconds + SLOW_MARGIN)

    def _too_slow(self, elapsed: float, *, finished: bool) -> NoReturn:
        ratio = elapsed / self.seconds if self.seconds else float("inf")
        what = "answered" if finished else "still running"
        got = Shown(f"{what} after {elapsed:.2f} s, {ratio:.0f}x toklab's {self.seconds:.3f} s on this input "
                    f"(the limit is {SLOW_RATIO:g}x)")
        hint = self.slow_hint or ("far slower than it needs to be on a large input: look for work repeated "
                                  "inside a loop (a search through a list, a rescan from the start, a copy)")
        self.fail(got, hint, slow=True)

    def expect_error(
        self,
        fn: Callable,
        *args: Any,
        errors: tuple[type[BaseException], ...] = (ValueError,),
        why: str,
        **kwargs: Any,
    ) -> None:
        """Check that ``fn(*args, **kwargs)`` raises one of ``errors``; ``why`` says why it must."""
        names = _error_names(errors)
        self.expected = Shown(f"raises {names}")
        if self.input is None:
            self.input = _call_text(self.run.function, args, kwargs)
        try:
            got, _ = _invoke(fn, args, kwargs, None)
        except errors:
            return
        except Interrupted as stop:
            stop.case = stop.case or self
            raise
        except Exception as exc:  # noqa: BLE001
            self.fail(_raised(exc), f"{why}: check the input yourself and raise {names} with a clear "
                      f"message, before the computation fails on its own", cause=exc)
        self.fail(Shown(f"returned {show(got)}"), f"{why}, so {self.run.function} must raise {names}, "
                  "not return a value")

    def fail(self, got: object, hint: str, *, expected: object = None, cause: BaseException | None = None,
             slow: bool = False) -> NoReturn:
        """Raise this case's `CheckFailure` (``expected`` replaces the case's expected answer for display)."""
        run = self.run
        failure = CheckFailure(
            label=run.label,
            function=run.function,
            number=self.number,
            case=self.name,
            input=self.input if self.input is not None else f"{run.function}(...)",
            expected=show(self.expected if expected is None else expected),
            got=show(got),
            hint=hint,
            slow=slow,
        )
        raise failure from cause


# ---------------------------------------------------------------------------- the registry


@dataclass(frozen=True)
class Exercise:
    """A registered checker.

    ``label`` is the exercise's label in the book (``"ch02_1-ex2"``),
    ``chapter`` its chapter's file stem (``"ch02_1"``), ``title`` one line,
    ``function`` the name of the function the reader must define,
    ``check(fn) -> str`` the checker, ``reference`` toklab's own answer (a
    function that passes the check) and ``against`` what the checker compares
    with. ``answers`` names (dotted) the toklab functions that answer the
    exercise outright: a graded submission that is one of them, or calls one,
    is flagged. ``graded`` is False for an exercise whose checker is meant to
    fail on the function its text asks for (the lesson is the failure), so it
    is answered in words and `grade` refuses it.
    """

    label: str
    chapter: str
    number: int
    title: str
    function: str
    check: Callable[..., str]
    reference: Callable[..., Any]
    against: str
    answers: tuple[str, ...] = ()
    graded: bool = True

    @property
    def signature(self) -> str:
        """The call the checker makes, ``my_encode(symbols, merges)``: the reference's parameters, by name."""
        params = [p.replace(annotation=inspect.Parameter.empty)
                  for p in inspect.signature(self.reference).parameters.values()]
        return f"{self.function}{inspect.Signature(params)}"


_REGISTRY: dict[str, Exercise] = {}
#: Every registered checker by exercise label, in book order (read-only).
REGISTRY: Mapping[str, Exercise] = MappingProxyType(_REGISTRY)


def exercise(
    label: str, *, title: str, function: str, reference: Callable[..., Any], against: str,
    answers: tuple[str, ...] | None = None, graded: bool = True,
) -> Callable[[Callable[..., None]], Callable[..., str]]:
    """Register a checker written as ``body(run, fn, **options)``; returns ``check(fn, **options) -> str``.

    The label's chapter must be the defining module's name (``ch02_1`` for
    ``toklab.teaching.exercises.ch02_1``), so a checker cannot be filed under the wrong
    chapter; a label can be registered once. ``answers`` defaults to the reference
    when it is a public toklab function outside the exercises (see `Exercise`).
    """
    if answers is None:
        module, name = getattr(reference, "__module__", ""), getattr(reference, "__name__", "_")
        outside = module.startswith("toklab.") and not module.startswith(__name__.rsplit(".", 1)[0])
        answers = (f"{module}.{name}",) if outside and not name.startswith("_") else ()
    match = _LABEL.fullmatch(label)
    if match is None:
        raise ValueError(f"exercise label {label!r} is not of the form <chapter file stem>-exN, e.g. 'ch02_1-ex2'")
    if not function.isidentifier():
        raise ValueError(f"function {function!r} is not a Python identifier")

    def register(body: Callable[..., None]) -> Callable[..., str]:
        module = body.__module__.rsplit(".", 1)[-1]
        if module != match["chapter"]:
            raise ValueError(f"checker {body.__name__} for {label!r} is defined in module {module!r}, "
                             f"not in {match['chapter']!r}")
        if label in _REGISTRY:
            raise ValueError(f"exercise {label!r} already has a checker ({_REGISTRY[label].check.__name__})")

        @functools.wraps(body)
        def check(fn: Callable, **options: Any) -> str:
            run = Run(label, function, against)
            try:
                body(run, fn, **options)
            except CheckFailure:
                raise
            except Exception as exc:
                # Only the reader's return value can make a correct checker fail mid-case (an
                # object whose == or iteration raises, say): report it as this case's failure.
                if run.current is None:
                    raise
                run.current.fail(
                    Shown(f"a value the checker cannot use ({_raised(exc)[len('raised '):]})"),
                    "return plain Python values (list, tuple, dict, str, int, float) of the kind the "
                    "exercise asks for.", cause=exc)
            return run.summary()

        params = list(inspect.signature(body).parameters.values())[1:]  # the run is the harness's business
        check.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
        del check.__wrapped__  # so that inspect.signature reads __signature__
        entry = Exercise(label, match["chapter"], int(match["number"]), title, function, check, reference, against,
                         tuple(answers), graded)
        check.exercise = entry  # type: ignore[attr-defined]
        _REGISTRY[label] = entry
        ordered = sorted(_REGISTRY.values(), key=lambda e: (e.chapter, e.number))
        _REGISTRY.clear()
        _REGISTRY.update((e.label, e) for e in ordered)
        return check

    return register


@functools.lru_cache(maxsize=None)
def count_cases(label: str) -> int:
    """How many cases the checker of ``label`` runs (by running it on toklab's own answer)."""
    entry = get(label)
    return entry.check(entry.reference).cases


def checkers() -> Iterator[Exercise]:
    """Every registered checker, in book order."""
    return iter(tuple(_REGISTRY.values()))


def get(label: str) -> Exercise:
    """The checker of exercise ``label``; KeyError names the known labels."""
    try:
        return _REGISTRY[label]
    except KeyError:
        known = ", ".join(_REGISTRY) or "none (import toklab.teaching.exercises to register them)"
        raise KeyError(f"no checker for exercise {label!r}; exercises with a checker: {known}") from None
