"""What one judge attempt is charged to the budget, from the usage the provider reported.

The budget reserves an attempt's worst case before it is sent (``JudgeLimiter.worst_case``: one input token per
byte of the text sent plus framing, plus Anthropic's tool-use prompt, and ``max_output_tokens`` output tokens)
and settles the attempt with its charge (``Charge``) after it:

- a readable usage (two finite numbers >= 0, each at most ``ABSURD_FACTOR`` x its worst case) is charged as
  reported (a fraction is rounded up). Above the worst case but under the ceiling it is still charged as
  reported, and counted ``above_worst_case``: the provider billed more than evald could reserve;
- a usage that is ``missing`` (no usage object, or a count absent/null), ``non_numeric`` (a string, a bool, an
  object), ``non_finite`` (NaN, infinity), ``negative`` or ``absurd`` (above the ceiling) is counted with that
  reason and charged at the worst case. The verdict of such an answer is still used: the usage says nothing about
  it;
- an answer that could not be read at all, or an attempt that ended without an answer after it was sent (a
  timeout, a connection lost mid-request, a cancelled call), is charged at the worst case: the provider may have
  processed and billed it, and evald cannot know how much. An HTTP error status (429, 5xx, 4xx) or a connection
  that was never made is charged nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: tokens added to the byte count of a prompt for message framing in the worst-case estimate
_FRAMING_TOKENS = 32
#: input tokens Anthropic adds for its tool-use system prompt (a few hundred per its docs), with a margin
ANTHROPIC_TOOL_PROMPT_TOKENS = 512
#: usage above this multiple of the worst case (per direction) is ``absurd``: counted and charged the worst case
ABSURD_FACTOR = 10
#: the reasons of ``evald_judge_usage_invalid_total``
INVALID_REASONS = ("missing", "non_numeric", "non_finite", "negative", "absurd", "above_worst_case")
MISSING = object()


@dataclass(frozen=True, slots=True)
class Charge:
    """Tokens charged for one attempt, and why they are not the reported usage (``invalid``) if they are not."""

    input_tokens: int
    output_tokens: int
    invalid: str | None = None

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


def worst_case_tokens(prompt: str) -> int:
    """An upper bound of a prompt's input tokens: byte-level BPE tokens are at least one UTF-8 byte each."""
    return len(prompt.encode("utf-8")) + _FRAMING_TOKENS


def _problem(value: object, worst: int) -> str | None:
    if value is MISSING or value is None:
        return "missing"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "non_numeric"
    if isinstance(value, float) and not math.isfinite(value):
        return "non_finite"
    if value < 0:
        return "negative"
    if value > worst * ABSURD_FACTOR:
        return "absurd"
    return None


def charge_for(reported_input: object, reported_output: object, worst_input: int, worst_output: int) -> Charge:
    """The charge of an answered attempt whose usage reported ``reported_input``/``reported_output`` (raw JSON
    values, ``MISSING`` when absent), against its worst case."""
    for value, bound in ((reported_input, worst_input), (reported_output, worst_output)):
        if (problem := _problem(value, bound)) is not None:
            return Charge(worst_input, worst_output, problem)
    assert isinstance(reported_input, (int, float)) and isinstance(reported_output, (int, float))
    input_tokens, output_tokens = math.ceil(reported_input), math.ceil(reported_output)
    above = input_tokens > worst_input or output_tokens > worst_output
    return Charge(input_tokens, output_tokens, "above_worst_case" if above else None)
