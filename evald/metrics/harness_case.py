"""evald case -> harness-evals ``EvalCase``, for the harness-evals adapter (``evald.metrics.harness_adapter``).

Imports harness-evals lazily: importing this module works without the package.
"""

from __future__ import annotations

import json
from typing import Any

from evald.case import EvalCase, ToolCall

#: evald-only case fields handed to harness metrics in ``metadata`` (never overriding the case's own keys)
_EXTRA_METADATA = ("trace_id", "span_id", "scope", "model", "request_model", "provider", "service_name",
                   "system_prompt", "error")


def to_harness_case(case: EvalCase) -> Any:
    """An evald case as a harness-evals ``EvalCase``.

    ``input`` (``""`` when missing, as harness-evals' own OTel importer does), ``output`` and ``expected`` as
    they are (``None`` stays ``None``: each harness metric decides, most score it 0 with a reason);
    ``context`` = the documents' contents (documents without content are left out; ``None`` when none has
    any); ``messages`` with their tool calls; ``tool_calls`` as ``ToolCall(name, input=arguments,
    output=result)`` (JSON-object strings are parsed); ``expected_tools``; latency, tokens, cost, retries,
    confidence; ``tags`` as a dict (``"k:v"`` -> ``{k: v}``, a bare tag -> ``{tag: "true"}``, like
    harness-evals' importer); ``metadata`` = the case's metadata plus ``trace_id``, ``span_id``, ``scope``,
    ``model``, ``request_model``, ``provider``, ``service_name``, ``system_prompt`` and ``error`` when set and
    not already present. ``expected_tool_calls`` and ``runs`` have no evald counterpart and stay ``None``.
    """
    from harness_evals.core.eval_case import EvalCase as HarnessCase
    from harness_evals.core.types import Message as HarnessMessage

    contents = [d.content for d in case.context if d.content is not None]
    metadata = dict(case.metadata)
    for key in _EXTRA_METADATA:
        value = getattr(case, key)
        if value not in (None, "", False):
            metadata.setdefault(key, value)
    messages = [
        HarnessMessage(role=m.role, content=m.content, tool_calls=_tool_calls(m.tool_calls),
                       metadata={k: v for k, v in (("tool_call_id", m.tool_call_id), ("name", m.name)) if v} or None)
        for m in case.messages
    ]
    return HarnessCase(
        input="" if case.input is None else case.input, output=case.output, expected=case.expected,
        context=contents or None, latency_ms=case.latency_ms, token_count=case.token_count,
        input_tokens=case.input_tokens, output_tokens=case.output_tokens, cost_usd=case.cost_usd,
        retry_count=case.retry_count, confidence=case.confidence, messages=messages or None,
        tool_calls=_tool_calls(case.tool_calls), expected_tools=list(case.expected_tools)
        if case.expected_tools is not None else None, tags=_tags(case.tags), metadata=metadata or None,
    )


def _tool_calls(calls: tuple[ToolCall, ...]) -> list[Any] | None:
    from harness_evals.core.types import ToolCall as HarnessToolCall

    return [HarnessToolCall(name=c.name, input=_json_object(c.arguments), output=c.result) for c in calls] or None


def _json_object(value: Any) -> Any:
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        return parsed if isinstance(parsed, dict) else value
    return value


def _tags(tags: tuple[str, ...]) -> dict[str, str] | None:
    out = {}
    for tag in tags:
        key, sep, value = tag.partition(":")
        out[key if sep else tag] = value if sep else "true"
    return out or None
