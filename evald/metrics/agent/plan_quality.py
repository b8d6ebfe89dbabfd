"""``plan_quality``: how good the agent's plan is for its task, per an LLM judge."""

from __future__ import annotations

from typing import ClassVar

from evald.case import Dimension
from evald.config.base import ComponentConfig
from evald.metrics.judged.banded import BandedJudgeMetric
from evald.metrics.judged.common import JudgedOptions


class PlanQualityOptions(JudgedOptions):
    pass


class PlanQualityMetric(BandedJudgeMetric):
    """An LLM judge rates, on 1 to 5, the quality of the plan the agent states in its messages for the task.

    Rubric: harness-evals' ``PlanQualityMetric`` (seed catalog, Agent: "plan quality"; DeepEval's PlanQuality has
    the same aim): completeness (every requirement of the task covered), logical coherence (a rational order, no
    redundant steps), optimality (minimal but sufficient), level of detail (executable without ambiguity) and
    alignment with the user's goal; when in doubt, the lower score. Reads ``input`` (the task, if any) and
    ``messages`` rendered one line per turn (where the plan is). Band mapping: ``{"score": n}`` from 1
    (inadequate) to 5 (excellent); the value is ``(n - 1) / 4``, which is harness-evals' 0 / 0.25 / 0.5 / 0.75 /
    1 scale exactly. Not applicable with fewer than 2 messages. ``Score.reason`` is the judge's reasoning;
    metadata ``judge_score``, ``judge``. Option: ``judge``. A judge that gives no valid verdict is an error
    outcome, never a score.
    """

    kind: ClassVar[str] = "plan_quality"
    family: ClassVar[str] = "agent"
    dimension: ClassVar[Dimension] = Dimension.TRAJECTORY
    default_threshold: ClassVar[float] = 0.7
    requires: ClassVar[tuple[str, ...]] = ("input", "messages")
    needs: ClassVar[tuple[str, ...]] = ("messages",)
    Options: ClassVar[type[ComponentConfig]] = PlanQualityOptions
    task: ClassVar[str] = (
        "Assess the quality of the plan the agent states in the conversation for the task in the input. Consider "
        "completeness (all requirements of the task addressed; a missing critical subtask lowers the score "
        "sharply), logical coherence (a rational order, no redundant steps), optimality (minimal but sufficient), "
        "level of detail (specific enough to execute without ambiguity) and alignment with the user's goal. When "
        "in doubt, give the lower score.\n5 = excellent: complete, logically ordered, efficient; 4 = good, minor "
        "gaps; 3 = adequate but flawed; 2 = weak: major missing steps or unclear logic; 1 = inadequate, "
        "irrelevant or no plan."
    )
    sent_fields: ClassVar[tuple[str, ...]] = ("input", "conversation")
    needed_fields: ClassVar[tuple[str, ...]] = ("conversation",)
    score_meaning: ClassVar[str] = "the quality of the agent's plan (5 = excellent)"
