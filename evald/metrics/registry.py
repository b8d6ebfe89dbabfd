"""Metric registry: built-ins by module path (imported lazily), plugins by the ``evald.metrics`` entry point
group or ``kind: "package.module:Class"`` in config. An unknown kind fails with the closest known kinds.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

from evald.metrics.base import BaseMetric

#: The families of built-in metrics. Each family package lists its metrics in ``METRICS`` (kind ->
#: "module:Class") in its ``__init__.py``; adding a built-in metric is one line there plus its own file.
BUILTIN_FAMILIES: tuple[str, ...] = (
    "deterministic", "similarity", "retrieval", "agent", "operational", "safety", "conversation", "llm_judge", "rag",
    "structural", "mcp", "security", "reliability", "predictability", "composite",
)


def _builtin_metrics() -> dict[str, str]:
    out: dict[str, str] = {}
    for family in BUILTIN_FAMILIES:
        try:
            module = importlib.import_module(f"evald.metrics.{family}")
        except ModuleNotFoundError as err:
            if err.name != f"evald.metrics.{family}":
                raise
            continue  # a family not shipped (yet)
        for kind, target in getattr(module, "METRICS", {}).items():
            if kind in out:
                raise RuntimeError(f"metric kind {kind!r} is registered twice ({out[kind]} and {target})")
            out[kind] = target
    return out


#: kind -> "module:Class" for every built-in metric.
BUILTIN_METRICS: dict[str, str] = _builtin_metrics()

ENTRY_POINT_GROUP = "evald.metrics"


class UnknownMetricError(LookupError):
    def __init__(self, kind: str, known: list[str]) -> None:
        from evald.config.suggest import did_you_mean  # only the nearest kinds: there are dozens

        hint = did_you_mean(kind, known) or "; no known kind is close"
        super().__init__(f"unknown metric kind {kind!r}{hint} (`evald list-metrics` lists all {len(known)})")


def _load(target: str) -> type[BaseMetric]:
    module_name, _, attr = target.partition(":")
    obj = getattr(importlib.import_module(module_name), attr)
    if not (isinstance(obj, type) and issubclass(obj, BaseMetric)):
        raise TypeError(f"{target} is not an evald BaseMetric subclass")
    return obj


def _plugin_targets() -> dict[str, str]:
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def known_kinds() -> list[str]:
    return sorted({*BUILTIN_METRICS, *_plugin_targets()})


def get_metric_class(kind: str) -> type[BaseMetric]:
    """Resolve a kind: built-in, then entry point, then ``harness:<Class>`` (harness-evals), then ``module:Class``."""
    if kind in BUILTIN_METRICS:
        return _load(BUILTIN_METRICS[kind])
    plugins = _plugin_targets()
    if kind in plugins:
        return _load(plugins[kind])
    if kind.startswith("harness:"):  # any harness-evals metric class, through the adapter
        from evald.metrics.harness_adapter import harness_metric_class

        return harness_metric_class(kind.removeprefix("harness:"))
    if ":" in kind:
        try:
            return _load(kind)
        except (ImportError, AttributeError, TypeError) as err:
            raise LookupError(f"cannot load metric {kind!r}: {err}") from err
    raise UnknownMetricError(kind, known_kinds())


def all_metric_classes() -> list[type[BaseMetric]]:
    return [get_metric_class(kind) for kind in known_kinds()]
