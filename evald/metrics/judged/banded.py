"""``BandedJudgeMetric``: the shared body of judged metrics that ask for one integer band and map it to [0, 1].

A subclass declares its ``task`` text, the case fields it sends (``sent_fields``), the fields that must have
text for it to apply (``needed_fields``) and its band (``lowest``..``highest``); ``a_measure`` is written once
here: case data -> judge -> ``band_value``, with the judge's reasoning as ``Score.reason`` and metadata
``judge_score`` and ``judge``. Subclasses with data that is not a plain case field (a trajectory, a
conversation) override ``judge_data``; those with options that change the task override ``judge_task``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, ClassVar, cast

from evald.case import EvalCase, Message, Score, ToolCall
from evald.config.base import ComponentConfig
from evald.judges.prompting import VerdictField
from evald.metrics.base import BaseMetric
from evald.metrics.judged.common import JudgedOptions, ask_judge, band_value, case_data

#: a conversation needs at least this many messages to be judged as one
MIN_TURNS = 2
#: characters kept of one rendered tool argument/result or message before "..." (keeps prompts and cost bounded)
MAX_ITEM_CHARS = 500


def truncate(text: str, limit: int = MAX_ITEM_CHARS) -> str:
    """``text`` cut to ``limit`` characters plus "...". The cut is at the last space, comma or quote before the
    limit when there is one, so a token (an email, a key) is kept whole or dropped, never half-sent where the
    judge's redaction patterns could miss it."""
    if len(text) <= limit:
        return text
    cut = max(text.rfind(separator, 0, limit) for separator in (" ", "\n", ",", '"'))
    return text[: cut if cut > 0 else limit] + "..."


def compact(value: Any) -> str:
    """A value as short one-line text: strings as they are, structured values as compact JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return str(value)


def render_tool_calls(calls: Sequence[ToolCall]) -> str:
    """One line per call: ``1. name(args) -> result`` (``-> ERROR result`` when it failed), each part truncated."""
    lines = []
    for i, call in enumerate(calls, start=1):
        arrow = "-> ERROR" if call.error else "->"
        result = "(no result)" if call.result is None else truncate(compact(call.result))
        lines.append(f"{i}. {call.name}({truncate(compact(call.arguments))}) {arrow} {result}")
    return "\n".join(lines)


def render_messages(messages: Sequence[Message]) -> str:
    """One line per turn: ``[i] role: content``, with the tool calls an assistant turn made."""
    lines = []
    for i, message in enumerate(messages, start=1):
        parts = [truncate(message.content)] if message.content else []
        if message.tool_calls:
            parts.append("[calls: " + ", ".join(call.name for call in message.tool_calls) + "]")
        lines.append(f"[{i}] {message.role}: {' '.join(parts)}")
    return "\n".join(lines)


class BandedJudgeMetric(BaseMetric):
    """Base of judged metrics that ask the judge for one integer band; not registered itself.

    ``sent_fields`` and ``needed_fields`` name EvalCase fields, plus two rendered ones: ``trajectory`` (the
    case's tool calls, one compact truncated line each; absent without tool calls) and ``conversation`` (the
    case's messages, one line per turn; absent with fewer than ``MIN_TURNS`` messages).
    """

    task: ClassVar[str] = ""
    sent_fields: ClassVar[tuple[str, ...]] = ("input", "output")
    needed_fields: ClassVar[tuple[str, ...]] = ("output",)
    lowest: ClassVar[int] = 1
    highest: ClassVar[int] = 5
    score_meaning: ClassVar[str] = "the score on the scale described in the task"
    Options: ClassVar[type[ComponentConfig]] = JudgedOptions

    def band(self) -> tuple[int, int]:
        """(lowest, highest) integer score; lowest maps to 0.0, highest to 1.0."""
        return self.lowest, self.highest

    def judge_task(self, eval_case: EvalCase) -> str:
        """The trusted task text (from the class or the options; never from case text)."""
        return self.task

    def judge_data(self, eval_case: EvalCase) -> list[tuple[str, str]] | None:
        """(label, text) blocks for the judge, or None when a needed field has no text (not applicable)."""
        data: list[tuple[str, str]] = []
        for name in self.sent_fields:
            if name == "trajectory":
                if eval_case.tool_calls:
                    data.append(("trajectory", render_tool_calls(eval_case.tool_calls)))
            elif name == "conversation":
                if len(eval_case.messages) >= MIN_TURNS:
                    data.append(("conversation", render_messages(eval_case.messages)))
            else:
                data += case_data(eval_case, (name,))
        present = {label.split("[", 1)[0] for label, _ in data}
        return data if set(self.needed_fields) <= present else None

    async def a_measure(self, eval_case: EvalCase) -> Score | None:
        data = self.judge_data(eval_case)
        if data is None:
            return None
        judge = cast(JudgedOptions, self.options).judge
        lowest, highest = self.band()
        fields = (VerdictField("score", lowest, highest, self.score_meaning),)
        verdict = await ask_judge(self, eval_case, judge, self.judge_task(eval_case), data, fields)
        judge_score = verdict.values["score"]
        value = band_value(judge_score, lowest, highest)
        return self.score(value, verdict.reasoning, judge_score=judge_score, judge=judge)
