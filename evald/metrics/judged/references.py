"""``check_judge_references``: a metric whose options name a judge must name one configured under ``judges:``.

Runs when the root config is validated (``evald/config/model.py``). A metric names a judge with its ``judge``
option, or by that option's default (``default``). It lives with the metrics, not the judges: judges know
prompts, providers and governance, nothing of metrics or the pipeline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evald.pipeline.bindings import MetricSpec


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
