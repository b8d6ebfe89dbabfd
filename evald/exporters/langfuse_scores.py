"""Langfuse score bodies (``POST /api/public/scores``) from evald's scored cases; pure, no I/O.

One body per :class:`~evald.case.Score` (skipped and errored evaluations are not scores and are not sent):

  id             UUIDv5 (namespace :data:`SCORE_NAMESPACE`) of ``trace_id:span_id-or-"trace":metric:version``
                 (conversation cases: ``conversation:conversation_id:metric:version``), so a retry, a redelivery or
                 a late-span re-evaluation (revision n + 1) of the same case upserts instead of adding a score
  traceId        the OTel trace id, 32 lowercase hex (not for conversation cases)
  observationId  the evaluated span id, 16 lowercase hex, only for ``llm_call`` cases (trace-level cases omit it)
  sessionId      ``metadata.conversation_id`` of ``conversation`` cases; Langfuse takes exactly one of traceId and
                 sessionId, so conversation scores are session scores (the last turn's trace id is in metadata)
  name, value    the metric name and its [0, 1] value
  dataType       ``BOOLEAN`` when the metric declares pass/fail-only values (:class:`MetricInfo.boolean`) and the
                 value is exactly 0 or 1; otherwise ``NUMERIC``. evald has no label-valued scores (no CATEGORICAL)
  comment        the score's reason
  metadata       dimension, threshold, passed, evald_metric_version, scope, service_name, model, judge_model,
                 revision and (conversation cases) trace_id, when known
  environment    from config
  timestamp      the evaluated span's end time (``metadata.span_end_unix_nano``, set by the pipeline), so a
                 re-delivered evaluation upserts with the same id and timestamp; else when the exporter received it
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import orjson

from evald.case import SPAN_END_METADATA, EvalCase, Score
from evald.exporters.routing import MetricInfo
from evald.model import ScoredCase

#: Namespace of evald's Langfuse score ids (a fixed random UUID; changing it would change every id).
SCORE_NAMESPACE = uuid.UUID("6f1d6a55-3c2e-4b7e-9a55-2d0f6c1e7a31")


def session_id(case: EvalCase) -> str | None:
    if case.scope != "conversation":
        return None
    value = case.metadata.get("conversation_id")
    return value if isinstance(value, str) and value else None


def score_id(case: EvalCase, metric: str, version: str) -> str:
    """The deterministic Langfuse score id of ``metric`` (at ``version``) on ``case``."""
    session = session_id(case)
    if session is not None:
        key = f"conversation:{session}:{metric}:{version}"
    else:
        anchor = (case.span_id or "llm_call") if case.scope == "llm_call" else "trace"
        key = f"{case.trace_id.lower()}:{anchor.lower()}:{metric}:{version}"
    return str(uuid.uuid5(SCORE_NAMESPACE, key))


def score_body(
    scored: ScoredCase,
    score: Score,
    info: MetricInfo | None,
    *,
    environment: str | None,
    timestamp: str,
) -> dict[str, Any]:
    """The JSON body of one score (field names as the Langfuse API spells them); ``timestamp`` is ISO 8601."""
    case = scored.case
    version = info.version if info is not None else "1"
    boolean = info is not None and info.boolean and score.value in (0.0, 1.0)
    body: dict[str, Any] = {"id": score_id(case, score.name, version)}
    session = session_id(case)
    if session is not None:
        body["sessionId"] = session
    else:
        body["traceId"] = case.trace_id.lower()
        if case.scope == "llm_call" and case.span_id:
            body["observationId"] = case.span_id.lower()
    body["name"] = score.name
    body["value"] = float(score.value)
    body["dataType"] = "BOOLEAN" if boolean else "NUMERIC"
    if score.reason:
        body["comment"] = score.reason
    body["metadata"] = _metadata(case, score, version, with_trace=session is not None)
    if environment:
        body["environment"] = environment
    body["timestamp"] = timestamp
    return body


def _event_time(scored: ScoredCase) -> str | None:
    """The evaluated span's end time (stable across re-deliveries, so Langfuse upserts the same score)."""
    end = scored.case.metadata.get(SPAN_END_METADATA)
    if not isinstance(end, int) or end <= 0:
        return None
    return datetime.fromtimestamp(end / 1e9, UTC).isoformat(timespec="milliseconds")


def encode_scores(
    scored_cases: Sequence[ScoredCase],
    infos: Mapping[str, MetricInfo],
    *,
    environment: str | None,
    timestamp: datetime,
) -> list[bytes]:
    """Serialised bodies of every score of ``scored_cases`` (one JSON object each)."""
    out: list[bytes] = []
    fallback = timestamp.isoformat(timespec="milliseconds")
    for scored in scored_cases:
        stamp = _event_time(scored) or fallback
        for score in scored.scores:
            body = score_body(scored, score, infos.get(score.name), environment=environment, timestamp=stamp)
            out.append(orjson.dumps(body))
    return out


def _metadata(case: EvalCase, score: Score, version: str, *, with_trace: bool) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "dimension": score.dimension.value,
        "threshold": score.threshold,
        "passed": score.passed,
        "evald_metric_version": version,
        "scope": case.scope,
    }
    optional = {
        "service_name": case.service_name,
        "model": case.model,
        "judge_model": _judge_model(score.metadata),
        "revision": case.metadata.get("revision"),
        "trace_id": case.trace_id.lower() if with_trace else None,
    }
    meta.update({k: v for k, v in optional.items() if v is not None})
    return meta


def _judge_model(metadata: Mapping[str, Any]) -> str | None:
    judge = metadata.get("judge")
    if isinstance(judge, Mapping):
        model = judge.get("model")
        return model if isinstance(model, str) else None
    return None
