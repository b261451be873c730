"""One submission in its own process, with a time limit and a memory limit.

`run` starts ``python -P -m toklab.teaching.exercises.sandbox`` in the submission's folder
(``-P``, and this toklab first on ``PYTHONPATH``: a file there named
``toklab.py`` or ``random.py`` cannot shadow toklab or the standard
library), which

1. loads the exercise's checker (`toklab.teaching.exercises.get`);
2. sets its own limits with ``resource.setrlimit``: address space
   (``RLIMIT_AS``, the memory limit), CPU time (``RLIMIT_CPU``, a backstop
   for the wall-clock limit the parent enforces), no core files, and a cap
   on the size of files it writes;
3. says it is ready (the time limit starts then, so loading Python and
   toklab does not count against the submission);
4. imports the file as module ``submission`` (so ``if __name__ ==
   "__main__":`` blocks do not run), without writing ``__pycache__`` next to
   it, takes the function the exercise asks for, and runs the checker;
5. reports one JSON result on a pipe of its own (the submission's prints go
   to standard output as usual), and ends with ``os._exit``, so atexit
   handlers and stray threads cannot hold it up.

The parent kills the child's whole process group when the time is up or the
result is in. An infinite loop, a crash (even a segfault), a ``sys.exit``, a
huge allocation or an import error becomes an `Outcome` with its `STATUSES`
entry; nothing the submission does stops the caller. The limits contain
mistakes, not malice: this is not a security sandbox (run untrusted code in a
container or a throwaway account).
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["ALIASES", "STATUSES", "Limits", "Outcome", "run", "stop_all"]

#: What an `Outcome` can say: the check passed; it failed on a case; the time limit ran out; the memory
#: limit was hit; the process died (a signal); it exited before reporting; the file could not be imported;
#: it has no such function; the checker could not run.
STATUSES = ("passed", "failed", "timeout", "memory", "crashed", "exited", "import-error", "no-function", "error")

#: Other names accepted for an exercise's function, only where the exercise's statement leaves the name
#: open. ch03_1-ex1 says "Write `bytes_to_unicode()` yourself ... Check it with
#: check_bytes_to_unicode(your_function)", and the chapter's solution calls it my_bytes_to_unicode.
ALIASES: dict[str, tuple[str, ...]] = {"ch03_1-ex1": ("my_bytes_to_unicode",)}

STARTUP_SECONDS = 120.0  # to start Python and load the checker, before the time limit starts
FILE_LIMIT = 64 << 20  # bytes any one file the submission writes may reach
_MODULE = "submission"
_LIVE: set[subprocess.Popen] = set()  # children being run, for stop_all


@dataclass(frozen=True)
class Limits:
    """Per submission: wall-clock ``seconds`` (from when the checker is loaded) and ``memory_mb`` of address space."""

    seconds: float = 60.0
    memory_mb: int = 2048


@dataclass
class Outcome:
    """What became of one submission.

    ``status`` is one of `STATUSES`; ``summary`` is one line (the checker's
    "all N cases passed" line, the first failing case, or what went wrong);
    ``report`` is what a student needs to see (the checker's failure block,
    the submission's own traceback); ``failure`` holds the
    `toklab.teaching.exercises.CheckFailure` fields of a failed case; ``function`` is
    the name of the function that was checked (None if none was found).
    """

    file: str
    status: str
    summary: str
    seconds: float
    report: str = ""
    failure: dict[str, Any] | None = field(default=None)
    function: str | None = None

    @property
    def passed(self) -> bool:
        return self.status == "passed"


# ---------------------------------------------------------------------------- the parent


def run(label: str, path: str | os.PathLike, *, function: str | None = None, limits: Limits = Limits(),
        show_output: bool = False) -> Outcome:
    """Check the submission at ``path`` against exercise ``label`` in a child process.

    ``function`` overrides the name the exercise asks for. With
    ``show_output`` the submission's prints reach this process's standard
    output and error; otherwise they are discarded (standard error is kept to
    explain a crash).
    """
    path = Path(path).resolve()
    read_fd, write_fd = os.pipe()
    # The child imports the toklab this process runs (first on its path), whatever the working directory.
    package_root = str(Path(__file__).resolve().parents[3])  # src/, holding toklab/teaching/exercises/
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([package_root, *filter(None, [os.environ.get("PYTHONPATH")])]))
    command = [sys.executable, "-P", "-m", "toklab.teaching.exercises.sandbox", str(write_fd), label, str(path),
               function or "", str(limits.memory_mb), repr(float(limits.seconds))]
    errors = None if show_output else tempfile.TemporaryFile()
    start = time.monotonic()
    try:
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=None if show_output else subprocess.DEVNULL,
                                stderr=errors, pass_fds=(write_fd,), cwd=path.parent, env=env,
                                start_new_session=True)
    finally:
        os.close(write_fd)
    _LIVE.add(proc)
    result = ready_at = None
    try:
        result, ready_at = _collect(read_fd, limits.seconds)
        elapsed = time.monotonic() - (ready_at or start)
    finally:
        os.close(read_fd)
        _stop(proc, graceful=result is not None and result.get("event") == "result")
        _LIVE.discard(proc)
    try:
        return _outcome(path, result, proc.returncode, elapsed, limits, _last_line(errors), ready_at is not None)
    finally:
        if errors is not None:
            errors.close()


def stop_all() -> None:
    """Kill every submission still running (on Ctrl-C, say): their process groups, at once."""
    for proc in list(_LIVE):
        _stop(proc, graceful=False)


def _collect(fd: int, seconds: float) -> tuple[dict | None, float | None]:
    """The child's result message (None if it never came) and when it said it was ready."""
    selector = selectors.DefaultSelector()
    selector.register(fd, selectors.EVENT_READ)
    buffer, ready_at = b"", None
    deadline = time.monotonic() + STARTUP_SECONDS
    try:
        while (remaining := deadline - time.monotonic()) > 0:
            if not selector.select(remaining):
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None, ready_at  # the child is gone without a result
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                try:
                    message = json.loads(line)
                except ValueError:
                    continue  # not ours (the submission wrote to the pipe): ignore it
                if not isinstance(message, dict):
                    continue
                if message.get("event") == "ready" and ready_at is None:
                    ready_at = time.monotonic()
                    deadline = ready_at + seconds
                elif message.get("event") == "result":
                    return message, ready_at
        return {"event": "timeout"}, ready_at
    finally:
        selector.close()


def _stop(proc: subprocess.Popen, graceful: bool) -> None:
    """Let a child that has reported exit (``graceful``), then kill its process group (it and anything it started)."""
    if graceful and proc.poll() is None:
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _last_line(errors) -> str:
    if errors is None:
        return ""
    errors.seek(max(0, errors.seek(0, os.SEEK_END) - 4096))
    lines = [line for line in errors.read().decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def _outcome(path: Path, result: dict | None, returncode: int | None, elapsed: float, limits: Limits,
             stderr_line: str, ready: bool) -> Outcome:
    name = path.name
    if result is not None and result.get("event") == "result":
        return Outcome(name, result["status"], result["summary"], result["seconds"], result.get("report", ""),
                       result.get("failure"), result.get("function"))
    if result is not None and not ready:
        return Outcome(name, "error", f"the checker did not start within {STARTUP_SECONDS:g} s (is the machine "
                       "overloaded?)", elapsed)
    if result is not None:  # timeout
        return Outcome(name, "timeout", f"no result within the {limits.seconds:g} s time limit (an endless loop, or "
                       "far too slow)", elapsed)
    said = f" (its last words: {stderr_line[:200]})" if stderr_line else ""
    if returncode is not None and returncode < 0:
        signum = -returncode
        if signum == signal.SIGXCPU:
            return Outcome(name, "timeout", f"used up its CPU time ({limits.seconds:g} s limit)", elapsed)
        sig = signal.Signals(signum).name if signum in signal.valid_signals() else str(signum)
        return Outcome(name, "crashed", f"the process was killed by {sig}{said}", elapsed)
    return Outcome(name, "exited", f"the process exited with status {returncode} before reporting a result (os._exit "
                   f"in the submission?){said}", elapsed)


# ---------------------------------------------------------------------------- the child


def _student_traceback(exc: BaseException, path: str) -> str:
    """The exception with only the submission's own frames (the checker's are noise to a student)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
    lines = traceback.format_list(frames) if frames else []
    return ("Traceback (the submission's frames):\n" if frames else "") + "".join(lines) + "".join(
        traceback.format_exception_only(type(exc), exc))


def _limit(memory_mb: int, seconds: float) -> str | None:
    """Set this process's limits; an error message if the memory limit is below what is already in use."""
    import resource

    in_use = 0
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            in_use = next((int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:")), 0)
    except OSError:
        pass
    limit = memory_mb << 20
    if in_use and limit < in_use + (32 << 20):
        return (f"the memory limit ({memory_mb} MB) leaves no room: Python and the checker already use "
                f"{in_use >> 20} MB; raise --memory")
    for name, value in (("RLIMIT_AS", limit), ("RLIMIT_CORE", 0), ("RLIMIT_FSIZE", FILE_LIMIT)):
        which = getattr(resource, name)
        hard = resource.getrlimit(which)[1]
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (value, hard))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = int(usage.ru_utime + usage.ru_stime + seconds) + 2
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    if hard == resource.RLIM_INFINITY or hard > cpu:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, hard))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the cap fails with an OSError instead
    return None


def _import(path: Path):
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.SourceFileLoader(_MODULE, str(path))
    spec = importlib.util.spec_from_loader(_MODULE, loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[_MODULE] = module
    sys.path.append(str(path.parent))  # its own helper modules, after toklab's and the standard library's
    loader.exec_module(module)
    return module


def _check(entry, path: Path, names: list[str], memory_mb: int) -> dict[str, Any]:
    from toklab.teaching.exercises.harness import show

    where = str(path)
    try:
        module = _import(path)
    except SystemExit as exc:
        return {"status": "exited", "summary": f"the file calls sys.exit({exc.code!r}) when imported: keep the "
                "script part under if __name__ == '__main__':"}
    except MemoryError:
        return {"status": "memory", "summary": f"ran out of memory (limit {memory_mb} MB) while being imported"}
    except SyntaxError as exc:
        return {"status": "import-error", "summary": f"{type(exc).__name__}: {exc.msg} (line {exc.lineno})",
                "report": "".join(traceback.format_exception_only(type(exc), exc))}
    except BaseException as exc:  # noqa: BLE001 - anything the file raises on import is the submission's
        return {"status": "import-error", "summary": f"importing it raised {type(exc).__name__}: "
                f"{' '.join(str(exc).split())}"[:300], "report": _student_traceback(exc, where)}
    used = next((n for n in names if hasattr(module, n)), None)
    if used is None:
        defined = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_")
                         and getattr(v, "__module__", None) == _MODULE)
        return {"status": "no-function", "summary": f"defines no function {names[0]}() (the exercise asks for it); "
                f"it defines: {', '.join(defined) or 'no functions'}"}
    fn = getattr(module, used)
    if not callable(fn):
        return {"status": "no-function", "summary": f"{used} is not a function (it is {show(fn, 60)})"}
    result = _run_checker(entry, fn, where, memory_mb)
    result["function"] = used
    return result


def _run_checker(entry, fn, where: str, memory_mb: int) -> dict[str, Any]:
    from toklab.teaching.exercises import CheckFailure

    try:
        return {"status": "passed", "summary": entry.check(fn)}
    except CheckFailure as failure:
        cause = failure.__cause__
        report = failure.report() + (f"\n\n{_student_traceback(cause, where)}" if cause is not None else "")
        case = f"case {failure.number} ({failure.case})"
        if isinstance(cause, MemoryError):
            return {"status": "memory", "summary": f"ran out of memory (limit {memory_mb} MB) on {case}",
                    "report": report, "failure": failure.fields()}
        summary = f"{case}: input {failure.input}; expected {failure.expected}; got {failure.got}"
        return {"status": "failed", "summary": summary, "report": report, "failure": failure.fields()}
    except SystemExit as exc:
        return {"status": "exited", "summary": f"the submission called sys.exit({exc.code!r}) while being checked"}
    except MemoryError:
        return {"status": "memory", "summary": f"ran out of memory (limit {memory_mb} MB) while being checked"}
    except BaseException as exc:  # noqa: BLE001
        return {"status": "error", "summary": f"the checker stopped with {type(exc).__name__}: {exc}"[:300],
                "report": _student_traceback(exc, where)}


def _child(argv: list[str]) -> None:
    fd, label, path, function, memory_mb, seconds = argv
    channel = os.fdopen(int(fd), "w", encoding="utf-8")

    def send(**message: Any) -> None:
        channel.write(json.dumps(message) + "\n")
        channel.flush()

    sys.dont_write_bytecode = True
    from toklab.teaching import exercises

    try:
        entry = exercises.get(label)
    except KeyError as exc:
        send(event="result", status="error", summary=str(exc.args[0]), seconds=0.0)
        os._exit(0)
    names = [function] if function else [entry.function, *ALIASES.get(label, ())]
    problem = _limit(int(memory_mb), float(seconds))
    if problem:
        send(event="result", status="error", summary=problem, seconds=0.0)
        os._exit(0)
    send(event="ready")
    start = time.perf_counter()
    result = _check(entry, Path(path), names, int(memory_mb))
    result["seconds"] = time.perf_counter() - start
    try:
        send(event="result", **result)
    except (TypeError, ValueError):  # a failure field that JSON cannot hold: keep the text only
        result.pop("failure", None)
        send(event="result", **result)
    for stream in (sys.stdout, sys.stderr):  # the submission's prints, before os._exit drops them
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(0)


if __name__ == "__main__":
    _child(sys.argv[1:])
