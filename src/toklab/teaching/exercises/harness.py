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

The checkers do not guard against a function that never returns: a grader
should run each submission in its own process with a time limit.
"""

from __future__ import annotations

import functools
import inspect
import re
import textwrap
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, NoReturn

__all__ = [
    "CheckFailure",
    "Case",
    "Exercise",
    "REGISTRY",
    "Run",
    "Shown",
    "checkers",
    "exercise",
    "get",
    "show",
]

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


# ---------------------------------------------------------------------------- failures


class CheckFailure(AssertionError):
    """The first case where a reader's function disagrees with toklab.

    ``case``, ``input``, ``expected``, ``got`` and ``hint`` are display text
    (see the module docstring); ``label`` is the exercise, ``function`` the
    name the exercise asked for, ``number`` the case's position (1-based) in
    the checker's run. ``str()`` is the whole report as one block.
    """

    def __init__(
        self, *, label: str, function: str, number: int, case: str, input: str, expected: str, got: str, hint: str
    ) -> None:
        self.label, self.function, self.number = label, function, number
        self.case, self.input, self.expected, self.got, self.hint = case, input, expected, got, hint
        super().__init__(self.report())

    def fields(self) -> dict[str, Any]:
        """Every field by name (for a grader's table, say)."""
        return {"label": self.label, "function": self.function, "number": self.number,
                **{name: getattr(self, name) for name in FIELDS}}

    def report(self) -> str:
        """The block ``str()`` shows: a heading, then one field a line (case and hint wrapped)."""
        lines = [f"{self.label}: {self.function} fails case {self.number}"]
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

    def case(self, name: str, *, expected: object, input: str | None = None) -> Case:
        """Open the next case (the previous one, not having failed, counts as passed).

        ``expected`` is toklab's answer (a value, shown with `show`, or `Shown`
        text); ``input`` is display text, by default written by `Case.call`
        from the arguments it passes.
        """
        self._close()
        self.current = Case(self, self.passed + 1, name, expected, input)
        return self.current

    def summary(self) -> str:
        self._close()
        return f"{self.label}: all {self.passed:,} cases passed ({self.function} agrees with {self.against})"

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
        """
        if self.input is None:
            self.input = _call_text(self.run.function, args, kwargs)
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - whatever the reader's code raises is reported, not propagated
            if callable(error_hint):
                hint = error_hint(exc)
            else:
                hint = error_hint or (
                    f"{self.run.function} raised {type(exc).__name__} on this input; call it with the input "
                    "above to see where (the exception is this failure's __cause__, with its traceback)"
                )
            self.fail(_raised(exc), hint, cause=exc)

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
            got = fn(*args, **kwargs)
        except errors:
            return
        except Exception as exc:  # noqa: BLE001
            self.fail(_raised(exc), f"{why}: check the input yourself and raise {names} with a clear "
                      f"message, before the computation fails on its own", cause=exc)
        self.fail(Shown(f"returned {show(got)}"), f"{why}, so {self.run.function} must raise {names}, "
                  "not return a value")

    def fail(self, got: object, hint: str, *, expected: object = None, cause: BaseException | None = None) -> NoReturn:
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
    with.
    """

    label: str
    chapter: str
    number: int
    title: str
    function: str
    check: Callable[..., str]
    reference: Callable[..., Any]
    against: str


_REGISTRY: dict[str, Exercise] = {}
#: Every registered checker by exercise label, in book order (read-only).
REGISTRY: Mapping[str, Exercise] = MappingProxyType(_REGISTRY)


def exercise(
    label: str, *, title: str, function: str, reference: Callable[..., Any], against: str
) -> Callable[[Callable[..., None]], Callable[..., str]]:
    """Register a checker written as ``body(run, fn, **options)``; returns ``check(fn, **options) -> str``.

    The label's chapter must be the defining module's name (``ch02_1`` for
    ``toklab.teaching.exercises.ch02_1``), so a checker cannot be filed under the wrong
    chapter; a label can be registered once.
    """
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
        entry = Exercise(label, match["chapter"], int(match["number"]), title, function, check, reference, against)
        check.exercise = entry  # type: ignore[attr-defined]
        _REGISTRY[label] = entry
        ordered = sorted(_REGISTRY.values(), key=lambda e: (e.chapter, e.number))
        _REGISTRY.clear()
        _REGISTRY.update((e.label, e) for e in ordered)
        return check

    return register


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
