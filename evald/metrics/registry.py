"""Metric registry: built-ins by module path (imported lazily), aliases of built-ins (``ALIASES``), plugins by the
``evald.metrics`` entry point group or ``kind: "package.module:Class"`` in config. An unknown kind fails with the
closest known kinds.
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

#: Other names of built-in kinds (the seed catalog's names where an existing kind covers the same metric): ``kind:
#: <alias>`` resolves to the kind's class, so the score is named after the kind (unless the entry sets ``name:``).
#: ``evald list-metrics`` lists each alias with the kind it points to.
ALIASES: dict[str, str] = {
    "schema_validation": "json_schema",
    "token_cost": "token_usage",
    "embedding_similarity": "embedding_cosine",
    "pii": "pii_leak",
    "tool_use": "tool_use_quality",
}
for _alias, _kind in ALIASES.items():
    if _alias in BUILTIN_METRICS or _kind not in BUILTIN_METRICS:
        raise RuntimeError(f"metric alias {_alias!r} -> {_kind!r}: an alias must name no kind and point to one")

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
    """Every kind a config may name: built-ins, plugins and aliases."""
    return sorted({*BUILTIN_METRICS, *_plugin_targets(), *ALIASES})


def get_metric_class(kind: str) -> type[BaseMetric]:
    """Resolve a kind: built-in, then entry point, then ``harness:<Class>`` (harness-evals), then ``module:Class``."""
    if kind in BUILTIN_METRICS:
        return _load(BUILTIN_METRICS[kind])
    if kind in ALIASES:
        return _load(BUILTIN_METRICS[ALIASES[kind]])
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
    """One class per kind (aliases left out: they name a class listed under its kind)."""
    return [get_metric_class(kind) for kind in known_kinds() if kind not in ALIASES]
