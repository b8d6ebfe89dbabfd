"""Masking markers: the texts emitters write in place of content they hide. A field holding one is not recorded.

Privacy modes keep the attribute and replace its value: OpenInference's ``TraceConfig`` (``OPENINFERENCE_HIDE_*``)
writes ``__REDACTED__``; Logfire's scrubbing replaces a whole value with ``[Scrubbed due to '<pattern>']``;
Strands' redaction (``gen_ai_unredacted_attributes``) writes ``[REDACTED]``, Google ADK's legacy schema
``<elided>``; other
emitters and user-written span processors use ``[REDACTED]``, ``<redacted>`` and the like. Such a value is no text:
:func:`evald.mapping.values.as_text` returns ``None`` for it, so no case field, message or tool result ever carries a
marker and no metric can score one (the metric skips with ``missing_<field>`` instead). Only a value that IS the
marker counts; a text with a redacted part inside (``"my name is [REDACTED]"``) is still text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

#: whole-value markers, compared after stripping surrounding whitespace and quotes, case-sensitively
MARKERS: Final[frozenset[str]] = frozenset({
    "__REDACTED__",  # OpenInference TraceConfig (openinference-instrumentation REDACTED_VALUE)
    "[REDACTED]", "<REDACTED>", "REDACTED", "[redacted]", "<redacted>", "redacted", "***REDACTED***",
    "[MASKED]", "<masked>", "[HIDDEN]", "<hidden>", "[FILTERED]", "[content hidden]",
    "<elided>",  # Google ADK's legacy telemetry schema with ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=false
    "redacted-by-litellm",  # LiteLLM's turn_off_message_logging / mask_input / mask_output
})
#: whole-value prefixes of parametrised markers
PREFIXES: Final[tuple[str, ...]] = (
    "[Scrubbed due to ",  # Logfire scrubbing: "[Scrubbed due to 'password']"
)
_QUOTES: Final = "\"' \t\r\n"
_SCAN_DEPTH: Final = 6
_SCAN_ITEMS: Final = 2000


def is_masked(text: str) -> bool:
    """True when ``text`` is, as a whole, a masking marker (see the module docstring)."""
    if text in MARKERS:
        return True
    if not text or len(text) > 200:  # markers are short; a long text is content
        return False
    if text[0] in _QUOTES or text[-1] in _QUOTES:  # only then is a copy worth making (this runs per message text)
        text = text.strip(_QUOTES)
        return text in MARKERS or text.startswith(PREFIXES)
    return text.startswith(PREFIXES)


def marker_in(values: Iterable[Any]) -> str | None:
    """The first masking marker found in ``values`` (attribute values: strings, lists, dicts, nested or as JSON
    text), else ``None``. Bounded in depth and items; used to tell masked content from content never recorded."""
    budget = [_SCAN_ITEMS]
    for value in values:
        found = _scan(value, 0, budget)
        if found is not None:
            return found
    return None


def _scan(value: Any, depth: int, budget: list[int]) -> str | None:
    budget[0] -= 1
    if budget[0] < 0 or depth > _SCAN_DEPTH:
        return None
    if isinstance(value, str):
        if is_masked(value):
            return value.strip(_QUOTES)
        if ("REDACTED" in value or "Scrubbed due to" in value or "<elided>" in value) and value[:1] in "[{":
            return _scan_json(value, depth, budget)
        return None
    if isinstance(value, (dict, Mapping)):  # compiled: a dict is one C check, without the ABC one
        return next((f for v in value.values() if (f := _scan(v, depth + 1, budget)) is not None), None)
    if isinstance(value, (list, tuple)):
        return next((f for v in value if (f := _scan(v, depth + 1, budget)) is not None), None)
    return None


def _scan_json(text: str, depth: int, budget: list[int]) -> str | None:
    import json

    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    return _scan(parsed, depth + 1, budget) if not isinstance(parsed, str) else None
