"""The root configuration model (first validation pass). Component blocks are checked by their factories.

Top-level keys read like an OpenTelemetry Collector config: ``receivers``, ``assembly``, ``sampling``,
``metrics``, ``goldens``, ``conversations``, ``pipeline``, ``exporters``, ``pipelines`` (which exporters receive
which scores; evald/exporters/routing.py), ``telemetry``, ``judges`` (evald/judges/), ``role`` and ``ingest``
(evald/ingest/), ``explorer`` (evald/explorer/).
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import Field, ModelWrapValidatorHandler, model_validator

from evald.assembly.window import AssemblyConfig
from evald.config.base import ComponentConfig, Endpoint
from evald.explorer.config import ExplorerConfig
from evald.exporters.routing import ExportPipelineConfig, checking_exporter_ids
from evald.ingest.forwarder import IngestConfig
from evald.judges.config import JudgeConfig, check_judge_deadlines
from evald.judges.tracing import TracesConfig
from evald.metrics.judged.references import check_judge_references
from evald.pipeline.bindings import MetricSpec
from evald.pipeline.conversations import ConversationsConfig
from evald.pipeline.engine import PipelineConfig
from evald.pipeline.goldens import GoldensConfig
from evald.pipeline.sampling import SamplingConfig
from evald.receivers.connection_limits import ListenerLimitsConfig


class LogsConfig(ComponentConfig):
    level: Literal["debug", "info", "warning", "error"] = Field("info", description="Log level of evald's own logs.")
    format: Literal["text", "json"] = Field("text", description="`json`: one JSON object per line, for log shippers.")


class TelemetryConfig(ComponentConfig):
    logs: LogsConfig = Field(LogsConfig(), description="evald's own logs (stderr).")
    endpoint: Endpoint | None = Field(
        None,
        description="Where /healthz, /readyz and /metrics are served; default: the prometheus exporter's endpoint "
        "(one port for everything), else 0.0.0.0:9464.",
    )
    listener: ListenerLimitsConfig = Field(
        ListenerLimitsConfig(), description="Connection limits of that listener (evald/receivers/connection_limits.py"
        "); `max_connections: 0` means 64 here.",
    )
    traces: TracesConfig | None = Field(
        None, description="Trace evald's own judge calls to this OTLP endpoint (evald/judges/tracing.py); "
        "`null`: off.",
    )


ComponentBlocks = dict[str, dict[str, Any] | None]
#: What ``evald run`` does (evald/ingest/roles.py); ``--role`` and ``role:`` take one of these.
Role = Literal["all", "ingest", "score"]
ROLES: tuple[Role, ...] = get_args(Role)


def _default_receivers() -> ComponentBlocks:
    return {"otlp": None}


def _default_exporters() -> ComponentBlocks:
    return {"prometheus": None}


class EvaldConfig(ComponentConfig):
    receivers: ComponentBlocks = Field(default_factory=_default_receivers)
    assembly: AssemblyConfig = AssemblyConfig()
    sampling: SamplingConfig = SamplingConfig()
    metrics: list[MetricSpec] = Field(default_factory=list)
    goldens: GoldensConfig = GoldensConfig()
    conversations: ConversationsConfig = ConversationsConfig()
    pipeline: PipelineConfig = PipelineConfig()
    exporters: ComponentBlocks = Field(default_factory=_default_exporters)
    pipelines: list[ExportPipelineConfig] | None = Field(
        None, min_length=1, description="Which exporters receive which scores; absent = every exporter gets all."
    )
    telemetry: TelemetryConfig = TelemetryConfig()
    judges: dict[str, JudgeConfig] = Field(
        default_factory=dict, description="Named LLM judges that judged metrics refer to (docs/judges.md)."
    )
    role: Role = Field(
        "all", description="What `evald run` does (`--role` wins): all, ingest (OTLP -> Kafka) or score (Kafka -> "
        "scores); docs/kafka.md, Ingest role.",
    )
    ingest: IngestConfig | None = Field(
        None, description="Kafka producer of the ingest role (evald/ingest/forwarder.py); unused by other roles."
    )
    explorer: ExplorerConfig = Field(
        ExplorerConfig(), description="Recent evaluations at /debug/evaluations on the admin port (docs/explorer.md)."
    )

    @model_validator(mode="after")
    def _check_judge_references(self) -> EvaldConfig:
        check_judge_references(self.judges, self.metrics)
        check_judge_deadlines(self.judges, self.pipeline.metric_timeout)
        return self

    @model_validator(mode="wrap")
    @classmethod
    def _check_pipeline_exporters(cls, data: Any, handler: ModelWrapValidatorHandler[EvaldConfig]) -> EvaldConfig:
        with checking_exporter_ids(data, default=_default_exporters()):
            return handler(data)
