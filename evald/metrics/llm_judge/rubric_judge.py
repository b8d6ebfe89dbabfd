"""``rubric_judge``: an LLM judge picks the level of your rubric (level -> description) that fits the output."""

from __future__ import annotations

from typing import ClassVar, Literal, Self, cast

from pydantic import Field, model_validator

from evald.case import Dimension, EvalCase
from evald.config.base import ComponentConfig
from evald.metrics.judged.banded import BandedJudgeMetric
from evald.metrics.judged.common import JudgedOptions, output_data

CaseField = Literal["input", "output", "expected", "context", "system_prompt"]


class RubricJudgeOptions(JudgedOptions):
    rubric: dict[int, str] = Field(
        ..., min_length=2,
        description="Score level -> what an output at that level looks like; consecutive integers, e.g. 1..5.",
    )
    criteria: str | None = Field(None, min_length=1, description="What is judged, in plain words (optional).")
    fields: list[CaseField] = Field(
        ["input", "output"], min_length=1, description="Case fields shown to the judge; `output` is required."
    )

    @model_validator(mode="after")
    def _check(self) -> Self:
        levels = sorted(self.rubric)
        if levels != list(range(levels[0], levels[-1] + 1)):
            raise ValueError(f"rubric levels must be consecutive integers, got {levels}")
        if levels[0] < 0:
            raise ValueError("rubric levels must not be negative")
        if any(not description.strip() for description in self.rubric.values()):
            raise ValueError("every rubric level needs a description")
        if "output" not in self.fields:
            raise ValueError("rubric_judge's `fields` must include `output`")
        return self


class RubricJudgeMetric(BandedJudgeMetric):
    """An LLM judge picks which level of your rubric (level -> description) the output is at.

    Reads the case fields in option ``fields`` (default ``input`` and ``output``; also ``expected``,
    ``context``, ``system_prompt``), redacted and delimited. The judge sees the rubric, lowest level first,
    and returns ``{"reasoning": ..., "score": level}``. Band mapping: the lowest level maps to 0, the highest
    to 1, linearly: ``(level - lowest) / (highest - lowest)`` (rubric 0..4, level 3: 0.75). Options:
    ``rubric`` (required, consecutive integer levels, at least 2), ``criteria``, ``fields``, ``judge``.
    Not applicable when the case has no output. A level outside the rubric or a non-JSON answer is an error
    outcome (malformed), never a score.
    """

    kind: ClassVar[str] = "rubric_judge"
    family: ClassVar[str] = "llm_judge"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = ("input", "output", "expected", "context", "system_prompt")
    needs: ClassVar[tuple[str, ...]] = ("input", "output")
    Options: ClassVar[type[ComponentConfig]] = RubricJudgeOptions
    score_meaning: ClassVar[str] = "the rubric level the output is at"

    def setup(self) -> None:
        opts = cast(RubricJudgeOptions, self.options)
        levels = "\n".join(f"{level}: {opts.rubric[level]}" for level in sorted(opts.rubric))
        lead = f"Evaluate the output: {opts.criteria}\n" if opts.criteria else "Evaluate the output.\n"
        self.rubric_task = f"{lead}Pick the one rubric level that best describes it:\n{levels}"

    def band(self) -> tuple[int, int]:
        levels = cast(RubricJudgeOptions, self.options).rubric
        return min(levels), max(levels)

    def judge_task(self, eval_case: EvalCase) -> str:
        return self.rubric_task

    def judge_data(self, eval_case: EvalCase) -> list[tuple[str, str]] | None:
        return output_data(eval_case, cast(RubricJudgeOptions, self.options).fields)
