"""What the explorer's pages and JSON API show: filters, list rows and case records (redacted unless configured).

``Filters.parse(query)`` reads ``metric``, ``outcome`` (pass, fail, skipped, error, not_evaluable), ``service``,
``model``, ``scope``, ``since``/``until`` (unix seconds or ISO 8601), ``last`` (a duration such as ``15m``) and
``limit`` (1..1000, default 100); an unusable value is a ``ValueError`` naming the parameter (a 400).

Content (the case's input, output, expected, context, messages, tool calls, system prompt and metadata, score
reasons and metadata, a not-evaluable detail) goes through the judges' redaction (evald/judges/redaction.py)
with one session per case, so a value keeps one placeholder across the record, unless ``show_content`` is set.
Identifiers (trace and span ids, scope, service, model, provider) and numbers are shown as they are.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from evald.config.base import parse_duration
from evald.explorer.store import OUTCOMES, Entry, Outcome
from evald.judges.redaction import RedactionSession, Redactor

BASE = "/debug/evaluations"
API = f"{BASE}/api"
CONTENT_FIELDS = ("input", "output", "expected", "context", "messages", "tool_calls", "system_prompt", "metadata")
#: Score metadata keys that hold a judge's explanation (besides ``Score.reason``, the judge's reasoning)
EXPLANATION_KEYS = ("explanation", "reasoning", "verdicts", "rationale")
MAX_LIMIT = 1000


def parse_time(value: str, name: str) -> float:
    try:
        return float(value)
    except ValueError:
        pass
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"`{name}` must be unix seconds or an ISO 8601 time, not {value!r}") from None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()


@dataclass(frozen=True, slots=True)
class Filters:
    metric: str | None = None
    outcome: Outcome | None = None
    service: str | None = None
    model: str | None = None
    scope: str | None = None
    since: float | None = None
    until: float | None = None
    limit: int = 100

    @classmethod
    def parse(cls, query: Mapping[str, str], now: float | None = None) -> Filters:
        def text(name: str) -> str | None:
            value = query.get(name, "").strip()
            return value or None

        outcome: Outcome | None = None
        if (raw := text("outcome")) is not None:
            outcome = next((o for o in OUTCOMES if o == raw), None)
        if raw is not None and outcome is None:
            raise ValueError(f"`outcome` must be one of {', '.join(OUTCOMES)}, not {raw!r}")
        since = parse_time(v, "since") if (v := text("since")) else None
        if (last := text("last")) is not None:
            try:
                since = (time.time() if now is None else now) - parse_duration(last)
            except ValueError:
                raise ValueError(f"`last` must be a duration such as 15m or 1h, not {last!r}") from None
        until = parse_time(v, "until") if (v := text("until")) else None
        limit = text("limit") or "100"
        if not limit.isdigit() or not 1 <= int(limit) <= MAX_LIMIT:
            raise ValueError(f"`limit` must be a number from 1 to {MAX_LIMIT}")
        return cls(text("metric"), outcome, text("service"), text("model"), text("scope"),
                   since, until, int(limit))

    def matches(self, entry: Entry) -> bool:
        if self.service is not None and entry.service != self.service:
            return False
        if self.model is not None and entry.model != self.model:
            return False
        if self.scope is not None and entry.scope != self.scope:
            return False
        if self.since is not None and entry.received < self.since:
            return False
        if self.until is not None and entry.received > self.until:
            return False
        if self.metric is not None and self.metric not in entry.outcomes:
            return False
        if self.outcome == "not_evaluable":
            return entry.not_evaluable is not None
        if self.outcome is not None:
            if self.metric is not None:
                return entry.outcomes.get(self.metric) == self.outcome
            return self.outcome in entry.outcomes.values()
        return True

    def query(self) -> dict[str, str]:
        """The filters as query parameters (for links that keep them)."""
        out = {k: str(v) for k in ("metric", "outcome", "service", "model", "scope")
               if (v := getattr(self, k)) is not None}
        for name in ("since", "until"):
            if (t := getattr(self, name)) is not None:
                out[name] = iso(t)
        if self.limit != 100:
            out["limit"] = str(self.limit)
        return out


def select(entries: Iterable[Entry], filters: Filters) -> tuple[list[Entry], int]:
    """The first ``filters.limit`` matching entries (newest first) and how many matched in all."""
    shown: list[Entry] = []
    matched = 0
    for entry in entries:
        if filters.matches(entry):
            matched += 1
            if len(shown) < filters.limit:
                shown.append(entry)
    return shown, matched


def iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def trace_url(template: str | None, entry: Entry) -> str | None:
    if template is None or not entry.trace_id:
        return None
    return template.replace("{trace_id}", entry.trace_id).replace("{span_id}", entry.span_id or "")


def summary(entry: Entry, template: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": entry.id, "received": iso(entry.received), "kind": "evaluation" if entry.scored else "not_evaluable",
        "trace_id": entry.trace_id, "span_id": entry.span_id, "scope": entry.scope, "service": entry.service,
        "model": entry.model, "failing": entry.failing, "outcomes": dict(entry.outcomes),
        "url": f"{BASE}/case/{entry.id}", "api_url": f"{API}/evaluations/{entry.id}",
        "trace_url": trace_url(template, entry),
    }
    if entry.not_evaluable is not None:
        out["not_evaluable"] = {"reason": entry.not_evaluable.reason, "convention": entry.not_evaluable.convention}
    return out


class Redaction:
    """Redacts a record's content (``None`` redactor: raw content, ``show_content: true``)."""

    def __init__(self, redactor: Redactor | None) -> None:
        self._redactor = redactor

    @property
    def enabled(self) -> bool:
        return self._redactor is not None

    def session(self) -> RedactionSession | None:
        return self._redactor.session() if self._redactor is not None else None


def _redact(value: Any, session: RedactionSession | None) -> Any:
    if session is None:
        return value
    if isinstance(value, str):
        return session.redact(value)
    if isinstance(value, Mapping):
        return {k: _redact(v, session) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redact(v, session) for v in value]
    return value


def record(entry: Entry, template: str | None, redaction: Redaction) -> dict[str, Any]:
    """Everything about one entry: the case fields, every score, skipped metrics, errors, links."""
    session = redaction.session()
    out = summary(entry, template)
    out["redacted"] = redaction.enabled
    if entry.scored is not None:
        scored = entry.scored
        case = scored.case.to_dict()
        for name in CONTENT_FIELDS:
            if name in case:
                case[name] = _redact(case[name], session)
        out["case"] = case
        scores = []
        for score in scored.scores:
            item = score.to_dict()
            item["reason"] = _redact(item["reason"], session)
            item["metadata"] = _redact(item["metadata"], session)
            explanation = next((item["metadata"][k] for k in EXPLANATION_KEYS if k in item["metadata"]), None)
            item["explanation"] = explanation
            item["judge"] = item["metadata"].get("judge")
            scores.append(item)
        out["scores"] = scores
        out["skipped"] = [{"metric": n, "reason": r} for n, r in scored.skipped]
        out["errors"] = [{"metric": n, "reason": _redact(r, session)} for n, r in scored.errors]
    if entry.not_evaluable is not None:
        ne = entry.not_evaluable
        out["not_evaluable"] = {"reason": ne.reason, "convention": ne.convention,
                                "detail": _redact(ne.detail, session), "scope": ne.scope, "span_id": ne.span_id}
    if session is not None:
        out["redactions"] = dict(session.counts)
    return out
