"""``llm_as_judge``: an LLM judge scores the case against your prompt template with ``{{var}}`` placeholders."""

from __future__ import annotations

import re
from typing import ClassVar, Self, cast

from pydantic import Field, model_validator

from evald.case import Dimension, EvalCase
from evald.config.base import ComponentConfig
from evald.metrics.judged.banded import BandedJudgeMetric
from evald.metrics.judged.common import JudgedOptions, case_data

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_]\w*)\s*\}\}")
VARIABLES = ("input", "expected", "output", "context")


def template_variables(template: str) -> list[str]:
    """The placeholder names of ``template``, in order of first use, each once."""
    return list(dict.fromkeys(_PLACEHOLDER.findall(template)))


class LlmAsJudgeOptions(JudgedOptions):
    template: str = Field(
        ..., min_length=1,
        description="What to judge, with placeholders {{input}}, {{expected}}, {{output}}, {{context}}.",
    )
    score_min: int = Field(1, ge=0, description="Lowest integer score (maps to 0).")
    score_max: int = Field(5, ge=1, le=100, description="Highest integer score (maps to 1).")

    @model_validator(mode="after")
    def _check(self) -> Self:
        names = template_variables(self.template)
        if not names:
            raise ValueError(f"template has no placeholder; use some of {['{{' + v + '}}' for v in VARIABLES]}")
        if unknown := [name for name in names if name not in VARIABLES]:
            raise ValueError(f"unknown template placeholders {unknown}; known: {list(VARIABLES)}")
        if self.score_max <= self.score_min:
            raise ValueError(f"score_max ({self.score_max}) must be above score_min ({self.score_min})")
        return self


class LlmAsJudgeMetric(BandedJudgeMetric):
    """An LLM judge scores the case on an integer scale against your prompt template with {{var}} placeholders.

    The template (option ``template``, trusted config) names case fields with ``{{input}}``,
    ``{{expected}}``, ``{{output}}`` and ``{{context}}``. Case text is never pasted into the instructions:
    each placeholder becomes a reference to a delimited data block (e.g. 'the "output" data block'), and
    those fields are sent redacted, as untrusted data. The judge returns ``{"reasoning": ..., "score": n}``,
    ``n`` from ``score_min`` to ``score_max`` (default 1..5). Band mapping: ``(n - score_min) / (score_max -
    score_min)`` (on 1..5 a 4 is 0.75). Options: ``template`` (required), ``score_min``, ``score_max``,
    ``judge``. Not applicable when a field the template names has no text (``context``: no document with
    content). A judge that gives no valid verdict is an error outcome, never a score.
    """

    kind: ClassVar[str] = "llm_as_judge"
    family: ClassVar[str] = "llm_judge"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = VARIABLES
    needs: ClassVar[tuple[str, ...]] = ("output",)
    Options: ClassVar[type[ComponentConfig]] = LlmAsJudgeOptions
    score_meaning: ClassVar[str] = "how well the case meets the template's criteria"

    def setup(self) -> None:
        opts = cast(LlmAsJudgeOptions, self.options)
        self.variables = template_variables(opts.template)

        def reference(match: re.Match[str]) -> str:
            name = match.group(1)
            return 'the "context[i]" data blocks' if name == "context" else f'the "{name}" data block'

        self.template_task = (
            f"{_PLACEHOLDER.sub(reference, opts.template)}\n\n"
            f"Give an integer score from {opts.score_min} (worst) to {opts.score_max} (best)."
        )

    def band(self) -> tuple[int, int]:
        opts = cast(LlmAsJudgeOptions, self.options)
        return opts.score_min, opts.score_max

    def judge_task(self, eval_case: EvalCase) -> str:
        return self.template_task

    def judge_data(self, eval_case: EvalCase) -> list[tuple[str, str]] | None:
        data = case_data(eval_case, self.variables)
        present = {label.split("[", 1)[0] for label, _ in data}
        return data if set(self.variables) <= present else None
