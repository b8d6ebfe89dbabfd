"""Shared by the wire decoder tests (test_wire_traces.py, test_wire_logs.py): raw protobuf building, the seeded
mutations of real bodies, switching a decoder on, and the file reader's refusals compared with it off and on."""

from __future__ import annotations

import random
import types
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

import pytest
from google.protobuf.descriptor import FieldDescriptor
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from evald.receivers.files import read_signal_file
from evald.receivers.otlp_json import parse_logs_json, parse_traces_json

TESTDATA = Path(__file__).resolve().parents[1] / "testdata"
F = FieldDescriptor
#: protobuf wire type of each field type the OTLP messages use
WIRE_TYPE = {F.TYPE_DOUBLE: 1, F.TYPE_FIXED64: 1, F.TYPE_FIXED32: 5, F.TYPE_STRING: 2, F.TYPE_BYTES: 2,
             F.TYPE_MESSAGE: 2, F.TYPE_BOOL: 0, F.TYPE_INT64: 0, F.TYPE_INT32: 0, F.TYPE_UINT32: 0, F.TYPE_ENUM: 0}


@cache
def request_bodies(logs: bool) -> tuple[tuple[str, bytes], ...]:
    """Every trace request (or, with ``logs``, every log request: the ``*.logs.pb`` / ``*.logs.json`` companions)
    under tests/testdata as protobuf bytes, by path; JSON ones through the project's JSON parser. Documents that
    are not OTLP (manifests, specs) and requests without resources are left out."""
    out = []
    for path in sorted(TESTDATA.rglob("*")):
        if path.suffix not in (".pb", ".json") or path.name.endswith((".logs.pb", ".logs.json")) != logs:
            continue
        data = path.read_bytes()
        message = ExportLogsServiceRequest if logs else ExportTraceServiceRequest
        try:
            request = message.FromString(data) if path.suffix == ".pb" else (
                parse_logs_json(data) if logs else parse_traces_json(data))
        except Exception:  # noqa: BLE001 - a JSON document that is not OTLP
            continue
        if request.resource_logs if logs else request.resource_spans:
            out.append((str(path.relative_to(TESTDATA)), data if path.suffix == ".pb" else request.SerializeToString()))
    return tuple(out)


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def field(number: int, wire_type: int, payload: bytes | int) -> bytes:
    head = varint(number << 3 | wire_type)
    if isinstance(payload, int):
        return head + varint(payload)
    return head + (varint(len(payload)) + payload if wire_type == 2 else payload)


def mutations(sources: Sequence[bytes], rounds: int, seed: int) -> list[bytes]:
    """Seeded truncations, byte changes (any byte, or ASCII: strings stay UTF-8), insertions and deletions of
    ``sources``."""
    rng = random.Random(seed)
    out = []
    for _ in range(rounds):
        body = bytearray(rng.choice(sources))
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            at = rng.randrange(len(body))
            how = rng.choices(("truncate", "byte", "ascii", "insert", "delete"), (1, 3, 4, 1, 1))[0]
            if how == "truncate":
                del body[at:]
            elif how == "insert":
                body.insert(at, rng.randrange(256))
            elif how == "delete":
                del body[at]
            else:
                body[at] = rng.randrange(256) if how == "byte" else rng.randrange(32, 127)
            if not body:
                break
        out.append(bytes(body))
    return out


def switch_of(module: types.ModuleType, monkeypatch: pytest.MonkeyPatch) -> Callable[[bool], None]:
    """Turns the decoder ``module`` (wire_traces, wire_logs) on or off for the callers, for the test's duration."""
    def switch(on: bool) -> None:
        monkeypatch.setattr(module, "enabled", on)
    return switch


def assert_file_reader_refuses_alike(path: Path, body: bytes, error: type[Exception],
                                     wire_enabled: Callable[[bool], None]) -> None:
    """``read_signal_file(path)`` of ``body`` raises ``error`` with the same message with the decoder off and on."""
    path.write_bytes(body)
    messages = []
    for on in (False, True):
        wire_enabled(on)
        with pytest.raises(error) as caught:
            read_signal_file(path)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
