"""What the OTLP receivers answer: RetryInfo for backpressure, Export*ServiceResponse with partial success, and
error messages trimmed and made UTF-8 encodable (a JSON ``"\\ud800"`` must not turn a 400 into a 500). Both transports
and the Kafka receiver use them (through evald/receivers/ingest.py, which re-exports them)."""

from __future__ import annotations

from typing import Literal

from google.protobuf import duration_pb2
from google.protobuf.message import Message
from google.rpc import error_details_pb2
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

Signal = Literal["traces", "logs"]
#: Longest partial-success / error message sent back (responses must stay well under 4 MiB).
MAX_MESSAGE_CHARS = 2048


def retry_info(seconds: float) -> error_details_pb2.RetryInfo:
    """``google.rpc.RetryInfo`` asking the sender to wait ``seconds`` (the backpressure hint of both transports)."""
    delay = duration_pb2.Duration()
    delay.FromNanoseconds(int(max(0.0, seconds) * 1e9))
    return error_details_pb2.RetryInfo(retry_delay=delay)


def export_response(signal: Signal, rejected: int, message: str) -> Message:
    """``Export*ServiceResponse``; ``partial_success`` only when something was rejected or there is a message."""
    if signal == "traces":
        traces = ExportTraceServiceResponse()
        if rejected or message:
            traces.partial_success.rejected_spans = rejected
            traces.partial_success.error_message = message
        return traces
    logs = ExportLogsServiceResponse()
    if rejected or message:
        logs.partial_success.rejected_log_records = rejected
        logs.partial_success.error_message = message
    return logs


def trim(message: str) -> str:
    """At most ``MAX_MESSAGE_CHARS``, and encodable (``encodable``)."""
    return encodable(message if len(message) <= MAX_MESSAGE_CHARS else message[: MAX_MESSAGE_CHARS - 3] + "...")


def encodable(message: str) -> str:
    """``message`` with what UTF-8 cannot encode (lone surrogates, e.g. from a JSON ``"\\ud800"``) backslash-escaped."""
    try:
        message.encode("utf-8")
    except UnicodeEncodeError:
        return message.encode("utf-8", "backslashreplace").decode("utf-8")
    return message
