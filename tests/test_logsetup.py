"""JSON log lines keep the fields a call attaches with ``extra={...}``."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from evald.logsetup import configure_logging


@contextmanager
def configured(fmt: str) -> Iterator[None]:
    """configure_logging binds the handler to the sys.stderr of the moment: call it inside the test (capsys)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    configure_logging("info", fmt)
    try:
        yield
    finally:
        root.handlers[:], root.level = handlers, level


def _lines(capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    return [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.strip()]


def test_extra_fields_are_top_level_keys(capsys: pytest.CaptureFixture[str]) -> None:
    trace_id = "0af7651916cd43dd8448eb211c80319c"
    with configured("json"):
        logging.getLogger("evald.test").warning("metric %s failed", "faithfulness",
                                                extra={"trace_id": trace_id, "metric": "faithfulness", "attempt": 2})
    (line,) = _lines(capsys)
    assert line["message"] == "metric faithfulness failed"
    assert line["level"] == "warning" and line["logger"] == "evald.test"
    assert (line["trace_id"], line["metric"], line["attempt"]) == (trace_id, "faithfulness", 2)
    assert not {"args", "msg", "pathname", "levelno", "exc_info"} & line.keys()


def test_unusual_extras_never_break_a_line(capsys: pytest.CaptureFixture[str]) -> None:
    class Opaque:
        def __str__(self) -> str:
            return "opaque-value"

    with configured("json"):
        logging.getLogger("evald.test").info("hello", extra={"obj": Opaque(), "level_hint": None, "time_ms": 1.5})
        try:
            raise RuntimeError("boom")
        except RuntimeError:
            logging.getLogger("evald.test").exception("failed", extra={"component": "otlp/grpc", "level": "x"})
    first, second = _lines(capsys)
    assert first["obj"] == "opaque-value" and first["level_hint"] is None and first["time_ms"] == 1.5
    assert second["component"] == "otlp/grpc"
    assert (second["level"], second["extra_level"]) == ("error", "x")
    assert "RuntimeError: boom" in str(second["exception"])


def test_text_format_is_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    with configured("text"):
        logging.getLogger("evald.test").info("plain", extra={"trace_id": "abc"})
    err = capsys.readouterr().err
    assert err.rstrip().endswith("INFO evald.test: plain")
