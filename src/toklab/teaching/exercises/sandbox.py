"""Check one submission without letting it decide its own verdict.

`run` checks the submission at a path (a ``.py`` file or a notebook) against an
exercise. The checker runs *here*, in the grading process; the student's code runs in a
process of its own (`toklab.teaching.exercises.worker`), which only ever receives the
checker's inputs and sends back the function's values, as plain data
(`toklab.teaching.exercises.plain`). The checker compares them with toklab's answers
here, so nothing the submission writes (to its pipe, its files, its output) or patches
(in toklab, in its own process) can turn a wrong answer into a pass. A submission that
re-exports toklab's own answer, or calls it, is flagged (status ``reused``).

The worker runs

* in a fresh temporary folder (its working directory and ``HOME``, removed afterwards),
  with a minimal environment: none of the grader's variables but the few that locate
  Python, toklab and its data;
* under the limits the worker sets on itself: address space (the memory limit), CPU time
  (a backstop), no core files, a cap on the size of each file it writes;
* in a session of its own, below a *warden* (`toklab.teaching.exercises.warden`), which is
  the child subreaper of everything below it: when the check ends, every process the
  submission started is killed, a grandchild started with ``setsid`` or a double fork
  included. Between the warden and the worker sits a keeper process, so a submission that
  kills its parent ends its own check, not the grader.

The time limit counts the submission's own time: loading it, and each call, from the
request to the answer. The checker's own work between calls does not count. A timed
(large) case has its own, tighter budget (`toklab.teaching.exercises.harness.SLOW_RATIO`).

What this does not contain: the submission runs as the grading user, so it can read and
write every file that user can, open network connections, and signal (or kill) that
user's other processes, the grader included, if it looks for them. Grade code you do
not trust in a container or a throwaway account.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import plain
from .harness import CheckFailure, Interrupted, TooSlow, get
from .worker import write_frame

__all__ = ["ALIASES", "STATUSES", "STARTUP_SECONDS", "Limits", "Outcome", "run", "stop_all"]

#: What an `Outcome` can say: the check passed; it failed on a case; it was far too slow on a large case;
#: the time limit ran out; the memory limit was hit; the process died (a signal, or it killed its parent);
#: it exited before answering; the file could not be loaded; it has no such function; it hands in toklab's
#: own answer; the checker could not run.
STATUSES = ("passed", "failed", "slow", "timeout", "memory", "crashed", "exited", "import-error", "no-function",
            "reused", "error")

#: Other names accepted for an exercise's function, only where the exercise's statement leaves the name
#: open. ch03_1-ex1 says "Write `bytes_to_unicode()` yourself ... Check it with
#: check_bytes_to_unicode(your_function)", and the chapter's solution calls it my_bytes_to_unicode.
ALIASES: dict[str, tuple[str, ...]] = {"ch03_1-ex1": ("my_bytes_to_unicode",)}

STARTUP_SECONDS = 120.0  # to start Python and toklab in the worker, before the time limit starts
_WARDEN = str(Path(__file__).with_name("warden.py"))
_SRC = str(Path(__file__).resolve().parents[3])  # src/ (or site-packages/), holding toklab/
#: The grader's environment variables a submission's process gets (the rest it does not see).
PASSED_ON = ("PATH", "TOKLAB_DATA_DIR", "TOKLAB_VOCAB_DIR", "SYSTEMROOT")
_LIVE: set[_Worker] = set()  # workers being run, for stop_all
_LIVE_LOCK = threading.Lock()


@dataclass(frozen=True)
class Limits:
    """Per submission: ``seconds`` of its own time (loading it, and its calls) and ``memory_mb`` of address space."""

    seconds: float = 60.0
    memory_mb: int = 2048

    def __post_init__(self) -> None:
        if not (isinstance(self.seconds, (int, float)) and 0 < self.seconds < float("inf")):
            raise ValueError(f"the time limit must be a positive number of seconds, got {self.seconds!r}")
        if self.memory_mb < 64:
            raise ValueError(f"the memory limit must be at least 64 MB, got {self.memory_mb}")


@dataclass
class Outcome:
    """What became of one submission.

    ``status`` is one of `STATUSES`; ``summary`` is one line (the checker's
    "all N cases passed" line, the first failing case, or what went wrong);
    ``report`` is what a student needs to see (the checker's failure block,
    the submission's own traceback); ``failure`` holds the
    `toklab.teaching.exercises.CheckFailure` fields of a failed case; ``function`` is
    the name of the function that was checked (None if none was found);
    ``cases_passed`` counts the cases passed before the first failure (a checker
    stops there).
    """

    file: str
    status: str
    summary: str
    seconds: float
    report: str = ""
    failure: dict[str, Any] | None = field(default=None)
    function: str | None = None
    cases_passed: int = 0

    @property
    def passed(self) -> bool:
        return self.status == "passed"


# ---------------------------------------------------------------------------- the submission's process


class _Pickler(pickle.Pickler):
    """Pickles a request; each toklab object is sent once, then named by a key (the worker keeps it)."""

    def __init__(self, file, worker: _Worker, top: object = None) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.worker, self.top = worker, top

    def persistent_id(self, obj: object) -> int | None:
        if obj is self.top or isinstance(obj, (type, types.FunctionType, types.ModuleType)):
            return None
        if not type(obj).__module__.startswith("toklab."):
            return None
        key = self.worker.sent.get(id(obj))
        if key is None:
            key = len(self.worker.kept)
            self.worker.sent[id(obj)] = key
            self.worker.kept.append(obj)  # alive, so that its id is never reused for another object
            blob = io.BytesIO()
            _Pickler(blob, self.worker, top=obj).dump(obj)
            self.worker.pending.append((key, blob.getvalue()))
        return key


class _Worker:
    """One submission's process, its warden, and the pipes to it; counts the submission's own time."""

    def __init__(self, label: str, answers: tuple[str, ...], path: Path, names: list[str], limits: Limits,
                 show_output: bool) -> None:
        self.label, self.answers, self.path, self.names = label, answers, path, names
        self.limits, self.show_output = limits, show_output
        self.used = 0.0  # seconds of the submission's own time so far
        self.sent: dict[int, int] = {}
        self.kept: list[object] = []
        self.pending: list[tuple[int, bytes]] = []
        self.reused: set[str] = set()
        self.warden: subprocess.Popen | None = None
        self.warden_said: list[dict] = []
        self.workdir: str | None = None
        self.errors = None
        self.request_fd = self.reply_fd = -1
        self.dead: Interrupted | None = None

    # -- starting and stopping

    def start(self) -> dict:
        """Start the worker; the message that says what loading the submission gave."""
        self.workdir = tempfile.mkdtemp(prefix="toklab-check-")
        request_r, self.request_fd = os.pipe()
        self.reply_fd, reply_w = os.pipe()
        devnull = os.open(os.devnull, os.O_RDWR)
        if self.show_output:
            out, err = os.dup(1), os.dup(2)
        else:
            self.errors = tempfile.TemporaryFile()
            out, err = os.dup(devnull), os.dup(self.errors.fileno())
        env = {k: os.environ[k] for k in PASSED_ON if k in os.environ}
        env.update(HOME=self.workdir, TMPDIR=self.workdir, LANG="C.UTF-8", LC_ALL="C.UTF-8", PYTHONHASHSEED="0",
                   PYTHONPATH=_SRC, PYTHONDONTWRITEBYTECODE="1", PYTHONIOENCODING="utf-8", PYTHONNOUSERSITE="1",
                   OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
        config = {"path": str(self.path), "names": self.names, "answers": list(self.answers),
                  "memory_mb": self.limits.memory_mb, "seconds": self.limits.seconds}
        argv = [sys.executable, "-P", "-m", "toklab.teaching.exercises.worker", str(request_r), str(reply_w),
                json.dumps(config)]
        warden_config = {"argv": argv, "env": env, "cwd": self.workdir, "stdio": [devnull, out, err],
                         "keep": [request_r, reply_w]}
        try:
            self.warden = subprocess.Popen(
                [sys.executable, "-I", "-S", _WARDEN, json.dumps(warden_config)], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, pass_fds=(request_r, reply_w, devnull, out, err),
                cwd=self.workdir, start_new_session=True)
        finally:
            for fd in (request_r, reply_w, devnull, out, err):
                os.close(fd)
        os.set_blocking(self.warden.stdout.fileno(), False)
        ready = self._receive(STARTUP_SECONDS, counted=False)
        if ready is None or ready.get("event") != "ready":
            if ready is None and self.dead is not None and self.dead.status != "timeout":
                return {"event": "load-failed", "status": "error", "summary": "the submission's process did not "
                        f"start: {self.dead.summary}"}
            if ready is not None and ready.get("event") == "load-failed":
                return ready
            return {"event": "load-failed", "status": "error", "summary": f"the checker did not start within "
                    f"{STARTUP_SECONDS:g} s (is the machine overloaded?)"}
        loaded, running = self._receive(), None
        while loaded is not None and loaded.get("event") == "cell":  # a notebook's cells, one by one
            running = loaded.get("number")
            loaded = self._receive()
        if loaded is None:
            stop = self.dead or Interrupted("error", "the submission's process stopped")
            summary = stop.summary.replace("no answer", "not loaded")
            if isinstance(running, int) and stop.status in ("timeout", "memory", "crashed", "exited"):
                summary += f"; cell {running} of the notebook was running"
            return {"event": "load-failed", "status": stop.status, "summary": summary, "report": stop.report}
        return loaded

    def close(self) -> None:
        """Stop the worker and everything it started, and remove its folder."""
        if self.request_fd >= 0:
            try:
                os.set_blocking(self.request_fd, False)
                write_frame(self.request_fd, pickle.dumps({"op": "stop"}))
            except (OSError, BlockingIOError):
                pass
            os.close(self.request_fd)
            self.request_fd = -1
        if self.warden is not None:
            try:
                self.warden.stdin.close()  # the warden kills every process below it, then exits
            except OSError:
                pass
            try:
                self.warden.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.warden.kill()
                self.warden.wait()
            self._hear_warden(0)
            self.warden.stdout.close()
        if self.reply_fd >= 0:
            os.close(self.reply_fd)
            self.reply_fd = -1
        if self.errors is not None:
            self.errors.close()
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def kill(self) -> None:
        """Kill the worker now (its warden sweeps everything below it)."""
        if self.warden is not None and self.warden.stdin and not self.warden.stdin.closed:
            try:
                self.warden.stdin.close()
            except OSError:
                pass

    # -- the warden's reports

    def _hear_warden(self, seconds: float, until: tuple[str, ...] = ()) -> None:
        """Read the warden's JSON lines for up to ``seconds`` (or until one has a key in ``until``)."""
        deadline = time.monotonic() + seconds
        fd = self.warden.stdout.fileno()
        buffer = b""
        while True:
            try:
                chunk = os.read(fd, 4096)
            except BlockingIOError:
                chunk = None
            if chunk:
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    try:
                        self.warden_said.append(json.loads(line))
                    except ValueError:
                        pass
                continue
            if chunk == b"" or any(k in m for m in self.warden_said for k in until) or time.monotonic() >= deadline:
                return
            time.sleep(0.01)

    def _said(self, key: str) -> Any:
        return next((m[key] for m in self.warden_said if key in m), None)

    def _death(self) -> Interrupted:
        """Why the worker's pipe closed: its exit status, as the warden saw it."""
        self._hear_warden(5.0, until=("status",))
        said = self._last_words()
        if self._said("keeper_killed") is not None:
            return Interrupted("crashed", "the submission killed its parent process (the sandbox's keeper)" + said)
        status = self._said("status")
        if status is None:
            return Interrupted("crashed", "the submission's process ended without a trace" + said)
        if os.WIFSIGNALED(status):
            signum = os.WTERMSIG(status)
            if signum == signal.SIGXCPU:
                return Interrupted("timeout", f"used up its CPU time ({self.limits.seconds:g} s limit)")
            name = signal.Signals(signum).name if signum in signal.valid_signals() else str(signum)
            return Interrupted("crashed", f"the process was killed by {name}{said}")
        code = os.WEXITSTATUS(status)
        return Interrupted("exited", f"the process exited with status {code} before answering (os._exit in the "
                           f"submission?){said}")

    def _last_words(self) -> str:
        if self.errors is None:
            return ""
        self.errors.seek(max(0, self.errors.seek(0, os.SEEK_END) - 4096))
        lines = [line for line in self.errors.read().decode("utf-8", "replace").splitlines() if line.strip()]
        return f" (its last words: {lines[-1].strip()[:200]})" if lines else ""

    # -- messages

    def _receive(self, seconds: float | None = None, *, counted: bool = True,
                 budget: float | None = None) -> dict | None:
        """The worker's next message (None if it died or ran out of time: see ``self.dead``).

        ``counted``: the wait is the submission's time, bounded by what is left of the
        limit; ``budget``: a timed call's budget, `TooSlow` when it runs out first.
        """
        if self.dead is not None:
            return None
        start = time.monotonic()
        limit = self.limits.seconds - self.used if counted else float("inf")
        wait = limit if seconds is None else min(limit, seconds)
        if budget is not None:
            wait = min(wait, budget)
        try:
            frame = _read_frame(self.reply_fd, start + max(0.0, wait))
        except TimeoutError:
            if counted:
                self.used += time.monotonic() - start
            self.kill()
            if budget is not None and budget < limit:
                self.dead = Interrupted("slow", "stopped: a timed case ran past its budget")
                raise TooSlow(time.monotonic() - start) from None
            self.dead = Interrupted("timeout", f"no answer within the {self.limits.seconds:g} s time limit "
                                    "(an endless loop, or far too slow)")
            return None
        if counted:
            self.used += time.monotonic() - start
        if frame is None:
            self.dead = self._death()
            return None
        if isinstance(frame, int):
            self.kill()
            self.dead = Interrupted("error", f"the submission's process wrote something that is not an answer "
                                    f"on its pipe to the checker (a message of {frame:,} bytes announced; the "
                                    f"checker reads {plain.MAX_BYTES >> 20} MB at most)")
            return None
        try:
            message = json.loads(frame.decode("utf-8"))
        except (ValueError, RecursionError):
            return {"event": "unreadable", "why": "not a message"}
        return message if isinstance(message, dict) else {"event": "unreadable", "why": "not a message"}

    def call(self, args: tuple, kwargs: dict, adapter: Any, budget: float | None) -> tuple[Any, float]:
        """Call the submission's function in its process; (value, its seconds), or raise what it raised."""
        if self.dead is not None:
            raise self.dead
        start = time.perf_counter()
        body = io.BytesIO()
        _Pickler(body, self).dump({"args": args, "kwargs": kwargs, "adapter": adapter})
        request = pickle.dumps({"op": "call", "store": self.pending, "body": body.getvalue()})
        self.pending = []
        overhead = time.perf_counter() - start
        sent_at = time.monotonic()
        try:
            _write(self.request_fd, request, self.limits.seconds - self.used)
        except (OSError, TimeoutError):
            self.used += time.monotonic() - sent_at
            self.kill()
            self.dead = self._death()
            raise self.dead from None
        self.used += time.monotonic() - sent_at
        left = None if budget is None else budget - (time.monotonic() - sent_at)
        message = self._receive(budget=left)
        if message is None:
            raise self.dead
        round_trip = time.monotonic() - sent_at
        decode_start = time.perf_counter()
        try:
            value = self._value(message, args, kwargs)
        finally:
            overhead += time.perf_counter() - decode_start
        # The worker unpickles and encodes about what this process pickles and decodes: not the function's time.
        return value, max(0.0, round_trip - 2 * overhead)

    def _value(self, message: dict, args: tuple, kwargs: dict) -> Any:
        self.reused.update(str(x) for x in message.get("reused", []) if isinstance(x, str))
        event = message.get("event")
        if event == "raised":
            info = message.get("exception")
            if isinstance(info, dict) and "exit" in info:
                self.kill()
                raise Interrupted("exited", f"the submission called sys.exit({str(info['exit'])[:60]}) while "
                                  "being checked")
            try:
                exc = plain.rebuild_exception(info)
            except plain.Unreadable as why:
                return plain.Opaque("unreadable", f"<an exception the checker cannot read: {why}>")
            exc.submission_report = str(info.get("report", ""))[:4000]
            raise exc
        if event != "returned":
            return plain.Opaque("unreadable", f"<an answer the checker cannot read: {message.get('why', event)}>")
        for key, array in message.get("changed", []):
            self._copy_back(key, array, args, kwargs)
        try:
            return plain.decode(message.get("value"))
        except plain.Unreadable as why:
            return plain.Opaque("unreadable", f"<a value the checker cannot read: {why}>")

    @staticmethod
    def _copy_back(key: Any, encoded: Any, args: tuple, kwargs: dict) -> None:
        """Make an array argument the call changed change here too, as it would in one process."""
        import numpy as np

        target = args[key] if isinstance(key, int) and 0 <= key < len(args) else kwargs.get(key)
        try:
            new = plain.decode(encoded)
            if isinstance(target, np.ndarray) and isinstance(new, np.ndarray) and new.shape == target.shape:
                np.copyto(target, new, casting="unsafe")
        except (plain.Unreadable, ValueError, TypeError):
            pass


def _read_frame(fd: int, deadline: float) -> bytes | int | None:
    """One message from the worker by ``deadline`` (`TimeoutError` after it): its bytes, None at end of
    file, or its announced size when that is more than `plain.MAX_BYTES` (it is not read)."""
    from .worker import HEADER

    header = _read_exactly(fd, HEADER.size, deadline)
    if header is None:
        return None
    size = HEADER.unpack(header)[0]
    if size > plain.MAX_BYTES:
        return size
    return _read_exactly(fd, size, deadline)


def _read_exactly(fd: int, n: int, deadline: float) -> bytes | None:
    chunks, got = [], 0
    selector = selectors.DefaultSelector()
    selector.register(fd, selectors.EVENT_READ)
    try:
        while got < n:
            if not selector.select(max(0.0, deadline - time.monotonic())):
                raise TimeoutError
            chunk = os.read(fd, min(n - got, 1 << 20))
            if not chunk:
                return None
            chunks.append(chunk)
            got += len(chunk)
    finally:
        selector.close()
    return b"".join(chunks)


def _write(fd: int, data: bytes, seconds: float) -> None:
    """Write ``data`` to a pipe within ``seconds`` (the worker might never read)."""
    from .worker import frame

    os.set_blocking(fd, False)
    view = memoryview(frame(data))
    deadline = time.monotonic() + max(seconds, 0.0)
    selector = selectors.DefaultSelector()
    selector.register(fd, selectors.EVENT_WRITE)
    try:
        while view:
            if not selector.select(max(0.0, deadline - time.monotonic())):
                raise TimeoutError
            try:
                view = view[os.write(fd, view) :]
            except BlockingIOError:
                continue
    finally:
        selector.close()


class _Remote:
    """What the checker gets instead of the student's function: a call runs in the submission's process."""

    def __init__(self, worker: _Worker, adapter: Any = None) -> None:
        self.worker, self.adapter = worker, adapter
        self.__name__ = worker.names[0]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.worker.call(args, kwargs, self.adapter, None)[0]

    def call_within(self, budget: float | None, args: tuple, kwargs: dict) -> tuple[Any, float]:
        return self.worker.call(args, kwargs, self.adapter, budget)

    def derive(self, adapter: Any) -> _Remote:
        return _Remote(self.worker, adapter)

    def __repr__(self) -> str:
        return f"<{self.__name__} of {self.worker.path.name}>"


# ---------------------------------------------------------------------------- the verdict


def run(label: str, path: str | os.PathLike, *, function: str | None = None, limits: Limits = Limits(),
        show_output: bool = False) -> Outcome:
    """Check the submission at ``path`` (``.py`` or ``.ipynb``) against exercise ``label``.

    ``function`` overrides the name the exercise asks for. With ``show_output``
    the submission's prints reach this process's standard output and error;
    otherwise they are discarded (standard error is kept to explain a crash).
    """
    entry = get(label)
    path = Path(path).resolve()
    names = [function] if function else [entry.function, *ALIASES.get(label, ())]
    worker = _Worker(label, entry.answers, path, names, limits, show_output)
    with _LIVE_LOCK:
        _LIVE.add(worker)
    try:
        loaded = worker.start()
        if loaded.get("event") != "loaded":
            status = loaded.get("status") if loaded.get("event") == "load-failed" else None
            if status not in _LOAD_FAILURES:  # whatever else came down the pipe, it is no verdict
                status, loaded = "error", {"summary": "the submission's process wrote something that is not an "
                                           "answer on its pipe to the checker"}
            return Outcome(path.name, status, str(loaded.get("summary", ""))[:600], worker.used,
                           str(loaded.get("report", ""))[:4000])
        outcome = _judge(entry, worker, path, str(loaded.get("function") or names[0]))
        notes = [str(n) for n in loaded.get("cells", []) if isinstance(n, str)]
        if notes:
            outcome.report = (outcome.report + "\n\nNotebook cells that raised:\n" + "\n".join(notes)).strip()
        if reused := loaded.get("reused"):
            worker.reused.add(str(reused))
    finally:
        worker.close()
        with _LIVE_LOCK:
            _LIVE.discard(worker)
    if worker._said("keeper_killed") is not None and outcome.status in ("passed", "failed", "slow"):
        outcome.status, outcome.summary = "crashed", "the submission killed its parent process (the sandbox's keeper)"
        outcome.failure, outcome.cases_passed = None, 0
    if worker.reused and outcome.status in ("passed", "failed", "slow"):
        which = ", ".join(sorted(worker.reused))
        outcome.status, outcome.cases_passed, outcome.failure = "reused", 0, None
        outcome.summary = (f"{outcome.function}() hands in toklab's own answer ({which}) instead of an "
                           "implementation of its own")
    return outcome


#: What loading a submission can end with, short of a loaded function (the worker says which).
_LOAD_FAILURES = ("exited", "memory", "import-error", "no-function", "error", "timeout", "crashed")


def _status(status: Any) -> str:
    return status if status in STATUSES else "error"


def _judge(entry, worker: _Worker, path: Path, function: str) -> Outcome:
    name = path.name
    try:
        summary = entry.check(_Remote(worker))
    except CheckFailure as failure:
        cause = failure.__cause__
        report = failure.report()
        extra = getattr(cause, "submission_report", "")
        if extra:
            report += f"\n\n{extra}"
        case = f"case {failure.number} ({failure.case})"
        passed = failure.number - 1
        if isinstance(cause, MemoryError):
            return Outcome(name, "memory", f"ran out of memory (limit {worker.limits.memory_mb} MB) on {case}",
                           worker.used, report, failure.fields(), function, passed)
        if failure.slow:
            return Outcome(name, "slow", f"{case}: {failure.got}", worker.used, report, failure.fields(), function,
                           passed)
        summary = f"{case}: input {failure.input}; expected {failure.expected}; got {failure.got}"
        return Outcome(name, "failed", summary, worker.used, report, failure.fields(), function, passed)
    except Interrupted as stop:
        where, passed = "", 0
        if stop.case is not None:
            where, passed = f" on case {stop.case.number} ({stop.case.name})", stop.case.number - 1
        return Outcome(name, _status(stop.status), f"{stop.summary}{where}", worker.used, stop.report,
                       None, function, passed)
    except Exception as exc:  # noqa: BLE001 - a checker that breaks is reported, not a crash of the grader
        return Outcome(name, "error", f"the checker stopped with {type(exc).__name__}: {exc}"[:300], worker.used,
                       function=function)
    return Outcome(name, "passed", str(summary), worker.used, function=function,
                   cases_passed=getattr(summary, "cases", 0))


def stop_all() -> None:
    """Kill every submission still running (on Ctrl-C, say): each warden sweeps its own."""
    with _LIVE_LOCK:
        workers = list(_LIVE)
    for worker in workers:
        worker.kill()
