"""What crosses from a submission's process to the grader: plain values, rebuilt, never unpickled."""

from __future__ import annotations

import json
import math
import re
from collections import Counter, OrderedDict, namedtuple

import numpy as np
import pytest

from toklab.bpe import ByteBPE
from toklab.teaching.exercises import plain


def _round_trip(value):
    return plain.loads(plain.dumps(value))


@pytest.mark.parametrize("value", [
    None, True, 0, -12, 10**40, 1.5, "", "注意🙂", b"\x00\xff", bytearray(b"ab"), [1, [2, (3, "x")]], (), ("a",),
    {"a": 1, (1, 2): [3], 4: None}, {1, 2}, frozenset({"x"}), range(2, 9, 3), {"nested": {b"k": {frozenset({1})}}},
])
def test_plain_values_come_back_equal_and_of_the_same_type(value):
    back = _round_trip(value)
    assert back == value and type(back) is type(value)


def test_floats_that_json_cannot_spell():
    back = _round_trip([math.inf, -math.inf, math.nan])
    assert back[:2] == [math.inf, -math.inf] and math.isnan(back[2])


def test_subclasses_arrive_as_their_plain_base():
    Pair = namedtuple("Pair", "a b")
    assert _round_trip(Counter("aab")) == {"a": 2, "b": 1} and type(_round_trip(Counter())) is dict
    assert _round_trip(OrderedDict(x=1)) == {"x": 1}
    assert _round_trip(Pair(1, 2)) == (1, 2) and type(_round_trip(Pair(1, 2))) is tuple
    assert _round_trip(np.int64(7)) == 7 and type(_round_trip(np.int64(7))) is int
    assert list(_round_trip(x * 2 for x in range(3))) == [0, 2, 4]


def test_arrays_patterns_and_tokenizers_are_rebuilt_from_their_parts():
    array = np.arange(12, dtype=np.float32).reshape(3, 4)
    back = _round_trip(array)
    assert back.dtype == array.dtype and np.array_equal(back, array)
    assert _round_trip(np.array([True, False])).dtype == bool
    pattern = _round_trip(re.compile(r"\w+", re.IGNORECASE))
    assert pattern.pattern == r"\w+" and pattern.flags & re.IGNORECASE
    bpe = ByteBPE([(b"a", b"b"), (b"ab", b"c")], pattern="gpt2")
    rebuilt = _round_trip(bpe)
    assert isinstance(rebuilt, ByteBPE) and rebuilt.merges == bpe.merges and rebuilt.encode("abc") == bpe.encode("abc")


def test_anything_else_is_an_opaque_description_equal_to_nothing():
    class Always:
        def __eq__(self, other):
            return True

        def __repr__(self):
            return "<always equal>"

    back = _round_trip([Always(), np.array([object()], dtype=object)])
    assert all(isinstance(v, plain.Opaque) for v in back)
    assert back[0] != back[0].__class__("Always", "<always equal>") and repr(back[0]) == "<always equal>"
    looped = []
    looped.append(looped)
    assert isinstance(_round_trip(looped), plain.Opaque)


@pytest.mark.parametrize("text", [
    b"not json", b'{"d": 1}', b'{"zz": []}', b'{"nd": ["O", [1], ""]}', b'{"nd": ["<f8", [2], "AAAA"]}',
    b'{"a": 1, "b": 2}', b'{"r": [1, "x", 1]}', b"[" * 100_000 + b"]" * 100_000, b'{"d": [[[1], 2]]}',
])
def test_a_message_that_is_not_a_plain_value_is_refused(text):
    with pytest.raises(plain.Unreadable):
        plain.loads(text)


def test_a_message_over_the_limit_is_refused_unread(monkeypatch):
    monkeypatch.setattr(plain, "MAX_BYTES", 10)
    with pytest.raises(plain.Unreadable, match="more than the checker reads"):
        plain.loads(b'"' + b"x" * 20 + b'"')


def test_exceptions_keep_their_name_and_the_nearest_builtin_class():
    class MyError(ValueError):
        pass

    rebuilt = plain.rebuild_exception(json.loads(json.dumps(plain.exception_info(MyError("bad input")))))
    assert isinstance(rebuilt, ValueError) and type(rebuilt).__name__ == "MyError" and str(rebuilt) == "bad input"
    stop = plain.rebuild_exception(plain.exception_info(KeyboardInterrupt()))
    assert isinstance(stop, plain.RaisedInSubmission) and isinstance(stop, Exception)
    assert type(stop).__name__ == "KeyboardInterrupt"
    decode = plain.rebuild_exception(plain.exception_info(UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid")))
    assert isinstance(decode, UnicodeDecodeError) and "invalid" in str(decode)
