"""``turn_count``: the conversation took between ``min_turns`` and ``max_turns`` user turns."""

from __future__ import annotations

from typing import ClassVar, cast

from pydantic import Field, model_validator

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric
from evald.metrics.conversation.roles import ASSISTANT_ROLES, SYSTEM_ROLES, TOOL_ROLES, USER_ROLES, has_role


class TurnCountOptions(ComponentConfig):
    max_turns: int = Field(10, ge=1, description="most user turns allowed; above it the value is max_turns / turns")
    min_turns: int | None = Field(
        None, ge=0, description="fewest user turns expected (none by default); below it the value is turns / min_turns"
    )

    @model_validator(mode="after")
    def _min_not_above_max(self) -> TurnCountOptions:
        if self.min_turns is not None and self.min_turns > self.max_turns:
            raise ValueError(f"min_turns ({self.min_turns}) must not exceed max_turns ({self.max_turns})")
        return self


class TurnCountMetric(BaseMetric):
    """Whether the number of user turns in the conversation is within ``[min_turns, max_turns]``.

    Reads ``messages``. One turn is one user message (role ``user``, or LangChain's ``human``), whatever its
    content. System/developer messages, assistant replies and tool results are not turns: they are counted
    separately in the metadata (``system_messages``, ``assistant_messages``, ``tool_messages``) next to
    ``user_turns`` and ``total_messages``.

    The value is 1 within the bounds. It is graded down outside them, so that a dashboard shows how far off a
    conversation was: above ``max_turns`` it is ``max_turns / turns`` (15 turns against a budget of 10 score
    10 / 15 = 0.667), below ``min_turns`` it is ``turns / min_turns`` (1 turn against a minimum of 4 scores 0.25).
    With the default threshold of 1 any conversation outside the bounds fails.

    Dimension: trajectory, not correctness: the count judges the path the conversation took (how many
    exchanges the user needed), like harness-evals' ``turn_efficiency`` and evald's ``steps_below``; it says
    nothing about whether an answer was right.

    Not applicable when the case has no messages. A case whose messages hold no user message (e.g. only a
    system prompt and a reply) has 0 turns and is scored.
    """

    kind: ClassVar[str] = "turn_count"
    family: ClassVar[str] = "conversation"
    dimension: ClassVar[Dimension] = Dimension.TRAJECTORY
    default_threshold: ClassVar[float] = 1.0
    requires: ClassVar[tuple[str, ...]] = ("messages",)
    needs: ClassVar[tuple[str, ...]] = ("messages",)
    Options: ClassVar[type[ComponentConfig]] = TurnCountOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(TurnCountOptions, self.options)
        messages = eval_case.messages
        if not messages:
            return None
        turns = sum(1 for m in messages if has_role(m, USER_ROLES))
        counts = {
            "user_turns": turns,
            "assistant_messages": sum(1 for m in messages if has_role(m, ASSISTANT_ROLES)),
            "system_messages": sum(1 for m in messages if has_role(m, SYSTEM_ROLES)),
            "tool_messages": sum(1 for m in messages if has_role(m, TOOL_ROLES)),
            "total_messages": len(messages),
        }
        if opts.min_turns is not None and turns < opts.min_turns:
            value = turns / opts.min_turns
            reason = f"{turns} user turn(s), fewer than the minimum of {opts.min_turns}"
        elif turns > opts.max_turns:
            value = opts.max_turns / turns
            reason = f"{turns} user turn(s), more than the maximum of {opts.max_turns}"
        else:
            value = 1.0
            bounds = f"{opts.min_turns}..{opts.max_turns}" if opts.min_turns is not None else f"<= {opts.max_turns}"
            reason = f"{turns} user turn(s), within {bounds}"
        return self.score(value, reason, **counts, max_turns=opts.max_turns, min_turns=opts.min_turns)
