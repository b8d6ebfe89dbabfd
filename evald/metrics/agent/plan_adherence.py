"""``plan_adherence``: whether the agent followed the plan it declared, per an LLM judge."""

from __future__ import annotations

from typing import ClassVar

from evald.case import Dimension
from evald.config.base import ComponentConfig
from evald.metrics.judged.banded import BandedJudgeMetric
from evald.metrics.judged.common import JudgedOptions


class PlanAdherenceOptions(JudgedOptions):
    pass


class PlanAdherenceMetric(BandedJudgeMetric):
    """An LLM judge rates, on 1 to 5, how exactly the agent followed the plan it declared in its messages.

    Rubric: harness-evals' ``PlanAdherenceMetric`` (seed catalog, Agent and Trajectory: "plan adherence"; DeepEval's
    PlanAdherence has the same aim): plan obedience only, not success: every planned step must match a verifiable
    action in the tool calls or messages, extra major actions, steps out of order and missing steps each lower the
    score; when in doubt, the lower score. Reads ``input`` (the task, if any), ``messages`` (one line per turn:
    the declared plan) and the case's tool calls (one compact truncated line each, when there are any). Band
    mapping: ``{"score": n}`` from 1 (no adherence) to 5 (every step in order, nothing extra); the value is
    ``(n - 1) / 4`` (harness-evals' 0 / 0.25 / ... / 1 scale). Not applicable with fewer than 2 messages.
    ``Score.reason`` is the judge's reasoning; metadata ``judge_score``, ``judge``. Option: ``judge``. A judge that
    gives no valid verdict is an error outcome, never a score.
    """

    kind: ClassVar[str] = "plan_adherence"
    family: ClassVar[str] = "agent"
    dimension: ClassVar[Dimension] = Dimension.TRAJECTORY
    default_threshold: ClassVar[float] = 0.7
    requires: ClassVar[tuple[str, ...]] = ("input", "messages", "tool_calls")
    needs: ClassVar[tuple[str, ...]] = ("messages",)
    Options: ClassVar[type[ComponentConfig]] = PlanAdherenceOptions
    task: ClassVar[str] = (
        "Judge plan obedience only (not success or usefulness): did the agent exactly and exclusively follow the "
        "plan it declared in the conversation? Every planned step must correspond to a verifiable action in the "
        "trajectory (tool calls) or the messages; a missing or ambiguous step counts as not followed; a major "
        "action that is not in the plan, or steps in another order than planned, lower the score. When in doubt, "
        "give the lower score.\n5 = every planned step executed in order, nothing extra; 4 = nearly all steps in "
        "order, one minor deviation; 3 = partial: steps missing, out of order or replaced; 2 = only a few planned "
        "steps appear, several extra actions; 1 = little resemblance to the plan, or no plan declared."
    )
    sent_fields: ClassVar[tuple[str, ...]] = ("input", "conversation", "trajectory")
    needed_fields: ClassVar[tuple[str, ...]] = ("conversation",)
    score_meaning: ClassVar[str] = "how exactly the agent followed its plan (5 = exactly)"
