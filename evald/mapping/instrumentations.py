"""Which instrumentation library emitted a span, and the exact switch that makes it record message content.

Read from the instrumentation scope name (and, where one scope name is shared by two projects, the convention the
mapper recognised). Used by the content-capture diagnosis (evald/pipeline/content_diagnosis.py): the
``instrumentation`` label of ``evald_content_capture_cases_total`` and the WARN that names the switch to set.
docs/capturing-content.md has the same table with each library's default and the versions tested.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class Instrumentation:
    """A known instrumentation library: ``id`` is the bounded label value, ``switch`` what turns content on."""

    id: str
    library: str
    switch: str


OTEL_GENAI: Final = Instrumentation(
    "otel-genai", "an OpenTelemetry GenAI instrumentation (opentelemetry-instrumentation-*-v2 / util-genai)",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only (util-genai 1.0b0 and later: `true` is rejected; "
    "with util-genai 0.4b0 also OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental; instrumentations before "
    "util-genai, e.g. openai-v2 2.0b0-2.3b0, take `true` and write the content as log records)")
OPENAI_V2: Final = Instrumentation(
    "openai-v2", "opentelemetry-instrumentation-openai-v2",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true (openai-v2 2.0b0-2.3b0 write the content as log records; "
    "on 2.4b0 with util-genai 1.0b0/1.1b0 use span_only)")
OPENLLMETRY: Final = Instrumentation(
    "openllmetry", "OpenLLMetry (traceloop opentelemetry-instrumentation-*)",
    "TRACELOOP_TRACE_CONTENT=true (the default; it was set to false), or Traceloop.init(trace_content=True)")
OPENINFERENCE: Final = Instrumentation(
    "openinference", "OpenInference (openinference-instrumentation-*)",
    "OPENINFERENCE_HIDE_INPUTS=false and OPENINFERENCE_HIDE_OUTPUTS=false (and the OPENINFERENCE_HIDE_INPUT_*/"
    "OUTPUT_* variables), or TraceConfig(hide_inputs=False, hide_outputs=False)")
PYDANTIC_AI: Final = Instrumentation(
    "pydantic-ai", "pydantic-ai", "InstrumentationSettings(include_content=True) (the default)")
LOGFIRE: Final = Instrumentation(
    "logfire", "Logfire",
    "logfire.configure(scrubbing=logfire.ScrubbingOptions(callback=...)) to keep the content its default "
    "patterns scrub (or scrubbing=False; evald redacts before any judge)")
ANTHROPIC_SDK: Final = Instrumentation(
    "anthropic-sdk", "the Anthropic SDK's own OpenTelemetry tracing",
    "ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE=content")
OPENLIT: Final = Instrumentation(
    "openlit", "OpenLIT", "openlit.init(capture_message_content=True) (the default)")
LANGFUSE: Final = Instrumentation(
    "langfuse", "the Langfuse SDK", "Langfuse(mask=None) (no masking function) and capture_input/output left on")
GOOGLE_ADK: Final = Instrumentation(
    "google-adk", "Google ADK",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY or RunConfig(telemetry=TelemetryConfig("
    "capture_message_content=...)); with the legacy schema (ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1) "
    "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=true")
SEMANTIC_KERNEL: Final = Instrumentation(
    "semantic-kernel", "Semantic Kernel",
    "SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE=true (the content then goes to Python log "
    "records: bridge them to OTLP logs)")
STRANDS: Final = Instrumentation(
    "strands", "Strands Agents",
    "OTEL_SEMCONV_STABILITY_OPT_IN without the gen_ai_unredacted_attributes token (or with the attributes to keep, "
    "e.g. gen_ai_unredacted_attributes=gen_ai.input.messages;gen_ai.output.*)")
LITELLM: Final = Instrumentation(
    "litellm", "LiteLLM's OpenTelemetry callback",
    "litellm.turn_off_message_logging=False (and no per-request mock_response/no-log metadata)")
OPENAI_AGENTS: Final = Instrumentation(
    "openai-agents", "the OpenAI Agents SDK instrumentation (opentelemetry-instrumentation-openai-agents-v2)",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only, and the Agents SDK's own "
    "OPENAI_AGENTS_TRACE_INCLUDE_SENSITIVE_DATA=true (with it false the SDK hands no content to any instrumentation)")
OTHER: Final = Instrumentation("other", "an unrecognised instrumentation", "its content-capture option")

#: scope-name prefixes, most specific first (OpenLLMetry shares ``opentelemetry.instrumentation.`` with the
#: official instrumentations: the official GenAI ones are listed before the generic prefix)
_BY_SCOPE: Final[tuple[tuple[str, Instrumentation], ...]] = (
    ("opentelemetry.instrumentation.openai_v2", OPENAI_V2),
    ("opentelemetry.util.genai", OTEL_GENAI),
    ("opentelemetry.instrumentation.google_genai", OTEL_GENAI),
    ("opentelemetry.instrumentation.openai_agents", OPENAI_AGENTS),
    ("opentelemetry.instrumentation.vertexai", OTEL_GENAI),
    ("openinference.", OPENINFERENCE),
    ("pydantic-ai", PYDANTIC_AI),
    ("pydantic_ai", PYDANTIC_AI),
    ("logfire", LOGFIRE),
    ("com.anthropic", ANTHROPIC_SDK),
    ("anthropic", ANTHROPIC_SDK),
    ("openlit", OPENLIT),
    ("langfuse", LANGFUSE),
    ("litellm", LITELLM),
    ("gcp.vertex.agent", GOOGLE_ADK),
    ("google.adk", GOOGLE_ADK),
    ("semantic_kernel", SEMANTIC_KERNEL),
    ("strands", STRANDS),
    ("opentelemetry.instrumentation.", OPENLLMETRY),
)
_BY_CONVENTION: Final = {"openllmetry": OPENLLMETRY, "openinference": OPENINFERENCE}
KNOWN: Final = (OPENAI_V2, OTEL_GENAI, OPENLLMETRY, OPENINFERENCE, PYDANTIC_AI, LOGFIRE, ANTHROPIC_SDK, OPENLIT,
                LANGFUSE, GOOGLE_ADK, SEMANTIC_KERNEL, STRANDS, LITELLM, OPENAI_AGENTS, OTHER)

_BY_ID: Final = {i.id: i for i in KNOWN}


def by_id(instrumentation_id: str) -> Instrumentation:
    """The instrumentation a case's ``metadata.instrumentation`` names (``OTHER`` for an unknown id)."""
    return _BY_ID.get(instrumentation_id, OTHER)


#: detect's answers by (scope names, convention): a deployment sees a handful of combinations, and detect runs for
#: every case (twice the prefix scan per span otherwise); bounded: cleared when full
_DETECTED: dict[tuple[tuple[str, ...], str | None], Instrumentation] = {}
_DETECTED_MAX: Final = 4096


def detect(scope_names: tuple[str, ...], convention: str | None) -> Instrumentation:
    """The instrumentation of a case from the scope names of its spans (inference spans first) and the mapper's
    convention; ``OTHER`` when nothing is recognised."""
    key = (scope_names, convention)
    found = _DETECTED.get(key)
    if found is None:
        if len(_DETECTED) >= _DETECTED_MAX:
            _DETECTED.clear()
        found = _DETECTED[key] = _detect(scope_names, convention)
    return found


def _detect(scope_names: tuple[str, ...], convention: str | None) -> Instrumentation:
    for scope in scope_names:
        for prefix, found in _BY_SCOPE:
            if scope.startswith(prefix):
                if found is OPENLLMETRY and convention == "genai_semconv":
                    return OTEL_GENAI  # an official contrib instrumentation under opentelemetry.instrumentation.*
                return found
    return _BY_CONVENTION.get(convention or "", OTHER)
