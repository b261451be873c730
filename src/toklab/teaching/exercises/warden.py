"""The warden: the process between the grader and a submission's process, run as a script.

``python -I -S warden.py CONFIG`` (started by `toklab.teaching.exercises.sandbox`, standard
library only, so that it starts in milliseconds) makes itself the *child subreaper* of
what it starts (Linux ``prctl(PR_SET_CHILD_SUBREAPER)``): a process that loses its parent
below it, a grandchild started with ``setsid`` or a double fork included, is handed to the
warden instead of to init, so the warden can still find it. It then forks a *keeper*,
which forks the submission's process (the *worker*) in a session of its own and waits for
it. A submission that kills its parent kills the keeper; the warden lives on, and the
grader's other submissions are untouched.

The warden reads its standard input (a pipe from the grader) and writes JSON lines to its
standard output: ``{"worker": PID}`` once the worker runs, ``{"status": WAIT_STATUS}`` when
it ends (its raw ``waitpid`` status), ``{"keeper_killed": SIGNAL}`` when the keeper died
without reporting (the submission killed its parent). When its input closes (the grader
is done with this submission, gave up on it, or died), the warden kills every process
below it, again and again until none is left, reaps them and exits.

CONFIG is JSON: ``argv`` and ``env`` of the worker (``argv[0]`` an absolute path),
``cwd``, and ``stdio``, the three descriptors (inherited from the grader) that become the
worker's standard input, output and error; ``keep`` lists the other inherited
descriptors the worker keeps (its pipes to the grader). Elsewhere than Linux there is no
subreaper and no ``/proc``: the warden kills the worker's process group only.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
SWEEP_SECONDS = 10.0


def _subreaper() -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()  # after "pid (comm)": state, ppid, ...
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(name))
    return children


def _descendants(root: int) -> list[int]:
    children = _children_map()
    out, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            out.append(child)
            stack.append(child)
    return out


def _reap() -> list[tuple[int, int]]:
    """Every child that has ended, as (pid, wait status); stops when none is left to wait for."""
    ended = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return ended
        if pid == 0:
            return ended
        ended.append((pid, status))


def _sweep(worker: int | None, linux: bool) -> None:
    """Kill every process below this one (or the worker's process group), until none is left."""
    deadline = time.monotonic() + SWEEP_SECONDS
    while time.monotonic() < deadline:
        victims = _descendants(os.getpid()) if linux else []
        if not linux and worker:
            try:
                os.killpg(worker, signal.SIGKILL)
            except OSError:
                pass
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        _reap()
        try:
            os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            if not victims:
                return
        time.sleep(0.005)


def _close_all_but(keep: set[int]) -> None:
    low = 3
    for fd in sorted(k for k in keep if k >= 3):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 16)


def _start_worker(config: dict, report_fd: int) -> int:
    """Fork the keeper, which forks the worker and reports its pid and its end on ``report_fd``; the keeper's pid."""
    keeper = os.fork()
    if keeper:
        return keeper
    try:
        worker = os.fork()
        if worker == 0:
            try:
                os.setsid()
                stdin, stdout, stderr = config["stdio"]
                os.dup2(stdin, 0)
                os.dup2(stdout, 1)
                os.dup2(stderr, 2)
                _close_all_but(set(config["keep"]))  # nothing of the warden's: only the pipes to the grader
                os.chdir(config["cwd"])
                os.execve(config["argv"][0], config["argv"], config["env"])
            finally:
                os._exit(127)
        for fd in set(config["keep"]) | set(config["stdio"]):  # or the grader would never see the worker's end
            os.close(fd)
        os.write(report_fd, json.dumps({"worker": worker}).encode() + b"\n")
        while True:
            try:
                _, status = os.waitpid(worker, 0)
                break
            except InterruptedError:
                continue
        os.write(report_fd, json.dumps({"status": status}).encode() + b"\n")
    finally:
        os._exit(0)


def main() -> None:
    config = json.loads(sys.argv[1])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the grader, which closes our input
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    linux = _subreaper() and os.path.isdir("/proc")
    for fd in config["keep"]:
        os.set_inheritable(fd, True)
    report_r, report_w = os.pipe()
    keeper = _start_worker(config, report_w)
    os.close(report_w)
    for fd in set(config["keep"]) | set(config["stdio"]):
        os.close(fd)
    def say(line: bytes) -> None:
        try:
            sys.stdout.buffer.write(line + b"\n")
            sys.stdout.buffer.flush()
        except OSError:  # the grader stopped listening: the sweep still runs
            pass

    worker = None
    reported = False
    buffer = b""
    open_inputs = [0, report_r]
    while 0 in open_inputs:
        ready, _, _ = select.select(open_inputs, [], [], 0.05)
        for fd in ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                open_inputs.remove(fd)
                continue
            if fd == 0:
                continue
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                message = json.loads(line)
                worker = message.get("worker", worker)
                reported = reported or "status" in message
                say(line)
        for pid, status in _reap():
            if pid == keeper and os.WIFSIGNALED(status) and not reported:
                say(json.dumps({"keeper_killed": os.WTERMSIG(status)}).encode())
            elif pid == worker and not reported:
                reported = True
                say(json.dumps({"status": status}).encode())
    _sweep(worker, linux)


if __name__ == "__main__":
    main()
