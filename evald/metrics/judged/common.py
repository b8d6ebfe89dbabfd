"""What the judged metrics share: the ``judge`` option, case texts, and mapping an integer band to [0, 1]."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import Field

from evald.case import EvalCase
from evald.config.base import ComponentConfig
from evald.judges.prompting import Verdict, VerdictField
from evald.judges.registry import get_judge
from evald.metrics.base import BaseMetric
from evald.metrics.text import optional_text


def numbered(items: Sequence[str]) -> str:
    """``1. first\\n2. second``: trusted text (option items, evaluation steps) listed for the judge."""
    return "\n".join(f"{i}. {item}" for i, item in enumerate(items, start=1))


class JudgedOptions(ComponentConfig):
    judge: str = Field("default", min_length=1, description="Name of a judge defined under top-level `judges:`.")


def case_data(eval_case: EvalCase, fields: Iterable[str]) -> list[tuple[str, str]]:
    """(label, text) of each named case field that has text; ``context`` gives one block per document."""
    out: list[tuple[str, str]] = []
    for name in fields:
        if name == "context":
            out += [(f"context[{i}]", doc.content) for i, doc in enumerate(eval_case.context) if doc.content]
        elif (text := optional_text(getattr(eval_case, name))) is not None and text.strip():
            out.append((name, text))
    return out


def output_data(eval_case: EvalCase, fields: Iterable[str] = ("input", "output")) -> list[tuple[str, str]] | None:
    """:func:`case_data` of ``fields``, or None when the output has no text (the metric is not applicable)."""
    data = case_data(eval_case, fields)
    return data if any(label == "output" for label, _ in data) else None


async def ask_judge(
    metric: BaseMetric, eval_case: EvalCase, judge_name: str, task: str, data: Sequence[tuple[str, str]],
    fields: Sequence[VerdictField],
) -> Verdict:
    """The one way a judged metric asks its judge: keyed for the cache by the metric's kind and version, and by
    the case's service for ``never_send``. Raises ``JudgeSkipped`` (a ``MetricSkipped``: budget_exhausted,
    circuit_open, never_send) or ``JudgeError`` (an error outcome)."""
    return await get_judge(judge_name).evaluate(
        task, data, fields, metric=f"{metric.kind}@{metric.version}", service=eval_case.service_name,
        batch_key=id(eval_case),  # a batching judge asks the case's judged metrics in one call
        evaluated=(eval_case.trace_id, eval_case.span_id, eval_case.scope),  # linked from a traced judge call
    )


def band_value(score: int, lowest: int, highest: int) -> float:
    """Map an integer score band to [0, 1]: ``lowest`` -> 0, ``highest`` -> 1, linear in between."""
    return min(1.0, max(0.0, (score - lowest) / (highest - lowest)))
