"""``role_adherence``: the share of assistant turns that stay in the assigned role, per an LLM judge."""

from __future__ import annotations

from typing import ClassVar, cast

from pydantic import Field

from evald.case import Dimension, EvalCase
from evald.config.base import ComponentConfig
from evald.metrics.judged.banded import MIN_TURNS, render_messages
from evald.metrics.judged.common import JudgedOptions, case_data
from evald.metrics.judged.counted import CountedJudgeMetric, assistant_turns


class RoleAdherenceOptions(JudgedOptions):
    role: str | None = Field(
        None, min_length=1, max_length=4000,
        description="The chatbot's role or persona. Default: the case's system prompt (sent as data); with "
                    "neither, the metric is not applicable.",
    )


class RoleAdherenceMetric(CountedJudgeMetric):
    """An LLM judge counts the assistant turns that stay in the assigned role; the value is that share.

    Rubric: DeepEval's RoleAdherenceMetric (assistant turns adhering to the chatbot role / all assistant turns),
    with harness-evals' criteria (seed catalog, Conversation: "role adherence"): consistent behaviour, tone,
    knowledge boundaries and constraints of the role; a turn that breaks character or acts contrary to the role
    does not adhere. Reads ``messages`` (one line per turn) and the role: option ``role`` (trusted, in the task),
    else the case's ``system_prompt`` (untrusted: a delimited data block ``role``). n is evald's count of
    assistant turns with text; the judge returns ``{"reasoning": ..., "in_role_turns": k}``, k in 0..n; the
    value is ``k / n``. Not applicable with fewer than 2 messages, no assistant turn, or no role. Metadata
    ``in_role_turns``, ``total``, ``judge``. Options: ``role``, ``judge``. A k above n or a verdict that is not
    the JSON object is malformed: an error outcome, never a score.
    """

    kind: ClassVar[str] = "role_adherence"
    family: ClassVar[str] = "conversation"
    dimension: ClassVar[Dimension] = Dimension.TRAJECTORY
    default_threshold: ClassVar[float] = 0.7
    requires: ClassVar[tuple[str, ...]] = ("messages", "system_prompt")
    needs: ClassVar[tuple[str, ...]] = ("messages",)
    Options: ClassVar[type[ComponentConfig]] = RoleAdherenceOptions
    count_field: ClassVar[str] = "in_role_turns"
    count_meaning: ClassVar[str] = "how many assistant turns stay in the role"

    def judge_task(self, eval_case: EvalCase) -> str:
        role = cast(RoleAdherenceOptions, self.options).role
        lead = (
            "For each assistant turn of the conversation, decide whether it adheres to the chatbot's assigned role"
            f"{'' if role is not None else ' (the role block)'}: it behaves, speaks and limits itself as the role "
            "requires (tone, knowledge boundaries, constraints) and does not break character. In the reasoning, "
            "list each assistant turn by its number with 'in role' or 'out of role'. Then count the assistant turns "
            f"in role (there are {self.item_count(eval_case)} assistant turns)."
        )
        return lead if role is None else f"{lead}\nThe assigned role:\n{role}"

    def judge_data(self, eval_case: EvalCase) -> list[tuple[str, str]] | None:
        if len(eval_case.messages) < MIN_TURNS:
            return None
        conversation = ("conversation", render_messages(eval_case.messages))
        if cast(RoleAdherenceOptions, self.options).role is not None:
            return [conversation]
        role = case_data(eval_case, ("system_prompt",))
        return [("role", role[0][1]), conversation] if role else None

    def item_count(self, eval_case: EvalCase) -> int:
        return assistant_turns(eval_case.messages)
