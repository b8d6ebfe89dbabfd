"""``prompt_alignment``: the share of your prompt's instructions that the output follows, per an LLM judge."""

from __future__ import annotations

from typing import ClassVar, cast

from pydantic import Field

from evald.case import Dimension, EvalCase
from evald.config.base import ComponentConfig
from evald.metrics.judged.common import JudgedOptions, case_data
from evald.metrics.judged.counted import CountedJudgeMetric, numbered


class PromptAlignmentOptions(JudgedOptions):
    instructions: list[str] = Field(
        ..., min_length=1, max_length=50,
        description="The prompt's instructions to check, one each (e.g. 'Answer in French', 'Use at most 3 bullets').",
    )


class PromptAlignmentMetric(CountedJudgeMetric):
    """An LLM judge counts how many of the configured instructions the output follows; the value is that share.

    Rubric: DeepEval's PromptAlignmentMetric as harness-evals implements it (seed catalog, LLM-Judged: "checks
    instruction-following"): each instruction of the prompt template is checked on its own against the output;
    the value is followed / all. Reads ``input`` (if any) and ``output``; the instructions come from option
    ``instructions`` (trusted config, listed in the task). The judge returns ``{"reasoning": ...,
    "followed_instructions": k}`` with k in 0..n; the value is ``k / n`` (2 of 3: 0.667). Not applicable without
    an output. A k above n or a verdict that is not the JSON object is malformed: an error outcome, never a score.
    Options: ``instructions`` (required), ``judge``. Metadata ``followed_instructions``, ``total``, ``judge``.
    """

    kind: ClassVar[str] = "prompt_alignment"
    family: ClassVar[str] = "llm_judge"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = ("input", "output")
    needs: ClassVar[tuple[str, ...]] = ("output",)
    Options: ClassVar[type[ComponentConfig]] = PromptAlignmentOptions
    count_field: ClassVar[str] = "followed_instructions"
    count_meaning: ClassVar[str] = "how many of the instructions the output follows"

    def setup(self) -> None:
        instructions = cast(PromptAlignmentOptions, self.options).instructions
        self._task = (
            "Check, one by one, whether the output follows each instruction below (the input is what the model "
            "was given). In the reasoning, list each instruction with 'followed' or 'not followed' and why. Then "
            f"count the instructions followed.\nInstructions:\n{numbered(instructions)}"
        )

    def judge_task(self, eval_case: EvalCase) -> str:
        return self._task

    def judge_data(self, eval_case: EvalCase) -> list[tuple[str, str]] | None:
        data = case_data(eval_case, ("input", "output"))
        return data if any(label == "output" for label, _ in data) else None

    def item_count(self, eval_case: EvalCase) -> int:
        return len(cast(PromptAlignmentOptions, self.options).instructions)
