"""The seam between the ``judges:`` config and judged metrics.

The service builds every configured judge once at startup with ``install_judges(config.judges, registry)`` and
closes them on shutdown with ``await close_judges()``; a metric asks ``get_judge(name)`` when it runs, so metrics
stay cheap to build and judge clients live exactly as long as the service. ``check_judge_references`` runs when
the root config is validated: a metric whose options name a judge (option ``judge``, or its default) must name
one configured under ``judges:``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry

from evald.judges.config import JudgeConfig
from evald.judges.judge import Judge
from evald.judges.limiter import JudgeError
from evald.judges.telemetry import judge_telemetry

if TYPE_CHECKING:
    from evald.pipeline.bindings import MetricSpec

_INSTALLED: dict[str, Judge] = {}


def install_judges(configs: Mapping[str, JudgeConfig], registry: CollectorRegistry) -> dict[str, Judge]:
    """Build the judges (one limiter each) and make them what ``get_judge`` returns; replaces earlier ones."""
    telemetry = judge_telemetry(registry)
    judges = {name: Judge(name, config, telemetry) for name, config in configs.items()}
    _INSTALLED.clear()
    _INSTALLED.update(judges)
    return judges


def register_judge(judge: Judge) -> None:
    """Install one already-built judge (tests, embedding evald as a library)."""
    _INSTALLED[judge.name] = judge


def get_judge(name: str) -> Judge:
    found = _INSTALLED.get(name)
    if found is None:
        raise JudgeError(name, "not_configured", "no such judge is running (configure it under `judges:`)")
    return found


async def close_judges() -> None:
    judges = list(_INSTALLED.values())
    _INSTALLED.clear()
    for judge in judges:
        await judge.aclose()


def check_judge_references(judges: Mapping[str, Any], metrics: Sequence[MetricSpec]) -> None:
    """Raise ``ValueError`` when a metric refers to a judge that ``judges:`` does not define."""
    from evald.metrics.registry import get_metric_class

    for spec in metrics:
        try:
            options_model = get_metric_class(spec.kind).Options
        except (LookupError, ImportError, TypeError):
            continue  # the metric kind itself is reported by the metrics check
        field = options_model.model_fields.get("judge")
        if field is None:
            continue
        name = spec.options.get("judge", field.default)
        if name not in judges:
            known = ", ".join(sorted(judges)) or "none"
            raise ValueError(
                f"metric {spec.name or spec.kind!r} uses judge {name!r}, which is not defined under `judges:` "
                f"(defined: {known})"
            )
