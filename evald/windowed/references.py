"""Config-load check of the metric names multi-case metrics refer to (a composite's ``weights``, an
``outcome_metric``, a ``confidence_metric``): each must be the name of a configured metric. Called by
``check_conditions`` (evald/pipeline/conditions.py), so ``evald validate`` and ``evald run`` report it with the YAML
path like a ``when:`` reference; the windowed stage checks again when it is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import ValidationError

from evald.metrics.multi_case import CompositeMetric, CompositeOptions, GroupMetric, OutcomeOptions, WindowOptions

if TYPE_CHECKING:
    from evald.pipeline.bindings import MetricSpec


def check_references(specs: Sequence[MetricSpec | None]) -> list[tuple[str, str]]:
    """(YAML path, message) for each reference to a metric no ``metrics:`` entry names."""
    from evald.metrics.registry import get_metric_class

    classes = {}
    for i, spec in enumerate(specs):
        if spec is None:
            continue
        try:
            classes[i] = get_metric_class(spec.kind)
        except (LookupError, ImportError, TypeError):
            continue  # reported by the metrics check
    names = {spec.name or classes[i].kind for i, spec in enumerate(specs) if spec is not None and i in classes}
    problems: list[tuple[str, str]] = []
    for i, cls in classes.items():
        spec = specs[i]
        assert spec is not None
        if not issubclass(cls, CompositeMetric | GroupMetric) and not issubclass(cls.Options, WindowOptions):
            continue
        try:
            options = cls.Options.model_validate(spec.options)
        except ValidationError:
            continue  # reported by the options check
        refs: list[tuple[str, str]] = []
        if isinstance(options, CompositeOptions) and "weights" in options.model_fields_set:
            refs += [("weights", name) for name in options.weights]
        if isinstance(options, OutcomeOptions) and options.outcome_metric:
            refs.append(("outcome_metric", options.outcome_metric))
        if isinstance(options, WindowOptions) and options.confidence_from == "metric" and options.confidence_metric:
            refs.append(("confidence_metric", options.confidence_metric))
        known = ", ".join(sorted(names))
        problems += [(f"metrics[{i}].options.{key}", f"unknown metric {name!r} (configured: {known})")
                     for key, name in refs if name not in names]
    return problems
