"""``StatementShareMetric``: the shared body of judged metrics whose value is the share of a text's statements that
the retrieved context supports (``faithfulness``: the output's claims; ``context_recall``: the expected answer's
statements).

The judge splits the text into statements and counts them itself: it returns ``{"reasoning": ...,
<total_field>: t, <held_field>: s}`` with ``s <= t`` (part of the verdict's schema, checked strictly; any other
answer is ``malformed``, an error outcome); the value is ``s / t``, and 1.0 when the text has no statement.
Metadata: ``<total_field>``, ``<held_field>`` and ``judge``. Not applicable without the text (``text_field``) or
without a context document with content. A subclass gives ``task``, ``text_field`` and ``verdict_fields`` (the
total's field, then the supported count's, bounded by the total with ``at_most``).
"""

from __future__ import annotations

from typing import ClassVar, cast

from evald.case import EvalCase, Score
from evald.config.base import ComponentConfig
from evald.judges.prompting import VerdictField
from evald.metrics.base import BaseMetric
from evald.metrics.judged.common import JudgedOptions, ask_judge, case_data


class StatementShareMetric(BaseMetric):
    """Base of judged metrics scored ``supported / total`` statements of one case text; not registered itself."""

    task: ClassVar[str]
    text_field: ClassVar[str]
    verdict_fields: ClassVar[tuple[VerdictField, VerdictField]]
    Options: ClassVar[type[ComponentConfig]] = JudgedOptions

    async def a_measure(self, eval_case: EvalCase) -> Score | None:
        context = case_data(eval_case, ("context",))
        text = case_data(eval_case, (self.text_field,))
        if not context or not text:
            return None
        judge = cast(JudgedOptions, self.options).judge
        verdict = await ask_judge(self, eval_case, judge, self.task, [*context, *text], self.verdict_fields)
        total_field, held_field = (field.name for field in self.verdict_fields)
        total, held = verdict.values[total_field], verdict.values[held_field]
        value = held / total if total else 1.0
        return self.score(value, verdict.reasoning, **{total_field: total, held_field: held}, judge=judge)
