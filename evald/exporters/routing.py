"""Pipelines: which exporters receive which scores (top-level ``pipelines:``), plus metric facts for exporters.

Config (a list; absent = every exporter receives every score, the default)::

    pipelines:
      - exporters: [langfuse/prod, file]
        filter: { metric: ["faithfulness*", "tool_*"], dimension: [safety], service_name: ["checkout-*"],
                  scope: [trace, llm_call] }
      - exporters: [prometheus]          # no filter: everything

Filter keys (each a list; a missing key matches anything; a score must match every key given):
  metric        shell-style globs on the metric name
  dimension     globs on the metric's dimension (correctness, groundedness, safety, trajectory, performance)
  service_name  globs on the case's ``service.name`` (a case without one matches only ``""`` or ``*``)
  scope         ``trace``, ``llm_call``, ``conversation``

An exporter listed in several pipelines receives the union. An exporter not listed in any pipeline receives
nothing (it is still started, so e.g. the prometheus endpoint keeps serving self-metrics); a warning says so.
A case whose every score, skipped and errored evaluation was filtered out is not handed to the exporter; skipped
and errored evaluations are filtered by their metric's name and dimension like scores. Naming an exporter id in a
pipeline that is not configured under ``exporters`` is a config error at ``pipelines[i].exporters[j]``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, Field

from evald.config.base import ComponentConfig
from evald.interfaces import Exporter
from evald.model import ScoredCase

if TYPE_CHECKING:
    from evald.pipeline.bindings import MetricBinding

logger = logging.getLogger(__name__)

#: Exporter ids configured in the document being validated (set by EvaldConfig's validator; None = unknown).
_CONFIGURED: ContextVar[frozenset[str] | None] = ContextVar("evald_configured_exporters", default=None)


def _known_exporter(component_id: str) -> str:
    configured = _CONFIGURED.get()
    if configured is not None and component_id not in configured:
        known = ", ".join(sorted(configured)) or "none"
        raise ValueError(f"exporter {component_id!r} is not configured under `exporters` (configured: {known})")
    return component_id


@contextlib.contextmanager
def checking_exporter_ids(data: Any, default: Mapping[str, Any]) -> Iterator[None]:
    """While validating the root config ``data``, check pipeline exporter ids against its ``exporters``."""
    section = data.get("exporters", default) if isinstance(data, Mapping) else None
    ids = frozenset(str(k) for k in section) if isinstance(section, Mapping) else None
    token = _CONFIGURED.set(ids)
    try:
        yield
    finally:
        _CONFIGURED.reset(token)


class ScoreFilter(ComponentConfig):
    metric: list[str] | None = Field(None, description="Globs on the metric name; None = any.")
    dimension: list[str] | None = Field(None, description="Globs on the metric's dimension; None = any.")
    service_name: list[str] | None = Field(None, description="Globs on the case's `service.name`; None = any.")
    scope: list[Literal["trace", "llm_call", "conversation"]] | None = Field(
        None, description="Case scopes; None = any."
    )

    def case_matches(self, scored: ScoredCase) -> bool:
        case = scored.case
        if self.scope is not None and case.scope not in self.scope:
            return False
        return self.service_name is None or any(fnmatchcase(case.service_name or "", p) for p in self.service_name)

    @property
    def per_metric(self) -> bool:
        return self.metric is not None or self.dimension is not None

    def metric_matches(self, name: str, dimension: str) -> bool:
        if self.metric is not None and not any(fnmatchcase(name, p) for p in self.metric):
            return False
        return self.dimension is None or any(fnmatchcase(dimension, p) for p in self.dimension)


class ExportPipelineConfig(ComponentConfig):
    exporters: list[Annotated[str, AfterValidator(_known_exporter)]] = Field(
        min_length=1, description="Exporter ids (`type[/name]`) that receive the scores this pipeline selects."
    )
    filter: ScoreFilter = Field(ScoreFilter(), description="Which scores; every key given must match.")


@dataclass(frozen=True, slots=True)
class MetricInfo:
    """What an exporter may know about a configured metric (built by the service from the metric bindings)."""

    name: str
    kind: str
    version: str = "1"
    dimension: str = ""
    boolean: bool = False  # the metric declares that it returns only 0 or 1


def metric_infos(bindings: Sequence[MetricBinding]) -> dict[str, MetricInfo]:
    """Facts about each configured metric, by metric name.

    ``boolean`` is the metric's declaration (``BaseMetric.boolean``: it only ever returns 0 or 1).
    """
    out: dict[str, MetricInfo] = {}
    for binding in bindings:
        metric = binding.metric
        out[metric.name] = MetricInfo(
            name=metric.name, kind=metric.kind, version=str(metric.version), dimension=metric.dimension.value,
            boolean=metric.boolean,
        )
    return out


def bind_metric_info(exporters: Sequence[Exporter], infos: Mapping[str, MetricInfo]) -> None:
    """Give metric facts to every exporter that takes them (``set_metric_info``)."""
    for exporter in exporters:
        setter = getattr(exporter, "set_metric_info", None)
        if callable(setter):
            setter(infos)


class FilteredExporter:
    """Hands the wrapped exporter only what one of its pipelines selects (module docstring)."""

    def __init__(self, inner: Exporter, filters: Sequence[ScoreFilter]) -> None:
        self.inner = inner
        self.id = inner.id
        self._filters = tuple(filters)

    def set_metric_info(self, infos: Mapping[str, MetricInfo]) -> None:
        bind_metric_info([self.inner], infos)

    @property
    def in_memory(self) -> bool:
        """Whether the wrapped exporter's ``export`` only records in memory (the pipeline then sets no deadline)."""
        return bool(getattr(self.inner, "in_memory", False))

    @property
    def waits_for_room(self) -> bool:
        """Whether the wrapped exporter's ``export`` waits for queue room (the pipeline then sets no deadline)."""
        return bool(getattr(self.inner, "waits_for_room", False))

    async def start(self) -> None:
        await self.inner.start()

    async def shutdown(self, timeout: float) -> None:
        await self.inner.shutdown(timeout)

    async def export(self, batch: Sequence[ScoredCase]) -> None:
        selected = [kept for scored in batch if (kept := self.select(scored)) is not None]
        if selected:
            await self.inner.export(selected)

    def select(self, scored: ScoredCase) -> ScoredCase | None:
        filters = [f for f in self._filters if f.case_matches(scored)]
        if not filters:
            return None
        if not all(f.per_metric for f in filters):
            return scored

        def keep(name: str, dimension: str) -> bool:
            return any(f.metric_matches(name, dimension) for f in filters)

        dims = scored.metric_dimensions
        scores = tuple(s for s in scored.scores if keep(s.name, s.dimension.value))
        skipped = tuple(e for e in scored.skipped if keep(e[0], dims.get(e[0], "")))
        errors = tuple(e for e in scored.errors if keep(e[0], dims.get(e[0], "")))
        if not (scores or skipped or errors):
            return None
        if len(scores) == len(scored.scores) and len(skipped) == len(scored.skipped) and (
                len(errors) == len(scored.errors)):
            return scored
        return replace(scored, scores=scores, skipped=skipped, errors=errors)


def route_exporters(exporters: Sequence[Exporter], pipelines: Sequence[ExportPipelineConfig] | None) -> list[Exporter]:
    """Wrap each exporter in the filters of the pipelines that name it; without ``pipelines``, change nothing."""
    if pipelines is None:
        return list(exporters)
    routed: list[Exporter] = []
    for exporter in exporters:
        filters = [p.filter for p in pipelines if exporter.id in p.exporters]
        if not filters:
            logger.warning("exporter %s is in no pipeline: it receives no scores", exporter.id)
        routed.append(FilteredExporter(exporter, filters))
    return routed
