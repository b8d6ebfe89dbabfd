"""``contains``: the output mentions the configured (or expected) values."""

from __future__ import annotations

import unicodedata
from typing import Annotated, Any, ClassVar, Literal, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric
from evald.metrics.text import as_text

_MAX_LISTED = 5


class ContainsOptions(ComponentConfig):
    values: list[Annotated[str, Field(min_length=1)]] = Field(
        default_factory=list, description="substrings to look for; empty: use the case's expected value(s)"
    )
    mode: Literal["all", "any"] = Field("all", description="all: score the share found; any: 1 if one is found")
    case_sensitive: bool = Field(False, description="match case-sensitively")


class ContainsMetric(BaseMetric):
    """Whether the output contains the configured substrings.

    Reads ``output`` and, when ``values`` is empty, ``expected`` (a string or a list of strings). Mode
    ``all`` scores the fraction of values found; mode ``any`` scores 1 when at least one is found, else 0.
    Text is compared after Unicode NFC normalisation; a structured output is searched in its JSON text.
    The reason lists the values that are missing.

    Not applicable when ``output`` is missing, or when there is nothing to look for (no ``values`` and
    no usable ``expected``).
    """

    kind: ClassVar[str] = "contains"
    family: ClassVar[str] = "deterministic"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 1.0
    requires: ClassVar[tuple[str, ...]] = ("output", "expected")
    needs: ClassVar[tuple[str, ...]] = ("output", "expected")

    def required_fields(self) -> tuple[str, ...]:
        """With ``values`` configured no ``expected`` is needed."""
        return ("output",) if cast(ContainsOptions, self.options).values else self.needs
    Options: ClassVar[type[ComponentConfig]] = ContainsOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(ContainsOptions, self.options)
        if eval_case.output is None:
            return None
        needles = list(opts.values) or _expected_values(eval_case.expected)
        if not needles:
            return None
        haystack = self._fold(as_text(eval_case.output), opts.case_sensitive)
        missing = [v for v in needles if self._fold(v, opts.case_sensitive) not in haystack]
        found = len(needles) - len(missing)
        value = found / len(needles) if opts.mode == "all" else float(found > 0)
        if not missing:
            reason = f"all {len(needles)} value(s) found"
        else:
            listed = ", ".join(repr(v) for v in missing[:_MAX_LISTED])
            more = f" and {len(missing) - _MAX_LISTED} more" if len(missing) > _MAX_LISTED else ""
            reason = f"{found} of {len(needles)} found; missing: {listed}{more}"
        return self.score(value, reason, found=found, total=len(needles), mode=opts.mode)

    @staticmethod
    def _fold(text: str, case_sensitive: bool) -> str:
        text = unicodedata.normalize("NFC", text)
        return text if case_sensitive else text.casefold()


def _expected_values(expected: Any) -> list[str]:
    """``expected`` as a list of non-empty strings; empty when it is missing or not text."""
    if isinstance(expected, str):
        return [expected] if expected else []
    if isinstance(expected, (list, tuple)) and all(isinstance(v, str) for v in expected):
        return [v for v in expected if v]
    return []
