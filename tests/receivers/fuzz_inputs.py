"""Malformed and mutated OTLP inputs for both receivers, from the real-instrumentation corpus (tests/testdata/corpus).

Shared by the suite's bounded sample (test_fuzz_sample.py) and the full run (tests/benchmarks/fuzz_receivers.py).
``generate(rng, corpus)`` draws one ``FuzzInput`` of a kind chosen by weight:

* ``pb_bytes``: a corpus protobuf request with byte-level damage (bit flips, overwritten/inserted/deleted runs,
  truncation, duplicated slices, splices of two requests, a huge varint, stray field tags);
* ``pb_struct``: a corpus request decoded and changed in meaning (ids of wrong length, values nested 20-120 deep,
  thousands of attributes, giant strings, extreme integers, empty or duplicated spans), then encoded;
* ``json_text``: corpus OTLP/JSON with text damage (deleted/inserted characters, lone surrogate escapes, cut);
* ``json_struct``: corpus OTLP/JSON with one value anywhere replaced by an odd one (null, wrong type, 1e400,
  "\\ud800", a deep list, a long string);
* ``random``: random bytes as protobuf or JSON;
* ``headers``: a valid or damaged body with a wrong, odd or missing Content-Type / Content-Encoding, or gzip
  (valid, damaged, or of a damaged body), or a wrong path or method;
* ``oversize``: a body just over the 16 MiB limit, or a gzip bomb (rare: each costs 16 MiB).

Every input names its transport: ``http`` (any kind) or ``grpc`` (protobuf kinds, sent as raw bytes).
"""

from __future__ import annotations

import gzip
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import grpc
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

CORPUS = Path(__file__).resolve().parents[1] / "testdata" / "corpus"
LIMIT = 16 * 1024 * 1024
PB, JSON = "application/x-protobuf", "application/json"
#: HTTP statuses and gRPC codes a receiver may answer to any input; anything else (500, INTERNAL, UNKNOWN) is a bug
HTTP_OK_STATUSES = frozenset({200, 400, 404, 405, 408, 413, 415, 503})
GRPC_OK_CODES = frozenset({"OK", "INVALID_ARGUMENT", "RESOURCE_EXHAUSTED", "UNAVAILABLE"})
KINDS = {"pb_bytes": 30, "pb_struct": 12, "json_text": 18, "json_struct": 15, "random": 10, "headers": 15,
         "oversize": 0.02}


@dataclass(frozen=True, slots=True)
class FuzzInput:
    kind: str
    transport: str  # "http" or "grpc"
    signal: str  # "traces" or "logs"
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    path: str = ""  # HTTP path; default /v1/<signal>
    method: str = "POST"

    @property
    def http_path(self) -> str:
        return self.path or f"/v1/{self.signal}"


class Corpus:
    def __init__(self, root: Path = CORPUS) -> None:
        def load(pattern: str, logs: bool) -> list[bytes]:
            return [p.read_bytes() for p in sorted(root.glob(pattern)) if p.name.endswith(".logs" + p.suffix) == logs]

        self.pb = {"traces": load("*/*.pb", False), "logs": load("*/*.pb", True)}
        self.json = {"traces": load("*/*.json", False), "logs": load("*/*.json", True)}
        self.bomb = gzip.compress(bytes(LIMIT + 1024), compresslevel=9)  # ~16 KiB that inflates past the limit


def generate(rng: random.Random, corpus: Corpus, *, oversize: bool = True) -> FuzzInput:
    kinds = [k for k in KINDS if oversize or k != "oversize"]
    kind = rng.choices(kinds, weights=[KINDS[k] for k in kinds])[0]
    signal = "logs" if rng.random() < 0.2 else "traces"
    pb_body = rng.choice(corpus.pb[signal])
    if kind == "pb_bytes":
        return _either(rng, kind, signal, mutate_bytes(rng, pb_body, corpus.pb[signal]))
    if kind == "pb_struct":
        return _either(rng, kind, signal, mutate_structure(rng, pb_body, signal))
    if kind == "json_text":
        body = mutate_json_text(rng, rng.choice(corpus.json[signal]))
        return FuzzInput(kind, "http", signal, body, {"Content-Type": JSON})
    if kind == "json_struct":
        return FuzzInput(kind, "http", signal, mutate_json_value(rng, rng.choice(corpus.json[signal])),
                         {"Content-Type": JSON})
    if kind == "random":
        body = rng.randbytes(rng.choice((0, 1, 7, 64, 1000, 20000)))
        if rng.random() < 0.3:
            return FuzzInput(kind, "http", signal, body, {"Content-Type": JSON})
        return _either(rng, kind, signal, body)
    if kind == "headers":
        return odd_headers(rng, signal, pb_body, rng.choice(corpus.json[signal]))
    if rng.random() < 0.5:
        return FuzzInput(kind, "http", signal, corpus.bomb, {"Content-Type": PB, "Content-Encoding": "gzip"})
    return FuzzInput(kind, rng.choice(("http", "grpc")), signal, rng.randbytes(LIMIT + 1), {"Content-Type": PB})


def _either(rng: random.Random, kind: str, signal: str, body: bytes) -> FuzzInput:
    return FuzzInput(kind, "grpc" if rng.random() < 0.4 else "http", signal, body, {"Content-Type": PB})


def mutate_bytes(rng: random.Random, body: bytes, others: list[bytes]) -> bytes:
    data = bytearray(body)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(9)
        at = rng.randrange(len(data) + 1)
        if op == 0 and data:  # flip bits
            i = min(at, len(data) - 1)
            data[i] ^= 1 << rng.randrange(8)
        elif op == 1:  # overwrite a run
            run = rng.randbytes(rng.randint(1, 16))
            data[at:at + len(run)] = run
        elif op == 2:  # insert
            data[at:at] = rng.randbytes(rng.randint(1, 32))
        elif op == 3:  # delete
            del data[at:at + rng.randint(1, 64)]
        elif op == 4:  # truncate
            del data[at:]
        elif op == 5 and data:  # duplicate a slice
            end = min(len(data), at + rng.randint(1, 256))
            data[at:at] = data[at:end]
        elif op == 6:  # splice another request
            other = rng.choice(others)
            cut = rng.randrange(len(other) + 1)
            data = data[:at] + bytearray(other[cut:])
        elif op == 7:  # a huge or overlong varint
            data[at:at] = b"\xff" * rng.randint(9, 11) + b"\x01"
        else:  # a stray field tag of a random wire type
            data[at:at] = bytes([rng.randrange(256), rng.randrange(128)])
    return bytes(data)


def _nested(depth: int) -> AnyValue:
    value = AnyValue(string_value="leaf")
    for i in range(depth):
        outer = AnyValue()
        if i % 2:
            outer.kvlist_value.values.add(key="k").value.CopyFrom(value)
        else:
            outer.array_value.values.add().CopyFrom(value)
        value = outer
    return value


def mutate_structure(rng: random.Random, body: bytes, signal: str) -> bytes:
    if signal == "logs":
        logs = ExportLogsServiceRequest.FromString(body)
        records = [r for rl in logs.resource_logs for sl in rl.scope_logs for r in sl.log_records]
        if records:
            record = rng.choice(records)
            choice = rng.randrange(4)
            if choice == 0:
                record.trace_id = rng.randbytes(rng.choice((0, 1, 15, 17, 16)))
            elif choice == 1:
                record.body.CopyFrom(_nested(rng.randint(20, 120)))
            elif choice == 2:
                record.span_id = rng.randbytes(rng.choice((0, 7, 9)))
            else:
                record.severity_number = rng.randint(-5, 100)  # type: ignore[assignment]
        return logs.SerializeToString()
    request = ExportTraceServiceRequest.FromString(body)
    spans = [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
    span = rng.choice(spans)
    choice = rng.randrange(8)
    if choice == 0:
        span.trace_id = rng.randbytes(rng.choice((0, 1, 15, 17)))
    elif choice == 1:
        span.attributes.add(key="deep").value.CopyFrom(_nested(rng.randint(20, 120)))
    elif choice == 2:
        for i in range(rng.randint(1000, 5000)):
            span.attributes.add(key=f"k{i}").value.int_value = i
    elif choice == 3:
        span.attributes.add(key="big").value.string_value = "x" * rng.randint(100_000, 2_000_000)
    elif choice == 4:
        span.start_time_unix_nano, span.end_time_unix_nano = 2**64 - 1, 0
        span.attributes.add(key="gen_ai.usage.input_tokens").value.int_value = -(2**63)
    elif choice == 5:
        scope = request.resource_spans[0].scope_spans[0]
        for _ in range(rng.randint(1, 500)):
            scope.spans.add().CopyFrom(span)  # duplicated ids
    elif choice == 6:
        span.parent_span_id = span.span_id  # its own parent
    else:
        span.Clear()
    return request.SerializeToString()


def mutate_json_text(rng: random.Random, body: bytes) -> bytes:
    text = body.decode("utf-8")
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(text) + 1)
        op = rng.randrange(5)
        if op == 0:
            text = text[:at] + text[at + rng.randint(1, 20):]
        elif op == 1:
            token = rng.choice(['"', "{", "[", "]", "}", ",", ":", "\\", "\\ud800", "\\u0000", "nul"])
            text = text[:at] + token + text[at:]
        elif op == 2:
            text = text[:at]
        elif op == 3:
            text = text.replace('"stringValue": "', '"stringValue": "\\udc00', 1)
        else:
            text = text[:at] + chr(rng.randrange(0x20, 0x2FFF)) + text[at:]
    return text.encode("utf-8", "surrogatepass")


ODD_VALUES: tuple[Any, ...] = (None, [], {}, "", 0, -1, 2**70, 1e308, True, "\ud800", "zz", [[[[[[[]]]]]]],
                               {"stringValue": 5}, "x" * 100_000)


def mutate_json_value(rng: random.Random, body: bytes) -> bytes:
    doc = json.loads(body)
    slots: list[tuple[Any, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, child in node.items():
                slots.append((node, key))
                walk(child)
        elif isinstance(node, list):
            for i, child in enumerate(node):
                slots.append((node, i))
                walk(child)

    walk(doc)
    for _ in range(rng.randint(1, 3)):
        parent, key = rng.choice(slots)
        if rng.random() < 0.1:
            value: Any = "leaf"
            for _ in range(rng.randint(5, 100)):  # 7 JSON levels each
                value = {"arrayValue": {"values": [{"kvlistValue": {"values": [{"key": "k", "value": value}]}}]}}
            parent[key] = value
        else:
            parent[key] = rng.choice(ODD_VALUES)
    return json.dumps(doc).encode("utf-8", "surrogatepass")


def odd_headers(rng: random.Random, signal: str, pb_body: bytes, json_body: bytes) -> FuzzInput:
    body = pb_body if rng.random() < 0.6 else json_body
    content_type = PB if body is pb_body else JSON
    choice = rng.randrange(8)
    if choice == 0:
        headers = {"Content-Type": rng.choice(("text/plain", "", "application/grpc", "application/protobuf",
                                               "application/x-protobuf; charset=utf-8", "application/json;;",
                                               "multipart/form-data; boundary=x", "application/*", "%%%"))}
    elif choice == 1:
        headers = {}
    elif choice == 2:
        coding = rng.choice(("br", "deflate", "zstd", "gzip, gzip", "x", " GZIP ", "identity"))
        headers = {"Content-Type": content_type, "Content-Encoding": coding}
    elif choice == 3:
        headers = {"Content-Type": content_type, "Content-Encoding": "gzip"}
        body = gzip.compress(body)
    elif choice == 4:
        headers = {"Content-Type": content_type, "Content-Encoding": "gzip"}
        body = mutate_bytes(rng, gzip.compress(body), [body])
    elif choice == 5:
        headers = {"Content-Type": content_type, "Content-Encoding": "gzip"}
        body = gzip.compress(mutate_bytes(rng, body, [body]))
    elif choice == 6:
        return FuzzInput("headers", "http", signal, body, {"Content-Type": content_type},
                         path=rng.choice(("/v1/metrics", "/", "/v1/traces/", "/V1/TRACES", "/v1/logs?x=1")))
    else:
        return FuzzInput("headers", "http", signal, body, {"Content-Type": content_type},
                         method=rng.choice(("GET", "PUT", "DELETE", "PATCH")))
    return FuzzInput("headers", "http", signal, body, headers)


GRPC_PATHS = {"traces": "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
              "logs": "/opentelemetry.proto.collector.logs.v1.LogsService/Export"}


async def send_http(session: aiohttp.ClientSession, base_url: str, item: FuzzInput, timeout: float = 30) -> str:
    """The HTTP status as text, or ``no-response:<error>`` when the request got no answer."""
    try:
        async with session.request(item.method, base_url + item.http_path, data=item.body, headers=item.headers,
                                   timeout=aiohttp.ClientTimeout(total=timeout)) as response:
            await response.read()
            return str(response.status)
    except (aiohttp.ClientError, TimeoutError) as err:
        return f"no-response:{type(err).__name__}"


async def send_grpc(channel: grpc.aio.Channel, item: FuzzInput, timeout: float = 30) -> str:
    """The gRPC status code name, or ``no-response:<code>`` for a transport failure (the call never got a status
    from the server: the deadline passed)."""
    call = channel.unary_unary(GRPC_PATHS[item.signal], request_serializer=_raw, response_deserializer=_raw)
    try:
        await call(item.body, timeout=timeout)
    except grpc.aio.AioRpcError as err:
        if err.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
            return f"no-response:{err.code().name}"
        return str(err.code().name)
    return "OK"


def _raw(data: bytes) -> bytes:
    return data
