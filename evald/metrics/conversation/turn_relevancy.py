"""``turn_relevancy``: the share of assistant turns relevant to what the user had just said, per an LLM judge."""

from __future__ import annotations

from typing import ClassVar

from evald.case import Dimension, EvalCase
from evald.config.base import ComponentConfig
from evald.metrics.judged.banded import MIN_TURNS, render_messages
from evald.metrics.judged.common import JudgedOptions
from evald.metrics.judged.counted import CountedJudgeMetric, assistant_turns


class TurnRelevancyOptions(JudgedOptions):
    pass


class TurnRelevancyMetric(CountedJudgeMetric):
    """An LLM judge counts the assistant turns that are relevant to the conversation so far; the value is that share.

    Rubric: DeepEval's TurnRelevancyMetric (relevant assistant turns / all assistant turns), with harness-evals'
    criteria (seed catalog, Conversation: "relevancy"): each assistant turn must address the immediately preceding
    user message within the broader conversation; a vague answer to a vague input (a greeting) is not irrelevant;
    only turns that do not address what was asked count against. Reads ``messages`` (one line per turn). n is
    evald's count of assistant turns with text; the judge returns ``{"reasoning": ..., "relevant_turns": k}`` with
    k in 0..n and the value is ``k / n`` (3 of 4 turns: 0.75). Not applicable with fewer than 2 messages or no
    assistant turn. Metadata ``relevant_turns``, ``total``, ``judge``. Option: ``judge``. A k above n or a
    verdict that is not the JSON object is malformed: an error outcome, never a score.
    """

    kind: ClassVar[str] = "turn_relevancy"
    family: ClassVar[str] = "conversation"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.7
    requires: ClassVar[tuple[str, ...]] = ("messages",)
    needs: ClassVar[tuple[str, ...]] = ("messages",)
    Options: ClassVar[type[ComponentConfig]] = TurnRelevancyOptions
    count_field: ClassVar[str] = "relevant_turns"
    count_meaning: ClassVar[str] = "how many assistant turns are relevant"

    def judge_task(self, eval_case: EvalCase) -> str:
        return (
            "For each assistant turn of the conversation, decide whether it is relevant: it addresses the "
            "immediately preceding user message, within the broader conversation. A vague answer to a vague input "
            "(such as a greeting) is relevant; only a turn that does not address what was asked is irrelevant. In "
            "the reasoning, list each assistant turn by its number with 'relevant' or 'irrelevant'. Then count the "
            f"relevant assistant turns (there are {self.item_count(eval_case)} assistant turns)."
        )

    def judge_data(self, eval_case: EvalCase) -> list[tuple[str, str]] | None:
        if len(eval_case.messages) < MIN_TURNS:
            return None
        return [("conversation", render_messages(eval_case.messages))]

    def item_count(self, eval_case: EvalCase) -> int:
        return assistant_turns(eval_case.messages)
