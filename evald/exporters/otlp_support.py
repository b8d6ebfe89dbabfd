"""Small helpers of the OTLP exporter: its overflow counter, the evaluated span's context, daemon-thread calls,
the deprecated queue keys and the SDK exporter's shutdown.

Kept apart from ``otlp.py`` so they import nothing from the optional ``otlp`` extra (only the OTel API and SDK,
which are core dependencies).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from opentelemetry.context import Context
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, set_span_in_context
from prometheus_client import CollectorRegistry, Counter

from evald.case import EvalCase
from evald.telemetry import Telemetry, shared_instruments

logger = logging.getLogger(__name__)

T = TypeVar("T")

ATTRIBUTE_OVERFLOW = "evald_exporter_attribute_overflow"


def overflow_counter(telemetry: Telemetry) -> Counter:
    """``evald_exporter_attribute_overflow_total{exporter}``: evaluations folded into ``__overflow__``."""
    return shared_instruments(telemetry.registry, _build_overflow_counter)


def _build_overflow_counter(registry: CollectorRegistry) -> Counter:
    return Counter(
        ATTRIBUTE_OVERFLOW,
        "Evaluations whose metric attribute set exceeded max_attribute_sets and was folded into __overflow__.",
        ["exporter"], registry=registry,
    )


def case_context(case: EvalCase) -> Context | None:
    """A context whose current span is the evaluated span (non-recording, sampled), or None without a trace id.

    Metrics recorded in it get exemplars with its ids; log records emitted in it carry its trace/span id. The
    span was exported to evald, so it was sampled: the flags say so (evald does not receive the original flags).
    """
    return ids_context(case.trace_id, case.span_id)


def ids_context(trace_hex: str | None, span_hex: str | None) -> Context | None:
    """:func:`case_context` from hex ids (None without a valid trace id)."""
    try:
        trace_id = int(trace_hex, 16) if trace_hex else 0
        span_id = int(span_hex, 16) if span_hex else 0
    except ValueError:
        return None
    if trace_id == 0 or trace_id >= 1 << 128 or span_id >= 1 << 64:
        return None
    span = NonRecordingSpan(SpanContext(trace_id, span_id, is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED)))
    return set_span_in_context(span, Context())


def error_type(reason: str) -> str:
    """A low-cardinality ``error.type`` from the scorer's error text ("timed out after 60s", "KeyError: 'x'")."""
    if reason.startswith("timed out"):
        return "timeout"
    if reason.startswith("returned "):
        return "invalid_result"
    head, sep, _ = reason.partition(":")
    if sep and head.isidentifier():
        return head
    return "_OTHER"


@functools.lru_cache(maxsize=512)
def metric_version(name: str) -> str | None:
    """The evaluator version of the metric whose kind is ``name`` (None when the name is not a known kind)."""
    try:
        from evald.metrics.registry import get_metric_class

        return str(get_metric_class(name).version)
    except Exception:
        return None


async def run_in_daemon_thread(fn: Callable[[], T], timeout: float, name: str) -> T | None:
    """Run a blocking SDK call on a daemon thread; return its result, or None if it raised or ``timeout`` passed.

    A daemon thread (not the loop's default executor) so that a call stuck on an unreachable collector can never
    hold up the process exit; it is abandoned at the deadline.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(setter: Callable[[Any], None], value: Any) -> None:
        if not future.done():
            setter(value)

    def target() -> None:
        try:
            outcome: tuple[Callable[[Any], None], Any] = (future.set_result, fn())
        except BaseException as err:  # reported to the awaiting side
            outcome = (future.set_exception, err)
        with contextlib.suppress(RuntimeError):  # the loop closed while the call ran past its deadline
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=target, name=f"evald-{name}", daemon=True).start()
    try:
        async with asyncio.timeout(max(0.0, timeout)):
            return await asyncio.shield(future)
    except TimeoutError:
        logger.warning("%s did not finish within %.2fs", name, timeout)
    except Exception:
        logger.warning("%s failed", name, exc_info=True)
    return None


def deprecated_queue_keys(data: Any) -> Any:
    """The otlp exporter's keys from before its sending queue (2026-11-26): ``max_queue_size`` becomes
    ``sending_queue.queue_size`` and ``schedule_delay`` is dropped (events are sent as they wait); both warn.
    Accepted for one release."""
    if not isinstance(data, dict) or not ({"max_queue_size", "schedule_delay"} & data.keys()):
        return data
    data = dict(data)
    if "schedule_delay" in data:
        data.pop("schedule_delay")
        logger.warning("exporters.otlp.schedule_delay is deprecated and ignored (events are sent as they wait)")
    if "max_queue_size" in data:
        size = data.pop("max_queue_size")
        queue = data.get("sending_queue")
        if isinstance(queue, dict) and "queue_size" in queue:
            raise ValueError("set sending_queue.queue_size or its deprecated alias max_queue_size, not both")
        data["sending_queue"] = {**(queue if isinstance(queue, dict) else {}), "queue_size": size}
        logger.warning("exporters.otlp.max_queue_size is deprecated: use sending_queue.queue_size")
    return data


def shutdown_exporter(exporter: Any, budget: float) -> None:
    """Shut an SDK exporter down within ``budget`` seconds (the HTTP exporter's shutdown takes no timeout)."""
    shutdown: Callable[..., None] = exporter.shutdown
    try:
        shutdown(timeout_millis=budget * 1000)
    except TypeError:
        shutdown()
