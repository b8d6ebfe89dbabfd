"""``CountedJudgeMetric``: the shared body of judged metrics whose value is the share of n known items that hold.

The items are known before the judge is asked (the configured policies or instructions, or the assistant turns
of a conversation), so ``n`` is evald's count, never the judge's: the judge returns ``{"reasoning": ...,
<count_field>: k}`` with ``0 <= k <= n`` (the bound is part of the verdict's schema and is checked strictly; any
other k is ``malformed``, an error outcome), and the value is ``k / n``. Metadata: ``<count_field>``, ``total``
(n) and ``judge``. A subclass gives ``judge_task``, ``judge_data`` (None: not applicable) and ``item_count``.

``ListedItemsMetric``: the counted metrics whose n items are a list option (trusted config, numbered in the task)
each checked against the output (the input, if any, sent along); not applicable without an output. A subclass names
the option (``items_option``), the list's heading and the task text before it (``task_lead``).
"""

from __future__ import annotations

from typing import ClassVar, cast

from evald.case import EvalCase, Message, Score
from evald.config.base import ComponentConfig
from evald.judges.prompting import VerdictField
from evald.metrics.base import BaseMetric
from evald.metrics.judged.common import JudgedOptions, ask_judge, numbered, output_data


def assistant_turns(messages: tuple[Message, ...]) -> int:
    """The number of assistant messages with text (the turns a conversation metric counts)."""
    return sum(1 for message in messages if message.role == "assistant" and message.content)


class CountedJudgeMetric(BaseMetric):
    """Base of judged metrics scored ``k / n`` over n known items; not registered itself."""

    count_field: ClassVar[str] = "count"
    count_meaning: ClassVar[str] = "how many of the items hold"
    Options: ClassVar[type[ComponentConfig]] = JudgedOptions

    def judge_task(self, eval_case: EvalCase) -> str:
        raise NotImplementedError

    def judge_data(self, eval_case: EvalCase) -> list[tuple[str, str]] | None:
        raise NotImplementedError

    def item_count(self, eval_case: EvalCase) -> int:
        raise NotImplementedError

    async def a_measure(self, eval_case: EvalCase) -> Score | None:
        data = self.judge_data(eval_case)
        total = self.item_count(eval_case)
        if data is None or total <= 0:
            return None
        judge = cast(JudgedOptions, self.options).judge
        fields = (VerdictField(self.count_field, 0, total, f"{self.count_meaning} (of {total})"),)
        verdict = await ask_judge(self, eval_case, judge, self.judge_task(eval_case), data, fields)
        count = verdict.values[self.count_field]
        return self.score(count / total, verdict.reasoning, **{self.count_field: count, "total": total}, judge=judge)


class ListedItemsMetric(CountedJudgeMetric):
    """Base of counted metrics over a configured list of items checked against the output; not registered itself."""

    requires: ClassVar[tuple[str, ...]] = ("input", "output")
    needs: ClassVar[tuple[str, ...]] = ("output",)
    items_option: ClassVar[str]
    items_heading: ClassVar[str]
    task_lead: ClassVar[str]

    def _items(self) -> list[str]:
        return cast(list[str], getattr(self.options, self.items_option))

    def setup(self) -> None:
        self._task = f"{self.task_lead}\n{self.items_heading}:\n{numbered(self._items())}"

    def judge_task(self, eval_case: EvalCase) -> str:
        return self._task

    def judge_data(self, eval_case: EvalCase) -> list[tuple[str, str]] | None:
        return output_data(eval_case)

    def item_count(self, eval_case: EvalCase) -> int:
        return len(self._items())
