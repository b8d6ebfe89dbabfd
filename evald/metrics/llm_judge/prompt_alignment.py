"""``prompt_alignment``: the share of your prompt's instructions that the output follows, per an LLM judge."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from evald.case import Dimension
from evald.config.base import ComponentConfig
from evald.metrics.judged.common import JudgedOptions
from evald.metrics.judged.counted import ListedItemsMetric


class PromptAlignmentOptions(JudgedOptions):
    instructions: list[str] = Field(
        ..., min_length=1, max_length=50,
        description="The prompt's instructions to check, one each (e.g. 'Answer in French', 'Use at most 3 bullets').",
    )


class PromptAlignmentMetric(ListedItemsMetric):
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
    Options: ClassVar[type[ComponentConfig]] = PromptAlignmentOptions
    count_field: ClassVar[str] = "followed_instructions"
    count_meaning: ClassVar[str] = "how many of the instructions the output follows"
    items_option: ClassVar[str] = "instructions"
    items_heading: ClassVar[str] = "Instructions"
    task_lead: ClassVar[str] = (
        "Check, one by one, whether the output follows each instruction below (the input is what the model "
        "was given). In the reasoning, list each instruction with 'followed' or 'not followed' and why. Then "
        "count the instructions followed."
    )
