"""Traces of evald's own judge calls (``telemetry.traces``; off by default), exported with the OTel SDK.

Config keys::

    telemetry:
      traces:
        endpoint: http://otel-collector:4317   # required; OTLP/HTTP: http://host:4318 (/v1/traces is added)
        protocol: grpc                         # grpc | http/protobuf
        sample_ratio: 1.0                      # share of judged evaluations traced (by trace id)
        timeout: 10s                           # per export request

One span per judged evaluation, ``evald.judge <metric kind>`` (INTERNAL, a new trace), with ``evald.judge.name``,
``evald.metric``, ``gen_ai.request.model``, ``gen_ai.provider.name``, ``evald.judge.cache_hit`` and
``evald.judge.outcome`` (``ok``, or the counted outcome that ended it: ``never_send``, ``budget_exhausted``,
``circuit_open``, ``timeout``, ``malformed``, ...), and a span link to the evaluated span (the case's trace and
span id; ``evald.case.trace_id`` and ``evald.case.scope`` as attributes too). Below it, one CLIENT span per
attempt sent to the provider, ``chat <model>``, with ``gen_ai.operation.name``, ``gen_ai.provider.name``,
``gen_ai.request.model``, ``gen_ai.usage.input_tokens`` / ``output_tokens`` (as the provider reported them),
``evald.judge.cost_usd`` (the price table on those tokens), ``evald.judge.attempt`` (0 for the first) and
``evald.judge.outcome``; a failed attempt has status ERROR. A cache hit has no attempt spans; a batched call's
attempts are children of the evaluation that sent the batch. No prompt or answer text is recorded.

Failure semantics: spans go through the SDK's BatchSpanProcessor (a bounded queue of 2048 spans; when full, new
spans are dropped by the SDK) and its OTLP span exporter (retries, then drops with a logged warning); nothing in
this module raises into the judge path. ``shutdown_tracing`` flushes and stops within its timeout. A missing
exporter package (extra ``otlp``) is a config error at start.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from evald import __version__
from evald.config.base import ComponentConfig, Duration
from evald.outcomes import MetricSkipped

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

    from evald.judges.providers import Completion

logger = logging.getLogger(__name__)
_tracer: Tracer | None = None
#: what a judged evaluation is linked to: the case's trace id, span id and scope
Evaluated = tuple[str, str | None, str]
_provider: Any = None


class TracesConfig(ComponentConfig):
    endpoint: str = Field(
        ..., min_length=1, description="OTLP endpoint of evald's own traces (judge calls), e.g. "
        "`http://otel-collector:4317` (grpc) or `http://otel-collector:4318` (http/protobuf).",
    )
    protocol: Literal["grpc", "http/protobuf"] = Field("grpc", description="OTLP transport.")
    sample_ratio: float = Field(1.0, ge=0.0, le=1.0, description="Share of judged evaluations traced.")
    timeout: Duration = Field(10.0, gt=0, description="Timeout of one export request.")


def install_tracing(config: TracesConfig | None) -> None:
    """Start exporting judge spans (``None``: tracing stays off, every hook below is a no-op)."""
    global _tracer, _provider
    if config is None:
        return
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

    exporter: Any
    if config.protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter

        endpoint = config.endpoint
        exporter = GrpcExporter(endpoint=endpoint, insecure=endpoint.startswith("http://"), timeout=config.timeout)
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter

        endpoint = config.endpoint.rstrip("/")
        endpoint = endpoint if endpoint.endswith("/v1/traces") else f"{endpoint}/v1/traces"
        exporter = HttpExporter(endpoint=endpoint, timeout=config.timeout)
    provider = TracerProvider(resource=Resource.create({"service.name": "evald", "service.version": __version__}),
                              sampler=ParentBased(TraceIdRatioBased(config.sample_ratio)))
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=1000))
    _provider, _tracer = provider, provider.get_tracer("evald.judges", __version__)
    logger.info("judge calls traced to %s (%s, sample ratio %g)", endpoint, config.protocol, config.sample_ratio)


def shutdown_tracing(timeout: float) -> None:
    """Flush what is queued (at most ``timeout`` seconds) and stop; idempotent."""
    global _tracer, _provider
    provider, _provider, _tracer = _provider, None, None
    if provider is not None:
        provider.force_flush(int(timeout * 1000))
        provider.shutdown()


@asynccontextmanager
async def judged_evaluation(judge: str, model: str, provider: str, metric: str,
                            evaluated: Evaluated | None) -> AsyncIterator[Span | None]:
    """The span of one judged evaluation (the current span inside, so attempts become its children);
    ``evaluated``: the case's (trace id, span id, scope), linked."""
    tracer = _tracer
    if tracer is None:
        yield None
        return
    from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

    links = []
    attributes: dict[str, Any] = {"evald.judge.name": judge, "evald.metric": metric, "gen_ai.request.model": model,
                                  "gen_ai.provider.name": provider, "evald.judge.cache_hit": False}
    if evaluated is not None and evaluated[0]:
        trace_id, span_id, scope = evaluated
        attributes.update({"evald.case.trace_id": trace_id, "evald.case.scope": scope})
        try:
            linked = SpanContext(int(trace_id, 16), int(span_id or "0", 16), is_remote=True,
                                 trace_flags=TraceFlags(TraceFlags.SAMPLED))
            if linked.is_valid:
                links.append(Link(linked, {"evald.link": "evaluated"}))
        except ValueError:
            pass
    kind = metric.partition("@")[0]
    with tracer.start_as_current_span(f"evald.judge {kind}", kind=SpanKind.INTERNAL, links=links,
                                      attributes=attributes, record_exception=False,
                                      set_status_on_exception=False) as span:
        try:
            yield span
        except BaseException as err:
            outcome = getattr(err, "outcome", None) or type(err).__name__
            span.set_attribute("evald.judge.outcome", outcome)
            if not isinstance(err, MetricSkipped):  # a deliberate skip (never_send, budget, circuit) is no error
                span.set_status(Status(StatusCode.ERROR, str(outcome)))
            raise
        span.set_attribute("evald.judge.outcome", "ok")


def note_cache_hit(span: Span | None) -> None:
    if span is not None:
        span.set_attribute("evald.judge.cache_hit", True)


def traced_send(send: Callable[[], Awaitable[Completion]], model: str, provider: str,
                cost_usd: Callable[[int, int], float]) -> Callable[[], Awaitable[Completion]]:
    """``send`` with one CLIENT span per attempt (``send`` unchanged when tracing is off)."""
    tracer = _tracer
    if tracer is None:
        return send
    attempts = 0

    async def attempt() -> Completion:
        nonlocal attempts
        from opentelemetry.trace import SpanKind, Status, StatusCode

        number, attempts = attempts, attempts + 1
        with tracer.start_as_current_span(
            f"chat {model}", kind=SpanKind.CLIENT, record_exception=False, set_status_on_exception=False,
            attributes={"gen_ai.operation.name": "chat", "gen_ai.provider.name": provider,
                        "gen_ai.request.model": model, "evald.judge.attempt": number},
        ) as span:
            try:
                completion = await send()
            except BaseException as err:
                outcome = getattr(err, "outcome", None) or ("timeout" if type(err).__name__ in (
                    "CancelledError", "TimeoutError") else type(err).__name__)
                usage = getattr(err, "usage", None)
                if usage is not None:
                    _usage(span, usage[0], usage[1], cost_usd)
                span.set_attribute("evald.judge.outcome", outcome)
                span.set_status(Status(StatusCode.ERROR, str(outcome)))
                raise
            _usage(span, completion.input_tokens, completion.output_tokens, cost_usd)
            span.set_attribute("evald.judge.outcome", "ok")
            return completion

    return attempt


def _usage(span: Span, input_tokens: object, output_tokens: object, cost_usd: Callable[[int, int], float]) -> None:
    ok = [isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in (input_tokens, output_tokens)]
    if ok[0]:
        span.set_attribute("gen_ai.usage.input_tokens", input_tokens)  # type: ignore[arg-type]
    if ok[1]:
        span.set_attribute("gen_ai.usage.output_tokens", output_tokens)  # type: ignore[arg-type]
    if all(ok):
        span.set_attribute("evald.judge.cost_usd", cost_usd(input_tokens, output_tokens))  # type: ignore[arg-type]
