"""``pairwise``: an LLM judge compares the output with a reference answer in both orders (position-bias controlled)."""

from __future__ import annotations

import asyncio
from typing import ClassVar, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.judges.prompting import Verdict, VerdictField
from evald.metrics.base import BaseMetric
from evald.metrics.judged.common import JudgedOptions, ask_judge, case_data

#: the judge's preference between response A and response B: 1 = A clearly better .. 3 = equal .. 5 = B clearly better
_FIELDS = (VerdictField("preference", 1, 5, "1 = A clearly better, 2 = A better, 3 = equal, 4 = B better, "
                                            "5 = B clearly better"),)
_DEFAULT_CRITERIA = "Which response answers the input better: correct, complete, relevant and clear."


class PairwiseOptions(JudgedOptions):
    criteria: str = Field(
        _DEFAULT_CRITERIA, min_length=1, max_length=4000, description="What makes one response better than the other."
    )


class PairwiseMetric(BaseMetric):
    """An LLM judge compares the output with a reference answer for the same input, asked in both orders.

    Rubric: harness-evals' ``PairwiseMetric`` (seed catalog, LLM-Judged: "A/B comparison"; MT-Bench's pairwise
    comparison, whose position-bias control is to ask with the responses swapped): the judge sees the input (if
    any) and two responses, ``response_a`` and ``response_b``, and returns ``{"reasoning": ..., "preference": p}``
    (1 = A clearly better, 3 = equal, 5 = B clearly better). It is asked twice, concurrently: with the output as A
    and the reference as B (the output's share is ``(5 - p1) / 4``), then swapped (``(p2 - 1) / 4``). The value is
    the mean of the two: 1.0 when the output clearly wins in both orders, 0.5 for a tie, 0.0 when the reference
    clearly wins in both. A judge that prefers whichever response comes first (position bias) cancels out towards
    0.5, and metadata ``position_consistent: false`` says its two verdicts disagreed on the winner. The default
    threshold 0.5 passes an output at least as good as the reference.

    The reference is the case's ``expected`` (the golden's answer). Comparing with another variant's output for the
    same input (A/B or shadow traffic) is not done here: that needs the windowed stage to pair cases by variant and
    await a judge. Reads ``input`` (if any), ``output``, ``expected``. Not applicable without an output or an
    expected answer. ``Score.reason`` gives both verdicts' reasoning; metadata ``preference_output_first``,
    ``preference_reference_first``, ``position_consistent``, ``reference`` (``expected``), ``judge``. A verdict
    that is malformed in either order is an error outcome (never a score); a skip (budget, circuit, never_send)
    in either order skips the metric. Options: ``criteria``, ``judge``.
    """

    kind: ClassVar[str] = "pairwise"
    family: ClassVar[str] = "llm_judge"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = ("input", "output", "expected")
    needs: ClassVar[tuple[str, ...]] = ("output", "expected")
    Options: ClassVar[type[ComponentConfig]] = PairwiseOptions

    def setup(self) -> None:
        criteria = cast(PairwiseOptions, self.options).criteria
        self._task = (
            "Compare the two responses to the input (response_a and response_b) and decide which is better by this "
            f"criterion: {criteria}\nThe order in which they are shown says nothing about their quality. Reason "
            "about each response first, then give your preference."
        )

    async def a_measure(self, eval_case: EvalCase) -> Score | None:
        output = case_data(eval_case, ("output",))
        reference = case_data(eval_case, ("expected",))
        if not output or not reference:
            return None
        judge = cast(PairwiseOptions, self.options).judge
        question = case_data(eval_case, ("input",))
        orders = (
            [*question, ("response_a", output[0][1]), ("response_b", reference[0][1])],
            [*question, ("response_a", reference[0][1]), ("response_b", output[0][1])],
        )
        answers = await asyncio.gather(
            *(ask_judge(self, eval_case, judge, self._task, data, _FIELDS) for data in orders),
            return_exceptions=True,
        )
        for answer in answers:
            if isinstance(answer, BaseException):
                raise answer
        first, second = cast(list[Verdict], answers)
        p1, p2 = first.values["preference"], second.values["preference"]
        value = ((5 - p1) / 4 + (p2 - 1) / 4) / 2
        consistent = (p1 < 3) == (p2 > 3) and (p1 > 3) == (p2 < 3)
        reason = f"output first: {first.reasoning} | reference first: {second.reasoning}"
        return self.score(
            value, reason, preference_output_first=p1, preference_reference_first=p2,
            position_consistent=consistent, reference="expected", judge=judge,
        )
