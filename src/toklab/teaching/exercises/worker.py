"""The submission's process: it loads the student's code and calls their function when asked.

``python -P -m toklab.teaching.exercises.worker IN OUT CONFIG`` is started by
`toklab.teaching.exercises.sandbox` (through its warden) in a fresh temporary folder,
with a minimal environment, in a session of its own. It reads requests from descriptor
IN and answers on descriptor OUT; it never sees the checker's expected answers and never
decides a verdict:

1. it sets its limits (``RLIMIT_AS``, ``RLIMIT_CPU``, no core files, ``RLIMIT_FSIZE``),
   wraps toklab's own answers to the exercise so that a call to one is noticed, and says
   ``ready``;
2. it loads the submission: a ``.py`` file imported as module ``submission`` (its
   ``if __name__ == "__main__":`` part does not run), or a notebook's code cells that the
   function needs (`needed_cells`) run in order in that module (IPython magics skipped; a
   cell that raises is reported and the next one runs); then it says which function it
   found, or why there is none;
3. for each ``call`` request (the arguments pickled by the grading process, which this
   process trusts) it calls the function and answers with the value as plain data
   (`toklab.teaching.exercises.plain`), or the exception it raised, and the NumPy arrays
   among the arguments that the call changed.

Anything the submission writes to OUT, or patches in this process, can only change the
values the grading process receives, which it checks itself.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import struct
import sys
import time
import traceback
from pathlib import Path
from typing import Any

__all__ = ["HEADER", "MODULE", "frame", "needed_cells", "notebook_source", "read_frame", "write_frame"]

MODULE = "submission"
FILE_LIMIT = 64 << 20  # bytes any one file the submission writes may reach
HEADER = struct.Struct(">Q")
_PACKAGE = str(Path(__file__).resolve().parents[2])  # .../toklab


# ---------------------------------------------------------------------------- framing (shared with the sandbox)


def frame(payload: bytes) -> bytes:
    """One message as written on a pipe: its length (8 bytes, big-endian), then the bytes."""
    return HEADER.pack(len(payload)) + payload


def write_frame(fd: int, payload: bytes) -> None:
    """Write one message (see `frame`), blocking until it is all written."""
    view = memoryview(frame(payload))
    while view:
        view = view[os.write(fd, view) :]


def read_frame(fd: int) -> bytes | None:
    """One whole message from ``fd`` (blocking), None at end of file."""
    header = _read_exactly(fd, HEADER.size)
    if header is None:
        return None
    body = _read_exactly(fd, HEADER.unpack(header)[0])
    return body


def _read_exactly(fd: int, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


# ---------------------------------------------------------------------------- notebooks


def notebook_source(text: str, where: str) -> list[tuple[int, str]]:
    """The code cells of a notebook (nbformat 4 JSON text) as ``(cell number, Python source)``.

    Cells are numbered from 1 among all cells, as Jupyter shows them. A line that is an
    IPython magic or shell escape (``%``, ``!``) becomes ``pass``, keeping line numbers;
    a cell magic (``%%``) skips its cell. ValueError if ``text`` is not a notebook.
    """
    try:
        nb = json.loads(text)
        cells = nb["cells"]
    except (ValueError, KeyError, TypeError):
        raise ValueError(f"{where} is not a Jupyter notebook (nbformat 4 JSON)") from None
    out = []
    for number, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        if source.lstrip().startswith("%%"):
            continue
        lines = [_unmagic(line) for line in source.splitlines()]
        out.append((number, "\n".join(lines) + "\n"))
    return out


def needed_cells(cells: list[tuple[int, str]], names: list[str]) -> list[tuple[int, str]]:
    """The cells of a notebook that the function named by ``names`` needs, in order.

    A student answers in a chapter's notebook, whose other cells may take a minute to run
    (training, loading vocabularies) or need files the submission's fresh folder does not
    have. So only these run: every cell that binds the function's name (``def``, an
    assignment, an import), and every cell that binds a name a chosen cell reads, at its
    top level or as a global inside its functions (`symtable` says which), again and again
    until nothing is added. A cell that changes a name in place (``x[k] = v``,
    ``x.append(v)``) counts as binding it; a cell with ``import *`` is always chosen. When
    no cell binds any of ``names``, only the cells made of nothing but imports, functions
    and classes run, so that the report can say which functions the notebook defines.
    """
    facts = [(_binds_and_reads(source), number, source) for number, source in cells]
    needed = set(names)
    if not any(binds & needed for (binds, _), _, _ in facts):
        return [(number, source) for number, source in cells if _definitions_only(source)]
    chosen: set[int] = set()
    grew = True
    while grew:
        grew = False
        for (binds, reads), number, _ in facts:
            if number not in chosen and (binds & needed or "*" in binds):
                chosen.add(number)
                needed |= reads
                grew = True
    return [(number, source) for number, source in cells if number in chosen]


def _binds_and_reads(source: str) -> tuple[set[str], set[str]]:
    """The module-level names a cell binds (or changes in place), and the module-level names it reads.

    A cell that does not compile binds nothing (running it would only raise).
    """
    import ast
    import symtable

    try:
        tree = ast.parse(source)
        top = symtable.symtable(source, "<cell>", "exec")
    except (SyntaxError, ValueError):
        return set(), set()
    binds: set[str] = set()
    reads: set[str] = set()
    for sym in top.get_symbols():
        if sym.is_assigned() or sym.is_imported() or sym.is_namespace():
            binds.add(sym.get_name())
        if sym.is_referenced():
            reads.add(sym.get_name())
    tables = list(top.get_children())
    while tables:
        table = tables.pop()
        tables += table.get_children()
        for sym in table.get_symbols():
            if sym.is_global() and sym.is_referenced():
                reads.add(sym.get_name())
            if sym.is_declared_global() and sym.is_assigned():
                binds.add(sym.get_name())
    for node in _module_level(tree):
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            binds.add("*")
        changed = None
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            changed = node.value
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func,
                                                                                             ast.Attribute):
            changed = node.value.func.value
        while isinstance(changed, (ast.Attribute, ast.Subscript)):
            changed = changed.value
        if isinstance(changed, ast.Name):
            binds.add(changed.id)
    return binds, reads


def _definitions_only(source: str) -> bool:
    import ast

    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError):
        return False
    kinds = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return all(isinstance(node, kinds) or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
               for node in body)


def _module_level(tree: Any):
    """The nodes of a module outside its functions, classes and lambdas (their bodies run later, or never)."""
    import ast

    stack = list(ast.iter_child_nodes(tree))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack += ast.iter_child_nodes(node)


def _unmagic(line: str) -> str:
    stripped = line.lstrip()
    if stripped.startswith(("%", "!")):
        return line[: len(line) - len(stripped)] + "pass"
    return line


# ---------------------------------------------------------------------------- in the worker


class _Channel:
    def __init__(self, fd_in: int, fd_out: int) -> None:
        self.fd_in, self.fd_out = fd_in, fd_out

    def send(self, **message: Any) -> None:
        write_frame(self.fd_out, json.dumps(message, ensure_ascii=False).encode("utf-8"))

    def send_raw(self, payload: bytes) -> None:
        write_frame(self.fd_out, payload)


def _limit(memory_mb: int, seconds: float) -> str | None:
    """Set this process's limits; an error message if the memory limit is below what is already in use."""
    import resource
    import signal

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
    cpu = int(usage.ru_utime + usage.ru_stime + 2 * seconds) + 5  # a backstop: the grader keeps the wall clock
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    if hard == resource.RLIM_INFINITY or hard > cpu:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, hard))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the cap fails with an OSError instead
    return None


class _Watch:
    """toklab's own answers to the exercise, wrapped where the package binds them, so that a call is noticed."""

    def __init__(self, names: list[str], path: str) -> None:
        import functools
        import importlib

        self.used: list[str] = []
        self.path = path
        self.wrappers: dict[int, str] = {}
        for dotted in names:
            module_name, _, attr = dotted.rpartition(".")
            try:
                original = getattr(importlib.import_module(module_name), attr)
            except (ImportError, AttributeError):
                continue

            def wrapper(*args, __original=original, __name=dotted, **kwargs):
                if sys._getframe(1).f_code.co_filename.startswith(self.path):  # called by the submission itself
                    self.used.append(__name)
                return __original(*args, **kwargs)

            functools.update_wrapper(wrapper, original)
            self.wrappers[id(wrapper)] = dotted
            for module in list(sys.modules.values()):  # every toklab module that binds it
                if getattr(module, "__name__", "").startswith("toklab"):
                    for key, value in list(vars(module).items()):
                        if value is original:
                            setattr(module, key, wrapper)

    def reused(self, fn: Any) -> str | None:
        """The toklab function ``fn`` is (re-exported as the answer), or None if the submission defines it."""
        import functools

        while isinstance(fn, functools.partial):
            fn = fn.func
        if id(fn) in self.wrappers:
            return self.wrappers[id(fn)]
        code = getattr(fn, "__code__", None) or getattr(getattr(fn, "__call__", None), "__code__", None)
        filename = getattr(code, "co_filename", "")
        if filename.startswith(_PACKAGE + os.sep):
            return f"{getattr(fn, '__module__', 'toklab')}.{getattr(fn, '__qualname__', '?')}"
        return None


def _frames(exc: BaseException, path: str) -> str:
    """The exception with only the submission's own frames (the checker's are noise to a student)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(path)]
    lines = traceback.format_list(frames) if frames else []
    return ("Traceback (the submission's frames):\n" if frames else "") + "".join(lines) + "".join(
        traceback.format_exception_only(type(exc), exc))


def _load(path: Path, names: list[str], on_cell: Any = None) -> tuple[Any, list[str]]:
    """The submission as a module, and the notebook cells that raised (message each).

    ``on_cell(number)`` is called before each notebook cell runs (so that a timeout can name it).
    """
    import importlib.machinery
    import importlib.util
    import types

    sys.path.append(str(path.parent))  # its own helper modules, after toklab's and the standard library's
    if path.suffix != ".ipynb":
        loader = importlib.machinery.SourceFileLoader(MODULE, str(path))
        module = importlib.util.module_from_spec(importlib.util.spec_from_loader(MODULE, loader))
        sys.modules[MODULE] = module
        loader.exec_module(module)
        return module, []
    module = types.ModuleType(MODULE)
    module.__file__ = str(path)
    sys.modules[MODULE] = module
    problems = []
    for number, source in needed_cells(notebook_source(path.read_text(encoding="utf-8"), path.name), names):
        where = f"{path} [cell {number}]"
        if on_cell is not None:
            on_cell(number)
        try:
            exec(compile(source, where, "exec"), module.__dict__)  # noqa: S102 - running the student's cells is the job
        except SystemExit:
            raise
        except BaseException as exc:  # noqa: BLE001 - a cell that fails is reported; the next one runs
            problems.append(f"cell {number} raised {type(exc).__name__}: {' '.join(str(exc).split())}"[:300])
    return module, problems


def _loaded(path: Path, names: list[str], watch: _Watch, memory_mb: int, on_cell: Any = None) -> tuple[dict, Any]:
    """The message that says what loading the submission gave, and the function found (or None)."""
    from .harness import show

    where = str(path)
    try:
        module, problems = _load(path, names, on_cell)
    except SystemExit as exc:
        return {"event": "load-failed", "status": "exited", "summary": f"the file calls sys.exit({exc.code!r}) "
                "when imported: keep the script part under if __name__ == '__main__':"}, None
    except MemoryError:
        return {"event": "load-failed", "status": "memory",
                "summary": f"ran out of memory (limit {memory_mb} MB) while being imported"}, None
    except SyntaxError as exc:
        return {"event": "load-failed", "status": "import-error", "summary": f"{type(exc).__name__}: {exc.msg} "
                f"(line {exc.lineno})", "report": "".join(traceback.format_exception_only(type(exc), exc))}, None
    except BaseException as exc:  # noqa: BLE001 - anything the file raises on import is the submission's
        return {"event": "load-failed", "status": "import-error", "summary": f"importing it raised "
                f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:300], "report": _frames(exc, where)}, None
    used = next((n for n in names if n in vars(module)), None)
    if used is None:
        defined = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_")
                         and getattr(v, "__module__", None) == MODULE)
        summary = (f"defines no function {names[0]}() (the exercise asks for it); it defines: "
                   f"{', '.join(defined) or 'no functions'}")
        if problems:
            summary += f"; {len(problems)} cell(s) raised, the first: {problems[0]}"
        return {"event": "load-failed", "status": "no-function", "summary": summary[:600],
                "report": "\n".join(problems)}, None
    fn = getattr(module, used)
    if not callable(fn):
        return {"event": "load-failed", "status": "no-function",
                "summary": f"{used} is not a function (it is {show(fn, 60)})"}, None
    return {"event": "loaded", "function": used, "reused": watch.reused(fn), "cells": problems}, fn


def _arrays(args: tuple, kwargs: dict) -> list[tuple[int | str, Any, Any]]:
    np = sys.modules.get("numpy")
    if np is None:
        return []
    pairs = list(enumerate(args)) + list(kwargs.items())
    return [(key, value, value.copy()) for key, value in pairs if isinstance(value, np.ndarray)]


def _answer(channel: _Channel, fn: Any, request: dict, watch: _Watch, where: str) -> None:
    from . import plain

    args, kwargs = request["args"], request["kwargs"]
    target = fn if request.get("adapter") is None else (lambda *a, **k: request["adapter"](fn, *a, **k))
    arrays = _arrays(args, kwargs)
    watch.used.clear()
    start = time.perf_counter()
    try:
        value = target(*args, **kwargs)
    except BaseException as exc:  # noqa: BLE001 - whatever the function raises goes back as data
        seconds = time.perf_counter() - start
        info = plain.exception_info(exc)
        info["report"] = _frames(exc, where)
        if isinstance(exc, SystemExit):
            info["exit"] = repr(exc.code)
        channel.send(event="raised", exception=info, seconds=seconds, reused=sorted(set(watch.used)))
        return
    seconds = time.perf_counter() - start
    changed = []
    for key, array, before in arrays:
        try:
            same = array.shape == before.shape and (array == before).all()
        except Exception:  # noqa: BLE001
            same = False
        if not same:
            changed.append([key, json.loads(plain.dumps(array))])
    try:
        body = plain.dumps(value)
    except MemoryError:
        channel.send(event="raised", exception=plain.exception_info(MemoryError("while sending the answer back")),
                     seconds=seconds, reused=[])
        return
    header = json.dumps({"event": "returned", "seconds": seconds, "reused": sorted(set(watch.used)),
                         "changed": changed}).encode("utf-8")
    channel.send_raw(header[:-1] + b',"value":' + body + b"}")


def main(argv: list[str]) -> None:
    fd_in, fd_out, config = int(argv[0]), int(argv[1]), json.loads(argv[2])
    channel = _Channel(fd_in, fd_out)
    sys.dont_write_bytecode = True
    import toklab.teaching.exercises  # noqa: F401 - the pickled arguments name their classes in it

    watch = _Watch(config["answers"], config["path"])
    problem = _limit(int(config["memory_mb"]), float(config["seconds"]))
    if problem:
        channel.send(event="load-failed", status="error", summary=problem)
        os._exit(0)
    channel.send(event="ready")
    path = Path(config["path"])
    message, fn = _loaded(path, config["names"], watch, int(config["memory_mb"]),
                          lambda number: channel.send(event="cell", number=number))
    channel.send(**message)
    store: dict[int, Any] = {}
    while fn is not None:
        request = _receive(channel, store)
        if request is None or request["op"] == "stop":
            break
        if request["op"] == "call":
            _answer(channel, fn, request, watch, str(path))
    for stream in (sys.stdout, sys.stderr):  # the submission's prints, before os._exit drops them
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(0)


def _unpickle(blob: bytes, store: dict[int, Any]) -> Any:
    unpickler = pickle.Unpickler(io.BytesIO(blob))
    unpickler.persistent_load = store.__getitem__  # an object sent once, in an earlier request
    return unpickler.load()


def _receive(channel: _Channel, store: dict[int, Any]) -> dict | None:
    """The next request: ``op``, and for a call its ``args``, ``kwargs`` and ``adapter``."""
    frame = read_frame(channel.fd_in)
    if frame is None:
        return None
    request = pickle.loads(frame)
    for key, blob in request.pop("store", ()):
        store[key] = _unpickle(blob, store)
    if "body" in request:
        request.update(_unpickle(request.pop("body"), store))
    return request


if __name__ == "__main__":
    main(sys.argv[1:])
