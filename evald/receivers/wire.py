"""Protobuf wire-format reading for the compiled OTLP decoders (wire_traces.py, wire_logs.py): the primitives
(varints, tags, lengths, fixed64, enums, UTF-8 strings, skipping unknown fields) and OTLP's common.proto values
(``KeyValue``, ``AnyValue``, ``ArrayValue``, ``KeyValueList``) as convert.py converts them.

Written for mypyc (evald/native.py): plain functions on ``bytes`` and ``int`` whose byte reads, slices and
``decode`` compile to C primitives. Every function takes the position to read at and the end of the enclosing
message and returns the new position (with the value, as a tuple, where there is one).

Failure semantics: anything these helpers are not sure protobuf's own decoder (upb) reads the same way raises
``Declined`` instead of guessing, and the caller decodes the body with the protobuf library instead: data running
past the enclosing message, a varint longer than 10 bytes or with bits beyond 64, a tag or length in more than 5
bytes, a tag of field number 0 or over 32 bits, wire types 3/4 (groups), 6 and 7, invalid UTF-8 in a string, a
negative enum, a declared field with another wire type than its declaration's, a ``KeyValue.value`` or a message
member of ``AnyValue`` after another member (upb would merge them), values nested deeper than ``MAX_VALUE_DEPTH``.
Fields a message does not declare are skipped. No configuration keys; its only state is a bounded memo of attribute
keys.
"""

from __future__ import annotations

import struct
from typing import Any, Final

from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

#: wire types (protobuf encoding spec): varint, fixed 64-bit, length-delimited, fixed 32-bit
VARINT: Final = 0
FIXED64: Final = 1
LEN: Final = 2
FIXED32: Final = 5

_INT64_SIGN: Final = 1 << 63
_UINT64: Final = 1 << 64
_ENUM_LIMIT: Final = 1 << 31
#: AnyValue levels (arrays and kvlists within values); a kvlist level is 3 messages deep, so 24 stays below upb's 100
MAX_VALUE_DEPTH: Final = 24
# (field number << 3) | wire type of common.proto's fields; tests/receivers/test_wire_traces.py checks them
KV_KEY: Final = 1 << 3 | LEN
KV_VALUE: Final = 2 << 3 | LEN
KV_KEY_STRINDEX: Final = 3 << 3 | VARINT
AV_STRING: Final = 1 << 3 | LEN
AV_BOOL: Final = 2 << 3 | VARINT
AV_INT: Final = 3 << 3 | VARINT
AV_DOUBLE: Final = 4 << 3 | FIXED64
AV_ARRAY: Final = 5 << 3 | LEN
AV_KVLIST: Final = 6 << 3 | LEN
AV_BYTES: Final = 7 << 3 | LEN
AV_STRING_STRINDEX: Final = 8 << 3 | VARINT
LIST_VALUES: Final = 1 << 3 | LEN  # ArrayValue.values and KeyValueList.values
_KV_FIELDS: Final = frozenset(f.number for f in KeyValue.DESCRIPTOR.fields)
_AV_FIELDS: Final = frozenset(f.number for f in AnyValue.DESCRIPTOR.fields)
_LIST_FIELDS: Final = frozenset({1})  # ArrayValue and KeyValueList (test checks)
_DOUBLE: Final = struct.Struct("<d")
#: distinct attribute keys remembered (encoded -> str): decoded once and shared by every record (a few hundred in
#: practice); cleared when full, so a flood of distinct keys costs no memory
MAX_CACHED_KEYS: Final = 4096
_keys: Final[dict[bytes, str]] = {}  # Final: a C static when compiled, not a lookup by name


class Declined(Exception):
    """The fast decoder will not decide this body; decode it with the protobuf library (same results, its errors)."""


def varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """(value as an unsigned 64-bit int, position after it)."""
    if pos >= end:
        raise Declined
    byte = buf[pos]
    if byte < 0x80:
        return byte, pos + 1
    result = byte & 0x7F
    shift = 7
    pos += 1
    while True:
        if pos >= end or shift > 63:
            raise Declined
        byte = buf[pos]
        pos += 1
        if shift == 63 and byte > 1:  # a 10th byte may only carry bit 63
            raise Declined
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def signed64(value: int) -> int:
    """An unsigned 64-bit varint value as int64 (two's complement)."""
    return value - _UINT64 if value >= _INT64_SIGN else value


def tag(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """(field number << 3 | wire type, position after it); field 0 and tags over 32 bits are declined."""
    if pos < end:
        first = buf[pos]
        if 8 <= first < 0x80:  # fields 1..15: one byte
            return first, pos + 1
    value, after = varint(buf, pos, end)
    if value < 8 or value > 0xFFFFFFFF or after - pos > 5:
        raise Declined
    return value, after


def length(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """A length-delimited field's contents: (start, stop), checked against ``end``."""
    if pos < end:
        size = buf[pos]
        if size < 0x80:  # up to 127 bytes: one byte
            stop = pos + 1 + size
            if stop > end:
                raise Declined
            return pos + 1, stop
    size, start = varint(buf, pos, end)
    stop = start + size
    if stop > end or start - pos > 5:
        raise Declined
    return start, stop


def text(buf: bytes, pos: int, end: int) -> tuple[str, int]:
    """A UTF-8 string field: (value, position after it); invalid UTF-8 is declined (upb refuses it)."""
    start, stop = length(buf, pos, end)
    try:
        return buf[start:stop].decode("utf-8"), stop
    except UnicodeDecodeError:
        raise Declined from None


def fixed64(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """A little-endian fixed64: (value, position after it)."""
    stop = pos + 8
    if stop > end:
        raise Declined
    value = (buf[pos] | buf[pos + 1] << 8 | buf[pos + 2] << 16 | buf[pos + 3] << 24 | buf[pos + 4] << 32
             | buf[pos + 5] << 40 | buf[pos + 6] << 48 | buf[pos + 7] << 56)
    return value, stop


def skip(buf: bytes, pos: int, end: int, key: int) -> int:
    """The position after a field of wire type ``key & 7`` whose tag was read (groups and types 6/7 declined)."""
    wire_type = key & 7
    if wire_type == VARINT:
        return varint(buf, pos, end)[1]
    if wire_type == LEN:
        return length(buf, pos, end)[1]
    if wire_type == FIXED64:
        stop = pos + 8
    elif wire_type == FIXED32:
        stop = pos + 4
    else:
        raise Declined
    if stop > end:
        raise Declined
    return stop


def other(buf: bytes, pos: int, end: int, key: int, declared: frozenset[int]) -> int:
    """Skip a field the message does not declare; a declared one with another wire type is declined."""
    if key >> 3 in declared:
        raise Declined
    return skip(buf, pos, end, key)


def enum(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """An enum (int32) field: (value, position after it); a negative one is declined (upb's truncation of a 64-bit
    varint to int32 is not worth copying)."""
    value, pos = varint(buf, pos, end)
    if value >= _ENUM_LIMIT:
        raise Declined
    return value, pos


def key_value(buf: bytes, pos: int, end: int, into: dict[str, Any], depth: int) -> None:
    """One KeyValue into ``into`` (a later duplicate key wins); an unset value is None."""
    name = ""
    value: Any = None
    seen_value = False
    while pos < end:
        key, pos = tag(buf, pos, end)
        if key == KV_KEY:
            start, pos = length(buf, pos, end)
            raw = buf[start:pos]
            cached = _keys.get(raw)
            if cached is None:
                try:
                    cached = raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise Declined from None
                if len(_keys) >= MAX_CACHED_KEYS:
                    _keys.clear()
                _keys[raw] = cached
            name = cached
        elif key == KV_VALUE:
            if seen_value:
                raise Declined
            seen_value = True
            start, pos = length(buf, pos, end)
            value = any_value(buf, start, pos, depth)
        elif key == KV_KEY_STRINDEX:
            pos = varint(buf, pos, end)[1]
        else:
            pos = other(buf, pos, end, key, _KV_FIELDS)
    into[name] = value


def any_value(buf: bytes, pos: int, end: int, depth: int) -> Any:
    """convert.py's ``any_value``: the last member of the oneof wins; a message member after any member declines."""
    if depth > MAX_VALUE_DEPTH:
        raise Declined
    value: Any = None
    seen = False
    while pos < end:
        key, pos = tag(buf, pos, end)
        if key == AV_STRING:
            value, pos = text(buf, pos, end)
        elif key == AV_INT:
            number, pos = varint(buf, pos, end)
            value = signed64(number)
        elif key == AV_BOOL:
            number, pos = varint(buf, pos, end)
            value = number != 0
        elif key == AV_DOUBLE:
            if pos + 8 > end:
                raise Declined
            value = _DOUBLE.unpack_from(buf, pos)[0]
            pos += 8
        elif key == AV_BYTES:
            start, pos = length(buf, pos, end)
            value = buf[start:pos]
        elif key in (AV_ARRAY, AV_KVLIST):
            if seen:
                raise Declined
            start, pos = length(buf, pos, end)
            value = _array(buf, start, pos, depth + 1) if key == AV_ARRAY else _kvlist(buf, start, pos, depth + 1)
        elif key == AV_STRING_STRINDEX:
            pos = varint(buf, pos, end)[1]
            value = None
        else:
            pos = other(buf, pos, end, key, _AV_FIELDS)
            continue
        seen = True
    return value


def _array(buf: bytes, pos: int, end: int, depth: int) -> list[Any]:
    out: list[Any] = []
    while pos < end:
        key, pos = tag(buf, pos, end)
        if key == LIST_VALUES:
            start, pos = length(buf, pos, end)
            out.append(any_value(buf, start, pos, depth))
        else:
            pos = other(buf, pos, end, key, _LIST_FIELDS)
    return out


def _kvlist(buf: bytes, pos: int, end: int, depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    while pos < end:
        key, pos = tag(buf, pos, end)
        if key == LIST_VALUES:
            start, pos = length(buf, pos, end)
            key_value(buf, start, pos, out, depth)
        else:
            pos = other(buf, pos, end, key, _LIST_FIELDS)
    return out
