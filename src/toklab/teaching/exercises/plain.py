"""Plain values: what a submission's process may send back to the grading process.

The grading process never unpickles anything a submission's process wrote (unpickling
runs code). A submission's answer crosses the process boundary as JSON text that only
describes values: ``None``, ``bool``, ``int``, ``float`` (NaN and infinities too),
``str``, ``bytes``, ``bytearray``, ``list``, ``tuple``, ``dict``, ``set``,
``frozenset``, ``range``, numeric and boolean NumPy arrays, compiled ``re`` patterns
and toklab's `ByteBPE` (an exercise asks for one), each rebuilt here from its parts.
Anything else becomes an `Opaque`: its type and repr, equal to nothing, so a checker
reports it as a wrong answer instead of running the submission's ``__eq__``.

`dumps` runs in the submission's process; `loads` in the grading process, which
also bounds what it reads (`MAX_BYTES`, the nesting depth Python's JSON parser
allows). Subclasses lose their methods on the way (a ``Counter`` arrives as a
``dict``, a named tuple as a ``tuple``), NumPy scalars become Python numbers, and an
iterator is read to its end and arrives as an iterator over the values it gave.
"""

from __future__ import annotations

import base64
import builtins
import json
import math
import re
from collections.abc import Iterator
from typing import Any

__all__ = ["MAX_BYTES", "Opaque", "Unreadable", "decode", "dumps", "loads", "exception_info", "rebuild_exception",
           "RaisedInSubmission"]

#: The largest message the grading process reads from a submission's process.
MAX_BYTES = 64 << 20
_ARRAY_KINDS = "biufc"  # bool, signed, unsigned, float, complex: never object arrays
_REPR_LIMIT = 300


class Unreadable(ValueError):
    """A message from a submission's process that is not a plain value."""


class Opaque:
    """A value that has no plain form: shown by its type and repr, equal to nothing but itself."""

    def __init__(self, type_name: str, text: str) -> None:
        self.type_name, self.text = type_name, text

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        return other is self

    __hash__ = object.__hash__


# ---------------------------------------------------------------------------- in the submission's process


def _opaque(value: object, why: str = "") -> dict:
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a repr that fails is still a value the checker must describe
        text = ""
    if not isinstance(text, str) or not text:
        text = f"<a {type(value).__name__} object>"
    if len(text) > _REPR_LIMIT:
        text = text[:_REPR_LIMIT] + "..."
    return {"o": [type(value).__name__, text + (f" ({why})" if why else "")]}


def _encode(value: Any) -> Any:
    t = type(value)
    if value is None or t is str or t is bool or t is int:
        return value
    if t is float:
        return value if math.isfinite(value) else {"f": repr(value)}
    if t is list:
        return [_encode(v) for v in value]
    if t is dict:
        return {"d": [[_encode(k), _encode(v)] for k, v in value.items()]}
    if t is tuple:
        return {"t": [_encode(v) for v in value]}
    return _encode_other(value)


def _encode_other(value: Any) -> Any:
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return _encode(float(value))
    if isinstance(value, bytearray):
        return {"ba": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, (bytes, memoryview)):
        return {"b": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, tuple):
        return {"t": [_encode(v) for v in value]}
    if isinstance(value, dict):
        return {"d": [[_encode(k), _encode(v)] for k, v in value.items()]}
    if isinstance(value, frozenset):
        return {"fs": [_encode(v) for v in value]}
    if isinstance(value, set):
        return {"s": [_encode(v) for v in value]}
    if isinstance(value, range):
        return {"r": [value.start, value.stop, value.step]}
    if isinstance(value, re.Pattern):
        return {"re": [_encode(value.pattern), value.flags]}
    numpy = _numpy_value(value)
    if numpy is not None:
        return numpy
    bpe = _bpe_value(value)
    if bpe is not None:
        return bpe
    if isinstance(value, Iterator):
        return {"it": [_encode(v) for v in value]}
    return _opaque(value)


def _numpy_value(value: Any) -> Any:
    import sys

    np = sys.modules.get("numpy")  # a submission that never imported NumPy sent no NumPy value
    if np is None:
        return None
    if isinstance(value, np.generic):
        return _encode(value.item())
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in _ARRAY_KINDS:
            return _opaque(value, f"an array of dtype {value.dtype}")
        array = np.ascontiguousarray(value)
        return {"nd": [array.dtype.str, list(array.shape), base64.b64encode(array.tobytes()).decode("ascii")]}
    return None


def _bpe_value(value: Any) -> Any:
    import sys

    model = sys.modules.get("toklab.bpe.model")
    if model is None or not isinstance(value, model.ByteBPE):
        return None
    return {"bpe": {"merges": [[_encode(a), _encode(b)] for a, b in value.merges],
                    "vocab": [[i, _encode(t)] for i, t in sorted(value.vocab.items())],
                    "pattern": value.pattern, "special_tokens": sorted(value.special_tokens.items())}}


def dumps(value: Any) -> bytes:
    """``value`` as the JSON text `loads` rebuilds it from (an `Opaque` description where it has no plain form)."""
    try:
        encoded = _encode(value)
    except RecursionError:
        encoded = _opaque(value, "nested too deeply, or containing itself")
    return json.dumps(encoded, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


# ---------------------------------------------------------------------------- in the grading process


def _decode(node: Any) -> Any:
    if isinstance(node, list):
        return [_decode(v) for v in node]
    if not isinstance(node, dict):
        return node
    if len(node) != 1:
        raise Unreadable("a tagged value has exactly one key")
    (tag, body), = node.items()
    decoder = _DECODERS.get(tag)
    if decoder is None:
        raise Unreadable(f"unknown tag {tag!r}")
    return decoder(body)


def _items(body: Any) -> list:
    if not isinstance(body, list):
        raise Unreadable("a container's items are a list")
    return [_decode(v) for v in body]


def _float(body: Any) -> float:
    if body not in ("nan", "inf", "-inf"):
        raise Unreadable(f"not a float: {body!r}")
    return float(body)


def _bytes(body: Any) -> bytes:
    if not isinstance(body, str):
        raise Unreadable("bytes are base64 text")
    return base64.b64decode(body, validate=True)


def _dict(body: Any) -> dict:
    out = {}
    for pair in _items(body):
        if not (isinstance(pair, list) and len(pair) == 2):
            raise Unreadable("a dict item is a [key, value] pair")
        out[pair[0]] = pair[1]  # an unhashable key raises TypeError: caught by loads
    return out


def _range(body: Any) -> range:
    if not (isinstance(body, list) and len(body) == 3 and all(type(x) is int for x in body)):
        raise Unreadable("a range is [start, stop, step]")
    return range(*body)


def _pattern(body: Any) -> re.Pattern:
    if not (isinstance(body, list) and len(body) == 2 and type(body[1]) is int):
        raise Unreadable("a pattern is [source, flags]")
    source = _decode(body[0])
    if not isinstance(source, (str, bytes)):
        raise Unreadable("a pattern's source is str or bytes")
    return re.compile(source, body[1])


def _array(body: Any):
    import numpy as np

    if not (isinstance(body, list) and len(body) == 3 and isinstance(body[0], str) and isinstance(body[1], list)):
        raise Unreadable("an array is [dtype, shape, data]")
    dtype = np.dtype(body[0])
    if dtype.kind not in _ARRAY_KINDS or dtype.hasobject:
        raise Unreadable(f"an array of dtype {dtype} is not plain")
    shape = body[1]
    if not all(type(n) is int and n >= 0 for n in shape):
        raise Unreadable("an array's shape is a list of sizes")
    return np.frombuffer(_bytes(body[2]), dtype=dtype).reshape(shape).copy()


def _bpe(body: Any):
    from ...bpe import ByteBPE

    if not (isinstance(body, dict) and set(body) == {"merges", "vocab", "pattern", "special_tokens"}):
        raise Unreadable("a ByteBPE is its merges, vocab, pattern and special tokens")
    merges = [tuple(p) for p in _items(body["merges"])]
    vocab = dict(tuple(p) for p in _items(body["vocab"]))
    specials = dict(tuple(p) for p in _items(body["special_tokens"]))
    if not isinstance(body["pattern"], str):
        raise Unreadable("a ByteBPE's pattern is a str")
    return ByteBPE(merges, vocab=vocab, pattern=body["pattern"], special_tokens=specials)


def _opaque_back(body: Any) -> Opaque:
    if not (isinstance(body, list) and len(body) == 2 and all(isinstance(x, str) for x in body)):
        raise Unreadable("an opaque value is [type name, repr]")
    return Opaque(body[0][:100], body[1][: _REPR_LIMIT + 200])


_DECODERS = {
    "f": _float, "b": _bytes, "ba": lambda body: bytearray(_bytes(body)), "t": lambda body: tuple(_items(body)),
    "d": _dict, "s": lambda body: set(_items(body)), "fs": lambda body: frozenset(_items(body)), "r": _range,
    "re": _pattern, "nd": _array, "bpe": _bpe, "it": lambda body: iter(_items(body)), "o": _opaque_back,
}


def decode(node: Any) -> Any:
    """The value a parsed `dumps` text describes (``json.loads`` already applied); `Unreadable` otherwise."""
    try:
        return _decode(node)
    except Unreadable:
        raise
    except (ValueError, TypeError, RecursionError, OverflowError, MemoryError) as exc:
        raise Unreadable(f"{type(exc).__name__}: {exc}"[:300]) from None


def loads(data: bytes) -> Any:
    """The value `dumps` described; `Unreadable` for anything else (too large, malformed, not plain)."""
    if len(data) > MAX_BYTES:
        raise Unreadable(f"a value of {len(data) / 2**20:.0f} MB is more than the checker reads "
                         f"({MAX_BYTES >> 20} MB)")
    try:
        return _decode(json.loads(data.decode("utf-8")))
    except Unreadable:
        raise
    except (ValueError, TypeError, RecursionError, OverflowError, MemoryError) as exc:
        raise Unreadable(f"{type(exc).__name__}: {exc}"[:300]) from None


# ---------------------------------------------------------------------------- exceptions


class RaisedInSubmission(Exception):
    """Base of an exception rebuilt from one that is not an ``Exception`` (KeyboardInterrupt, say).

    It is reported as a failure of the case, under the submission's own class name,
    never raised in the grading process as what it was.
    """


def exception_info(exc: BaseException) -> dict[str, Any]:
    """What the grading process needs to rebuild ``exc``: its class names, its arguments, its text."""
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - an exception whose __str__ fails
        text = ""
    try:
        args = json.loads(dumps(list(exc.args)))
    except Exception:  # noqa: BLE001
        args = [text]
    return {"mro": [c.__name__ for c in type(exc).__mro__][:20], "args": args, "text": text[:2000]}


def rebuild_exception(info: Any) -> BaseException:
    """An exception like the submission's: its class name, the nearest built-in ``Exception`` class as base.

    A KeyboardInterrupt, SystemExit or other ``BaseException`` is rebuilt on
    `RaisedInSubmission`, so it fails the case instead of stopping the grader.
    """
    if not isinstance(info, dict):
        raise Unreadable("an exception is a dict")
    names = [n for n in info.get("mro", []) if isinstance(n, str)] or ["Exception"]
    base: type[BaseException] = RaisedInSubmission
    for name in names:
        candidate = getattr(builtins, name, None)
        if isinstance(candidate, type) and issubclass(candidate, Exception):
            base = candidate
            break
    name = names[0] if names[0].isidentifier() else "Exception"
    cls = base if base.__name__ == name else type(name[:80], (base,), {"__module__": "submission"})
    try:
        args = _decode(info.get("args", []))
        exc = cls(*args) if isinstance(args, list) else cls(str(info.get("text", "")))
    except Exception:  # noqa: BLE001 - arguments the class refuses: keep the name and the text
        exc = type(name[:80], (RaisedInSubmission,), {"__module__": "submission"})(str(info.get("text", "")))
    return exc
