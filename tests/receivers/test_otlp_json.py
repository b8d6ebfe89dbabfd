from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTracePartialSuccess,
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from evald.receivers.convert import INVALID_ID, convert_logs, convert_traces, count_spans
from evald.receivers.otlp_json import parse_logs_json, parse_traces_json, to_json

CORPUS = Path(__file__).resolve().parents[1] / "testdata" / "corpus"
TRACE_JSON = sorted(p for p in CORPUS.glob("*/*.json") if not p.name.endswith(".logs.json"))
LOGS_JSON = sorted(CORPUS.glob("*/*.logs.json"))


def _doc(**span: Any) -> dict[str, Any]:
    base = {"traceId": "5B8EFFF798038103D269B633813FC60C", "spanId": "eee19b7ec3c1b174", "name": "chat", "kind": 3,
            "startTimeUnixNano": "1544712660000000000", "endTimeUnixNano": 1544712661000000000,
            "attributes": [{"key": "gen_ai.usage.input_tokens", "value": {"intValue": "100"}},
                           {"key": "blob", "value": {"bytesValue": "AAEC"}}]}
    base.update(span)
    return {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "a"}}]},
                               "scopeSpans": [{"scope": {"name": "s"}, "spans": [base]}]}]}


def test_hex_ids_case_insensitive_int64_strings_and_enum_ints() -> None:
    req = parse_traces_json(json.dumps(_doc(parentSpanId="00F067AA0BA902B7")))
    (span,) = convert_traces(req).records
    assert span.trace_id == "5b8efff798038103d269b633813fc60c"
    assert span.span_id == "eee19b7ec3c1b174" and span.parent_span_id == "00f067aa0ba902b7"
    assert span.kind == 3 and span.duration_ms == 1000.0
    assert span.attributes == {"gen_ai.usage.input_tokens": 100, "blob": b"\x00\x01\x02"}  # bytesValue stays base64
    assert span.resource == {"service.name": "a"} and span.scope_name == "s"


def test_empty_parent_is_root_and_links_are_converted_too() -> None:
    doc = _doc(parentSpanId="", links=[{"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "0102030405060708"}])
    req = parse_traces_json(json.dumps(doc).encode())
    link = req.resource_spans[0].scope_spans[0].spans[0].links[0]
    assert link.span_id == bytes.fromhex("0102030405060708")
    assert convert_traces(req).records[0].parent_span_id is None


@pytest.mark.parametrize(
    "ids",
    [{"traceId": "not-hex"}, {"spanId": "abc"}, {"spanId": 12}, {"parentSpanId": "zz"}, {"traceId": ""},
     {"spanId": "é"}, {"traceId": None}],
)
def test_invalid_hex_rejects_only_that_span(ids: dict[str, Any]) -> None:
    doc = _doc(**ids)
    good = _doc()["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"].append(good)
    result = convert_traces(parse_traces_json(json.dumps(doc)))
    assert len(result.records) == 1 and result.rejected == {INVALID_ID: 1}


def test_unknown_fields_are_ignored_and_snake_case_ids_converted() -> None:
    doc = _doc(futureField={"x": 1})
    doc["somethingNew"] = 1
    span = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span["trace_id"] = span.pop("traceId")
    (record,) = convert_traces(parse_traces_json(json.dumps(doc))).records
    assert record.trace_id == "5b8efff798038103d269b633813fc60c"


def test_empty_object_is_an_empty_request() -> None:
    assert count_spans(parse_traces_json(b"{}")) == 0
    assert len(parse_logs_json("{}").resource_logs) == 0


@pytest.mark.parametrize(
    ("body", "match"),
    [
        (b"{not json", "invalid JSON"),
        (b"\xff\xfe{}", "invalid JSON"),
        (b"[]", "must be an object with a 'resourceSpans' list, got a JSON array"),
        (b'"x"', "got a JSON string"),
        (b'{"resourceSpans": 3}', "not an OTLP/JSON ExportTraceServiceRequest"),
        (b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": 5}]}]}]}', "ExportTraceServiceRequest"),
        (b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"startTimeUnixNano": "soon"}]}]}]}', "OTLP/JSON"),
        (b"[" * 100_000, "invalid JSON"),
    ],
)
def test_malformed_json_is_a_clear_value_error(body: bytes, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        parse_traces_json(body)


def test_logs_hex_ids() -> None:
    doc = {"resourceLogs": [{"scopeLogs": [{"logRecords": [
        {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "EEE19B7EC3C1B174", "eventName": "e",
         "body": {"stringValue": "hi"}},
        {"traceId": "xyz"},
    ]}]}]}
    result = convert_logs(parse_logs_json(json.dumps(doc)))
    (rec,) = result.records
    assert rec.span_id == "eee19b7ec3c1b174" and rec.event_name == "e" and rec.body == "hi"
    assert result.rejected == {INVALID_ID: 1}


@pytest.mark.parametrize("path", TRACE_JSON, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_json_matches_its_pb_twin(path: Path) -> None:
    from_json = parse_traces_json(path.read_bytes())
    pb = path.with_suffix(".pb")
    assert count_spans(from_json) > 0
    if pb.exists():
        from_pb = ExportTraceServiceRequest.FromString(pb.read_bytes())
        assert count_spans(from_json) == count_spans(from_pb)
        assert convert_traces(from_json).records == convert_traces(from_pb).records


@pytest.mark.parametrize("path", LOGS_JSON, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_logs_json_matches_its_pb_twin(path: Path) -> None:
    from_json = convert_logs(parse_logs_json(path.read_bytes()))
    pb = path.with_name(path.name.replace(".logs.json", ".logs.pb"))
    from_pb = convert_logs(ExportLogsServiceRequest.FromString(pb.read_bytes()))
    assert from_json.records and from_json.records == from_pb.records


def test_to_json_encodes_responses_in_otlp_json() -> None:
    empty = ExportTraceServiceResponse()
    assert to_json(empty) == b"{}"
    partial = ExportTraceServiceResponse(partial_success=ExportTracePartialSuccess(rejected_spans=3, error_message="x"))
    assert json.loads(to_json(partial)) == {"partialSuccess": {"rejectedSpans": "3", "errorMessage": "x"}}


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(
        st.sampled_from(["resourceSpans", "scopeSpans", "spans", "traceId", "kind", "attributes", "x"]), c,
        max_size=3),
    max_leaves=15,
)


@settings(max_examples=200, deadline=None, database=None)
@given(st.dictionaries(st.sampled_from(["resourceSpans", "x"]), _json_values, max_size=2))
def test_any_json_either_parses_or_raises_value_error(doc: dict[str, Any]) -> None:
    with contextlib.suppress(ValueError):
        parse_traces_json(json.dumps(doc))


@pytest.mark.parametrize("body", [b'{"resourceSpans":[{"\\ud800":1}]}', b'{"\\ud800":{}}',
                                  b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"kind":"\\ud800"}]}]}]}'])
def test_a_lone_surrogate_in_a_name_or_enum_is_a_value_error(body: bytes) -> None:
    with pytest.raises(ValueError, match="not valid Unicode"):
        parse_traces_json(body)
