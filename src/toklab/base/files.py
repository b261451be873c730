"""Files that survive failures, and inputs that end: `atomic_write`, `regular_file`, `read_limited`.

A tokenizer file that is overwritten in place is gone the moment writing starts: a
full disk, a file-size limit (``ulimit -f``) or Ctrl-C halfway leaves a truncated
file where a good one was. `atomic_write` writes to a temporary file in the same
folder and renames it over the target only when every byte is on disk, so the
target is always either the old file or the new one, never a mixture.

Not every path names a file that ends. ``/dev/zero`` yields bytes for ever, a FIFO
with no writer blocks ``open`` itself, and ``/dev/stdin`` may be a pipe fed by
``yes``. `regular_file` says whether a path is an ordinary file (without opening
it), and `read_limited` reads a stream up to a bound, raising `InputTooLarge`
(a ValueError) beyond it.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path
from typing import BinaryIO

__all__ = ["STREAM_LIMIT", "InputTooLarge", "atomic_write", "regular_file", "file_kind", "read_limited"]

#: Bytes read from something that is not a regular file (a pipe, a device) before giving up.
STREAM_LIMIT = 256 << 20


class InputTooLarge(ValueError):
    """A stream gave more bytes than the bound it was read with (it may never end)."""


def atomic_write(path: str | os.PathLike, data: bytes | str, *, encoding: str = "utf-8") -> None:
    """Write ``data`` to ``path`` so that ``path`` holds either its old content or all of ``data``.

    The bytes go to a new file next to ``path`` (same folder, so the rename
    cannot cross file systems), are flushed to disk, and the file is renamed
    over ``path``. If anything fails on the way (``OSError`` such as a full disk or
    ``EFBIG``, an interrupt) the temporary file is removed and the error
    propagates with ``path`` named in it; ``path`` itself is untouched. A new file
    gets the permissions ``open`` would give it; an existing file keeps its own.
    """
    target = Path(path)
    if isinstance(data, str):
        data = data.encode(encoding)
    folder = target.parent
    temp = folder / f".{target.name}.{secrets.token_hex(4)}.tmp"
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as exc:
        raise OSError(exc.errno, f"cannot write {target}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            view = memoryview(data)
            while view:
                written = fh.write(view)
                view = view[written:]
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.chmod(temp, stat.S_IMODE(os.stat(target).st_mode))
        except FileNotFoundError:
            pass
        os.replace(temp, target)
    except BaseException as exc:
        try:
            os.unlink(temp)
        except OSError:
            pass
        if isinstance(exc, OSError) and str(target) not in str(exc):
            raise OSError(exc.errno, f"cannot write {target}: {exc.strerror or exc} (the previous file, if any, "
                                     "is unchanged)") from None
        raise


def file_kind(path: str | os.PathLike) -> str:
    """What ``path`` is, without opening it: ``"file"``, ``"directory"``, ``"FIFO"``, ``"device"``, ``"socket"``.

    Raises FileNotFoundError (naming the path) when there is nothing there.
    """
    mode = os.stat(path).st_mode
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "device"


def regular_file(path: str | os.PathLike) -> bool:
    """True when ``path`` is an ordinary file (a symlink to one counts); False for anything else or nothing."""
    try:
        return file_kind(path) == "file"
    except OSError:
        return False


def read_limited(stream: BinaryIO, limit: int = STREAM_LIMIT, what: str = "the input") -> bytes:
    """All of ``stream``, or `InputTooLarge` as soon as it has given more than ``limit`` bytes."""
    chunks = []
    size = 0
    while True:
        block = stream.read(min(1 << 20, limit + 1 - size))
        if not block:
            return b"".join(chunks)
        chunks.append(block)
        size += len(block)
        if size > limit:
            raise InputTooLarge(f"{what} gave more than {limit:,} bytes without ending (a device or an endless "
                                "pipe?); save the text to a file and give its name")
