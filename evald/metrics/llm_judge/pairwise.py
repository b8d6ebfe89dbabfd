"""``pairwise``: an LLM judge compares the output with a reference answer in both orders (position-bias controlled)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, ClassVar, Literal, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig, Duration
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
    reference: Literal["expected", "variant"] = Field(
        "expected", description="expected: the case's expected answer (a golden's); variant: the output of the "
        "`reference_variant` case with the same input, seen within the window (A/B or shadow traffic)",
    )
    variant_attribute: str = Field("evald.variant", min_length=1, description="variant mode: span/resource "
                                   "attribute naming a case's variant")
    reference_variant: str = Field("A", min_length=1, description="variant mode: the variant compared against; "
                                   "cases of every other variant are scored")
    group_by: Literal["input", "attribute"] = Field(
        "input", description="variant mode: what pairs two cases: their normalised input, or the value of "
        "`group_attribute` (e.g. a request id both deployments carry)",
    )
    group_attribute: str = Field("evald.run_group", min_length=1, description="variant mode, group_by attribute")
    max_age: Duration = Field(600.0, description="variant mode: a reference output, or a case waiting for one, is "
                              "kept this long")
    max_groups: int = Field(1000, gt=0, le=100_000, description="variant mode: inputs held; beyond, the least "
                            "recently seen is dropped (counted)")
    max_waiting: int = Field(16, gt=0, le=1000, description="variant mode: cases waiting per input for a reference "
                             "output; beyond, the oldest is dropped (counted)")


def _reference_of(options: ComponentConfig | Mapping[str, Any] | None) -> object:
    if isinstance(options, PairwiseOptions):
        return options.reference
    return options.get("reference") if isinstance(options, Mapping) else None


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

    ``reference: expected`` (default): the reference is the case's ``expected`` (the golden's answer); reads
    ``input`` (if any), ``output``, ``expected``; not applicable without an output or an expected answer.

    ``reference: variant``: A/B or shadow deployments tag each trace with its variant (``variant_attribute``,
    default ``evald.variant``, on a span or the resource) and serve the same input. The windowed stage pairs the
    cases (docs/multi-case-metrics.md): when a case of any variant other than ``reference_variant`` (default
    ``A``) arrives and a case of the reference variant with the same normalised input (``group_by: input``; or
    the same ``group_attribute`` value) was seen within ``max_age``, the two outputs are judged, and the score is
    exported on the compared case's trace; a case arriving before its reference waits for it (at most
    ``max_waiting`` per input, ``max_groups`` inputs, ``max_age``), and the latest reference output of an input
    is kept for later cases. Cases without a variant are counted ``no_variant``; the reference cases get no score
    of their own. Metadata adds ``variant``, ``reference_variant`` and ``reference_trace_id``.

    ``Score.reason`` gives both verdicts' reasoning; metadata ``preference_output_first``,
    ``preference_reference_first``, ``position_consistent``, ``reference`` (``expected`` or ``variant``),
    ``judge``. A verdict that is malformed in either order is an error outcome (never a score; in variant mode
    counted ``error``); a skip (budget, circuit, never_send) in either order skips the metric (in variant mode: no
    score, counted ``not_applicable``).
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

    def __new__(cls, threshold: float | None = None, options: ComponentConfig | Mapping[str, Any] | None = None,
                name: str | None = None) -> PairwiseMetric:
        """``reference: variant`` builds the windowed form (evald/metrics/llm_judge/pairwise_variant.py), scored
        over pairs of cases by the windowed stage; the kind and its options stay one."""
        if cls is PairwiseMetric and _reference_of(options) == "variant":
            from evald.metrics.llm_judge.pairwise_variant import VariantPairwiseMetric

            return super().__new__(VariantPairwiseMetric)
        return super().__new__(cls)

    async def a_measure(self, eval_case: EvalCase) -> Score | None:
        output = case_data(eval_case, ("output",))
        reference = case_data(eval_case, ("expected",))
        if not output or not reference:
            return None
        return await self.compare(eval_case, output[0][1], reference[0][1], reference="expected")

    async def compare(self, eval_case: EvalCase, output: str, reference_text: str, **metadata: Any) -> Score:
        """Judge ``output`` against ``reference`` for the case's input, in both orders (see the class docstring)."""
        judge = cast(PairwiseOptions, self.options).judge
        question = case_data(eval_case, ("input",))
        orders = (
            [*question, ("response_a", output), ("response_b", reference_text)],
            [*question, ("response_a", reference_text), ("response_b", output)],
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
            position_consistent=consistent, **metadata, judge=judge,
        )
