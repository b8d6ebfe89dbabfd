"""``task_completion``: an LLM judge rates whether an agent completed its task, from its trajectory."""

from __future__ import annotations

from typing import ClassVar

from evald.case import Dimension, EvalCase
from evald.config.base import ComponentConfig
from evald.metrics.judged.banded import BandedJudgeMetric
from evald.metrics.judged.common import JudgedOptions


class TaskCompletionOptions(JudgedOptions):
    pass


class TaskCompletionMetric(BandedJudgeMetric):
    """An LLM judge rates, on 1 to 5, whether the agent completed the task in the input, seeing its trajectory.

    Reads ``input`` (the task), ``tool_calls`` rendered as a compact trajectory (one line per call:
    ``n. name(arguments) -> result``, each part truncated to 500 characters) and ``output``. Band mapping:
    ``{"score": n}`` from 1 (not attempted or failed) to 5 (fully completed); the value is ``(n - 1) / 4``
    (a 4 scores 0.75). Not applicable without an input, or with neither tool calls nor an output.
    ``Score.reason`` is the judge's reasoning; metadata has the raw ``judge_score`` and the ``judge`` name.
    Option: ``judge``. A judge that gives no valid verdict (malformed, timeout) is an error outcome,
    never a score.
    """

    kind: ClassVar[str] = "task_completion"
    family: ClassVar[str] = "agent"
    dimension: ClassVar[Dimension] = Dimension.TRAJECTORY
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = ("input", "output", "tool_calls")
    needs: ClassVar[tuple[str, ...]] = ("input", "output")
    Options: ClassVar[type[ComponentConfig]] = TaskCompletionOptions
    task: ClassVar[str] = (
        "The input is a task given to an agent; the trajectory lists the tool calls it made (name, arguments, "
        "result), and the output is its final answer. Rate whether the task was actually completed, using the "
        "tool results as evidence (a claimed success that the results do not show does not count).\n5 = fully "
        "completed; 4 = completed with a minor gap; 3 = partly completed; 2 = attempted but not completed; 1 "
        "= not attempted or failed."
    )
    sent_fields: ClassVar[tuple[str, ...]] = ("input", "trajectory", "output")
    needed_fields: ClassVar[tuple[str, ...]] = ("input",)
    score_meaning: ClassVar[str] = "how completely the agent achieved the task (5 = fully)"

    def judge_data(self, eval_case: EvalCase) -> list[tuple[str, str]] | None:
        data = super().judge_data(eval_case)
        if data is None or not any(label in ("trajectory", "output") for label, _ in data):
            return None  # nothing the agent did to judge
        return data
