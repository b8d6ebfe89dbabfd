from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evald.errors import EvaldError
from evald.receivers.files import read_signal_file
from tests.receivers.support import logs_request, trace_request

CORPUS = Path(__file__).resolve().parents[1] / "testdata" / "corpus"
FILES = sorted(p for p in CORPUS.glob("*/*") if p.suffix in (".pb", ".json"))


def test_the_corpus_is_there() -> None:
    assert len(FILES) > 80


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_corpus_file_reads(path: Path) -> None:
    batch = read_signal_file(path)
    assert batch.source == "file" and batch.delivery is None
    if path.name.endswith((".logs.pb", ".logs.json")):
        assert batch.logs and not batch.spans
        assert all(len(rec.trace_id) == 32 for rec in batch.logs)
    else:
        assert batch.spans and not batch.logs
        assert all(len(s.trace_id) == 32 and len(s.span_id) == 16 for s in batch.spans)


def test_pb_and_json_twins_read_the_same() -> None:
    pb = CORPUS / "openinference-openai" / "c_tool_call.pb"
    assert read_signal_file(pb).spans == read_signal_file(pb.with_suffix(".json")).spans


def test_generated_files(tmp_path: Path) -> None:
    (tmp_path / "t.pb").write_bytes(trace_request(3).SerializeToString())
    (tmp_path / "t.logs.pb").write_bytes(logs_request(2).SerializeToString())
    assert len(read_signal_file(tmp_path / "t.pb").spans) == 3
    assert len(read_signal_file(tmp_path / "t.logs.pb").logs) == 2


@pytest.mark.parametrize(
    ("name", "content", "match"),
    [
        ("random.pb", os.urandom(4096), "not a binary ExportTraceServiceRequest"),
        ("zeros.pb", bytes(64), "not a binary ExportTraceServiceRequest"),
        ("empty.pb", b"", "no resourceSpans"),
        ("unknown.pb", b"\x12\x03abc", "no resourceSpans"),
        ("envelope.pb", b"\x0a\x05\x4a\x03abc", "unknown fields in ResourceSpans"),
        ("noids.pb", None, "no usable spans"),
        ("logs-as-traces.pb", logs_request().SerializeToString(), "not a binary ExportTraceServiceRequest"),
        ("random.json", os.urandom(256), "not an OTLP/JSON"),
        ("other.json", json.dumps({"hello": "world"}).encode(), "no resourceSpans"),
        ("list.json", b"[1, 2]", "not an OTLP/JSON"),
        ("empty.json", b'{"resourceSpans": []}', "no resourceSpans"),
        ("shape.json", b'{"resourceSpans": [{"scopeSpans": 7}]}', "not an OTLP/JSON"),
        ("x.logs.json", b'{"resourceLogs": [{"scopeLogs": [{"logRecords": [{}]}]}]}', "no usable log records"),
        ("x.logs.pb", b"", "no resourceLogs"),
        ("notes.txt", b"hi", "not an OTLP file"),
    ],
)
def test_files_that_are_not_otlp_raise_evald_error(
    tmp_path: Path, name: str, content: bytes | None, match: str
) -> None:
    if content is None:
        req = trace_request(2)
        for span in req.resource_spans[0].scope_spans[0].spans:
            span.trace_id = b""
        content = req.SerializeToString()
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(EvaldError, match=match) as info:
        read_signal_file(path)
    assert name in str(info.value)


def test_missing_file_is_os_error(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        read_signal_file(tmp_path / "missing.pb")
