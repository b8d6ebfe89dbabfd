"""K runs of one canary probe as real OpenTelemetry SDK spans: a GenAI agent trace per run, tagged with its run
group, variant and the agent's confidence on the root span (what a probe sender sets)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

QUESTION = "What is the capital of France?"


@dataclass(frozen=True)
class ProbeRun:
    answer: str
    confidence: float
    variant: str = "nominal"


#: 4 runs: 3 right answers (Paris), 1 wrong; two nominal, two rephrased; confidences falling with correctness
RUNS = (ProbeRun("The capital is Paris.", 0.9), ProbeRun("The capital is Paris.", 0.8),
        ProbeRun("The capital is Paris.", 0.7, "rephrased"), ProbeRun("It is Lyon.", 0.2, "rephrased"))
#: hand-computed: outcome_consistency 3/4; prompt_robustness (1/2) / (2/2); calibration 1 - (0.1 + 0.2 + 0.3 + 0.2)/4;
#: discrimination 1 (every pass above the fail); brier 1 - (0.01 + 0.04 + 0.09 + 0.04) / 4
EXPECTED = {"outcome_consistency": 0.75, "prompt_robustness": 0.5, "calibration": 0.8, "discrimination": 1.0,
            "brier_score": 0.955}

CONFIG_METRICS = """
metrics:
  - { kind: contains, options: { values: ["Paris"] } }
  - { kind: outcome_consistency, options: { k: 4 } }
  - { kind: prompt_robustness, options: { k: 4, outcome_metric: contains } }
  - { kind: calibration, options: { outcome_metric: contains, min_cases: 4 } }
  - { kind: discrimination, options: { outcome_metric: contains, min_cases: 4 } }
  - { kind: brier_score, options: { outcome_metric: contains, min_cases: 4 } }
  - { kind: composite, name: canary_quality, options: { weights: { contains: 1 } } }
"""


def send_run(exporter: SpanExporter, run: ProbeRun, group: str = "canary-capital", service: str = "probe") -> str:
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("tests.windowed")
    question = QUESTION if run.variant == "nominal" else "Which city is France's capital?"
    with tracer.start_as_current_span("invoke_agent geo-agent") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("evald.run_group", group)
        root.set_attribute("evald.variant", run.variant)
        root.set_attribute("evald.confidence", run.confidence)
        with tracer.start_as_current_span("chat gpt-4o-mini") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute("gen_ai.provider.name", "openai")
            chat.set_attribute("gen_ai.request.model", "gpt-4o-mini")
            chat.set_attribute("gen_ai.response.model", "gpt-4o-mini")
            chat.set_attribute("gen_ai.input.messages", json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": question}]}]))
            chat.set_attribute("gen_ai.output.messages", json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": run.answer}], "finish_reason": "stop"}]))
        trace_id = f"{root.get_span_context().trace_id:032x}"
    provider.shutdown()
    return trace_id


def write_runs(directory: Path, runs: Sequence[ProbeRun] = RUNS) -> list[Path]:
    """One OTLP protobuf file per run (``run-<i>.pb``), encoded by the SDK's own OTLP encoder."""
    paths = []
    for i, run in enumerate(runs):
        memory = InMemorySpanExporter()
        send_run(memory, run)
        path = directory / f"run-{i}.pb"
        path.write_bytes(encode_spans(memory.get_finished_spans()).SerializeToString())
        paths.append(path)
    return paths
