"""``geval``: an LLM judge scores the case against free-form criteria or numbered evaluation steps (G-Eval)."""

from __future__ import annotations

from typing import ClassVar, Literal, Self, cast

from pydantic import Field, model_validator

from evald.case import Dimension, EvalCase
from evald.config.base import ComponentConfig
from evald.metrics.judged.banded import BandedJudgeMetric
from evald.metrics.judged.common import JudgedOptions, numbered, output_data

CaseField = Literal["input", "output", "expected", "context", "system_prompt"]


class GEvalOptions(JudgedOptions):
    criteria: str | None = Field(None, min_length=1, description="What a good output is, in plain words.")
    evaluation_steps: list[str] | None = Field(
        None, min_length=1, description="Numbered steps the judge follows (used with or instead of `criteria`)."
    )
    score_min: int = Field(1, ge=0, description="Lowest integer score band (maps to 0).")
    score_max: int = Field(5, ge=1, le=100, description="Highest integer score band (maps to 1).")
    fields: list[CaseField] = Field(
        ["input", "output"], min_length=1, description="Case fields shown to the judge; `output` is required."
    )

    @model_validator(mode="after")
    def _check(self) -> Self:
        if not self.criteria and not self.evaluation_steps:
            raise ValueError("geval needs `criteria` or `evaluation_steps`")
        if self.score_max <= self.score_min:
            raise ValueError(f"score_max ({self.score_max}) must be above score_min ({self.score_min})")
        if "output" not in self.fields:
            raise ValueError("geval's `fields` must include `output`")
        return self


class GEvalMetric(BandedJudgeMetric):
    """An LLM judge scores the output against your criteria or evaluation steps on an integer scale.

    Reads the case fields listed in option ``fields`` (default ``input`` and ``output``; also ``expected``,
    ``context``, ``system_prompt``), redacted and delimited as untrusted data, and asks the judge named by option
    ``judge`` for ``{"reasoning": ..., "score": n}`` with ``n`` an integer from ``score_min`` to ``score_max``
    (default 1..5). The value maps that band linearly to [0, 1]: ``(n - score_min) / (score_max - score_min)``,
    so on 1..5 a 4 is 0.75. ``Score.reason`` is the judge's reasoning; metadata has the raw ``judge_score``.
    Options: ``criteria`` and/or ``evaluation_steps`` (one is required), ``score_min``, ``score_max``,
    ``fields``, ``judge``. Not applicable when the case has no output. A judge that gives no valid verdict
    (timeout, malformed JSON) is an error outcome, never a score; a spent budget or an open circuit skips it.
    """

    kind: ClassVar[str] = "geval"
    family: ClassVar[str] = "llm_judge"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = ("input", "output", "expected", "context", "system_prompt")
    needs: ClassVar[tuple[str, ...]] = ("input", "output")
    Options: ClassVar[type[ComponentConfig]] = GEvalOptions
    score_meaning: ClassVar[str] = "how well the output meets the task"

    def setup(self) -> None:
        opts = cast(GEvalOptions, self.options)
        parts = []
        if opts.criteria:
            parts.append(f"Evaluate the output against these criteria:\n{opts.criteria}")
        if opts.evaluation_steps:
            parts.append(f"Follow these evaluation steps:\n{numbered(opts.evaluation_steps)}")
        parts.append(f"Then give an integer score from {opts.score_min} (worst) to {opts.score_max} (best).")
        self.geval_task = "\n\n".join(parts)

    def band(self) -> tuple[int, int]:
        opts = cast(GEvalOptions, self.options)
        return opts.score_min, opts.score_max

    def judge_task(self, eval_case: EvalCase) -> str:
        return self.geval_task

    def judge_data(self, eval_case: EvalCase) -> list[tuple[str, str]] | None:
        return output_data(eval_case, cast(GEvalOptions, self.options).fields)
