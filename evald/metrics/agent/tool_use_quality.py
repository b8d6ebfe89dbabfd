"""``tool_use_quality``: an LLM judge rates how well an agent chose and used its tools."""

from __future__ import annotations

from typing import ClassVar

from evald.case import Dimension
from evald.config.base import ComponentConfig
from evald.metrics.judged.banded import BandedJudgeMetric
from evald.metrics.judged.common import JudgedOptions


class ToolUseQualityOptions(JudgedOptions):
    pass


class ToolUseQualityMetric(BandedJudgeMetric):
    """An LLM judge rates, on 1 to 5, how well the agent chose and used its tools (trajectory required).

    Reads ``input`` (if any), ``tool_calls`` rendered as a compact trajectory (one line per call:
    ``n. name(arguments) -> result``, each part truncated to 500 characters) and ``output`` (if any). Band
    mapping: ``{"score": n}`` from 1 (useless tool use) to 5 (appropriate and efficient); the value is
    ``(n - 1) / 4`` (a 2 scores 0.25). Not applicable without tool calls.
    ``Score.reason`` is the judge's reasoning; metadata has the raw ``judge_score`` and the ``judge`` name.
    Option: ``judge``. A judge that gives no valid verdict (malformed, timeout, budget) is an error outcome,
    never a score.
    """

    kind: ClassVar[str] = "tool_use_quality"
    family: ClassVar[str] = "agent"
    dimension: ClassVar[Dimension] = Dimension.TRAJECTORY
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = ("input", "output", "tool_calls")
    needs: ClassVar[tuple[str, ...]] = ("input", "output")
    Options: ClassVar[type[ComponentConfig]] = ToolUseQualityOptions
    task: ClassVar[str] = (
        "The trajectory lists the tool calls an agent made for the input (name, arguments, result). Rate the "
        "tool use: the right tools, correct and sensible arguments, no redundant or repeated calls, errors "
        "handled, results actually used in the output.\n5 = appropriate and efficient; 4 = good with one "
        "unnecessary call or small argument issue; 3 = several issues; 2 = mostly wrong tools or arguments; 1 "
        "= tool use that could not help with the input."
    )
    sent_fields: ClassVar[tuple[str, ...]] = ("input", "trajectory", "output")
    needed_fields: ClassVar[tuple[str, ...]] = ("trajectory",)
    score_meaning: ClassVar[str] = "quality of the tool calls (5 = appropriate and efficient)"
